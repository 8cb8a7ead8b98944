"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pydantic_core
from pydantic import BaseModel

if TYPE_CHECKING:
    from upath import UPath


def write_text(path: Path | UPath, text: str, *, sync: bool = True) -> int:
    """Write via a temporary file in the same directory, fsync, then rename over the target; the bytes written.
    In object storage (a `UPath` URL, arbiter/outputs.py) one PUT replaces the object whole, which is atomic for
    readers. sync=False leaves out the fsync, for files a crash may lose because they are rebuilt from a
    durable record (the database's mirrors: their index entry records each file's size, and a re-run rebuilds
    a file the kernel never wrote out; docs/design.md §4): a reader still sees the old file or the new one."""
    data = text.encode("utf-8")
    if not isinstance(path, Path):
        path.write_bytes(data)
        return len(data)
    fd, tmp = _temporary(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(data)


_TEMPORARY_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
)
_TEMPORARIES = itertools.count()


def _temporary(path: Path) -> tuple[int, str]:
    """A new file beside `path`, only its owner may read it, open for writing: its descriptor and name. Its
    folder is made only when the file cannot be made without it (a document's mirror writes a dozen files
    into a few folders that are there after the first), and it is named by process and a counter (what
    tempfile.mkstemp adds, a random name, buys nothing when names never repeat within a process)."""
    for _ in range(1000):
        tmp = os.path.join(path.parent, f".{path.name}.{os.getpid()}.{next(_TEMPORARIES)}.tmp")
        try:
            return os.open(tmp, _TEMPORARY_FLAGS, 0o600), tmp
        except FileExistsError:
            continue  # left behind by an earlier process with this process id
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
    raise FileExistsError(f"no free temporary name beside {path}")


def link_over(source: Path | UPath, path: Path | UPath) -> bool:
    """Give `path` the same file as `source` (a hard link, put in place by a rename: readers see the old file or
    the new one). False, with nothing changed, where the two cannot share a file (object storage, a file
    system without hard links, two file systems): write a copy instead."""
    if not isinstance(source, Path) or not isinstance(path, Path):
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{os.getpid()}.{next(_LINKS)}.link"
    try:
        os.link(source, tmp)
    except OSError:
        return False
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return True


_LINKS = itertools.count()


def write_json(path: Path | UPath, data: Any, *, sync: bool = True) -> int:
    """`data` as indented JSON and a newline, written as `write_text` does; the bytes written."""
    text = data.model_dump_json(indent=2) if isinstance(data, BaseModel) else dumps(data)
    return write_text(path, text + "\n", sync=sync)


def dumps(data: Any) -> str:
    """json.dumps(data, indent=2, ensure_ascii=False, default=str), byte for byte. The standard encoder's indent
    mode is pure Python (a sixth of a short document's CPU went to it): plain JSON data (str keys; str, int,
    float written without an exponent, bool, None) goes through pydantic-core's encoder instead."""
    if _plain(data):
        try:
            return pydantic_core.to_json(data, indent=2).decode("utf-8")
        except (ValueError, UnicodeDecodeError):  # lone surrogates from a broken text layer, say
            pass
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


def _plain(value: Any) -> bool:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        text = repr(value)
        return "e" not in text and "n" not in text  # no exponent, nan or inf: written alike by both encoders
    if kind is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    if kind is list:
        return all(_plain(v) for v in value)
    return False
