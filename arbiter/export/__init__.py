"""Ground-truth export (docs/design.md §9.2): the version in force per document (the newest, or the one in force at
a time) to JSONL, CSV and Parquet, with a manifest of counts, versions and file hashes.

    from arbiter.export import export_ground_truth, parse_as_of
    manifest = export_ground_truth(store, ["parquet"], Path("output/exports/jan"), as_of=parse_as_of("2026-02-01"))
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arbiter.export.arrow import ExportError, arrow_schema, records_from_table
from arbiter.export.flat import COLUMNS as CSV_COLUMNS
from arbiter.export.options import default_dir, parse_as_of, parse_formats
from arbiter.export.output import FILE_NAMES, FORMATS
from arbiter.export.writer import MANIFEST, export_ground_truth

__all__ = [
    "CSV_COLUMNS",
    "FILE_NAMES",
    "FORMATS",
    "MANIFEST",
    "ExportError",
    "arrow_schema",
    "default_dir",
    "export_ground_truth",
    "parse_as_of",
    "parse_formats",
    "read_parquet",
    "records_from_table",
]


def read_parquet(path: str | Path) -> Iterator[dict[str, Any]]:
    """An exported Parquet file read back, a row group at a time, as GroundTruthRecord-shaped dicts."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for batch in pq.ParquetFile(path).iter_batches():
        yield from records_from_table(pa.Table.from_batches([batch]))
