"""`arbiter demo`: the bundled synthetic fixtures verified offline (the Quickstart's main job)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from arbiter.cli.demo_trust import DEFAULT_OUT, HISTORY, SHIFTED
from arbiter.cli.run import run
from arbiter.cli.support import command_name, fail
from arbiter.errors import UserError

console = Console(stderr=True)
out = Console()


# The demo samples a quarter of its 31 documents for blind review (the profile's 5% / 10% would give about
# one), so the audit and second-review flow and the false-accept rate are visible after a few reviews.
DEMO_SAMPLE_SHARE = 0.25


def demo(
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out", metavar="DIR", help="Output directory (default: output; with --trust, output/trust)."
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            metavar="N",
            help="Documents in flight (default: CPU count; with --trust 1, for the same figures).",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force/--no-force", help="Redo documents even when nothing changed."),
    ] = True,
    llm: Annotated[
        str,
        typer.Option(
            metavar="NAME", help="none, or replay: the LLM phases answered by the bundled sample responses."
        ),
    ] = "none",
    kind: Annotated[
        str | None,
        typer.Option(
            "--kind",
            metavar="NAME",
            help="medical-classification (the PDFs, the default) | grounded-answer (45 questions over 45 CFR 164).",
        ),
    ] = None,
    trust: Annotated[
        bool,
        typer.Option(
            "--trust",
            help=f"The trust figures instead: {HISTORY + SHIFTED} documents in two runs (a new producer with "
            "30 % wrong answers in the second), every blind audit answered by simulated reviewers, then the "
            "guarantee, the calibration and the drift alarm (a minute or two; needs a new --out).",
        ),
    ] = False,
) -> None:
    """Verify the bundled synthetic fixtures offline: the Quickstart's main job (a quarter of the documents
    are also sampled for blind review). A second demo into the same --out adds to its database (new
    ground-truth versions, more packets); `make reset` or another --out starts over. With --trust, the trust
    figures on a larger demo instead: the false-accept guarantee, the calibration measured on held-out audits
    and a drift alarm on a new producer."""
    from arbiter.cli.items import items_kind
    from arbiter.demo.corpus import write_demo_inputs

    if trust:
        from arbiter.cli.demo_trust import trust_demo

        if kind is not None or llm != "none":
            raise fail("--trust runs the medical-classification demo offline: leave out --kind and --llm.")
        trust_demo(out_dir or DEFAULT_OUT, workers)
        return
    out_dir = out_dir or Path("output")
    spec = items_kind(kind)
    if spec is not None:
        _items_demo(spec, out_dir, workers, force, llm)
        return

    existing = out_dir / "arbiter.db"
    if existing.is_file():
        console.print(
            f"{existing} already exists: this demo adds to it (new ground-truth versions, more packets). "
            f"To start over, delete {out_dir} (`make reset` empties output/) or pass another --out.",
            soft_wrap=True,
        )
    # The inputs are written from the package's generator, so the demo needs no checkout.
    inputs = write_demo_inputs(out_dir / "demo")
    console.print(f"The demo's synthetic inputs (no real patient data): {inputs.folder}", soft_wrap=True)
    run(
        inputs=[inputs.pdfs, inputs.damaged],
        classifications=inputs.classifications,
        classifier=None,
        production=inputs.production,
        out_dir=str(out_dir),
        workers=workers,
        profile=None,
        password=None,
        force=force,
        timeout=120.0,
        quiet=False,
        llm=llm,
        audit_share=DEMO_SAMPLE_SHARE,
        second_review_share=DEMO_SAMPLE_SHARE,
    )
    out.print(
        f"Packets for the SME queue: {out_dir / 'sme_packets'}; ground truth: {out_dir / 'ground_truth'}"
    )
    out_opt = "" if out_dir == Path("output") else f" --out {out_dir}"
    arbiter = command_name()  # `.venv/bin/arbiter` after `make demo` in a checkout: the hint runs as printed
    out.print(
        f"Review them in the browser: {arbiter} users add NAME --role admin{out_opt}, then "
        f"{arbiter} review --docs {inputs.folder}{out_opt}",
        soft_wrap=True,
    )


def _items_demo(spec: Any, out_dir: Path, workers: int | None, force: bool, llm: str) -> None:
    """The grounded-answer demo: the committed generator's items (a third answered wrongly on purpose)
    verified offline (or with `--llm replay`, V4's entailment check answered by the bundled sample model),
    and how the decisions compare with what was planted."""
    import json

    from arbiter.cli.summary import print_summary as _print_summary
    from arbiter.demo.grounded.build import demo_items, write_jsonl, write_truth
    from arbiter.run.item_batch import DECISION_FILE, run_items

    planted = demo_items()
    folder = out_dir / "demo-grounded"
    items = write_jsonl(planted, folder / "items.jsonl")
    write_truth(planted, folder / "truth.json")
    console.print(f"The demo's items (45 CFR Part 164 text, a synthetic policy): {items}", soft_wrap=True)
    try:
        summary = run_items(spec, [items], out_dir, workers=workers or 1, force=force, llm={"backend": llm})
    except UserError as exc:
        raise fail(str(exc)) from None
    _print_summary(summary)
    hits = {"wrong": [0, 0], "right": [0, 0]}
    for p in planted:
        decided = json.loads((out_dir / "agent_outputs" / p.item["item_id"] / DECISION_FILE).read_text())
        row = hits["wrong" if p.expected == "ESCALATE_TO_SME" else "right"]
        row[0] += decided["final_decision"] == p.expected
        row[1] += 1
    out.print(
        f"Planted wrong answers escalated: {hits['wrong'][0]} of {hits['wrong'][1]}; correct answers (some "
        f"after meaning-preserving fixes) accepted: {hits['right'][0]} of {hits['right'][1]}. What was planted "
        f"in each: {folder / 'truth.json'}; each item's checks: {out_dir / 'agent_outputs'}/ITEM_ID/",
        soft_wrap=True,
    )
    out_opt = "" if out_dir == Path("output") else f" --out {out_dir}"
    arbiter = command_name()
    out.print(
        f"Review the escalated answers in the browser: {arbiter} users add NAME --role admin{out_opt}, then "
        f"{arbiter} review{out_opt}",
        soft_wrap=True,
    )
