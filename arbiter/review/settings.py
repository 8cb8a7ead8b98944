"""The review app's configuration, passed from `arbiter review` to the Streamlit process in environment
variables (Streamlit runs the app as a script, so there is no other channel)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Literal

from arbiter.outputs import is_url

AuthMode = Literal["local", "proxy"]
ENV_DB = "ARBITER_REVIEW_DB"
ENV_DOCS = "ARBITER_REVIEW_DOCS"
ENV_OUTPUT = "ARBITER_REVIEW_OUTPUT"
ENV_AUTH = "ARBITER_REVIEW_AUTH"
ENV_LEASE = "ARBITER_REVIEW_LEASE_MIN"
ENV_HEADER = "ARBITER_REVIEW_USER_HEADER"
ENV_DB_RETRY = "ARBITER_REVIEW_DB_RETRY_S"  # how long a page waits for the database before saying so (5 s)
ENV_LOCK_AFTER = "ARBITER_REVIEW_LOCK_AFTER"  # failed sign-ins in a row that lock an account (default 10)
ENV_SESSION_HOURS = "ARBITER_REVIEW_SESSION_HOURS"  # how long a sign-in lasts across reloads (default 12)
ENV_PROXY_PASSWORDS = (
    "ARBITER_REVIEW_PROXY_PASSWORD_ACCOUNTS"  # "1": proxy mode accepts accounts with a password
)
DEFAULT_HEADER = "X-Forwarded-User"
PROXY_USER_KEY = "arbiter_user"  # the st.user key server.trustedUserHeaders maps the header into


@dataclass(frozen=True)
class AppSettings:
    db_url: str | None = None  # None: DATABASE_URL, else output/arbiter.db (arbiter.store.resolve_url)
    docs_root: Path = Path(".")
    output_root: Path | None = None  # where bundles live; None: only docs_root
    output_url: str | None = None  # or the object storage a run wrote them to (`--out s3://…`)
    auth: AuthMode = "local"
    user_header: str = DEFAULT_HEADER
    lease_minutes: int = 30
    lock_after: int = 10
    db_retry_s: float = 5.0
    proxy_password_accounts: bool = False  # proxy mode signs in only accounts without a password unless True
    session_hours: int = 12  # a local sign-in survives reloads this long (a signed token in the URL)

    @property
    def session_ttl(self) -> timedelta:
        return timedelta(hours=self.session_hours)

    @property
    def lease(self) -> timedelta:
        return timedelta(minutes=self.lease_minutes)

    @property
    def roots(self) -> list[Path]:
        """Folders the app may read files from."""
        return [self.docs_root] + ([self.output_root] if self.output_root else [])

    @property
    def bundle_urls(self) -> tuple[str, ...]:
        """Object storage prefixes the app may read bundles from (the run's `--out` URL)."""
        return (self.output_url,) if self.output_url else ()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AppSettings:
        env = os.environ if env is None else env
        auth = env.get(ENV_AUTH, "local")
        if auth not in ("local", "proxy"):
            raise ValueError(f"{ENV_AUTH} must be local or proxy, not {auth!r}.")
        lease = env.get(ENV_LEASE, "30")
        if not lease.isdigit() or int(lease) < 1:
            raise ValueError(f"{ENV_LEASE} must be a whole number of minutes, not {lease!r}.")
        output = env.get(ENV_OUTPUT)
        lock_after = env.get(ENV_LOCK_AFTER, "10")
        if not lock_after.isdigit() or int(lock_after) < 1:
            raise ValueError(
                f"{ENV_LOCK_AFTER} must be a whole number of failed sign-ins, not {lock_after!r}."
            )
        hours = env.get(ENV_SESSION_HOURS, "12")
        if not hours.isdigit() or int(hours) < 1:
            raise ValueError(f"{ENV_SESSION_HOURS} must be a whole number of hours, not {hours!r}.")
        return cls(
            db_url=env.get(ENV_DB) or None,
            docs_root=Path(env.get(ENV_DOCS, ".")),
            output_root=Path(output) if output and not is_url(output) else None,
            output_url=output if output and is_url(output) else None,
            auth="proxy" if auth == "proxy" else "local",
            user_header=env.get(ENV_HEADER, DEFAULT_HEADER),
            lease_minutes=int(lease),
            lock_after=int(lock_after),
            db_retry_s=_seconds(env.get(ENV_DB_RETRY, "5")),
            proxy_password_accounts=env.get(ENV_PROXY_PASSWORDS, "") in ("1", "true", "yes"),
            session_hours=int(hours),
        )

    def to_env(self) -> dict[str, str]:
        env = {
            ENV_DOCS: str(self.docs_root),
            ENV_AUTH: self.auth,
            ENV_HEADER: self.user_header,
            ENV_LEASE: str(self.lease_minutes),
            ENV_LOCK_AFTER: str(self.lock_after),
            ENV_DB_RETRY: str(self.db_retry_s),
            ENV_SESSION_HOURS: str(self.session_hours),
        }
        if self.proxy_password_accounts:
            env[ENV_PROXY_PASSWORDS] = "1"
        if self.db_url:
            env[ENV_DB] = self.db_url
        if self.output_root or self.output_url:
            env[ENV_OUTPUT] = str(self.output_root or self.output_url)
        return env


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{ENV_DB_RETRY} must be a number of seconds, not {text!r}.") from None
    return max(0.5, value)
