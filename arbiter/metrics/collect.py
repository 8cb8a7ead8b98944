"""The metrics of a store. In parallel: a reader thread for the ground truth (chunk by chunk), one for the
documents (grouped in the database), while this thread reads the reviews and turns ground-truth chunks
into scores. Each reader has its own read transaction; pass `as_of` for an exact cut (without it, a
review saved during the computation can show in one reader and not yet in another), or parallel=False
for one transaction throughout.

Why threads help: the readers' statements each do a chunk's or the whole table's JSON work in one step,
which SQLite runs without the GIL (and PostgreSQL in its own process), so the second core is used.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import closing, contextmanager
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy.engine import Connection, Engine

from arbiter.contracts.profile import CalibrationPolicy, DriftPolicy, MetricsPolicy, Sampling
from arbiter.metrics import calibration, drift, gt_reader, guarantee, known, loader
from arbiter.metrics.compute import GroundTruthScores, build_report
from arbiter.metrics.result import MetricsReport
from arbiter.metrics.rows import DocRun
from arbiter.store import Store

T = TypeVar("T")
_END = object()
_AHEAD = 3  # chunks read ahead of the scoring


def database_label(engine: Engine) -> str:
    """The database named without credentials or host: `sqlite output/arbiter.db`, `postgresql arbiter`."""
    url = engine.url
    return f"{url.get_backend_name()} {url.database or ''}".strip()


@contextmanager
def reading(engine: Engine) -> Iterator[Connection]:
    """One read transaction. PostgreSQL: REPEATABLE READ (every statement sees one snapshot) and no JIT
    (the JSON statements' cost estimates trigger it, and compiling costs more than it saves: ~0.4 s a
    statement)."""
    with engine.connect() as conn:
        postgres = conn.dialect.name == "postgresql"
        if postgres:
            conn = conn.execution_options(isolation_level="REPEATABLE READ")
        with conn.begin():
            if postgres:
                conn.exec_driver_sql("SET LOCAL jit = off")
            yield conn


def _read(engine: Engine, fn: Callable[[Connection, datetime | None], T], as_of: datetime | None) -> T:
    with reading(engine) as conn:
        return fn(conn, as_of)


def _others(
    conn: Connection, as_of: datetime | None
) -> tuple[list[DocRun], loader.ReviewSide, guarantee.AuditFrame]:
    return loader.documents(conn, as_of), loader.review_side(conn, as_of), guarantee.read(conn, as_of)


def _read_ahead(pool: Executor, engine: Engine, as_of: datetime | None) -> Generator[str, None, None]:
    """Ground-truth chunks read by a worker thread, a few ahead of the consumer; its errors re-raised here."""
    handoff: queue.Queue[Any] = queue.Queue(maxsize=_AHEAD)
    stop = threading.Event()

    def offer(item: Any) -> bool:
        while not stop.is_set():
            try:
                handoff.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            with reading(engine) as conn:
                for text in gt_reader.chunks(conn, as_of):
                    if not offer(text):
                        return
            offer(_END)
        except BaseException as exc:  # handed to the consumer, which raises it
            offer(exc)

    worker = pool.submit(produce)
    try:
        while True:
            item = handoff.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        worker.result()


def compute_metrics(
    store: Store,
    as_of: datetime | None = None,
    label_order: Sequence[str] = (),
    *,
    parallel: bool = True,
    policy: MetricsPolicy | None = None,
    sampling: Sampling | None = None,
    drift_policy: DriftPolicy | None = None,
    calibration_file: str | None = None,
    calibration_policy: CalibrationPolicy | None = None,
    known_answers: bool = False,
) -> MetricsReport:
    """The full report of the store, as of a time (None: everything there is). `sampling`: the profile's, whose
    audit_share stands for the inclusion probability of accepts recorded before probabilities were.
    `calibration_file`: measure the calibration fitted there; `known_answers`: each reviewer's accuracy on
    known-answer packets (for admins only)."""
    started = time.perf_counter()
    engine = store.engine
    scores = GroundTruthScores()
    long_docs: list[str] = []
    if parallel:
        with (
            ThreadPoolExecutor(max_workers=2, thread_name_prefix="arbiter-metrics") as pool,
            closing(
                _read_ahead(pool, engine, as_of)
            ) as chunks,  # on an error: stop the reader, then the pool
        ):
            others = pool.submit(_read, engine, _others, as_of)
            gt_reader.score_chunks(chunks, scores, long_docs)
            documents, side, frame = others.result()
        with reading(engine) as conn:
            scores.add_all(gt_reader.full_rows(conn, long_docs))
    else:
        with reading(engine) as conn:
            gt_reader.score_all(conn, scores, as_of)
            documents = loader.documents(conn, as_of)
            side = loader.review_side(conn, as_of)
            frame = guarantee.read(conn, as_of)
    report = build_report(
        scores,
        documents,
        side.reviews,
        side.runs,
        open_audits=side.open_audits,
        as_of=as_of,
        database=database_label(engine),
        label_order=label_order,
        policy=policy,
    )
    report.guarantees = guarantee.guarantees(frame, policy, (sampling or Sampling()).audit_share)
    with reading(engine) as conn:
        report.drift = drift.alarms(conn, as_of, drift_policy)
        if calibration_file is not None:
            report.calibration = calibration.measure(
                conn, as_of, calibration_policy or CalibrationPolicy(), calibration_file
            )
        if known_answers:
            report.known_answers = known.accuracy(conn, as_of)
    report.seconds = time.perf_counter() - started
    return report
