"""Review-app benchmark: the packet page (a real fixture PDF) and the queue page (100k packets, SQLite and
PostgreSQL) rendered by the real app script under Streamlit's AppTest (headless). Prints one JSON object.

    .venv/bin/python bench/review_pages.py [--quick] [--packets 100000] [--reruns 10] [--db sqlite,postgresql]

Each figure is the wall time of one AppTest run (the whole script: sign-in gate, navigation, the page's
queries, rendering, protobuf messages), the closest headless equivalent of one browser interaction.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa

from arbiter.contracts import DocumentRecord, SMEPacket
from arbiter.record.mirrors import FileStore
from arbiter.review.queue_view import PAGE_SIZE, QueueFilters, page_count
from arbiter.review.settings import ENV_AUTH, ENV_DB, ENV_DOCS, ENV_OUTPUT
from arbiter.store import Store
from bench.claim_next import database
from testing.seeding import CODES, DOC_TYPES, REASONS, seed_packets

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
PDFS = FIXTURES / "pdfs"
APP = REPO / "review_app" / "app.py"
TARGETS = {"packet_page_ms": 1000.0, "queue_page_ms": 1000.0}
USER, PASSWORD = "bench-reviewer", "bench-password-9"
NOISY_LOGGERS = ("scriptrunner_utils.script_run_context", "caching.cache_data_api")
PACKET_KEY = (
    "arbiter_packet_id"  # arbiter.review_app.state.PACKET (not imported: it pulls in Streamlit's runtime)
)
# Sizes per mode; "tiny" is the smoke test's: it checks the JSON's shape, not performance.
PRESETS: dict[str, dict[str, Any]] = {
    "full": {"packets": 100_000, "reruns": 10},
    "quick": {"packets": 10_000, "reruns": 5},
    "tiny": {"packets": 120, "reruns": 2, "dbs": ("sqlite",), "fixtures": 3},
}


class AppError(RuntimeError):
    """The app raised during a measured run: the figure would be meaningless."""


def _stats(samples: list[float]) -> dict[str, Any]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return {
        "p50_ms": round(1000 * statistics.median(ordered), 1),
        "p95_ms": round(1000 * p95, 1),
        "max_ms": round(1000 * ordered[-1], 1),
        "n": len(ordered),
    }


def _timed(at: Any, change: Callable[[], Any] | None = None) -> float:
    """Seconds for one run of the app (after applying `change`, e.g. a click); raises if the app did."""
    if change is not None:
        change()
    t = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - t
    if at.exception:
        raise AppError("; ".join(str(e.value) for e in at.exception))
    return elapsed


def _series(at: Any, reruns: int, change: Callable[[], Any] | None = None) -> dict[str, Any]:
    """The run that applies `change`, then plain reruns of the same view; first_ms is that first run."""
    samples = [_timed(at, change)] + [_timed(at) for _ in range(reruns - 1)]
    return {"first_ms": round(1000 * samples[0], 1), **_stats(samples)}


def _expect_title(at: Any, title: str) -> None:
    """The run showed the page we meant to measure (not the sign-in page, not an error)."""
    # Titles from document data are Markdown-escaped ("admin\\-requisition") so they show as written.
    shown = [re.sub(r"\\(.)", r"\1", str(t.value)) for t in at.title]
    if shown[:1] != [title]:
        raise AppError(f"expected the page titled {title!r}, the app showed {shown}")


def _queue_shown(at: Any) -> dict[str, int]:
    """What the queue page says it shows: the matching total and the rows on this page."""
    _expect_title(at, "Review queue")
    caption = next(str(c.value) for c in at.caption if " packets match; showing " in str(c.value))
    matched, rows = caption.rstrip(".").split(" packets match; showing ")
    return {"matched": int(matched), "rows": int(rows)}


@contextmanager
def app_env(env: dict[str, str]) -> Iterator[None]:
    """The app's settings in the environment, with Streamlit's caches (settings, store, pages) emptied
    before and after, so each database gets its own store and nothing leaks into the caller."""
    import streamlit as st

    from arbiter.review import documents

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    st.cache_resource.clear()
    st.cache_data.clear()
    documents.clear_cache()
    try:
        yield
    finally:
        from arbiter.review_app import state

        state.store(env[ENV_DB]).dispose()  # the app's cached store: close its connections first
        st.cache_resource.clear()
        st.cache_data.clear()
        documents.clear_cache()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextmanager
def quiet_streamlit() -> Iterator[None]:
    """Streamlit warns about every cache or session call made outside a script run (ours are on
    purpose); keep those warnings off stderr, where the benchmark's progress goes. (Its log level is
    reset from its config on every AppTest run, so the two loggers are switched off instead.)"""
    import logging

    loggers = [logging.getLogger(f"streamlit.runtime.{name}") for name in NOISY_LOGGERS]
    before = [log.disabled for log in loggers]
    for log in loggers:
        log.disabled = True
    try:
        yield
    finally:
        for log, disabled in zip(loggers, before, strict=True):
            log.disabled = disabled


def signed_in() -> Any:
    """A fresh AppTest of the real app script, signed in through the form as the benchmark reviewer."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.text_input(key="sign_in_name").input(USER)
    at.text_input(key="sign_in_password").input(PASSWORD)
    at.button[0].click().run()
    if at.exception or "arbiter_signed_in" not in at.session_state:
        raise AppError(f"sign-in failed: {[str(e.value) for e in at.exception] or 'no user in session'}")
    return at


# Packet page ----------------------------------------------------------------------------------------------
class _Capture(FileStore):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.records: list[DocumentRecord] = []

    def save(self, record: DocumentRecord) -> None:
        super().save(record)
        self.records.append(record)


def run_fixtures(out_dir: Path, limit: int | None = None) -> list[DocumentRecord]:
    """Run the real pipeline over fixtures/pdfs with the demo classifications (bundles under out_dir)."""
    from arbiter.classify.production import load_production
    from arbiter.ingest import ingest_pdf
    from arbiter.run.compose import PipelineParts, build_engine, pipeline

    capture = _Capture(out_dir)
    chain = pipeline(
        build_engine(classifier="file", classifications=FIXTURES / "demo"),
        PipelineParts(
            store=capture,
            ingest=lambda path, doc_id: ingest_pdf(path, doc_id=doc_id),
            run_id="bench-review",
            production=load_production(FIXTURES / "production.csv"),
        ),
    )
    pdfs = sorted(p for p in PDFS.glob("*.pdf") if (FIXTURES / "demo" / f"{p.stem}.json").exists())
    escalated = 0
    for pdf in pdfs:
        chain.process(pdf, pdf.stem, force=True)
        escalated += capture.records[-1].packet is not None
        if limit is not None and escalated >= limit:
            break
    return capture.records


def _page_turns(at: Any, pages: int) -> list[float]:
    """Next page to the end and back, the image cache emptied before each: a fresh render every time."""
    import streamlit as st

    from arbiter.review_app import state

    samples = []
    for key in ["next_page"] * (pages - 1) + ["prev_page"] * (pages - 1):
        st.cache_data.clear()
        state.page_cache().clear()  # the rendered pages every session shares (and prefetches into)
        samples.append(_timed(at, at.button(key=key).click))
    return samples


def _packet_figures(at: Any, store: Store, packets: list[SMEPacket], reruns: int) -> dict[str, Any]:
    import streamlit as st

    from arbiter.review import documents
    from arbiter.review_app import state

    # The process's first packet page also imports the page's modules (pandas, pypdfium2...).
    store.queue.claim(packets[0].packet_id, USER)
    at.session_state[PACKET_KEY] = packets[0].packet_id
    process_first = _timed(at, lambda: at.switch_page("views/packet.py"))
    st.cache_data.clear()
    state.page_cache().clear()
    documents.clear_cache()
    first: dict[str, float] = {}
    for packet in packets:  # as after "Claim next": the claim, then the packet page's first run
        store.queue.claim(packet.packet_id, USER)
        at.session_state[PACKET_KEY] = packet.packet_id
        first[packet.doc_id] = round(1000 * _timed(at), 1)
        _expect_title(at, packet.doc_id)
        store.queue.release(packet.packet_id, USER)
    main = max(packets, key=lambda p: (len(p.issues_summary), p.total_pages))
    store.queue.claim(main.packet_id, USER)
    at.session_state[PACKET_KEY] = main.packet_id
    _timed(at)
    rerun = _series(at, reruns)
    _expect_title(at, main.doc_id)
    turns = _page_turns(at, main.total_pages)
    correct = _series(at, reruns, lambda: at.radio(key=f"decision_{main.packet_id}").set_value("Correct"))
    if not at.button(key="save_correction"):
        raise AppError("the correction form did not open")
    first_max = max(first.values())
    return {
        "db": "sqlite",
        "packet": main.doc_id,
        "pages": main.total_pages,
        "issues": len(main.issues_summary),
        "process_first_render_ms": round(1000 * process_first, 1),
        "first_render_ms": first,
        "first_render_max_ms": first_max,
        "rerun": rerun,
        "page_turn": _stats(turns) if turns else None,
        "correct_form": correct,
        "met": {
            "first_render": first_max < TARGETS["packet_page_ms"],
            "rerun_p95": rerun["p95_ms"] < TARGETS["packet_page_ms"],
            "correct_form_p95": correct["p95_ms"] < TARGETS["packet_page_ms"],
        },
    }


def bench_packet_page(tmp: Path, reruns: int, fixtures: int | None = None) -> dict[str, Any]:
    """Packet page on SQLite: the first render of every escalated fixture packet (cold caches), then on the
    richest one (most issues, then most pages) plain reruns, page turns and the correction form's reruns."""
    url = f"sqlite:///{tmp / 'packets.db'}"
    store = Store(url)
    try:
        store.migrate()
        records = run_fixtures(tmp / "output", fixtures)
        for record in records:
            store.records.record(record)
        store.users.add(USER, "reviewer", PASSWORD)
        packets = sorted((r.packet for r in records if r.packet is not None), key=lambda p: p.doc_id)
        if not packets:
            raise AppError("no fixture packet was escalated")
        env = {ENV_DB: url, ENV_DOCS: str(PDFS), ENV_OUTPUT: str(tmp / "output"), ENV_AUTH: "local"}
        with app_env(env):
            return _packet_figures(signed_in(), store, packets, reruns)
    finally:
        store.dispose()


# Queue page -----------------------------------------------------------------------------------------------
def _queue_views(at: Any, store: Store, packets: int, reruns: int) -> dict[str, dict[str, Any]]:
    """Time each view of the queue page, in the order a reviewer might go through them."""
    page = lambda: at.number_input(key="queue_page")  # noqa: E731
    views: dict[str, dict[str, Any]] = {}

    def measure(name: str, change: Callable[[], Any] | None = None) -> None:
        views[name] = _series(at, reruns, change)
        views[name].update(_queue_shown(at))

    measure("default")
    measure("deep_page", lambda: page().set_value(page_count(packets)))
    page().set_value(1)
    measure("filter_code", lambda: at.selectbox(key="filter_code").set_value(CODES[3]))
    coded = page_count(store.queue.count(**QueueFilters(code=CODES[3]).query()))
    measure("filter_code_deep_page", lambda: page().set_value(coded))
    page().set_value(1)
    at.selectbox(key="filter_code").set_value("")

    def reason_and_type() -> None:
        at.multiselect(key="filter_reason").set_value([REASONS[0], REASONS[2]])
        at.multiselect(key="filter_type").set_value([DOC_TYPES[1]])

    measure("filter_reason_type", reason_and_type)
    return views


def _queue_queries(store: Store, packets: int, repeats: int) -> dict[str, float]:
    """Median time of each store call the queue page makes, outside Streamlit: where a view's time goes."""
    default, coded = QueueFilters().query(), QueueFilters(code=CODES[3]).query()
    coded_total = store.queue.count(**coded)
    last = lambda total: (page_count(total) - 1) * PAGE_SIZE  # noqa: E731
    calls: dict[str, Callable[[], Any]] = {
        "queue_counts": store.queue.counts,
        "filter_options": store.queue.filter_options,
        "count_default": lambda: store.queue.count(**default),
        "list_first_page": lambda: store.queue.page(**default, offset=0, limit=PAGE_SIZE),
        "list_last_page": lambda: store.queue.page(**default, offset=last(packets), limit=PAGE_SIZE),
        "count_filter_code": lambda: store.queue.count(**coded),
        "list_filter_code_last_page": lambda: store.queue.page(
            **coded, offset=last(coded_total), limit=PAGE_SIZE
        ),
    }
    medians: dict[str, float] = {}
    for name, call in calls.items():
        samples = []
        for _ in range(repeats):
            t = time.perf_counter()
            call()
            samples.append(time.perf_counter() - t)
        medians[name] = round(1000 * statistics.median(samples), 1)
    return medians


def bench_queue_page(kind: str, packets: int, reruns: int) -> dict[str, Any]:
    """Queue page over `packets` pending synthetic packets: the default view, two filtered views, the last
    page of the whole queue and of a filtered view."""
    with database(kind) as url:
        store = Store(url)
        try:
            store.migrate()
            t = time.perf_counter()
            seed_packets(store, packets, prefix="bench")
            seed_s = time.perf_counter() - t
            store.users.add(USER, "reviewer", PASSWORD)
            env = {ENV_DB: url, ENV_DOCS: str(PDFS), ENV_AUTH: "local"}
            with app_env(env):
                at = signed_in()
                views = _queue_views(at, store, packets, reruns)
            queries = _queue_queries(store, packets, min(5, reruns))
        finally:
            store.dispose()
    worst = max(v["p95_ms"] for v in views.values())
    return {
        "packets": packets,
        "seed_s": round(seed_s, 1),
        "views": views,
        "queries_p50_ms": queries,
        "worst_p95_ms": worst,
        "met": worst < TARGETS["queue_page_ms"],
    }


def run(
    packets: int = 100_000,
    reruns: int = 10,
    dbs: tuple[str, ...] = ("sqlite", "postgresql"),
    fixtures: int | None = None,
) -> dict[str, Any]:
    """Both pages' figures, their targets and whether each was met; a database that cannot be used
    (e.g. no PostgreSQL server) is reported under `errors` instead of failing the whole run."""
    started = time.perf_counter()
    queue: dict[str, Any] = {}
    errors: dict[str, str] = {}
    with quiet_streamlit():
        with tempfile.TemporaryDirectory(prefix="arbiter-bench-review-") as tmp:
            packet = bench_packet_page(Path(tmp), reruns, fixtures)
        for kind in dbs:
            try:
                queue[kind] = bench_queue_page(kind, packets, reruns)
            except sa.exc.OperationalError as exc:  # no server, or no right to create a database
                errors[kind] = f"{type(exc).__name__}: {exc}".splitlines()[0]
    met = {f"packet_page_{k}": v for k, v in packet["met"].items()}
    met.update({f"queue_page_{kind}": figures["met"] for kind, figures in queue.items()})
    worst = max(
        [packet["first_render_max_ms"], packet["rerun"]["p95_ms"], packet["correct_form"]["p95_ms"]]
        + [q["worst_p95_ms"] for q in queue.values()]
    )
    return {
        "benchmark": "review_pages",
        "targets": TARGETS,
        "packet_page": packet,
        "queue_page": queue,
        "errors": errors,
        "worst_page_ms": worst,
        "met": met,
        "all_met": all(met.values()) and not errors,
        "duration_s": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="10k packets, 5 reruns per view")
    parser.add_argument("--tiny", action="store_true", help=argparse.SUPPRESS)  # the smoke test's size
    parser.add_argument("--packets", type=int)
    parser.add_argument("--reruns", type=int)
    parser.add_argument("--db", help="comma-separated: sqlite,postgresql")
    args = parser.parse_args(argv)
    kwargs = dict(PRESETS["tiny" if args.tiny else "quick" if args.quick else "full"])
    dbs = tuple(d.strip() for d in args.db.split(",") if d.strip()) if args.db else None
    given = {"packets": args.packets, "reruns": args.reruns and max(1, args.reruns), "dbs": dbs}
    kwargs.update({k: v for k, v in given.items() if v is not None})
    print(json.dumps(run(**kwargs), indent=2))


if __name__ == "__main__":
    main()
