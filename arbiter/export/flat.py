"""One CSV row per document: the ground truth flattened for a spreadsheet or a data frame.

Segments read `1-3:LAB_REPORT|4-5:CLINICAL_NOTE` (first-last page:dominant type, in stored order); the
mixture reads `LAB_REPORT=0.6|CLINICAL_NOTE=0.4` (types with a share above zero, rounded to 4 places, in
stored order). A value the classification lacks or holds in the wrong type shows as `?` in those strings
and as an empty cell elsewhere. Booleans are `true`/`false`; times are ISO 8601 UTC (`Z`). No document
text (evidence, reasoning, review notes) is written to the CSV.

No cell is a live spreadsheet formula: a text cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage
return (a document named `=HYPERLINK(...)`, a type `@SUM(1+1)`) is written with a leading `'` (OWASP's
advice for CSV injection), in every text column; numbers stay numbers.

Rows are built from the Arrow table of a batch (column-wise, no per-record objects); classifications kept
as JSON text (they did not fit the struct) are flattened from that text by the same helpers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from arbiter.export.arrow import JSON_SUFFIX

COLUMNS = (
    "doc_id",
    "version",
    "gt_id",
    "supersedes",
    "source",
    "created_at",
    "dominant_type",
    "number_of_segments",
    "segments",
    "document_mixture",
    "primary_dominant_type",
    "primary_agrees",
    "production_dominant_type",
    "production_agrees",
    "reviewer",
    "review_agrees_with_primary",
    "review_confidence",
    "review_seconds",
    "reason_codes",
    "final_decision",
    "semantic_checks",
    "policy_version",
    "pdf_sha256",
    "run_id",
)
GT = "ground_truth_classification"
PRIMARY = "primary_agent_classification"


# Formatting shared by the column-wise and the JSON paths -------------------------------------------------
def _page(value: Any) -> str:
    return str(value) if type(value) is int else "?"


def _name(value: Any) -> str:
    return value if isinstance(value, str) else "?"


def segment_label(start: Any, end: Any, dominant: Any) -> str:
    return f"{_page(start)}-{_page(end)}:{_name(dominant)}"


def _share(value: Any) -> str | None:
    """The share as text when it is a number above zero, else None (left out of the mixture string)."""
    if type(value) not in (int, float) or not value > 0:
        return None
    try:
        return format(round(float(value), 4), "g")
    except (OverflowError, ValueError):
        return "?"


def mixture_label(document_type: Any, share: Any) -> str | None:
    text = _share(share)
    return None if text is None else f"{_name(document_type)}={text}"


def _bool(value: Any) -> str:
    return "true" if value is True else ("false" if value is False else "")


def _iso(value: Any) -> str:
    if not isinstance(value, datetime):
        return ""
    return value.isoformat().replace("+00:00", "Z")


def _agrees(a: Any, b: Any) -> str:
    return _bool(a == b) if isinstance(a, str) and isinstance(b, str) and a and b else ""


# A classification held as a dict (the JSON path) ----------------------------------------------------------
def flatten_classification(data: Any) -> tuple[str, Any, str, str]:
    """(dominant_type, number_of_segments, segments, document_mixture) of any value; never raises."""
    if not isinstance(data, dict):
        return "", "", "", ""
    dominant = data.get("dominant_type")
    segments = data.get("segments")
    seg_list = [s for s in segments if isinstance(s, dict)] if isinstance(segments, list) else []
    declared = data.get("number_of_segments")
    count: Any = declared if type(declared) is int else (len(segments) if isinstance(segments, list) else "")
    seg_text = "|".join(
        segment_label(s.get("start_page"), s.get("end_page"), s.get("dominant_type")) for s in seg_list
    )
    mixture = data.get("document_mixture")
    labels = (
        mixture_label(e.get("document_type"), e.get("share"))
        for e in (mixture if isinstance(mixture, list) else [])
        if isinstance(e, dict)
    )
    return (dominant if isinstance(dominant, str) else ""), count, seg_text, "|".join(x for x in labels if x)


# Column-wise from Arrow -----------------------------------------------------------------------------------
def _field(arr: Any, name: str) -> Any:
    return pc.struct_field(arr, name)


def _joined(lists: Any, fields: Sequence[str], label: Any, positive: str | None = None) -> list[str]:
    """Per row, the labels of its list items joined by `|` ('' for none or a null list). With `positive`,
    items whose field of that name is not above zero are dropped before labelling (they label as None)."""
    values = lists.flatten()
    parents = pc.list_parent_indices(lists)
    if positive is not None:
        keep = pc.greater(_field(values, positive), 0)
        values, parents = pc.filter(values, keep), pc.filter(parents, keep)
    labels = [label(*item) for item in zip(*(_field(values, f).to_pylist() for f in fields), strict=True)]
    out = [""] * len(lists)
    for row, text in zip(parents.to_pylist(), labels, strict=True):
        if text:
            out[row] = f"{out[row]}|{text}" if out[row] else text
    return out


def _classification(table: pa.Table, name: str) -> tuple[list[Any], list[Any], list[str], list[str]]:
    arr = table.column(name).combine_chunks()
    dominant = _field(arr, "dominant_type").to_pylist()
    count = _field(arr, "number_of_segments").to_pylist()
    segments = _joined(_field(arr, "segments"), ("start_page", "end_page", "dominant_type"), segment_label)
    mixture = _joined(_field(arr, "document_mixture"), ("document_type", "share"), mixture_label, "share")
    for i, text in enumerate(table.column(name + JSON_SUFFIX).to_pylist()):
        if text is not None:
            dominant[i], count[i], segments[i], mixture[i] = flatten_classification(json.loads(text))
    return dominant, count, segments, mixture


def _review(table: pa.Table) -> tuple[list[Any], list[Any], list[Any], list[Any], list[str]]:
    arr = table.column("sme_review").combine_chunks()
    reviewer = _field(arr, "reviewer").to_pylist()
    agrees = _field(arr, "agrees_with_primary").to_pylist()
    confidence = _field(arr, "confidence").to_pylist()
    # Time per packet: the server stamps started_at with the claim's start and submitted_at with the submit.
    seconds = [
        _span(a, b)
        for a, b in zip(
            _field(arr, "started_at").to_pylist(), _field(arr, "submitted_at").to_pylist(), strict=True
        )
    ]
    codes = pc.fill_null(pc.binary_join(_field(arr, "reason_codes"), "|"), "").to_pylist()
    for i, text in enumerate(table.column("sme_review" + JSON_SUFFIX).to_pylist()):
        if text is not None:
            data = json.loads(text)
            data = data if isinstance(data, dict) else {}
            reviewer[i], agrees[i], confidence[i] = (
                data.get("reviewer"),
                data.get("agrees_with_primary"),
                data.get("confidence"),
            )
            seconds[i] = _span(_when(data.get("started_at")), _when(data.get("submitted_at")))
            raw = data.get("reason_codes")
            codes[i] = "|".join(c for c in raw if isinstance(c, str)) if isinstance(raw, list) else ""
    return reviewer, agrees, confidence, seconds, codes


def _when(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _span(started: Any, submitted: Any) -> float | None:
    """Seconds from start to submit, to the millisecond; None when either is missing or they disagree."""
    if not isinstance(started, datetime) or not isinstance(submitted, datetime):
        return None
    if (started.tzinfo is None) != (submitted.tzinfo is None) or submitted < started:
        return None
    return round((submitted - started).total_seconds(), 3)


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula, prefixed with `'`; anything else unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _number(value: Any) -> Any:
    if type(value) is float and not math.isfinite(value):
        return ""
    return value if type(value) in (int, float) else ""


def csv_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    """The CSV rows (COLUMNS order) of one exported batch."""

    def col(name: str) -> list[Any]:
        values: list[Any] = table.column(name).to_pylist()
        return values

    gt_dom, gt_count, gt_segments, gt_mixture = _classification(table, GT)
    primary_dom = _classification_dominant(table, PRIMARY)
    production = _field(
        table.column("production_classification").combine_chunks(), "dominant_type"
    ).to_pylist()
    reviewer, review_agrees, confidence, seconds, codes = _review(table)
    decision = _field(table.column("verification_summary").combine_chunks(), "final_decision").to_pylist()
    rows = []
    columns = zip(
        col("doc_id"),
        col("version"),
        col("gt_id"),
        col("supersedes"),
        col("ground_truth_source"),
        col("created_at"),
        gt_dom,
        gt_count,
        gt_segments,
        gt_mixture,
        primary_dom,
        production,
        reviewer,
        review_agrees,
        confidence,
        seconds,
        codes,
        decision,
        col("semantic_checks"),
        col("policy_version"),
        col("pdf_sha256"),
        col("run_id"),
        strict=True,
    )
    for (
        doc,
        ver,
        gt_id,
        sup,
        src,
        at,
        dom,
        n,
        segs,
        mix,
        pdom,
        prod,
        rev,
        ragr,
        conf,
        secs,
        rc,
        dec,
        checks,
        pol,
        sha,
        run,
    ) in columns:
        row = (
            doc,
            ver,
            gt_id,
            sup,
            src,
            _iso(at),
            dom,
            n,
            segs,
            mix,
            pdom if isinstance(pdom, str) else "",
            _agrees(pdom, dom),
            prod if isinstance(prod, str) else "",
            _agrees(prod, dom),
            rev if isinstance(rev, str) else "",
            _bool(ragr),
            _number(conf),
            _number(secs),
            rc,
            dec,
            checks or "",
            pol,
            sha,
            run,
        )
        rows.append(tuple(neutralise(v) for v in row))
    return rows


def _classification_dominant(table: pa.Table, name: str) -> list[Any]:
    dominant = _field(table.column(name).combine_chunks(), "dominant_type").to_pylist()
    for i, text in enumerate(table.column(name + JSON_SUFFIX).to_pylist()):
        if text is not None:
            dominant[i] = flatten_classification(json.loads(text))[0]
    return list(dominant)
