"""`arbiter ops` (issue 11, item 1): the operations lane from a shell. A real `arbiter run` over the demo's
damaged PDFs fills it; list (table, JSON lines, ids), retry with a password file, dismiss; exit codes a
nightly script can test."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.demo.damaged import PASSWORD
from arbiter.store import Store
from tests.conftest import FIXTURES

runner = CliRunner()
DAMAGED = ["empty-upload", "locked-lab-report", "not-really-a-pdf", "truncated-transfer"]


@pytest.fixture(name="out")
def out_fixture(tmp_path: Path) -> Path:
    """`arbiter run` over the four damaged PDFs, and an admin account."""
    folder = tmp_path / "in"
    shutil.copytree(FIXTURES / "damaged", folder)
    out = tmp_path / "out"
    ran = runner.invoke(app, ["run", str(folder), "--out", str(out), "--quiet", "--workers", "1"])
    assert ran.exit_code == 0, ran.output
    added = runner.invoke(
        app, ["users", "add", "root", "--role", "admin", "--password", "pw-root-12345", "--out", str(out)]
    )
    assert added.exit_code == 0, added.output
    return out


def _ids(out: Path) -> list[str]:
    listed = runner.invoke(app, ["ops", "list", "--ids", "--out", str(out)])
    assert listed.exit_code == 0, listed.output
    return sorted(listed.output.split())


def test_list_shows_the_lane_as_a_table_json_and_ids(out: Path) -> None:
    """The table says why in words; --json gives one object per line with ingestion's sentence; --ids the ids."""
    table = runner.invoke(app, ["ops", "list", "--out", str(out)])
    assert table.exit_code == 0, table.output
    assert "PDF is password-protected" in " ".join(table.output.split())
    lines = runner.invoke(app, ["ops", "list", "--json", "--kind", "encrypted", "--out", str(out)]).output
    [row] = [json.loads(line) for line in lines.splitlines()]
    assert (row["doc_id"], row["reason"]) == ("locked-lab-report", "pdf_encrypted")
    assert "password" in row["why"]
    assert _ids(out) == DAMAGED


def test_retry_with_a_password_file_takes_the_document_out_of_the_lane(out: Path, tmp_path: Path) -> None:
    """The right password: exit 0 and the item leaves the lane; the password is in no file under --out."""
    secret = tmp_path / "pw.txt"
    secret.write_text(PASSWORD + "\n", encoding="utf-8")
    retried = runner.invoke(
        app,
        [
            "ops",
            "retry",
            "locked-lab-report",
            "--by",
            "root",
            "--password-file",
            str(secret),
            "--out",
            str(out),
        ],
    )
    assert retried.exit_code == 0, retried.output
    assert "was read this time" in retried.output
    assert "locked-lab-report" not in _ids(out)
    for path in out.rglob("*"):
        if path.is_file():
            assert PASSWORD.encode() not in path.read_bytes(), path


def test_retry_that_still_fails_exits_1(out: Path) -> None:
    """An empty file stays unreadable: exit 1 says so to the script, and a new item says why."""
    retried = runner.invoke(app, ["ops", "retry", "empty-upload", "--by", "root", "--out", str(out)])
    assert retried.exit_code == 1, retried.output
    assert "still could not be read" in retried.output
    assert "empty-upload" in _ids(out)


def test_dismiss_closes_items_and_is_audited(out: Path) -> None:
    """dismiss --reason not-medical closes each named item under the admin's name; a second time is an error."""
    closed = runner.invoke(
        app,
        [
            "ops",
            "dismiss",
            "not-really-a-pdf",
            "truncated-transfer",
            "--by",
            "root",
            "--reason",
            "not-medical",
            "--out",
            str(out),
        ],
    )
    assert closed.exit_code == 0, closed.output
    assert _ids(out) == ["empty-upload", "locked-lab-report"]
    store = Store(f"sqlite:///{out / 'arbiter.db'}")
    try:
        assert sorted(e.details["doc_id"] for e in store.audit.events(action="ops.dismiss")) == [
            "not-really-a-pdf",
            "truncated-transfer",
        ]
    finally:
        store.dispose()
    again = runner.invoke(app, ["ops", "dismiss", "not-really-a-pdf", "--by", "root", "--out", str(out)])
    assert again.exit_code == 2
    assert (
        "not waiting in the operations lane" in again.output
        or "waiting in the operations lane" in again.output
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["dismiss", "empty-upload", "--by", "root", "--reason", "boring"],
            "--reason must be one of: not-medical",
        ),
        (["dismiss", "empty-upload", "--by", "nobody"], "nobody is not an admin"),
        (["retry", "nothing-here", "--by", "root"], "No document or packet 'nothing-here'"),
    ],
)
def test_mistakes_are_one_line_with_exit_2(out: Path, args: list[str], message: str) -> None:
    """A wrong reason, a non-admin, an unknown document: exit 2 and a plain line, nothing changed."""
    result = runner.invoke(app, ["ops", *args, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert _ids(out) == DAMAGED


def test_the_run_summary_points_unreadable_files_to_the_operations_lane(tmp_path: Path) -> None:
    """A run that met unreadable PDFs says they wait in the operations lane and names the command to list them."""
    folder = tmp_path / "in"
    shutil.copytree(FIXTURES / "damaged", folder)
    out = tmp_path / "out"
    ran = runner.invoke(app, ["run", str(folder), "--out", str(out), "--workers", "1"])
    assert ran.exit_code == 0, ran.output
    said = " ".join(ran.output.split())
    assert "4 unreadable file(s) wait in the operations lane, not the SME queue" in said
    assert f"arbiter ops list --out {out}" in said
