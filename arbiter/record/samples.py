"""Which blind samples a decided document enters (docs/design.md §9.1): an audit of an accept, drawn with
the accept's recorded inclusion probability, or a second review of an escalation."""

from __future__ import annotations

from typing import Any

from arbiter.contracts import PacketKind, ProductionClassification, SMEPacket, VerificationOutcome
from arbiter.contracts.sampling_profile import Sampling
from arbiter.record.packets import build_blind_packet, draw_point, production_differs
from arbiter.record.risk import AuditDraw, audit_draw


def blind_samples(
    outcome: VerificationOutcome,
    packet: SMEPacket | None,
    sampling: Sampling,
    *,
    pdf_path: str,
    pdf_sha256: str,
    bundle_path: str | None,
    total_pages: int,
    primary: dict[str, Any] | None,
    production: ProductionClassification | None,
    run_id: str,
    boost: float = 1.0,
) -> tuple[tuple[SMEPacket, ...], AuditDraw | None]:
    """The blind packets of this document and, for an accept, its audit draw (risk and inclusion
    probability, stored with the decision whether or not it was sampled). `boost` multiplies an accept's
    inclusion probability (at most 1) while a drift alarm stands on its producer (record/drift.py)."""
    draw = None
    if packet is None:
        draw = audit_draw(
            outcome,
            sampling,
            pages=total_pages,
            production_differs=production_differs(production, primary),
            boost=boost,
        )
        kind, share, pair_of = PacketKind.AUDIT, draw.probability if draw else 0.0, None
    elif outcome.final_classification is not None:
        kind, share, pair_of = PacketKind.SECOND_REVIEW, sampling.second_review_share, packet.packet_id
    else:
        return (), None
    if share <= 0 or draw_point(kind, outcome.doc_id, pdf_sha256, sampling.salt) >= share:
        return (), draw
    blind = build_blind_packet(
        kind,
        outcome,
        pdf_path=pdf_path,
        pdf_sha256=pdf_sha256,
        bundle_path=bundle_path,
        total_pages=total_pages,
        primary=primary,
        run_id=run_id,
        pair_of=pair_of,
    )
    return (blind,), draw
