"""Shared helpers for the answer desk's tests: a SQLite store seeded by running the grounded-answer demo
items through the real pipeline (escalations queued as answer packets), with the review accounts."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from review_helpers import PASSWORD, Seeded

from arbiter.contracts import PacketKind, SMEPacket
from arbiter.demo.grounded.build import demo_items, write_jsonl
from arbiter.kinds import GROUNDED, kind
from arbiter.run.item_batch import run_items
from arbiter.store import Store

# Demo items the bundled rules escalate, by what the reviewer does with them.
AGREEABLE = ("q17-hedged", "q23-chunk-instruction", "q41-chunk-instruction")
UNSUPPORTED = "q02-unsupported-statement"  # statement 3 changes "may" into "must"
WRONG_CITATION = "q11-irrelevant-citation"  # statement 1 cites a quote of the wrong chunk; C09 holds it
NO_EVIDENCE = "q38-answered-without-evidence"  # nothing retrieved answers it: an abstention is right
NOT_VERBATIM = "q05-quote-not-in-chunk"  # quote REQ-001 is not in its chunk word for word


def profile_file(tmp_path: Path, second_review_share: float) -> Path:
    """The bundled grounded profile with every escalation (share 1.0) or none sampled for a second review."""
    text = resources.files("arbiter.profiles").joinpath("grounded.toml").read_text(encoding="utf-8")
    path = tmp_path / "grounded.toml"
    path.write_text(
        text + f"\n[sampling]\naudit_share = 0.0\nsecond_review_share = {second_review_share}\n",
        encoding="utf-8",
    )
    return path


def seed_answers(tmp_path: Path, *, second_reviews: bool = False) -> Seeded:
    """A migrated SQLite store holding the demo's answer packets (and, with second_reviews, a blind second
    review of every escalation), and the four accounts of review_helpers.seed."""
    out_dir = tmp_path / "output"
    url = f"sqlite:///{tmp_path / 'arbiter.db'}"
    store = Store(url)
    store.migrate()
    items = write_jsonl(demo_items(), tmp_path / "items" / "items.jsonl")
    profile = profile_file(tmp_path, 1.0 if second_reviews else 0.0)
    run_items(kind(GROUNDED), [items], out_dir, db=url, profile=profile)
    store.users.add("alice", "reviewer", PASSWORD)
    store.users.add("bob", "reviewer", PASSWORD)
    store.users.add("root", "admin", PASSWORD)
    store.users.add("proxied", "reviewer", None)
    return Seeded(store, url, out_dir, [], docs=tmp_path / "items")


def packet_of(store: Store, doc_id: str, packet_kind: PacketKind = PacketKind.ESCALATION) -> SMEPacket:
    """The document's packet of that kind."""
    for summary in store.queue.page(limit=500):
        if summary.doc_id == doc_id:
            packet = store.queue.get(summary.packet_id)
            if packet.packet_kind == packet_kind:
                return packet
    raise LookupError(f"no {packet_kind} packet of {doc_id}")
