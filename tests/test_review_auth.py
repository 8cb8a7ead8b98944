"""Sign-in (local passwords, trusted proxy header), app settings and the launch command."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arbiter.review.auth import from_proxy, sign_in, trusted_headers_option
from arbiter.review.settings import AppSettings
from arbiter.review_app.launch import APP, streamlit_command
from arbiter.store import Store


@pytest.fixture(scope="module")
def accounts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The accounts, created once (each password costs an argon2 hash); every test gets its own copy."""
    path = tmp_path_factory.mktemp("accounts") / "a.db"
    store = Store(f"sqlite:///{path}")
    store.migrate()
    store.users.add("alice", "reviewer", "password-alice")
    store.users.add("root", "admin", "password-root")
    store.users.add("proxied", "reviewer", None)
    store.users.add("proxyroot", "admin", None)
    store.users.add("gone", "reviewer", "password-gone")
    store.users.set_active("gone", False, actor="root")
    store.dispose()
    return path


@pytest.fixture(name="store")
def store_fixture(accounts: Path, tmp_path: Path) -> Iterator[Store]:
    shutil.copy(accounts, tmp_path / "a.db")
    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    yield store
    store.dispose()


@pytest.mark.parametrize(
    ("name", "password", "who"),
    [
        ("alice", "password-alice", ("alice", "reviewer")),
        (" root ", "password-root", ("root", "admin")),
        ("alice", "wrong-password", None),
        ("nobody", "password-alice", None),
        ("gone", "password-gone", None),
        ("proxied", "anything-at-all", None),
        ("", "", None),
    ],
)
def test_local_sign_in(store: Store, name: str, password: str, who: tuple[str, str] | None) -> None:
    """Only an active account with its right password signs in; proxy-only accounts cannot."""
    user = sign_in(store.users, name, password)
    assert (None if user is None else (user.name, user.role)) == who


@pytest.mark.parametrize(
    ("info", "who"),
    [
        ({"arbiter_user": "proxied"}, "proxied"),
        ({"arbiter_user": " proxyroot "}, "proxyroot"),
        ({"arbiter_user": "root"}, None),  # an account with a password: refused through the proxy
        ({"arbiter_user": "mallory"}, None),
        ({"arbiter_user": "gone"}, None),
        ({"arbiter_user": None}, None),
        ({"email": "test@example.com"}, None),
    ],
)
def test_proxy_header_names_an_active_account(store: Store, info: dict[str, object], who: str | None) -> None:
    """The header's name must be an active account without a password; anything else is not signed in."""
    user = from_proxy(store.users, info)
    assert (None if user is None else user.name) == who


def test_admin_role_comes_from_the_store(store: Store) -> None:
    """Roles are the store's, whichever way the user signed in."""
    user = from_proxy(store.users, {"arbiter_user": "proxyroot"})
    assert user is not None
    assert user.is_admin
    assert user.via == "proxy"


def test_settings_round_trip_through_the_environment(tmp_path: Path) -> None:
    """What `arbiter review` puts in the environment is what the app reads back."""
    settings = AppSettings(
        db_url="sqlite:///x.db", docs_root=tmp_path, output_root=tmp_path / "o", auth="proxy", lease_minutes=5
    )
    assert AppSettings.from_env(settings.to_env()) == settings


@pytest.mark.parametrize(
    "env",
    [{"ARBITER_REVIEW_AUTH": "none"}, {"ARBITER_REVIEW_LEASE_MIN": "0"}, {"ARBITER_REVIEW_LEASE_MIN": "x"}],
)
def test_bad_settings_are_refused(env: dict[str, str]) -> None:
    """An unknown auth mode or a lease that is not a positive number of minutes is an error."""
    with pytest.raises(ValueError, match="ARBITER_REVIEW"):
        AppSettings.from_env(env)


def test_launch_command_turns_usage_statistics_off(tmp_path: Path) -> None:
    """The command runs app.py headless on localhost with usage statistics off."""
    args, env = streamlit_command(AppSettings(docs_root=tmp_path), port=8765)
    assert args[:5] == [sys.executable, "-m", "streamlit", "run", str(APP)]
    flags = dict(zip(args[5::2], args[6::2], strict=True))
    assert flags["--browser.gatherUsageStats"] == "false"
    assert flags["--server.port"] == "8765"
    assert flags["--server.address"] == "127.0.0.1"
    assert "--server.trustedUserHeaders" not in flags
    assert env["ARBITER_REVIEW_DOCS"] == str(tmp_path)


def test_proxy_mode_maps_the_header_into_st_user(tmp_path: Path) -> None:
    """Proxy mode passes server.trustedUserHeaders mapping the configured header to the app's key."""
    settings = AppSettings(docs_root=tmp_path, auth="proxy", user_header="X-Remote-User")
    args, _ = streamlit_command(settings)
    value = args[args.index("--server.trustedUserHeaders") + 1]
    assert json.loads(value) == {"X-Remote-User": "arbiter_user"}
    assert value == trusted_headers_option("X-Remote-User")


def test_repository_config_turns_usage_statistics_off() -> None:
    """The checked-in .streamlit/config.toml keeps usage statistics off too."""
    import tomllib

    config = tomllib.loads((Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml").read_text())
    assert config["browser"]["gatherUsageStats"] is False


def test_proxy_accepts_password_accounts_only_when_told(store: Store) -> None:
    """Issue 14.6: --auth proxy refuses an account that has a password unless the operator allows it."""
    assert from_proxy(store.users, {"arbiter_user": "alice"}) is None
    allowed = from_proxy(store.users, {"arbiter_user": "alice"}, password_accounts=True)
    assert allowed is not None
    assert allowed.name == "alice"
    assert AppSettings.from_env({"ARBITER_REVIEW_PROXY_PASSWORD_ACCOUNTS": "1"}).proxy_password_accounts
    assert not AppSettings.from_env({}).proxy_password_accounts
