"""Issue 28: a whole batch against a fake vLLM server on 127.0.0.1 serving a reasoning model (gpt-oss): every
answer carries `reasoning_content` and `reasoning` beside the answer's `content`, as vLLM documents it. The
server answers with the same scripted sample model that wrote the bundled replays, so the run must accept the
same documents as the replay path.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from arbiter.cli.main import app
from arbiter.llm.port import LLMRequest, RawCompletion
from arbiter.net import switch as network
from tests.conftest import FIXTURES

runner = CliRunner()
MODEL = "openai/gpt-oss-20b"
_DOC = re.compile(r'(?:document "|\(document )([A-Za-z0-9_.\-]+)')


def sample_model() -> Any:
    """fixtures/llm_samples.py's SampleModel: the scripted answers the bundled replays were written with."""
    spec = importlib.util.spec_from_file_location("llm_samples", FIXTURES / "llm_samples.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SampleModel()


class FakeVLLM(BaseHTTPRequestHandler):
    """GET /v1/models with max_model_len; POST /v1/chat/completions answered as a reasoning model."""

    model: ClassVar[Any] = None
    bodies: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *args: Any) -> None:  # no request lines on stderr
        return

    def _send(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send({"object": "list", "data": [{"id": MODEL, "object": "model", "max_model_len": 32_768}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        system, prompt = (m["content"] for m in body["messages"])
        found = _DOC.search(prompt)
        request = LLMRequest(
            purpose=body["response_format"]["json_schema"]["name"],
            model=body["model"],
            system=system,
            prompt=prompt,
            response_schema={},
            doc_id=found.group(1) if found else None,
        )
        if request.purpose == "check":  # the preflight's fixed answer
            answer = RawCompletion(text='{"ok": true, "echo": "arbiter-preflight"}')
        else:
            answer = type(self).model.complete(request)
        message = {
            "role": "assistant",
            "reasoning_content": "The user wants a JSON object; checking the pages first.",
            "reasoning": "The user wants a JSON object; checking the pages first.",
            "content": answer.text,
        }
        usage = {
            "prompt_tokens": answer.usage.input_tokens,
            "completion_tokens": answer.usage.output_tokens + 40,
        }
        self._send(
            {
                "model": MODEL,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": usage,
            }
        )


@pytest.fixture
def vllm(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The fake server on a free 127.0.0.1 port; network calls allowed to it only for this test."""
    FakeVLLM.model = sample_model()
    FakeVLLM.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeVLLM)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setattr(network, "ALLOW_NETWORK", True)
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def accepted(out: Path) -> set[str]:
    """The documents a run accepted, from its decisions."""
    docs = set()
    for path in out.glob("agent_outputs/*/arbiter_decision.json"):
        decision = json.loads(path.read_text())
        if decision["final_decision"] == "AUTO_ACCEPT":
            docs.add(path.parent.name)
    return docs


def test_a_reasoning_model_on_vllm_accepts_the_same_documents_as_the_replays(
    vllm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch with --llm openai against the fake vLLM (reasoning_content + content) decides like --llm replay."""
    folder = tmp_path / "in"
    folder.mkdir()
    for pdf in sorted((FIXTURES / "pdfs").glob("*.pdf"))[:10]:
        shutil.copy(pdf, folder / pdf.name)
    common = ["run", str(folder), "--classifications", str(FIXTURES / "demo"), "--workers", "2"]
    replayed = runner.invoke(app, [*common, "--llm", "replay", "--out", str(tmp_path / "replay")])
    assert replayed.exit_code == 0, replayed.output
    for name, value in {
        "ARBITER_OPENAI_BASE_URL": vllm,
        "ARBITER_OPENAI_SERVER": "vllm",
        "ARBITER_LLM_MODEL": MODEL,
        "ARBITER_LLM_RPM": "0",
    }.items():
        monkeypatch.setenv(name, value)
    served = runner.invoke(app, [*common, "--llm", "openai", "--out", str(tmp_path / "vllm")])
    assert served.exit_code == 0, served.output
    summary = json.loads(next((tmp_path / "vllm" / "runs").glob("*/summary.json")).read_text())
    assert summary["llm"]["errors"] == {}
    assert summary["llm"]["calls"] > 0
    assert accepted(tmp_path / "vllm") == accepted(tmp_path / "replay")
    assert accepted(tmp_path / "replay")
    checks = [body for body in FakeVLLM.bodies if body["response_format"]["json_schema"]["name"] == "check"]
    assert len(checks) == 1  # the preflight, then the documents
    for body in FakeVLLM.bodies:
        assert body["reasoning_effort"] == "low"
        assert body["max_tokens"] <= 32_768
        assert "maxLength" not in json.dumps(body["response_format"])
