"""The one switch every real request to a remote service checks first; tests/conftest.py turns it off."""

from __future__ import annotations

from collections.abc import Callable

from arbiter.errors import ServiceError

ALLOW_NETWORK: bool = True


class NetworkDisabled(ServiceError):
    """A real request was about to go out while the network is switched off (the whole test session)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def require_network(service: str, error: Callable[[str], Exception] = NetworkDisabled) -> None:
    """Raise `error(message)` (NetworkDisabled unless the caller names its own) when requests are switched
    off. `service` completes "so … cannot be reached", e.g. "the gemini backend"."""
    if not ALLOW_NETWORK:
        raise error(f"Network requests are switched off here, so {service} cannot be reached.")
