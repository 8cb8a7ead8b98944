"""The kinds of answer an account reviews (migration 0014, `user_kinds`): read in the registry's order, checked
against the registry (arbiter/kinds), and named in words for messages."""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arbiter.kinds import KINDS
from arbiter.store.models import user_kinds


def kind_words(answer_kind: str) -> str:
    """A kind's registry name as words: "grounded-answer" → "grounded answer"."""
    return answer_kind.replace("-", " ").replace("_", " ")


def reviewer_kinds(conn: Connection, name: str) -> tuple[str, ...]:
    """The kinds the account reviews, in the registry's order; () when it reviews every kind."""
    rows = conn.execute(sa.select(user_kinds.c.answer_kind).where(user_kinds.c.user_name == name)).scalars()
    return in_registry_order(rows)


def in_registry_order(kinds: Iterable[str]) -> tuple[str, ...]:
    order = {k: i for i, k in enumerate(KINDS)}
    return tuple(sorted(kinds, key=lambda k: (order.get(k, len(order)), k)))


def check_kinds(kinds: Iterable[str]) -> tuple[str, ...]:
    """Kind names checked against the registry (arbiter/kinds), each once, in the registry's order; a
    ValueError in plain words names an unknown one and the kinds there are."""
    wanted = [k.strip() for k in kinds if k.strip()]
    unknown = [k for k in wanted if k not in KINDS]
    if unknown:
        raise ValueError(
            f"There is no kind of answer named {unknown[0]!r}; the kinds are {', '.join(KINDS)}."
        )
    return tuple(k for k in KINDS if k in wanted)
