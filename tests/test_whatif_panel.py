"""The Metrics page's What-if panel, headless with AppTest against a store seeded by the real pipeline:
admins only; a picked profile, an uploaded one (the panel's reader), and plain text throughout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from review_helpers import Seeded, app_test, sign_in

from arbiter.errors import ConfigError
from arbiter.whatif import panel

pytestmark = pytest.mark.seeded_app


def _metrics(name: str) -> Any:
    at = sign_in(app_test(), name)
    at.switch_page("views/metrics.py").run()
    assert not at.exception
    return at


def test_reviewers_do_not_see_the_panel(seeded: Seeded) -> None:
    at = _metrics("alice")
    assert not [s for s in at.subheader if s.value.startswith("What-if")]


def test_an_admin_simulates_the_bundled_profile(seeded: Seeded) -> None:
    at = _metrics("root")
    assert [s for s in at.subheader if s.value.startswith("What-if")]
    at.selectbox(key="whatif_pick").set_value(panel.BUNDLED + "medical.toml").run()
    at.button(key="whatif_run").click().run()
    assert not at.exception
    texts = [t.value for t in at.text]
    assert "Flips: 0" in texts
    assert any("No language-model call was made." in t for t in texts)
    assert any(t.startswith("5 recorded documents: 0 would change decision") for t in texts)


def test_an_uploaded_profile_is_validated() -> None:
    text = (Path(__file__).resolve().parents[1] / "arbiter" / "profiles" / "medical.toml").read_bytes()
    stricter = text.replace(b"min_dominant_confidence = 0.6\n", b"min_dominant_confidence = 0.92\n")
    assert panel.profile_from_upload(stricter).tolerances.min_dominant_confidence == 0.92
    with pytest.raises(ConfigError, match="not valid TOML"):
        panel.profile_from_upload(b"[arbiter\n")
    with pytest.raises(ConfigError, match="invalid"):
        panel.profile_from_upload(text.replace(b"max_retries = 2", b"max_retries = 99"))
