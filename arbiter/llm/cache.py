"""Disk cache of model answers keyed by request hash, so that a re-run costs no calls.

Only the answer is stored (text, usage, model, finish reason), never the prompt: the less PHI on disk the better.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

from arbiter.atomic import write_json
from arbiter.contracts import TokenUsage
from arbiter.llm.port import RawCompletion

log = logging.getLogger(__name__)

_KEY = re.compile(r"[0-9a-f]{16,128}")
FORMAT = 1


class DiskCache:
    """root/<key[:2]>/<key>.json, written atomically; an unreadable entry is a miss, never an error."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, key: str) -> Path:
        if not _KEY.fullmatch(key):
            raise ValueError("cache keys are lowercase hex digests")
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> RawCompletion | None:
        path = self.path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("format") != FORMAT or data.get("key") != key:
                raise ValueError("not an entry for this key")
            return RawCompletion(
                text=str(data["text"]),
                usage=TokenUsage.model_validate(data.get("usage") or {}),
                model=str(data.get("model") or ""),
                finish_reason=data.get("finish_reason"),
            )
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning("llm cache entry %s unreadable (%s); treated as a miss", key[:12], type(exc).__name__)
            return None

    def put(self, key: str, completion: RawCompletion, model: str = "") -> Path:
        """Store one validated answer; `model` names the requested model when the backend reported none."""
        path = self.path(key)
        write_json(
            path,
            {
                "format": FORMAT,
                "key": key,
                "model": completion.model or model,
                "text": completion.text,
                "usage": completion.usage.model_dump(),
                "finish_reason": completion.finish_reason,
            },
        )
        return path
