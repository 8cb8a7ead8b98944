"""Who is signed in: a local account checked by password (argon2, in the store), or a name a trusted
reverse proxy put in a header that Streamlit's server.trustedUserHeaders maps into st.user.

In proxy mode the proxy must strip client-sent copies of the header; the name must still belong to an
active account in the store, which also gives the role (reviewer or admin), and — unless the operator says
otherwise (ARBITER_REVIEW_PROXY_PASSWORD_ACCOUNTS=1) — an account without a password: a local account's
name in a forged header must not stand in for its password.

Local sign-in is throttled per account (in the store, see arbiter.store.users) and per client (here, in the
app process): a client with more than CLIENT_FREE failures in CLIENT_WINDOW_S waits 1 s, 2 s, 4 s … (up
to a minute) between attempts, whatever names it tries.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from arbiter.review.settings import PROXY_USER_KEY


class UserDirectory(Protocol):
    def verify_password(self, name: str, password: str) -> Any: ...
    def get(self, name: str) -> Any: ...


@dataclass(frozen=True)
class SignedIn:
    name: str
    role: str
    via: Literal["password", "proxy"]

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


def sign_in(users: UserDirectory, name: str, password: str) -> SignedIn | None:
    """The user when the name and password match an active account, else None (one answer for both)."""
    name = name.strip()
    if not name or not password:
        return None
    account = users.verify_password(name, password)
    if account is None or not account.active:
        return None
    return SignedIn(account.name, account.role, "password")


CLIENT_FREE = 5
CLIENT_WINDOW_S = 900.0
CLIENT_MAX_DELAY_S = 60.0


@dataclass
class ClientThrottle:
    """Failed sign-ins per client (address) in this app process; thread-safe."""

    failures: dict[str, list[float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_s(self, client: str, now: float | None = None) -> float:
        """Seconds this client must still wait before its next attempt (0: go ahead)."""
        now = time.monotonic() if now is None else now
        with self.lock:
            recent = [t for t in self.failures.get(client, []) if now - t < CLIENT_WINDOW_S]
            self.failures[client] = recent
            if len(recent) < CLIENT_FREE:
                return 0.0
            delay = min(2.0 ** (len(recent) - CLIENT_FREE), CLIENT_MAX_DELAY_S)
            return max(0.0, recent[-1] + delay - now)

    def failed(self, client: str, now: float | None = None) -> None:
        with self.lock:
            self.failures.setdefault(client, []).append(time.monotonic() if now is None else now)

    def succeeded(self, client: str) -> None:
        with self.lock:
            self.failures.pop(client, None)


class ThrottledDirectory(Protocol):
    def attempt_sign_in(self, name: str, password: str, *, client: str = "", lock_after: int = 10) -> Any: ...
    def record_failed_sign_in(self, name: str, client: str, reason: str, *, lock_after: int = 10) -> bool: ...


def sign_in_checked(
    users: ThrottledDirectory,
    name: str,
    password: str,
    *,
    client: str,
    throttle: ClientThrottle,
    lock_after: int = 10,
) -> tuple[SignedIn | None, str | None]:
    """(the user, None) on success; (None, a plain message) otherwise. Throttled per client and per
    account, every failure audited."""
    name = name.strip()
    wait = throttle.wait_s(client)
    if wait > 0:
        # Counted against the account too, so hammering one account from one client still locks it.
        users.record_failed_sign_in(name, client, "client_throttled", lock_after=lock_after)
        whole = max(1, int(wait + 0.999))
        return (
            None,
            f"Too many failed sign-ins from here. Wait {whole} second{'s' if whole != 1 else ''} and try again.",
        )
    if not name or not password:
        return None, "Enter your user name and password."
    check = users.attempt_sign_in(name, password, client=client, lock_after=lock_after)
    account = check.user
    if account is None or not account.active:
        throttle.failed(client)
        return None, check.refusal or "The user name or password is not right."
    throttle.succeeded(client)
    return SignedIn(account.name, account.role, "password"), None


def from_proxy(
    users: UserDirectory,
    user_info: Mapping[str, Any],
    key: str = PROXY_USER_KEY,
    *,
    password_accounts: bool = False,
) -> SignedIn | None:
    """The user the trusted proxy header names, when it is an active account without a password (or any
    active account when the operator allows password accounts); else None."""
    name = proxy_name(user_info, key)
    if not name:
        return None
    account = users.get(name)
    if account is None or not account.active:
        return None
    if getattr(account, "has_password", False) and not password_accounts:
        return None
    return SignedIn(account.name, account.role, "proxy")


def proxy_name(user_info: Mapping[str, Any], key: str = PROXY_USER_KEY) -> str:
    raw = user_info.get(key)
    return raw.strip() if isinstance(raw, str) else ""


PROXY_PASSWORD_REFUSED = (
    "This account has a password, so it cannot sign in through the proxy. Ask an admin to use an account "
    "made with --no-password, or to set ARBITER_REVIEW_PROXY_PASSWORD_ACCOUNTS=1 when starting the app."
)


def trusted_headers_option(header: str, key: str = PROXY_USER_KEY) -> str:
    """The value of Streamlit's --server.trustedUserHeaders for one header (a JSON object)."""
    return json.dumps({header: key})
