"""A database that refuses the first connection is a wrong --db, said at once; one that refuses after it
has answered is restarting, and is waited for (issue 29.2)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from arbiter.store import DatabaseUnavailable
from arbiter.store.db import Database

REFUSED = 'connection failed: connection to server at "127.0.0.1", port 1 failed: Connection refused'


def refused() -> None:
    raise sa.exc.OperationalError("SELECT 1", {}, Exception(REFUSED))


# (connected before, what the one line says, the least time spent on it)
CASES = [
    (False, "Nothing answers at", 0.0),
    (True, "did not answer for 0.4 s", 0.3),
]


@pytest.mark.parametrize(("reached", "said", "at_least"), CASES, ids=["never-answered", "answered-before"])
def test_a_refused_connection_is_waited_for_only_after_an_answer(
    tmp_path: Path, reached: bool, said: str, at_least: float
) -> None:
    """Refused before any connection: DatabaseUnavailable at once naming --db; after one: retried until
    the budget runs out."""
    db = Database(f"sqlite:///{tmp_path / 'a.db'}", retry_s=0.4)
    if reached:
        with db.read() as conn:
            conn.exec_driver_sql("SELECT 1")
    assert db.reached is reached
    started = time.monotonic()
    with pytest.raises(DatabaseUnavailable) as caught:
        db.with_retries(refused, what="schema check")
    took = time.monotonic() - started
    db.dispose()
    assert said in str(caught.value)
    assert "Connection refused" in str(caught.value)
    assert at_least <= took < 5
    if not reached:
        assert "--db or DATABASE_URL" in str(caught.value)
