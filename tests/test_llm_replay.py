"""The replay backend: recordings keyed by request hash, written by live runs, read back without a network."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from llm_fakes import FakeBackend, completion

from arbiter.contracts import TokenUsage
from arbiter.llm.cache import DiskCache
from arbiter.llm.client import LLMClient
from arbiter.llm.config import LLMSettings
from arbiter.llm.factory import build_client
from arbiter.llm.port import LLMError, LLMRequest, RawCompletion
from arbiter.llm.replay import ReplayBackend, replay_path, write_replay

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
SECRET = "PATIENT JOHN ROE MRN 123456"


def request(prompt: str = f"<<<DOCUMENT>>> {SECRET} <<<END DOCUMENT>>>", purpose: Any = "V3") -> LLMRequest:
    return LLMRequest(
        purpose=purpose, model="gemini-2.5-flash", system="sys", prompt=prompt, response_schema=SCHEMA
    )


def test_round_trip(tmp_path: Path) -> None:
    """write_replay then ReplayBackend.complete returns the same completion."""
    raw = RawCompletion(
        text='{"ok": true}',
        usage=TokenUsage(input_tokens=12, output_tokens=3),
        model="m",
        finish_reason="STOP",
    )
    write_replay(tmp_path, request(), raw, note="recorded sample")
    assert ReplayBackend(tmp_path).complete(request()) == raw


def test_file_format_and_no_prompt(tmp_path: Path) -> None:
    """A recording is <key>.json with key, purpose, model, text, usage, finish_reason and note, and no prompt."""
    path = write_replay(tmp_path, request(), completion({"ok": True}), note="recorded sample")
    data = json.loads(path.read_text())
    assert path == replay_path(tmp_path, request()) == tmp_path / f"{request().key()}.json"
    assert set(data) == {"key", "purpose", "model", "text", "usage", "finish_reason", "note"}
    assert (data["key"], data["purpose"], data["note"]) == (request().key(), "V3", "recorded sample")
    assert SECRET not in path.read_text()


def test_miss_says_how_to_record(tmp_path: Path) -> None:
    """A missing recording raises replay_miss naming the purpose, key, directory and how to record one."""
    with pytest.raises(LLMError) as caught:
        ReplayBackend(tmp_path).complete(request())
    message = caught.value.message
    assert caught.value.kind == "replay_miss"
    assert request().key()[:12] in message
    assert str(tmp_path) in message
    assert "V3 request" in message
    assert f"ARBITER_LLM_RECORD_DIR={tmp_path}" in message
    assert SECRET not in message


def test_different_request_is_a_miss(tmp_path: Path) -> None:
    """A recording answers only the exact request it was made for."""
    write_replay(tmp_path, request(), completion({"ok": True}))
    with pytest.raises(LLMError) as caught:
        ReplayBackend(tmp_path).complete(request(prompt="another page"))
    assert caught.value.kind == "replay_miss"


@pytest.mark.parametrize("content", ["", "{broken", '{"key": "somebody-else", "text": "{}"}', "[1, 2]"])
def test_damaged_recording_is_a_replay_miss(tmp_path: Path, content: str) -> None:
    """A damaged or foreign recording fails as replay_miss, naming the file."""
    replay_path(tmp_path, request()).write_text(content)
    with pytest.raises(LLMError) as caught:
        ReplayBackend(tmp_path).complete(request())
    assert caught.value.kind == "replay_miss"
    assert str(tmp_path) in caught.value.message


def test_live_run_with_record_dir_records_replays(tmp_path: Path) -> None:
    """A client with record_dir writes each fresh answer as a replay that a replay run then serves."""
    record = tmp_path / "rec"
    live_settings = LLMSettings(backend="gemini", rpm=0, cache_dir=tmp_path / "c1", record_dir=record)
    live = LLMClient(
        FakeBackend([completion({"ok": True})]), live_settings, DiskCache(live_settings.cache_dir)
    )
    live.complete(request())
    env = {
        "ARBITER_LLM": "replay",
        "ARBITER_REPLAY_DIR": str(record),
        "ARBITER_LLM_CACHE_DIR": str(tmp_path / "c2"),
    }
    replayed = build_client(LLMSettings.from_env(env, rpm=0))
    assert replayed is not None
    response = replayed.complete(request())
    assert (response.data, response.cached) == ({"ok": True}, False)
    assert replayed.totals()["calls"] == 1


def test_cached_answers_are_not_recorded_again(tmp_path: Path) -> None:
    """Only fresh answers are recorded; a cache hit writes nothing to the record directory."""
    cache = DiskCache(tmp_path / "c")
    LLMClient(FakeBackend([completion({"ok": True})]), LLMSettings(rpm=0), cache).complete(request())
    record = tmp_path / "rec"
    LLMClient(FakeBackend(), LLMSettings(rpm=0, record_dir=record), cache).complete(request())
    assert not record.exists()
