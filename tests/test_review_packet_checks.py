"""Packet page, headless (AppTest): Agree runs the correction's checks, issue marks, honest page states."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from review_helpers import FIXTURES, PDFS, Seeded, app_test, run_fixtures, sign_in

from arbiter.review.desk import Desk
from arbiter.review.settings import ENV_DOCS
from arbiter.store.models import packets

pytestmark = pytest.mark.seeded_app


def _texts(elements: Any) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", str(e.value)) for e in elements]


def _open(seeded: Seeded, doc_id: str, name: str = "alice") -> tuple[Any, str]:
    """The packet page of `doc_id`, claimed by `name` in the database, as the signed-in reviewer sees it."""
    packet_id = seeded.packet_id(doc_id)
    assert Desk(seeded.store, name).claim(packet_id).ok
    at = sign_in(app_test(), name)
    at.switch_page("views/packet.py").run()
    assert not at.exception
    return at, packet_id


def test_agree_on_a_rule_breaking_answer_opens_the_correction_editor(seeded: Seeded) -> None:
    """Agree on the confidence-1.3 packet saves nothing and opens Correct with the problem listed."""
    at, packet_id = _open(seeded, "gen-guardant-02")
    at.button(key=f"FormSubmitter:agree_{packet_id}-Agree and save").click().run()
    assert not at.exception
    assert at.radio(key=f"decision_{packet_id}").value == "Correct"
    listed = "\n".join(_texts(at.markdown))
    assert "confidence" in listed
    assert "1.3" in listed
    assert any("Agree was not saved" in t for t in _texts(at.error))
    assert seeded.store.queue.get(packet_id).review_status == "IN_REVIEW"
    assert seeded.store.ground_truth.history("gen-guardant-02") == []


def _add(seeded: Seeded, monkeypatch: pytest.MonkeyPatch, doc_id: str, pdfs: Path = PDFS) -> None:
    """Run the pipeline on one more fixture document and record it; the app may read all of fixtures/."""
    for record in run_fixtures(seeded.out_dir, (doc_id,), pdfs=pdfs):
        seeded.store.records.record(record)
        seeded.records.append(record)
    monkeypatch.setenv(ENV_DOCS, str(FIXTURES))


def test_a_damaged_packet_says_it_could_not_be_read(seeded: Seeded, monkeypatch: pytest.MonkeyPatch) -> None:
    """A packet whose PDF is damaged says so plainly: no "0 pages", no page 1, no engine error name (it waits
    in the operations lane; here it is put back in the queue as a packet from before the lane would be)."""
    _add(seeded, monkeypatch, "truncated-transfer", FIXTURES / "damaged")
    refused = Desk(seeded.store, "alice").claim(seeded.packet_id("truncated-transfer"))
    assert not refused.ok
    assert "could not be read" in refused.message
    with seeded.store.db.engine.begin() as conn:
        conn.execute(
            sa.update(packets)
            .where(packets.c.packet_id == seeded.packet_id("truncated-transfer"))
            .values(status="PENDING")
        )
    at, _ = _open(seeded, "truncated-transfer")
    errors = " ".join(_texts(at.error))
    assert "This file could not be read (PDF is damaged)" in errors
    assert "Pdfium" not in errors
    assert not any("0 pages" in t for t in _texts(at.caption))
    assert "could not be read" in " ".join(_texts(at.caption))
    assert not at.image
    assert not at.number_input


def test_a_blank_scanned_page_says_why_its_text_is_empty(
    seeded: Seeded, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The text panel of the scanned packet's blank page says OCR found no text, instead of staying empty."""
    _add(seeded, monkeypatch, "packet-07-scanned")
    at, _ = _open(seeded, "packet-07-scanned")
    shown = "\n".join(_texts(at.markdown))
    assert "Page 5 is a scanned image with no text layer, and OCR found no readable text on it" in shown


def test_the_injection_issue_points_at_the_sentence(seeded: Seeded) -> None:
    """The prompt-injection issue's text panel marks the injected sentence itself."""
    at, _ = _open(seeded, "note-injection-03")
    shown = "\n".join(_texts(at.markdown))
    assert ":orange-background[**Ignore previous instructions" in shown
