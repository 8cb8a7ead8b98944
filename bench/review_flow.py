"""Review-flow benchmark: a reviewer's tasks in Debian's Chromium (Playwright) at 1366x768 against
`streamlit run` on a seeded store, counted in actions (keystrokes + clicks) and timed from the first
keypress until the browser has drawn the result (the new page image loaded). Prints one JSON object.

    .venv/bin/python bench/review_flow.py [--quick] [--no-baseline]

Tasks (TASKS, a list of functions: add one to measure another task, e.g. a correction):
- agree_and_move_on: Alt+A on an agreeable packet until the next packet's page image is drawn.
- page_flip: Alt+L / Alt+J on a multi-page packet until the other page's image is drawn (p50 / p95).
- type_correction, boundary_correction, boundary_on_strip, evidence_edit (bench/review_tasks_correct.py): a correction from
  opening Correct to the saved version, in actions and seconds, each on its own freshly seeded store.
- answer_agree, answer_unsupported, answer_citation, answer_abstention (bench/review_tasks_answer.py): the answer
  desk on grounded-answer packets (the demo's items), each decision from the open packet to the next packet on
  screen, in actions and seconds, on one store seeded with the demo's answers (each task on its own packet).
The baseline runs the same tasks the old way on the app as it was before issue 12 (BASE_COMMIT, exported
with `git archive`): agree, which went back to the queue, then Alt+N there; page flips that reran the page.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))  # the browser tests' helpers: running_app, seed

VIEWPORT: Any = {"width": 1366, "height": 768}  # playwright ViewportSize
BASE_COMMIT = "74e0d7a"  # the app before issue 12's flow, layout and viewer
TARGETS = {
    "agree_and_move_on_s": 1.0,
    "agree_and_move_on_actions": 1,
    "page_flip_p95_ms": 300.0,
    "type_correction_actions": 4,
    "answer_agree_actions": 1,
    "answer_unsupported_actions": 4,
    "answer_citation_actions": 4,
    "answer_abstention_actions": 4,
}
PRESETS: dict[str, dict[str, Any]] = {
    "full": {"agrees": 5, "flips": 20},
    "quick": {"agrees": 3, "flips": 10},
    "tiny": {"agrees": 1, "flips": 2, "baseline": False, "fixes": ("type_correction",), "answers": False},
}
# Escalated fixtures the demo classifications leave agreeable, and multi-page ones to flip through.
# Every document is sampled, so each leaves a packet; all of these can be agreed with as they stand.
DOCS = ("admin-requisition-03", "note-injection-03", "path-colon-03", "note-clinic-05", "packet-01",
        "gen-foundation-01", "path-lung-01")  # fmt: skip
FIRST, MULTI_PAGE = "admin-requisition-03", "packet-01"
PAGE_IMAGE = "[data-testid='stImage'] img"
# The page image: in the viewer's frame (this app), else the first image on the page (the baseline's).
IMAGE_JS = (
    "(document.querySelector(\".st-key-page_view [data-testid='stImage'] img\") || "
    "document.querySelector(\"[data-testid='stMainBlockContainer'] [data-testid='stImage'] img\"))"
)
DRAWN = f"before => {{ const img = {IMAGE_JS}; return !!img && img.complete && img.naturalWidth > 0 && img.src !== before; }}"


@dataclass
class Session:
    """A signed-in reviewer's page and how the app under test does things (new flow or the baseline)."""

    page: Any
    baseline: bool
    log: list[str] = field(default_factory=list)

    def image_src(self) -> str:
        return str(self.page.evaluate(f"() => ({IMAGE_JS} || {{}}).src"))

    def wait_drawn(self, before: str, timeout_ms: float = 30_000) -> None:
        self.page.wait_for_function(DRAWN, arg=before, timeout=timeout_ms, polling="raf")


def _settle(page: Any) -> None:
    from browser_helpers import settle

    settle(page)


def _heading(page: Any) -> str:
    return str(page.locator("h1").first.inner_text()).strip()


def agree_and_move_on(session: Session, rounds: int) -> dict[str, Any]:
    """Agree with the packet on screen and get the next one's page drawn: Alt+A (baseline: Alt+A, then
    Alt+N on the queue page)."""
    page, times, actions = session.page, [], 0
    for _ in range(rounds):
        before, doc = session.image_src(), _heading(page)
        t0 = time.perf_counter()
        page.keyboard.press("Alt+a")
        steps = 1
        if session.baseline:
            page.get_by_role("heading", name="Review queue").wait_for()
            _settle(page)
            page.keyboard.press("Alt+n")
            steps += 1
        session.wait_drawn(before)
        times.append(time.perf_counter() - t0)
        actions = max(actions, steps)
        _settle(page)
        if _heading(page) == doc:
            raise RuntimeError("agree did not move on to another packet")
    return {"actions": actions, "seconds_p50": _round(statistics.median(times)), "seconds_max": _round(max(times)),
            "n": len(times)}  # fmt: skip


def page_flip(session: Session, flips: int) -> dict[str, Any]:
    """Flip between two pages with Alt+L / Alt+J until the other page's image is drawn."""
    page, samples = session.page, []
    for number in range(flips):
        before = session.image_src()
        t0 = time.perf_counter()
        page.keyboard.press("Alt+l" if number % 2 == 0 else "Alt+j")
        session.wait_drawn(before)
        samples.append(time.perf_counter() - t0)
        _settle(page)
        page.wait_for_timeout(300)  # a reviewer reads a little; the prefetch runs meanwhile
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return {"actions": 1, "p50_ms": round(1000 * statistics.median(ordered), 1), "p95_ms": round(1000 * p95, 1),
            "max_ms": round(1000 * ordered[-1], 1), "n": len(ordered)}  # fmt: skip


def text_size(session: Session) -> dict[str, Any]:
    """The page image's body text on screen at the default zoom: the fixtures' body font is 9.5 pt
    Helvetica (cap height 0.718 em); the image is drawn at 144 dpi, so CSS px per point is
    2 * shown width / natural width."""
    shown, natural = session.page.evaluate(
        f"() => {{ const i = {IMAGE_JS}; return [i.getBoundingClientRect().width, i.naturalWidth]; }}"
    )
    px_per_pt = 2.0 * float(shown) / float(natural)
    return {"body_font_px": round(9.5 * px_per_pt, 1), "cap_height_px": round(9.5 * 0.718 * px_per_pt, 1),
            "image_css_width": round(float(shown))}  # fmt: skip


def _round(value: float) -> float:
    return round(value, 3)


@dataclass(frozen=True)
class Task:
    name: str
    setup: str  # the packet the task starts on
    measure: Callable[[Session, int], dict[str, Any]]
    size: str  # which preset figure sets its rounds


# Tasks on the shared store (the correction tasks, which save their packet, are in CORRECTIONS below).
TASKS: list[Task] = [
    Task("page_flip", MULTI_PAGE, page_flip, "flips"),
    Task("agree_and_move_on", FIRST, agree_and_move_on, "agrees"),
]


@contextmanager
def _app(tmp: Path, app_dir: Path | None, docs: tuple[str, ...] = DOCS) -> Iterator[tuple[str, Any]]:
    """A seeded store and the app (this checkout's, or the one under app_dir) on a free port."""
    import browser_helpers
    from review_helpers import PDFS, seed

    from arbiter.review.settings import AppSettings

    data = seed(tmp, docs, sample_all=True)
    settings = AppSettings(db_url=data.url, docs_root=PDFS, output_root=data.out_dir)
    original = browser_helpers.streamlit_command
    if app_dir is not None:

        def command(s: Any, port: int) -> Any:
            args, env = original(replace(s), port=port)
            return [str(app_dir / "review_app" / "app.py") if a.endswith("app.py") else a for a in args], env

        browser_helpers.streamlit_command = command
    try:
        with browser_helpers.running_app(settings, tmp / "streamlit.log") as url:
            yield url, data
    finally:
        browser_helpers.streamlit_command = original
        data.store.dispose()


def _first_packet(data: Any, doc_id: str) -> str:
    """The document's first packet in the queue (not its blind second review)."""
    return str(next(s.packet_id for s in data.store.queue.page(limit=200) if s.doc_id == doc_id))


def _export_base(into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "archive", BASE_COMMIT], cwd=REPO, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def _open_as_alice(browser: Any, url: str, data: Any, doc_id: str) -> Any:
    """A fresh Chromium context at 1366x768, signed in as alice, with `doc_id`'s packet claimed and open."""
    from review_helpers import PASSWORD

    page = browser.new_context(viewport=VIEWPORT).new_page()
    page.set_default_timeout(60_000)
    page.goto(url)
    _settle(page)
    page.get_by_label("User name").fill("alice")
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    _settle(page)
    claimed = data.store.queue.claim(_first_packet(data, doc_id), "alice")
    assert claimed is not None, doc_id
    page.get_by_role("link", name="Packet").click()
    page.locator(PAGE_IMAGE).first.wait_for()
    _settle(page)
    page.wait_for_timeout(500)
    return page


def measure(app_dir: Path | None, sizes: dict[str, int]) -> dict[str, Any]:
    """Every task on a fresh store, one signed-in Chromium page per task."""
    import playwright.sync_api as playwright_api
    from browser_helpers import CHROMIUM, CHROMIUM_ARGS

    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="arbiter-flow-") as tmp_name:
        tmp = Path(tmp_name)
        with _app(tmp, app_dir) as (url, data), playwright_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                for task in TASKS:
                    page = _open_as_alice(browser, url, data, task.setup)
                    session = Session(page, baseline=app_dir is not None)
                    if "text_size" not in results:
                        results["text_size"] = text_size(session)
                    results[task.name] = task.measure(session, sizes[task.size])
                    page.context.close()
            finally:
                browser.close()
    return results


# The correction tasks (bench/review_tasks_correct.py), each on its own freshly seeded store: the packet it
# corrects is saved by it. The baseline app has no quick corrections (a type change there took about ten
# interactions in its segment grid, by the count), so they run on this checkout only.
CORRECTIONS = (
    ("type_correction", "admin-requisition-03"),
    ("boundary_correction", "path-breast-02"),
    ("boundary_on_strip", "path-breast-02"),
    ("evidence_edit", "path-breast-02"),
)


def corrections(only: tuple[str, ...] | None = None) -> dict[str, Any]:
    import playwright.sync_api as playwright_api
    from browser_helpers import CHROMIUM, CHROMIUM_ARGS

    from bench.review_tasks_correct import TASKS as CORRECTION_TASKS

    results: dict[str, Any] = {}
    for name, doc_id in CORRECTIONS:
        if only is not None and name not in only:
            continue
        with tempfile.TemporaryDirectory(prefix="arbiter-fix-") as tmp_name:
            tmp = Path(tmp_name)
            with _app(tmp, None, (doc_id,)) as (url, data), playwright_api.sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
                try:
                    page = _open_as_alice(browser, url, data, doc_id)
                    result = CORRECTION_TASKS[name](page, doc_id)
                    result.pop("picked", None)  # document text stays out of the report
                    results[name] = result
                except Exception as exc:  # one task's failure is reported; the others still run
                    results[name] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0]}"}
                finally:
                    browser.close()
    return results


# The answer-desk tasks: (task, demo item, statement or chunk it acts on). The demo's items (tests/answer_helpers.py
# names what each one is) escalate under the bundled grounded profile.
ANSWER_TASKS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("answer_agree", "q17-hedged", {}),
    ("answer_unsupported", "q02-unsupported-statement", {"statement": 2, "reason": "changed modal"}),
    ("answer_citation", "q11-irrelevant-citation", {"statement": 0, "chunk_id": "C09"}),
    ("answer_abstention", "q38-answered-without-evidence", {}),
)


def answer_flows() -> dict[str, Any]:
    """The answer desk's decisions, each on its packet, in a fresh signed-in Chromium context."""
    import browser_helpers
    import playwright.sync_api as playwright_api
    from answer_helpers import packet_of, seed_answers
    from browser_helpers import CHROMIUM, CHROMIUM_ARGS
    from review_helpers import PASSWORD

    from arbiter.contracts import ReviewStatus
    from arbiter.review.settings import AppSettings
    from bench.review_tasks_answer import TASKS as ANSWER_TASK_FUNCTIONS

    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="arbiter-answers-") as tmp_name:
        tmp = Path(tmp_name)
        data = seed_answers(tmp)
        settings = AppSettings(db_url=data.url, docs_root=data.docs, output_root=data.out_dir)
        try:
            with (
                browser_helpers.running_app(settings, tmp / "streamlit.log") as url,
                playwright_api.sync_playwright() as pw,
            ):
                browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
                try:
                    for name, doc_id, options in ANSWER_TASKS:
                        for held in data.store.queue.page(
                            status=ReviewStatus.IN_REVIEW, claimed_by="alice", limit=50
                        ):
                            data.store.queue.release(held.packet_id, "alice")
                        packet = packet_of(data.store, doc_id)
                        assert data.store.queue.claim(packet.packet_id, "alice") is not None, doc_id
                        page = browser.new_context(viewport=VIEWPORT).new_page()
                        page.set_default_timeout(60_000)
                        browser_helpers.sign_in(page, url, "alice", PASSWORD)
                        page.get_by_role("link", name="Packet").click()
                        page.get_by_role("heading", name=doc_id).wait_for()
                        _settle(page)
                        try:
                            results[name] = ANSWER_TASK_FUNCTIONS[name](
                                page, doc_id, packet.packet_id, **options
                            )
                        except Exception as exc:  # one task's failure is reported; the others still run
                            results[name] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0]}"}
                        page.context.close()
                finally:
                    browser.close()
        finally:
            data.store.dispose()
    return results


def run(
    agrees: int = 5,
    flips: int = 20,
    baseline: bool = True,
    fixes: tuple[str, ...] | None = None,
    answers: bool = True,
) -> dict[str, Any]:
    """Every task (`fixes`: only these correction tasks; None: all three; `answers`: the answer desk's)."""
    sizes = {"agrees": agrees, "flips": flips}
    new = measure(None, sizes)
    new.update(corrections(fixes))
    if answers:
        new.update(answer_flows())
    old: dict[str, Any] | None = None
    if baseline:
        with tempfile.TemporaryDirectory(prefix="arbiter-base-") as base:
            old = measure(_export_base(Path(base)), sizes)
    agree, flip = new["agree_and_move_on"], new["page_flip"]
    met = {
        "agree_and_move_on_s": agree["seconds_max"] < TARGETS["agree_and_move_on_s"],
        "agree_and_move_on_actions": agree["actions"] <= TARGETS["agree_and_move_on_actions"],
        "page_flip_p95_ms": flip["p95_ms"] < TARGETS["page_flip_p95_ms"],
        "type_correction_actions": new["type_correction"].get("actions", math.inf)
        <= TARGETS["type_correction_actions"],
    }
    if answers:
        for name, _doc, _options in ANSWER_TASKS:
            met[f"{name}_actions"] = new[name].get("actions", math.inf) <= TARGETS[f"{name}_actions"]
    return {
        "viewport": VIEWPORT,
        "targets": TARGETS,
        "arbiter": new,
        "baseline": old,
        "baseline_is": f"the app at commit {BASE_COMMIT} (before issue 12): agree, back to the queue, Alt+N",
        "met": met,
        "all_met": all(met.values()),
        "agree_and_move_on_s": agree["seconds_max"],
        "page_flip_p95_ms": flip["p95_ms"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-baseline", action="store_true")
    args = parser.parse_args(argv)
    preset = dict(PRESETS["quick" if args.quick else "full"])
    if args.no_baseline:
        preset["baseline"] = False
    print(json.dumps(run(**preset), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
