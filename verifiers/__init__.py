"""V1–V4: independent checks of a classification against its document (docs/design.md §5)."""

from __future__ import annotations

from arbiter.verifiers.base import Verifier


def default_verifiers() -> list[Verifier]:
    """V1 schema, V2 consistency, V3 traps, V4 evidence — the set every document is verified with."""
    from arbiter.verifiers.v1_schema import V1Schema
    from arbiter.verifiers.v2_consistency import V2Consistency
    from arbiter.verifiers.v3_traps import V3Traps
    from arbiter.verifiers.v4_evidence import V4Evidence

    return [V1Schema(), V2Consistency(), V3Traps(), V4Evidence()]


__all__ = ["Verifier", "default_verifiers"]
