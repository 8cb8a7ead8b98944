"""The held-out semantic benchmark's tallies (bench/semantic_loso.py runs the folds): each fold's cases summed
by mode and kind, the baseline's answers (right, accepted, wrong and accepted, per type) and the independence of
the baseline's reader from the check's (how many of its page mistakes the check's reader shares)."""

from __future__ import annotations

from typing import Any

from arbiter.contracts import FinalDecision
from arbiter.reader.corpus import TYPES
from arbiter.reader.model import PageReader
from bench.semantic import KINDS, Doc, _share


def page_types(data: dict[str, Any]) -> dict[int, str]:
    return {
        page: seg["dominant_type"]
        for seg in data["segments"]
        for page in range(seg["start_page"], seg["end_page"] + 1)
    }


def same_mistakes(produced: dict[str, Any], doc: Doc, check: PageReader | None) -> tuple[int, int]:
    """Independence, page by page: how many pages the baseline typed wrong, and on how many of those the
    content check's own reader makes the same mistake (reads the page as the baseline's wrong type)."""
    said, truth = page_types(produced), page_types(doc.truth)
    wrong = [p for p in doc.bundle.pages if said.get(p.page_num) != truth.get(p.page_num)]
    if check is None:
        return len(wrong), 0
    same = sum(check.read(p.text).best()[0] == said.get(p.page_num) for p in wrong)
    return len(wrong), same


def summarise(rows: dict[str, Any]) -> dict[str, Any]:
    modes: tuple[str, ...] = rows["modes"]
    out: dict[str, Any] = {}
    for mode in modes:
        wrong, correct = rows["wrong"], rows["correct"]
        esc = [c for c in wrong if c.decisions.get(mode) == FinalDecision.ESCALATE_TO_SME]
        right_esc = [c for c in correct if c.decisions.get(mode) == FinalDecision.ESCALATE_TO_SME]
        by_kind = {}
        for kind in KINDS:
            of_kind = [c for c in wrong if c.kind == kind]
            n = sum(c.decisions.get(mode) == FinalDecision.ESCALATE_TO_SME for c in of_kind)
            by_kind[kind] = {"cases": len(of_kind), "escalated": n, "share": _share(n, len(of_kind))}
        answers = rows["baseline"]
        out[mode] = {
            "wrong": {
                "cases": len(wrong),
                "escalated": len(esc),
                "share": _share(len(esc), len(wrong)),
                "by_kind": by_kind,
            },
            "correct": {
                "cases": len(correct),
                "escalated": len(right_esc),
                "share": _share(len(right_esc), len(correct)),
                "escalated_documents": {
                    c.doc_id: f"{c.reasons.get(mode)}: {', '.join(x for x in c.first_codes if not x.startswith('V1.'))}"
                    for c in right_esc
                },
            },
            "baseline": {
                "documents": len(answers),
                "right": sum(a["right"] for a in answers),
                "share_right": _share(sum(a["right"] for a in answers), len(answers)),
                "accepted": sum(bool(a[f"{mode}_accepted"]) for a in answers),
                "wrong_accepted": sum((not a["right"]) and a[f"{mode}_accepted"] for a in answers),
                "wrong_accepted_documents": [
                    f"{a['doc']}: {a['wrong']}" for a in answers if not a["right"] and a[f"{mode}_accepted"]
                ],
                "wrong_documents": [f"{a['doc']}: {a['wrong']}" for a in answers if not a["right"]][:80],
                "right_by_type": baseline_by_type(answers, rows),
                # Independence: of the pages the baseline typed wrong, the share the check's reader reads
                # the same wrong way (low is good: a check that shares the primary's mistakes misses them).
                "pages_wrong": sum(a.get("pages_wrong", 0) for a in answers),
                "pages_check_same_mistake": sum(a.get("pages_check_same", 0) for a in answers),
            },
            "missed": [
                f"{c.doc_id} | {c.kind} | {c.description}"
                for c in wrong
                if c.decisions.get(mode) != FinalDecision.ESCALATE_TO_SME
            ][:60],
        }
    return out


def baseline_by_type(answers: list[dict[str, Any]], rows: dict[str, Any]) -> dict[str, Any]:
    types = {c.doc_id: c.data["dominant_type"] for c in rows["correct"]}
    out: dict[str, Any] = {}
    for t in TYPES:
        mine = [a for a in answers if types.get(a["doc"]) == t]
        if mine:
            out[t] = f"{sum(a['right'] for a in mine)}/{len(mine)}"
    return out


def add(total: dict[str, Any], part: dict[str, Any]) -> None:
    for key, value in part.items():
        if isinstance(value, list):
            total.setdefault(key, []).extend(value)
        elif isinstance(value, dict):
            add(total.setdefault(key, {}), value)
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, int | float) and key not in ("share", "share_right"):
            total[key] = total.get(key, 0) + value
        elif isinstance(value, str) and "/" in value and key in TYPES:
            a, b = (int(x) for x in value.split("/"))
            c, d = (int(x) for x in total.get(key, "0/0").split("/"))
            total[key] = f"{a + c}/{b + d}"


def shares(total: dict[str, Any]) -> None:
    for value in total.values():
        if isinstance(value, dict):
            shares(value)
    if "cases" in total and "escalated" in total:
        total["share"] = _share(total["escalated"], total["cases"])
    if "documents" in total and "right" in total:
        total["share_right"] = _share(total["right"], total["documents"])
    if "pages_wrong" in total:
        total["pages_same_mistake_share"] = _share(total["pages_check_same_mistake"], total["pages_wrong"])
