"""The replay backend: recorded answers stored as files named by request hash, for demos and tests.

A file replay_dir/<request.key()>.json holds {"key", "purpose", "model", "text", "usage", "finish_reason", "note"};
recordings are made by any real run with ARBITER_LLM_RECORD_DIR set (see LLMSettings.record_dir).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from arbiter.atomic import write_json
from arbiter.contracts import TokenUsage
from arbiter.llm.port import LLMError, LLMRequest, RawCompletion, check_finish


def replay_path(replay_dir: Path, request: LLMRequest) -> Path:
    return Path(replay_dir) / f"{request.key()}.json"


def write_replay(replay_dir: Path, request: LLMRequest, completion: RawCompletion, note: str = "") -> Path:
    """Store one answer for `request`; the prompt itself is not written (only its hash, as the file name)."""
    path = replay_path(replay_dir, request)
    write_json(
        path,
        {
            "key": request.key(),
            "purpose": request.purpose,
            "model": completion.model or request.model,
            "text": completion.text,
            "usage": completion.usage.model_dump(),
            "finish_reason": completion.finish_reason,
            "note": note,
        },
    )
    return path


def read_replay(path: Path) -> RawCompletion:
    """Load one recording; raise LLMError("replay_miss") when it cannot be used."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if path.stem != data["key"]:
            raise ValueError("file name and key differ")
        return RawCompletion(
            text=str(data["text"]),
            usage=TokenUsage.model_validate(data.get("usage") or {}),
            model=str(data.get("model") or ""),
            finish_reason=data.get("finish_reason"),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise LLMError(
            "replay_miss", f"The recorded response {path} cannot be used ({type(exc).__name__})."
        ) from None


class ReplayBackend:
    """Answers from files only: never touches the network, and a missing recording is an LLMError whose
    message says how to record one (it reaches the SME's findings and the run's summary: notes())."""

    name = "replay"

    def __init__(self, replay_dir: Path) -> None:
        self.replay_dir = Path(replay_dir)
        self._misses = 0
        self._lock = threading.Lock()

    def how_to_record(self) -> str:
        return (
            f"Record answers by running the same command with ARBITER_LLM=gemini (or openai) and "
            f"ARBITER_LLM_RECORD_DIR={self.replay_dir}."
        )

    def notes(self) -> list[str]:
        """For the run's summary (LLMClient.totals): how many requests had no recording, and what to do."""
        with self._lock:
            misses = self._misses
        if not misses:
            return []
        return [f"{misses} request(s) had no recorded answer in {self.replay_dir}. {self.how_to_record()}"]

    def folder_missing(self) -> str:
        return (
            f"The replay folder {self.replay_dir.resolve()} does not exist. Set ARBITER_REPLAY_DIR to a"
            " folder of recorded responses (unset, the sample answers that come with Arbiter are"
            " used), or record one with ARBITER_LLM_RECORD_DIR=DIR on a live run."
        )

    def complete(self, request: LLMRequest) -> RawCompletion:
        if not self.replay_dir.is_dir():
            self._missed()
            raise LLMError("replay_miss", self.folder_missing())
        path = replay_path(self.replay_dir, request)
        if not path.is_file():
            self._missed()
            raise LLMError(
                "replay_miss",
                f"No recorded response for this {request.purpose} request (key {request.key()[:12]}…) in"
                f" {self.replay_dir}. {self.how_to_record()}",
            )
        raw = read_replay(path)
        # a recording of a cut-short or blocked answer is no answer
        check_finish(raw.finish_reason, "recorded")
        return raw

    def _missed(self) -> None:
        with self._lock:
            self._misses += 1
