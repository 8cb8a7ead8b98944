"""The options several `arbiter` commands share (run, verify, demo), defined once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from arbiter.llm.config import DEFAULT_MODEL

ProfileOpt = Annotated[
    Path | None,
    typer.Option("--profile", metavar="FILE", help="Profile TOML replacing the medical default."),
]
PasswordOpt = Annotated[
    str | None,
    typer.Option(
        "--password", metavar="PW", help="Password for encrypted PDFs (an empty one is always tried)."
    ),
]
LlmOpt = Annotated[
    str | None,
    typer.Option(metavar="NAME", help="gemini | openai | replay | none (default: $ARBITER_LLM or none)."),
]
LlmModelOpt = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        help=f"Model name (default: $ARBITER_LLM_MODEL, else {DEFAULT_MODEL}; none for openai).",
    ),
]
ExtractorOpt = Annotated[
    str | None,
    typer.Option(metavar="NAME", help="local | documentai (default: $ARBITER_EXTRACTOR or local)."),
]
DocAIProcessorOpt = Annotated[
    str | None,
    typer.Option(
        "--documentai-processor",
        metavar="NAME",
        help="Document AI processor, projects/P/locations/L/processors/ID (default: $ARBITER_DOCUMENTAI_PROCESSOR).",
    ),
]
DocAILocationOpt = Annotated[
    str | None,
    typer.Option(
        "--documentai-location",
        metavar="LOC",
        help="Its location, e.g. us or eu (default: $ARBITER_DOCUMENTAI_LOCATION, else from its name).",
    ),
]
DocAIReplayOpt = Annotated[
    Path | None,
    typer.Option(
        "--documentai-replay",
        metavar="DIR",
        help="Answer from Document AI responses recorded in DIR, never the network "
        "(default: $ARBITER_DOCUMENTAI_REPLAY_DIR).",
    ),
]


def documentai_overrides(processor: str | None, location: str | None, replay: Path | None) -> dict[str, Any]:
    """The Document AI settings given on the command line (the environment fills in the rest)."""
    given = {"processor": processor, "location": location, "replay_dir": str(replay) if replay else None}
    return {k: v for k, v in given.items() if v is not None}
