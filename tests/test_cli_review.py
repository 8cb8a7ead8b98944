"""CLI commands around the review database: runs write into it, accounts, mirrors export, the app launcher."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import arbiter.review_app.launch  # noqa: F401  (sys.modules entry patched below)
from arbiter.cli.main import app
from arbiter.store import Store
from tests.conftest import FIXTURES

runner = CliRunner()


MIX = 9  # the first 9 fixtures: 6 accepted, 3 escalated (demo classifications)


def run_some(tmp_path: Path, n: int = 4) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    for pdf in sorted((FIXTURES / "pdfs").glob("*.pdf"))[:n]:
        shutil.copy(pdf, folder / pdf.name)
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["run", str(folder), "--classifications", str(FIXTURES / "demo"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    return out


def test_run_writes_packets_and_ground_truth_into_the_database(tmp_path: Path) -> None:
    """`arbiter run` records every document in OUT/arbiter.db: packets for escalations, ground truth for accepts."""
    out = run_some(tmp_path, n=MIX)
    summary = json.loads(next((out / "runs").glob("*/summary.json")).read_text())
    store = Store(f"sqlite:///{out / 'arbiter.db'}")
    try:
        pending = store.queue.page(status="PENDING", limit=1000)
        escalations = [p for p in pending if p.kind == "ESCALATION"]
        assert len(escalations) == summary["escalated"] + summary["errors"] > 0
        assert {p.kind for p in pending} <= {"ESCALATION", "AUDIT", "SECOND_REVIEW"}  # + blind samples
        mirrors = list((out / "ground_truth").glob("gt_*.json"))
        assert len(mirrors) == summary["accepted_first_time"] + summary["accepted_after_fixes"] > 0
        for gt in mirrors:
            latest = store.ground_truth.latest(gt.stem.removeprefix("gt_"))
            assert latest is not None
            assert latest.ground_truth_source == "PRIMARY_AGENT_AUTO_ACCEPT"
    finally:
        store.dispose()


def test_users_add_and_list(tmp_path: Path) -> None:
    """`arbiter users add NAME --role admin --password ...` creates an account that `users list` shows."""
    out = tmp_path / "out"
    assert runner.invoke(app, ["db", "migrate", "--out", str(out)]).exit_code == 0  # users add makes none
    added = runner.invoke(
        app, ["users", "add", "dana", "--role", "admin", "--password", "s3cret-pass", "--out", str(out)]
    )
    assert added.exit_code == 0, added.output
    listed = runner.invoke(app, ["users", "list", "--out", str(out)])
    assert "dana" in listed.output
    assert "admin" in listed.output
    store = Store(f"sqlite:///{out / 'arbiter.db'}")
    try:
        assert store.users.verify_password("dana", "s3cret-pass") is not None
        assert store.users.verify_password("dana", "wrong") is None
    finally:
        store.dispose()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["users", "add", "x", "--role", "boss", "--password", "p"], "reviewer or admin"),
        (["users", "add", "x", "--password", ""], "empty password"),
        (["export"], "--mirrors"),
        (["review", "--docs", "/nonexistent/folder"], "not a folder"),
        (["review", "--auth", "magic"], "local or proxy"),
    ],
)
def test_review_commands_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    """Mistakes in the review commands are one-line errors with exit 2."""
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_export_mirrors_regenerates_deleted_files(tmp_path: Path) -> None:
    """`arbiter export --mirrors` rewrites packet and ground-truth files from the database."""
    out = run_some(tmp_path, n=MIX)
    before = {p.name: p.read_text() for p in (out / "sme_packets").glob("*.json")}
    assert before
    shutil.rmtree(out / "sme_packets")
    shutil.rmtree(out / "ground_truth")
    result = runner.invoke(app, ["export", "--mirrors", "--out", str(out)])
    assert result.exit_code == 0, result.output
    after = {p.name for p in (out / "sme_packets").glob("*.json")}
    assert after == set(before)
    assert list((out / "ground_truth").glob("gt_*.json"))
    for name in after:
        assert json.loads((out / "sme_packets" / name).read_text())["doc_id"]


def test_review_launches_the_app_with_the_runs_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`arbiter review` starts the app on the run's database, documents root and port."""
    seen: dict[str, Any] = {}

    def fake_launch(**kwargs: Any) -> int:
        seen.update(kwargs)
        return 0

    monkeypatch.setattr(sys.modules["arbiter.review_app.launch"], "launch", fake_launch)
    out = tmp_path / "out"
    store = Store(f"sqlite:///{out / 'arbiter.db'}")
    store.migrate()
    store.dispose()
    result = runner.invoke(
        app, ["review", "--docs", str(FIXTURES / "pdfs"), "--out", str(out), "--port", "8999"]
    )
    assert result.exit_code == 0, result.output
    assert "No accounts yet" in result.output
    assert "arbiter users add NAME --role admin" in result.output
    assert seen["port"] == 8999
    assert seen["db_url"].endswith("arbiter.db")
    assert Path(seen["docs_root"]) == FIXTURES / "pdfs"


def test_users_unlock_lifts_a_lockout(tmp_path: Path) -> None:
    """A locked account shows LOCKED in `users list`; `users unlock NAME --by ADMIN` lifts it (audited)."""
    out = tmp_path / "out"
    assert runner.invoke(app, ["db", "migrate", "--out", str(out)]).exit_code == 0  # users add makes none
    for name, role in (("ana", "admin"), ("ben", "reviewer")):
        added = runner.invoke(
            app, ["users", "add", name, "--role", role, "--password", "pw-123456", "--out", str(out)]
        )
        assert added.exit_code == 0, added.output
    store = Store(f"sqlite:///{out / 'arbiter.db'}")
    try:
        for _ in range(3):
            store.users.record_failed_sign_in("ben", "127.0.0.1", "wrong_password", lock_after=3)
        assert store.users.get("ben").locked  # type: ignore[union-attr]
        assert "LOCKED" in runner.invoke(app, ["users", "list", "--out", str(out)]).output
        refused = runner.invoke(app, ["users", "unlock", "ben", "--by", "ben", "--out", str(out)])
        assert refused.exit_code == 2
        assert "only admins" in refused.output
        done = runner.invoke(app, ["users", "unlock", "ben", "--by", "ana", "--out", str(out)])
        assert done.exit_code == 0, done.output
        assert not store.users.get("ben").locked  # type: ignore[union-attr]
    finally:
        store.dispose()


def test_users_kinds_restricts_an_account(tmp_path: Path) -> None:
    """`users kinds NAME KIND... --by ADMIN` restricts an account to kinds of answer (shown by `users list`,
    audited); `--all` gives every kind back; an unknown kind or a non-admin is refused in one line."""
    out = tmp_path / "out"
    assert runner.invoke(app, ["db", "migrate", "--out", str(out)]).exit_code == 0
    for name, role in (("ana", "admin"), ("ben", "reviewer")):
        added = runner.invoke(app, ["users", "add", name, "--role", role, "--no-password", "--out", str(out)])
        assert added.exit_code == 0, added.output
    kinds = ["users", "kinds", "ben", "--out", str(out)]
    done = runner.invoke(app, [*kinds, "grounded-answer", "--by", "ana"])
    assert done.exit_code == 0, done.output
    assert "ben reviews grounded-answer only." in done.output
    listed = runner.invoke(app, ["users", "list", "--out", str(out)]).output
    assert "grounded-answer" in listed
    unknown = runner.invoke(app, [*kinds, "grounded", "--by", "ana"])
    assert unknown.exit_code == 2
    assert (
        "There is no kind of answer named 'grounded'; the kinds are medical-classification, "
        in unknown.output
    )
    assert "Traceback" not in unknown.output
    refused = runner.invoke(app, [*kinds, "medical-classification", "--by", "ben"])
    assert refused.exit_code == 2
    assert "only admins" in refused.output
    assert runner.invoke(app, [*kinds, "--by", "ana"]).exit_code == 2  # neither kinds nor --all
    assert runner.invoke(app, [*kinds, "--all", "grounded-answer", "--by", "ana"]).exit_code == 2
    every = runner.invoke(app, [*kinds, "--all", "--by", "ana"])
    assert every.exit_code == 0, every.output
    assert "ben reviews every kind." in every.output
    store = Store(f"sqlite:///{out / 'arbiter.db'}")
    try:
        assert store.users.kinds("ben") == ()
        changes = [e.details["to"] for e in store.audit.events(action="user.kinds", target="ben")]
        assert sorted(map(tuple, changes)) == [(), ("grounded-answer",)]
    finally:
        store.dispose()
