"""No test reaches the network: the session-wide switch is off and real backends honour it."""

from __future__ import annotations

import pytest

from arbiter.llm.port import LLMError, offline
from arbiter.net import switch as network
from arbiter.net.switch import NetworkDisabled


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
