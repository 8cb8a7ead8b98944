"""One queue, two kinds in the review app (issue 31.5), headless with Streamlit's AppTest: the queue shows each
packet's kind, filters by it and splits its counts by it; an admin restricts an account to kinds on the Claims
page (audited), and a restricted reviewer's queue and Claim next keep to their kinds."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from review_helpers import PASSWORD, Seeded, app_test, sign_in
from store_fixtures import T0, escalated, of_kind

from arbiter.contracts import Severity
from arbiter.kinds import GROUNDED, MEDICAL

pytestmark = pytest.mark.seeded_app

GROUNDED_DOCS = ("answer-01", "answer-02")


@pytest.fixture(name="both")
def both_fixture(seeded: Seeded) -> Seeded:
    """The seeded medical escalations plus two grounded-answer escalations, the most urgent of the queue."""
    for i, doc_id in enumerate(GROUNDED_DOCS):
        record = escalated(doc_id, severity=Severity.BLOCKER, created=T0 - timedelta(days=30 - i))
        seeded.store.records.record(of_kind(record, GROUNDED))
    return seeded


def _texts(elements: Any) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", str(e.value)) for e in elements]


def _table(at: Any) -> Any:
    return at.dataframe(key="queue_table").value


def test_the_queue_shows_filters_and_counts_by_kind(both: Seeded) -> None:
    """Every row names its kind in words; the kind filter keeps one kind; the counts are split by kind."""
    at = sign_in(app_test())
    assert not at.exception
    table = _table(at)
    assert set(table["Kind"]) == {"Medical classification", "Grounded answer"}
    assert next(m for m in at.metric if m.label == "Waiting").value == "6"
    split = " ".join(_texts(at.caption))
    assert "Grounded answer: 2 waiting, 0 in review, 0 done" in split
    assert "Medical classification: 4 waiting, 0 in review, 0 done" in split
    at.multiselect(key="filter_kind").set_value([GROUNDED]).run()
    assert not at.exception
    table = _table(at)
    assert list(table["Document"]) == list(GROUNDED_DOCS)
    assert set(table["Kind"]) == {"Grounded answer"}
    assert "Grounded answer: " in at.multiselect(key="filter_kind").help  # the registry's summary as help


def test_an_admin_restricts_a_reviewer_to_kinds(both: Seeded) -> None:
    """On the Claims page root restricts alice to medical classifications (audited); alice's queue then lists
    and counts those only, and Claim next hands her a medical packet though grounded ones are more urgent."""
    admin = sign_in(app_test(), "root", PASSWORD)
    admin.switch_page("views/admin.py").run()
    admin.selectbox(key="admin_kinds_user").set_value("alice").run()
    admin.multiselect(key="admin_kinds_alice").set_value([MEDICAL]).run()
    admin.button(key="admin_kinds_save").click().run()
    assert not admin.exception
    assert "alice reviews medical classifications only." in _texts(admin.success)
    assert both.store.users.kinds("alice") == (MEDICAL,)
    [event] = both.store.audit.events(action="user.kinds", target="alice")
    assert event.actor == "root"
    assert event.details["to"] == [MEDICAL]

    at = sign_in(app_test())
    assert set(_table(at)["Kind"]) == {"Medical classification"}
    assert next(m for m in at.metric if m.label == "Waiting").value == "4"
    assert "You review medical classifications only." in _texts(at.caption)
    assert at.multiselect(key="filter_kind").options == ["Medical classification"]
    at.button(key="claim_next").click().run()
    assert not at.exception
    claimed = both.store.queue.get(str(at.session_state["arbiter_packet_id"]))
    assert claimed.answer_kind == MEDICAL
    assert claimed.claimed_by == "alice"

    admin.selectbox(key="admin_kinds_user").set_value("alice").run()
    admin.multiselect(key="admin_kinds_alice").set_value([]).run()
    admin.button(key="admin_kinds_save").click().run()
    assert "alice reviews every kind of answer." in _texts(admin.success)
    assert both.store.users.kinds("alice") == ()
