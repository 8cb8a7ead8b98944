"""The arbiter's own figures: decision mix, escalation reasons, retry success, the false-accept rate from
blind audits, and issue precision against SME outcomes (per code and per verifier)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from arbiter.contracts import SemanticChecks
from arbiter.contracts.profile import MetricsPolicy
from arbiter.metrics.result import Audit, CodePrecision, DecisionMix, Precision, Retry, Share
from arbiter.metrics.rows import DocRun, PacketKind, Reviewed
from arbiter.metrics.stats import clean_audits_needed, rate

ACCEPTED_FIRST = "accepted first time"
ACCEPTED_FIXED = "accepted after fixes"
ESCALATED = "escalated to an SME"
UNREADABLE = "could not be verified"
DECISION_ORDER = (ACCEPTED_FIRST, ACCEPTED_FIXED, ESCALATED, UNREADABLE)
ACCEPT, RETRY, ESCALATE = "AUTO_ACCEPT", "AUTO_RETRY", "ESCALATE_TO_SME"
_VERIFIER = re.compile(r"^(V\d+)")


def decision_label(doc: DocRun) -> str:
    if doc.error:
        return UNREADABLE
    if doc.decision == ACCEPT:
        return ACCEPTED_FIXED if doc.reattempted else ACCEPTED_FIRST
    if doc.decision == ESCALATE:
        return ESCALATED
    return doc.decision


def shares(counts: Counter[str], n: int, order: Iterable[str] = ()) -> list[Share]:
    """Each label's count as a share of n: labels in `order` first (when seen), then by count."""
    first = [label for label in order if counts.get(label)]
    rest = sorted((label for label in counts if label not in first), key=lambda x: (-counts[x], x))
    return [Share(label=label, rate=rate(counts[label], n)) for label in first + rest]


def decision_mix(docs: Iterable[DocRun]) -> DecisionMix:
    """Decisions as shares of all documents; escalation reasons as shares of the escalated ones (input
    failures included: they are escalated too, with the failure as their reason)."""
    decisions: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    n = 0
    for doc in docs:
        n += doc.count
        label = decision_label(doc)
        decisions[label] += doc.count
        if label in (ESCALATED, UNREADABLE):
            reasons[doc.reason or doc.error or "unknown"] += doc.count
    escalated = decisions[ESCALATED] + decisions[UNREADABLE]
    return DecisionMix(
        docs=n, decisions=shares(decisions, n, DECISION_ORDER), escalation_reasons=shares(reasons, escalated)
    )


def retried(doc: DocRun) -> bool:
    """The arbiter asked for an auto-fix: the first attempt's decision was AUTO_RETRY, or there was a
    second attempt."""
    return doc.first_decision == RETRY or doc.reattempted


def retry_stats(docs: Iterable[DocRun]) -> Retry:
    """Of the documents sent to auto-fix, the share that ended accepted; why the rest stopped."""
    n = k = 0
    stops: Counter[str] = Counter()
    for doc in docs:
        if not retried(doc):
            continue
        n += doc.count
        if doc.decision == ACCEPT and not doc.error:
            k += doc.count
        else:
            stops[doc.stop_reason or doc.reason or "unknown"] += doc.count
    return Retry(success=rate(k, n), stop_reasons=shares(stops, n - k))


def audit_stats(
    audits: Iterable[Reviewed], open_audits: int = 0, policy: MetricsPolicy | None = None
) -> Audit:
    """False accept: a reviewed blind audit whose SME did not agree with the accepted classification.
    Dominant wrong (stricter): the SME's dominant type differs from the accepted one; audits where either
    label is unknown are left out of that rate. The false-accept rate is also split by how the audited
    accept was earned (rules only, or rules and a model)."""
    n = corrected = strict_n = strict_k = 0
    split = {checks.value: [0, 0] for checks in SemanticChecks}  # how the accept was earned → [k, n]
    for review in audits:
        if review.kind != PacketKind.AUDIT:
            continue
        n += 1
        corrected += not review.agrees
        if review.label is not None and review.accepted_label is not None:
            strict_n += 1
            strict_k += review.label != review.accepted_label
        if review.semantic_checks in split:
            split[review.semantic_checks][0] += not review.agrees
            split[review.semantic_checks][1] += 1
    policy = policy or MetricsPolicy()
    return Audit(
        false_accept=rate(corrected, n),
        dominant_wrong=rate(strict_k, strict_n),
        open=open_audits,
        false_accept_by_semantic_checks={key: rate(bad, seen) for key, (bad, seen) in split.items()},
        min_audits=policy.min_audits_for_rate,
        target=policy.target_false_accept_rate,
        clean_audits_needed=clean_audits_needed(corrected, n, policy.target_false_accept_rate),
        too_few=0 < n < policy.min_audits_for_rate,
    )


def verifier_of(code: str) -> str:
    """The verifier a code belongs to: its V<n> prefix (`V3.PROMPT_INJECTION` → V3), else the part before
    the first dot."""
    match = _VERIFIER.match(code)
    return match.group(1) if match else code.split(".", 1)[0]


def precision(reviews: Iterable[Reviewed]) -> Precision:
    """Over reviewed escalation packets (first review): a code on a packet is a true positive when the SME
    corrected the classification, a false positive when the SME validated it unchanged. Per verifier,
    each (packet, verifier) pair counts once however many of its codes the packet carries."""
    escalations = corrected = 0
    by_code: dict[str, list[int]] = {}
    by_verifier: dict[str, list[int]] = {}
    for review in reviews:
        if review.kind != PacketKind.ESCALATION:
            continue
        hit = int(not review.agrees)
        escalations += 1
        corrected += hit
        for code in set(review.codes):
            tally = by_code.setdefault(code, [0, 0])
            tally[0] += hit
            tally[1] += 1
        for verifier in {verifier_of(c) for c in review.codes}:
            tally = by_verifier.setdefault(verifier, [0, 0])
            tally[0] += hit
            tally[1] += 1
    return Precision(
        escalations=rate(corrected, escalations),
        by_verifier=[
            CodePrecision(code=v, verifier=v, precision=rate(k, n))
            for v, (k, n) in sorted(by_verifier.items())
        ],
        by_code=[
            CodePrecision(code=c, verifier=verifier_of(c), precision=rate(k, n))
            for c, (k, n) in sorted(by_code.items(), key=lambda item: (-item[1][1], item[0]))
        ],
    )
