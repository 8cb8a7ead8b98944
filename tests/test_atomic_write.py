"""Atomic file writes (arbiter/atomic.py `write_text`): whole files, folders made when missing, no leftovers."""

from __future__ import annotations

import itertools
import os
import stat
from pathlib import Path

import pytest

from arbiter import atomic


def test_write_text_makes_missing_folders_and_leaves_only_the_file(tmp_path: Path) -> None:
    """A file in folders that do not exist yet is written whole, readable by its owner only, with no temporary."""
    target = tmp_path / "agent_outputs" / "doc-1" / "arbiter_decision.json"
    atomic.write_text(target, "é {}\n")
    atomic.write_text(target, "second\n")
    assert target.read_bytes() == b"second\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in target.parent.iterdir()) == ["arbiter_decision.json"]


def test_write_text_steps_over_a_temporary_name_an_earlier_process_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A leftover file with the next temporary name is neither used nor touched."""
    monkeypatch.setattr(atomic, "_TEMPORARIES", itertools.count(7))
    target = tmp_path / "index.json"
    leftover = tmp_path / f".index.json.{os.getpid()}.7.tmp"
    leftover.write_text("left behind")
    atomic.write_text(target, "{}\n")
    assert target.read_text() == "{}\n"
    assert leftover.read_text() == "left behind"
    assert not (tmp_path / f".index.json.{os.getpid()}.8.tmp").exists()


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails before its rename leaves the previous file as it was and nothing else."""
    target = tmp_path / "bundles" / "doc-1.json"
    atomic.write_text(target, "old\n")

    def broken_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(atomic.os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="Input/output"):
        atomic.write_text(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in target.parent.iterdir()] == ["doc-1.json"]


def test_a_folder_that_is_a_file_is_an_error_not_a_loop(tmp_path: Path) -> None:
    """Where the target's folder is a file, the write fails at once."""
    (tmp_path / "index").write_text("not a folder")
    with pytest.raises(NotADirectoryError):
        atomic.write_text(tmp_path / "index" / "doc.json", "{}\n")
