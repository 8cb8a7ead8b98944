"""Errors the review store raises; every message is plain English a reviewer or admin can act on."""

from __future__ import annotations

from arbiter.errors import ArbiterError, UserError


class StoreError(ArbiterError):
    """Base class for review-store errors."""


class ClaimLost(StoreError):
    """The packet is no longer claimed by this reviewer (expired, released, reassigned or completed)."""


class TooManyClaims(StoreError):
    """The reviewer already holds as many claims as allowed; the message says so."""


class NotIndependent(StoreError):
    """The reviewer holds or held another review of the document that must be independent of this one (the
    other half of a double review, an audit); the message says which."""


class UnknownPacket(StoreError):
    """No packet has this id."""


class UnknownUser(StoreError):
    """No user has this name."""


class PermissionDenied(StoreError):
    """The action needs an admin."""


class DuplicateUser(StoreError):
    """A user with this name already exists."""


class DatabaseUnavailable(StoreError, UserError):
    """The database did not answer (connection lost, server restarting, SQLite locked) for the whole retry
    budget; the message says which database, what it said, and what to do."""


class TooLarge(StoreError):
    """An input over one of the profile's size limits ([limits]: review notes, a reviewer's answer, a draft);
    the message says which, in one line, and nothing was written."""


class KindNotAllowed(StoreError):
    """The packet holds a kind of answer the reviewer does not review (an admin restricted their kinds); the
    message says which kinds they review."""
