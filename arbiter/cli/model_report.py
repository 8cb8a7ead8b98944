"""What `arbiter model` prints: the held-out figures of a candidate page reader as tables (text, never markup)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

out = Console()


def pct(value: Any) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def table(title: str, head: tuple[str, ...], rows: Sequence[Sequence[str]]) -> Table:
    table = Table(title=title)
    for name in head:
        table.add_column(name, overflow="fold")
    for row in rows:
        table.add_row(*(Text(v) for v in row))
    return table


def reasons(skipped: list[tuple[str, str]]) -> str:
    counts: dict[str, int] = {}
    for _, why in skipped:
        key = why.split(" (", 1)[0]
        counts[key] = counts.get(key, 0) + 1
    return "; ".join(f"{n} with {why}" for why, n in counts.items())


def print_train(result: dict[str, Any], shipped: str) -> None:
    corpus = result["corpus"]
    before, after = corpus["without_ground_truth"], corpus.get("with_ground_truth")
    types = list(before["per_type"])
    rows = [
        (t, pct(before["per_type"].get(t)), *([pct(after["per_type"].get(t))] if after else []))
        for t in types
    ]
    rows.append(("all pages", pct(before["accuracy"]), *([pct(after["accuracy"])] if after else [])))
    head = ("type", "without the reviewed pages", *(("with them",) if after else ()))
    out.print(table(f"Corpus, held out by source ({before['pages']} pages)", head, rows))
    gt = result.get("ground_truth")
    if gt:
        s, c = gt["shipped"], gt["candidate"]
        rows = [(t, pct(s["per_type"].get(t)), pct(c["per_type"].get(t))) for t in gt["pages_by_type"]]
        rows.append(("all pages", pct(s["accuracy"]), pct(c["accuracy"])))
        rows.append(
            (
                "documents read right on every page",
                pct(s["documents_all_right"]),
                pct(c["documents_all_right"]),
            )
        )
        title = f"Reviewed pages, held out in {gt['folds']} folds by document ({gt['documents']} documents, {s['pages']} pages)"
        out.print(table(title, ("type", f"shipped reader {shipped}", "candidate"), rows))
    for item in result.get("skipped", []):
        out.print(Text(f"left out: {item['doc_id']}: {item['why']}"))
    out.print(
        Text(
            f"Calibration error (held out): {result['calibration']['ece']:.3f}, temperature {result['temperature']}"
        )
    )
    out.print(Text(f"Wrote {result['file']} ({result['features']} features)\nsha256 {result['sha256']}"))
    out.print(Text(f"Try it on the recorded history: arbiter policy simulate --model {result['file']}"))
    out.print(Text(f"Adopt it: arbiter model adopt {result['file']} --out PROFILE.toml"))
    out.print(Text("  (then run with --profile PROFILE.toml)"))
