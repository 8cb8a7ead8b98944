"""Blind stays blind (docs/design.md §9.1): while a user holds a blind packet (AUDIT or SECOND_REVIEW) of a
document, no read made for that user shows another packet, review or ground-truth version of it. One SQL
predicate, used by every read that takes a `viewer`, so each page gets the rule from the database."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from arbiter.contracts import BLIND_KINDS
from arbiter.store.models import packets
from arbiter.store.packet_rows import IN_REVIEW

BLIND = tuple(sorted(kind.value for kind in BLIND_KINDS))
HIDDEN_MESSAGE = (
    "This document is hidden from you while you hold a blind review of it; it shows again once you have "
    "submitted or skipped that review."
)
_HELD = packets.alias("held_blind")


def held_blind(
    viewer: str, doc_id: sa.ColumnElement[Any], packet_id: sa.ColumnElement[Any] | None = None
) -> sa.ColumnElement[bool]:
    """True where `viewer` holds an open blind packet of the document (other than `packet_id` itself)."""
    held = _HELD.c
    conditions = [
        held.doc_id == doc_id,
        held.kind.in_(BLIND),
        held.status == IN_REVIEW,
        held.claimed_by == viewer,
    ]
    if packet_id is not None:
        conditions.append(held.packet_id != packet_id)
    return sa.exists().where(*conditions)


def visible_to(
    viewer: str | None, doc_id: sa.ColumnElement[Any], packet_id: sa.ColumnElement[Any] | None = None
) -> sa.ColumnElement[bool]:
    """The filter for a read made for `viewer` (None: an internal read, nothing hidden)."""
    if viewer is None:
        return sa.true()
    return ~held_blind(viewer, doc_id, packet_id)
