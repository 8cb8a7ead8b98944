"""The Correct form's evidence editor, the readable Classification tab and the ground-truth page, headless
with Streamlit's AppTest against a seeded SQLite store."""

from __future__ import annotations

import re
from typing import Any

import pytest
from review_helpers import Seeded, app_test, sign_in

from arbiter.review.desk import machine_answer

pytestmark = pytest.mark.seeded_app


def _texts(elements: Any) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", str(e.value)) for e in elements]


def _open_correct(at: Any) -> str:
    at.button(key="claim_next").click().run()
    packet_id = str(at.session_state["arbiter_packet_id"])
    at.radio(key=f"decision_{packet_id}").set_value("Correct").run()
    assert not at.exception
    return packet_id


def test_the_classification_tab_is_tables_and_quotes_not_json(seeded: Seeded) -> None:
    """The packet page shows no raw JSON: the classification is a summary, type tables and quotes."""
    at = sign_in(app_test())
    packet_id = _open_correct(at)
    answer = machine_answer(seeded.store.queue.get(packet_id))
    assert answer is not None
    assert len(at.json) == 0
    shown = "\n".join(_texts(at.markdown))
    assert answer["dominant_type"] in shown
    quote = answer["segments"][0]["types"][0]["evidence"] or [
        e for t in answer["segments"][0]["types"] for e in t["evidence"]
    ]
    assert quote[0]["snippet"] in shown


def test_a_removed_quote_is_not_saved_and_the_comment_is_on_the_ground_truth_page(seeded: Seeded) -> None:
    """Remove a quote, make the segment administrative, save with a comment: the saved answer lacks the
    quote and the ground-truth page shows the comment."""
    at = sign_in(app_test())
    packet_id = _open_correct(at)
    packet = seeded.store.queue.get(packet_id)
    at.session_state[f"seg_editor_{packet_id}"] = {
        "edited_rows": {0: {"ADMINISTRATIVE": 1.0, "GENOMIC_REPORT": 0.0}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    at.selectbox(key=f"ev_type_{packet_id}").set_value("ADMINISTRATIVE").run()
    lines = at.pills(key=f"ev_lines_{packet_id}_ADMINISTRATIVE_1_0")
    picked = re.sub(r"\\(.)", r"\1", lines.options[0])  # the chip's label is the line, escaped
    lines.select(picked).run()
    assert not at.exception
    removable = [b for b in at.button if str(b.key or "").startswith(f"ev_remove_{packet_id}_")]
    assert [b.help for b in removable] == ["Remove this evidence"]
    removable[0].click().run()
    assert not [b for b in at.button if str(b.key or "").startswith(f"ev_remove_{packet_id}_")]
    at.text_area(key=f"correct_notes_{packet_id}").input("Requisition form, no results.").run()
    at.button(key="save_correction").click().run()
    assert not at.exception
    [record] = seeded.store.ground_truth.history(packet.doc_id)
    quotes = [
        e["snippet"]
        for s in record.ground_truth_classification["segments"]
        for t in s["types"]
        for e in t["evidence"]
    ]
    assert picked not in quotes
    assert record.sme_review is not None
    assert record.sme_review.review_notes == "Requisition form, no results."

    at.switch_page("views/ground_truth.py").run()
    assert not at.exception
    assert any("Requisition form, no results." in t for t in _texts(at.markdown))
    assert len(at.json) == 0


def test_the_page_lines_to_pick_are_shown_as_text_not_markdown(seeded: Seeded) -> None:
    """A page line with Markdown in it ("[X] FoundationOne", "____") is a literal label on its chip."""
    at = sign_in(app_test())
    packet_id = _open_correct(at)
    lines = at.pills(key=f"ev_lines_{packet_id}_GENOMIC_REPORT_1_0")
    checked = next(line for line in lines.options if "FoundationOne" in line)
    assert checked.startswith("\\[X\\]")
    assert all("\\_" in line for line in lines.options if "_" in line)
