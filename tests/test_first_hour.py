"""A newcomer's first hour (issue 18.3-18.5, 18.7): messages that say what to do, `verify` writes nothing, and the
README answers the first questions (input format, starting over, the demo's password, what --quick is)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import arbiter.cli.demo as demo_command
from arbiter.cli.main import app
from arbiter.cli.support import command_name
from arbiter.contracts.bundle import OcrStatus
from arbiter.ingest.ocr import probe
from arbiter.llm.port import LLMError, LLMRequest
from arbiter.llm.replay import ReplayBackend
from arbiter.review.onboarding import NO_ACCOUNTS, PROXY_NOT_RECOGNISED
from arbiter.review.settings import ENV_AUTH, ENV_DB, ENV_DOCS, ENV_OUTPUT
from arbiter.store import Store
from arbiter.verifiers.v4_evidence import NO_TEXT_WHY
from tests.conftest import FIXTURES, REPO

runner = CliRunner()
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"
# The first questions are answered on the docs site's pages (issue 34 moved them out of the README).
START = (DOCS / "getting-started.md").read_text(encoding="utf-8")
MAKEFILE = (REPO / "Makefile").read_text(encoding="utf-8")
ONE_PDF = sorted((FIXTURES / "pdfs").glob("*.pdf"))[0]


def test_verify_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`arbiter verify`, with the bundled replay answers too, leaves the working folder as it found it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARBITER_REPLAY_DIR", raising=False)
    monkeypatch.delenv("ARBITER_LLM_RECORD_DIR", raising=False)
    classification = FIXTURES / "demo" / f"{ONE_PDF.stem}.json"
    result = runner.invoke(
        app, ["verify", "--pdf", str(ONE_PDF), "--classification", str(classification), "--llm", "replay"]
    )
    assert result.exit_code == 0, result.output
    assert list(tmp_path.iterdir()) == []


def test_replay_miss_names_the_missing_folder(tmp_path: Path) -> None:
    """A replay folder that does not exist is named in full, with ARBITER_REPLAY_DIR and how to record."""
    request = LLMRequest(purpose="V3", model="m", system="s", prompt="p", response_schema={"type": "object"})
    with pytest.raises(LLMError) as caught:
        ReplayBackend(Path("no/such/replays")).complete(request)
    message = caught.value.message
    assert str(Path("no/such/replays").resolve()) in message
    assert "does not exist" in message
    assert "ARBITER_REPLAY_DIR" in message
    assert "ARBITER_LLM_RECORD_DIR" in message


def test_ocr_messages_agree_on_a_missing_language() -> None:
    """A missing OCR language is named in the warning, and each document's reason does not say 'not installed'."""
    found = probe("tesseract", "zzz-no-such-language")
    if found.engine is None and "not installed" in (found.problem or ""):
        pytest.skip("Tesseract is not installed here")
    assert found.problem is not None
    assert "no language data for zzz-no-such-language" in found.problem
    why = NO_TEXT_WHY[OcrStatus.UNAVAILABLE]
    assert "not available" in why
    assert "language data" in why


@pytest.fixture
def empty_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The review app (AppTest) on a migrated database with no accounts."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    url = f"sqlite:///{tmp_path / 'arbiter.db'}"
    store = Store(url)
    store.migrate()
    store.dispose()
    for key, value in {
        ENV_DB: url,
        ENV_DOCS: str(tmp_path),
        ENV_OUTPUT: str(tmp_path),
        ENV_AUTH: "local",
    }.items():
        monkeypatch.setenv(key, value)
    st.cache_resource.clear()
    try:
        yield lambda: AppTest.from_file(str(REPO / "review_app" / "app.py"), default_timeout=30)
    finally:
        st.cache_resource.clear()


def test_review_app_without_accounts_says_how_to_add_one(empty_app: Any) -> None:
    """The sign-in page of a database with no accounts says so and names `arbiter users add`."""
    at = empty_app().run()
    assert NO_ACCOUNTS in [w.value for w in at.warning]
    assert "arbiter users add NAME --role admin" in NO_ACCOUNTS


def test_proxy_refusal_suggests_a_proxy_account(empty_app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Proxy sign-in of an unknown user suggests `users add NAME --role reviewer --no-password`."""
    monkeypatch.setenv(ENV_AUTH, "proxy")
    at = empty_app().run()
    assert PROXY_NOT_RECOGNISED in [e.value for e in at.error]
    assert "--role reviewer --no-password" in PROXY_NOT_RECOGNISED


def test_demo_says_it_adds_to_an_existing_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`arbiter demo` into a folder that already has a database says it adds to it and how to start over."""
    seen: dict[str, Any] = {}
    monkeypatch.setattr(demo_command, "run", lambda **kwargs: seen.update(kwargs))
    out = tmp_path / "out"
    first = runner.invoke(app, ["demo", "--out", str(out)])
    assert first.exit_code == 0, first.output
    assert "adds to it" not in first.output
    out.mkdir(exist_ok=True)
    (out / "arbiter.db").write_bytes(b"")
    again = runner.invoke(app, ["demo", "--out", str(out)])
    assert again.exit_code == 0, again.output
    assert "adds to it" in again.output
    assert "make reset" in again.output
    assert seen["out_dir"] == str(out)  # `arbiter run`'s --out is a folder or a URL, passed on as text
    arbiter = command_name()  # as this process runs: the hint's spelling is tested in test_first_hour_round2
    assert f"{arbiter} users add NAME --role admin --out {out}, then {arbiter} review --docs" in again.output


def test_readme_shows_the_classification_format() -> None:
    """Getting started introduces fixtures/demo/*.json and `arbiter schema classification` with an example whose
    fields are the schema's."""
    from arbiter.contracts.schemas import json_schema

    assert "fixtures/demo/*.json" in START
    assert "arbiter schema classification" in START
    example = re.search(r"```jsonc\n(.*?)```", START, re.DOTALL)
    assert example is not None
    text = example.group(1)
    for field in json_schema("classification")["required"]:
        assert f'"{field}"' in text
    real = re.search(r"the real file is `(fixtures/demo/[^`]+\.json)`", START)
    assert real is not None
    assert json.loads((REPO / real.group(1)).read_text())["doc_id"] in text


def test_readme_says_how_to_start_over() -> None:
    """`make reset` exists (it empties output/, the database too: test_first_hour_round2), and Getting started
    says when to use it (the README links to it)."""
    assert re.search(r"^reset:\n", MAKEFILE, re.MULTILINE)
    assert "## Starting over" in START
    assert "`make reset`" in START
    assert "make clean" in START
    assert "getting-started.md#starting-over" in README


def test_readme_names_the_encrypted_demo_files_password() -> None:
    """The encrypted demo PDF's password in the README and Getting started is the one the fixture generator uses."""
    from arbiter.demo.damaged import PASSWORD

    for text in (README, START):
        assert f"`{PASSWORD}`" in text
        assert "locked-lab-report.pdf" in text


def test_readme_says_quick_bench_is_a_smoke_run() -> None:
    """The Benchmarks page says `bench/run.py --quick` is a smoke run whose targets may not hold."""
    bench = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    assert "`--quick` is a smoke run" in bench
    assert "targets may not hold" in bench


def test_readme_cache_paths_are_the_real_ones(tmp_path: Path) -> None:
    """The bundle cache path the docs give is the one BundleCache writes."""
    from arbiter.ingest.cache import BundleCache

    path = BundleCache(Path("output/cache/bundles")).path_for("ab" + "0" * 62, "v1")
    assert path.as_posix() == f"output/cache/bundles/ab/{'ab' + '0' * 62}.v1.open.json"
    outputs = (DOCS / "operations" / "outputs.md").read_text(encoding="utf-8")
    assert (
        "output/cache/bundles/{sha[:2]}/{sha256}.{extractor version}.{open or password tag}.json" in outputs
    )
