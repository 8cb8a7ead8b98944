"""Known-answer packets (docs/design.md §9.7): an admin seeds documents whose ground truth an adjudicator
decided into the queue as ordinary blind audit packets. Everything a reviewer sees of one — its queue row, its
packet page, its place in the order, the save message — is what a real audit shows; only `known_answers`
(read by admins' pages and the metrics) tells them apart. Its review writes no ground-truth version and opens
no adjudication (store/reviews.py); the metrics count it as each reviewer's accuracy, never as an audit."""

from __future__ import annotations

import hashlib
import random
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

from arbiter.contracts import PacketKind, SMEPacket
from arbiter.record.packets import DOCUMENT_FIELDS, blind_packet
from arbiter.store import Store
from arbiter.store.known import Adjudicated


@dataclass(frozen=True)
class Seeded:
    packets: list[str]
    available: int  # adjudicated documents that could be seeded (no open packet)


def known_packet(doc: Adjudicated, now: datetime, nonce: str) -> SMEPacket:
    """The audit packet of an adjudicated document, from its newest packet's document fields; the packet id has
    a real audit's form (a hash, here with a secret nonce so nobody can work it out)."""
    fields = {k: doc.body[k] for k in DOCUMENT_FIELDS if k in doc.body}  # packets before 0013: no kind
    fields.update(run_id=doc.run_id, created_at=now, updated_at=now)
    key = f"{doc.doc_id}|{doc.body.get('pdf_sha256')}|{doc.run_id}|{PacketKind.AUDIT.value}|{nonce}"
    return blind_packet(PacketKind.AUDIT, fields, "pkt-" + hashlib.sha256(key.encode()).hexdigest()[:16])


def seed_known(
    store: Store, admin: str, count: int, *, now: datetime | None = None, rng: random.Random | None = None
) -> Seeded:
    """Seed up to `count` known-answer packets, drawn at random among the adjudicated documents with no open
    packet; PermissionDenied unless `admin` is an active admin."""
    if count < 1:
        raise ValueError("--count must be at least 1.")
    store.users.require_admin(admin)
    stamp = now or datetime.now(UTC)
    found = store.known.candidates()
    chosen = (rng or random.SystemRandom()).sample(found, min(count, len(found)))
    seeded = [(known_packet(doc, stamp, secrets.token_hex(16)), doc.gt_id) for doc in chosen]
    ids = store.known.seed(seeded, admin, stamp) if seeded else []
    return Seeded(packets=ids, available=len(found))
