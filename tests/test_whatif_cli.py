"""`arbiter policy simulate` and `arbiter policy diff` from the command line: JSON fields, the text summary,
--as-of, --html, a bad profile, and a database left exactly as it was."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.contracts import StopReason
from arbiter.contracts.profile import load_profile
from arbiter.store import Store
from tests.store_fixtures import row_counts
from tests.whatif_helpers import attempt, classification, issue, outcome, record

runner = CliRunner()
MEDICAL_TOML = Path(__file__).resolve().parents[1] / "arbiter" / "profiles" / "medical.toml"


def _history(tmp_path: Path) -> tuple[Store, str]:
    """Two documents: one accepted with only a minor problem, one clean."""
    url = f"sqlite:///{tmp_path / 'arbiter.db'}"
    store = Store(url)
    store.migrate()
    medical = load_profile()
    for doc_id, issues in (("minor [b]x[/b]", [issue("V4", 1, "MINOR")]), ("clean", [])):
        primary = classification(doc_id)
        record(store, outcome(doc_id, [attempt(0, issues, medical)], StopReason.ACCEPTED, primary), primary)
    return store, url


def _stricter(tmp_path: Path) -> Path:
    text = MEDICAL_TOML.read_text(encoding="utf-8")
    old = 'name = "minor_only"\nwhen = { blocker = { max = 0 }, major = { max = 0 }, minor = { min = 1 } }\ndecision = "AUTO_ACCEPT"'
    assert old in text
    path = tmp_path / "stricter.toml"
    path.write_text(text.replace(old, old.replace("AUTO_ACCEPT", "ESCALATE_TO_SME")), encoding="utf-8")
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_simulate_json_and_the_store_is_untouched(tmp_path: Path) -> None:
    store, url = _history(tmp_path)
    before = row_counts(store)
    store.dispose()  # its WAL is checkpointed into the file: from here on the file's bytes must not change
    db_bytes = _digest(tmp_path / "arbiter.db")
    result = runner.invoke(
        app, ["policy", "simulate", "--profile", str(_stricter(tmp_path)), "--db", url, "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert {"current", "candidate", "flips", "false_accepts", "needless_escalations"} <= set(report)
    assert report["flips"] == [
        {
            "doc_id": "minor [b]x[/b]",
            "from": "AUTO_ACCEPT",
            "to": "ESCALATE_TO_SME",
            "rule": "minor_only",
            "from_rule": "minor_only",
            "path": "re-decided from stored issues",
        }
    ]
    assert _digest(tmp_path / "arbiter.db") == db_bytes
    assert row_counts(store) == before
    store.dispose()


def test_simulate_text_html_and_as_of(tmp_path: Path) -> None:
    store, url = _history(tmp_path)
    store.dispose()
    page = tmp_path / "whatif.html"
    candidate = str(_stricter(tmp_path))
    result = runner.invoke(
        app, ["policy", "simulate", "--profile", candidate, "--db", url, "--html", str(page)]
    )
    assert result.exit_code == 0, result.output
    assert "minor [b]x[/b]" in page.read_text(encoding="utf-8")
    shown = runner.invoke(
        app, ["policy", "simulate", "--profile", candidate, "--db", url], terminal_width=200
    )
    assert shown.exit_code == 0, shown.output
    assert "2 recorded documents: 1 would change decision (0 to accept, 1 to escalate)." in shown.stdout
    assert "minor [b]x[/b]" in shown.stdout  # printed as text, not as Rich markup
    early = runner.invoke(
        app, ["policy", "simulate", "--profile", candidate, "--db", url, "--as-of", "2020-01-01", "--json"]
    )
    assert early.exit_code == 0, early.output
    assert json.loads(early.stdout)["documents"] == 0


def test_a_bad_profile_or_a_missing_database_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[arbiter\n", encoding="utf-8")
    result = runner.invoke(app, ["policy", "simulate", "--profile", str(bad), "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "not valid TOML" in result.output
    missing = runner.invoke(
        app, ["policy", "simulate", "--profile", str(MEDICAL_TOML), "--out", str(tmp_path / "none")]
    )
    assert missing.exit_code == 2
    assert not (tmp_path / "none" / "arbiter.db").exists()


def test_diff(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["policy", "diff", str(MEDICAL_TOML), str(_stricter(tmp_path))], terminal_width=200
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "- Rule 'minor_only' now decides escalate to an SME instead of accept."
    same = runner.invoke(app, ["policy", "diff", str(MEDICAL_TOML), str(MEDICAL_TOML)])
    assert "no difference" in same.stdout
