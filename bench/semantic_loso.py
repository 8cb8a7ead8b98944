"""Leave-one-source-out semantic benchmark: every quality figure measured on a source nothing was fitted on.

For each source of the evaluation corpus (corpus/sources/*, plus the project's own generated fixtures as
the source "arbiter-fixtures"), in turn:
1. the page reader is fitted on the pages of every OTHER source (arbiter/reader/train.fit; its temperature
   from out-of-source predictions of the other sources' pages), written to a temporary file and pinned in a
   copy of the profile ([content.reader]);
2. the held-out source's documents, alone and in packets of 2-4 (arbiter/reader/corpus), are rendered,
   ingested, and given their correct classification (its evidence: verbatim lines of each part);
3. bench/semantic.py's seven generators make consistent wrong answers of each; every answer, right and
   wrong, goes through the real chain (verify_with_retries) offline and with the sample model;
4. the baseline classifier answers each held-out item, judged against the truth and verified the same way.

The headline is the sum over folds (held out). The in-sample figure (the shipped reader, fitted on every
source, over the same items) is printed beside it and is never the figure to quote.

    .venv/bin/python bench/semantic.py --loso [--quick] [--only SOURCE ...] [--out FILE]
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from arbiter.contracts import DocumentBundle
from arbiter.contracts.profile import Profile, ReaderSettings, load_profile
from arbiter.ingest import ingest_pdf
from arbiter.reader import train
from arbiter.reader.corpus import Item, default_root, items, load_corpus, load_sources
from arbiter.reader.model import PACKAGED, reader_for
from arbiter.reader.starts import fit_starts
from arbiter.verifiers.content_lines import is_field
from arbiter.verifiers.textnorm import normalize_plain
from bench.semantic import (
    CONSISTENCY_CODES,
    Case,
    Chains,
    Ctx,
    Doc,
    Lines,
    _codes,
    _escalated,
    differences,
    fixture_docs,
    generate,
    truth_from_entry,
)
from bench.semantic_tally import add, same_mistakes, shares, summarise

QUICK_PER_SOURCE = 3  # --quick: this many single documents and one packet per source


def item_docs(corpus_items: list[Item], profile: Profile, tmp: Path) -> tuple[list[Doc], list[str]]:
    """Rendered items ingested, each with its correct classification; items with no usable evidence are named."""
    docs: list[Doc] = []
    skipped: list[str] = []
    for item in corpus_items:
        path = tmp / f"{item.id}.pdf"
        path.write_bytes(item.pdf)
        bundle = ingest_pdf(path, doc_id=item.id)
        if not isinstance(bundle, DocumentBundle):
            skipped.append(f"{item.id}: did not ingest ({bundle.message})")
            continue
        lines = Lines(bundle, profile)
        segments = []
        for part in item.parts:
            evidence: list[dict[str, Any]] = []
            for page in range(part.first, part.last + 1):
                # A correct answer quotes what shows the type: never an empty field's label or a bare line.
                candidates = [
                    line
                    for line in lines.of_page(page)
                    if not is_field(normalize_plain(line).strip(), heading_block=False)
                    and sum(len(w) >= 3 and w.isalpha() for w in line.split()) >= 2
                ]
                for line in candidates:
                    if len(evidence) >= 2:
                        break
                    words = [w.strip(".,:;()[]") for w in line.split()]
                    anchor = max(words, key=lambda w: (sum(c.isalpha() for c in w), -words.index(w)))
                    evidence.append({"page": page, "snippet": line, "anchor": anchor})
                if evidence:
                    break
            if not evidence:
                break
            segments.append(
                {
                    "start_page": part.first,
                    "end_page": part.last,
                    "dominant_type": part.doc.type,
                    "reasoning": f"{part.doc.type} from {part.doc.source} ({part.doc.id}).",
                    "evidence": evidence,
                }
            )
        if len(segments) != len(item.parts):
            skipped.append(f"{item.id}: a part has no verbatim line to quote as evidence")
            continue
        truth = truth_from_entry({"segments": segments}, bundle.doc_id, profile)
        docs.append(Doc(bundle.doc_id, item.source, path, bundle, truth))
    return docs, skipped


def _fold_profile(
    profile: Profile,
    data: dict[str, Any],
    path: Path,
    version: str,
    starts: dict[str, Any] | None = None,
    baseline: dict[str, Any] | None = None,
) -> Profile:
    import hashlib

    from arbiter.reader.starts import write_starts

    if baseline is not None and profile.baseline is not None and profile.baseline.reader is not None:
        base_path = path.with_name(path.stem + "-baseline.json")
        train.write_reader(baseline, base_path)
        pinned = profile.baseline.reader.model_copy(
            update={
                "model": str(base_path),
                "sha256": hashlib.sha256(base_path.read_bytes()).hexdigest(),
                "version": version,
            }
        )
        profile = profile.model_copy(
            update={"baseline": profile.baseline.model_copy(update={"reader": pinned})}
        )

    train.write_reader(data, path)
    settings = profile.content.reader
    base = settings.model_dump() if settings is not None else {}
    base.update(model=str(path), sha256=hashlib.sha256(path.read_bytes()).hexdigest(), version=version)
    if starts is not None:
        starts_path = path.with_name(path.stem + "-starts.json")
        write_starts(starts, starts_path)
        base.update(
            starts=str(starts_path), starts_sha256=hashlib.sha256(starts_path.read_bytes()).hexdigest()
        )
    content = profile.content.model_copy(update={"reader": ReaderSettings(**base)})
    return profile.model_copy(update={"content": content})


def _evaluate(docs: list[Doc], profile: Profile, tmp: Path, modes: tuple[str, ...] | None) -> dict[str, Any]:
    """Correct answers, wrong answers by kind and the baseline, verified with this profile."""
    from arbiter.classify import get_classifier
    from arbiter.classify.base import ClassificationError

    chains = Chains(profile, tmp)
    use = tuple(m for m in chains.modes() if modes is None or m in modes)
    rows: dict[str, Any] = {"correct": [], "wrong": [], "baseline": []}
    classifier = get_classifier("baseline")
    check = (
        reader_for(profile.content.reader.model, profile.content.reader.sha256)
        if profile.content.reader
        else None
    )
    for doc in docs:
        ctx = Ctx(profile, Lines(doc.bundle, profile))
        cases = [Case(doc.doc_id, doc.source, "correct", "the correct classification", doc.truth)]
        wrong, _bugs = generate(doc, ctx)
        for case in cases + wrong:
            for mode in use:
                outcome = chains.verify(case.data, doc.bundle, mode)
                case.decisions[mode] = outcome.final_decision
                case.reasons[mode] = outcome.escalation_reason
                if mode == "offline":
                    case.first_codes = _codes(outcome)
        rows["correct"] += cases
        rows["wrong"] += [c for c in wrong if not set(c.first_codes) & CONSISTENCY_CODES]
        try:
            produced = json.loads(classifier.classify(doc.bundle, profile).raw)
        except ClassificationError as exc:  # the primary gives no answer: the item goes to a person
            answer: dict[str, Any] = {
                "doc": doc.doc_id,
                "source": doc.source,
                "right": False,
                "wrong": f"no answer: {exc}",
            }
            answer.update({f"{m}_accepted": False for m in use} | dict.fromkeys(use, "NO_ANSWER"))
            rows["baseline"].append(answer)
            continue
        diff = differences(produced, doc.truth)
        answer = {"doc": doc.doc_id, "source": doc.source, "right": not diff}
        answer["pages_wrong"], answer["pages_check_same"] = same_mistakes(produced, doc, check)
        if diff:
            answer["wrong"] = diff
        for mode in use:
            outcome = chains.verify(produced, doc.bundle, mode)
            answer[mode] = str(outcome.final_decision)
            answer[f"{mode}_accepted"] = not _escalated(outcome)
        rows["baseline"].append(answer)
    rows["modes"] = use
    return rows


def run(
    quick: bool = False,
    only: tuple[str, ...] | None = None,
    modes: tuple[str, ...] | None = None,
    log: Callable[[str], None] | None = None,
    lexicons_too: bool | None = None,
    in_sample_too: bool = True,
) -> dict[str, Any]:
    say = log or (lambda _m: None)
    started = time.perf_counter()
    profile = load_profile()
    if lexicons_too is not None and profile.content.reader is not None:
        reader = profile.content.reader.model_copy(update={"lexicons_too": lexicons_too})
        profile = profile.model_copy(
            update={"content": profile.content.model_copy(update={"reader": reader})}
        )
    docs = load_corpus()
    if quick:  # a smoke run: a few documents of each source, so every step runs in seconds
        kept: dict[str, int] = defaultdict(int)
        small = []
        for doc in docs:
            if kept[doc.source] < QUICK_PER_SOURCE + 2:
                kept[doc.source] += 1
                small.append(doc)
        docs = small
    sources = load_sources(default_root())
    say(f"loso: {len(docs)} corpus documents from {len({d.source for d in docs})} sources")
    pages = train.corpus_pages(docs) + train.fixture_pages()
    say(f"loso: {len(pages)} training pages")
    held = train.out_of_source(pages, log=say)
    learned_baseline = profile.baseline is not None and profile.baseline.reader is not None
    held_words = train.out_of_source(pages, view=train.BASELINE_VIEW, log=say) if learned_baseline else None
    pairs = train.corpus_pairs(docs) if profile.content.reader and profile.content.reader.starts else []
    all_sources = sorted({p.source for p in pages})
    folds = [s for s in all_sources if only is None or s in only]
    by_source: dict[str, list[Item]] = defaultdict(list)
    for item in items([d for d in docs if d.source in folds]):  # rendered only where a fold reads them
        by_source[item.source].append(item)
    report_folds: dict[str, Any] = {}
    total: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="arbiter-loso-") as tmp_name:
        tmp = Path(tmp_name)
        fixture_list = fixture_docs() if train.FIXTURE_SOURCE in folds else []
        every_doc: list[Doc] = []
        for source in folds:
            t0 = time.perf_counter()
            others = [p for p in pages if p.source != source]
            mask = np.asarray([p.source != source for p in pages])
            temperature = train.fit_temperature(held.logits[mask], held.labels[mask])
            data = train.fit(others, temperature=temperature).data
            starts = fit_starts([p for p in pairs if p.source != source]) if pairs else None
            baseline = None
            if held_words is not None:  # the baseline's own reader, fitted on the other sources too
                words_t = train.fit_temperature(held_words.logits[mask], held_words.labels[mask])
                baseline = train.fit(others, view=train.BASELINE_VIEW, temperature=words_t).data
            fold_profile = _fold_profile(
                profile, data, tmp / f"reader-{source}.json", f"loso-{source}", starts, baseline
            )
            if source == train.FIXTURE_SOURCE:
                held_docs, skipped = fixture_list, []
            else:
                chosen = by_source[source]
                if quick:
                    singles = [i for i in chosen if not i.is_packet][:QUICK_PER_SOURCE]
                    chosen = singles + [i for i in chosen if i.is_packet][:1]
                held_docs, skipped = item_docs(chosen, profile, tmp)
            every_doc += held_docs
            rows = _evaluate(held_docs, fold_profile, tmp, modes)
            summary = summarise(rows)
            add(total, summary)
            report_folds[source] = {
                "items": len(held_docs),
                "packets": sum(len(d.truth["segments"]) > 1 for d in held_docs),
                "skipped": skipped,
                "licence": sources[source].licence if source in sources else "Apache-2.0 (this project)",
                **summary,
                "seconds": round(time.perf_counter() - t0, 1),
            }
            mode0 = rows["modes"][0]
            say(
                f"loso: {source}: wrong escalated {summary[mode0]['wrong']['escalated']}/{summary[mode0]['wrong']['cases']}, "
                f"correct escalated {summary[mode0]['correct']['escalated']}/{summary[mode0]['correct']['cases']}, "
                f"baseline right {summary[mode0]['baseline']['right']}/{summary[mode0]['baseline']['documents']} "
                f"({report_folds[source]['seconds']} s)"
            )
        # In sample, beside it (never the figure to quote): the shipped readers, fitted on every source.
        in_sample = summarise(_evaluate(every_doc, profile, tmp, modes)) if in_sample_too else None
    shares(total)
    page_report = train.report(held, train.fit_temperature(held.logits, held.labels))
    return {
        "benchmark": "semantic-loso",
        "mode": "quick" if quick else "full",
        "lexicons_too": bool(profile.content.reader and profile.content.reader.lexicons_too),
        "held_out": total,
        "in_sample_shipped_readers": in_sample,
        "reader_pages_held_out": page_report,
        "sources": {s: len({p.item for p in pages if p.source == s}) for s in all_sources},
        "page_types": dict(Counter(p.type for p in pages)),
        "folds": report_folds,
        "wall_time_s": round(time.perf_counter() - started, 1),
        "packaged_reader": str(PACKAGED),
    }
