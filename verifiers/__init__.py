"""V1–V4: independent checks of a classification against its document (docs/design.md §5)."""

from __future__ import annotations

from verifiers.base import Verifier


def default_verifiers() -> list[Verifier]:
    """V1 schema, V2 consistency, V3 traps, V4 evidence — the set every document is verified with."""
    from verifiers.v1_schema import V1Schema
    from verifiers.v2_consistency import V2Consistency
    from verifiers.v3_traps import V3Traps
    from verifiers.v4_evidence import V4Evidence

    return [V1Schema(), V2Consistency(), V3Traps(), V4Evidence()]


__all__ = ["Verifier", "default_verifiers"]
