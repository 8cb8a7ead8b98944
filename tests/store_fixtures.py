"""Shared helpers for the review-store tests: databases on SQLite and PostgreSQL, and document records.

The PostgreSQL database is created per test session (CREATE DATABASE through an autocommit connection
to `postgres`) and dropped at the end; ARBITER_TEST_PG_URL points at the server (default: local trust auth).
"""

from __future__ import annotations

import dataclasses
import os
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from arbiter.contracts import (
    DocumentRecord,
    FinalDecision,
    Issue,
    PacketKind,
    Severity,
    SMEReview,
    StopReason,
    VerificationOutcome,
)
from arbiter.record.ground_truth import auto_accept_record
from arbiter.record.packets import build_blind_packet, build_packet
from arbiter.store import Store

PG_URL = os.environ.get("ARBITER_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
CLASSIFICATION = {"dominant_type": "CLINICAL_NOTE", "segments": [], "document_mixture": []}


def _admin_url(url: str) -> sa.URL:
    return sa.make_url(url).set(database="postgres")


def create_pg_database(url: str = PG_URL, prefix: str = "arbiter_test") -> str:
    """A fresh, uniquely named database on the server `url` points at; returns its URL."""
    name = f"{prefix}_{os.getpid()}_{secrets.token_hex(4)}"
    engine = sa.create_engine(_admin_url(url), isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    engine.dispose()
    return sa.make_url(url).set(database=name).render_as_string(hide_password=False)


def drop_pg_database(url: str) -> None:
    name = sa.make_url(url).database
    engine = sa.create_engine(_admin_url(url), isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    engine.dispose()


TABLES = (
    "runs, documents, outcomes, packets, packet_codes, packet_skips, reviews, ground_truth, users, audit_log, "
    "sessions, app_secrets, drafts"
)


def reset(store: Store) -> None:
    """Migrate, then empty every table. The append-only tables refuse TRUNCATE (migration 0004); the test
    server's superuser switches triggers off for this one transaction (replica role), as an operator could."""
    store.migrate()
    with store.write() as conn:
        conn.exec_driver_sql("SET LOCAL session_replication_role = replica")
        conn.exec_driver_sql(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE")


@pytest.fixture(scope="session", name="pg_server_url")
def pg_server_url_fixture() -> Iterator[str]:
    url = create_pg_database()
    yield url
    drop_pg_database(url)


@pytest.fixture(scope="session", name="pg_app_role_urls")
def pg_app_role_urls_fixture() -> Iterator[tuple[str, str]]:
    """(owner URL, application-role URL) of a database the owner migrated and granted to a DML-only role
    (`arbiter db grant-app-role`), as SECURITY.md tells an operator to run the app and runs."""
    from arbiter.store.roles import grant_app_role

    owner_url = create_pg_database(prefix="arbiter_approle")
    role = f"arbiter_app_{secrets.token_hex(4)}"
    admin = sa.create_engine(_admin_url(owner_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE ROLE "{role}" LOGIN')
    owner = Store(owner_url)
    owner.migrate()
    grant_app_role(owner.db, role)
    owner.dispose()
    try:
        yield owner_url, sa.make_url(owner_url).set(username=role).render_as_string(hide_password=False)
    finally:
        drop_pg_database(owner_url)
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP ROLE IF EXISTS "{role}"')
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql", "postgresql-app-role"], name="store")
def store_fixture(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Store]:
    """A migrated, empty Store on each database; on PostgreSQL also connected as the application role."""
    if request.param == "sqlite":
        s = Store(f"sqlite:///{tmp_path / 'arbiter.db'}")
        s.migrate()
    elif request.param == "postgresql":
        s = Store(request.getfixturevalue("pg_server_url"))
        reset(s)
    else:
        owner_url, app_url = request.getfixturevalue("pg_app_role_urls")
        owner = Store(owner_url)
        reset(owner)  # emptying history is the owner's (and superuser's) act, never the app's
        owner.dispose()
        s = Store(app_url)
    yield s
    s.dispose()


def is_app_role(store: Store) -> bool:
    """The store connects as the DML-only application role (the `store` fixture's third case)."""
    return str(store.db.engine.url.username or "").startswith("arbiter_app_")


def history_refusal(store: Store) -> str:
    """What refuses a rewrite of history: the grants for the application role, the triggers for the owner."""
    return "permission denied" if is_app_role(store) else "append-only"


def issue(code: str = "V2.UNCOVERED_PAGES", severity: Severity = Severity.MAJOR, n: int = 1) -> Issue:
    return Issue(
        issue_id=f"{code.split('.')[0]}-{n:04d}",
        code=code,
        verifier=code.split(".")[0],
        severity=severity,
        message="The segments cover 5 pages; the document has 6.",
    )


def outcome(doc_id: str, *, accept: bool = False, issues: list[Issue] | None = None) -> VerificationOutcome:
    return VerificationOutcome(
        doc_id=doc_id,
        final_decision=FinalDecision.AUTO_ACCEPT if accept else FinalDecision.ESCALATE_TO_SME,
        escalation_reason=None if accept else "non_fixable_major",
        stop_reason=StopReason.ACCEPTED if accept else StopReason.ESCALATED_BY_POLICY,
        policy_version="test-1",
        final_classification=dict(CLASSIFICATION),
        final_issues=issues or [],
    )


def escalated(
    doc_id: str,
    run_id: str = "run-1",
    *,
    severity: Severity = Severity.MAJOR,
    code: str = "V2.UNCOVERED_PAGES",
    created: datetime = T0,
    sha: str = "a" * 64,
) -> DocumentRecord:
    """A DocumentRecord for an escalated document whose packet has the given worst severity and age."""
    out = outcome(doc_id, issues=[issue(code, severity)])
    packet = build_packet(
        out,
        pdf_path=f"/docs/{doc_id}.pdf",
        pdf_sha256=sha,
        bundle_path=None,
        total_pages=6,
        primary=dict(CLASSIFICATION),
        production=None,
        run_id=run_id,
        now=created,
    )
    return DocumentRecord(
        doc_id=doc_id,
        run_id=run_id,
        skip_key=f"key-{run_id}",
        pdf_path=f"/docs/{doc_id}.pdf",
        outcome=out,
        primary_raw=None,
        bundle=None,
        packet=packet,
        ground_truth=None,
    )


def accepted(
    doc_id: str,
    run_id: str = "run-1",
    *,
    store: Store | None = None,
    sha: str = "a" * 64,
    dominant: str = "CLINICAL_NOTE",
) -> DocumentRecord:
    out = outcome(doc_id, accept=True)
    out = out.model_copy(update={"final_classification": {**CLASSIFICATION, "dominant_type": dominant}})
    gt = auto_accept_record(
        out,
        store.ground_truth.latest(doc_id) if store else None,
        primary=out.final_classification,
        production=None,
        pdf_sha256=sha,
        run_id=run_id,
    )
    return DocumentRecord(
        doc_id=doc_id,
        run_id=run_id,
        skip_key=f"key-{run_id}",
        pdf_path=f"/docs/{doc_id}.pdf",
        outcome=out,
        primary_raw=None,
        bundle=None,
        packet=None,
        ground_truth=gt,
    )


def with_sample(record: DocumentRecord, *, created: datetime = T0) -> DocumentRecord:
    """The record with its blind sample: an AUDIT for an accept, a SECOND_REVIEW for an escalation."""
    second = record.packet is not None
    blind = build_blind_packet(
        PacketKind.SECOND_REVIEW if second else PacketKind.AUDIT,
        record.outcome,
        pdf_path=record.pdf_path,
        pdf_sha256=record.packet.pdf_sha256 if record.packet else "a" * 64,
        bundle_path=None,
        total_pages=6,
        primary=dict(CLASSIFICATION),
        run_id=record.run_id,
        pair_of=record.packet.packet_id if record.packet else None,
        now=created,
    )
    return dataclasses.replace(record, samples=(blind,))


def of_kind(record: DocumentRecord, answer_kind: str) -> DocumentRecord:
    """The record with its packet, blind samples and ground truth holding `answer_kind` (arbiter/kinds)."""
    return dataclasses.replace(
        record,
        answer_kind=answer_kind,
        packet=record.packet.model_copy(update={"answer_kind": answer_kind}) if record.packet else None,
        ground_truth=(
            record.ground_truth.model_copy(update={"answer_kind": answer_kind})
            if record.ground_truth
            else None
        ),
        samples=tuple(s.model_copy(update={"answer_kind": answer_kind}) for s in record.samples),
    )


def review(reviewer: str, *, agrees: bool = True, at: datetime | None = None) -> SMEReview:
    stamp = at or datetime.now(UTC)
    return SMEReview(
        reviewer=reviewer,
        agrees_with_primary=agrees,
        confidence=0.9,
        started_at=stamp - timedelta(minutes=2),
        submitted_at=stamp,
    )


def row_counts(store: Store) -> dict[str, int]:
    """Rows in every store table, to prove an operation wrote nothing (or exactly what it should)."""
    with store.read() as conn:
        return {t: conn.exec_driver_sql(f"SELECT count(*) FROM {t}").scalar_one() for t in TABLES.split(", ")}


def stress_worker(url: str, name: str, claims: int, release_every: int, go: Any, results: Any) -> None:
    """One reviewer process: claim_next, then submit (or every release_every-th claim, release), `claims` times."""
    import time

    from arbiter.store import ClaimLost

    store = Store(url)
    store.users.get("warm-up")  # connect before the start signal
    go.wait()  # a barrier: every worker is connected and the parent is waiting
    started = time.perf_counter()
    claimed = lost = released = 0
    claim_s: list[float] = []
    while claimed < claims:
        t = time.perf_counter()
        packet = store.queue.claim_next(name)
        claim_s.append(time.perf_counter() - t)
        if packet is None:
            break
        claimed += 1
        if claimed % release_every == 0:
            released += store.queue.release(packet.packet_id, name)
            continue
        try:
            store.reviews.submit(
                packet.packet_id, name, review(name), CLASSIFICATION, idempotency_key=f"{name}-{claimed}"
            )
        except ClaimLost:
            lost += 1
    store.dispose()
    claim_s.sort()
    results.put(
        {
            "name": name,
            "claimed": claimed,
            "lost": lost,
            "released": released,
            "seconds": time.perf_counter() - started,
            "claim_p95_ms": 1000 * claim_s[int(0.95 * (len(claim_s) - 1))] if claim_s else 0.0,
        }
    )


def run_stress(url: str, *, processes: int = 4, claims: int = 500, release_every: int = 10) -> dict[str, Any]:
    """Seed processes × claims packets, run the reviewer processes at once, and return what they report."""
    import multiprocessing as mp
    import time

    from testing.seeding import seed_packets

    store = Store(url)
    seed_packets(store, processes * claims, prefix="stress")
    store.dispose()
    ctx = mp.get_context("spawn")
    # All start together once every child has imported SQLAlchemy and pydantic and connected (no fixed sleep).
    go, results = ctx.Barrier(processes + 1), ctx.Queue()
    workers = [
        ctx.Process(target=stress_worker, args=(url, f"rev{i}", claims, release_every, go, results))
        for i in range(processes)
    ]
    for w in workers:
        w.start()
    go.wait(timeout=600)
    started = time.perf_counter()
    reports = [results.get(timeout=600) for _ in workers]
    seconds = time.perf_counter() - started
    for w in workers:
        w.join(timeout=60)
    return {"seconds": seconds, "workers": reports}


def claim_violations(store: Store) -> list[str]:
    """From the audit log: a packet claimed again before its holder released or submitted it."""
    with store.read() as conn:
        rows = conn.exec_driver_sql(
            "SELECT target, actor, action FROM audit_log WHERE action IN "
            "('packet.claim', 'packet.release', 'packet.submit') ORDER BY id"
        ).all()
    holder: dict[str, str | None] = {}
    problems: list[str] = []
    for target, actor, action in rows:
        if action == "packet.claim":
            if holder.get(target) is not None:
                problems.append(f"{target} claimed by {actor} while {holder[target]} held it")
            holder[target] = actor
        else:
            if holder.get(target) != actor:
                problems.append(f"{target} {action} by {actor} who did not hold it")
            holder[target] = None
    return problems
