"""Benchmark (a): rules-only verification throughput against the floor of only parsing the inputs.

Inputs: each document's bundle as ingestion files it (its pages' content reading carried in it, made right
after extraction: verifiers/content_carry.py) and its classification.
Floor: DocumentBundle.model_validate_json + ClassificationOutput.model_validate_json per document.
Measured: DocumentBundle.model_validate_json + governor.verify_with_retries (V1–V4 rules, V5, fixes),
as shipped (a thread pool per document), with one shared pool, and the seed's serial design; and, beside them,
the same for bundles that carry no reading (a bundle from elsewhere: every page is read at verification),
against that bundle's own parse floor. The reading's cost at ingestion is reported apart.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import corpus

Pair = tuple[str, str]


class InlineExecutor(Executor):
    """Runs each submitted call at once on the caller's thread: the seed's V1→V2→V3→V4 in sequence."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)
        return future


def make_inputs(
    docs: int, *, pages: int = 10, segments: int = 3, defect_rate: float = 0.1, seed: int = 0
) -> list[Pair]:
    """(bundle JSON, classification JSON) per document; about `defect_rate` carry one fixable fault."""
    return [
        corpus.json_pair(
            corpus.make_doc(f"bench-{i:05d}", pages=pages, segments=segments, seed=seed),
            corpus.defect_for(i, defect_rate),
        )
        for i in range(docs)
    ]


def carrying(inputs: list[Pair]) -> tuple[list[Pair], float]:
    """The inputs with each bundle carrying its reading, as ingestion files it; and the reading's seconds."""
    from arbiter.contracts import DocumentBundle
    from arbiter.contracts.profile import load_profile
    from arbiter.verifiers.content import carry_reading

    profile = load_profile()
    out: list[Pair] = []
    spent = 0.0
    for bundle_json, classification in inputs:
        bundle = DocumentBundle.model_validate_json(bundle_json)
        started = time.perf_counter()
        carry_reading(bundle, profile)
        spent += time.perf_counter() - started
        if bundle.readings is None:
            raise RuntimeError(f"{bundle.doc_id}: the pages could not be read")
        out.append((bundle.model_dump_json(), classification))
    return out, spent


def _time(fn: Callable[[Pair], object], inputs: list[Pair]) -> float:
    started = time.perf_counter()
    for pair in inputs:
        fn(pair)
    return time.perf_counter() - started


def run(
    *,
    docs: int = 2000,
    pages: int = 10,
    repeats: int = 3,
    defect_rate: float = 0.1,
    seed: int = 0,
    warmup: int = 50,
) -> dict[str, Any]:
    from arbiter.contracts import ClassificationOutput, DocumentBundle, VerificationOutcome
    from arbiter.contracts.profile import load_profile
    from arbiter.contracts.schemas import load_subject
    from arbiter.decide.governor import verify_with_retries
    from arbiter.verifiers import default_verifiers

    profile = load_profile()
    checks = default_verifiers()
    t0 = time.perf_counter()
    bare = make_inputs(docs, pages=pages, defect_rate=defect_rate, seed=seed)
    generate_s = time.perf_counter() - t0
    inputs, carry_s = carrying(bare)
    shared = ThreadPoolExecutor(max_workers=len(checks), thread_name_prefix="bench-verifier")
    inline = InlineExecutor()

    def floor(pair: Pair) -> object:
        DocumentBundle.model_validate_json(pair[0])
        return ClassificationOutput.model_validate_json(pair[1])

    def check(pair: Pair, executor: Executor | None) -> VerificationOutcome:
        bundle = DocumentBundle.model_validate_json(pair[0])
        return verify_with_retries(pair[1], bundle, profile, verifiers=checks, executor=executor)

    def verify(executor: Executor | None) -> Callable[[Pair], object]:
        return lambda pair: check(pair, executor)

    variants: dict[str, Callable[[Pair], object]] = {
        "floor_parse_only": floor,
        "arbiter_default": verify(None),
        "arbiter_shared_pool": verify(shared),
        "seed_serial": verify(inline),
        # The same, for bundles that carry no reading (their own floor: the smaller bundle's parse).
        "floor_parse_only_uncarried": floor,
        "arbiter_default_uncarried": verify(None),
    }
    sets = {name: bare if name.endswith("_uncarried") else inputs for name in variants}
    try:
        for name, fn in variants.items():
            _time(fn, sets[name][: max(1, min(warmup, docs))])
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        names = list(variants)
        for r in range(repeats):
            # Rotate the order each repeat so no variant always runs first (cache, allocator state).
            for name in names[r % len(names) :] + names[: r % len(names)]:
                seconds[name].append(_time(variants[name], sets[name]))
        outcomes = [check(pair, inline) for pair in inputs]
        afresh = [check(pair, inline) for pair in bare]
        load_s = _time(lambda pair: load_subject(pair[1]), inputs)
        bundles = [DocumentBundle.model_validate_json(b) for b, _ in bare]
        reader = reader_speed(profile, bundles)
        from arbiter.verifiers.content import _read as read_content

        reading_s = _time(lambda bundle: read_content(bundle, profile), bundles)  # type: ignore[arg-type,return-value]
    finally:
        shared.shutdown()

    rates = {name: round(docs / statistics.median(s), 1) for name, s in seconds.items()}
    floor_rate = rates["floor_parse_only"]
    decisions: Counter[str] = Counter()
    per_verifier: dict[str, float] = defaultdict(float)
    issues: Counter[str] = Counter()
    for outcome in outcomes:
        after = " after fixes" if len(outcome.attempts) > 1 else ""
        decisions[f"{outcome.final_decision}{after}"] += 1
        for attempt in outcome.attempts:
            for result in attempt.verifier_results:
                per_verifier[result.verifier] += result.duration_ms
                issues.update(issue.code for issue in result.issues)
    return {
        "docs": docs,
        "pages_per_doc": pages,
        "defect_rate": defect_rate,
        "repeats": repeats,
        "generate_s": round(generate_s, 2),
        "mean_bundle_bytes": round(statistics.fmean(len(b) for b, _ in inputs)),
        "mean_classification_bytes": round(statistics.fmean(len(c) for _, c in inputs)),
        "docs_per_s": rates,
        "mean_uncarried_bundle_bytes": round(statistics.fmean(len(b) for b, _ in bare)),
        "ratio_to_floor": {
            name: round(floor_rate / rate, 2)
            for name, rate in rates.items()
            if not name.startswith("floor_") and not name.endswith("_uncarried")
        },
        "ratio": round(floor_rate / rates["arbiter_default"], 2),
        # Verifying a bundle that carries no reading (every page read now), against its own parse floor.
        "ratio_uncarried": round(rates["floor_parse_only_uncarried"] / rates["arbiter_default_uncarried"], 2),
        # What ingestion spends reading the pages and carrying the reading (once per document and profile).
        "carry_ms_per_doc": round(carry_s * 1000 / docs, 3),
        "target_ratio_max": 3.0,
        # A carried reading decides exactly as reading the pages afresh does (every issue code, every decision).
        "same_outcomes_uncarried": all(_same(a, b) for a, b in zip(outcomes, afresh, strict=True)),
        "accepted": sum(n for d, n in decisions.items() if d.startswith("AUTO_ACCEPT")),
        "decisions": dict(decisions.most_common()),
        "issue_codes": dict(issues.most_common()),
        # Where the time goes (serial pass, all attempts): the loader (json + jsonschema + model), V1–V4.
        "load_subject_ms_per_doc": round(load_s * 1000 / docs, 3),
        "verifier_ms_per_doc": {name: round(ms / docs, 3) for name, ms in sorted(per_verifier.items())},
        # V2's share that reads the pages (lexicons, page reader, start reader; once per bundle, shared by V2, V4
        # and every retry), the rest being the rules that compare the reading with the answer.
        "content_reading_ms_per_doc": round(reading_s * 1000 / docs, 3),
        # The content check's learned page reader alone (issue 26: <= 0.5 ms a page, file <= 10 MB).
        "reader": reader,
        "seconds": {name: [round(x, 3) for x in s] for name, s in seconds.items()},
    }


def _same(one: Any, other: Any) -> bool:
    def shape(outcome: Any) -> list[Any]:
        return [
            (
                attempt.decision,
                sorted(
                    (
                        (r.verifier, r.status, [i.model_dump() for i in r.issues])
                        for r in attempt.verifier_results
                    ),
                    key=lambda result: result[0],
                ),
            )
            for attempt in outcome.attempts
        ] + [outcome.final_decision]

    return shape(one) == shape(other)


def reader_speed(profile: Any, bundles: list[Any]) -> dict[str, Any]:
    """Milliseconds a page for the profile's page reader (its probabilities, nothing else) on the benchmark's
    pages and on the corpus's real ones (corpus/), each page read once after a pass over the others (a long
    run's token cache), the best of three; and the size of the reader's file."""
    from arbiter.reader.corpus import load_corpus
    from arbiter.reader.model import reader_for

    settings = profile.content.reader
    if settings is None:
        return {"error": "the profile names no page reader"}
    reader = reader_for(settings.model, settings.sha256)
    sets = {
        "bench_pages": [page.text for bundle in bundles for page in bundle.pages],
        "corpus_pages": [text for doc in load_corpus() for text in doc.pages],
    }
    out: dict[str, Any] = {"file_mb": round(Path(reader.origin).stat().st_size / 2**20, 2)}
    for name, texts in sets.items():
        for text in texts:
            reader.read(text)
        best = min(_time(reader.read, texts) for _ in range(3))  # type: ignore[arg-type]
        out[f"{name}_ms_per_page"] = round(best * 1000 / max(len(texts), 1), 3)
        out[f"{name}"] = len(texts)
        out[f"{name}_mean_chars"] = round(statistics.fmean(len(t) for t in texts)) if texts else 0
    out["target_ms_per_page_max"] = 0.5
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--defect-rate", type=float, default=0.1)
    args = parser.parse_args(argv)
    print(json.dumps(run(docs=args.docs, repeats=args.repeats, defect_rate=args.defect_rate), indent=2))


if __name__ == "__main__":
    main()
