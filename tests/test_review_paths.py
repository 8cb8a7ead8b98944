"""PDF and bundle paths from the database resolve inside the configured roots, or are refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arbiter.review.paths import PathRefused, resolve_inside


@pytest.fixture(name="root")
def root_fixture(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "sub" / "a.pdf").write_bytes(b"%PDF")
    (tmp_path / "secret.pdf").write_bytes(b"%PDF")
    return docs


def test_absolute_path_inside_the_root(root: Path) -> None:
    """An absolute path inside the root resolves to the file."""
    assert resolve_inside(str(root / "sub" / "a.pdf"), [root]) == (root / "sub" / "a.pdf").resolve()


def test_relative_path_is_taken_from_the_root(root: Path) -> None:
    """A relative path is looked up under the root."""
    assert resolve_inside("sub/a.pdf", [root]) == (root / "sub" / "a.pdf").resolve()


@pytest.mark.parametrize("raw", ["../secret.pdf", "sub/../../secret.pdf"])
def test_climbing_out_is_refused(root: Path, raw: str) -> None:
    """`..` cannot leave the root."""
    with pytest.raises(PathRefused, match="outside the documents folder"):
        resolve_inside(raw, [root])


def test_absolute_path_elsewhere_is_refused(root: Path) -> None:
    """A packet naming a file outside the root is refused even though the file exists."""
    with pytest.raises(PathRefused, match="outside the documents folder"):
        resolve_inside(str(root.parent / "secret.pdf"), [root])


def test_symlink_out_of_the_root_is_refused(root: Path) -> None:
    """A symlink inside the root that points outside it is followed and refused."""
    os.symlink(root.parent / "secret.pdf", root / "link.pdf")
    with pytest.raises(PathRefused, match="outside"):
        resolve_inside(str(root / "link.pdf"), [root])


@pytest.mark.parametrize("raw", ["", "a\x00b.pdf"])
def test_empty_or_nul_is_refused(root: Path, raw: str) -> None:
    """No file name, or a NUL byte, is refused in words."""
    with pytest.raises(PathRefused, match="does not name"):
        resolve_inside(raw, [root])


def test_missing_file_says_not_found(root: Path) -> None:
    """A file inside the root that does not exist is reported as not found."""
    with pytest.raises(PathRefused, match="not found"):
        resolve_inside(str(root / "gone.pdf"), [root])


def test_second_root_is_allowed(root: Path, tmp_path: Path) -> None:
    """The output folder (bundles) may be a second root."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "b.json").write_text("{}")
    assert resolve_inside(str(out / "b.json"), [root, out], what="bundle") == (out / "b.json").resolve()
