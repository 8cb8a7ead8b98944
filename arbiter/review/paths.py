"""Where the review app may read files from: PDFs and bundles resolve inside configured roots only.

A packet comes from the database; a path in it that points outside the documents root (by `..`, an
absolute path or a symlink) is refused, so the app never serves an arbitrary file of the server.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from arbiter.errors import ArbiterError


class PathRefused(ArbiterError):
    """The file is outside the allowed roots or cannot be found; the message is shown to the reviewer."""


def resolve_inside(raw: str, roots: Iterable[Path], *, what: str = "document") -> Path:
    """The existing file `raw` names, resolved (symlinks followed) inside one of `roots`.

    A relative path is tried against each root, then against the working directory; whichever way it
    resolves, the real file must lie inside a root.
    """
    roots = [root.resolve() for root in roots]
    if not raw or "\x00" in raw:
        raise PathRefused(f"The packet does not name a {what} file.")
    given = Path(raw).expanduser()
    candidates = [given] if given.is_absolute() else [*(root / given for root in roots), given]
    outside = False
    for candidate in candidates:
        real = candidate.resolve()
        if not any(real.is_relative_to(root) for root in roots):
            outside = True
            continue
        if real.is_file():
            return real
    name = given.name or raw
    if outside:
        raise PathRefused(
            f"The {what} {name} is outside the documents folder this app may open, so it is not shown."
        )
    raise PathRefused(f"The {what} {name} was not found in the documents folder.")
