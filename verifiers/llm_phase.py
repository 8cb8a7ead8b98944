"""The LLM (semantic) phase shared by V2, V3 and V4: prompt from a file, strict issue schema, fail closed.

LLM issues are appended after the rule issues of the same IssueList, so they can only add findings.
Any unusable answer makes the verifier ERRORED (never a pass); an exhausted token budget is a phase
state the policy escalates on; a batch-deferred request raises PhaseDeferred for the pipeline.
The prompt's pieces (templates, delimited untrusted data, page text budgets) are in llm_prompt.py.

run_model_phase is the machinery itself (request, budget, deferral, schema check, fail closed) for any answer
schema: the medical phases' issue lists (run_llm_phase) and the grounded-answer kind's entailment judgements
(verifiers/grounded/entailment.py) both go through it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from arbiter.contracts import (
    ClassificationOutput,
    DocumentBundle,
    Issue,
    IssueSource,
    PhaseStatus,
    TokenUsage,
    VerifierResult,
    VerifierStatus,
)
from arbiter.contracts.profile import Profile
from arbiter.diagnostics import describe
from arbiter.errors import Deferred
from arbiter.llm.config import DEFAULT_MODEL as LLM_DEFAULT_MODEL
from arbiter.llm.port import LLMError, LLMRequest, Purpose
from arbiter.verifiers.base import IssueList, Verifier, VerifyContext
from arbiter.verifiers.llm_prompt import load_prompt, neutralise, render, rule_findings, untrusted

log = logging.getLogger(__name__)

MODEL_NOTE = "llm_model"  # VerifyContext.notes key naming the model; else the client's own `model`
DEFAULT_MODEL = LLM_DEFAULT_MODEL  # one default for the whole LLM layer (arbiter/llm/config.py)
MAX_OUTPUT_TOKENS = 8192
MAX_LLM_ISSUES = 20  # more than this from one phase is noise; the rest are counted in a note
MESSAGE_CHARS = 400

# Plain-English endings of "The <what> check could not run: ..." per LLMError kind.
_REASONS = {
    "timeout": "the language model did not answer in time.",
    "rate_limited": "the language model service refused further requests (rate limit).",
    "transport": "the language model service could not be reached.",
    "blocked": "the language model refused to answer (safety or policy block).",
    "truncated": "the language model's answer was cut short.",
    "invalid_json": "the language model's answer could not be read.",
    "off_schema": "the language model's answer did not have the required form.",
    "replay_miss": "no recorded answer exists for this request (replay mode).",
    "config": "the language model backend is not configured correctly.",
    "network_disabled": "network access to the language model is switched off.",
}
_UNUSABLE = "the language model gave no usable answer."


# Kinds whose LLMError message is about the setup, never the document (no text of it, no answer of the
# model), and says what to do: it is passed on to the SME and the CLI whole (a replay miss says how to record).
_SAY_WHAT_TO_DO = frozenset({"replay_miss", "config"})


def failure_reason(kind: str | None, message: str = "") -> str:
    """Why a call failed, in plain English (a sentence ending), for an LLMError kind; for a setup mistake
    (a replay miss, a backend not configured) the error's own message instead, which says what to do."""
    said = message.strip()
    if kind in _SAY_WHAT_TO_DO and said:
        return said[:1].lower() + said[1:] if said[1:2].islower() else said
    return _REASONS.get(kind or "", _UNUSABLE)


class PhaseDeferred(Deferred):
    """Batch mode queued the request; the document waits for the batch job instead of being decided.

    arbiter.verify.runner and arbiter.decide.governor let it through (they turn every other exception into ERRORED).
    """

    def __init__(self, verifier: str, doc_id: str | None, message: str = "") -> None:
        super().__init__(message or f"{verifier}: the semantic check was queued for a batch job.")
        self.verifier = verifier
        self.doc_id = doc_id


@dataclass(frozen=True, kw_only=True)
class ModelPhase:
    """What one verifier's LLM phase is called, which prompts it uses and the code it fails closed with."""

    verifier: Purpose  # "V2" | "V3" | "V4"
    what: str  # "semantic consistency": used in notes and the error message
    template: str  # file name under verifiers/prompts/
    error_code: str  # BLOCKER
    no_llm_note: str
    unavailable_note: str  # the context holds something that cannot answer requests
    system: str = "system.md"  # the system prompt's file under verifiers/prompts/


@dataclass(frozen=True, kw_only=True)
class PhaseSpec(ModelPhase):
    """A medical phase: its answer is a list of issues, a finding or a note each, with a location."""

    finding: str  # the schema category for a real problem: "inconsistency" | "trap" | "weak_evidence"
    finding_code: str  # MAJOR
    note_code: str  # MINOR

    @property
    def schema(self) -> dict[str, Any]:
        return issues_schema(self.finding)


@dataclass
class PhaseOutcome:
    """How the LLM phase went; its issues are already in the verifier's IssueList."""

    status: PhaseStatus
    notes: list[str] = field(default_factory=list)
    llm_calls: int = 0
    tokens: TokenUsage = field(default_factory=TokenUsage)

    @property
    def errored(self) -> bool:
        return self.status == PhaseStatus.ERRORED


def skipped_phase(note: str) -> PhaseOutcome:
    return PhaseOutcome(PhaseStatus.SKIPPED, [note])


def issues_schema(finding: str) -> dict[str, Any]:
    """The strict answer schema (plain JSON Schema, for Gemini's response_json_schema and jsonschema)."""
    issue = {
        "type": "object",
        "properties": {
            "category": {"type": "string", "enum": [finding, "note"]},
            "message": {"type": "string", "maxLength": MESSAGE_CHARS},
            "segment_index": {"type": ["integer", "null"]},
            "page": {"type": ["integer", "null"]},
            "document_type": {"type": ["string", "null"]},
        },
        "required": ["category", "message", "segment_index", "page", "document_type"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"issues": {"type": "array", "items": issue}},
        "required": ["issues"],
        "additionalProperties": False,
    }


# --- prompts ---------------------------------------------------------------------------------------------


def render_prompt(
    spec: PhaseSpec,
    profile: Profile,
    doc_id: str,
    rule_issues: Iterable[Issue],
    values: dict[str, str],
) -> str:
    """The verifier's prompt file filled with the common values (taxonomy, rule findings) and its own."""
    common = {
        "doc_id": neutralise(doc_id),
        "document_types": ", ".join(profile.taxonomy.document_types),
        "presence_levels": ", ".join(profile.taxonomy.presence_levels),
        # Rule messages quote the document, so they are delimited like it.
        "rule_findings": untrusted("RULE_FINDINGS", rule_findings(rule_issues)),
    }
    return render(load_prompt(spec.template), {**common, **values})


# --- the phase -------------------------------------------------------------------------------------------


def model_for(context: VerifyContext) -> str:
    """The model named in the context's notes, else the LLM's own, else the default."""
    named = context.notes.get(MODEL_NOTE)
    if isinstance(named, str) and named:
        return named
    return model_of(context.llm)


def model_of(llm: Any) -> str:
    """The model an LLM client is configured with: `.model`, `.settings.model` (LLMClient) or
    `.client.settings.model` (DocumentLLM); else the default."""
    for holder in (
        llm,
        getattr(llm, "settings", None),
        getattr(getattr(llm, "client", None), "settings", None),
    ):
        own = getattr(holder, "model", None)
        if isinstance(own, str) and own:
            return own
    return DEFAULT_MODEL


def semantic_phase(
    spec: PhaseSpec,
    context: VerifyContext,
    build_prompt: Callable[[], str],
    issues: IssueList,
    model: ClassificationOutput,
    bundle: DocumentBundle,
    profile: Profile,
) -> PhaseOutcome:
    """run_llm_phase for a verifier checking `model` against `bundle`: locations bounded by both."""
    return run_llm_phase(
        spec,
        context,
        build_prompt,
        issues=issues,
        doc_id=bundle.doc_id,
        segments=len(model.segments),
        pages=bundle.total_pages,
        document_types=profile.taxonomy.document_types,
    )


def run_llm_phase(
    spec: PhaseSpec,
    context: VerifyContext,
    build_prompt: Callable[[], str],
    *,
    issues: IssueList,
    doc_id: str | None,
    segments: int,
    pages: int,
    document_types: Iterable[str],
) -> PhaseOutcome:
    """Ask the model for this verifier's semantic findings and append them to `issues` (after the rules').

    `build_prompt` renders the user prompt (document text already delimited); it is called only when an
    LLM is configured. `segments`, `pages` and `document_types` bound the locations the model may cite.
    """
    known_types = set(document_types)

    def apply(data: Any) -> list[str]:
        findings = list(data["issues"])
        for item in findings[:MAX_LLM_ISSUES]:
            _add(spec, issues, item, segments=segments, pages=pages, known_types=known_types)
        if len(findings) > MAX_LLM_ISSUES:
            return [
                f"The language model listed {len(findings) - MAX_LLM_ISSUES} further findings, not shown."
            ]
        return []

    return run_model_phase(
        spec, context, build_prompt, issues=issues, doc_id=doc_id, schema=spec.schema, apply=apply
    )


def run_model_phase(
    spec: ModelPhase,
    context: VerifyContext,
    build_prompt: Callable[[], str],
    *,
    issues: IssueList,
    doc_id: str | None,
    schema: dict[str, Any],
    apply: Callable[[Any], list[str]],
) -> PhaseOutcome:
    """Ask the model one question under `schema` and let `apply` turn its answer into findings after the rules'.

    `build_prompt` renders the user prompt (untrusted text already delimited); it is called only when an LLM
    is configured. `apply` receives an answer that matches `schema`, appends its findings to `issues` and
    returns notes; it raises LLMError (before adding anything) for an answer it cannot use, which fails the
    phase closed like any other unusable answer: the verifier is ERRORED, never passed.
    """
    llm = context.llm
    if llm is None:
        return skipped_phase(spec.no_llm_note)
    if not callable(getattr(llm, "complete", None)):
        return skipped_phase(spec.unavailable_note)
    request = LLMRequest(
        purpose=spec.verifier,
        model=model_for(context),
        system=load_prompt(spec.system),
        prompt=build_prompt(),
        response_schema=schema,
        temperature=0.0,
        max_output_tokens=MAX_OUTPUT_TOKENS,
        doc_id=doc_id,
    )
    before = len(issues.items)
    try:
        response = llm.complete(request)
        _check_schema(response.data, schema)
        notes = apply(response.data)
    except LLMError as exc:
        del issues.items[before:]  # nothing of an unusable answer stays
        if exc.kind == "deferred":
            raise PhaseDeferred(spec.verifier, doc_id) from None
        if exc.kind == "budget_exhausted":
            return PhaseOutcome(
                PhaseStatus.BUDGET_EXHAUSTED,
                [f"The token budget ran out before the {spec.what} check could run; a person must review."],
            )
        log.warning("%s LLM phase for %s failed: %s", spec.verifier, doc_id, exc.kind)
        return _errored(spec, issues, failure_reason(exc.kind, exc.message))
    except Exception as exc:  # a broken client must not lose the rule findings; the phase fails closed
        del issues.items[before:]
        log.warning("%s LLM phase for %s crashed: %s", spec.verifier, doc_id, describe(exc))
        return _errored(spec, issues, failure_reason(None))

    cached = bool(getattr(response, "cached", False))
    if cached:
        notes.append(f"The {spec.what} check reused a cached answer (no new model call).")
    status = PhaseStatus.FAILED if len(issues.items) > before else PhaseStatus.PASSED
    return PhaseOutcome(
        status,
        notes,
        llm_calls=0 if cached else 1,
        tokens=TokenUsage() if cached else response.usage,
    )


def _check_schema(data: Any, schema: dict[str, Any]) -> None:
    """Anything off the schema is an LLMError, checked here even if the client did."""
    validator = jsonschema.Draft202012Validator(schema)
    if not validator.is_valid(data):
        raise LLMError("off_schema", "The language model's answer did not have the required form.")


def _add(
    spec: PhaseSpec,
    issues: IssueList,
    item: dict[str, Any],
    *,
    segments: int,
    pages: int,
    known_types: set[str],
) -> None:
    code = spec.finding_code if item["category"] == spec.finding else spec.note_code
    message = " ".join(str(item["message"]).split())[:MESSAGE_CHARS]
    if not message:
        message = "The language model flagged a possible problem without describing it."
    # Locations the document does not have are dropped rather than shown to the SME.
    segment = item["segment_index"] if 1 <= (item["segment_index"] or 0) <= segments else None
    page = item["page"] if 1 <= (item["page"] or 0) <= pages else None
    document_type = item["document_type"] if item["document_type"] in known_types else None
    issues.add(
        code,
        message,
        path=f"/segments/{segment - 1}" if segment is not None else "",
        segment_index=segment,
        document_type=document_type,
        page=page,
    )
    mark_llm(issues)


def _errored(spec: ModelPhase, issues: IssueList, reason: str) -> PhaseOutcome:
    issues.add(spec.error_code, f"The {spec.what} check could not run: {reason} A person must review it.")
    mark_llm(issues)
    return PhaseOutcome(PhaseStatus.ERRORED, [f"The {spec.what} check could not run: {reason}"])


def mark_llm(issues: IssueList) -> None:
    issues.items[-1] = issues.items[-1].model_copy(update={"source": IssueSource.LLM})


def finish(
    verifier: Verifier,
    issues: IssueList,
    phase: PhaseOutcome,
    *,
    score: Callable[[list[Issue]], float],
    notes: list[str] | None = None,
    **extra: Any,
) -> VerifierResult:
    """The verifier's result: ERRORED (score 0) when the phase could not run, else FAILED/PASSED by issues."""
    if phase.errored:
        status, value = VerifierStatus.ERRORED, 0.0
    else:
        status = VerifierStatus.FAILED if issues.items else VerifierStatus.PASSED
        value = score(issues.items)
    return VerifierResult(
        verifier=verifier.name,
        version=verifier.version,
        status=status,
        issues=issues.items,
        score=value,
        llm_calls=phase.llm_calls,
        tokens=phase.tokens,
        llm_phase=phase.status,
        notes=[*(notes or []), *phase.notes],
        **extra,
    )
