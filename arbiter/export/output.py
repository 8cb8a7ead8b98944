"""An export's data files: the formats and their file names, and `Output`, one data file (JSONL, CSV or
Parquet) written under a temporary name beside its final one, then flushed, hashed and renamed into place (or
put whole into object storage), or discarded on a failure so no partial file is left under a final name.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
import pyarrow.parquet as pq

from arbiter.export.arrow import arrow_schema
from arbiter.export.flat import COLUMNS, csv_rows
from arbiter.outputs import Location

FORMATS = ("jsonl", "csv", "parquet")
FILE_NAMES = {"jsonl": "ground_truth.jsonl", "csv": "ground_truth.csv", "parquet": "ground_truth.parquet"}
PARQUET_COMPRESSION = "zstd"


class Output:
    """A data file written under a temporary name beside its final one (in `staging`, a local folder, when the
    final one is in object storage)."""

    def __init__(
        self,
        directory: Location,
        fmt: str,
        staging: Path | None = None,
        *,
        name: str | None = None,
        header: Sequence[str] = COLUMNS,
        schema: pa.Schema | None = None,
        to_csv: Callable[[pa.Table], list[tuple[Any, ...]]] | None = None,
    ) -> None:
        self.format = fmt
        self.path = directory / (name or FILE_NAMES[fmt])
        self._to_csv = to_csv
        where = staging if staging is not None else Path(str(directory))
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=where)
        os.close(fd)
        self.tmp = Path(tmp)
        self.rows = 0
        self._text: IO[str] | None = None
        self._csv: Any = None
        self._parquet: pq.ParquetWriter | None = None
        self._bytes: IO[bytes] | None = None
        if fmt == "jsonl":
            self._bytes = open(self.tmp, "wb")  # noqa: SIM115
        elif fmt == "csv":
            self._text = open(self.tmp, "w", encoding="utf-8", newline="")  # noqa: SIM115
            self._csv = csv.writer(self._text)
            self._csv.writerow(header)
        else:
            self._parquet = pq.ParquetWriter(
                self.tmp, schema or arrow_schema(), compression=PARQUET_COMPRESSION
            )

    def write(self, texts: list[bytes], table: pa.Table) -> None:
        if self.format == "jsonl":
            assert self._bytes is not None
            lines = [t if b"\n" not in t and b"\r" not in t else _one_line(t) for t in texts]
            if lines:
                self._bytes.write(b"\n".join(lines) + b"\n")
        elif self.format == "csv":
            self._csv.writerows((self._to_csv or csv_rows)(table))
        else:
            assert self._parquet is not None
            self._parquet.write_table(table)
        self.rows += len(texts) if self.format == "jsonl" else table.num_rows

    def close(self) -> None:
        if self._bytes is not None:
            self._bytes.close()
            self._bytes = None
        if self._text is not None:
            self._text.close()
            self._text = None
        if self._parquet is not None:
            self._parquet.close()
            self._parquet = None

    def commit(self) -> dict[str, Any]:
        """Flush to disk, hash, rename into place; the manifest entry."""
        self.close()
        digest = hashlib.sha256()
        with open(self.tmp, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
            os.fsync(handle.fileno())
        size = self.tmp.stat().st_size
        if isinstance(self.path, Path):
            os.replace(self.tmp, self.path)
        else:  # object storage: one whole PUT (multipart for a large file), then the local copy goes
            self.path.fs.put_file(str(self.tmp), self.path.path)
            self.tmp.unlink()
        return {
            "name": self.path.name,
            "format": self.format,
            "bytes": size,
            "rows": self.rows,
            "sha256": digest.hexdigest(),
        }

    def discard(self) -> None:
        try:
            self.close()
        finally:
            self.tmp.unlink(missing_ok=True)


def _one_line(text: bytes) -> bytes:
    """A payload whose JSON spans lines, re-serialised on one (JSON strings escape their newlines)."""
    return json.dumps(json.loads(text)).encode()
