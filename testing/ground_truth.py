"""Synthetic ground truth inserted in bulk for the export and metrics benchmarks and tests: valid
GroundTruthRecords over the default profile's taxonomy, with SME reviews, corrections and later versions."""

from __future__ import annotations

import hashlib
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from arbiter.store import Store
from arbiter.store.models import ground_truth
from testing.vocabulary import ACCEPT_RULES, DOC_TYPES, ESCALATIONS, POLICY_VERSION, Escalation

_CHUNK = 2_000
_MINOR_CODE = "V4.ANCHOR_NOT_FOUND"  # what a minor_only accept tolerates

GT_TYPES = DOC_TYPES
# Two policy versions (the profile's, and one before it), so reports by policy version have two rows.
POLICY_VERSIONS = (POLICY_VERSION + "-previous", POLICY_VERSION)
REVIEWERS = tuple(f"sme{i:02d}" for i in range(1, 13))
_SNIPPETS = {
    "GENOMIC_REPORT": ("Comprehensive genomic profiling identified a KRAS G12C alteration", "KRAS G12C"),
    "LAB_REPORT": ("Hemoglobin 11.2 g/dL (reference 12.0-15.5)", "Hemoglobin"),
    "PATHOLOGY_REPORT": ("Invasive ductal carcinoma, grade 2, margins negative", "Invasive ductal"),
    "CLINICAL_NOTE": ("Patient seen in follow-up; tolerating therapy well", "follow-up"),
    "ADMINISTRATIVE": ("FACSIMILE TRANSMITTAL - please deliver to oncology", "FACSIMILE"),
}
assert set(_SNIPPETS) == set(GT_TYPES), "a snippet for every type of the default taxonomy"
_AUTO, _VALIDATED, _CORRECTED = "PRIMARY_AGENT_AUTO_ACCEPT", "SME_VALIDATED", "SME_CORRECTED"
_ADJUDICATED = "SME_ADJUDICATED"


def _segment(index: int, start: int, end: int, dominant: str, second: str | None, rng: random.Random) -> Any:
    share = 1.0 if second is None else round(rng.uniform(0.55, 0.9), 2)
    types = []
    for t in GT_TYPES:
        s = share if t == dominant else (round(1.0 - share, 2) if t == second else 0.0)
        level = "PRIMARY" if t == dominant else ("SECONDARY" if t == second else "NO_EVIDENCE")
        page = rng.randint(start, end)
        evidence = [] if s == 0.0 else [{"page": page, "snippet": _SNIPPETS[t][0], "anchor": _SNIPPETS[t][1]}]
        conf = round(rng.uniform(0.7, 0.99), 2)
        types.append(
            {
                "document_type": t,
                "presence_level": level,
                "share": s,
                "confidence": conf,
                "evidence": evidence,
            }
        )
    return {
        "segment_index": index,
        "start_page": start,
        "end_page": end,
        "segment_page_count": end - start + 1,
        "dominant_type": dominant,
        "classification_reasoning": f"Pages {start}-{end} read as {dominant.lower().replace('_', ' ')}.",
        "types": types,
    }


def _finish(doc_id: str, segments: list[dict[str, Any]], pages: int) -> dict[str, Any]:
    """The classification around `segments`: page-weighted mixture and its arg-max as the dominant type."""
    weights = dict.fromkeys(GT_TYPES, 0.0)
    for seg in segments:
        for t in seg["types"]:
            weights[t["document_type"]] += t["share"] * seg["segment_page_count"] / pages
    mixture = [{"document_type": t, "share": round(w, 4)} for t, w in weights.items()]
    return {
        "doc_id": doc_id,
        "producer": {"name": "gemini-2.5-flash", "version": "2026-01"},
        "number_of_segments": len(segments),
        "dominant_type": max(GT_TYPES, key=lambda t: weights[t]),
        "vendor_signals": ["Foundation Medicine"] if weights["GENOMIC_REPORT"] > 0 else [],
        "segments": segments,
        "document_mixture": mixture,
    }


def synthetic_classification(doc_id: str, rng: random.Random) -> dict[str, Any]:
    """A ClassificationOutput-shaped dict: 1–3 segments over 2–12 pages, evidence for every present type."""
    pages = rng.randint(2, 12)
    count = min(pages, rng.choice((1, 1, 2, 2, 3)))
    cuts = sorted(rng.sample(range(2, pages + 1), count - 1))
    bounds = list(zip([1, *cuts], [c - 1 for c in cuts] + [pages], strict=True))
    segments = []
    for i, (start, end) in enumerate(bounds, 1):
        dominant = rng.choice(GT_TYPES)
        second = rng.choice([t for t in GT_TYPES if t != dominant]) if rng.random() < 0.4 else None
        segments.append(_segment(i, start, end, dominant, second, rng))
    return _finish(doc_id, segments, pages)


def _corrected(primary: dict[str, Any], rng: random.Random) -> tuple[dict[str, Any], str]:
    """What an SME changes (and the reason code): a boundary between the first two segments, or one
    segment's dominant type."""
    segments = [dict(s) for s in primary["segments"]]
    pages = segments[-1]["end_page"]
    if len(segments) > 1 and rng.random() < 0.5:
        a, b = segments[0], segments[1]
        if b["end_page"] > b["start_page"]:
            a_end = a["end_page"] + 1
            segments[0] = _segment(1, 1, a_end, a["dominant_type"], None, rng)
            segments[1] = _segment(2, a_end + 1, b["end_page"], b["dominant_type"], None, rng)
            return _finish(primary["doc_id"], segments, pages), "WRONG_BOUNDARY"
    i = rng.randrange(len(segments))
    seg = segments[i]
    new = rng.choice([t for t in GT_TYPES if t != seg["dominant_type"]])
    segments[i] = _segment(seg["segment_index"], seg["start_page"], seg["end_page"], new, None, rng)
    return _finish(primary["doc_id"], segments, pages), "WRONG_TYPE"


def _gt_payload(
    doc_id: str,
    version: int,
    previous: str | None,
    source: str,
    machine_accepted: bool,
    primary: dict[str, Any],
    created: datetime,
    run_id: str,
    rng: random.Random,
) -> dict[str, Any]:
    sha = hashlib.sha256(doc_id.encode()).hexdigest()
    truth, reason = _corrected(primary, rng) if source == _CORRECTED else (primary, "")
    summary: dict[str, Any]
    if machine_accepted:
        rule = rng.choice(ACCEPT_RULES)
        summary = {
            "final_decision": "AUTO_ACCEPT",
            "rule": rule,
            "attempts": rng.choice((1, 1, 1, 2)),
            "issue_codes": [_MINOR_CODE] if rule == "minor_only" else [],
            "stop_reason": "accepted",
        }
    else:
        story: Escalation = rng.choice(ESCALATIONS)
        attempts = 3 if story.stop == "max_retries" else rng.choice((1, 2))
        summary = {
            "final_decision": "ESCALATE_TO_SME",
            "rule": story.rule,
            "attempts": attempts,
            "issue_codes": sorted(story.codes),
            "stop_reason": story.stop.value,
        }
    review = None
    if source != _AUTO:
        started = created - timedelta(seconds=rng.randint(40, 900))
        corrections = None
        if source == _CORRECTED:
            corrections = {
                "corrected_dominant_type": truth["dominant_type"],
                "corrected_segments": truth["segments"],
                "corrected_document_mixture": truth["document_mixture"],
                "correction_notes": "",
            }
        review = {
            "reviewer": rng.choice(REVIEWERS),
            "agrees_with_primary": source == _VALIDATED,
            "review_notes": "",
            "confidence": round(rng.uniform(0.6, 1.0), 2),
            "corrections": corrections,
            "reason_codes": [reason] if reason else [],
            "started_at": started.isoformat().replace("+00:00", "Z"),
            "submitted_at": created.isoformat().replace("+00:00", "Z"),
        }
    production = None
    if rng.random() < 0.6:
        agree = rng.random() < 0.8
        dominant = truth["dominant_type"] if agree else rng.choice(GT_TYPES)
        production = {"doc_id": doc_id, "dominant_type": dominant}
    return {
        "gt_id": _gt_id(doc_id, version, sha),
        "doc_id": doc_id,
        "version": version,
        "supersedes": previous,
        "ground_truth_source": source,
        "ground_truth_classification": truth,
        "primary_agent_classification": primary,
        "production_classification": production,
        "verification_summary": summary,
        "sme_review": review,
        "policy_version": POLICY_VERSIONS[0 if created.month < 2 else 1],
        "pdf_sha256": sha,
        "created_at": created.isoformat().replace("+00:00", "Z"),
        "run_id": run_id,
    }


def _gt_id(doc_id: str, version: int, sha: str) -> str:
    """The id next_version gives (arbiter.store.versions)."""
    return "gt-" + hashlib.sha256(f"{doc_id}|{version}|{sha}".encode()).hexdigest()[:16]


def _versions(doc_id: str, rng: random.Random, t0: datetime, revised: float, run_id: str) -> list[Any]:
    """A document's ground-truth history: version 1, then (share `revised`) one or two later reviews."""
    primary = synthetic_classification(doc_id, rng)
    roll = rng.random()
    source = _AUTO if roll < 0.7 else (_VALIDATED if roll < 0.88 else _CORRECTED)
    machine_accepted = source == _AUTO
    created = t0 + timedelta(seconds=rng.randrange(0, 60 * 86_400))
    history = [(source, created)]
    if rng.random() < revised:
        for _ in range(rng.choice((1, 1, 2))):
            created = created + timedelta(seconds=rng.randrange(3_600, 20 * 86_400))
            later = rng.random()  # one draw: a few of the agreeing revisions are adjudicated decisions
            history.append(
                (_CORRECTED if later < 0.6 else (_ADJUDICATED if later >= 0.95 else _VALIDATED), created)
            )
    rows, previous = [], None
    for version, (src, at) in enumerate(history, 1):
        payload = _gt_payload(doc_id, version, previous, src, machine_accepted, primary, at, run_id, rng)
        rows.append(
            {
                "gt_id": payload["gt_id"],
                "doc_id": doc_id,
                "version": version,
                "supersedes": previous,
                "source": src,
                "created_at": at,
                "payload": payload,
            }
        )
        previous = payload["gt_id"]
    return rows


def seed_ground_truth(
    store: Store,
    n: int,
    *,
    prefix: str = "gt",
    seed: int = 0,
    start: datetime | None = None,
    run_id: str = "synthetic",
    revised: float = 0.15,
) -> list[str]:
    """Insert ground truth for n documents in bulk; returns their doc_ids (sorted, `{prefix}-doc-0000000`).

    Every payload is a valid GroundTruthRecord whose classifications are valid ClassificationOutputs
    (1–3 segments, all five default types, evidence for present types). Version 1 is 70 %
    PRIMARY_AGENT_AUTO_ACCEPT, 18 % SME_VALIDATED, 12 % SME_CORRECTED (an SME's change of one segment's
    type or of a boundary, so the primary and the truth differ); a share `revised` of the documents get
    one or two later SME versions (superseding, days later). SME versions carry an sme_review; 60 % carry
    a production classification that agrees with the truth 80 % of the time. Created times spread over
    60 days from `start` (default 2026-01-01 UTC); deterministic for a given seed.
    """
    rng = random.Random(seed)
    t0 = start or datetime(2026, 1, 1, tzinfo=UTC)
    ids: list[str] = []
    rows: list[dict[str, Any]] = []
    for i in range(n):
        doc_id = f"{prefix}-doc-{i:07d}"
        ids.append(doc_id)
        rows.extend(_versions(doc_id, rng, t0, revised, run_id))
        if len(rows) >= _CHUNK or i == n - 1:
            with store.write() as conn:
                conn.execute(sa.insert(ground_truth), rows)
            rows = []
    if store.dialect == "postgresql" and n:
        with store.engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql("ANALYZE ground_truth")
    return ids
