"""`arbiter demo`: the bundled synthetic fixtures verified offline (the Quickstart's main job)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from arbiter.cli.run import run
from arbiter.cli.support import command_name

console = Console(stderr=True)
out = Console()


# The demo samples a quarter of its 31 documents for blind review (the profile's 5% / 10% would give about
# one), so the audit and second-review flow and the false-accept rate are visible after a few reviews.
DEMO_SAMPLE_SHARE = 0.25


def demo(
    out_dir: Annotated[Path, typer.Option("--out", metavar="DIR", help="Output directory.")] = Path("output"),
    workers: Annotated[
        int | None, typer.Option(min=1, metavar="N", help="Documents in flight (default: CPU count).")
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
) -> None:
    """Verify the bundled synthetic fixtures offline: the Quickstart's main job (a quarter of the documents
    are also sampled for blind review). A second demo into the same --out adds to its database (new
    ground-truth versions, more packets); `make reset` or another --out starts over."""
    from arbiter.demo.corpus import write_demo_inputs

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
