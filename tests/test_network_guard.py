"""No test reaches the network: the session-wide switch is off and real backends honour it."""

from __future__ import annotations

import pytest

from arbiter.llm import network
from arbiter.llm.port import LLMError


def test_network_is_off_for_the_whole_test_session() -> None:
    """conftest switches real LLM calls off before any test runs."""
    assert network.ALLOW_NETWORK is False


def test_require_network_refuses_while_off() -> None:
    """A real backend asking for the network gets network_disabled."""
    with pytest.raises(LLMError) as caught:
        network.require_network("gemini")
    assert caught.value.kind == "network_disabled"
