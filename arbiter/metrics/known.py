"""Each reviewer's accuracy on known-answer packets (docs/design.md §9.7): a packet's first review is right when
its answer agrees with the adjudicated answer the packet was seeded from (`contracts/agreement.py`: segment page
ranges, the document's and each segment's type, the types present). Shown to admins only, with a Wilson 95 %
interval, from MIN_ANSWERS answers on."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arbiter.contracts import DEFAULT_KIND
from arbiter.contracts.agreement import differences
from arbiter.metrics.result import KnownAnswerAccuracy
from arbiter.metrics.stats import rate
from arbiter.store.models import ground_truth, known_answers, reviews

MIN_ANSWERS = 20


def accuracy(conn: Connection, as_of: datetime | None = None) -> list[KnownAnswerAccuracy]:
    """Per reviewer (by name), their first reviews of known-answer packets as of the time, right or not."""
    first = sa.select(reviews.c.packet_id, sa.func.min(reviews.c.id).label("id")).group_by(
        reviews.c.packet_id
    )
    if as_of is not None:
        first = first.where(reviews.c.created_at <= as_of)
    f = first.subquery("f")
    query = (
        sa.select(reviews.c.reviewer, reviews.c.answer, ground_truth.c.payload)
        .select_from(known_answers)
        .join(f, f.c.packet_id == known_answers.c.packet_id)
        .join(reviews, reviews.c.id == f.c.id)
        .join(ground_truth, ground_truth.c.gt_id == known_answers.c.gt_id)
        .where(ground_truth.c.answer_kind == DEFAULT_KIND)  # answers compare as medical classifications
        .order_by(reviews.c.id)
    )
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for reviewer, answer, truth in conn.execute(query):
        known = truth.get("ground_truth_classification") if isinstance(truth, dict) else None
        tally[reviewer][0] += not differences(known, answer)
        tally[reviewer][1] += 1
    return [
        KnownAnswerAccuracy(reviewer=name, answered=n, accuracy=rate(k, n), shown=n >= MIN_ANSWERS)
        for name, (k, n) in sorted(tally.items())
    ]
