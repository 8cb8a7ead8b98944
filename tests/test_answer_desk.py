"""The answer desk's logic (arbiter/review/answer_reading.py, answer_draft.py and answer_check.py,
issue 31): each decision as a table of drafts and what the check makes of them, the page's data (targets,
excerpts, escaping), drafts that survive a reload, and two properties — no edit sequence crashes, and no
correction saves as supported a statement whose quotes do not support it."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arbiter.contracts import Issue, IssueSource, Severity
from arbiter.contracts.answers import StatementVerdict, UnsupportedReason, Verdict, verdict_differences
from arbiter.contracts.grounded import GroundedItem, GroundedProfile, load_grounded_profile
from arbiter.contracts.verification import Location
from arbiter.demo.grounded.build import demo_items
from arbiter.review import answer_check, answer_draft, answer_reading, drafts
from arbiter.verifiers.grounded.evidence import check_quotes, quotes_by_id
from arbiter.verifiers.grounded.v4_evidence import support_gaps

R = UnsupportedReason
S, U, C = Verdict.SUPPORTED, Verdict.UNSUPPORTED, Verdict.CORRECTED


@cache
def profile() -> GroundedProfile:
    return load_grounded_profile()


@cache
def items() -> dict[str, GroundedItem]:
    return {p.item["item_id"]: GroundedItem.model_validate(p.item) for p in demo_items()}


def item(name: str) -> GroundedItem:
    return items()[name]


Op = Callable[[answer_draft.AnswerDraft, GroundedItem], answer_draft.AnswerDraft]


def unsupported(index: int, reason: UnsupportedReason) -> Op:
    return lambda d, i: answer_draft.mark_unsupported(d, i, index, reason)


def cite(index: int, chunk: str, sentence: str | None = None) -> Op:
    return lambda d, i: answer_draft.cite(d, i, index, chunk, profile(), sentence)


def text(index: int, new: str) -> Op:
    return lambda d, i: answer_draft.edit_text(d, i, index, new)


def keep(index: int) -> Op:
    return lambda d, i: answer_draft.mark_unsupported(d, i, index, None)


def reset(index: int) -> Op:
    return lambda d, i: answer_draft.reset(d, i, index)


def abstain(missing: str) -> Op:
    return lambda d, i: answer_draft.abstain(d, True, missing)


def run(
    name: str, ops: list[Op]
) -> tuple[GroundedItem, answer_draft.AnswerDraft, answer_check.AnswerChecked]:
    subject = item(name)
    draft = answer_draft.AnswerDraft()
    for op in ops:
        draft = op(draft, subject)
    return subject, draft, answer_check.check_draft(draft, subject, profile())


# (item, actions, saved?, verdict per statement (reason for unsupported), a code that blocks when refused)
DECISIONS: list[tuple[str, list[Op], bool, list[Any], str | None]] = [
    # mark a statement unsupported, with each reason
    ("q02-unsupported-statement", [unsupported(2, R.CHANGED_MODAL)], True, [S, S, R.CHANGED_MODAL], None),
    ("q02-unsupported-statement", [unsupported(2, R.NOT_IN_SOURCE)], True, [S, S, R.NOT_IN_SOURCE], None),
    ("q29-unsupported-statement", [unsupported(1, R.CHANGED_NUMBER)], True, [S, R.CHANGED_NUMBER], None),
    ("q20-compliance-claim", [unsupported(1, R.IRRELEVANT_CITATION)], True, [S, R.IRRELEVANT_CITATION], None),
    # the wrong statement marked: the unsupported one would stay, supported
    ("q02-unsupported-statement", [unsupported(0, R.NOT_IN_SOURCE)], False, [R.NOT_IN_SOURCE, S, S],
     "V4.STATEMENT_UNSUPPORTED"),
    # every statement unsupported: that is an abstention
    ("q08-modal-changed", [unsupported(0, R.CHANGED_MODAL)], False, [R.CHANGED_MODAL], "FORM.NOTHING_LEFT"),
    # fix a citation: the right chunk (the answer's own quote from it is reused), or a wrong one
    ("q11-irrelevant-citation", [cite(0, "C09")], True, [C], None),
    ("q11-irrelevant-citation", [cite(0, "C13")], False, [C], "V4.STATEMENT_UNSUPPORTED"),
    ("q05-quote-not-in-chunk", [cite(0, "C05")], True, [C], None),
    # unsupported, then its citation fixed: it stands again
    ("q11-irrelevant-citation", [unsupported(0, R.IRRELEVANT_CITATION), cite(0, "C09")], True, [C], None),
    # replace with an abstention
    ("q38-answered-without-evidence", [abstain("A rule on the time limit")], True, [R.NOT_IN_SOURCE], None),
    ("q26-low-score-citation", [abstain("A source above the threshold")], True, [R.NOT_IN_SOURCE], None),
    ("q38-answered-without-evidence", [abstain("  \n ")], False, [R.NOT_IN_SOURCE], "FORM.MISSING_EVIDENCE"),
    # edit a statement's text: to what its quote says, or a cosmetic change that still overstates
    ("q02-unsupported-statement",
     [text(2, "The covered entity may extend the time for such actions by no more than 30 days.")], True,
     [S, S, C], None),
    ("q02-unsupported-statement",
     [text(2, "The privacy official must personally approve every such decision.")], False, [S, S, C],
     "V4.STATEMENT_UNSUPPORTED"),
    # nothing changed: that is Agree
    ("q17-hedged", [], False, [S], "FORM.UNCHANGED"),
]  # fmt: skip


def _expected(verdicts: tuple[StatementVerdict, ...]) -> list[Any]:
    return [v.reason if v.verdict == U else v.verdict for v in verdicts]


@pytest.mark.parametrize(("name", "ops", "saved", "verdicts", "code"), DECISIONS)
def test_each_decision(name: str, ops: list[Op], saved: bool, verdicts: list[Any], code: str | None) -> None:
    _subject, _draft, checked = run(name, ops)
    assert checked.ok is saved, [p.message for p in checked.blocking]
    assert _expected(checked.verdicts) == verdicts
    if code is not None:
        assert code in {p.code for p in checked.blocking}
        assert all(p.message and not p.message.startswith("{") for p in checked.blocking)


@pytest.mark.parametrize(
    ("name", "agreeable", "code"),
    [
        ("q17-hedged", True, None),
        ("q23-chunk-instruction", True, None),
        ("q02-unsupported-statement", False, "V4.STATEMENT_UNSUPPORTED"),
        ("q05-quote-not-in-chunk", False, "V4.QUOTE_NOT_IN_CHUNK"),
        ("q26-low-score-citation", False, "V2.ANSWERED_WITHOUT_EVIDENCE"),
        ("q14-abstained-with-evidence", True, None),  # whether that chunk answers is the reviewer's call
    ],
)
def test_agreeing_meets_the_same_rules(name: str, agreeable: bool, code: str | None) -> None:
    checked = answer_check.check_agreement(item(name), profile())
    assert checked.ok is agreeable
    assert all(v.verdict == S for v in checked.verdicts)
    if code:
        assert code in {p.code for p in checked.blocking}


def test_a_saved_correction_is_a_valid_answer_with_its_confidence() -> None:
    """The corrected answer drops the unsupported statement and unused quotes; confidence from the count."""
    _subject, _draft, checked = run("q02-unsupported-statement", [unsupported(2, R.CHANGED_MODAL)])
    assert checked.answer is not None
    assert [s["text"] for s in checked.answer["statements"]] == [
        "The covered entity may extend the time for such actions by no more than 30 days.",
        "The covered entity may have only one such extension of time for action on a request for access.",
    ]
    assert {q["quote_id"] for q in checked.answer["quotes"]} == {"REQ-001", "REQ-002"}
    assert checked.answer["confidence"] == "medium"
    _s, _d, abstained = run("q38-answered-without-evidence", [abstain("one\n\ntwo ")])
    assert abstained.answer is not None
    assert abstained.answer["abstained"] is True
    assert abstained.answer["missing_evidence"] == ["one", "two"]
    assert abstained.answer["statements"] == []
    assert abstained.answer["confidence"] is None


def test_a_picked_sentence_is_quoted_verbatim_with_its_offsets() -> None:
    subject = item("q11-irrelevant-citation")
    chunk = next(c for c in subject.chunks if c.chunk_id == "C13")
    sentence = answer_draft.chunk_sentences(chunk)[0][2]
    draft = answer_draft.cite(answer_draft.AnswerDraft(), subject, 0, "C13", profile(), sentence)
    quote = answer_draft.cited_quote(draft, subject, 0)
    assert quote is not None
    assert quote.quote_id == "SME-001"
    assert quote.start is not None
    assert quote.end is not None
    assert chunk.text[quote.start : quote.end] == quote.text == sentence
    # the same sentence again is the same quote, not a second one
    again = answer_draft.cite(draft, subject, 0, "C13", profile(), sentence)
    assert again.quotes == draft.quotes


def test_out_of_range_and_unknown_targets_change_nothing() -> None:
    subject = item("q02-unsupported-statement")
    draft = answer_draft.AnswerDraft()
    assert answer_draft.mark_unsupported(draft, subject, 9, R.NOT_IN_SOURCE) == draft
    assert answer_draft.cite(draft, subject, 0, "NO-SUCH-CHUNK", profile()) == draft
    assert answer_draft.edit_text(draft, subject, -1, "x") == draft
    assert (
        answer_draft.edit_text(draft, subject, 0, subject.answer.statements[0].text + "  ") == draft
    )  # same text


def test_changes_and_reason_codes_say_what_was_done() -> None:
    subject, draft, _checked = run(
        "q02-unsupported-statement",
        [
            unsupported(2, R.CHANGED_MODAL),
            cite(0, "C02"),
            text(1, "The covered entity may have only one such extension."),
        ],
    )
    assert answer_check.changes(draft, subject) == [
        "Statement 1: cites REQ-001",
        "Statement 2: new text",
        "Statement 3: unsupported (changed modal)",
    ]
    assert answer_check.reason_codes(draft) == [
        "EDITED_STATEMENT",
        "FIXED_CITATION",
        "UNSUPPORTED_CHANGED_MODAL",
    ]
    assert answer_draft.reset(draft, subject, 2).edit(2).empty


# ------------------------------------------------------------------------------------------ the page's data
def _issue(path: str, message: str = "m", code: str = "V4.STATEMENT_UNSUPPORTED") -> Issue:
    return Issue(
        issue_id="V4-0001",
        code=code,
        severity=Severity.MAJOR,
        message=message,
        location=Location(path=path),
        source=IssueSource.RULE,
        verifier="V4",
    )


@pytest.mark.parametrize(
    ("path", "label"),
    [
        ("/answer/statements/2", "Statement 3"),
        ("/answer/statements/0/text", "Statement 1"),
        ("/answer/statements/1/cites/0", "Statement 2"),
        ("/answer/quotes/0/text", "Quote REQ-001 (statement 1, 3)"),
        ("/answer/quotes/1", "Quote REQ-002 (statement 2)"),
        ("/chunks/0/text", "Chunk C02 (45 CFR 164.524(b)(2)(ii))"),
        ("/answer/statements", "The answer"),
        ("/answer/confidence", "The answer"),
        ("", "The answer"),
    ],
)
def test_issues_point_at_statements_and_quotes(path: str, label: str) -> None:
    subject = item("q02-unsupported-statement")
    assert answer_reading.target_label(answer_reading.target_of(_issue(path)), subject) == label


def test_the_statement_cards_carry_their_issues_and_located_quotes() -> None:
    subject = item("q02-unsupported-statement")
    issues = [
        _issue("/answer/statements/2", "Statement 3 is not supported"),
        _issue("/answer/quotes/1/text", "q"),
    ]
    views = answer_reading.statement_views(subject, issues, profile())
    assert [len(v.issues) for v in views] == [0, 0, 1]
    assert [len(c.issues) for v in views for c in v.citations] == [0, 1, 0]
    first = views[0].citations[0]
    assert first.chunk is not None
    assert first.span is not None
    assert first.exact
    assert first.chunk.text[first.span[0] : first.span[1]] == first.text
    assert answer_reading.issue_line(issues[0], subject) == "Statement 3 is not supported"
    assert answer_reading.general_issues([*issues, _issue("/answer/statements")]) == [
        _issue("/answer/statements")
    ]


def test_a_quote_not_in_its_chunk_shows_the_closest_passage_and_what_differs() -> None:
    subject = item("q05-quote-not-in-chunk")
    [view] = answer_reading.statement_views(subject, [], profile())
    [citation] = view.citations
    assert citation.span is None
    assert citation.closest is not None
    differing = {w.text for w in citation.closest.quoted if w.differs}
    assert differing == {"health", "care", "provider"}
    text = answer_reading.closest_chunk_markdown(citation.closest, citation.chunk)  # type: ignore[arg-type]
    assert "Closest passage" in text
    assert ":red-background[**health**]" in text


def test_a_draft_citation_is_shown_where_the_statement_now_points() -> None:
    subject = item("q11-irrelevant-citation")
    draft = answer_draft.cite(answer_draft.AnswerDraft(), subject, 0, "C09", profile())
    [view] = answer_reading.statement_views(subject, [], profile(), draft)
    assert [c.chunk.chunk_id for c in view.citations if c.chunk] == ["C09"]


HOSTILE = "![x](http://127.0.0.1:9/x.png) [l](http://e) *em* _u_ # h :red[r] $x$ <b>b</b>"


def _unescaped(markdown: str, token: str) -> bool:
    return re.search(r"(?<!\\)" + re.escape(token), markdown) is not None


@pytest.mark.parametrize("token", ["![", "](", "*em*", "_u_", ":red[", "$x$", "<b>"])
def test_item_text_is_shown_as_text(token: str) -> None:
    """Chunk, quote and statement text never reach Markdown unescaped (arbiter.review.packet_view.escape)."""
    chunk_text = f"Before. {HOSTILE} the quoted words here. After {HOSTILE}"
    start = chunk_text.index("the quoted")
    shown = answer_reading.chunk_markdown(chunk_text, (start, start + len("the quoted words here")))
    assert not _unescaped(shown.replace(":orange-background[**", "").replace("**]", ""), token)
    assert not _unescaped(answer_reading.chunk_markdown(HOSTILE, None), token)


def test_a_long_chunk_is_cut_around_the_quote() -> None:
    body = " ".join(f"w{n}" for n in range(400))
    start = body.index("w200")
    before, quote, after = answer_reading.excerpt(body, (start, start + 4))
    assert quote == "w200"
    assert before.startswith("…")
    assert after.endswith("…")
    assert len(before) <= answer_reading.EXCERPT_CHARS + 2
    assert len(after) <= answer_reading.EXCERPT_CHARS + 2


def test_chunk_caption_names_source_section_page_and_score() -> None:
    chunk = item("q02-unsupported-statement").chunks[0]
    caption = answer_reading.chunk_caption(chunk.model_copy(update={"page": 4}))
    assert caption == (
        "C02 · 45 CFR 164.524(b)(2)(ii) · Access of individuals to protected health information: extension"
        " · page 4 · score 0.74"
    )


# ------------------------------------------------------------------------------------------ drafts, adjudication
def test_a_draft_survives_the_servers_draft_payload() -> None:
    subject, draft, _ = run(
        "q02-unsupported-statement",
        [unsupported(2, R.CHANGED_MODAL), cite(0, "C12"), text(1, "Edited."), abstain("x\ny")],
    )
    kept = {"answer": draft.to_json()}
    payload = drafts.collect("p1", {}, kept)
    restored: dict[str, Any] = {}
    drafts.restore("p1", payload, {}, restored, {})
    assert answer_draft.AnswerDraft.from_json(restored["answer"]) == draft
    assert (
        answer_draft.AnswerDraft.from_json({"edits": {"x": 1, "0": {"reason": "bogus"}}, "quotes": [{}]})
        == answer_draft.AnswerDraft()
    )
    assert answer_draft.AnswerDraft.from_json(None) == answer_draft.AnswerDraft()
    assert subject.item_id


def _v(
    index: int, verdict: Verdict, reason: UnsupportedReason | None = None, cites: tuple[str, ...] = ()
) -> StatementVerdict:
    return StatementVerdict(index=index, verdict=verdict, reason=reason, cites=list(cites))


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ([_v(0, S, cites=("A",))], [_v(0, S, cites=("A",))], []),
        ([_v(0, S)], [_v(0, U, R.CHANGED_MODAL)],
         ["Statement 1: the first review says supported, the second unsupported (changed modal)."]),
        ([_v(1, U, R.NOT_IN_SOURCE)], [_v(1, U, R.CHANGED_NUMBER)],
         ["Statement 2: the first review says unsupported (not in source), the second unsupported (changed number)."]),
        ([_v(0, C, cites=("A",))], [_v(0, C, cites=("B",))],
         ["Statement 1: the first review cites A, the second B."]),
    ],
)  # fmt: skip
def test_answer_reviews_differ_by_statement_verdicts(
    first: list[StatementVerdict], second: list[StatementVerdict], expected: list[str]
) -> None:
    assert verdict_differences(first, second) == expected


def test_an_abstention_against_an_answer_is_a_difference() -> None:
    found = verdict_differences([], [], {"abstained": True}, {"abstained": False})
    assert found == [
        "Abstention: the first review replaces the answer with an abstention, the other does not."
    ]


# ------------------------------------------------------------------------------------------ properties
NAMES = sorted(n for n in items() if "q" in n)


@st.composite
def edit_sequences(draw: st.DrawFn) -> tuple[str, list[Op]]:
    name = draw(st.sampled_from(NAMES))
    subject = item(name)
    n = max(1, len(subject.answer.statements))
    chunks = [c.chunk_id for c in subject.chunks] + ["NOPE"]
    ops: list[Op] = []
    for _ in range(draw(st.integers(0, 6))):
        index = draw(st.integers(-1, n))
        kind = draw(
            st.sampled_from(["mark", "keep", "cite", "sentence", "text", "reset", "abstain", "unabstain"])
        )
        if kind == "mark":
            ops.append(unsupported(index, draw(st.sampled_from(list(R)))))
        elif kind == "keep":
            ops.append(keep(index))
        elif kind == "cite":
            ops.append(cite(index, draw(st.sampled_from(chunks))))
        elif kind == "sentence":
            chunk = draw(st.sampled_from(subject.chunks)) if subject.chunks else None
            options = [s for _a, _b, s in answer_draft.chunk_sentences(chunk)] if chunk else []
            if chunk and options:
                ops.append(cite(index, chunk.chunk_id, draw(st.sampled_from(options))))
        elif kind == "text":
            pieces = [s.text for s in subject.answer.statements] + ["", "Must.", "é 30 days ![x](y)"]
            ops.append(text(index, draw(st.sampled_from(pieces) | st.text(max_size=40))))
        elif kind == "reset":
            ops.append(reset(index))
        elif kind == "abstain":
            ops.append(abstain(draw(st.sampled_from(["", "a rule", "x\ny"]))))
        else:
            ops.append(lambda d, i: answer_draft.abstain(d, False))
    return name, ops


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edit_sequences())
def test_no_edit_sequence_crashes_and_none_hides_an_unsupported_statement(case: tuple[str, list[Op]]) -> None:
    name, ops = case
    subject, draft, checked = run(name, ops)
    assert answer_draft.AnswerDraft.from_json(draft.to_json()) == draft
    assert len(checked.verdicts) == len(subject.answer.statements)
    if not checked.ok:
        assert checked.blocking
        assert all(p.message for p in checked.blocking)
        return
    assert checked.answer is not None
    machine_checks = quotes_by_id(
        subject, check_quotes(subject, answer_reading.bundle_of(subject), profile())
    )
    for verdict in checked.verdicts:
        if verdict.verdict != S:
            continue
        # "supported" means unchanged: then the machine's own quotes hold it, and are in their chunks
        statement = subject.answer.statements[verdict.index]
        assert verdict.cites == statement.cites
        quotes = [machine_checks[q] for q in statement.cites if q in machine_checks]
        assert quotes
        assert all(q.found for q in quotes)
        assert support_gaps(statement.text, [q.quote.text for q in quotes], profile()) == []
    saved = GroundedItem.model_validate({**subject.model_dump(mode="json"), "answer": checked.answer})
    saved_checks = quotes_by_id(saved, check_quotes(saved, answer_reading.bundle_of(saved), profile()))
    for statement in saved.answer.statements:  # every statement kept rests on quotes that hold it
        quotes = [saved_checks[q] for q in statement.cites if q in saved_checks]
        assert quotes
        assert all(q.found for q in quotes)
        assert support_gaps(statement.text, [q.quote.text for q in quotes], profile()) == []


@pytest.mark.parametrize(
    "name", [n for n in NAMES if answer_check.check_agreement(item(n), profile()).blocking]
)
def test_an_unsupported_answer_cannot_be_accepted_unchanged(name: str) -> None:
    """Neither Agree nor a correction that leaves it as it is saves an answer V4 or V1/V2 refuses."""
    assert not answer_check.check_agreement(item(name), profile()).ok
    assert not answer_check.check_draft(answer_draft.AnswerDraft(), item(name), profile()).ok
