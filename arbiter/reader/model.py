"""The page reader at run time: a linear model over a page's named features, read from a JSON file.

The file (format ``arbiter-page-reader/1``) holds the document types, one line per feature with its
weight for each type, the biases and the temperature that calibrates the probabilities. No pickle: it is
plain JSON a reviewer can diff, and it is loaded with numpy only (fitting it needs scikit-learn:
arbiter/reader/train.py). The reader sees a page's text and nothing else: never the primary's answer.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np

from arbiter.errors import ConfigError
from arbiter.reader.features import _TOKENS, VIEWS, line_features, token_features

FORMAT = "arbiter-page-reader/1"
PACKAGED = Path(__file__).resolve().parent / "models"


class ReaderError(ConfigError):
    """A reader file that cannot be used."""


@dataclass(frozen=True)
class Reading:
    """The reader's view of one page: a calibrated probability per type."""

    probs: dict[str, float]
    words: int  # tokens read; a page with almost none says little

    def best(self) -> tuple[str, float]:
        name = max(self.probs, key=lambda t: self.probs[t])
        return name, self.probs[name]


def read_json_file(path: Path, what: str) -> tuple[dict[str, Any], str]:
    """A reader file's JSON and its sha256, or a ReaderError that says why not."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ReaderError(f"cannot read the {what} {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ReaderError(f"{path} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ReaderError(f"{path} is not a {what} file (not a JSON object)")
    return data, hashlib.sha256(raw).hexdigest()


def write_json_file(data: dict[str, Any], path: Path) -> None:
    """A reader file: its head, then one feature a line, sorted, so a change of weights reads as a diff."""
    head = {k: v for k, v in data.items() if k != "features"}
    lines = ["{", *(f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True)}," for k, v in head.items())]
    lines.append('  "features": {')
    feats = sorted(data["features"].items())
    for n, (name, weights) in enumerate(feats):
        comma = "," if n < len(feats) - 1 else ""
        lines.append(f"    {json.dumps(name, ensure_ascii=False)}: {json.dumps(weights)}{comma}")
    lines += ["  }", "}"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


class PageReader:
    """A calibrated linear page-type model."""

    def __init__(self, data: dict[str, Any], *, origin: str = "") -> None:
        if data.get("format") != FORMAT:
            raise ReaderError(f"{origin or 'reader'}: not an {FORMAT} file (format {data.get('format')!r})")
        try:
            self.types: tuple[str, ...] = tuple(data["types"])
            self.view_name = str(data.get("view", "full"))
            self.view = VIEWS[self.view_name]
            features: dict[str, list[float]] = data["features"]
            self.names: tuple[str, ...] = tuple(features)
            self.index = {name: i for i, name in enumerate(self.names)}
            weights = np.asarray([features[n] for n in self.names], dtype=np.float64)
            self.weights = weights.reshape(len(self.names), len(self.types))
            self.bias = np.asarray(data["bias"], dtype=np.float64)
            self.temperature = float(data.get("temperature", 1.0))
            self.meta: dict[str, Any] = dict(data.get("trained", {}))
        except (KeyError, TypeError, ValueError) as exc:
            raise ReaderError(f"{origin or 'reader'}: {type(exc).__name__}: {exc}") from None
        if self.bias.shape != (len(self.types),) or not self.temperature > 0:
            raise ReaderError(f"{origin or 'reader'}: biases or temperature do not fit its types")
        self.origin = origin
        self.version = str(data.get("version", ""))
        self._tokens: dict[str, tuple[array[int], str | None, str | None, bool]] = {}
        # Two words in a row, by the pair: no string is built per pair of a page.
        self._pairs: dict[tuple[str, str], int] = {}
        if "b" in self.view:
            for name, i in self.index.items():
                if name.startswith("b:") and " " in name:
                    left, right = name[2:].split(" ", 1)
                    self._pairs[(left, right)] = i
        self._pair_ids = frozenset(self._pairs.values())
        # The same pairs by their left word: a page's reading looks each one up without building a tuple.
        self._pairs_after: dict[str, dict[str, int]] = {}
        for (left, right), i in self._pairs.items():
            self._pairs_after.setdefault(left, {})[right] = i
        self._lock = threading.Lock()
        self._deltas: dict[str, np.ndarray] = {}

    # ------------------------------------------------------------------ loading
    @classmethod
    def load(cls, path: Path) -> PageReader:
        data, digest = read_json_file(path, "page reader")
        reader = cls(data, origin=str(path))
        reader.sha256 = digest
        return reader

    sha256: str = ""

    # ------------------------------------------------------------------ reading
    def _entry(self, token: str) -> tuple[array[int], str | None, str | None, bool]:
        """A token's feature indices (its word, pieces, shape and the pairs inside it), its first and last
        word (for the pairs it makes with its neighbours), and whether it holds a digit."""
        feats = token_features(token, self.view)
        index = self.index
        ids = [index[f] for f in feats if f in index]
        cores = [f[2:] for f in feats if f.startswith("w:")]
        if "b" in self.view:
            for left, right in pairwise(cores):
                i = index.get(f"b:{left} {right}")
                if i is not None:
                    ids.append(i)
        first, last = (cores[0], cores[-1]) if cores else (None, None)
        return array("q", ids), first, last, any(ch.isdigit() for ch in token)

    def _vector(self, text: str) -> tuple[np.ndarray, np.ndarray, int]:
        """The page's active feature indices and their values (log counts, L2-normalised)."""
        found, tokens = self._found(text)
        if not found:
            return np.zeros(0, dtype=np.int64), np.zeros(0), tokens
        # Sorted distinct ids and their counts: counted in place (a page's few thousand occurrences cost
        # np.unique a sort; the count array is as long as the highest index found, at most the vocabulary).
        counted = np.bincount(np.frombuffer(found, dtype=np.int64))
        ids_array = np.flatnonzero(counted)
        counts = counted[ids_array]
        values = np.log1p(counts)
        values /= math.sqrt(float(values @ values))
        return ids_array, values, tokens

    def _found(self, text: str) -> tuple[array[int], int]:
        """Every feature occurrence of the text, as indices (repeated as often as seen), and its tokens. The
        indices are machine integers from the start (a token's are copied as one block): turning a list of
        thousands of Python integers into an array cost a quarter of a page's reading."""
        cache = self._tokens
        found = array("q")
        extend, append = found.extend, found.append
        pairs_after = self._pairs_after
        after: dict[str, int] | None = None  # the pairs the previous word begins (None: it begins none)
        numeric = 0
        tokens = text.split()  # the tokens _TOKENS finds: str.split and re's \s agree on every character
        for token in tokens:
            entry = cache.get(token)
            if entry is None:
                entry = self._entry(token)
                if len(cache) > 100_000:
                    cache.clear()
                cache[token] = entry
            ids, first, last, digit = entry
            if ids:
                extend(ids)
            if digit:
                numeric += 1
            if first is None:
                after = None
                continue
            if after is not None:
                i = after.get(first)
                if i is not None:
                    append(i)
            after = pairs_after.get(last)  # type: ignore[arg-type]
        index = self.index
        for feat, _ in line_features(text, self.view, numeric, len(tokens)):
            i = index.get(feat)
            if i is not None:
                append(i)
        return found, len(tokens)

    def logits(self, text: str) -> tuple[np.ndarray, int]:
        ids, values, words = self._vector(text)
        return (values @ self.weights[ids] if len(ids) else np.zeros(len(self.types))) + self.bias, words

    def read(self, text: str) -> Reading:
        logits, words = self.logits(text)
        scaled = logits / self.temperature
        scaled -= scaled.max()
        exp = np.exp(scaled)
        probs = exp / exp.sum()
        return Reading({t: float(p) for t, p in zip(self.types, probs, strict=True)}, words)

    def contributions(self, text: str, toward: str, against: str | None = None) -> dict[int, float]:
        """Each feature on the page (by index) and how far it moved the reader toward one type rather than
        `against` (or the others' mean); empty for a type the reader does not know or a page with no feature."""
        if toward not in self.types:
            return {}
        t = self.types.index(toward)
        ids, values, _ = self._vector(text)
        if not len(ids):
            return {}
        rows = self.weights[ids]
        if against in self.types:
            delta = rows[:, t] - rows[:, self.types.index(against)]
        else:
            delta = rows[:, t] - (rows.sum(axis=1) - rows[:, t]) / max(len(self.types) - 1, 1)
        return dict(zip(ids.tolist(), (values * delta).tolist(), strict=True))

    def explain(self, text: str, toward: str, against: str | None = None, limit: int = 3) -> list[str]:
        """What on the page moved the reader toward one type (rather than `against`, or the others' mean):
        the printed words or lines with the largest contributions, strongest first."""
        contribution = self.contributions(text, toward, against)
        if not contribution:
            return []
        # Each feature credited to what the page printed where it first occurs, in reading order: a token's
        # word, pieces and shape to the token, two words in a row to the pair (the same as
        # features.page_features labels them, read from the tokens' cached entries, so a page's features are
        # not named again one by one).
        by_label: dict[str, float] = {}
        names, pairs, cache, pair_ids = self.names, self._pairs, self._tokens, self._pair_ids

        def credit(i: int, label: str) -> None:
            by_label[label] = by_label.get(label, 0.0) + contribution.pop(i)

        numeric = 0
        previous: str | None = None
        tokens = _TOKENS.findall(text)
        for token in tokens:
            entry = cache.get(token)
            if entry is None:
                entry = self._entry(token)
            token_ids, first, last, digit = entry
            numeric += digit
            shown: str | None = None  # the token as a label: the same for its word, pieces and shape
            for i in token_ids:
                if i not in contribution:
                    continue
                if i in pair_ids:
                    credit(i, _describe(names[i], names[i][2:]))
                    continue
                if shown is None:
                    shown = _describe("w:", token)
                credit(i, shown)
            if first is None:
                previous = None
                continue
            if previous is not None:
                pair = pairs.get((previous, first))
                if pair is not None and pair in contribution:
                    credit(pair, _describe(names[pair], names[pair][2:]))
            previous = last
        index = self.index
        for feat, seen in line_features(text, self.view, numeric, len(tokens)):
            found = index.get(feat)
            if found is not None and found in contribution:
                credit(found, _describe(feat, seen))
        ranked = sorted((v, k) for k, v in by_label.items() if v > 0.02)
        return [label for _, label in reversed(ranked[-limit:])]

    def line_scores(self, lines: Sequence[str], toward: str) -> list[float]:
        """How far each line on its own pulls the reader toward one type rather than the others' mean (the
        sum of its words', pairs' and heading's weights, over the root of their number): what a quoted line
        shows for the type."""
        if toward not in self.types:
            return [0.0] * len(lines)
        delta = self._deltas.get(toward)
        if delta is None:
            t = self.types.index(toward)
            others = (self.weights.sum(axis=1) - self.weights[:, t]) / max(len(self.types) - 1, 1)
            delta = self._deltas[toward] = self.weights[:, t] - others
        out: list[float] = []
        for line in lines:
            ids = self._found(line)[0]
            # Per square root of its features: a title's few strong words beat a long line of weak ones.
            picked = delta[np.frombuffer(ids, dtype=np.int64)] if ids else None
            out.append(float(picked.sum()) / math.sqrt(len(ids)) if picked is not None else 0.0)
        return out

    def describe(self) -> str:
        return f"page reader {self.version or '?'} ({len(self.names)} features, view {self.view_name})"


def _describe(feat: str, seen: str) -> str:
    kind = feat[:2]
    shown = " ".join(seen.split())[:40]
    if kind in ("w:", "c:"):
        return f'"{shown.strip(".,;:()")}"'
    if kind == "s:":
        return f'"{shown.strip(".,;:()")}"'
    if kind == "b:":
        return f'"{shown}"'
    if kind == "h:":
        return f'the line "{shown}"'
    return seen


_LOADED: dict[tuple[str, str, float], Any] = {}
_LOADED_LOCK = threading.Lock()
_T = TypeVar("_T")


def load_cached(path: Path, what: str, load: Callable[[Path], _T]) -> _T:
    """A reader file, loaded once per process (and again when the file changes)."""
    try:
        key = (what, str(path), path.stat().st_mtime)
    except OSError as exc:
        raise ReaderError(f"cannot read the {what} {path}: {exc.strerror or exc}") from None
    with _LOADED_LOCK:
        found = _LOADED.get(key)
    if found is None:
        found = load(path)
        with _LOADED_LOCK:
            if len(_LOADED) > 8:
                _LOADED.clear()
            _LOADED[key] = found
    return cast(_T, found)


def check_pinned(digest: str, path: Path, sha256: str, what: str) -> None:
    """Refuse a reader file that is not byte for byte the one a profile pins."""
    if digest != sha256:
        raise ReaderError(
            f"the {what} {path} is not the file this profile names (its sha256 is {digest[:12]}…, "
            f"the profile's {sha256[:12]}…): adopt it with `arbiter model adopt`, or restore the file"
        )


def load_reader(path: Path) -> PageReader:
    """A page reader file, loaded once per process (and again when the file changes)."""
    return load_cached(path, "page reader", PageReader.load)


def reader_for(model: str, sha256: str) -> PageReader:
    """The reader a profile names, refused unless its file is exactly the one the profile pins."""
    path = resolve(model)
    reader = load_reader(path)
    check_pinned(reader.sha256, path, sha256, "page reader")
    return reader


def resolve(name: str) -> Path:
    """A reader named in a profile: a file shipped in arbiter/reader/models/, or a path."""
    candidate = Path(name)
    if candidate.is_absolute() or candidate.parent != Path("."):
        return candidate
    return PACKAGED / name
