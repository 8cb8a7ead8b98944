"""A reviewer's actions on the queue — claim, keep the lease alive, agree, correct, skip — over the store.

Each action returns an Outcome the page shows as is; store errors become plain messages here, so a
page never needs a try block. A submit whose claim was lost writes nothing: the caller keeps the draft.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from arbiter.contracts import DocumentBundle, GroundTruthRecord, ReviewStatus, SMEPacket, SMEReview
from arbiter.contracts.answers import StatementVerdict
from arbiter.contracts.profile import Profile
from arbiter.review.forms import (
    Checked,
    CorrectionDraft,
    Problem,
    check_agreement,
    check_correction,
    corrections_of,
)
from arbiter.store import (
    ClaimLost,
    DatabaseUnavailable,
    KindNotAllowed,
    NotIndependent,
    PermissionDenied,
    Store,
    StoreError,
    TooManyClaims,
    UnknownPacket,
    UnknownUser,
)

DATABASE_AWAY = (
    "The database is not answering right now (it may be restarting). Nothing was changed; try again in a "
    "moment."
)
NOT_REVIEWABLE = (
    "This document could not be read (empty, locked, not a PDF or damaged), so nobody can review it here; it "
    "waits in the operations lane, where an admin retries it or closes it."
)
OPERATIONS_LANE = (ReviewStatus.OPERATIONS.value, ReviewStatus.DISMISSED.value)
SUBMIT_WAITING = (
    "The database is not answering right now, so your review is not saved yet. Your draft is kept and the "
    "packet stays yours: press the button again in a moment to save it."
)
AGREE_REFUSED = (
    "This classification breaks the rules, so it cannot be saved as it is. Correct it: the problems are "
    "listed in the correction editor."
)


@dataclass(frozen=True)
class Outcome:
    ok: bool
    message: str
    packet: SMEPacket | None = None
    record: GroundTruthRecord | None = None
    problems: tuple[Problem, ...] = field(default_factory=tuple)
    claim_lost: bool = False
    needs_correction: bool = False  # agreeing was refused: the answer breaks the rules; correct it instead

    @property
    def blocking(self) -> list[Problem]:
        return [p for p in self.problems if p.blocking]


def kinds_text(kinds: tuple[str, ...] | list[str]) -> str:
    """Kinds of answer in words: "medical classifications and grounded answers"."""
    return " and ".join(k.replace("-", " ") + "s" for k in kinds)


def submission_key(packet_id: str, reviewer: str, token: str) -> str:
    """Idempotency key of one review attempt: a double click or a retried request saves once."""
    return hashlib.sha256(f"{packet_id}|{reviewer}|{token}".encode()).hexdigest()[:40]


def machine_answer(packet: SMEPacket) -> dict[str, Any] | None:
    """What the reviewer is asked to judge: the classification after automatic fixes, else the primary's."""
    return packet.final_classification or packet.primary_agent_classification


def utc_now() -> datetime:
    """The desk's clock; claims, renewals and submits are stamped with it (tests swap it for a fake)."""
    return datetime.now(UTC)


def _clock() -> Callable[[], datetime]:
    return utc_now  # looked up when a desk is made, so a swapped clock reaches the next page run


@dataclass
class Desk:
    store: Store
    reviewer: str
    lease: timedelta = timedelta(minutes=30)
    clock: Callable[[], datetime] = field(default_factory=_clock)

    def claim_next(self) -> Outcome:
        try:
            packet = self.store.queue.claim_next(self.reviewer, lease=self.lease, now=self.clock())
        except DatabaseUnavailable:
            return Outcome(False, DATABASE_AWAY)
        if packet is None:
            kinds = self.store.users.kinds(self.reviewer)
            if kinds:
                return Outcome(False, f"No packet of the kinds you review ({kinds_text(kinds)}) is waiting.")
            return Outcome(False, "The queue is empty: no packet is waiting for review.")
        return Outcome(True, f"You claimed {packet.doc_id}.", packet=packet)

    def claim(self, packet_id: str) -> Outcome:
        try:
            packet = self.store.queue.claim(packet_id, self.reviewer, lease=self.lease, now=self.clock())
        except (UnknownPacket, TooManyClaims, NotIndependent, KindNotAllowed) as exc:
            return Outcome(False, str(exc))
        except DatabaseUnavailable:
            return Outcome(False, DATABASE_AWAY)
        if packet is None and self.store.queue.status(packet_id) in OPERATIONS_LANE:
            return Outcome(False, NOT_REVIEWABLE)
        if packet is None:
            return Outcome(
                False,
                "Someone else is reviewing this packet, it is already done, or it is a blind second review "
                "or an adjudication of a document you reviewed (it needs another reviewer).",
            )
        return Outcome(True, f"You claimed {packet.doc_id}.", packet=packet)

    def my_claims(self) -> list[Any]:
        return self.store.queue.page(status=ReviewStatus.IN_REVIEW, claimed_by=self.reviewer, limit=20)

    def keep_alive(self, packet_id: str) -> bool:
        """Renew the lease while the reviewer works (called on every rerun of the packet page); with the
        database away the claim is assumed to stand (the submit checks it for real)."""
        try:
            return self.store.queue.renew(packet_id, self.reviewer, lease=self.lease, now=self.clock())
        except DatabaseUnavailable:
            return True

    def release(self, packet_id: str) -> Outcome:
        if self.store.queue.release(packet_id, self.reviewer, now=self.clock()):
            return Outcome(True, "The packet went back to the queue.")
        return Outcome(False, "This packet was no longer yours; nothing changed.")

    def agree(
        self,
        packet: SMEPacket,
        bundle: DocumentBundle,
        profile: Profile,
        *,
        notes: str,
        confidence: float,
        reason_codes: list[str],
        started_at: datetime,
        token: str,
    ) -> Outcome:
        # Checked here, on the submit path, whatever the page's buttons allowed (docs/design.md §8.3).
        checked = check_agreement(machine_answer(packet), bundle, profile)
        if not checked.ok:
            return Outcome(False, AGREE_REFUSED, problems=checked.problems, needs_correction=True)
        review = SMEReview(
            reviewer=self.reviewer,
            agrees_with_primary=True,
            review_notes=notes,
            confidence=confidence,
            reason_codes=reason_codes,
            started_at=started_at,
            submitted_at=self.clock(),
        )
        return self._submit(packet, review, checked, token)

    def correct(
        self,
        packet: SMEPacket,
        bundle: DocumentBundle,
        profile: Profile,
        draft: CorrectionDraft,
        *,
        started_at: datetime,
        token: str,
    ) -> Outcome:
        checked = check_correction(draft, machine_answer(packet), bundle, profile)
        if not checked.ok:
            return Outcome(
                False, "The correction has problems to fix before it can be saved.", problems=checked.problems
            )
        review = SMEReview(
            reviewer=self.reviewer,
            agrees_with_primary=False,
            review_notes=draft.notes,
            confidence=draft.confidence,
            corrections=corrections_of(checked, draft),
            reason_codes=list(draft.reason_codes),
            started_at=started_at,
            submitted_at=self.clock(),
        )
        return self._submit(packet, review, checked, token)

    def submit(
        self,
        packet: SMEPacket,
        review: SMEReview,
        checked: Checked,
        token: str,
        statement_verdicts: list[StatementVerdict] | None = None,
    ) -> Outcome:
        """Save a review whose answer was already checked (the adjudication's decision and the answer desk's
        reviews come this way; `statement_verdicts` for a grounded answer)."""
        return self._submit(packet, review, checked, token, statement_verdicts)

    def _submit(
        self,
        packet: SMEPacket,
        review: SMEReview,
        checked: Checked,
        token: str,
        statement_verdicts: list[StatementVerdict] | None = None,
    ) -> Outcome:
        assert checked.classification is not None
        try:
            record = self.store.reviews.submit(
                packet.packet_id,
                self.reviewer,
                review,
                checked.classification,
                idempotency_key=submission_key(packet.packet_id, self.reviewer, token),
                now=self.clock(),
                statement_verdicts=statement_verdicts,
            )
        except ClaimLost as exc:
            return Outcome(False, str(exc), claim_lost=True, problems=checked.problems)
        except DatabaseUnavailable:
            # Nothing was saved (or, if the answer was lost, the same key saves nothing twice): the page keeps
            # the draft and the attempt's token, so pressing the button again finishes the submit.
            return Outcome(False, SUBMIT_WAITING, problems=checked.problems)
        except (UnknownPacket, ValueError) as exc:
            return Outcome(False, str(exc), problems=checked.problems)
        saved = f"Saved: {packet.doc_id} ground truth version {record.version} ({record.ground_truth_source.value})."
        # The store stamps the claim's times on the review (time per packet on the server's clock).
        written = record.sme_review and record.sme_review.model_copy(
            update={"started_at": review.started_at, "submitted_at": review.submitted_at}
        )
        if packet.blind or written != review:
            # The version in force may be another review's (a blind packet, or a disagreement now waiting for
            # adjudication): say nothing of it.
            saved = f"Saved your review of {packet.doc_id}."
        return Outcome(
            True,
            saved,
            packet=packet,
            record=record,
            problems=checked.problems,
        )


@dataclass
class AdminDesk:
    store: Store
    admin: str
    lease: timedelta = timedelta(minutes=30)
    clock: Callable[[], datetime] = field(default_factory=_clock)

    def release(self, packet_id: str) -> Outcome:
        try:
            done = self.store.queue.admin_release(packet_id, self.admin, now=self.clock())
        except (PermissionDenied, UnknownPacket) as exc:
            return Outcome(False, str(exc))
        return Outcome(done, "Released to the queue." if done else "That packet was not claimed.")

    def reassign(self, packet_id: str, to_user: str) -> Outcome:
        try:
            packet = self.store.queue.reassign(
                packet_id, to_user, self.admin, lease=self.lease, now=self.clock()
            )
        except (PermissionDenied, UnknownPacket, UnknownUser, ValueError, StoreError) as exc:
            return Outcome(False, str(exc))
        return Outcome(True, f"{packet.doc_id} is now claimed by {to_user}.", packet=packet)

    def set_kinds(self, name: str, kinds: list[str]) -> Outcome:
        """Restrict `name` to these kinds of answer (none: every kind); audited by the store."""
        try:
            now = self.store.users.set_kinds(name, kinds, actor=self.admin)
        except (ValueError, StoreError) as exc:
            return Outcome(False, str(exc))
        if not now:
            return Outcome(True, f"{name} reviews every kind of answer.")
        return Outcome(True, f"{name} reviews {kinds_text(now)} only.")
