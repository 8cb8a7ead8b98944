"""Calibrated accepts (docs/design.md §9.6): the probability that an accept is right, as a function of its
recorded risk score, fitted by isotonic regression (decreasing in risk) on reviewed blind audits of accepts.

Documents are split once and for all by their PDF's hash: those in the held-out share are never fitted on, and
the expected calibration error (ECE) and the reliability diagram are measured on them. `arbiter metrics
calibrate` writes the fitted step function as plain JSON arrays (`risk`, `p_right`: the curve interpolates
linearly between them and is flat beyond the ends, as scikit-learn's predict does); `arbiter metrics` reads it
back and applies it with numpy alone. Known-answer packets are left out (they measure reviewers).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

import numpy as np
from sqlalchemy.engine import Connection

from arbiter.contracts.sampling_profile import CalibrationPolicy
from arbiter.metrics.result import Calibration, ReliabilityBin
from arbiter.metrics.sql import bound, cut, not_known, of_kind, params
from arbiter.metrics.stats import rate

FORMAT = "arbiter.calibration/1"
# Medical accepts only (the risk score is the medical one's).
_ACCEPT = f"d.final_decision = 'AUTO_ACCEPT' AND d.error IS NULL AND d.risk IS NOT NULL AND {of_kind('d.answer_kind')}"


@dataclass(frozen=True)
class AuditedAccept:
    """A reviewed blind audit of an accept: its risk score, whether the first review agreed, its PDF hash."""

    risk: float
    right: bool
    pdf_sha256: str


@dataclass(frozen=True)
class Curve:
    """A fitted curve: P(right) at the risk knots, linear between them, flat beyond."""

    risk: list[float]
    p_right: list[float]
    fitted_at: datetime | None = None
    train_audits: int = 0

    def __call__(self, risks: Any) -> np.ndarray:
        out: np.ndarray = np.interp(np.asarray(risks, dtype=float), self.risk, self.p_right)
        return out


def held_out(pdf_sha256: str, share: float) -> bool:
    """Whether the document is in the held-out share: a hash of its PDF's SHA-256, so the same document is held
    out at every fit and every measurement."""
    digest = hashlib.sha256(f"calibration|{pdf_sha256}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


def read_audits(conn: Connection, as_of: datetime | None = None) -> list[AuditedAccept]:
    """Every reviewed audit of an accept with a risk score, by its first review as of the time."""
    agrees = (
        "r.payload ->> '$.agrees_with_primary'"
        if conn.dialect.name == "sqlite"
        else ("r.payload ->> 'agrees_with_primary'")
    )
    sql = (
        f"SELECT d.risk, {agrees}, d.pdf_sha256 FROM packets p "
        "JOIN documents d ON d.doc_id = p.doc_id AND d.run_id = p.run_id "
        f"JOIN (SELECT packet_id, min(id) AS id FROM reviews WHERE {cut('created_at', as_of)} "
        "GROUP BY packet_id) f ON f.packet_id = p.packet_id JOIN reviews r ON r.id = f.id "
        f"WHERE p.kind = 'AUDIT' AND p.status <> 'SUPERSEDED' AND {_ACCEPT} AND {not_known()} "
        "ORDER BY p.packet_id"
    )
    return [
        AuditedAccept(float(risk), str(agreed).lower() in ("1", "true"), sha)
        for risk, agreed, sha in conn.execute(bound(sql, as_of), params(as_of))
    ]


def read_risks(conn: Connection, as_of: datetime | None = None) -> list[float]:
    """The risk score of every accept as of the time (each run's accept of a document is one accept)."""
    sql = f"SELECT d.risk FROM documents d WHERE {_ACCEPT} AND {cut('d.created_at', as_of)}"
    return [float(r) for (r,) in conn.execute(bound(sql, as_of), params(as_of))]


def split(audits: list[AuditedAccept], share: float) -> tuple[list[AuditedAccept], list[AuditedAccept]]:
    """(fitted on, held out)."""
    fit_on = [a for a in audits if not held_out(a.pdf_sha256, share)]
    return fit_on, [a for a in audits if held_out(a.pdf_sha256, share)]


def too_few_message(train: int, policy: CalibrationPolicy) -> str:
    return (
        f"Too few audits to calibrate: {train} reviewed audits of accepts outside the held-out share, "
        f"{policy.min_audits} needed. Nothing was fitted."
    )


def fit(audits: list[AuditedAccept], policy: CalibrationPolicy) -> Curve | None:
    """The isotonic fit of "the accept was right" on risk over the audits outside the held-out share; None
    when there are fewer than `min_audits` of them."""
    from sklearn.isotonic import IsotonicRegression

    train, _ = split(audits, policy.holdout_share)
    if len(train) < policy.min_audits:
        return None
    model = IsotonicRegression(increasing=False, y_min=0.0, y_max=1.0, out_of_bounds="clip")
    model.fit([a.risk for a in train], [float(a.right) for a in train])
    return Curve(
        risk=[float(x) for x in model.X_thresholds_],
        p_right=[float(y) for y in model.y_thresholds_],
        fitted_at=datetime.now(UTC),
        train_audits=len(train),
    )


def dumps(curve: Curve, policy: CalibrationPolicy, as_of: datetime | None, database: str) -> str:
    """The curve as the file's JSON text: plain arrays and what it was fitted on."""
    return json.dumps(
        {
            "format": FORMAT,
            "method": "isotonic",
            "feature": "risk",
            "target": "accept_right",
            "risk": curve.risk,
            "p_right": curve.p_right,
            "train_audits": curve.train_audits,
            "holdout_share": policy.holdout_share,
            "fitted_at": curve.fitted_at.isoformat() if curve.fitted_at else None,
            "as_of": as_of.isoformat() if as_of else None,
            "database": database,
        },
        indent=2,
    )


def loads(text: str) -> Curve:
    """A curve from the file's text; ValueError in plain words when it is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"not an Arbiter calibration file (format {FORMAT} expected)")
    risk, p = data.get("risk"), data.get("p_right")
    if not isinstance(risk, list) or not isinstance(p, list) or not risk or len(risk) != len(p):
        raise ValueError("risk and p_right must be two arrays of the same, non-zero length")
    try:
        xs, ys = [float(x) for x in risk], [float(y) for y in p]
    except (TypeError, ValueError):
        raise ValueError("risk and p_right must hold numbers") from None
    if any(b < a for a, b in pairwise(xs)) or not all(0.0 <= y <= 1.0 for y in ys):
        raise ValueError("risk must increase and p_right lie in [0, 1]")
    fitted = data.get("fitted_at")
    return Curve(
        xs,
        ys,
        datetime.fromisoformat(fitted) if isinstance(fitted, str) else None,
        int(data.get("train_audits", 0)),
    )


def _bins(curve: Curve, held: list[AuditedAccept], risks: list[float], count: int) -> list[ReliabilityBin]:
    predicted = curve([a.risk for a in held]) if held else np.array([])
    population = curve(risks) if risks else np.array([])
    edges = np.linspace(0.0, 1.0, count + 1)
    out = []
    for i in range(count):
        low, high = float(edges[i]), float(edges[i + 1])
        last = i == count - 1
        mask = (predicted >= low) & ((predicted <= high) if last else (predicted < high))
        in_pop = (population >= low) & ((population <= high) if last else (population < high))
        members = [a for a, m in zip(held, mask, strict=True) if m]
        out.append(
            ReliabilityBin(
                low=low,
                high=high,
                audits=len(members),
                predicted=float(predicted[mask].mean()) if members else None,
                observed=rate(sum(a.right for a in members), len(members)),
                accepts=int(in_pop.sum()),
            )
        )
    return out


def summarise(
    audits: list[AuditedAccept],
    risks: list[float],
    curve: Curve | None,
    policy: CalibrationPolicy,
    *,
    file: str | None = None,
    problem: str | None = None,
) -> Calibration:
    """The report's calibration: the curve applied to every accept and measured on the held-out audits."""
    train, held = split(audits, policy.holdout_share)
    base = Calibration(
        status="none",
        message="",
        file=file,
        audits=len(audits),
        train_audits=len(train),
        holdout_audits=len(held),
        min_audits=policy.min_audits,
        accepts=len(risks),
    )
    if problem is not None:
        return base.model_copy(
            update={"status": "invalid", "message": f"The calibration file {file} is unusable: {problem}."}
        )
    if curve is None:
        if len(train) < policy.min_audits:
            return base.model_copy(
                update={"status": "too_few", "message": too_few_message(len(train), policy)}
            )
        return base.model_copy(
            update={"message": f"No calibration fitted yet ({file}): run `arbiter metrics calibrate`."}
        )
    bins = _bins(curve, held, risks, policy.bins)
    ece = (
        sum(abs((b.predicted or 0.0) - (b.observed.rate or 0.0)) * b.audits for b in bins) / len(held)
        if held
        else None
    )
    mean = float(curve(risks).mean()) if risks else None
    return base.model_copy(
        update={
            "status": "fitted",
            "message": calibration_sentence(mean, len(risks), ece, len(held)),
            "fitted_at": curve.fitted_at,
            "mean_probability": mean,
            "expected_wrong": None if mean is None else (1.0 - mean) * len(risks),
            "ece": ece,
            "bins": bins,
        }
    )


def calibration_sentence(mean: float | None, accepts: int, ece: float | None, held: int) -> str:
    """One plain sentence: what the curve says of the accepts and how well it held."""
    said = (
        f"Of {accepts} accepts, an estimated {mean:.1%} are right (about {(1 - mean) * accepts:.0f} wrong)."
        if mean is not None
        else "No accept has a risk score yet."
    )
    held_text = (
        f" Expected calibration error {ece:.3f} on {held} held-out audits."
        if ece is not None
        else " No held-out audit yet to measure it on."
    )
    return said + held_text


def path_of(out_dir: str, policy: CalibrationPolicy, given: str | None = None) -> str:
    """The calibration file: the path given, else the profile's `file` (under the output folder unless absolute)."""
    if given:
        return given
    if policy.file.startswith("/") or "://" in policy.file:
        return policy.file
    return f"{out_dir.rstrip('/')}/{policy.file}"


def measure(conn: Connection, as_of: datetime | None, policy: CalibrationPolicy, file: str) -> Calibration:
    """The report's calibration from the file (when there is one) and the audits and accepts as of the time."""
    from arbiter.outputs import location

    curve, problem = None, None
    try:
        where = location(file)
        if where.exists():
            curve = loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        problem = str(exc)
    return summarise(
        read_audits(conn, as_of), read_risks(conn, as_of), curve, policy, file=file, problem=problem
    )
