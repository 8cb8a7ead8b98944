"""OCR of pages without a usable text layer: pypdfium2 renders the page, Tesseract reads it.

Tesseract is Debian's `tesseract-ocr` with `tesseract-ocr-eng`, run as a subprocess that reads the
page from an in-memory file (ocr_page.py draws it there; its standard input where there is none) and writes
TSV (one row per word, with its box and confidence) on stdout: nothing on disk, a hard timeout per page,
one thread per process. Word boxes come back in pixels from the image's
top-left and are turned into PDF points from the page's bottom-left, the way pdfium reports text
(ocr_lines.py groups the words into the page's lines).
Configuration comes from the environment, so ingestion worker processes see the same settings:

- `ARBITER_OCR=off` turns OCR off (pages without a text layer then stay unverifiable);
- `ARBITER_TESSERACT_CMD` names the Tesseract program (default `tesseract` on PATH);
- `ARBITER_OCR_LANG` the Tesseract language(s), e.g. `eng` (default) or `eng+spa`;
- `ARBITER_OCR_DOC_BUDGET_S` the OCR time one document may use (default 900 s): pages left when it runs
  out stay unverifiable (OCR status FAILED) and the document still gets its result;
- `ARBITER_OCR_PAGE_TIMEOUT_S` the hard limit on Tesseract for one page (default 60 s).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import cast

from arbiter.ingest.ocr_page import BLANK_LEVEL as BLANK_LEVEL
from arbiter.ingest.ocr_page import MIN_INK_SHARE as MIN_INK_SHARE
from arbiter.ingest.ocr_page import OcrError as OcrError
from arbiter.ingest.ocr_page import Rendered as Rendered
from arbiter.ingest.ocr_page import is_blank as is_blank
from arbiter.ingest.ocr_page import render_gray as render_gray

ENV_OCR = "ARBITER_OCR"
ENV_TESSERACT = "ARBITER_TESSERACT_CMD"
ENV_LANG = "ARBITER_OCR_LANG"
ENV_DOC_BUDGET = "ARBITER_OCR_DOC_BUDGET_S"
ENV_PAGE_TIMEOUT = "ARBITER_OCR_PAGE_TIMEOUT_S"

# Tesseract reads best at about 300 dpi (a page larger than ocr_page.MAX_PIXELS at that resolution is
# rendered smaller).
DEFAULT_DPI = 300
# Hard limit on Tesseract for one page (a letter page takes about 1 s here), and on OCR for one document:
# pages left when it runs out stay unverifiable (status FAILED) rather than failing the document.
PAGE_TIMEOUT_S = 60.0
DOC_BUDGET_S = 900.0
# Extra time announced per page for rendering it and reading the answer.
RENDER_ALLOWANCE_S = 10.0
# Tesseract's page segmentation mode 3: fully automatic layout analysis, no orientation detection.
PSM = "3"
_VERSION = re.compile(r"tesseract\s+v?(\d+(?:\.\d+)*)", re.IGNORECASE)


@dataclass(frozen=True)
class OcrConfig:
    """How ingestion reads pages without a usable text layer."""

    enabled: bool = True
    tesseract_cmd: str = "tesseract"
    language: str = "eng"
    dpi: int = DEFAULT_DPI
    page_timeout_s: float = PAGE_TIMEOUT_S
    doc_budget_s: float = DOC_BUDGET_S

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> OcrConfig:
        """The configuration the ARBITER_OCR* variables describe (defaults where unset)."""
        env = os.environ if environ is None else environ
        enabled = env.get(ENV_OCR, "on").strip().lower() not in ("0", "off", "false", "no")
        return cls(
            enabled=enabled,
            tesseract_cmd=env.get(ENV_TESSERACT, "").strip() or "tesseract",
            language=env.get(ENV_LANG, "").strip() or "eng",
            page_timeout_s=_seconds(env.get(ENV_PAGE_TIMEOUT), PAGE_TIMEOUT_S),
            doc_budget_s=_seconds(env.get(ENV_DOC_BUDGET), DOC_BUDGET_S),
        )


def _seconds(text: str | None, default: float) -> float:
    """A positive number of seconds from the environment; the default when unset or not a positive number
    (ingestion workers read it, so a typo must not stop them)."""
    try:
        value = float(text) if text is not None and text.strip() else default
    except ValueError:
        return default
    return value if value > 0 else default


@dataclass(frozen=True)
class Engine:
    """A Tesseract that runs and has the language data asked for."""

    path: str
    version: str
    language: str

    @property
    def tag(self) -> str:
        """Names the engine in the extractor version, so cached bundles change with it."""
        return f"tesseract{self.version}-{self.language}-psm{PSM}"


@dataclass(frozen=True)
class Probe:
    """The engine, or why there is none (plain English, for the one-time warning)."""

    engine: Engine | None
    problem: str | None = None


@functools.lru_cache(maxsize=8)
def probe(cmd: str, language: str) -> Probe:
    """Whether `cmd` is a working Tesseract with `language`; remembered per process."""
    path = shutil.which(cmd)
    if path is None:
        return Probe(
            None,
            f"Tesseract OCR is not installed (no program {cmd!r} was found); install Debian's "
            "tesseract-ocr and tesseract-ocr-eng packages, or set ARBITER_TESSERACT_CMD.",
        )
    try:
        version = subprocess.run(
            [path, "--version"], capture_output=True, timeout=30, env=_env(), check=False
        )
        langs = subprocess.run(
            [path, "--list-langs"], capture_output=True, timeout=30, env=_env(), check=False
        )
    except (OSError, subprocess.SubprocessError):
        return Probe(None, f"Tesseract OCR ({cmd!r}) could not be run.")
    found = _VERSION.search(
        version.stdout.decode("utf-8", "replace") + version.stderr.decode("utf-8", "replace")
    )
    if version.returncode != 0 or found is None:
        return Probe(None, f"The program {cmd!r} did not answer like Tesseract OCR.")
    listed = langs.stdout.decode("utf-8", "replace").splitlines()[1:]
    available = {line.strip() for line in listed}
    missing = [lang for lang in language.split("+") if lang not in available]
    if missing:
        return Probe(
            None,
            f"Tesseract OCR has no language data for {', '.join(missing)}; install "
            f"tesseract-ocr-{missing[0]} (or set ARBITER_OCR_LANG).",
        )
    return Probe(Engine(path, found.group(1), language))


def engine_probe(config: OcrConfig) -> Probe | None:
    """The OCR engine check for this configuration; None when OCR is off."""
    return probe(config.tesseract_cmd, config.language) if config.enabled else None


def _env() -> dict[str, str]:
    # One thread per Tesseract: ingestion already runs one worker per core.
    return {**os.environ, "OMP_THREAD_LIMIT": "1"}


# Set inside an ingestion worker process: called with the seconds one more OCR page may take, so the
# parent's hard timeout grows with the pages actually OCR'd.
_budget_hook: Callable[[float], None] | None = None


def set_budget_hook(hook: Callable[[float], None] | None) -> None:
    global _budget_hook
    _budget_hook = hook


def announce(seconds: float) -> None:
    """Tell the parent (if any) that the next OCR page may take up to `seconds`."""
    if _budget_hook is not None:
        _budget_hook(seconds)


@dataclass(frozen=True, slots=True)
class Word:
    """One word of Tesseract's TSV: its line's key, box in pixels (left, top, width, height), confidence."""

    line: tuple[int, int, int]  # block, paragraph, line
    left: int
    top: int
    width: int
    height: int
    conf: float
    text: str


def run_tesseract(
    engine: Engine, page: Rendered, timeout_s: float, redraw: Callable[[], Rendered] | None = None
) -> list[Word]:
    """Tesseract's words for one page as `render_gray` drew it, in its reading order; OcrError when it fails.
    The page goes as the in-memory file it was drawn into, which Tesseract opens by its /dev/fd path; once
    Tesseract holds the file, this process lets go of the page (`Rendered.release`), so one copy of it is in
    memory while Tesseract reads it, not two. Where there is no such file, the page goes through Tesseract's
    standard input. Where Tesseract stops with an error reading the file (a wrapper that closes inherited
    descriptors, say), the page is drawn once more (`redraw`, in plain memory) and given on its standard input."""
    dpi = page.scale * 72.0
    page_file = page.page_file.take()
    if page_file is None:
        return _tesseract(engine, dpi, timeout_s, data=page.pgm)
    try:
        return _tesseract(engine, dpi, timeout_s, page_file=page_file, handed=page.release)
    except _Stopped:
        if redraw is None:
            raise
    announce(timeout_s)  # the second try may take as long again
    return _tesseract(engine, dpi, timeout_s, data=redraw().pgm)


class _Stopped(OcrError):
    """Tesseract ran and stopped with an error status."""


def _tesseract(
    engine: Engine,
    dpi: float,
    timeout_s: float,
    *,
    page_file: int | None = None,
    data: bytes | memoryview = b"",
    handed: Callable[[], None] | None = None,
) -> list[Word]:
    """One Tesseract run on the image in `page_file` (a descriptor it inherits, closed here; `handed` is called
    once Tesseract has it) or else `data` on its standard input."""
    args = [
        engine.path,
        "stdin" if page_file is None else f"/dev/fd/{page_file}",
        "stdout",
        "-l",
        engine.language,
        "--psm",
        PSM,
        "--dpi",
        str(round(dpi)),
        "tsv",
    ]
    try:
        # Its own process group: on a timeout the whole group is killed, wrapper scripts' children too.
        process = subprocess.Popen(
            args,
            stdin=subprocess.PIPE if page_file is None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(),
            start_new_session=True,
            pass_fds=() if page_file is None else (page_file,),
        )
    except OSError as exc:
        raise OcrError(f"Tesseract could not be run ({exc.strerror or type(exc).__name__})") from None
    finally:
        if page_file is not None:
            os.close(page_file)  # Tesseract holds its own copy; the memory goes when it closes it
    if handed is not None:
        handed()
    try:
        # Popen writes any bytes-like input (through a memoryview of it): the page's PGM is not copied.
        stdin = cast("bytes", data) if page_file is None else None
        stdout, _ = process.communicate(stdin, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        raise OcrError(f"Tesseract took longer than {timeout_s:g} seconds") from None
    except BaseException:
        _kill_group(process)
        raise
    if process.returncode != 0:
        raise _Stopped(f"Tesseract stopped with exit status {process.returncode}")
    return parse_tsv(stdout.decode("utf-8", "replace"))


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        process.kill()
    process.communicate()


def parse_tsv(tsv: str) -> list[Word]:
    """The words (level 5 rows with text) of Tesseract's TSV output."""
    words: list[Word] = []
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) < 12 or cols[0] != "5":
            continue
        text = " ".join(cols[11].split())
        if not text:
            continue
        try:
            key = (int(cols[2]), int(cols[3]), int(cols[4]))
            left, top, width, height = (int(c) for c in cols[6:10])
            conf = float(cols[10])
        except ValueError:
            continue
        words.append(Word(key, left, top, width, height, conf, text))
    return words
