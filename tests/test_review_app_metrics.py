"""The review app's Metrics page, headless with Streamlit's AppTest against a store seeded by the real
pipeline: the false-accept headline (unknown, then measured after a blind audit), charts and tables."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from review_helpers import Seeded, app_test, sign_in

from arbiter.contracts import PacketKind, SMEReview
from arbiter.contracts.profile import MetricsPolicy, load_profile
from arbiter.record.packets import build_blind_packet

pytestmark = pytest.mark.seeded_app


def _metrics_page(name: str = "alice") -> Any:
    at = sign_in(app_test(), name)
    at.switch_page("views/metrics.py").run()
    assert not at.exception
    return at


def _audit_corrected(seeded: Seeded) -> None:
    """A later run accepts gen-foundation-01 again and samples it for a blind audit; bob corrects it."""
    record = next(r for r in seeded.records if r.doc_id == "gen-foundation-01")
    audit = build_blind_packet(
        PacketKind.AUDIT,
        record.outcome,
        pdf_path=record.pdf_path,
        pdf_sha256="c" * 64,
        bundle_path=None,
        total_pages=1,
        primary=record.outcome.final_classification,
        run_id="run-audit",
    )
    assert seeded.store.records.record(
        dataclasses.replace(record, run_id="run-audit", samples=(audit,))
    ).recorded
    assert seeded.store.queue.claim(audit.packet_id, "bob") is not None
    now = datetime.now(UTC)
    review = SMEReview(
        reviewer="bob",
        agrees_with_primary=False,
        confidence=0.9,
        started_at=now - timedelta(minutes=1),
        submitted_at=now,
    )
    truth = dict(record.outcome.final_classification or {}, dominant_type="ADMINISTRATIVE")
    seeded.store.reviews.submit(audit.packet_id, "bob", review, truth, idempotency_key="audit-1")


def test_every_reviewer_sees_the_metrics_page(seeded: Seeded) -> None:
    """A reviewer (not only an admin) opens Metrics: no audits yet, so the rate is 'Unknown', in words too."""
    at = _metrics_page("alice")
    assert [t.value for t in at.title] == ["Metrics"]
    headline = at.metric[0]
    assert (headline.label, headline.value) == ("Arbiter false-accept rate", "Unknown")
    assert any("No blind audits reviewed yet" in str(i.value) for i in at.info)
    images = at.image
    assert len(images) >= 6  # rates, decisions, reasons, heat maps, precision, trends: SVG images
    assert len(at.dataframe) >= 4


def test_one_audit_is_too_few_for_a_rate(seeded: Seeded) -> None:
    """After one corrected blind audit the page says too few audits, with the upper bound and the audits needed."""
    _audit_corrected(seeded)
    at = _metrics_page("alice")
    headline = at.metric[0]
    assert headline.value == "Too few audits"
    assert any(
        "upper bound 100.0 % (Wilson 95 %) · n = 1 blind audit, 1 corrected" in str(c.value)
        for c in at.caption
    )
    said = " ".join(str(i.value) for i in at.info)
    assert "Too few blind audits to estimate the false-accept rate" in said
    assert "fewer than the 30 the profile asks for" in said
    assert "more audits with no false accept would bring the upper bound under the 5.0 % target" in said


def test_with_enough_audits_the_headline_shows_the_rate(
    seeded: Seeded, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the profile's minimum met (here 1), the page shows 100.0 % with its Wilson interval and n."""
    original = load_profile()
    lenient = original.model_copy(update={"metrics": MetricsPolicy(min_audits_for_rate=1)})
    monkeypatch.setattr("arbiter.contracts.profile.load_profile", lambda *a, **k: lenient)
    _audit_corrected(seeded)
    at = _metrics_page("alice")
    headline = at.metric[0]
    assert headline.value == "100.0 %"
    assert any("95 % CI 20.7–100.0 % · n = 1 blind audit, 1 corrected" in str(c.value) for c in at.caption)
    split = "False accepts by how the accept was earned: rules only 100.0 % (95 % CI 20.7–100.0 %; 1 of 1)"
    assert any(split in str(m.value) for m in at.markdown), "the split by semantic checks is shown"


def test_a_bad_as_of_time_is_explained(seeded: Seeded) -> None:
    """An unreadable 'As of' is a plain message, and nothing is computed."""
    at = _metrics_page()
    at.text_input(key="metrics_as_of").input("yesterday-ish").run()
    assert not at.exception
    assert any("ISO 8601 date or time" in str(e.value) for e in at.error)
    assert not at.metric


def test_as_of_before_the_run_shows_nothing_yet(seeded: Seeded) -> None:
    """As of a date before anything was run, the page shows an empty report, not an error."""
    at = _metrics_page()
    at.text_input(key="metrics_as_of").input("2020-01-01").run()
    assert not at.exception
    assert at.metric[0].value == "Unknown"


def test_figures_from_too_few_reviews_say_so_with_their_n(seeded: Seeded) -> None:
    """One corrected audit: 'not enough reviews (n=1)', never '100.0 %' in large type; the page says when it
    was computed and offers Recompute."""
    _audit_corrected(seeded)
    at = _metrics_page("alice")
    figures = {m.label: str(m.value) for m in at.metric}
    assert figures["Dominant type wrong (audits)"] == "not enough reviews (n=1)"
    assert figures["Reviewer agreement κ"] == "not enough pairs (n=0)"
    assert "100.0 %" not in figures.values()
    assert any(str(c.value).startswith("As of ") for c in at.caption)
    assert at.button(key="metrics_refresh").label == "Recompute"


def test_the_grounded_answers_section_shows_when_answers_have_ground_truth(seeded: Seeded) -> None:
    """No answer item: no section. With the hand-counted answers (tests/grounded_truth_helpers.py): a Grounded answers
    header, the answers' false-accept line and each scope's figures as text; the medical headline is unchanged."""
    from grounded_truth_helpers import seed_answers

    before = _metrics_page("alice")
    assert "Grounded answers" not in [h.value for h in before.header]
    headline = before.metric[0].value
    seed_answers(seeded.store)
    at = _metrics_page("alice")
    at.button(
        key="metrics_refresh"
    ).click().run()  # the page keeps its figures a minute; Recompute reads again
    assert not at.exception
    assert at.metric[0].value == headline
    assert [h.value for h in at.header] == ["Grounded answers"]
    said = " ".join(str(m.value) for m in at.markdown)
    assert "Arbiter false-accept rate on answers: Too few audits" in said
    everything, expert = (
        dict(zip(t.value["Figure"], t.value["Value"], strict=True))
        for t in at.dataframe
        if list(t.value.columns) == ["Figure", "Value", "Counts"]
    )  # all items, then the expert-reviewed ones
    assert everything["Groundedness"].startswith("62.5 %")
    assert everything["Citation recall"].endswith("6 of 7 cites)")
    assert expert["Answer accuracy"].startswith("25.0 %")


def test_a_drift_alarm_is_shown_with_the_producers_name_as_text(seeded: Seeded) -> None:
    """A producer whose escalations rose gets a red alarm box; its name (Markdown here) is shown literally."""
    from store_fixtures import T0, accepted, escalated

    hostile = "**bold**-model"
    for i in range(120):  # a first run: two producers, every tenth document escalated
        record = escalated(f"d{i}", "run-1") if i % 10 == 0 else accepted(f"d{i}", "run-1")
        producer = hostile if i % 2 else "steady"
        seeded.store.records.record(dataclasses.replace(record, producer=producer, risk=0.01), now=T0)
    for i in range(40):  # a second run: the hostile producer escalates everything
        record = escalated(f"e{i}", "run-2") if i % 2 == 0 else accepted(f"e{i}", "run-2")
        producer = hostile if i % 2 == 0 else "steady"
        seeded.store.records.record(dataclasses.replace(record, producer=producer, risk=0.01), now=T0)
    at = _metrics_page("alice")
    shown = [str(e.value) for e in at.error]
    assert any(r"producer \*\*bold\*\*\-model's escalation rate rose to" in text for text in shown), shown
