"""Who is signed in: a local account checked by password (argon2, in the store), or a name a trusted
reverse proxy put in a header that Streamlit's server.trustedUserHeaders maps into st.user.

In proxy mode the proxy must strip client-sent copies of the header; the name must still belong to an
active account in the store, which also gives the role (reviewer or admin).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from arbiter.review.settings import PROXY_USER_KEY


class UserDirectory(Protocol):
    def verify_password(self, name: str, password: str) -> Any: ...
    def get_user(self, name: str) -> Any: ...


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


def from_proxy(
    users: UserDirectory, user_info: Mapping[str, Any], key: str = PROXY_USER_KEY
) -> SignedIn | None:
    """The user the trusted proxy header names, when it is an active account; else None."""
    raw = user_info.get(key)
    name = raw.strip() if isinstance(raw, str) else ""
    if not name:
        return None
    account = users.get_user(name)
    if account is None or not account.active:
        return None
    return SignedIn(account.name, account.role, "proxy")


def trusted_headers_option(header: str, key: str = PROXY_USER_KEY) -> str:
    """The value of Streamlit's --server.trustedUserHeaders for one header (a JSON object)."""
    return json.dumps({header: key})
