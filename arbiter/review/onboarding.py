"""What the review app and `arbiter review` tell someone who cannot sign in yet: how to get an account."""

from __future__ import annotations

NO_ACCOUNTS_HINT = (
    "add one on the command line with `arbiter users add NAME --role admin` (with the same --out or --db "
    "as `arbiter review`), then sign in."
)
NO_ACCOUNTS = f"There are no accounts yet: {NO_ACCOUNTS_HINT}"
PROXY_NOT_RECOGNISED = (
    "Your sign-in was not recognised. Ask an admin to add your account for proxy sign-in with "
    "`arbiter users add NAME --role reviewer --no-password` (NAME as the proxy sends it)."
)
