"""The `--kind` branch of `arbiter run`, `verify` and `demo` for kinds whose inputs are JSON items that carry
their own context (arbiter/kinds: grounded-answer)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from arbiter.errors import InputError
from arbiter.kinds import KindSpec, kind

KindOpt_HELP = "What is verified: medical-classification (PDFs, the default) | grounded-answer (JSON items)."


def items_kind(name: str | None) -> KindSpec | None:
    """The kind named, when its inputs are items; None for a PDF kind (the medical default)."""
    spec = kind(name)
    return spec if spec.inputs == "items" else None


def refuse_pdf_options(spec: KindSpec, given: dict[str, Any]) -> None:
    """Options that only PDF runs have, given to an items run: one line naming them (nothing is silently
    ignored)."""
    used = [name for name, value in given.items() if value not in (None, False, "local", "none", [], ())]
    if used:
        raise InputError(
            f"--kind {spec.name} does not take {', '.join(used)} (items carry their own context and answer, "
            "so the PDF, classifier and extraction options do not apply; batch jobs and blind sampling shares "
            "do not serve this kind yet)."
        )


def run_items_command(spec: KindSpec, inputs: list[Path], out_dir: str, **options: Any) -> dict[str, Any]:
    from arbiter.run.item_batch import run_items

    if "://" in out_dir:
        raise InputError(f"--kind {spec.name} writes to a local folder only, not {out_dir}.")
    return run_items(spec, inputs, Path(out_dir), **options)


def verify_item_command(
    spec: KindSpec,
    item: Path,
    profile: Path | None,
    as_json: bool,
    *,
    llm: str | None = None,
    llm_model: str | None = None,
) -> Any:
    """One item verified and decided; nothing written (with --llm, the model's answers are not cached either,
    as for a PDF's `arbiter verify`)."""
    from arbiter.llm.config import LLMSettings
    from arbiter.run.item_batch import item_llm
    from arbiter.run.items import read_items, verify_item

    (raw,) = read_items([item])[:1] if item.suffix != ".jsonl" else _single(item)
    client = item_llm(LLMSettings.from_env(backend=llm, model=llm_model), disk_cache=False)
    outcome = verify_item(spec, raw.raw, spec.load_profile(profile), item_id=raw.item_id, llm=client)
    if as_json:
        sys.stdout.write(outcome.model_dump_json(indent=2) + "\n")
    return outcome


def _single(path: Path) -> list[Any]:
    from arbiter.run.items import read_items

    found = read_items([path])
    if len(found) != 1:
        raise InputError(f"{path} holds {len(found)} items; `arbiter verify` checks one (use `arbiter run`).")
    return found
