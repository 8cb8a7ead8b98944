"""The review app's operations lane, headless with AppTest (issue 11, item 1): the demo's four damaged PDFs
never reach a clinician (claim next, a direct claim, the queue page); an admin sees them with the reason in
plain English on the Operations page, retries the locked one with its password, dismisses one as not a
medical record; both audited. Blind-pair refusals say why."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from review_helpers import FIXTURES, PASSWORD, Seeded, app_on, app_test, run_fixtures, sign_in

from arbiter.demo.damaged import PASSWORD as PDF_PASSWORD
from arbiter.review.desk import NOT_REVIEWABLE, AdminDesk, Desk
from arbiter.review.settings import ENV_DOCS

DAMAGED = ("empty-upload", "locked-lab-report", "not-really-a-pdf", "truncated-transfer")


pytestmark = pytest.mark.seeded_app


@pytest.fixture(name="seeded")
def with_damaged(seeded: Seeded, monkeypatch: pytest.MonkeyPatch) -> Seeded:
    """The shared seeded store (tests/conftest.py) plus the demo's four damaged PDFs, as a run records them."""
    for record in run_fixtures(seeded.out_dir, DAMAGED, pdfs=FIXTURES / "damaged"):
        seeded.store.records.record(record)
        seeded.records.append(record)
    monkeypatch.setenv(ENV_DOCS, str(FIXTURES))  # holds pdfs/ and damaged/
    return seeded


def _texts(elements: Any) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", str(e.value)) for e in elements]


def _operations(at: Any) -> Any:
    at.switch_page("views/operations.py").run()
    assert not at.exception
    return at


def _choose(at: Any, seeded: Seeded, doc_id: str) -> str:
    packet_id = seeded.store.operations.find(doc_id).packet_id
    at.selectbox(key="ops_packet").set_value(packet_id).run()
    assert not at.exception
    return packet_id


def test_claim_next_in_the_app_never_opens_a_damaged_packet(seeded: Seeded) -> None:
    """Claim next opens a reviewable packet although the four damaged ones are older and Critical."""
    at = sign_in(app_test())
    at.button(key="claim_next").click().run()
    assert not at.exception
    opened = seeded.store.queue.get(at.session_state["arbiter_packet_id"])
    assert opened.doc_id not in DAMAGED
    assert opened.review_status == "IN_REVIEW"


def test_the_clinicians_queue_never_lists_a_damaged_packet(seeded: Seeded) -> None:
    """Neither the default filter nor "any status" shows an unreadable document in the queue table."""
    at = sign_in(app_test())
    for status in (["PENDING", "IN_REVIEW"], []):
        at.multiselect(key="filter_status").set_value(status).run()
        assert not at.exception
        shown = at.dataframe(key="queue_table").value["Document"].tolist()
        assert shown
        assert not set(shown) & set(DAMAGED)


def test_a_direct_claim_of_a_damaged_packet_says_it_is_an_operations_matter(seeded: Seeded) -> None:
    """The desk refuses a damaged packet by id with a plain reason, for a reviewer and an admin alike."""
    packet_id = seeded.store.operations.find("empty-upload").packet_id
    for who in ("alice", "root"):
        outcome = Desk(seeded.store, who).claim(packet_id)
        assert (outcome.ok, outcome.message) == (False, NOT_REVIEWABLE)


def test_admin_sees_the_operations_lane_with_plain_reasons(seeded: Seeded) -> None:
    """The Operations page lists the four damaged files with why, in words, and ingestion's own sentence."""
    at = _operations(sign_in(app_test(), "root", PASSWORD))
    table = at.dataframe[0].value
    assert sorted(table["Document"]) == sorted(DAMAGED)
    assert set(table["Why it could not be read"]) == {
        "PDF is empty",
        "PDF is password-protected",
        "Not a PDF",
        "PDF is damaged",
    }
    _choose(at, seeded, "locked-lab-report")
    assert any("password" in t for t in _texts(at.text))


def test_admin_dismisses_a_file_as_not_a_medical_record(seeded: Seeded) -> None:
    """Dismiss closes the item (DISMISSED, resolution kept, audited) and it leaves the page."""
    at = _operations(sign_in(app_test(), "root", PASSWORD))
    packet_id = _choose(at, seeded, "not-really-a-pdf")
    at.button(key="ops_dismiss").click().run()
    assert not at.exception
    assert seeded.store.queue.status(packet_id) == "DISMISSED"
    assert [e.actor for e in seeded.store.audit.events(action="ops.dismiss")] == ["root"]
    assert "not-really-a-pdf" not in at.dataframe[0].value["Document"].tolist()
    assert seeded.store.ground_truth.history("not-really-a-pdf") == []


def test_admin_retries_the_locked_report_with_its_password(seeded: Seeded) -> None:
    """The password opens the report: it leaves the lane, the retry is audited, the field is cleared."""
    at = _operations(sign_in(app_test(), "root", PASSWORD))
    packet_id = _choose(at, seeded, "locked-lab-report")
    at.text_input(key="ops_password").input(PDF_PASSWORD)
    at.button(key="FormSubmitter:ops_retry_form-Retry with this password").click().run()
    assert not at.exception
    assert seeded.store.queue.status(packet_id) == "SUPERSEDED"
    assert "locked-lab-report" not in at.dataframe[0].value["Document"].tolist()
    [event] = seeded.store.audit.events(action="ops.retry")
    assert event.actor == "root"
    assert PDF_PASSWORD not in str(event.details)
    assert any("was read this time" in t for t in _texts(at.success))


def test_reviewer_cannot_open_the_operations_page(seeded: Seeded) -> None:
    """The Operations page is not among a reviewer's pages."""
    at = sign_in(app_test())
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page("views/operations.py")


def test_reassigning_the_other_half_of_a_double_review_says_why(tmp_path: Path, monkeypatch: Any) -> None:
    """An admin's reassign of a second review to the escalation's reviewer is refused with the reason."""
    with app_on(tmp_path, monkeypatch, sample_all=True) as seeded:
        store = seeded.store
        second = next(p for p in store.queue.page(limit=50) if p.kind == "SECOND_REVIEW")
        first = store.queue.get(second.packet_id).pair_of
        assert first is not None
        assert store.queue.claim(first, "alice") is not None
        outcome = AdminDesk(store, "root").reassign(second.packet_id, "alice")
        assert not outcome.ok
        assert "needs a different reviewer" in outcome.message
        claim = Desk(store, "alice").claim(second.packet_id)
        assert not claim.ok
        assert "needs a different reviewer" in claim.message


def test_metrics_page_leaves_a_same_reviewer_pair_out_and_says_so(tmp_path: Path, monkeypatch: Any) -> None:
    """A legacy double review alice wrote both halves of: κ has no pair, and the page says one was left out."""
    from datetime import UTC, datetime, timedelta

    import sqlalchemy as sa

    from arbiter.contracts import SMEReview

    with app_on(tmp_path, monkeypatch, sample_all=True) as seeded:
        store = seeded.store
        second = next(p for p in store.queue.page(limit=50) if p.kind == "SECOND_REVIEW")
        first = store.queue.get(second.packet_id).pair_of
        assert first is not None
        truth = store.queue.get(first).final_classification or {}
        now = datetime.now(UTC)
        review = SMEReview(
            reviewer="alice", agrees_with_primary=True, confidence=0.9, started_at=now - timedelta(minutes=1),
            submitted_at=now,
        )  # fmt: skip
        assert store.queue.claim(first, "alice") is not None
        store.reviews.submit(first, "alice", review, truth, idempotency_key="first")
        with store.write() as conn:  # what an old reassign allowed
            conn.execute(
                sa.text(
                    "UPDATE packets SET status = 'IN_REVIEW', claimed_by = 'alice', claim_expires_at = :e "
                    "WHERE packet_id = :p"
                ),
                {"e": (now + timedelta(hours=1)).replace(tzinfo=None), "p": second.packet_id},
            )
        store.reviews.submit(second.packet_id, "alice", review, truth, idempotency_key="second")
        at = sign_in(app_test(), "root", PASSWORD)
        at.switch_page("views/metrics.py").run()
        assert not at.exception
        assert any("1 pair left out: one reviewer wrote both answers" in t for t in _texts(at.warning))
        assert any("no double-reviewed escalations yet" in t for t in _texts(at.markdown))


def test_the_admins_queue_page_points_to_the_operations_lane(seeded: Seeded) -> None:
    """An admin's queue page links to the Operations page with how many documents wait there; a reviewer's does not."""
    admin = sign_in(app_test(), "root", PASSWORD)
    assert not admin.exception
    links = [str(e.proto.label) for e in admin.get("page_link")]
    assert links == ["4 documents could not be read: see Operations"]
    reviewer = sign_in(app_test())
    assert reviewer.get("page_link") == []


def test_the_claims_page_refuses_a_reassign_that_breaks_a_double_review(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """On the admin's Claims page, reassigning a blind second review to the escalation's reviewer shows why
    it is refused, and the packet stays unclaimed."""
    with app_on(tmp_path, monkeypatch, sample_all=True) as seeded:
        store = seeded.store
        second = next(p for p in store.queue.page(limit=50) if p.kind == "SECOND_REVIEW")
        first = store.queue.get(second.packet_id).pair_of
        assert first is not None
        assert store.queue.claim(first, "alice") is not None
        at = sign_in(app_test(), "root", PASSWORD)
        at.switch_page("views/admin.py").run()
        at.selectbox(key="admin_packet").set_value(second.packet_id).run()
        at.selectbox(key="admin_to").set_value("alice").run()
        at.button(key="admin_reassign").click().run()
        assert not at.exception
        assert any("needs a different reviewer" in t for t in _texts(at.error))
        assert store.queue.get(second.packet_id).claimed_by is None
