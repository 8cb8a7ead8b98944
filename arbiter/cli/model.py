"""`arbiter model train`, `arbiter model adopt` and `arbiter model show`: a better page reader from what
clinicians reviewed, measured on pages it never saw, and adopted by a profile that pins it."""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from arbiter.cli.model_report import pct, print_train, reasons, table
from arbiter.cli.review import DbOpt
from arbiter.cli.support import ArbiterCommand, ArbiterGroup, fail

out = Console()
console = Console(stderr=True)

model_app = typer.Typer(
    cls=ArbiterGroup,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="The learned page reader: fit a candidate (from the clinicians' ground truth), adopt it, show one.",
)

OutDirOpt = Annotated[
    Path,
    typer.Option(
        "--out-dir", metavar="DIR", help="Output directory (holds arbiter.db and bundles/ by default)."
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]


def _default_file(out_dir: Path) -> Path:
    """OUT/models/page_reader-candidate-<date>.json, numbered when that name is taken (an adopted file is
    never overwritten)."""
    stem = f"page_reader-candidate-{dt.date.today().isoformat()}"
    path = out_dir / "models" / f"{stem}.json"
    n = 2
    while path.exists():
        path = out_dir / "models" / f"{stem}-{n}.json"
        n += 1
    return path


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@model_app.command(cls=ArbiterCommand)
def train(
    from_ground_truth: Annotated[
        bool,
        typer.Option(
            "--from-ground-truth",
            help="Also learn from the pages clinicians validated or corrected (the newest SME version of "
            "each document's ground truth, its pages read from the run's stored bundle).",
        ),
    ] = False,
    corpus: Annotated[
        Path | None,
        typer.Option("--corpus", metavar="DIR", help="Corpus folder (default: the checkout's corpus/)."),
    ] = None,
    out_file: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="FILE",
            help="Where to write the candidate (default: OUT/models/page_reader-candidate-DATE.json).",
        ),
    ] = None,
    folds: Annotated[
        int, typer.Option("--folds", metavar="K", min=2, help="Folds of the reviewed documents (held out).")
    ] = 5,
    weight: Annotated[
        float,
        typer.Option(
            "--weight", metavar="W", min=0.1, help="Weight of a reviewed page against a corpus page."
        ),
    ] = 2.0,
    version: Annotated[
        str | None, typer.Option("--version", metavar="V", help="The candidate's version (default: today).")
    ] = None,
    profile_path: Annotated[
        Path | None,
        typer.Option(
            "--profile",
            metavar="PROFILE.toml",
            help="Compare with the reader this profile pins (default: the bundled profile's).",
        ),
    ] = None,
    db: DbOpt = None,
    out_dir: OutDirOpt = Path("output"),
    json_out: JsonOpt = False,
) -> None:
    """Fit a candidate page reader and say, on pages it never saw, whether it reads better than the shipped one.

    Fitted on the corpus and the fixtures, and with --from-ground-truth on the pages clinicians reviewed.
    Reported: the corpus held out by source, without and with the reviewed pages in training; and the
    reviewed pages held out in folds by document, the shipped reader against the candidate. The candidate
    is written to a file; nothing changes until a profile adopts it (`arbiter model adopt`)."""
    if importlib.util.find_spec("sklearn") is None:
        raise fail(
            "Fitting a page reader needs scikit-learn: install the train extra (pip install 'arbiter[train]')."
        )
    from arbiter.cli.support import require_database
    from arbiter.contracts.profile import load_profile
    from arbiter.errors import UserError
    from arbiter.reader.candidate import train_candidate
    from arbiter.reader.corpus import CorpusError, default_root, load_corpus
    from arbiter.reader.ground_truth import load_ground_truth
    from arbiter.reader.model import ReaderError, reader_for
    from arbiter.reader.train import TrainPage, corpus_pages, fixture_pages, write_reader
    from arbiter.run.compose import database_url

    root = corpus or default_root()
    if not (root / "sources").is_dir():
        raise fail(
            f"No corpus at {root} (a folder with sources/ in it, see corpus/FORMAT.md): pass --corpus DIR."
        )
    try:
        profile = load_profile(profile_path)
        settings = profile.content.reader
        if settings is None:
            raise fail(
                f"{'The bundled profile' if profile_path is None else profile_path} pins no page reader to compare with."
            )
        shipped = reader_for(settings.model, settings.sha256)
    except (UserError, ReaderError) as exc:
        raise fail(str(exc)) from None

    truth: list[TrainPage] = []
    skipped: list[tuple[str, str]] = []
    documents = 0
    if from_ground_truth:
        url = database_url(db, out_dir)
        try:
            require_database(url)
        except UserError as exc:
            raise fail(str(exc)) from None
        found = load_ground_truth(url, out_dir)
        skipped = found.skipped
        if not found.documents:
            why = f" ({len(skipped)} reviewed documents left out: {reasons(skipped)})" if skipped else ""
            raise fail(
                f"No clinician-reviewed ground truth to learn from{why}; train without --from-ground-truth."
            )
        if len(found.documents) < 2:
            raise fail(
                "Only one reviewed document: at least two are needed to measure the candidate on held-out ones."
            )
        truth, documents = found.pages, len(found.documents)
        console.print(f"{documents} reviewed documents, {len(truth)} pages", highlight=False)
    try:
        docs = load_corpus(root)
    except CorpusError as exc:
        raise fail(str(exc)) from None
    if not docs:
        raise fail(f"The corpus at {root} has no documents.")
    base = corpus_pages(docs) + fixture_pages()
    sources = sorted({p.source for p in base})
    if len(sources) < 3:  # each held-out source's model learns from the others, words seen in two of them
        raise fail(
            f"The corpus at {root} has {len(sources) - 1} source(s): at least two are needed (with the "
            "fixtures, each source is held out from a model fitted on two or more others)."
        )
    named = version or dt.date.today().isoformat()
    note = f"corpus {root} and arbiter/demo fixtures" + (
        f", {documents} clinician-reviewed documents" if truth else ""
    )
    data, summary = train_candidate(
        base,
        truth,
        shipped=shipped,
        k=folds,
        truth_weight=weight,
        version=named,
        note=note,
        log=lambda m: console.print(m, highlight=False, markup=False),
    )
    path = out_file or _default_file(out_dir)
    try:
        write_reader(data, path)
    except OSError as exc:
        raise fail(f"Could not write {path}: {exc.strerror or exc}.") from None
    digest = _sha256(path)
    result = {
        "file": str(path),
        "sha256": digest,
        "version": named,
        "features": len(data["features"]),
        **summary,
    }
    if skipped:
        result["skipped"] = [{"doc_id": d, "why": w} for d, w in skipped]
    if json_out:
        sys.stdout.write(json.dumps(result, indent=1) + "\n")
        return
    print_train(result, shipped.version)


@model_app.command(cls=ArbiterCommand)
def adopt(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="A page reader file (arbiter model train).")],
    new: Annotated[Path, typer.Option("--out", metavar="NEW.toml", help="The profile to write.")],
    profile: Annotated[
        Path | None,
        typer.Option(
            "--profile",
            metavar="BASE.toml",
            help="The profile to start from (default: the bundled medical profile).",
        ),
    ] = None,
    version: Annotated[
        str | None,
        typer.Option(
            "--version",
            metavar="V",
            help="The reader's version in the profile (default: the file's, with its sha256).",
        ),
    ] = None,
) -> None:
    """Write a profile that uses FILE as its page reader, pinned by its sha256.

    The profile is BASE.toml's text with [content.reader] naming FILE; its version and policy_version are
    marked with the reader's version, so every decision made under it records the change."""
    from importlib import resources

    from arbiter.contracts.profile import load_profile
    from arbiter.errors import UserError
    from arbiter.reader.adopt import model_name, pin_reader, reader_version
    from arbiter.reader.model import PageReader, ReaderError, reader_for

    try:
        reader = PageReader.load(file)
        if profile is not None and not profile.is_file():
            raise fail(f"Profile file {profile} does not exist.")
        text = (
            profile.read_text(encoding="utf-8")
            if profile is not None
            else resources.files("arbiter.profiles").joinpath("medical.toml").read_text(encoding="utf-8")
        )
        base = _base_profile(text, profile)
    except (ReaderError, UserError) as exc:
        raise fail(str(exc)) from None
    if profile is not None and new.resolve() == profile.resolve():
        raise fail("--out names the base profile: write the new profile to another file.")
    named = reader_version(reader, version)
    pinned = pin_reader(text, model=model_name(file), sha256=reader.sha256, version=named, profile=base)
    try:
        new.parent.mkdir(parents=True, exist_ok=True)
        new.write_text(pinned, encoding="utf-8")
        written = load_profile(new)
        settings = written.content.reader
        if settings is None or settings.sha256 != reader.sha256:
            raise ReaderError("its [content.reader] names another file")
        reader_for(settings.model, settings.sha256)
    except OSError as exc:
        raise fail(f"Could not write {new}: {exc.strerror or exc}.") from None
    except (UserError, ReaderError) as exc:
        raise fail(f"The profile written to {new} does not pin {file}: {exc}") from None
    out.print(
        Text(
            f"Wrote {new}: profile {written.name} {written.version}, policy {written.arbiter.policy_version}"
        )
    )
    out.print(
        Text(
            f"[content.reader] model = {settings.model}\n  sha256 = {settings.sha256}\n  version = {settings.version}"
        )
    )
    out.print(Text(f"Compare first: arbiter policy diff {profile or 'arbiter/profiles/medical.toml'} {new}"))


def _base_profile(text: str, path: Path | None) -> Any:
    """The base profile validated without opening the reader it pins: adopting another is how a profile
    whose reader file changed is put right."""
    import tomllib

    from pydantic import ValidationError

    from arbiter.contracts.profile import Profile
    from arbiter.errors import ConfigError

    source = str(path) if path is not None else "the bundled medical profile"
    try:
        return Profile.model_validate(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"Profile {source} is not valid TOML: {exc}") from None
    except ValidationError as exc:
        raise ConfigError(f"Profile {source} is invalid: {exc.errors()[0]['msg']}") from None


@model_app.command(cls=ArbiterCommand)
def show(
    file: Annotated[
        Path | None,
        typer.Argument(
            metavar="FILE", help="A page reader file (default: the one the bundled profile pins)."
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Say what a page reader file is: version, features, sources, and its held-out figures."""
    from arbiter.contracts.profile import load_profile
    from arbiter.errors import UserError
    from arbiter.reader.model import PageReader, ReaderError, resolve

    try:
        pinned = load_profile(None).content.reader
    except UserError as exc:
        raise fail(str(exc)) from None
    path = file if file is not None else (resolve(pinned.model) if pinned else None)
    if path is None:
        raise fail("The bundled profile pins no page reader: name a FILE.")
    try:
        reader = PageReader.load(path)
    except ReaderError as exc:
        raise fail(str(exc)) from None
    meta = reader.meta
    info = {
        "file": str(path),
        "sha256": reader.sha256,
        "version": reader.version,
        "view": reader.view_name,
        "types": list(reader.types),
        "features": len(reader.names),
        "temperature": reader.temperature,
        "pinned_by_bundled_profile": bool(pinned and pinned.sha256 == reader.sha256),
        "trained": meta,
    }
    if json_out:
        sys.stdout.write(json.dumps(info, indent=1) + "\n")
        return
    lines = [
        f"{path}",
        f"sha256 {reader.sha256}"
        + (" (the bundled profile's reader)" if info["pinned_by_bundled_profile"] else ""),
        f"version {reader.version or '?'}, {len(reader.names):,} features (view {reader.view_name}), "
        f"temperature {reader.temperature}",
    ]
    if meta.get("date"):
        lines.append(f"trained {meta['date']}: {meta.get('note', '')}")
    if meta.get("sources"):
        lines.append(f"sources ({len(meta['sources'])}): {', '.join(meta['sources'])}")
    if meta.get("pages"):
        lines.append("pages: " + ", ".join(f"{t} {n}" for t, n in meta["pages"].items()))
    for line in lines:
        out.print(Text(line))
    held = meta.get("held_out") or {}
    if held:
        rows: list[tuple[str, ...]] = [(t, pct(v)) for t, v in (held.get("per_type") or {}).items()]
        rows.append(("all pages", pct(held.get("accuracy"))))
        out.print(table("Held out by source (corpus)", ("type", "page accuracy"), rows))
        if held.get("ece") is not None:
            out.print(Text(f"Calibration error (held out): {held['ece']:.3f}"))
    gt = meta.get("ground_truth")
    if gt:
        s, c = gt["held_out"]["shipped"], gt["held_out"]["candidate"]
        rows = [(str(t), pct(s["per_type"].get(t)), pct(v)) for t, v in c["per_type"].items()]
        rows.append(("all pages", pct(s["accuracy"]), pct(c["accuracy"])))
        title = (
            f"Reviewed pages held out ({gt['documents']} documents, {gt['pages']} pages, {gt['folds']} folds)"
        )
        out.print(table(title, ("type", f"reader {s.get('reader', '?')}", "this reader"), rows))
