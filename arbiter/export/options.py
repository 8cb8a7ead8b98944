"""An export's options as the command line gives them: the formats (`parse_formats`), the time it is as of
(`parse_as_of`, refused in the future by `refuse_future`), the default folder (`default_dir`), and times
written as ISO 8601 in UTC (`iso`).
"""

from __future__ import annotations

from datetime import UTC, datetime

from arbiter.export.arrow import ExportError
from arbiter.export.output import FORMATS
from arbiter.outputs import Location


def parse_formats(text: str) -> tuple[str, ...]:
    """'parquet', 'csv,jsonl' or 'all' → the formats in a fixed order; unknown names raise ExportError."""
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    if names == ["all"]:
        return FORMATS
    unknown = [n for n in names if n not in FORMATS]
    if unknown or not names:
        raise ExportError(
            f"--format must be jsonl, csv or parquet, several of them comma-separated, or all; got '{text}'."
        )
    return tuple(f for f in FORMATS if f in names)


def parse_as_of(text: str) -> datetime:
    """An ISO 8601 date or date-time as an aware UTC datetime: a date means 00:00 UTC that day, a time
    without a zone is UTC. Anything else raises ExportError with an example of what is accepted."""
    value = text.strip()
    if value[-1:] in ("Z", "z"):
        value = value[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ExportError(
            f"--as-of must be an ISO 8601 date or time such as 2026-01-05 or 2026-01-05T09:30:00Z "
            f"(a time without a zone is UTC); got '{text}'."
        ) from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def default_dir(root: Location, as_of: datetime | None, now: datetime) -> Location:
    """root/exports/as-of-20260105T093000Z, or root/exports/latest-<now> for the newest versions."""
    stamp = (as_of or now).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return root / "exports" / (f"as-of-{stamp}" if as_of else f"latest-{stamp}")


def refuse_future(as_of: datetime | None, now: datetime) -> None:
    """ExportError when `as_of` is after `now`: an export as of a time still to come could change."""
    if as_of is not None and as_of > now:
        raise ExportError(
            f"--as-of {iso(as_of)} is in the future; an export as of a time that has not come yet could "
            "still change. Leave --as-of out for the newest versions."
        )
