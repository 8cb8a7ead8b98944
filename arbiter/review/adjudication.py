"""The adjudication page's logic (docs/design.md §8.2): two reviews of one document disagree; the adjudicator
(an admin or a third reviewer, enforced by the claim) sees both answers as tables and keeps one of them or
gives a corrected answer. Only that decision becomes a ground-truth version (SME_ADJUDICATED)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from arbiter.contracts import AdjudicationCase, AdjudicationChoice, DocumentBundle, SMEPacket, SMEReview
from arbiter.contracts.agreement import types_present
from arbiter.contracts.profile import Profile
from arbiter.review.desk import Desk, Outcome
from arbiter.review.forms import Checked, CorrectionDraft, check_correction, corrections_of


def choice_label(choice: AdjudicationChoice, case: AdjudicationCase) -> str:
    """The decision as the adjudicator reads it, naming whose answer is kept."""
    if choice == AdjudicationChoice.FIRST:
        return f"Keep {case.first.reviewer}'s answer (first review)"
    if choice == AdjudicationChoice.SECOND:
        return f"Keep {case.second.reviewer}'s answer (second review)"
    return "Give a corrected answer"


def answer_rows(classification: Any) -> list[dict[str, Any]]:
    """One row per segment: pages, type and the types present with their shares (no reasoning, no JSON)."""
    segments = classification.get("segments") if isinstance(classification, dict) else None
    rows = []
    for seg in segments if isinstance(segments, list) else []:
        if not isinstance(seg, dict):
            continue
        shares = {
            e.get("document_type"): e.get("share")
            for e in seg.get("types") or []
            if isinstance(e, dict) and isinstance(e.get("share"), int | float)
        }
        present = [f"{name} {float(shares.get(name) or 0):.0%}" for name in types_present(seg)]
        rows.append(
            {
                "Pages": f"{seg.get('start_page')}–{seg.get('end_page')}",
                "Type": seg.get("dominant_type"),
                "Types present": ", ".join(present) or "none",
            }
        )
    return rows


@dataclass(frozen=True)
class Side:
    """One answer as the page shows it."""

    title: str
    dominant_type: str
    rows: list[dict[str, Any]]
    note: str


def sides(case: AdjudicationCase) -> tuple[Side, Side]:
    """The first and the second answer, each with who gave it, when, and their notes."""

    def side(label: str, answer: Any) -> Side:
        verdict = "agreed with the machine" if answer.agrees_with_primary else "corrected the machine"
        when = answer.submitted_at.strftime("%Y-%m-%d %H:%M UTC")
        notes = f" Notes: {answer.review_notes}" if answer.review_notes.strip() else ""
        return Side(
            title=f"{label}: {answer.reviewer}",
            dominant_type=str(answer.classification.get("dominant_type")),
            rows=answer_rows(answer.classification),
            note=f"{answer.reviewer} {verdict} ({when}, confidence {answer.confidence:.0%}).{notes}",
        )

    return side("First review", case.first), side("Second review", case.second)


def case_of(packet: SMEPacket) -> AdjudicationCase:
    if packet.adjudication is None:
        raise ValueError(f"{packet.packet_id} is not an adjudication packet")
    return packet.adjudication


def adjudicate(
    desk: Desk,
    packet: SMEPacket,
    choice: AdjudicationChoice,
    bundle: DocumentBundle,
    profile: Profile,
    *,
    draft: CorrectionDraft | None = None,
    notes: str = "",
    confidence: float = 0.9,
    started_at: datetime,
    token: str,
) -> Outcome:
    """Save the adjudicator's decision: one of the two answers as given, or the corrected one (checked by
    the same V1/V2 rules as any correction)."""
    case = case_of(packet)
    if choice == AdjudicationChoice.CORRECTED:
        if draft is None:
            raise ValueError("a corrected answer needs the edited segment table")
        checked = check_correction(draft, case.first.classification, bundle, profile)
        if not checked.ok:
            return Outcome(
                False, "The correction has problems to fix before it can be saved.", problems=checked.problems
            )
        corrections, agrees = corrections_of(checked, draft), False
    else:
        kept = case.first if choice == AdjudicationChoice.FIRST else case.second
        checked = Checked(kept.classification, ())
        corrections, agrees = None, kept.agrees_with_primary
    review = SMEReview(
        reviewer=desk.reviewer,
        agrees_with_primary=agrees,
        review_notes=notes,
        confidence=confidence,
        corrections=corrections,
        started_at=started_at,
        submitted_at=datetime.now(UTC),
        adjudication=choice,
    )
    return desk.submit(packet, review, checked, token)
