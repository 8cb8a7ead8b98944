"""The what-if comparison as rows of plain text (the CLI table, the review app's panel) and as a
self-contained HTML page. Values from documents (doc_ids, reasons) are only ever escaped text."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from arbiter.metrics.result import Rate
from arbiter.metrics.text import rate_text

FLIP_SHOWN = 200


def _rate(data: dict[str, Any] | None) -> str:
    if not data:
        return "—"
    return rate_text(Rate(**{k: data.get(k) for k in ("k", "n", "rate", "low", "high")}))


def _load(data: dict[str, Any]) -> str:
    if data.get("per_1000") is None:
        return f"no documents ({data['k']:,} of {data['n']:,})"
    return (
        f"{data['per_1000']:,.1f} (95 % CI {data['low']:,.1f}–{data['high']:,.1f}; "
        f"{data['k']:,} of {data['n']:,} documents)"
    )


def _shares(side: dict[str, Any], key: str) -> dict[str, dict[str, Any]]:
    return {share["label"]: share["rate"] for share in side[key]}


def _weighted(data: dict[str, Any]) -> str:
    if data.get("rate") is None:
        missing = "; ".join(data.get("unknown_strata") or []) or "no accepted documents"
        return f"unknown (no reviewed documents in: {missing})"
    return (
        f"{data['rate'] * 100:.1f} % (95 % CI {data['low'] * 100:.1f}–{data['high'] * 100:.1f} %; "
        f"re-weighted from {data['k']:,} of {data['n']:,} reviewed)"
    )


def figure_rows(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(figure, current, candidate) rows, every rate with k, n and its Wilson interval."""
    cur, cand = report["current"], report["candidate"]
    rows: list[tuple[str, str, str]] = [
        (
            "policy",
            f"{cur['policy_version']} ({cur['profile']} {cur['version']})",
            f"{cand['policy_version']} ({cand['profile']} {cand['version']})",
        ),
    ]
    for key, prefix in (("decisions", "decision"), ("escalation_reasons", "escalation reason")):
        a, b = _shares(cur, key), _shares(cand, key)
        for label in [*a, *[x for x in b if x not in a]]:
            rows.append((f"{prefix}: {label}", _rate(a.get(label)), _rate(b.get(label))))
    rows.append(
        (
            "escalation packets per 1,000 documents",
            _load(cur["escalation_load"]),
            _load(cand["escalation_load"]),
        )
    )
    rows.append(
        (
            "blind review packets per 1,000 (expected from the sampling shares)",
            str(cur["expected_blind_packets_per_1000"]),
            str(cand["expected_blind_packets_per_1000"]),
        )
    )
    rows.append(
        (
            "false accepts (of accepted documents with SME ground truth)",
            _rate(cur["false_accepts"]),
            _rate(cand["false_accepts"]),
        )
    )
    rows.append(
        (
            "needless escalations (of escalated documents with SME ground truth)",
            _rate(cur["needless_escalations"]),
            _rate(cand["needless_escalations"]),
        )
    )
    audit = report["audit_false_accept"]
    rows.append(
        ("false-accept rate from blind audits", _rate(audit["current"]), _weighted(audit["candidate"]))
    )
    return rows


def strata_rows(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    """How the candidate's audit estimate is made: (group, documents accepted, reviewed false accepts)."""
    return [
        (s["label"], f"{s['documents']:,}", _rate(s["audit"]))
        for s in report["audit_false_accept"]["candidate"]["strata"]
    ]


def flip_rows(report: dict[str, Any], limit: int | None = FLIP_SHOWN) -> list[tuple[str, str, str, str, str]]:
    flips = report["flips"] if limit is None else report["flips"][:limit]
    return [(f["doc_id"], f["from"], f["to"], f["rule"], f["from_rule"] or "") for f in flips]


def headline(report: dict[str, Any]) -> list[str]:
    """Plain sentences above the table."""
    counts = report["flip_counts"]
    changed = ", ".join(report["changed_sections"]) or "nothing"
    rerun = ", ".join(report["reverified_verifiers"]) or "none (the stored issues were decided again)"
    paths = "; ".join(f"{n:,} {path}" for path, n in report["paths"].items())
    llm = report["llm_findings_needed"]
    lines = [
        f"{report['documents']:,} recorded documents"
        + (f" as of {report['as_of']}" if report.get("as_of") else "")
        + f": {len(report['flips']):,} would change decision ({counts['to_accept']:,} to accept, "
        f"{counts['to_escalate']:,} to escalate).",
        f"Sections that differ: {changed}. Verifiers re-run (rules only): {rerun}. No language-model call was made.",
        f"How each document was decided: {paths}.",
    ]
    if llm["count"]:
        names = ", ".join(llm["doc_ids"][:20]) + (" and more" if llm["count"] > 20 else "")
        lines.append(
            f"{llm['count']:,} document(s) would need language-model findings afresh (their recorded ones "
            f"were reused where they exist): {names}."
        )
    return lines


def _html_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    if not rows:
        return "<p>None.</p>"
    top = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{top}</tr></thead><tbody>{body}</tbody></table>"


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2rem;color:#222}table{border-collapse:collapse;margin:1rem 0}"
    "td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left;vertical-align:top}th{background:#f3f3f3}"
)


def render_html(report: dict[str, Any], changes: Sequence[str] = ()) -> str:
    """One self-contained page: headline, the profile diff, figures, the audit strata, every flip."""
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>Arbiter policy what-if</title>",
        f"<style>{_CSS}</style></head><body><h1>Policy what-if</h1>",
        *(f"<p>{escape(line)}</p>" for line in headline(report)),
        "<h2>What the candidate changes</h2>",
        "<ul>" + "".join(f"<li>{escape(c)}</li>" for c in changes) + "</ul>"
        if changes
        else "<p>No difference.</p>",
        "<h2>Current policy beside the candidate</h2>",
        _html_table(("figure", "current", "candidate"), figure_rows(report)),
        "<h2>Candidate's blind-audit estimate, by group</h2>",
        _html_table(("group", "accepted documents", "false accepts among the reviewed"), strata_rows(report)),
        f"<h2>Flips ({len(report['flips']):,})</h2>",
        _html_table(("doc_id", "from", "to", "candidate's rule", "current rule"), flip_rows(report, None)),
        "</body></html>",
    ]
    return "".join(parts)
