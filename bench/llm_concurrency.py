"""Benchmark (issue 3 item 8): the LLM layer's concurrency, with a fake model of fixed latency behind the
real LLMClient (cache, budgets, limiter, semaphore) and the real classifier/verifier/governor chain.

    .venv/bin/python bench/llm_concurrency.py [--quick] [--latency-ms 300] [--jitter-ms 50] [--out FILE]

Measured in one run: (a) per-document wall time against the critical path (classify + slowest verifier),
(b) the seed's serial V1→V2→V3→V4 on the same documents, (c) batch throughput against the bound
min(concurrency / (calls per doc × latency), rpm / 60 / calls per doc), (d) LLM calls per document on the
fixture mix, (e) a second run over the same cache (0 calls expected).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arbiter.contracts import TokenUsage
from arbiter.contracts.profile import Profile, load_profile
from arbiter.decide.governor import verify_with_retries
from arbiter.llm.client import LLMClient
from arbiter.llm.config import LLMSettings
from arbiter.run.compose import llm_client
from arbiter.verifiers import default_verifiers
from arbiter.verifiers.base import Verifier, VerifyContext
from bench import llm_fake
from bench.verify_throughput import InlineExecutor


@dataclass
class DocRun:
    doc_id: str
    wall_ms: float
    classify_ms: float
    critical_ms: float  # classify + the slowest verifier of each attempt
    calls: int
    tokens: TokenUsage
    decision: str
    reason: str | None
    attempts: int
    errored: list[str] = field(default_factory=list)


# -- one document ---------------------------------------------------------------------------------------


def run_document(
    doc: llm_fake.Doc,
    client: LLMClient,
    profile: Profile,
    verifiers: Sequence[Verifier],
    classify: llm_fake.ClassifyFn,
    *,
    serial: bool = False,
) -> DocRun:
    llm: Any = client.for_document(doc.doc_id)
    started = time.perf_counter()
    raw = classify(doc.bundle, profile, llm)
    classified = time.perf_counter()
    outcome = verify_with_retries(
        raw,
        doc.bundle,
        profile,
        verifiers=verifiers,
        context=VerifyContext(llm=llm),
        executor=InlineExecutor() if serial else None,
    )
    ended = time.perf_counter()
    classify_ms = (classified - started) * 1000.0
    slowest = sum(
        max((r.duration_ms or 0.0 for r in attempt.verifier_results), default=0.0)
        for attempt in outcome.attempts
    )
    calls, tokens, _cost = llm.usage()
    return DocRun(
        doc_id=doc.doc_id,
        wall_ms=(ended - started) * 1000.0,
        classify_ms=classify_ms,
        critical_ms=classify_ms + slowest,
        calls=calls,
        tokens=tokens,
        decision=str(outcome.final_decision),
        reason=outcome.escalation_reason,
        attempts=len(outcome.attempts),
        errored=[
            f"{r.verifier}:{r.llm_phase}"
            for r in outcome.attempts[-1].verifier_results
            if str(r.status) == "ERRORED"
            or str(getattr(r, "llm_phase", "")) in ("ERRORED", "BUDGET_EXHAUSTED")
        ]
        if outcome.attempts
        else [],
    )


# -- measurements ---------------------------------------------------------------------------------------


def settings_for(cache_dir: Path, *, concurrency: int, rpm: int, use_cache: bool = True) -> LLMSettings:
    return LLMSettings(
        backend="none",  # the bench hands its own backend to the client; nothing is built from this
        model="bench-fake-model",
        concurrency=concurrency,
        rpm=rpm,
        cache_dir=cache_dir,
        use_cache=use_cache,
        doc_token_budget=0,
        run_token_budget=0,
    )


def one_by_one(
    docs: Sequence[llm_fake.Doc],
    backend: llm_fake.LatencyBackend,
    settings: LLMSettings,
    profile: Profile,
    verifiers: Sequence[Verifier],
    classify: llm_fake.ClassifyFn,
    *,
    serial: bool,
) -> list[DocRun]:
    """Each document alone (no other document competing for the model): the per-document latency."""
    client, _ = llm_client(settings, backend=backend)
    assert client is not None
    return [run_document(d, client, profile, verifiers, classify, serial=serial) for d in docs]


def batch(
    docs: Sequence[llm_fake.Doc],
    backend: llm_fake.LatencyBackend,
    settings: LLMSettings,
    profile: Profile,
    verifiers: Sequence[Verifier],
    classify: llm_fake.ClassifyFn,
    *,
    doc_workers: int,
) -> tuple[float, list[DocRun]]:
    """Documents concurrently (more in flight than model slots, so the client's bounds are what limits)."""
    client, _ = llm_client(settings, backend=backend)
    assert client is not None
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=doc_workers, thread_name_prefix="doc") as pool:
        runs = list(pool.map(lambda d: run_document(d, client, profile, verifiers, classify), docs))
    return time.perf_counter() - started, runs


def summary(runs: Sequence[DocRun]) -> dict[str, Any]:
    ratios = [r.wall_ms / r.critical_ms for r in runs if r.critical_ms > 0]
    return {
        "docs": len(runs),
        "wall_ms_median": _r(statistics.median(r.wall_ms for r in runs)),
        "wall_ms_mean": _r(statistics.fmean(r.wall_ms for r in runs)),
        "critical_path_ms_median": _r(statistics.median(r.critical_ms for r in runs)),
        "ratio_median": _r(statistics.median(ratios), 3) if ratios else None,
        "ratio_max": _r(max(ratios), 3) if ratios else None,
        "ratio_total": _r(sum(r.wall_ms for r in runs) / max(sum(r.critical_ms for r in runs), 1e-9), 3),
        "decisions": dict(Counter(r.decision for r in runs)),
        "escalation_reasons": dict(Counter(r.reason for r in runs if r.reason)),
        "errored_phases": dict(Counter(e for r in runs for e in r.errored)),
    }


def run(
    *,
    quick: bool = False,
    latency_ms: float | None = None,
    jitter_ms: float | None = None,
    concurrency: int = 8,
    rpm_bound_rpm: int | None = None,
    batch_copies: int | None = None,
    docs_limit: int | None = None,
    seed: int = 0,
    workdir: Path | None = None,
) -> dict[str, Any]:
    """Every figure of the benchmark as one JSON-ready dict."""
    latency_ms = latency_ms if latency_ms is not None else (10.0 if quick else 300.0)
    jitter_ms = jitter_ms if jitter_ms is not None else latency_ms / 6
    batch_copies = batch_copies if batch_copies is not None else (1 if quick else 4)
    docs_limit = docs_limit if docs_limit is not None else (6 if quick else None)
    profile = load_profile()
    docs = llm_fake.fixture_docs(docs_limit)
    if not docs:
        raise RuntimeError("no fixture PDFs with classifications found under fixtures/")
    mix = llm_fake.copies(docs, batch_copies)
    answers = {d.doc_id: d.classification for d in [*docs, *mix]}
    verifiers = default_verifiers()
    classify = llm_fake.classify

    def fake() -> llm_fake.LatencyBackend:
        return llm_fake.LatencyBackend(
            answers, latency_s=latency_ms / 1000, jitter_s=jitter_ms / 1000, seed=seed
        )

    with _workdir(workdir) as root:
        each_alone = max(concurrency, 4)  # room for V2–V4's calls at once; no rpm limit
        # (a) the shipped design, one document at a time; its cache is reused by (e)
        backend_a = fake()
        settings_a = settings_for(root / "cache-a", concurrency=each_alone, rpm=0)
        concurrent = one_by_one(docs, backend_a, settings_a, profile, verifiers, classify, serial=False)
        # (b) the seed's serial design on the same documents, with its own (empty) cache
        backend_b = fake()
        serial = one_by_one(
            docs,
            backend_b,
            settings_for(root / "cache-b", concurrency=each_alone, rpm=0),
            profile,
            verifiers,
            classify,
            serial=True,
        )
        # (e) the same documents again over (a)'s cache
        backend_e = fake()
        rerun = one_by_one(docs, backend_e, settings_a, profile, verifiers, classify, serial=False)

        calls_per_doc = backend_a.calls / len(docs)
        doc_workers = 3 * concurrency

        # (c1) bounded by concurrency: no rpm limit
        backend_c = fake()
        settings_c = settings_for(root / "cache-c", concurrency=concurrency, rpm=0, use_cache=False)
        elapsed_c, runs_c = batch(
            mix, backend_c, settings_c, profile, verifiers, classify, doc_workers=doc_workers
        )
        bound_c = _bound(backend_c, len(mix), concurrency, rpm=0, elapsed_s=elapsed_c)

        # (c2) bounded by requests per minute: the same batch under an rpm a little below the concurrency bound
        mean_latency_s = backend_c.mean_latency_s() or latency_ms / 1000
        rpm = rpm_bound_rpm or max(60, int(0.5 * concurrency / mean_latency_s * 60))
        backend_r = fake()
        settings_r = settings_for(root / "cache-r", concurrency=concurrency, rpm=rpm, use_cache=False)
        elapsed_r, runs_r = batch(
            mix, backend_r, settings_r, profile, verifiers, classify, doc_workers=doc_workers
        )
        bound_r = _bound(backend_r, len(mix), concurrency, rpm=rpm, elapsed_s=elapsed_r)

    by_kind: dict[str, list[int]] = {}
    for r in concurrent:
        by_kind.setdefault(r.doc_id.split("-", 1)[0], []).append(r.calls)
    a, b = summary(concurrent), summary(serial)
    throughput_c = len(runs_c) / elapsed_c
    throughput_r = len(runs_r) / elapsed_r
    per_doc_met = a["ratio_median"] is not None and a["ratio_median"] <= 1.2
    throughput_met = throughput_c / bound_c >= 0.9 and throughput_r / bound_r >= 0.9
    return {
        "benchmark": "llm_concurrency",
        "mode": "quick" if quick else "full",
        # headline figures (bench/run.py reads `ratio`); the sections below hold the detail
        "ratio": a["ratio_median"],
        "share_of_bound": _r(min(throughput_c / bound_c, throughput_r / bound_r), 3),
        "all_met": per_doc_met and throughput_met and backend_e.calls == 0,
        "fake_model": {
            "latency_ms": latency_ms,
            "jitter_ms": jitter_ms,
            "seed": seed,
            "mean_latency_ms_observed": _r(mean_latency_s * 1000),
        },
        "wiring": {
            "classifier": "GeminiClassifier (arbiter/classify/gemini.py)",
            "llm_phases": "V2, V3, V4 as shipped (verifiers/llm_phase.py)",
            "client": "LLMClient: cache, budgets, limiter, concurrency semaphore",
        },
        "docs": len(docs),
        "per_document": {
            "shipped": a,
            "seed_serial": b,
            "ratio_to_critical_path": a["ratio_median"],
            "target_ratio_to_critical_path": 1.2,
            "met": per_doc_met,
            "speedup_vs_serial": _r(b["wall_ms_median"] / max(a["wall_ms_median"], 1e-9), 2),
        },
        "throughput": {
            "concurrency": concurrency,
            "doc_workers": doc_workers,
            "batch_docs": len(mix),
            "concurrency_bound": _throughput(elapsed_c, runs_c, bound_c, throughput_c, rpm=0),
            "rpm_bound": _throughput(elapsed_r, runs_r, bound_r, throughput_r, rpm=rpm),
            "target_share_of_bound": 0.9,
            "met": throughput_met,
        },
        "calls": {
            "per_doc_mean": _r(calls_per_doc, 2),
            "by_purpose": dict(sorted(backend_a.by_purpose.items())),
            "per_doc_by_kind": {k: _r(statistics.fmean(v), 2) for k, v in sorted(by_kind.items())},
            "tokens_per_doc_mean": {
                "input": _r(statistics.fmean(r.tokens.input_tokens for r in concurrent)),
                "output": _r(statistics.fmean(r.tokens.output_tokens for r in concurrent)),
            },
        },
        "rerun": {
            "calls": backend_e.calls,
            "client_calls": sum(r.calls for r in rerun),
            "met": backend_e.calls == 0,
            "wall_ms_median": summary(rerun)["wall_ms_median"],
        },
    }


def _bound(
    backend: llm_fake.LatencyBackend, docs: int, concurrency: int, *, rpm: int, elapsed_s: float
) -> float:
    """Docs/s the model's bounds allow: concurrency / (calls per doc × mean latency), or what the rpm allows
    (the client's limiter lets a first burst of `concurrency` calls through, then rpm / 60 a second)."""
    calls_per_doc = backend.calls / docs
    latency_s = backend.mean_latency_s() or 1e-9
    by_concurrency = concurrency / (calls_per_doc * latency_s)
    if rpm <= 0:
        return by_concurrency
    by_rpm = (rpm / 60.0 + concurrency / max(elapsed_s, 1e-9)) / calls_per_doc
    return min(by_concurrency, by_rpm)


def _throughput(
    elapsed: float, runs: Sequence[DocRun], bound: float, measured: float, *, rpm: int
) -> dict[str, Any]:
    return {
        "rpm": rpm,
        "elapsed_s": _r(elapsed, 2),
        "docs_per_s": _r(measured, 3),
        "bound_docs_per_s": _r(bound, 3),
        "share_of_bound": _r(measured / bound, 3),
        "calls": sum(r.calls for r in runs),
        "decisions": dict(Counter(r.decision for r in runs)),
    }


@contextmanager
def _workdir(given: Path | None) -> Iterator[Path]:
    if given is not None:
        given.mkdir(parents=True, exist_ok=True)
        yield given
        return
    with tempfile.TemporaryDirectory(prefix="arbiter-bench-llm-") as tmp:
        yield Path(tmp)


def _r(value: float, digits: int = 1) -> float:
    return round(float(value), digits)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="LLM concurrency benchmark with a fake model of fixed latency."
    )
    parser.add_argument(
        "--quick", action="store_true", help="6 documents, 10 ms latency: seconds, not minutes"
    )
    parser.add_argument(
        "--latency-ms", type=float, help="mean latency of the fake model (default 300; quick 10)"
    )
    parser.add_argument("--jitter-ms", type=float, help="± jitter around it (default latency / 6)")
    parser.add_argument("--concurrency", type=int, default=8, help="the client's concurrent-call bound")
    parser.add_argument(
        "--rpm", type=int, help="rpm for the rpm-bound batch (default half the concurrency bound)"
    )
    parser.add_argument(
        "--copies", type=int, help="copies of the fixture mix in the batch (default 4; quick 1)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args(argv)
    report = run(
        quick=args.quick,
        latency_ms=args.latency_ms,
        jitter_ms=args.jitter_ms,
        concurrency=args.concurrency,
        rpm_bound_rpm=args.rpm,
        batch_copies=args.copies,
        seed=args.seed,
    )
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
