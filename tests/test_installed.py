"""An installed Arbiter works anywhere: no path leads into a checkout, the demo writes its own inputs, the
replay samples ship with the package, and `pip install .` then `arbiter demo` works in an empty folder."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from arbiter.demo.corpus import write_demo_inputs
from arbiter.llm.config import SAMPLE_REPLAYS, LLMSettings
from arbiter.review.settings import AppSettings
from arbiter.review_app.launch import streamlit_command
from arbiter.run.job import RunOptions
from tests.conftest import FIXTURES, REPO

SHIPPED = ("arbiter", "verifiers", "review_app")
# Climbs out of a shipped package that are not a checkout path: the app's entry script puts the folder
# holding its package on sys.path (site-packages when installed), because `streamlit run` does not.
CLIMB_ALLOWED = {"review_app/app.py"}


def _climb(node: ast.expr) -> int:
    """How many folders `Path(__file__)...parent.parent` or `...parents[k]` climbs from the file; 0 if
    the expression does not start at __file__."""
    levels = 0
    while True:
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            levels, node = levels + 1, node.value
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "parents"
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, int)
        ):
            levels, node = levels + node.slice.value + 1, node.value.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value  # .resolve(), .absolute()
        elif isinstance(node, ast.Call) and node.args:
            node = node.args[0]  # Path(__file__)
        else:
            return levels if isinstance(node, ast.Name) and node.id == "__file__" else 0


def _path_parts(tree: ast.AST) -> list[ast.Constant]:
    """String constants a path is built from: Path("...") arguments and operands of `/`."""
    parts: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Path":
            parts += node.args
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            parts += [node.left, node.right]
    return [p for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str)]


def _checkout_paths(path: Path, root: Path = REPO) -> list[str]:
    rel = path.relative_to(root)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [
        f"{rel}:{c.lineno}: {c.value!r}"
        for c in _path_parts(tree)
        if c.value == "fixtures" or c.value.startswith("fixtures/")
    ]
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "REPO_ROOT":
            found.append(f"{rel}:{node.lineno}: REPO_ROOT")
        elif (
            isinstance(node, ast.Attribute | ast.Subscript)
            and str(rel) not in CLIMB_ALLOWED
            and _climb(node) >= len(rel.parts)  # arbiter/cli/main.py leaves the package 3 folders up
        ):
            found.append(f"{rel}:{node.lineno}: climbs out of the package")
    return found


def test_shipped_code_names_no_checkout_path() -> None:
    """No module that ships (arbiter/, verifiers/, review_app/) builds a path into a source checkout."""
    files = [p for package in SHIPPED for p in sorted((REPO / package).rglob("*.py"))]
    assert len(files) > 100
    assert [hit for path in files for hit in _checkout_paths(path)] == []


def test_the_checkout_path_check_sees_what_main_used_to_do(tmp_path: Path) -> None:
    """The check above catches the repository root and fixture paths the demo used to read."""
    (tmp_path / "arbiter" / "cli").mkdir(parents=True)
    bad = tmp_path / "arbiter" / "cli" / "main.py"
    bad.write_text(
        "from pathlib import Path\n"
        "REPO_ROOT = Path(__file__).resolve().parents[2]\n"
        'FIXTURES = REPO_ROOT / "fixtures"\n'
        'REPLAYS = Path("fixtures/llm_replays")\n'
    )
    hits = _checkout_paths(bad, root=tmp_path)
    assert len(hits) == 5  # REPO_ROOT twice (assigned, read), the climb, the two fixture paths


def test_demo_inputs_are_the_committed_fixtures(tmp_path: Path) -> None:
    """The package writes the demo's PDFs, classifications, production answers and damaged files byte for
    byte as fixtures/ holds them."""
    inputs = write_demo_inputs(tmp_path / "demo")
    pairs = [
        (inputs.pdfs, FIXTURES / "pdfs"),
        (inputs.classifications, FIXTURES / "demo"),
        (inputs.damaged, FIXTURES / "damaged"),
    ]
    for written, committed in pairs:
        names = sorted(p.name for p in committed.iterdir())
        assert names
        assert sorted(p.name for p in written.iterdir()) == names
        for name in names:
            assert (written / name).read_bytes() == (committed / name).read_bytes(), name
    assert inputs.production.read_bytes() == (FIXTURES / "production.csv").read_bytes()


def test_demo_inputs_are_left_alone_when_unchanged(tmp_path: Path) -> None:
    """A second demo rewrites nothing that already holds the right bytes."""
    inputs = write_demo_inputs(tmp_path / "demo")
    before = {p: p.stat().st_mtime_ns for p in inputs.folder.rglob("*") if p.is_file()}
    write_demo_inputs(tmp_path / "demo")
    assert {p: p.stat().st_mtime_ns for p in inputs.folder.rglob("*") if p.is_file()} == before


def test_replay_default_is_the_bundled_samples() -> None:
    """Without ARBITER_REPLAY_DIR the replay backend reads the sample answers inside the package."""
    settings = LLMSettings.from_env({})
    assert settings.replay_dir == SAMPLE_REPLAYS
    assert SAMPLE_REPLAYS.is_absolute()
    assert SAMPLE_REPLAYS.is_relative_to(REPO / "arbiter")
    assert len(list(SAMPLE_REPLAYS.glob("*.json"))) > 100


def test_run_cache_defaults_under_the_output_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run caches LLM answers under OUT/cache/llm when ARBITER_LLM_CACHE_DIR is not set."""
    monkeypatch.delenv("ARBITER_LLM_CACHE_DIR", raising=False)
    assert RunOptions(out_dir=str(tmp_path)).settings().cache_dir == tmp_path / "cache" / "llm"


def test_run_cache_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ARBITER_LLM_CACHE_DIR moves a run's LLM cache, as the README says (it used to be ignored)."""
    monkeypatch.setenv("ARBITER_LLM_CACHE_DIR", str(tmp_path / "shared-cache"))
    assert RunOptions(out_dir=str(tmp_path / "out")).settings().cache_dir == tmp_path / "shared-cache"


def test_review_launch_carries_the_repository_streamlit_config(tmp_path: Path) -> None:
    """Every setting of the checked-in .streamlit/config.toml (read only when Streamlit starts in the
    checkout) is also passed by `arbiter review`'s command, so an installed app behaves the same."""
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    args, _ = streamlit_command(AppSettings(docs_root=tmp_path))
    flags = dict(zip(args[5::2], args[6::2], strict=True))
    expected = {
        f"--{section}.{key}": str(value).lower() if isinstance(value, bool) else str(value)
        for section, values in config.items()
        for key, value in values.items()
    }
    assert len(expected) >= 6
    assert {flag: flags.get(flag) for flag in expected} == expected


def _clean_env() -> dict[str, str]:
    """The environment of a user who never saw the checkout: no PYTHONPATH, no Arbiter settings."""
    return {
        k: v
        for k, v in os.environ.items()
        if k != "PYTHONPATH" and not k.startswith("ARBITER_") and k != "DATABASE_URL"
    }


def _pypi_verifiers_wheel() -> Path:
    """The wheel of PyPI's `verifiers` that `make setup` downloads next to the environment."""
    wheels = sorted((Path(sys.prefix) / "wheels").glob("verifiers-*.whl"))
    if not wheels:
        pytest.fail(f"PyPI's verifiers wheel is missing from {Path(sys.prefix) / 'wheels'}: run `make setup`")
    return wheels[-1]


@pytest.mark.slow
def test_pip_install_then_demo_in_an_empty_folder(tmp_path: Path) -> None:
    """`pip install .` into a fresh virtualenv that already holds PyPI's `verifiers`, then `arbiter demo` and
    `arbiter verify --llm replay` in an empty folder, work with no checkout in sight and leave the other
    package whole (dependencies come from this environment, offline)."""
    src = tmp_path / "src"
    junk = (".git", ".venv", "output", "build", "*.egg-info", "__pycache__", ".*_cache")
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(*junk))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # the dependencies already installed here, after the new environment's own site-packages
    (Path(purelib) / "deps.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    env = _clean_env()
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps"]
    # PyPI's unrelated `verifiers` first (downloaded by `make setup`): Arbiter's wheel installs beside it
    theirs = _pypi_verifiers_wheel()
    installed = subprocess.run([*pip, "--no-index", str(theirs)], env=env, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    pip += ["--no-build-isolation", "--no-index", str(src)]
    installed = subprocess.run(pip, env=env, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    site = Path(purelib)
    with zipfile.ZipFile(theirs) as wheel:
        assert (site / "verifiers" / "__init__.py").read_bytes() == wheel.read("verifiers/__init__.py")
    assert (site / "arbiter" / "verifiers" / "v4_evidence.py").is_file()
    assert (site / "arbiter" / "review_app" / "app.py").is_file()
    assert not (site / "review_app").exists()
    dists = sorted(p.name.split("-")[0] for p in site.glob("*.dist-info"))
    assert dists == ["arbiter_trust", "verifiers"]

    empty = tmp_path / "empty"
    empty.mkdir()
    where = subprocess.run(
        [python, "-c", "import arbiter; print(arbiter.__file__)"],
        cwd=empty,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert Path(where.strip()).is_relative_to(purelib)

    arbiter = str(venv / "bin" / "arbiter")
    demo = subprocess.run(
        [arbiter, "demo", "--workers", "2"], cwd=empty, env=env, capture_output=True, text=True
    )
    assert demo.returncode == 0, demo.stdout + demo.stderr
    summary = json.loads(next((empty / "output" / "runs").glob("*/summary.json")).read_text(encoding="utf-8"))
    assert summary["documents"] == 35  # 31 PDFs and 4 damaged files
    assert summary["escalated"] > 0
    assert summary["accepted_first_time"] > 0
    assert "arbiter review --docs output/demo" in demo.stdout

    doc = "lab-labcorp-02"
    args = [
        "--pdf",
        f"output/demo/pdfs/{doc}.pdf",
        "--classification",
        f"output/demo/classifications/{doc}.json",
    ]
    verify = subprocess.run(
        [arbiter, "verify", *args, "--llm", "replay", "--json"],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    outcome = json.loads(verify.stdout)
    assert outcome["llm_usage"]["input_tokens"] > 0  # the bundled sample answers were read
    assert "LLM_ERROR" not in verify.stdout


def test_demo_inputs_do_not_depend_on_fonts_registered_before(tmp_path: Path) -> None:
    """Another font of Vera registered earlier in the process (as a benchmark does) leaves the demo's PDFs,
    and the U+2011 hyphen in their text layer, byte for byte as committed."""
    script = (
        "import sys, reportlab\n"
        "from pathlib import Path\n"
        "from reportlab.pdfbase import pdfmetrics\n"
        "from reportlab.pdfbase.ttfonts import TTFont\n"
        "pdfmetrics.registerFont(TTFont('OtherVera', str(Path(reportlab.__file__).parent / 'fonts' / 'Vera.ttf')))\n"
        "from arbiter.demo.corpus import write_demo_inputs\n"
        "write_demo_inputs(Path(sys.argv[1]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "demo")], check=True, env=env, timeout=300)
    written = tmp_path / "demo" / "pdfs"
    names = sorted(p.name for p in (FIXTURES / "pdfs").iterdir())
    assert names
    assert [n for n in names if (written / n).read_bytes() != (FIXTURES / "pdfs" / n).read_bytes()] == []
