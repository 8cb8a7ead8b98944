"""The grounded-answer issue-code table in verifiers/grounded/README.md matches its catalogue."""

from __future__ import annotations

import re

from arbiter.verifiers.grounded.codes import CODES
from tests.conftest import REPO

ROW = re.compile(
    r"^\| `(?P<code>V\d\.[A-Z_]+)` \| (?P<severity>\w+) \| (?P<fixable>yes|no) \| (?P<meaning>.+) \|$"
)


def test_every_grounded_code_documented_with_its_severity_and_fixability() -> None:
    """Each catalogue code has one README row with the same severity, fixability and meaning."""
    rows = {}
    for line in (REPO / "verifiers" / "grounded" / "README.md").read_text(encoding="utf-8").splitlines():
        if match := ROW.match(line):
            rows[match["code"]] = (match["severity"], match["fixable"] == "yes", match["meaning"])
    assert set(rows) == set(CODES)
    for code, spec in CODES.items():
        assert rows[code] == (str(spec.severity), spec.auto_fixable, spec.meaning), code
