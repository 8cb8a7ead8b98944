"""Pointing a profile at another page reader (`arbiter model adopt`, `arbiter policy simulate --model`).

A profile pins its reader by file and sha256 ([content.reader]); adopting one changes that table and marks
the profile's own `version` and its `[arbiter] policy_version` with the reader's version, so every decision
made under it records the change (a decision records the policy version; a run's manifest the profile
version; the skip key the profile's digest, which the table's change changes too). The profile's text is
edited in place, so its comments and layout stay as they were.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from arbiter.contracts.profile import Profile, ReaderSettings
from arbiter.reader.model import PACKAGED, PageReader

MARK = "+reader."
_HEADER = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\-\" ]+?)\s*\]\]?\s*(#.*)?$")


def model_name(path: Path) -> str:
    """How a profile names the file: a bare name for one shipped in arbiter/reader/models/, else its
    absolute path (a relative one would depend on where a run starts)."""
    resolved = path.resolve()
    return resolved.name if resolved.parent == PACKAGED.resolve() else str(resolved)


def reader_version(reader: PageReader, given: str | None) -> str:
    """The version to record: as given, else the file's own with its sha256's first 8 characters."""
    if given:
        return given
    return f"{reader.version or 'candidate'}-{reader.sha256[:8]}"


def marked(version: str, reader: str) -> str:
    """A profile or policy version marked with the reader's version (a previous mark replaced)."""
    base = version.split(MARK, 1)[0]
    return f"{base}{MARK}{reader}"


def _table_bounds(lines: list[str], table: str | None) -> tuple[int, int] | None:
    """[start, end) of a table's key lines (None: the top level before the first header); None if absent."""
    headers = [(i, m.group(1).replace(" ", "")) for i, line in enumerate(lines) if (m := _HEADER.match(line))]
    if table is None:
        return 0, headers[0][0] if headers else len(lines)
    for n, (i, name) in enumerate(headers):
        if name == table:
            return i + 1, headers[n + 1][0] if n + 1 < len(headers) else len(lines)
    return None


def set_key(text: str, table: str | None, key: str, value: str) -> str:
    """The TOML text with `key = "value"` in the table (replaced where it is, else added first); the table
    is appended when it is missing."""
    lines = text.split("\n")
    rendered = f"{key} = {json.dumps(value)}"
    bounds = _table_bounds(lines, table)
    if bounds is None:
        if lines and lines[-1] == "":
            lines.pop()
        lines += ["", f"[{table}]", rendered, ""]
        return "\n".join(lines)
    start, end = bounds
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*=\s*(\"[^\"]*\"|'[^']*'|[^#\s]*)(\s*#.*)?$")
    for i in range(start, end):
        m = pattern.match(lines[i])
        if m:
            lines[i] = rendered + (m.group(2) or "")
            return "\n".join(lines)
    at = start
    if table is None:  # after the top level's leading comments and keys, before its blank tail
        at = end
        while at > 0 and not lines[at - 1].strip():
            at -= 1
    lines.insert(at, rendered)
    return "\n".join(lines)


def pin_reader(text: str, *, model: str, sha256: str, version: str, profile: Profile) -> str:
    """The profile text with [content.reader] naming the file, and its versions marked (see the module)."""
    text = set_key(text, "content.reader", "model", model)
    text = set_key(text, "content.reader", "sha256", sha256)
    text = set_key(text, "content.reader", "version", version)
    text = set_key(text, None, "version", marked(profile.version, version))
    return set_key(text, "arbiter", "policy_version", marked(profile.arbiter.policy_version, version))


def with_reader(profile: Profile, path: Path, reader: PageReader, version: str | None = None) -> Profile:
    """The profile with [content.reader] pointing at the file (its thresholds kept) and its versions marked:
    what `pin_reader` writes, without writing it. Built anew, so its digest is computed afresh."""
    settings = profile.content.reader or ReaderSettings(model="x", sha256="0" * 64, version="x")
    named = reader_version(reader, version)
    data = profile.model_dump()
    data["version"] = marked(profile.version, named)
    data["arbiter"]["policy_version"] = marked(profile.arbiter.policy_version, named)
    data["content"]["reader"] = settings.model_dump() | {
        "model": model_name(path),
        "sha256": reader.sha256,
        "version": named,
    }
    return Profile.model_validate(data)
