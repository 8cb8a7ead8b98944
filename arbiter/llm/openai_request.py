"""The chat-completions body per OpenAI-compatible server family (ARBITER_OPENAI_SERVER) and catalogue row:
the output-token field each family takes, temperature only where it is honoured, the thinking level mapped to
the parameter that really reaches the model, an output limit that fits the context, and the response schema
cut down to OpenAI's strict structured-output subset.

The strict subset, as documented in OpenAI's Structured Outputs guide ("Supported schemas"; transcribed, no
live call possible): the root is an object (not anyOf); every object lists every property in `required` and
has `additionalProperties: false`; the keywords are type, properties, required, additionalProperties, items,
enum, const, anyOf, $ref, $defs and description, plus pattern and format (strings), minimum, maximum,
exclusiveMinimum, exclusiveMaximum and multipleOf (numbers), minItems and maxItems (arrays); at most 10
levels of nesting and 5,000 properties. Length limits (minLength, maxLength) and the like are not in it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from arbiter.llm.catalogue import ModelRow, fit_output
from arbiter.llm.config import LLMSettings
from arbiter.llm.port import LLMError, LLMRequest

RESPONSE_FORMAT_ENV = "ARBITER_OPENAI_RESPONSE_FORMAT"
STRICT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "description",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
)
# Keywords that only narrow what is valid: dropped from what is sent (the client still validates every answer
# against the full schema, so an answer past them fails closed as off_schema).
DROPPED_KEYWORDS = frozenset(
    {
        "minLength",
        "maxLength",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "title",
        "default",
        "examples",
    }
    | {"$schema", "$comment"}
)
STRICT_MAX_DEPTH = 10
STRICT_MAX_PROPERTIES = 5_000
# How each family takes a level for a model the catalogue does not list (generic: unknown, so none is sent).
_FAMILY_PARAM = {
    "openai": "reasoning_effort",
    "vllm": "reasoning_effort",
    "llamacpp": "chat_template_kwargs.reasoning_effort",
}
_REASONING_NAME = re.compile(r"^(o\d|gpt-5)", re.IGNORECASE)  # OpenAI's reasoning families, uncatalogued ids


def strict_schema(schema: Any) -> Any:
    """The schema without the keywords outside the strict subset that only narrow it (maxLength ...)."""
    if isinstance(schema, list):
        return [strict_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in DROPPED_KEYWORDS:
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: strict_schema(sub) for name, sub in value.items()}
        elif key in ("items", "anyOf", "additionalProperties"):
            out[key] = strict_schema(value)
        else:
            out[key] = value
    return out


def strict_problems(schema: Any) -> list[str]:
    """Where `schema` leaves OpenAI's strict subset (empty: it is inside it), as JSON paths and reasons."""
    problems: list[str] = []
    if not isinstance(schema, dict) or schema.get("type") != "object" or "anyOf" in schema:
        problems.append("/: the root must be an object schema, not anyOf")
    counted = [0]
    _walk(schema, "", 0, problems, counted)
    if counted[0] > STRICT_MAX_PROPERTIES:
        problems.append(f"/: {counted[0]} properties, more than {STRICT_MAX_PROPERTIES}")
    return problems


def _walk(node: Any, path: str, depth: int, problems: list[str], counted: list[int]) -> None:
    if isinstance(node, list):
        for index, item in enumerate(node):
            _walk(item, f"{path}/{index}", depth, problems, counted)
        return
    if not isinstance(node, dict):
        return
    where = path or "/"
    for key in node:
        if key not in STRICT_KEYWORDS:
            problems.append(f"{where}: keyword {key!r} is not supported in strict mode")
    types = node.get("type")
    if types == "object" or (isinstance(types, list) and "object" in types) or "properties" in node:
        if depth > STRICT_MAX_DEPTH:
            problems.append(f"{where}: nested deeper than {STRICT_MAX_DEPTH} levels")
        properties = node.get("properties") or {}
        counted[0] += len(properties)
        if node.get("additionalProperties") is not False:
            problems.append(f"{where}: additionalProperties must be false")
        missing = sorted(set(properties) - set(node.get("required") or []))
        if missing:
            problems.append(f"{where}: every property must be required ({', '.join(missing)} is not)")
        for name, sub in properties.items():
            _walk(sub, f"{path}/properties/{name}", depth + 1, problems, counted)
    for key in ("items", "anyOf", "$defs"):
        if key in node:
            sub = node[key]
            if key == "$defs" and isinstance(sub, dict):
                for name, item in sub.items():
                    _walk(item, f"{path}/$defs/{name}", depth, problems, counted)
            else:
                _walk(sub, f"{path}/{key}", depth, problems, counted)


def sends_temperature(service: str, model: str, row: ModelRow | None) -> bool:
    """The catalogue row decides; an uncatalogued OpenAI reasoning model (o-series, gpt-5) gets none (the API
    answers 400 to a custom temperature); other servers keep the request's temperature."""
    if row is not None:
        return row.temperature
    return not (service == "openai" and _REASONING_NAME.match(model))


def token_field(service: str, row: ModelRow | None) -> str:
    """max_completion_tokens for OpenAI's own API (max_tokens is refused by its reasoning models); max_tokens
    where a server family needs it (vLLM, llama.cpp, older servers)."""
    if row is not None and row.max_tokens_field:
        return row.max_tokens_field
    return "max_completion_tokens" if service == "openai" else "max_tokens"


def thinking_fields(service: str, level: str | None, row: ModelRow | None) -> dict[str, Any]:
    """The thinking level as the server family takes it; a level for a generic server is a configuration error
    (nothing would reach the model)."""
    if level is None:
        return {}
    param: str | None = row.thinking_param if row is not None else None
    if param is None:
        param = _FAMILY_PARAM.get(service)
    if param == "reasoning_effort":
        return {"reasoning_effort": level}
    if param == "chat_template_kwargs.reasoning_effort":
        return {"chat_template_kwargs": {"reasoning_effort": level}}
    if param == "chat_template_kwargs.enable_thinking":
        return {"chat_template_kwargs": {"enable_thinking": level != "none"}}
    raise LLMError(
        "config",
        f"A thinking level ({level!r}) is set, but Arbiter does not know how this server takes one: set"
        " ARBITER_OPENAI_SERVER=vllm|llamacpp|openai, or unset ARBITER_LLM_THINKING_LEVEL and bound thinking"
        " with ARBITER_LLM_THINKING_BUDGET.",
    )


def response_format(request: LLMRequest, mode: str) -> tuple[dict[str, Any], str]:
    """The response_format and the system message: json_schema with the strict subset (a schema outside it is a
    configuration error before anything is sent), or JSON mode with the full schema in the instructions."""
    if mode == "json_object":
        system = (
            f"{request.system}\n\nAnswer with one JSON object that matches this JSON Schema:\n"
            f"{json.dumps(request.response_schema, sort_keys=True)}"
        )
        return {"type": "json_object"}, system
    schema = strict_schema(request.response_schema)
    problems = strict_problems(schema)
    if problems:
        raise LLMError(
            "config",
            f"The {request.purpose} response schema is outside OpenAI's strict structured-output subset"
            f" ({problems[0]}; {len(problems)} problem(s)).",
        )
    name = re.sub(r"[^A-Za-z0-9_-]", "_", request.purpose)[:64] or "response"
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": schema, "strict": True},
    }, request.system


def chat_body(
    request: LLMRequest, settings: LLMSettings, mode: str, served_context: int | None = None
) -> dict[str, Any]:
    """The whole chat-completions body for one request to the configured server family."""
    service = settings.service()
    row = settings.row(request.model)
    prompt_tokens = (len(request.system) + len(request.prompt)) // 4
    limit = fit_output(request.output_limit(), request.max_output_tokens, prompt_tokens, row, served_context)
    if limit is None:
        context = served_context or (row.context_window if row else 0)
        raise LLMError(
            "config",
            f"The prompt (about {prompt_tokens:,} tokens) leaves too little of the model's {context:,}-token"
            " context for the answer; serve the model with a larger context (vLLM --max-model-len, llama.cpp -c)"
            " or choose another (ARBITER_LLM_MODEL).",
        )
    fmt, system = response_format(request, mode)
    body: dict[str, Any] = {
        "model": request.model,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": request.prompt}],
        token_field(service, row): limit,
        "response_format": fmt,
    }
    if sends_temperature(service, request.model, row):
        body["temperature"] = request.temperature
    body.update(thinking_fields(service, request.thinking_level, row))
    return body
