"""The trust demo's reviewers: each blind audit the runs queued is claimed and answered through the review
desk (arbiter/review/desk.py: the claim, the checks and the submit the review app makes) by demo reviewer
accounts that answer with the generator's known truth — Agree when the accepted answer is the truth, else a
correction to it. These are simulated reviews, not a person's; the output says so."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arbiter.contracts import PacketKind, ReviewStatus
from arbiter.contracts.profile import Profile
from arbiter.record.packets import BLIND_REASON
from arbiter.review import documents
from arbiter.review.desk import Desk, Outcome, machine_answer
from arbiter.review.forms import CorrectionDraft, segment_rows
from arbiter.review.quick import evidence_pool
from arbiter.store import Store

REVIEWERS = ("demo-reviewer-1", "demo-reviewer-2")
NOTES = "Simulated review: answered with the demo generator's known truth."


@dataclass
class Played:
    """What the simulated reviewers did."""

    agreed: int = 0
    corrected: int = 0
    by_reviewer: Counter[str] = field(default_factory=Counter)

    @property
    def reviewed(self) -> int:
        return self.agreed + self.corrected


def add_reviewers(store: Store) -> None:
    """The demo reviewer accounts (no password: they cannot sign in; only this simulation uses them)."""
    for name in REVIEWERS:
        if store.users.get(name) is None:
            store.users.add(name, "reviewer", None, actor="arbiter demo --trust")


def same_answer(answer: Any, truth: dict[str, Any], profile: Profile) -> bool:
    """What a reviewer judges: the segments' pages, dominant types and type shares, and the document's
    dominant type (confidences are the producer's own and are not judged)."""
    return (
        isinstance(answer, dict)
        and segment_rows(answer, profile) == segment_rows(truth, profile)
        and answer.get("dominant_type") == truth["dominant_type"]
    )


def reasons(answer: Any, truth: dict[str, Any], profile: Profile) -> list[str]:
    """The correction's reason: the boundaries when the pages differ, the type when a dominant type does,
    else the shares."""
    mine, right = segment_rows(answer, profile), segment_rows(truth, profile)
    pages = [(r["start_page"], r["end_page"]) for r in mine]
    if pages != [(r["start_page"], r["end_page"]) for r in right]:
        return ["WRONG_SEGMENT_BOUNDARIES"]
    if [r["dominant_type"] for r in mine] != [r["dominant_type"] for r in right]:
        return ["WRONG_DOCUMENT_TYPE"]
    return ["WRONG_SHARES"]


def audit_packets(store: Store) -> list[str]:
    """Every pending blind audit, in queue order."""
    found, seen = [], 0
    while True:
        page = store.queue.page(
            status=ReviewStatus.PENDING.value, reason=BLIND_REASON, offset=seen, limit=500
        )
        found += [p.packet_id for p in page if p.kind == PacketKind.AUDIT.value]
        seen += len(page)
        if len(page) < 500:
            return found


def play_audits(
    store: Store,
    truths: Mapping[str, dict[str, Any]],
    profile: Profile,
    roots: Sequence[Path],
    reviewers: Sequence[str] = REVIEWERS,
) -> Played:
    """Claim and answer every pending audit, the reviewers taking turns; a refused claim or review is a bug
    of the demo and stops it with the desk's message."""
    played = Played()
    for turn, packet_id in enumerate(audit_packets(store)):
        reviewer = reviewers[turn % len(reviewers)]
        desk = Desk(store, reviewer)
        claimed = desk.claim(packet_id)
        if not claimed.ok or claimed.packet is None:
            raise RuntimeError(f"{reviewer} could not claim {packet_id}: {claimed.message}")
        packet = claimed.packet
        bundle = documents.bundle_of(packet, roots)
        if bundle is None:
            raise RuntimeError(f"No bundle or PDF for {packet.doc_id} under {', '.join(map(str, roots))}.")
        answer, truth = machine_answer(packet), truths[packet.doc_id]
        started = datetime.now(UTC)
        token = f"arbiter-demo-trust:{packet_id}"
        outcome: Outcome
        if same_answer(answer, truth, profile):
            outcome = desk.agree(
                packet,
                bundle,
                profile,
                notes=NOTES,
                confidence=1.0,
                reason_codes=[],
                started_at=started,
                token=token,
            )
            played.agreed += outcome.ok
        else:
            draft = CorrectionDraft(
                segments=segment_rows(truth, profile),
                evidence=evidence_pool(truth),
                reason_codes=reasons(answer, truth, profile),
                notes=NOTES,
                confidence=1.0,
            )
            outcome = desk.correct(packet, bundle, profile, draft, started_at=started, token=token)
            played.corrected += outcome.ok
        if not outcome.ok:
            problems = "; ".join(p.message for p in outcome.blocking)
            raise RuntimeError(
                f"{reviewer}'s review of {packet.doc_id} was refused: {outcome.message} {problems}"
            )
        played.by_reviewer[reviewer] += 1
    return played
