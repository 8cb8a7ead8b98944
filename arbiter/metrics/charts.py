"""Inline SVG charts for the metrics report and the review app's Metrics page: horizontal bars with 95 %
interval whiskers, a confusion heat map, per-run trend lines and the calibration's reliability diagram. Strings
in, an <svg> string out; no scripts, no external files, every label escaped."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from arbiter.metrics.result import Confusion, Rate, ReliabilityBin

INK, MUTED, GRID = "#1f2933", "#616e7c", "#d9e2ec"
BAR, WHISKER = "#3e7cb1", "#102a43"
SERIES = ("#3e7cb1", "#d64545", "#2f8f4e", "#b7791f", "#6b46c1")
FONT = "font-family='system-ui, -apple-system, Segoe UI, sans-serif'"


@dataclass(frozen=True)
class Bar:
    label: str
    rate: Rate
    note: str = ""


def pct(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{100 * value:.{digits}f} %"


def _text(
    x: float, y: float, s: str, *, size: int = 12, anchor: str = "start", fill: str = INK, bold: bool = False
) -> str:
    weight = " font-weight='600'" if bold else ""
    return (
        f"<text x='{x:.1f}' y='{y:.1f}' font-size='{size}' text-anchor='{anchor}' fill='{fill}'{weight}>"
        f"{escape(s)}</text>"
    )


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' role='img' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' {FONT}><title>{escape(title)}</title>{''.join(body)}</svg>"
    )


def rate_bars(bars: Sequence[Bar], title: str, *, width: int = 720, label_width: int = 230) -> str:
    """One horizontal bar per rate (0–100 %), a whisker for its Wilson 95 % interval, and "k/n" beside it.
    A rate over nothing shows "no data" instead of a bar."""
    row, top = 26, 24
    plot = width - label_width - 150
    height = top + row * max(1, len(bars)) + 24
    body = [_text(0, 14, title, size=13, bold=True)]
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        x = label_width + plot * tick
        body.append(f"<line x1='{x:.1f}' y1='{top - 4}' x2='{x:.1f}' y2='{height - 20}' stroke='{GRID}'/>")
        body.append(_text(x, height - 6, f"{int(tick * 100)} %", size=10, anchor="middle", fill=MUTED))
    if not bars:
        body.append(_text(label_width, top + 16, "no data yet", fill=MUTED))
    for i, bar in enumerate(bars):
        y = top + i * row
        label = bar.label if len(bar.label) <= 34 else bar.label[:33] + "…"
        body.append(_text(label_width - 8, y + 15, label, anchor="end"))
        r = bar.rate
        counts = f"{r.k:,}/{r.n:,}" + (f" · {bar.note}" if bar.note else "")
        if r.rate is None or r.low is None or r.high is None:
            body.append(_text(label_width + 4, y + 15, f"no data ({counts})", fill=MUTED))
            continue
        w = plot * r.rate
        body.append(f"<rect x='{label_width}' y='{y + 4}' width='{w:.1f}' height='14' fill='{BAR}' rx='2'/>")
        lo, hi = label_width + plot * r.low, label_width + plot * r.high
        body.append(
            f"<line x1='{lo:.1f}' y1='{y + 11}' x2='{hi:.1f}' y2='{y + 11}' stroke='{WHISKER}' stroke-width='1.5'/>"
            f"<line x1='{lo:.1f}' y1='{y + 6}' x2='{lo:.1f}' y2='{y + 16}' stroke='{WHISKER}' stroke-width='1.5'/>"
            f"<line x1='{hi:.1f}' y1='{y + 6}' x2='{hi:.1f}' y2='{y + 16}' stroke='{WHISKER}' stroke-width='1.5'/>"
        )
        body.append(_text(label_width + plot + 8, y + 15, f"{pct(r.rate)}  ({counts})", size=11))
    return _svg(width, height, body, title)


def _shade(share: float) -> str:
    """White to deep blue by share (0..1)."""
    start, end = (247, 250, 252), (16, 74, 140)
    rgb = [round(a + (b - a) * share) for a, b in zip(start, end, strict=True)]
    return f"rgb({rgb[0]},{rgb[1]},{rgb[2]})"


def heatmap(
    matrix: Confusion, title: str, *, cell: int = 52, truth: str = "truth", predicted: str = "predicted"
) -> str:
    """Rows: truth; columns: prediction. Cells shaded by the share of their row, showing the count."""
    labels = matrix.labels
    if not labels:
        return _svg(
            420, 40, [_text(0, 14, title, size=13, bold=True), _text(0, 32, "no data yet", fill=MUTED)], title
        )
    left, top = 170, 150
    n = len(labels)
    width = max(left + cell * n + 110, 8 * len(title))  # room for the last rotated label and the title
    height = top + cell * n + 30
    body = [_text(0, 14, title, size=13, bold=True)]
    body.append(_text(left + cell * n / 2, 34, f"{predicted} →", size=11, anchor="middle", fill=MUTED))
    body.append(_text(8, top - 8, f"{truth} ↓", size=11, fill=MUTED))
    for j, label in enumerate(labels):
        x = left + j * cell + cell / 2
        short = label if len(label) <= 20 else label[:19] + "…"
        body.append(
            f"<text x='{x:.1f}' y='{top - 8}' font-size='11' fill='{INK}' "
            f"transform='rotate(-45 {x:.1f} {top - 8})'>{escape(short)}</text>"
        )
    for i, label in enumerate(labels):
        y = top + i * cell
        row = matrix.counts[i]
        total = sum(row)
        short = label if len(label) <= 24 else label[:23] + "…"
        body.append(_text(left - 8, y + cell / 2 + 4, short, size=11, anchor="end"))
        for j, count in enumerate(row):
            share = count / total if total else 0.0
            x = left + j * cell
            stroke = " stroke='#102a43' stroke-width='2'" if i == j else f" stroke='{GRID}'"
            body.append(
                f"<rect x='{x}' y='{y}' width='{cell}' height='{cell}' fill='{_shade(share)}'{stroke}>"
                f"<title>{escape(label)} → {escape(labels[j])}: {count} ({pct(share)} of the row)</title></rect>"
            )
            body.append(
                _text(
                    x + cell / 2,
                    y + cell / 2 + 4,
                    str(count),
                    size=11,
                    anchor="middle",
                    fill="#ffffff" if share > 0.55 else INK,
                )
            )
    return _svg(width, height, body, title)


def trend_lines(
    runs: Sequence[str], series: Sequence[tuple[str, Sequence[Rate]]], title: str, *, width: int = 720
) -> str:
    """One line per series over the runs (oldest left), a whisker per point for its 95 % interval; points
    over nothing are left out."""
    left, top, bottom, right = 50, 40, 70, 20
    height = 300
    plot_w, plot_h = width - left - right, height - top - bottom
    body = [_text(0, 14, title, size=13, bold=True)]
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        y = top + plot_h * (1 - tick)
        body.append(f"<line x1='{left}' y1='{y:.1f}' x2='{width - right}' y2='{y:.1f}' stroke='{GRID}'/>")
        body.append(_text(left - 6, y + 4, f"{int(tick * 100)} %", size=10, anchor="end", fill=MUTED))
    if not runs:
        body.append(_text(left + 8, top + 20, "no runs yet", fill=MUTED))
        return _svg(width, height, body, title)
    step = plot_w / max(1, len(runs) - 1) if len(runs) > 1 else 0.0

    def x_of(i: int) -> float:
        return left + (i * step if len(runs) > 1 else plot_w / 2)

    for i, run in enumerate(runs):
        short = run if len(run) <= 18 else "…" + run[-17:]
        x = x_of(i)
        body.append(
            f"<text x='{x:.1f}' y='{height - bottom + 16}' font-size='10' fill='{MUTED}' "
            f"transform='rotate(30 {x:.1f} {height - bottom + 16})'>{escape(short)}</text>"
        )
    for s, (name, rates) in enumerate(series):
        color = SERIES[s % len(SERIES)]
        points = [
            (x_of(i), top + plot_h * (1 - r.rate), r) for i, r in enumerate(rates) if r.rate is not None
        ]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in points)
            body.append(f"<polyline points='{path}' fill='none' stroke='{color}' stroke-width='2'/>")
        for x, y, r in points:
            if r.low is not None and r.high is not None:
                y_lo, y_hi = top + plot_h * (1 - r.low), top + plot_h * (1 - r.high)
                body.append(
                    f"<line x1='{x:.1f}' y1='{y_lo:.1f}' x2='{x:.1f}' y2='{y_hi:.1f}' stroke='{color}' opacity='0.6'/>"
                )
            body.append(
                f"<circle cx='{x:.1f}' cy='{y:.1f}' r='3.5' fill='{color}'><title>{escape(name)}: "
                f"{pct(r.rate)} ({r.k:,}/{r.n:,})</title></circle>"
            )
        lx = left + 10 + s * 170
        body.append(f"<rect x='{lx}' y='22' width='10' height='10' fill='{color}'/>")
        body.append(_text(lx + 14, 31, name, size=11))
    return _svg(width, height, body, title)


def reliability(bins: Sequence[ReliabilityBin], title: str, *, width: int = 560, height: int = 380) -> str:
    """The reliability diagram: each bin with held-out audits as a point at (its mean estimated probability of
    being right, the share of its audits that was right), sized by its audits, with the observed share's
    Wilson 95 % interval; the diagonal is a perfect calibration. The axes start at the lowest tenth any point
    or interval reaches, so accepts that are all likely right are not squeezed into a corner."""
    left, top, bottom, right = 60, 46, 50, 20
    plot_w, plot_h = width - left - right, height - top - bottom
    shown = [b for b in bins if b.audits and b.predicted is not None and b.observed.rate is not None]
    reached = [min(b.low, b.observed.low if b.observed.low is not None else b.low) for b in shown]
    lo = min(0.9, math.floor(10 * min(reached, default=0.0) + 1e-9) / 10)

    def x_of(p: float) -> float:
        return left + plot_w * (p - lo) / (1 - lo)

    def y_of(p: float) -> float:
        return top + plot_h * (1 - (max(lo, p) - lo) / (1 - lo))

    body = [
        _text(0, 14, title, size=13, bold=True),
        _text(
            0,
            31,
            "dot: a bin's held-out audits, with a 95 % interval · dashed: perfect calibration",
            size=11,
            fill=MUTED,
        ),
    ]
    step = 0.1 if 1 - lo <= 0.5 else 0.2
    ticks = [lo + step * k for k in range(round((1 - lo) / step) + 1)]
    for t in ticks:
        body.append(
            f"<line x1='{left}' y1='{y_of(t):.1f}' x2='{left + plot_w}' y2='{y_of(t):.1f}' stroke='{GRID}'/>"
        )
        body.append(
            f"<line x1='{x_of(t):.1f}' y1='{top}' x2='{x_of(t):.1f}' y2='{top + plot_h}' stroke='{GRID}'/>"
        )
        body.append(_text(left - 6, y_of(t) + 4, pct(t, 0), size=11, anchor="end", fill=MUTED))
        body.append(_text(x_of(t), top + plot_h + 16, pct(t, 0), size=11, anchor="middle", fill=MUTED))
    body.append(
        f"<line x1='{x_of(lo):.1f}' y1='{y_of(lo):.1f}' x2='{x_of(1):.1f}' y2='{y_of(1):.1f}' stroke='{MUTED}' "
        "stroke-dasharray='4 3'><title>perfect calibration</title></line>"
    )
    body.append(
        _text(left + plot_w / 2, height - 8, "estimated P(right)", size=12, anchor="middle", fill=MUTED)
    )
    y_label = top + plot_h / 2
    body.append(
        f"<text x='14' y='{y_label:.1f}' font-size='12' text-anchor='middle' fill='{MUTED}' "
        f"transform='rotate(-90 14 {y_label:.1f})'>observed share right</text>"
    )
    if not shown:
        body.append(_text(left + 8, top + 20, "no held-out audit yet", fill=MUTED))
    most = max((b.audits for b in shown), default=1)
    for b in shown:
        assert b.predicted is not None
        assert b.observed.rate is not None
        x, y = x_of(b.predicted), y_of(b.observed.rate)
        r = b.observed
        if r.low is not None and r.high is not None:
            body.append(
                f"<line x1='{x:.1f}' y1='{y_of(r.low):.1f}' x2='{x:.1f}' y2='{y_of(r.high):.1f}' "
                f"stroke='{WHISKER}' stroke-width='1.5'/>"
            )
        radius = 4 + 6 * math.sqrt(b.audits / most)
        body.append(
            f"<circle cx='{x:.1f}' cy='{y:.1f}' r='{radius:.1f}' fill='{BAR}' fill-opacity='0.8'>"
            f"<title>estimated {pct(b.predicted)}; observed {pct(r.rate)} ({r.k:,}/{r.n:,} held-out audits); "
            f"{b.accepts:,} accepts in the bin</title></circle>"
        )
        body.append(_text(x - radius - 4, y + 4, f"{r.k}/{r.n} right", size=12, anchor="end"))
    return _svg(width, height, body, title)
