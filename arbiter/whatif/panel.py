"""The review app's What-if panel (admins, Metrics page), without Streamlit: which profiles can be picked,
reading an uploaded one, running the simulation read-only, and the tables it shows (plain text)."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from arbiter.contracts.profile import Profile, load_profile
from arbiter.errors import ConfigError

BUNDLED = "bundled: "
MAX_UPLOAD = 2_000_000


def profile_choices(output_root: Path | None) -> dict[str, Path | None]:
    """Label -> file: the bundled profiles, then OUT/profiles/*.toml (a folder an admin can fill)."""
    choices: dict[str, Path | None] = {}
    for entry in sorted(resources.files("arbiter.profiles").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            choices[BUNDLED + entry.name] = Path(str(entry))
    if output_root is not None and (output_root / "profiles").is_dir():
        for path in sorted((output_root / "profiles").glob("*.toml")):
            choices[f"profiles/{path.name}"] = path
    return choices


def profile_from_upload(data: bytes) -> Profile:
    """An uploaded TOML profile, validated as `load_profile` validates files; ConfigError in plain words."""
    if len(data) > MAX_UPLOAD:
        raise ConfigError("The uploaded profile is larger than 2 MB; is it the right file?")
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"The uploaded profile is not valid TOML: {exc}") from None
    try:
        return Profile.model_validate(parsed)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"The uploaded profile is invalid: {problems}") from None


def run(
    db_url: str, candidate: Profile, *, as_of: datetime | None = None, output_root: str | Path | None = None
) -> dict[str, Any]:
    """The comparison of `arbiter policy simulate --json` (current: the bundled profile), read-only."""
    from arbiter.whatif.diff import diff_profiles
    from arbiter.whatif.history import reading
    from arbiter.whatif.simulate import simulate

    current = load_profile()
    with reading(db_url) as conn:
        report = simulate(conn, current, candidate, as_of=as_of, out_dir=output_root)
    report["changes"] = diff_profiles(current, candidate)
    return report


def table(head: tuple[str, ...], rows: Sequence[Sequence[str]]) -> list[dict[str, str]]:
    """Rows as the records st.dataframe shows (plain text cells)."""
    return [dict(zip(head, (str(v) for v in row), strict=True)) for row in rows]
