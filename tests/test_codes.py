"""The issue-code table in verifiers/README.md matches the catalogue in verifiers/codes.py."""

from __future__ import annotations

import re

from arbiter.verifiers.codes import CODES
from tests.conftest import REPO

ROW = re.compile(
    r"^\| `(?P<code>V\d\.[A-Z_]+)` \| (?P<severity>\w+) \| (?P<fixable>yes|no) \| (?P<meaning>.+) \|$"
)


def documented() -> dict[str, tuple[str, bool, str]]:
    rows = {}
    for line in (REPO / "verifiers" / "README.md").read_text(encoding="utf-8").splitlines():
        if match := ROW.match(line):
            rows[match["code"]] = (match["severity"], match["fixable"] == "yes", match["meaning"])
    return rows


def test_every_code_documented_with_its_severity_and_fixability() -> None:
    """Each catalogue code has one README row with the same severity, fixability and meaning."""
    rows = documented()
    assert set(rows) == set(CODES)
    for code, spec in CODES.items():
        assert rows[code] == (str(spec.severity), spec.auto_fixable, spec.meaning), code


def test_codes_are_namespaced_by_verifier() -> None:
    """Every code starts with its verifier's name and every verifier has a VERIFIER_ERROR code."""
    for code in CODES:
        assert re.fullmatch(r"V[1-4]\.[A-Z_]+", code)
    for verifier in ("V1", "V2", "V3", "V4"):
        assert f"{verifier}.VERIFIER_ERROR" in CODES
