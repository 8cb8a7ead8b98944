"""Drift alarms (docs/design.md §9.5): one-sided Bernoulli CUSUMs, per stratum (the classification's producer),
on the escalation rate, on the risk mix (the share of accepts whose risk score is at least the profile's
`[drift] high_risk`) and on the type mix (for each type, the share of the producer's documents that the
content check's page reader reads as that type: `documents.read_type`, run/worker.py `read_type`).

A chart is keyed (producer, test), or (producer, TYPE_MIX, type): every document with a read type is one
observation of each of its producer's type charts, an event for the type it reads as. Each observation compares
the chart with a baseline rate p0: its own rate in earlier runs when the producer has at least `min_history`
documents there, else the pooled rate of every producer so far, shrunk towards the profile's prior by
`prior_weight` pseudo-documents (for a type: an equal share of the types read so far). The CUSUM tests p0
against the shifted rate p1 whose odds are `shift_odds` times p0's: S ← max(0, S + log-likelihood ratio of the
outcome), an alarm when S reaches `threshold`. The alarm stands until S falls back to 0 (the stratum has
settled); while any stands, the producer's audit inclusion probability is multiplied by `audit_boost` (the
raised probability is the one recorded, so the weighted false-accept rate stays unbiased). Only counts are
kept, never a document's text.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from arbiter.contracts.sampling_profile import DriftPolicy

ESCALATION, RISK_MIX, TYPE_MIX = "escalation_rate", "risk_mix", "type_mix"
TESTS = (ESCALATION, RISK_MIX, TYPE_MIX)
UNKNOWN = "(unknown producer)"
NO_ALARM = "Drift: no alarm on any producer's escalation rate, risk mix or type mix."
Key = tuple[str, ...]  # (producer, test), or (producer, TYPE_MIX, type)


def stratum_of(classification: Any) -> str:
    """The producer named by a classification (its `producer.name`), or UNKNOWN."""
    producer = classification.get("producer") if isinstance(classification, dict) else None
    name = producer.get("name") if isinstance(producer, dict) else None
    return name.strip()[:128] if isinstance(name, str) and name.strip() else UNKNOWN


def step(p0: float, odds: float) -> tuple[float, float]:
    """The CUSUM increments (on an event, on a non-event) of p0 against the rate with `odds` times its odds."""
    p0 = min(1 - 1e-6, max(1e-6, p0))
    p1 = odds * p0 / (1 - p0 + odds * p0)
    return math.log(p1 / p0), math.log((1 - p1) / (1 - p0))


@dataclass
class Counts:
    n: int = 0
    events: int = 0

    def rate(self) -> float | None:
        return self.events / self.n if self.n else None


@dataclass(frozen=True)
class Alarm:
    """One alarm: which stratum and test moved, when (the monitor's document count), and by how much."""

    stratum: str
    test: str
    raised_at: int  # the n-th document of its run the monitor had seen
    run_id: str | None
    stratum_documents: int  # the stratum's observations under this test when it was raised
    rate: float  # the stratum's rate under this test since it was first seen
    baseline: float  # p0 when it was raised
    standing: bool  # still standing at the end (the stratum has not settled)
    read_type: str | None = None  # TYPE_MIX: the type whose share rose

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Chart:
    score: float = 0.0
    seen: Counts = field(default_factory=Counts)
    open: dict[str, Any] | None = None  # the alarm standing now, its fields so far
    opened: int = 0  # the monitor's document count when it was raised (alarms are listed in that order)


class DriftMonitor:
    """The CUSUMs of every stratum, fed one decided document at a time (thread-safe)."""

    def __init__(self, policy: DriftPolicy | None = None, run_id: str | None = None) -> None:
        self.policy = policy or DriftPolicy()
        self.run_id = run_id
        self.documents = 0  # every document observed
        self.run_documents = 0  # those of the current run (an alarm's raised_at)
        self._lock = threading.Lock()
        self._charts: dict[Key, _Chart] = {}
        self._pooled: dict[Key, Counts] = {}  # every producer's counts per key[1:] (test, and type)
        self._history: dict[Key, Counts] = {}  # earlier runs, per key
        self._types: set[str] = set()  # every type read so far (earlier runs and this one)
        self._standing: Counter[str] = Counter()  # alarms standing per stratum
        self._closed: list[tuple[int, Alarm]] = []  # (document count when raised, the settled alarm)

    def seed(self, history: dict[Key, tuple[int, int]]) -> None:
        """Earlier runs' (observations, events) per key, before the first observation: each stratum's own
        baseline. A producer's type-mix observations are its documents read, the same for every type; a type
        it never read may be left out (it counts as read 0 times of them)."""
        with self._lock:
            for key, (n, events) in history.items():
                self._history[key] = Counts(n, events)
                pooled = self._pooled.setdefault(key[1:], Counts())
                pooled.n, pooled.events = pooled.n + n, pooled.events + events
            read = {k[0]: c.n for k, c in self._history.items() if k[1] == TYPE_MIX}
            self._types |= {k[2] for k in self._history if k[1] == TYPE_MIX}
            for producer, n in read.items():
                for doc_type in self._types - {k[2] for k in self._history if k[:2] == (producer, TYPE_MIX)}:
                    self._history[(producer, TYPE_MIX, doc_type)] = Counts(n)
                    self._pooled[(TYPE_MIX, doc_type)].n += n

    def new_run(self, run_id: str | None) -> None:
        """A run boundary (replaying history): what was seen so far becomes the strata's own history."""
        with self._lock:
            for key, chart in self._charts.items():
                own = self._history.setdefault(key, Counts())
                own.n, own.events = own.n + chart.seen.n, own.events + chart.seen.events
                chart.seen = Counts()
            self.run_id = run_id
            self.run_documents = 0

    def _prior(self, key: Key) -> float:
        if key[1] == ESCALATION:
            return self.policy.prior_escalation_rate
        if key[1] == RISK_MIX:
            return self.policy.prior_high_risk_share
        return self.policy.prior_type_share

    def _baseline(self, key: Key) -> float:
        own = self._history.get(key)
        if own is not None and own.n >= self.policy.min_history:
            # One standard error above the producer's own rate: an estimate that happened to come out low
            # must not make its ordinary days look like drift.
            rate = (own.events + 0.5) / (own.n + 1.0)
            return min(1.0, rate + math.sqrt(rate * (1 - rate) / own.n))
        pooled = self._pooled.get(key[1:], Counts())
        weight = self.policy.prior_weight
        return (pooled.events + self._prior(key) * weight) / (pooled.n + weight)

    def _threshold(self, key: Key) -> float:
        """`new_threshold` (lower: closer scrutiny) for a new producer — one without `min_history` documents
        of its own in earlier runs while other producers have them; `threshold` otherwise (a producer with a
        track record, or any producer while nobody has one, as in a database's first run). A type-mix chart
        adds ln(k) for the k types followed: a producer's k charts then raise a false alarm about as often
        as one chart (a CUSUM's false alarms fall as e^-threshold)."""
        own = self._history.get(key)
        family = math.log(len(self._types)) if key[1] == TYPE_MIX and self._types else 0.0
        if own is not None and own.n >= self.policy.min_history:
            return self.policy.threshold + family
        earlier = sum(c.n for k, c in self._history.items() if k[1:] == key[1:])
        base = self.policy.new_threshold if earlier >= self.policy.min_history else self.policy.threshold
        return base + family

    def _update(self, key: Key, event: bool) -> None:
        chart = self._charts.setdefault(key, _Chart())
        p0 = self._baseline(key)
        up, down = step(p0, self.policy.shift_odds)
        chart.score = max(0.0, chart.score + (up if event else down))
        chart.seen.n += 1
        chart.seen.events += event
        pooled = self._pooled.setdefault(key[1:], Counts())
        pooled.n += 1
        pooled.events += event
        lowest = min(self.policy.threshold, self.policy.new_threshold)
        if chart.open is None and chart.score >= lowest and chart.score >= self._threshold(key):
            chart.opened = self.documents
            chart.open = {
                "stratum": key[0],
                "test": key[1],
                "raised_at": self.run_documents,
                "run_id": self.run_id,
                "stratum_documents": chart.seen.n,
                "rate": round(chart.seen.events / chart.seen.n, 4),
                "baseline": round(p0, 4),
                "read_type": key[2] if len(key) > 2 else None,
            }
            self._standing[key[0]] += 1
        elif chart.open is not None and chart.score <= 0.0:
            self._closed.append((chart.opened, Alarm(**chart.open, standing=False)))
            chart.open = None
            self._standing[key[0]] -= 1

    def _new_type(self, doc_type: str) -> None:
        """A type read for the first time: every document read before it was not read as it (a producer's
        type charts share one count of observations, its documents read)."""
        known = next(iter(self._types), None)
        self._types.add(doc_type)
        if known is None:
            return
        for key, chart in list(self._charts.items()):
            if key[1:] == (TYPE_MIX, known):
                self._charts[(key[0], TYPE_MIX, doc_type)] = _Chart(seen=Counts(chart.seen.n))
        for key, own in list(self._history.items()):
            if key[1:] == (TYPE_MIX, known):
                self._history[(key[0], TYPE_MIX, doc_type)] = Counts(own.n)
        self._pooled[(TYPE_MIX, doc_type)] = Counts(self._pooled[(TYPE_MIX, known)].n)

    def observe(
        self, stratum: str, *, escalated: bool, risk: float | None = None, read_type: str | None = None
    ) -> None:
        """One decided document of the stratum: escalated or not, for an accept its risk score, and the type
        the content check's page reader reads it as (None: not read, left out of the type mix)."""
        if not self.policy.enabled:
            return
        with self._lock:
            self.documents += 1
            self.run_documents += 1
            self._update((stratum, ESCALATION), escalated)
            if not escalated and risk is not None:
                self._update((stratum, RISK_MIX), risk >= self.policy.high_risk)
            if read_type is not None and self.policy.type_mix:
                if read_type not in self._types:
                    self._new_type(read_type)
                for doc_type in sorted(self._types):
                    self._update((stratum, TYPE_MIX, doc_type), doc_type == read_type)

    def standing(self, stratum: str) -> bool:
        """Whether an alarm (of any test) stands on the stratum now."""
        with self._lock:
            return self._standing[stratum] > 0

    def boost(self, stratum: str) -> float:
        """The factor on the stratum's audit inclusion probability: `audit_boost` while an alarm stands."""
        return self.policy.audit_boost if self.policy.enabled and self.standing(stratum) else 1.0

    def alarms(self) -> list[Alarm]:
        """Every alarm raised, in the order raised (by document, then stratum, test and type)."""
        with self._lock:
            open_ = [
                (c.opened, Alarm(**c.open, standing=True))
                for c in self._charts.values()
                if c.open is not None
            ]
            raised = [*self._closed, *open_]
        raised.sort(key=lambda a: (a[0], a[1].stratum, a[1].test, a[1].read_type or ""))
        return [alarm for _, alarm in raised]

    def summary(self) -> dict[str, Any]:
        """The run summary's `drift` entry: the alarms and the strata followed."""
        alarms = self.alarms()
        with self._lock:
            strata = sorted({k[0] for k in self._charts})
        return {
            "enabled": self.policy.enabled,
            "documents": self.documents,
            "strata": strata,
            "alarms": [a.to_dict() for a in alarms],
            "standing": sorted({a.stratum for a in alarms if a.standing}),
        }


def alarm_line(alarm: dict[str, Any] | Alarm) -> str:
    """The plain alarm sentence of the run summary and `arbiter metrics`."""
    a = alarm.to_dict() if isinstance(alarm, Alarm) else alarm
    what = {
        ESCALATION: "escalation rate",
        RISK_MIX: "share of high-risk accepts",
        TYPE_MIX: f"share of documents read as {a.get('read_type')}",
    }.get(a["test"], a["test"])
    state = "standing: its audits are raised" if a["standing"] else "settled since"
    where = f" in run {a['run_id']}" if a.get("run_id") else ""
    return (
        f"Drift alarm: producer {a['stratum']}'s {what} rose to {a['rate']:.0%} "
        f"(baseline {a['baseline']:.0%}) by document {a['raised_at']}{where}, "
        f"after {a['stratum_documents']} of its documents ({state})."
    )
