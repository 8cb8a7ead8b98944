"""The production classifier's answers (`--production FILE`): CSV or JSONL of doc_id,dominant_type."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from arbiter.contracts import ProductionClassification
from arbiter.errors import InputError


def load_production(path: Path) -> dict[str, ProductionClassification]:
    """Read CSV (with a header) or JSONL; a malformed line is a clear error naming the line."""
    if not path.is_file():
        raise InputError(f"Production file {path} does not exist.")
    rows: list[tuple[int, dict[str, object]]] = []
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix.lower() in {".jsonl", ".ndjson", ".json"}:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path} line {number} is not valid JSON: {exc.msg}.") from exc
            if not isinstance(item, dict):
                raise InputError(f"{path} line {number} must be a JSON object with doc_id and dominant_type.")
            rows.append((number, item))
    else:
        reader = csv.DictReader(text.splitlines())
        missing = {"doc_id", "dominant_type"} - set(reader.fieldnames or [])
        if missing:
            raise InputError(
                f"{path} needs a header with doc_id,dominant_type (missing {', '.join(sorted(missing))})."
            )
        rows = [(number, dict(row)) for number, row in enumerate(reader, start=2)]
    result: dict[str, ProductionClassification] = {}
    for number, row in rows:
        doc_id, dominant = row.get("doc_id"), row.get("dominant_type")
        if not isinstance(doc_id, str) or not doc_id or not isinstance(dominant, str) or not dominant:
            raise InputError(f"{path} line {number} needs a non-empty doc_id and dominant_type.")
        result[doc_id] = ProductionClassification(doc_id=doc_id, dominant_type=dominant.strip())
    return result
