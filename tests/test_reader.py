"""The learned page reader (arbiter/reader): its file, its features, its fitting and the corpus it is fitted on."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbiter.contracts import BlockType, LineBox, Page, Paragraph
from arbiter.contracts.profile import ReaderSettings, load_profile
from arbiter.errors import ConfigError
from arbiter.ingest.pagination import page_fill
from arbiter.reader import train
from arbiter.reader.corpus import (
    LINES_PER_PAGE,
    CorpusDoc,
    CorpusError,
    Item,
    Part,
    load_corpus,
    packet_items,
    render,
    split_pages,
)
from arbiter.reader.features import FULL, WORDS, feature_counts, token_features
from arbiter.reader.model import FORMAT, PACKAGED, PageReader, ReaderError, load_reader, reader_for
from arbiter.reader.starts import pair_features
from arbiter.verifiers.base import VerifyContext
from arbiter.verifiers.v2_consistency import V2Consistency
from arbiter.verify.runner import run_verifiers
from tests.v34_helpers import PROFILE, classification, make_bundle, make_page, segment, subject

SHIPPED = PACKAGED / "page_reader.json"
TRICKY = [
    "KRAS c.35G>T (p.G12C) VAF 23.4% *1/*4 rs1065852 CYP2D6 poor metabolizer",
    "Hemoglobin 11.2 L g/dL 12.0-15.5\nPotassium 5.9 H mmol/L\nTEST RESULT FLAG UNITS",
    "MACROSCOPY:\nSkin ellipse 12 x 5 mm.\nCONCLUSION:\nBasal cell carcinoma, margins clear.",
    "Patient name: ______  DOB: ____\n[ ] CBC  [x] CMP  ☐ HbA1c\nSignature:",
    "",
    "   \n\n  ",
    "naïve café — ﬁle “quoted” 10–12 µg/L ≥ 5",
]


def small_reader(tmp_path: Path) -> Path:
    """A reader fitted on a few pages of two kinds from three sources."""
    pages = []
    for n, source in enumerate(("a", "b", "c")):
        for k in range(3):
            pages.append(
                train.TrainPage(
                    source, f"{source}{k}", 1, "LAB_REPORT", f"Hemoglobin {k + n} g/dL reference range", True
                )
            )
            pages.append(
                train.TrainPage(
                    source,
                    f"{source}n{k}",
                    1,
                    "CLINICAL_NOTE",
                    f"History of present illness {k} assessment plan",
                    True,
                )
            )
    data = train.fit(pages, c=10.0).data
    path = tmp_path / "reader.json"
    train.write_reader(data, path)
    return path


@pytest.mark.parametrize("text", TRICKY)
def test_fast_path_reads_the_training_features(text: str) -> None:
    """The reader's cached fast path counts exactly the features training counted on the same text."""
    reader = load_reader(SHIPPED)
    ids, values, _ = reader._vector(text)
    counts = {reader.index[f]: n for f, n in feature_counts(text, reader.view).items() if f in reader.index}
    assert ids.tolist() == sorted(counts)
    if counts:
        expected = np.log1p(np.asarray([counts[i] for i in sorted(counts)], dtype=float))
        assert np.allclose(values, expected / np.sqrt(expected @ expected))


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["Hemoglobin", "13.2", "g/dL", "final", "diagnosis", "rs1065852", "*1/*4", "Re:", "é"]
        )
        | st.text(alphabet=" \t\n\u00a0\u2003\x1c\x85\u3000", min_size=1, max_size=3),
        max_size=60,
    )
)
def test_fast_path_reads_the_training_features_around_any_whitespace(parts: list[str]) -> None:
    """Words split by any kind of whitespace (no-break, ideographic, separators) count as training counts them."""
    reader = load_reader(SHIPPED)
    text = "".join(parts)
    ids, _, _ = reader._vector(text)
    counts = {reader.index[f]: n for f, n in feature_counts(text, reader.view).items() if f in reader.index}
    assert ids.tolist() == sorted(counts)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "Hemoglobin",
                "13.2",
                "g/dL",
                "final",
                "diagnosis",
                "history",
                "of",
                "present",
                "illness",
                "...",
                "--",
                "(",
                "rs1065852",
                "é",
            ]
        )
        | st.sampled_from([" ", "  ", "\n", "\t", "\u00a0\n"])
        | st.text(max_size=6),
        max_size=80,
    ),
    st.booleans(),
)
def test_every_feature_is_counted_as_often_as_training_counts_it(parts: list[str], warm: bool) -> None:
    """The reader's page-at-once counting gives each feature the exact count training gives it (words, pairs
    across tokens with no word between, line features), whether its tokens were seen before or not."""
    reader = load_reader(SHIPPED) if warm else PageReader(json.loads(SHIPPED.read_text(encoding="utf-8")))
    text = " ".join(parts)
    found, tokens = reader._found(text)
    counted = dict(zip(*np.unique(found, return_counts=True), strict=True))
    expected = {reader.index[f]: n for f, n in feature_counts(text, reader.view).items() if f in reader.index}
    assert {int(k): int(v) for k, v in counted.items()} == expected
    assert tokens == len(text.split())


@pytest.mark.parametrize(
    ("token", "feature"),
    [
        ("c.35G>T", "s:x.9X>X"),
        ("*1/*4", "s:*9/*9"),
        ("rs1065852", "s:x9"),
        ("12.5", "s:9.9"),
        ("Macroscopy", "w:macroscopy"),
        ("Macroscopy", "c:<mac"),
    ],
)
def test_token_features(token: str, feature: str) -> None:
    """Words, word pieces and token shapes are named features a person can read."""
    assert feature in token_features(token, FULL)


def test_words_view_has_no_pieces_shapes_or_layout() -> None:
    """The second view (for a primary that must not share the checker's view) reads words and lines only."""
    counts = feature_counts(TRICKY[0] + "\n" + TRICKY[3], WORDS)
    assert counts
    assert all(f[:2] in ("w:", "b:", "h:") for f in counts)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400))
def test_no_text_crashes_the_reader(text: str) -> None:
    """Any text reads to probabilities over the profile's types that sum to one."""
    reading = load_reader(SHIPPED).read(text)
    assert set(reading.probs) == set(PROFILE.taxonomy.document_types)
    assert abs(sum(reading.probs.values()) - 1.0) < 1e-9


def test_shipped_reader_is_pinned_small_and_calibrated() -> None:
    """The shipped file is the one the profile pins, at most 10 MB, with its held-out figures and calibration."""
    settings_ = load_profile().content.reader
    assert settings_ is not None
    assert hashlib.sha256(SHIPPED.read_bytes()).hexdigest() == settings_.sha256
    assert SHIPPED.stat().st_size <= 10_000_000
    reader = reader_for(settings_.model, settings_.sha256)
    held = reader.meta["held_out"]
    assert 0 <= held["ece"] <= 1
    assert 0 < held["accuracy"] <= 1
    assert len(reader.meta["sources"]) >= 12


def test_reader_file_is_sorted_one_feature_a_line(tmp_path: Path) -> None:
    """A reader file is plain JSON, one feature a line in sorted order, so a new fit reads as a diff."""
    path = small_reader(tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    feats = [line.strip().split('": ')[0] for line in lines if line.startswith('    "')]
    assert feats == sorted(feats)
    assert len(feats) > 3
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == FORMAT
    reader = PageReader.load(path)
    assert reader.read("Hemoglobin 13 g/dL reference range").best()[0] == "LAB_REPORT"


def test_features_from_one_source_are_not_kept(tmp_path: Path) -> None:
    """A feature seen in only one training source (a hospital's name) never becomes part of the model."""
    pages = [
        train.TrainPage(s, f"{s}{k}", 1, t, f"{'Zebulon Hospital ' if s == 'a' else ''}{w} {k}", True)
        for s in ("a", "b", "c")
        for k in range(2)
        for t, w in (("LAB_REPORT", "hemoglobin result"), ("CLINICAL_NOTE", "assessment plan"))
    ]
    data = train.fit(pages).data
    assert "w:zebulon" not in data["features"]
    assert "w:hemoglobin" in data["features"]


@pytest.mark.parametrize(
    ("mutate", "said"),
    [
        (lambda p: p.write_text("{not json", encoding="utf-8"), "is not JSON"),
        (
            lambda p: p.write_text('{"format": "other"}', encoding="utf-8"),
            "not an arbiter-page-reader/1 file",
        ),
        (lambda p: p.unlink(), "cannot read the page reader"),
    ],
)
def test_unusable_reader_files_are_refused(tmp_path: Path, mutate, said: str) -> None:  # type: ignore[no-untyped-def]
    """A missing, broken or foreign reader file is refused with a sentence, never read as an empty model."""
    path = small_reader(tmp_path)
    mutate(path)
    with pytest.raises(ReaderError, match=said):
        PageReader.load(path)


def test_a_changed_reader_file_fails_the_content_check_closed(tmp_path: Path) -> None:
    """A reader file that is not the one the profile pins makes V2 ERRORED (a check that could not run)."""
    path = small_reader(tmp_path)
    pinned = hashlib.sha256(path.read_bytes()).hexdigest()
    path.write_text(path.read_text(encoding="utf-8").replace('"bias"', '"bias" ', 1), encoding="utf-8")
    reader = ReaderSettings(model=str(path), sha256=pinned, version="t")
    profile = PROFILE.model_copy(update={"content": PROFILE.content.model_copy(update={"reader": reader})})
    page = make_page(1, paragraphs=[("Hemoglobin 13.2 g/dL reference range 12-15", "paragraph")])
    data = classification(segment(1, 1, "LAB_REPORT", {"LAB_REPORT": [(1, "Hemoglobin 13.2 g/dL")]}))
    (result,) = run_verifiers(subject(data), make_bundle(page), profile, [V2Consistency()], VerifyContext())
    assert result.status.value == "ERRORED"
    assert any("ReaderError" in i.message for i in result.issues)


def test_a_profile_whose_reader_is_not_pinned_is_refused(tmp_path: Path) -> None:
    """Loading a profile whose reader file is missing or not the pinned one fails with one clear line."""
    text = (Path(__file__).parents[1] / "arbiter" / "profiles" / "medical.toml").read_text(encoding="utf-8")
    changed = tmp_path / "p.toml"
    changed.write_text(text.replace('model = "page_reader.json"', 'model = "absent.json"'), encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot read the page reader"):
        load_profile(changed)


def test_explanation_quotes_the_page() -> None:
    """The reader explains a reading by the page's own words that moved it most."""
    reader = load_reader(SHIPPED)
    text = "SURGICAL PATHOLOGY REPORT\nGross description: received in formalin.\nFinal diagnosis: adenocarcinoma."
    shown = reader.explain(text, "PATHOLOGY_REPORT")
    assert shown
    assert all(any(w in text.lower() for w in s.lower().strip('"').split()) for s in shown)


def _explain_by_named_features(
    reader: PageReader, text: str, toward: str, against: str | None, limit: int = 3
) -> list[str]:
    """The explanation as it was first written: every feature of the page named one by one (page_features)."""
    from arbiter.reader.features import page_features
    from arbiter.reader.model import _describe

    contribution = reader.contributions(text, toward, against)
    by_label: dict[str, float] = {}
    for feat, seen in page_features(text, reader.view):
        i = reader.index.get(feat)
        if i is None or i not in contribution:
            continue
        label = _describe(feat, seen)
        by_label[label] = by_label.get(label, 0.0) + contribution.pop(i)
    ranked = sorted((v, k) for k, v in by_label.items() if v > 0.02)
    return [label for _, label in reversed(ranked[-limit:])]


def test_explanations_read_from_cached_tokens_equal_those_of_named_features() -> None:
    """On corpus pages and tricky text, toward each type and against another, the explanation is the same as
    naming every feature of the page one by one gives."""
    reader = load_reader(SHIPPED)
    pages = [page for doc in load_corpus() for page in doc.pages][::5] + TRICKY
    compared = 0
    for n, text in enumerate(pages):
        toward = reader.types[n % len(reader.types)]
        against = reader.types[(n + 2) % len(reader.types)] if n % 3 else None
        assert reader.explain(text, toward, against) == _explain_by_named_features(
            reader, text, toward, against
        )
        compared += bool(reader.explain(text, toward, against))
    assert compared > 100


# ------------------------------------------------------------------------------------------ corpus
def test_split_pages_at_form_feeds_and_long_pages() -> None:
    """A form feed starts a page, and a page longer than the renderer's page is cut."""
    text = "a\nb\fc\n" + "\n".join(f"line {i}" for i in range(LINES_PER_PAGE + 3))
    pages = split_pages(text)
    assert pages[0] == "a\nb"
    assert len(pages) == 3


def test_rendering_is_deterministic_and_packets_keep_their_parts() -> None:
    """The same corpus renders to the same bytes, and a packet's parts cover its pages in order."""
    docs = [
        CorpusDoc(f"s-{i}", "s", t, (f"Title {i}\nbody {i}", f"more {i}"), f"Title {i}")
        for i, t in enumerate(
            ("LAB_REPORT", "CLINICAL_NOTE", "ADMINISTRATIVE", "LAB_REPORT", "CLINICAL_NOTE")
        )
    ]
    first = [render(i).pdf for i in packet_items(docs, share=1.0)]
    second = packet_items(docs, share=1.0)
    assert first == [render(i).pdf for i in second]
    for item in second:
        assert item.parts[0].first == 1
        for before, after in zip(item.parts, item.parts[1:], strict=False):
            assert after.first == before.last + 1
    single = render(Item("x", "s", [Part(docs[0], 1, 2, numbered=True, titled=False)]))
    assert "Title 0" not in single.page_texts[0]
    assert "1 of 2" in "".join(single.page_texts)


@pytest.mark.parametrize(
    ("listing", "said"),
    [
        ('[[doc]]\nid = "x-1"\ntype = "MEMO"\nfile = "x-1.txt"\n', "has type 'MEMO'"),
        ('[[doc]]\nid = "x-1"\ntype = "LAB_REPORT"\nfile = "gone.txt"\n', "gone.txt is missing"),
    ],
)
def test_corpus_format_errors_are_named(tmp_path: Path, listing: str, said: str) -> None:
    """A corpus folder that breaks corpus/FORMAT.md is refused, naming the file and the problem."""
    folder = tmp_path / "sources" / "x"
    folder.mkdir(parents=True)
    (folder / "SOURCE.toml").write_text('name = "X"\nlicence = "CC0-1.0"\n', encoding="utf-8")
    (folder / "docs.toml").write_text(listing, encoding="utf-8")
    (folder / "x-1.txt").write_text("text", encoding="utf-8")
    with pytest.raises(CorpusError, match=said):
        load_corpus(tmp_path)


def test_committed_corpus_is_large_varied_and_licensed() -> None:
    """The committed corpus has at least 300 documents from at least 12 sources, every type, and each
    source names its licence."""
    from arbiter.reader.corpus import default_root, load_sources

    docs = load_corpus()
    sources = load_sources(default_root())
    assert len(docs) >= 300
    assert len(sources) >= 12
    assert {d.type for d in docs} == set(PROFILE.taxonomy.document_types)
    assert all(s.licence for s in sources.values())


def test_sources_file_lists_every_source() -> None:
    """corpus/SOURCES.md is what the source folders say (licence, commit, documents per type)."""
    from arbiter.reader.corpus import default_root, sources_markdown

    assert (default_root() / "SOURCES.md").read_text(encoding="utf-8") == sources_markdown()


def test_the_start_reader_gives_the_same_answer_under_any_hash_seed() -> None:
    """Its features come in one order, so P(start) and its explanation are byte-identical under any hash seed."""
    import os
    import subprocess
    import sys

    script = (
        "from arbiter.contracts.profile import load_profile\n"
        "from arbiter.reader.starts import pair_features, start_reader_for\n"
        "s = load_profile().content.reader\n"
        "r = start_reader_for(s.starts, s.starts_sha256)\n"
        "before = 'Final diagnosis: benign\\nElectronically signed by Dr A Smith\\nPage 2 of 2'\n"
        "after = 'Dear Dr Jones\\nThank you for referring Mr B\\nI saw him today in clinic'\n"
        "print(repr(r.probability(before, after, None, None)))\n"
        "print([f for f, _ in pair_features(before, after, None, None)])\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3", "4")
    }
    assert len(outputs) == 1, outputs


def _boxed_page(lines: list[tuple[str, float]], footer: str | None = None) -> Page:
    """A page of 792 points whose lines sit at the given bottoms (points from the page's foot)."""
    text, boxes, paragraphs = "", [], []
    for line, bottom in lines:
        start = len(text)
        text += line + "\n"
        boxes.append(LineBox(start=start, end=start + len(line), box=(72.0, bottom, 300.0, bottom + 10)))
    if footer is not None:
        start = len(text)
        text += footer + "\n"
        boxes.append(LineBox(start=start, end=start + len(footer), box=(72.0, 20.0, 300.0, 30.0)))
        paragraphs.append(Paragraph(text=footer, block_type=BlockType.FOOTER, start=start, end=len(text)))
    return Page(page_num=1, text=text, width=612.0, height=792.0, lines=boxes, paragraphs=paragraphs)


@pytest.mark.parametrize(
    ("lines", "footer", "fill"),
    [
        ([("Discharge summary", 700.0), ("Plan: home", 396.0)], None, 0.5),  # stops halfway down
        ([("Results", 700.0), ("Sodium 139", 79.2)], None, 0.9),  # runs to the bottom margin
        (
            [("Results", 700.0), ("Sodium 139", 396.0)],
            "Confidential - Northfield Lab",
            0.5,
        ),  # footer left out
        ([("Results", 700.0), ("Sodium 139", 396.0), ("Page 1 of 2", 40.0)], None, 0.5),  # a page number too
    ],
)
def test_page_fill(lines: list[tuple[str, float]], footer: str | None, fill: float) -> None:
    """How far down a page its body runs, running footers and bare page numbers left out."""
    assert page_fill(_boxed_page(lines, footer)) == pytest.approx(fill)


def test_page_fill_unknown_without_boxes() -> None:
    """A page with no line boxes or no size has no fill (the feature is left out, not guessed)."""
    assert page_fill(Page(page_num=1, text="Plan: home")) is None


def test_start_reader_reads_fill() -> None:
    """The page before stopping halfway is a feature of the pair; a page running to the bottom is another."""
    half = dict(pair_features("Plan: home", "Consultation Note", None, None, 0.4))
    full = dict(pair_features("Plan: home", "Consultation Note", None, None, 0.9))
    assert "fill:0" in half
    assert "fill:3" in full
    assert not any(f.startswith("fill:") for f in dict(pair_features("a", "b", None, None)))


def test_corpus_pairs_join_documents_of_a_source() -> None:
    """The start reader also learns from one source's documents joined end to start, each a start."""
    from arbiter.reader.corpus import default_root, load_corpus
    from arbiter.reader.pages import corpus_pairs

    docs = [d for d in load_corpus(default_root()) if d.source == "note-primock57"][:4]
    joins = [p for p in corpus_pairs(docs) if "+" in p.item]
    assert len(joins) == 3
    assert all(p.starts and p.before_fill is not None for p in joins)
