"""Ground-truth export (DESIGN §9): the version in force per document (the newest, or the one in force at
a time) to JSONL, CSV and Parquet, with a manifest of counts, versions and file hashes.

    from arbiter.export import export_ground_truth, parse_as_of
    manifest = export_ground_truth(store, ["parquet"], Path("output/exports/jan"), as_of=parse_as_of("2026-02-01"))
"""

from arbiter.export.arrow import ExportError, arrow_schema, records_from_table
from arbiter.export.flat import COLUMNS as CSV_COLUMNS
from arbiter.export.writer import (
    FILE_NAMES,
    FORMATS,
    MANIFEST,
    default_dir,
    export_ground_truth,
    parse_as_of,
    parse_formats,
)

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


def read_parquet(path: str) -> list[dict[str, object]]:
    """An exported Parquet file read back as GroundTruthRecord-shaped dicts (small files: it loads them whole)."""
    import pyarrow.parquet as pq

    return records_from_table(pq.read_table(path))
