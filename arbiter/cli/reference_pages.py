"""The docs site's reference pages, generated from the code each time the site is built (docs/hooks.py calls
`pages()`; `python -m arbiter.cli.reference_pages DIR` writes them to a folder to read).

Nothing here is a copy to keep in step: the CLI page is rendered from the Typer app
(arbiter/cli/reference.py), the environment page from arbiter/cli/environment.py, the profile pages from
the pydantic models in arbiter/contracts/ (with the bundled profiles' values and comments), the issue-code
page from each kind's catalogue in the registry (arbiter/kinds) and the schema page from `arbiter schema`'s
own models.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
import types
import typing
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

GENERATED = (
    "<!-- generated from the code by arbiter/cli/reference_pages.py when the site is built; do not edit -->"
)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return "`" + text.replace("`", "'").replace("|", "\\|") + "`"


def cli_page() -> str:
    from arbiter.cli.reference import reference

    return (
        f"# CLI: every command and option\n\n{GENERATED}\n\n"
        "Every command, argument and option, with its default and the environment variable it reads, exactly "
        "as `arbiter COMMAND --help` describes it at the terminal. What the commands do together is told in "
        "[Getting started](../getting-started.md) and [Running batches](../operations/index.md).\n\n"
        + reference()
    )


def environment_page() -> str:
    from arbiter.cli.environment import INTERNAL, INTRO, VARIABLES

    rows = "\n".join(f"| {_cell(v.names)} | {_cell(v.sets)} | {_cell(v.default)} |" for v in VARIABLES)
    internal = ", ".join(f"`{name}`" for name in INTERNAL)
    return (
        f"# Environment variables\n\n{GENERATED}\n\n{INTRO}\n\n"
        f"| variable | what it sets | default |\n| --- | --- | --- |\n{rows}\n\n"
        f"`arbiter review` sets {internal} for the Streamlit process it starts, from its own options; they are "
        "not for users to set.\n"
    )


# ----- the profile -----


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return " \\| ".join(json.dumps(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(_type_name(a) for a in args)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join(_type_name(a) for a in args)}]"
    if annotation is type(None):
        return "none"
    return getattr(annotation, "__name__", str(annotation).replace("typing.", ""))


def _model_of(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """(the model a field holds, whether it is a list of them): recursion into sub-tables."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
        if len(models) == 1:
            return models[0], False
    if origin is list and args and isinstance(args[0], type) and issubclass(args[0], BaseModel):
        return args[0], True
    return None, False


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
        if isinstance(value, BaseModel):
            return "its table's defaults"
        return _code(value)
    if field.default is PydanticUndefined:
        return "required"
    if isinstance(field.default, BaseModel):
        return "its table's defaults"
    return _code(field.default)


def toml_comments(text: str) -> dict[tuple[str, str], str]:
    """(table, key) → the comment lines just above the key, or after it on its line, in a TOML file."""
    found: dict[tuple[str, str], str] = {}
    table, pending = "", []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#"):
            pending.append(line.lstrip("#").strip())
            continue
        header = re.match(r"^\[\[?([A-Za-z0-9_.\-\"]+)\]\]?", line)
        if header:
            table, pending = header.group(1).replace('"', ""), []
            continue
        key = re.match(r"^([A-Za-z0-9_\-]+)\s*=", line)
        if key:
            trailing = (
                raw.split(" # ", 1)[1].strip() if " # " in raw and '"' not in raw.split(" # ", 1)[1] else ""
            )
            comment = " ".join([*pending, trailing]).strip()
            if comment:
                found[(table, key.group(1))] = comment
        if not line or key:
            pending = []
    return found


def _lookup(data: Any, path: list[str]) -> Any:
    for part in path:
        if isinstance(data, list):
            data = data[0] if data else None
        if not isinstance(data, dict) or part not in data:
            return PydanticUndefined
        data = data[part]
    return data


def _rows(
    model: type[BaseModel], path: list[str], bundled: dict[str, Any], comments: dict[tuple[str, str], str]
) -> Iterator[str]:
    subtables: list[tuple[str, type[BaseModel], bool]] = []
    table = ".".join(path)
    for name, field in model.model_fields.items():
        key = field.alias or name
        sub, many = _model_of(field.annotation)
        if sub is not None:
            subtables.append((key, sub, many))
            continue
        value = _lookup(bundled, [*path, key])
        shown = "not set" if value is PydanticUndefined else _code(value)
        meaning = field.description or comments.get((table, key), "")
        where = f"`[{table}]` " if table else ""
        yield f"| {where}`{key}` | {_type_name(field.annotation)} | {_default(field)} | {shown} | {_cell(meaning)} |"
    for key, sub, many in subtables:
        yield from (
            _rows(sub, [*path, key], bundled, comments)
            if not many
            else _list_rows(sub, [*path, key], bundled, comments)
        )


def _list_rows(
    model: type[BaseModel], path: list[str], bundled: dict[str, Any], comments: dict[tuple[str, str], str]
) -> Iterator[str]:
    table = ".".join(path)
    entries = _lookup(bundled, path)
    count = len(entries) if isinstance(entries, list) else 0
    for name, field in model.model_fields.items():
        key = field.alias or name
        meaning = field.description or comments.get((table, key), "")
        yield (
            f"| `[[{table}]]` `{key}` | {_type_name(field.annotation)} | {_default(field)} | "
            f"{count} entries | {_cell(meaning)} |"
        )


def profile_table(model: type[BaseModel], profile_file: str) -> str:
    """One row per field of a profile model (sub-tables flattened as `[table] key`): its type, its default
    in the model, its value in the bundled profile and what it means (the field's description, else the
    bundled profile's comment on it)."""
    text = resources.files("arbiter.profiles").joinpath(profile_file).read_text(encoding="utf-8")
    bundled, comments = tomllib.loads(text), toml_comments(text)
    head = "| field | type | default | bundled profile | what it means |\n| --- | --- | --- | --- | --- |\n"
    return head + "\n".join(_rows(model, [], bundled, comments)) + "\n"


def profile_page() -> str:
    from arbiter.kinds import KINDS, resolve

    parts = [
        f"# Profile fields\n\n{GENERATED}\n\n"
        "Every field of each kind's profile (the TOML file `--profile FILE` replaces whole), read from the "
        'pydantic model that validates it: its type, the model\'s default ("required" when a profile must '
        "set it), the value in the bundled profile (long values cut short) and its meaning, from the field's "
        "description or else the bundled profile's comment on it. How the profile is used: "
        "[The profile](../concepts/profile.md).\n"
    ]
    for kind in KINDS.values():
        loader = resolve(kind.profile_loader)
        model = typing.get_type_hints(loader)["return"]
        parts.append(
            f"## {kind.name}\n\nModel `{model.__module__}.{model.__name__}`; bundled profile "
            f"`arbiter/profiles/{kind.profile_file}`.\n\n" + profile_table(model, kind.profile_file)
        )
    return "\n".join(parts)


# ----- issue codes -----


def codes_page() -> str:
    from arbiter.kinds import KINDS

    parts = [
        f"# Issue codes\n\n{GENERATED}\n\n"
        "Every issue code a verifier can raise, per kind of answer, from the kind's one catalogue (named in "
        "the registry, `arbiter/kinds/__init__.py`). A BLOCKER or MAJOR issue that is not fixable escalates "
        "by the default rules; a fixable one is fixed and every verifier runs again "
        "([the arbiter's rules](../concepts/arbiter.md)). Codes are never renamed or reused.\n"
    ]
    for kind in KINDS.values():
        rows = "\n".join(
            f"| `{spec.code}` | {spec.severity.value} | {'yes' if spec.auto_fixable else 'no'} | "
            f"{_cell(spec.meaning)} |"
            for spec in kind.catalogue().values()
        )
        parts.append(
            f"## {kind.name}\n\n{_cell(kind.summary)} Catalogue `{kind.codes}`.\n\n"
            f"| code | severity | auto-fixable | meaning |\n| --- | --- | --- | --- |\n{rows}\n"
        )
    return "\n".join(parts)


# ----- JSON Schemas -----


def schemas() -> dict[str, dict[str, Any]]:
    """name → JSON Schema, the same names and schemas `arbiter schema NAME` prints."""
    from arbiter.contracts.schemas import SCHEMAS, json_schema
    from arbiter.kinds import contracts, resolve

    found = {name: json_schema(name) for name in SCHEMAS}
    for key, (_, contract) in contracts().items():
        if key not in found:
            found[key] = resolve(contract.model).model_json_schema()
    return found


def schemas_page() -> str:
    parts = [
        f"# JSON Schemas\n\n{GENERATED}\n\n"
        "The JSON Schema of every input and output contract, as `arbiter schema NAME` prints it "
        "(`arbiter schema` lists the names).\n"
    ]
    for name, schema in schemas().items():
        title = schema.get("title", name)
        body = json.dumps(schema, indent=2, ensure_ascii=False)
        parts.append(
            f"## `{name}`\n\n`arbiter schema {name}` ({title}).\n\n"
            f'??? note "The schema ({len(body.splitlines())} lines)"\n\n'
            + "\n".join(("    " + line) if line else "" for line in f"```json\n{body}\n```".splitlines())
            + "\n"
        )
    return "\n".join(parts)


def pages() -> dict[str, str]:
    """Path under docs/ → Markdown, for every generated reference page."""
    return {
        "reference/cli.md": cli_page(),
        "reference/environment.md": environment_page(),
        "reference/profile.md": profile_page(),
        "reference/codes.md": codes_page(),
        "reference/schemas.md": schemas_page(),
    }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m arbiter.cli.reference_pages DIR\n")
        return 2
    for relative, text in pages().items():
        target = Path(args[0]) / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
