"""What blind review keeps track of, in SQL (store/blind.py explains the rule): the blind packet kinds, and
whether a reviewer has seen an answer of a document (an `answer.seen` event in the audit log). Apart from
blind.py so that packet_rows.py (the claims) and blind.py (what a viewer may see) both use it without
importing each other."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from arbiter.contracts import BLIND_KINDS
from arbiter.store.models import audit_log

BLIND = tuple(sorted(kind.value for kind in BLIND_KINDS))
SEEN_ACTION = "answer.seen"


def seen_by(reviewer: sa.ColumnElement[Any], doc_id: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
    """SQL: `reviewer` has seen an answer of the document (an `answer.seen` event)."""
    a = audit_log.alias("seen_answer")
    return sa.exists().where(a.c.target == doc_id, a.c.actor == reviewer, a.c.action == SEEN_ACTION)
