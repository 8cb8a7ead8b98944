"""The seeded data the queue, export and metrics benchmarks run on is data Arbiter really writes: the default
profile's document types, issue codes from verifiers/codes.py, the profile's rules and real stop reasons."""

from __future__ import annotations

import sqlalchemy as sa
from store_fixtures import pg_server_url_fixture, store_fixture  # noqa: F401  (fixtures)

from arbiter.contracts import GroundTruthRecord, StopReason, VerificationOutcome
from arbiter.contracts.profile import load_profile
from arbiter.store import Store
from arbiter.store.models import outcomes
from arbiter.verifiers.codes import CODES
from testing.seeding import seed_packets
from testing.seeding_metrics import seed_metrics

PROFILE = load_profile()
RULES = {rule.name for rule in PROFILE.arbiter.rules}
STOPS = {s.value for s in StopReason}


def test_seeded_packets_speak_arbiter(store: Store) -> None:
    """Seeded packets carry catalogue codes with their severities, taxonomy types and real escalation reasons."""
    ids = seed_packets(store, 200)
    options = store.queue.filter_options()
    assert set(options["codes"]) <= set(CODES)
    assert set(options["doc_types"]) <= set(PROFILE.taxonomy.document_types)
    assert set(options["reasons"]) <= RULES | STOPS | {"pdf_encrypted"}
    for packet_id in ids[:50]:
        packet = store.queue.get(packet_id)
        assert all(i.severity == CODES[i.code].severity for i in packet.issues_summary)
        assert packet.policy_version == PROFILE.arbiter.policy_version


def test_seeded_metrics_data_are_valid_contracts_on_the_profile(store: Store) -> None:
    """Every seeded outcome validates, names only the profile's rules and real stop reasons, and every
    ground-truth version validates with types from the taxonomy."""
    seed_metrics(store, 60)
    with store.read() as conn:
        stored = [
            VerificationOutcome.model_validate(o)
            for o in conn.execute(sa.select(outcomes.c.outcome)).scalars()
        ]
    assert stored
    for outcome in stored:
        assert {a.decision.rule for a in outcome.attempts} <= RULES
        assert outcome.stop_reason.value in STOPS
        assert outcome.escalation_reason is None or outcome.escalation_reason in RULES | STOPS
        assert {i.code for i in outcome.final_issues} <= set(CODES)
    types = set(PROFILE.taxonomy.document_types)
    for record in store.ground_truth.every_version():
        GroundTruthRecord.model_validate(record.model_dump(mode="json"))
        assert record.ground_truth_classification["dominant_type"] in types
        assert set(record.verification_summary.issue_codes) <= set(CODES)
