"""The content reading in words: the cues a message quotes, and the per-page summary the model's prompts
quote (delimited there as untrusted data, since cues quote the document)."""

from __future__ import annotations

from collections.abc import Iterable

from arbiter.verifiers.content_reading import ContentReading, Cue


def describe_cues(items: Iterable[tuple[int, Cue]]) -> str:
    """'page 3: the heading "Final diagnosis"; page 4: a TNM stage ("pT2N0")'."""
    by_page: dict[int, list[str]] = {}
    for number, cue in items:
        by_page.setdefault(number, []).append(cue.describe())
    return "; ".join(f"page {number}: {', '.join(parts)}" for number, parts in sorted(by_page.items()))


def summary(reading: ContentReading, pages: Iterable[int], types: list[str], limit: int = 3) -> str:
    """What the content reading saw on each page, for a model's context: one line a page, its types by
    score with the strongest cues. The cues quote the document, so callers delimit it as untrusted."""
    lines: list[str] = []
    for number in pages:
        page = reading.pages.get(number)
        if page is None:
            continue
        if not page.readable:
            lines.append(f"page {number}: no readable text")
            continue
        learned = ""
        if page.probs is not None:
            top = sorted(page.probs, key=lambda t: -page.probs[t] if page.probs else 0.0)[:2]
            learned = "page reader " + ", ".join(f"{t} {page.probs[t]:.2f}" for t in top) + "; "
        ranked = sorted((t for t in types if page.scores.get(t)), key=lambda t: -page.scores[t])
        if not ranked:
            lines.append(f"page {number}: {learned}no heading, value or layout that points to a type")
            continue
        parts = []
        for doc_type in ranked:
            cues = ", ".join(c.describe() for c in page.cues_for(doc_type)[:limit])
            parts.append(f"{doc_type} {page.scores[doc_type]:.1f} ({cues})")
        numbering = "; numbered " + ", ".join(f'"{m.seen}"' for m in page.marks) if page.marks else ""
        title = f'; titled "{page.title_seen}"' if page.title_seen else ""
        lines.append(f"page {number}: {learned}" + "; ".join(parts) + title + numbering)
    return "\n".join(lines) or "no pages"
