"""Blind review samples in the app: an audit packet shows the document and the classification under review,
never the machine's verdict, its checks or its retry log; agreeing with it writes SME ground truth."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from review_helpers import Seeded, app_on, app_test, sign_in

from arbiter.contracts import GroundTruthSource, PacketKind


@pytest.fixture(name="sampled")
def sampled_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Seeded]:
    """Fixtures run with every document sampled: audits of accepts, second reviews of escalations."""
    with app_on(tmp_path, monkeypatch, sample_all=True) as data:
        yield data


def _everything_shown(at: Any) -> str:
    """Every text the page put on screen, tab labels and JSON included."""
    parts: list[str] = []
    for kind in ("title", "subheader", "markdown", "caption", "info", "warning", "error", "success"):
        parts += [str(e.value) for e in getattr(at, kind)]
    parts += [t.label for t in at.tabs]
    parts += [str(j.value) for j in at.json]
    parts += [b.label for b in at.button]
    return "\n".join(parts)


def _open_claimed(at: Any) -> Any:
    at.switch_page("views/packet.py").run()
    assert not at.exception
    return at


def _audit_of(data: Seeded, doc_id: str) -> str:
    found = [p for p in data.store.queue.page(limit=50) if p.doc_id == doc_id and p.kind == "AUDIT"]
    assert len(found) == 1
    return found[0].packet_id


def test_audit_packet_never_shows_the_decision(sampled: Seeded) -> None:
    """The audit page has the page image and the classification, and no verdict, rule, issue or retry log."""
    packet_id = _audit_of(sampled, "gen-foundation-01")
    assert sampled.store.queue.claim(packet_id, "alice") is not None
    at = _open_claimed(sign_in(app_test()))
    shown = _everything_shown(at)
    assert "gen-foundation-01" in shown.replace("\\", "")  # the title, Markdown-escaped (drawn as written)
    assert at.image  # the page, its thumbnails (three pages) and the next page, sent ahead
    assert at.button(key="thumb_3").label == "3"
    assert "Blind review" in shown
    outcome = next(r for r in sampled.records if r.doc_id == "gen-foundation-01").outcome
    rule = outcome.attempts[-1].decision.rule
    for revealing in (
        "AUTO_ACCEPT",
        "accepted",
        "Retry log",
        "Issues (",
        f"`{rule}`",
        "production classifier",
        "Semantic checks",
    ):
        assert revealing not in shown, revealing


def test_second_review_hides_the_issues_of_the_escalation(sampled: Seeded) -> None:
    """A second review of an escalation shows none of the codes its first reviewer saw."""
    esc = next(r for r in sampled.records if r.doc_id == "admin-requisition-03")
    assert esc.packet is not None
    second = next(
        p for p in sampled.store.queue.page(limit=50) if p.kind == "SECOND_REVIEW" and p.doc_id == esc.doc_id
    )
    assert sampled.store.queue.claim(second.packet_id, "alice") is not None
    shown = _everything_shown(_open_claimed(sign_in(app_test())))
    for issue in esc.packet.issues_summary:
        assert issue.code not in shown
    assert esc.packet.escalation_reason not in shown


def test_agreeing_with_an_audit_writes_sme_ground_truth(sampled: Seeded) -> None:
    """Agree on an audit completes it and adds an SME_VALIDATED version over the automatic one."""
    packet_id = _audit_of(sampled, "gen-foundation-01")
    assert sampled.store.queue.claim(packet_id, "alice") is not None
    at = _open_claimed(sign_in(app_test()))
    at.button(key=next(b.key for b in at.button if b.label == "Agree and save")).click().run()
    assert not at.exception
    history = sampled.store.ground_truth.history("gen-foundation-01")
    assert [h.ground_truth_source for h in history] == [
        GroundTruthSource.PRIMARY_AGENT_AUTO_ACCEPT,
        GroundTruthSource.SME_VALIDATED,
    ]
    assert sampled.store.queue.get(packet_id).packet_kind == PacketKind.AUDIT
    assert sampled.store.queue.status(packet_id) == "COMPLETED"
