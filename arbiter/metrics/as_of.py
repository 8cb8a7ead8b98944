"""The "as of" time of a metrics figure, read once for the CLI (`arbiter metrics --as-of`, `arbiter policy`)
and the review app's metrics page alike."""

from __future__ import annotations

from datetime import UTC, datetime


def parse_time(value: str, now: datetime | None = None) -> datetime:
    """An ISO 8601 date or time read as `arbiter export --as-of` reads it, and not in the future (figures
    as of a time still to come could change). ValueError in plain words."""
    from arbiter.export import ExportError, parse_as_of  # pyarrow: loaded only when a time is read

    try:
        stamp = parse_as_of(value)
    except ExportError as exc:
        raise ValueError(str(exc)) from None
    if stamp > (now or datetime.now(UTC)):
        raise ValueError(f"--as-of {value.strip()} is in the future; leave it out for everything there is.")
    return stamp
