"""The admin's Operations page logic: documents that could not be read, why in plain English, and the two
ways to close one (retry with a password, dismiss as not a medical record), each an Outcome the page
shows as is. The retry runs the normal pipeline (run/operations.py, passed in as `retrier` by the review app:
the review layer does not import the run layer); the password is never kept."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arbiter.errors import ArbiterError
from arbiter.outputs import Location
from arbiter.review.desk import DATABASE_AWAY, Outcome
from arbiter.review.documents import pdf_of
from arbiter.review.paths import PathRefused
from arbiter.review.queue_view import reason_label, waited
from arbiter.store import RESOLUTIONS, DatabaseUnavailable, Store, StoreError


def ops_rows(summaries: Iterable[Any], now: datetime | None = None) -> list[dict[str, Any]]:
    """Table rows for the operations lane (no document text: the file name and why it could not be read)."""
    now = now or datetime.now(UTC)
    return [
        {"Document": s.doc_id, "Why it could not be read": reason_label(s.reason), "Waiting": waited(s, now)}
        for s in summaries
    ]


@dataclass
class OpsDesk:
    store: Store
    admin: str
    docs_root: Path
    out_dir: Location  # a folder, or the object storage a run wrote to
    # arbiter.run.operations.retry, or a stand-in: (store, packet_id, *, admin, password, out_dir, pdf,
    # isolated) -> a result with `opened` and `message`
    retrier: Callable[..., Any]

    def dismiss(self, packet_id: str, resolution: str = "not_medical_record") -> Outcome:
        try:
            packet = self.store.operations.dismiss(packet_id, self.admin, resolution=resolution)
        except DatabaseUnavailable:
            return Outcome(False, DATABASE_AWAY)
        except (StoreError, ValueError) as exc:
            return Outcome(False, str(exc))
        return Outcome(True, f"{packet.doc_id} is closed: {RESOLUTIONS[resolution].lower()}.", packet=packet)

    def retry(self, packet_id: str, password: str) -> Outcome:
        """Run the document again with this password (the PDF confined to the documents folder)."""
        try:
            packet = self.store.queue.get(packet_id)
            pdf = pdf_of(packet, self.docs_root)
            # In this process (a Streamlit session thread, pypdfium2 under its lock): one PDF, no worker start.
            result = self.retrier(
                self.store, packet_id, admin=self.admin, password=password, out_dir=self.out_dir, pdf=pdf,
                isolated=False,
            )  # fmt: skip
        except DatabaseUnavailable:
            return Outcome(False, DATABASE_AWAY)
        except (PathRefused, ArbiterError) as exc:
            return Outcome(False, str(exc))
        return Outcome(result.opened, result.message)
