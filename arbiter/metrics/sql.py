"""Small helpers the metrics readers share: the as-of cut and streamed text statements."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arbiter.contracts import DEFAULT_KIND
from arbiter.store.models import UTCDateTime

BATCH = 5_000
KNOWN_ANSWER = "KNOWN_ANSWER"  # the kind the metrics give a known-answer packet's review (review/known.py)


_KIND_NAME = re.compile(r"^[a-z][a-z0-9-]{0,63}$")


def of_kind(column: str, kind: str = DEFAULT_KIND) -> str:
    """The row is of this answer kind (migration 0013's `answer_kind`; arbiter/kinds). The medical figures read
    only medical rows, the grounded-answer figures only answer rows. A kind is a registry name (checked here,
    so it is safe inline)."""
    if not _KIND_NAME.match(kind):
        raise ValueError(f"not an answer kind: {kind!r}")
    return f"{column} = '{kind}'"


def cut(column: str, as_of: datetime | None) -> str:
    """The as-of condition on a created_at column (always true without a time)."""
    return f"{column} <= :as_of" if as_of is not None else "1 = 1"


def bound(sql: str, as_of: datetime | None) -> sa.TextClause:
    """A text statement whose :as_of is converted like the store's timestamps (UTC, naive on SQLite)."""
    clause = sa.text(sql)
    if as_of is not None:
        clause = clause.bindparams(sa.bindparam("as_of", type_=UTCDateTime()))
    return clause


def params(as_of: datetime | None) -> dict[str, Any]:
    return {"as_of": as_of} if as_of is not None else {}


def stream(conn: Connection, sql: str, as_of: datetime | None) -> Any:
    """Rows of a statement fetched in batches (a server-side cursor on PostgreSQL)."""
    return conn.execution_options(stream_results=True, yield_per=BATCH).execute(
        bound(sql, as_of), params(as_of)
    )


def not_known(packet: str = "p") -> str:
    """The packet is not a known-answer packet (review/known.py): those measure reviewers, never the arbiter."""
    return f"NOT EXISTS (SELECT 1 FROM known_answers k WHERE k.packet_id = {packet}.packet_id)"
