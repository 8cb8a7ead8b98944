"""Minor-only defect variants (accepted as they are, or escalated for a missing primary evidence), and the
assembly of each document's cases: the correct answer first, then every registered variant (the blocker
variants of variants.py and the majors of cases.py register first, as this module imports them)."""

from __future__ import annotations

import copy
from typing import Any

from arbiter.contracts.profile import Profile
from arbiter.demo import cases  # noqa: F401  (registers the major variants before the minor ones)
from arbiter.demo.layout import DocSpec, PageText, norm
from arbiter.demo.variants import (
    CATALOGUE,
    Ctx,
    Variant,
    accept,
    all_evidence,
    entry,
    escalate,
    primary,
    variant,
)


# ----------------------------------------------------------------- minor only: accepted as they are
@variant(
    "lab-labcorp-04",
    "footer-snippet",
    accept("minor_only", ["V3.HEADER_FOOTER_EVIDENCE"], 'Extra evidence "Page 1 of 2": footer text.'),
)
def _footer(d: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    primary(d["segments"][0])["evidence"].append({"page": 1, "snippet": "Page 1 of 2", "anchor": "Page"})
    return d


@variant(
    "lab-quest-01",
    "fax-header-snippet",
    accept(
        "minor_only",
        ["V3.HEADER_FOOTER_EVIDENCE"],
        'Extra evidence "Fax: (617) 555-0142": the fax header line.',
    ),
)
def _fax_header(d: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    primary(d["segments"][0])["evidence"].append(
        {"page": 1, "snippet": "Fax: (617) 555-0142", "anchor": "Fax"}
    )
    return d


@variant(
    "gen-caris-04",
    "short-snippet",
    accept("minor_only", ["V4.SNIPPET_TOO_SHORT"], 'Extra evidence "TMB": too short to prove anything.'),
)
def _short(d: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    assert "tmb" in ctx.texts[0]
    primary(d["segments"][0])["evidence"].append({"page": 1, "snippet": "TMB", "anchor": "TMB"})
    return d


@variant(
    "path-colon-03",
    "anchor-missing",
    accept(
        "minor_only",
        ["V4.ANCHOR_NOT_FOUND"],
        'An anchor ("pancreaticoduodenectomy") that is not on its page.',
    ),
)
def _anchor(d: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    all_evidence(d)[0]["anchor"] = ctx.absent("pancreaticoduodenectomy")
    return d


@variant(
    "admin-facsimile-04",
    "mentioned-without-evidence",
    accept(
        "minor_only", ["V1.EVIDENCE_MISSING"], "CLINICAL_NOTE marked MENTIONED (share 0) with no evidence."
    ),
)
def _mentioned(d: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    entry(d["segments"][0], "CLINICAL_NOTE")["presence_level"] = "MENTIONED"
    return d


@variant(
    "note-progress-01",
    "primary-without-evidence",
    escalate(
        "non_fixable_major",
        ["V1.PRIMARY_EVIDENCE_MISSING"],
        "CLINICAL_NOTE, the segment's primary type, quotes no evidence; the profile requires it.",
    ),
)
def _unproven_primary(d: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    primary(d["segments"][0])["evidence"] = []
    return d


# ----------------------------------------------------------------- assembly
def variants(doc: DocSpec, pages: list[PageText], truth: dict[str, Any], profile: Profile) -> list[Variant]:
    """The correct classification's case first, then each registered defect variant of this document."""
    ctx = Ctx(doc, pages, profile, [norm("\n".join(p.body + p.margins)) for p in pages])
    registered = CATALOGUE.get(doc.doc_id, [])
    out: list[Variant] = []
    if not any(name == "correct" for name, _, _ in registered):
        out.append(Variant("correct", accept("clean", [], "The correct classification."), data=truth))
    for name, edit, expectation in registered:
        result = edit(copy.deepcopy(truth), ctx)
        if isinstance(result, str):
            out.append(Variant(name, expectation, raw=result))
        else:
            out.append(Variant(name, expectation, data=result))
    return out
