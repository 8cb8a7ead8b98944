"""Packet page, headless (AppTest): Agree runs the correction's checks, issue marks, honest page states."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from review_helpers import Seeded, app_on, app_test, sign_in

from arbiter.review.desk import Desk


@pytest.fixture(name="seeded")
def seeded_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Seeded]:
    with app_on(tmp_path, monkeypatch) as data:
        yield data


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
