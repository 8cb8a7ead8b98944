"""No test reaches the network: the session-wide switch is off and real backends honour it."""

from __future__ import annotations

import httpx
import pytest

from arbiter.llm.config import LLMSettings
from arbiter.llm.openai_compat import OpenAICompatBackend
from arbiter.llm.port import LLMError, LLMRequest, offline
from arbiter.net import switch as network
from arbiter.net.switch import NetworkDisabled

REQUEST = LLMRequest(
    purpose="V2",
    model="local-model",
    system="s",
    prompt="p",
    response_schema={"type": "object", "properties": {}, "required": [], "additionalProperties": False},
)


def test_network_is_off_for_the_whole_test_session() -> None:
    """conftest switches real LLM calls off before any test runs."""
    assert network.ALLOW_NETWORK is False


def test_require_network_refuses_while_off() -> None:
    """A real request asking for the network gets NetworkDisabled, or the caller's own error (LLM: network_disabled)."""
    with pytest.raises(NetworkDisabled, match="so Google Document AI cannot be reached"):
        network.require_network("Google Document AI")
    with pytest.raises(LLMError) as caught:
        network.require_network("the gemini backend", offline)
    assert caught.value.kind == "network_disabled"
    assert "gemini" in caught.value.message


def test_a_request_goes_through_only_when_the_switch_is_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """With ALLOW_NETWORK on, require_network lets a real backend send its request (here to a local
    MockTransport) and the answer comes back; switched off, the same backend refuses and sends nothing."""
    sent: list[httpx.Request] = []

    def server(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        answer = {"choices": [{"message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}]}
        return httpx.Response(200, json=answer)

    settings = LLMSettings(backend="openai", openai_base_url="http://llm.local:8000/v1", model="local-model")
    backend = OpenAICompatBackend(settings, http_client=httpx.Client(transport=httpx.MockTransport(server)))
    with pytest.raises(LLMError) as caught:
        backend.complete(REQUEST)
    assert (caught.value.kind, sent) == ("network_disabled", [])
    monkeypatch.setattr(network, "ALLOW_NETWORK", True)
    assert backend.complete(REQUEST).text == "{}"
    assert len(sent) == 1
