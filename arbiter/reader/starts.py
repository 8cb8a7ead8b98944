"""Where a document starts: a learned reading of two consecutive pages (does the second begin a new document,
or continue the first?), for boundaries that no title or page numbering shows (faxed packets).

Named features of the pair, each readable:
- ``top:`` the words of the later page's first lines (a letterhead, "patient name", "dear", "re:");
- ``end:`` the words of the earlier page's last lines (a signature, "electronically signed", "sincerely");
- ``sim:`` how many words the two pages share (binned Jaccard), ``head:same`` when both open on the same line;
- ``num:`` the printed numbering: the later page numbered 1, a number that continues, the earlier one last;
- ``type:`` whether the page reader reads both pages as the same type, and how far apart (binned);
- ``fill:`` how far down the earlier page its body runs (binned): a page whose text stops halfway is where
  a document ended more often than one that runs to the bottom margin (headers, footers and page numbers
  left out).

A logistic model over them (fitted by ``fit_starts`` on the corpus packets; plain JSON like the page
reader: format ``arbiter-start-reader/1``). It never sees the primary's answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from arbiter.ingest.pagination import page_marks
from arbiter.reader.model import (
    ReaderError,
    check_pinned,
    load_cached,
    read_json_file,
    resolve,
    write_json_file,
)

FORMAT = "arbiter-start-reader/1"
_WORD = re.compile(r"[a-z][a-z'\-]*[a-z]")
EDGE_LINES = 4
_TRANSMISSION = ("fax", "from:", "to:", "transmission", "sent")


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.split("\n") if line.strip()]


@lru_cache(maxsize=64)
def _page(text: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """A page's non-empty lines and its set of words: each page is the later page of one pair and the
    earlier page of the next, so it is read once for both."""
    return tuple(_lines(text)), frozenset(_WORD.findall(text.lower()))


def _bin(value: float, edges: tuple[float, ...]) -> int:
    return next((i for i, edge in enumerate(edges) if value < edge), len(edges))


FILL_EDGES = (0.5, 0.7, 0.85)


def pair_features(
    before: str,
    after: str,
    before_probs: dict[str, float] | None,
    after_probs: dict[str, float] | None,
    before_fill: float | None = None,
) -> Iterator[tuple[str, str]]:
    """The named features of a pair of consecutive pages, with what each one saw."""
    (above, a), (below, b) = _page(before), _page(after)
    for line in below[:EDGE_LINES]:
        for word in dict.fromkeys(_WORD.findall(line.lower())):
            yield "top:" + word, line[:50]
    for line in above[-EDGE_LINES:]:
        for word in dict.fromkeys(_WORD.findall(line.lower())):
            yield "end:" + word, line[:50]
    if a and b:
        shared = len(a & b)
        share = shared / (len(a) + len(b) - shared)
        yield f"sim:{_bin(share, (0.08, 0.15, 0.25, 0.4))}", f"{share:.0%} of their words shared"
    if above and below and above[0] == below[0]:
        yield "head:same", f'both open on "{below[0][:40]}"'
    marks_before = page_marks(
        ((t, " ".join(t.lower().split())) for t in above[-6:] + above[:3]), list(_TRANSMISSION)
    )
    marks_after = page_marks(
        ((t, " ".join(t.lower().split())) for t in below[:3] + below[-6:]), list(_TRANSMISSION)
    )
    if any(m.number == 1 for m in marks_after):
        yield "num:first", "numbered as a first page"
    if any(y.number > 1 for y in marks_after):
        yield "num:later", "numbered as a later page"
    if any(m.total is not None and m.number == m.total for m in marks_before):
        yield "num:before-last", "the page before is numbered as a last page"
    if before_probs and after_probs:
        top_a = max(before_probs, key=lambda t: before_probs[t])
        top_b = max(after_probs, key=lambda t: after_probs[t])
        yield ("type:same" if top_a == top_b else "type:differ"), f"{top_a} then {top_b}"
        distance = sum(abs(before_probs.get(t, 0.0) - after_probs.get(t, 0.0)) for t in after_probs) / 2
        yield f"type:apart{_bin(distance, (0.1, 0.3, 0.6, 0.9))}", f"reader types {distance:.0%} apart"
    if not below:
        yield "empty:after", "the page has no text"
    if before_fill is not None:
        yield (
            f"fill:{_bin(before_fill, FILL_EDGES)}",
            f"the page before ends {before_fill:.0%} of the way down",
        )


@dataclass(frozen=True)
class Pair:
    """A pair of consecutive pages to learn from: does the later one start a document?"""

    source: str
    item: str
    page: int  # the later page
    before: str
    after: str
    starts: bool
    before_probs: dict[str, float] | None = None
    after_probs: dict[str, float] | None = None
    before_fill: float | None = None


class StartReader:
    """A calibrated logistic model: the probability that a page starts a new document, given the page before."""

    def __init__(self, data: dict[str, Any], *, origin: str = "") -> None:
        if data.get("format") != FORMAT:
            raise ReaderError(
                f"{origin or 'start reader'}: not an {FORMAT} file (format {data.get('format')!r})"
            )
        try:
            self.weights: dict[str, float] = {str(k): float(v) for k, v in data["features"].items()}
            self.bias = float(data["bias"])
            self.temperature = float(data.get("temperature", 1.0))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ReaderError(f"{origin or 'start reader'}: {type(exc).__name__}: {exc}") from None
        self.meta: dict[str, Any] = dict(data.get("trained", {}))
        self.version = str(data.get("version", ""))
        self.sha256 = ""

    @classmethod
    def load(cls, path: Path) -> StartReader:
        data, digest = read_json_file(path, "start reader")
        reader = cls(data, origin=str(path))
        reader.sha256 = digest
        return reader

    def probability(
        self,
        before: str,
        after: str,
        before_probs: dict[str, float] | None,
        after_probs: dict[str, float] | None,
        before_fill: float | None = None,
    ) -> tuple[float, list[str]]:
        """P(the later page starts a document) and what moved it most, strongest first."""
        seen: dict[str, str] = {}
        for feat, what in pair_features(before, after, before_probs, after_probs, before_fill):
            seen.setdefault(feat, what)
        z = self.bias + sum(self.weights.get(f, 0.0) for f in seen)
        z /= self.temperature
        p = 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))
        toward = 1.0 if p >= 0.5 else -1.0
        moved = sorted(
            ((self.weights.get(f, 0.0) * toward, what) for f, what in seen.items() if self.weights.get(f)),
            reverse=True,
        )
        said: list[str] = []
        for weight, what in moved:
            if weight <= 0.05 or what in said:
                continue
            said.append(what)
            if len(said) >= 3:
                break
        return p, said


def fit_starts(pairs: Sequence[Pair], *, c: float = 1.0, min_sources: int = 2) -> dict[str, Any]:
    """A start reader fitted on these pairs (features seen in at least `min_sources` sources)."""
    from collections import defaultdict

    import numpy as np
    from scipy.sparse import csr_matrix
    from sklearn.linear_model import LogisticRegression

    rows = [
        dict.fromkeys(
            f for f, _ in pair_features(p.before, p.after, p.before_probs, p.after_probs, p.before_fill)
        )
        for p in pairs
    ]
    sources: dict[str, set[str]] = defaultdict(set)
    for pair, found in zip(pairs, rows, strict=True):
        for feat in found:
            sources[feat].add(pair.source)
    vocab = sorted(f for f, s in sources.items() if len(s) >= min_sources)
    index = {f: i for i, f in enumerate(vocab)}
    r, cidx = [], []
    for n, found in enumerate(rows):
        for feat in found:
            if feat in index:
                r.append(n)
                cidx.append(index[feat])
    matrix = csr_matrix((np.ones(len(r)), (r, cidx)), shape=(len(pairs), len(vocab)))
    labels = np.asarray([int(p.starts) for p in pairs])
    model = LogisticRegression(C=c, max_iter=2000, class_weight="balanced")
    model.fit(matrix, labels)
    weights = {f: round(float(w), 4) for f, w in zip(vocab, model.coef_[0], strict=True) if abs(w) >= 1e-3}
    return {
        "format": FORMAT,
        "version": "",
        "bias": round(float(model.intercept_[0]), 4),
        "temperature": 1.0,
        "trained": {},
        "features": dict(sorted(weights.items())),
    }


def write_starts(data: dict[str, Any], path: Path) -> None:
    write_json_file(data, path)


def start_reader_for(model: str, sha256: str) -> StartReader:
    """The start reader a profile names, refused unless its file is exactly the one the profile pins."""
    path = resolve(model)
    reader = load_cached(path, "start reader", StartReader.load)
    check_pinned(reader.sha256, path, sha256, "start reader")
    return reader
