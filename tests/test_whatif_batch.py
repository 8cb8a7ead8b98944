"""Re-verification of many documents: documents of the same content are re-verified once, with the same
decisions as each re-verified on its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arbiter.contracts.profile import load_profile
from arbiter.store import Store
from arbiter.whatif import batch, paths
from arbiter.whatif.history import reading
from arbiter.whatif.simulate import simulate
from bench import policy_whatif
from tests.store_fixtures import pg_server_url_fixture, store_fixture  # noqa: F401  (both databases)


def test_documents_of_the_same_content_are_reverified_once_with_the_same_flips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """120 documents made of 60 distinct ones (bench seed): the policy candidate retries beyond the record the
    2 copies of one document; it is re-verified once, and the report equals the one where every document is
    re-verified on its own."""
    policy_whatif.seed(f"sqlite:///{tmp_path / 'arbiter.db'}", tmp_path, 120, 60, lambda _msg: None)
    current = load_profile()
    candidate = policy_whatif.candidates(current)["policy"]
    calls: list[str] = []
    real = batch.reverify_one

    def counted(conn: Any, work: Any, doc: Any, truth: Any, checks: Any) -> Any:
        calls.append(doc.doc_id)
        return real(conn, work, doc, truth, checks)

    monkeypatch.setattr(batch, "reverify_one", counted)
    with reading(f"sqlite:///{tmp_path / 'arbiter.db'}") as conn:
        shared = simulate(conn, current, candidate, out_dir=tmp_path)
    assert calls == ["doc-000057"]
    monkeypatch.setattr(batch, "content_key", lambda _conn, _doc, _truth: None)
    with reading(f"sqlite:///{tmp_path / 'arbiter.db'}") as conn:
        alone = simulate(conn, current, candidate, out_dir=tmp_path)
    assert calls[1:] == ["doc-000057", "doc-000117"]
    for report in (shared, alone):
        report.pop("seconds")
    assert shared == alone
    assert shared["paths"][paths.REVERIFIED] == 2
    assert [f["doc_id"] for f in shared["flips"]] == ["doc-000057", "doc-000117"]


def test_a_different_bundle_is_a_different_content(tmp_path: Path) -> None:
    """Two documents with the same stored record but different bundle bytes do not share a content key."""
    policy_whatif.seed(f"sqlite:///{tmp_path / 'arbiter.db'}", tmp_path, 16, 8, lambda _msg: None)
    changed = tmp_path / "bundles" / "doc-000015.json"
    text = changed.read_text(encoding="utf-8")
    changed.unlink()  # a hard link to the pattern's bundle: written anew
    changed.write_text(text.replace("whatif-00007", "whatif-0000x", 1), encoding="utf-8")
    from arbiter.whatif.history import read_history

    with reading(f"sqlite:///{tmp_path / 'arbiter.db'}") as conn:
        docs = {d.doc_id: d for d in read_history(conn, None, tmp_path).docs}
        keys = [batch.content_key(conn, docs[d], None) for d in ("doc-000006", "doc-000014", "doc-000007")]
        changed_key = batch.content_key(conn, docs["doc-000015"], None)
    assert keys[0] is not None
    assert keys[0] == keys[1] != keys[2]
    assert None is not changed_key != keys[2]


class _Rows:
    """Stands in for a query result: fetchmany hands out the rows in batches, then raises if told to."""

    def __init__(self, count: int, fail: bool = False) -> None:
        self.rows = list(range(count))
        self.fail = fail

    def fetchmany(self, size: int) -> list[int]:
        batch, self.rows = self.rows[:size], self.rows[size:]
        if not batch and self.fail:
            raise RuntimeError("lost the connection")
        return batch


def test_prefetched_rows_come_in_order_and_a_failure_reaches_the_caller() -> None:
    """The prefetching thread yields every row in the result's order, and the result's error is raised to
    the caller; a caller that stops early leaves no thread behind."""
    import threading

    from arbiter.whatif.prefetch import prefetched

    assert list(prefetched(_Rows(2500), size=7)) == list(range(2500))
    with pytest.raises(RuntimeError, match="lost the connection"):
        list(prefetched(_Rows(10, fail=True), size=3))
    rows = prefetched(_Rows(100_000), size=10)
    assert next(rows) == 0
    rows.close()
    assert not [t for t in threading.enumerate() if t.name == "whatif-read"]


def test_documents_are_read_in_doc_id_order(store: Store) -> None:
    """The history's documents come in doc_id order, not in the order they were recorded."""
    from arbiter.contracts import StopReason
    from arbiter.whatif.history import read_history
    from tests.whatif_helpers import attempt, classification, outcome, record

    current = load_profile()
    names = ["doc-b", "doc-10", "doc-a", "doc-2", "DOC-z", "doc-1"]
    for doc_id in names:
        primary = classification(doc_id)
        record(store, outcome(doc_id, [attempt(0, [], current)], StopReason.ACCEPTED, primary), primary)
    with reading(store.url) as conn:
        ids = [d.doc_id for d in read_history(conn, None).docs]
    assert ids == sorted(names)
