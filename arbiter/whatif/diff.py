"""`arbiter policy diff A.toml B.toml`: what changes between two profiles, rule by rule and setting by
setting, in plain words (one sentence per change; plain text, never Markdown)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from arbiter.contracts.profile import Bound, Profile, Rule

COUNT_WORDS = {
    "blocker": "critical problems",
    "major": "major problems",
    "major_fixable": "fixable major problems",
    "major_non_fixable": "major problems that cannot be fixed automatically",
    "minor": "minor problems",
    "total": "problems of any severity",
    "errored": "crashed checks",
    "not_run": "required checks that did not run",
    "budget_exhausted": "checks that ran out of token budget",
}
DECISION_WORDS = {
    "AUTO_ACCEPT": "accept",
    "AUTO_RETRY": "fix automatically and verify again",
    "ESCALATE_TO_SME": "escalate to an SME",
}


def bound_words(name: str, bound: Bound) -> str:
    what = COUNT_WORDS.get(name, name)
    if bound.min is not None and bound.max is not None:
        if bound.min == bound.max:
            return f"exactly {bound.min} {what}"
        return f"{bound.min} to {bound.max} {what}"
    if bound.min is not None:
        return f"at least {bound.min} {what}"
    if bound.max is not None:
        return f"no {what}" if bound.max == 0 else f"at most {bound.max} {what}"
    return f"any number of {what}"


def rule_words(rule: Rule) -> str:
    """'when at least 1 critical problems: escalate to an SME' (or 'always: ...' for the fallback)."""
    when = " and ".join(bound_words(name, bound) for name, bound in rule.when.items())
    return f"{'when ' + when if when else 'always'}: {DECISION_WORDS.get(rule.decision, rule.decision)}"


def _rules(a: Profile, b: Profile) -> Iterator[str]:
    old = {rule.name: (i, rule) for i, rule in enumerate(a.arbiter.rules, 1)}
    new = {rule.name: (i, rule) for i, rule in enumerate(b.arbiter.rules, 1)}
    for name, (i, rule) in old.items():
        if name not in new:
            yield f"Rule '{name}' (position {i}) is removed; it said {rule_words(rule)}."
    for name, (i, rule) in new.items():
        if name not in old:
            yield f"Rule '{name}' is new at position {i}: {rule_words(rule)}."
            continue
        _, before = old[name]
        if before.decision != rule.decision:
            yield (
                f"Rule '{name}' now decides {DECISION_WORDS[rule.decision]} instead of "
                f"{DECISION_WORDS[before.decision]}."
            )
        if before.when != rule.when:
            yield f"Rule '{name}' now applies {rule_words(rule).split(':')[0]} (was {rule_words(before).split(':')[0]})."
        if before.reason != rule.reason:
            yield f"Rule '{name}' gives a new reason: {rule.reason!r} (was {before.reason!r})."
    common_old = [n for n in old if n in new]
    common_new = [n for n in new if n in old]
    if common_old != common_new:
        moved = [n for n in common_new if common_old.index(n) != common_new.index(n)]
        yield (
            "The rules are tried in a new order: "
            + ", ".join(common_new)
            + f" (moved: {', '.join(moved)}); the first rule that matches decides."
        )


def _flatten(value: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        if not value:
            yield prefix, value
        for key, item in value.items():
            yield from _flatten(item, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, value


def _settings(profile: Profile) -> dict[str, Any]:
    data = profile.model_dump(mode="json", exclude={"arbiter": {"rules"}})
    return dict(_flatten(data, ""))


def _where(path: str) -> str:
    section, _, rest = path.partition(".")
    return f"[{section}] {rest}" if rest else f"[{section}]"


def _value(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "not set"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return str(value)


def _list_change(path: str, old: list[Any], new: list[Any]) -> Iterator[str]:
    if all(isinstance(x, str | int | float) for x in [*old, *new]):
        added = [x for x in new if x not in old]
        removed = [x for x in old if x not in new]
        if added:
            yield f"{_where(path)}: adds {', '.join(_value(x) for x in added)}."
        if removed:
            yield f"{_where(path)}: removes {', '.join(_value(x) for x in removed)}."
        if not added and not removed:
            yield f"{_where(path)}: same entries in a new order."
        return
    yield f"{_where(path)}: changes ({len(old)} entries before, {len(new)} after)."


def _direction(old: Any, new: Any) -> str:
    if isinstance(old, int | float) and isinstance(new, int | float) and not isinstance(old, bool):
        return " (raised)" if new > old else " (lowered)"
    return ""


def _other_settings(a: Profile, b: Profile) -> Iterator[str]:
    old, new = _settings(a), _settings(b)
    for path in sorted(set(old) | set(new), key=lambda p: (p.split(".")[0], p)):
        if path in ("name", "version"):
            continue
        if path not in new:
            yield f"{_where(path)} is removed (was {_value(old[path])})."
        elif path not in old:
            yield f"{_where(path)} is new: {_value(new[path])}."
        elif old[path] != new[path]:
            if isinstance(old[path], list) and isinstance(new[path], list):
                yield from _list_change(path, old[path], new[path])
            else:
                yield (
                    f"{_where(path)} changes from {_value(old[path])} to {_value(new[path])}"
                    f"{_direction(old[path], new[path])}."
                )


def diff_profiles(a: Profile, b: Profile) -> list[str]:
    """Every difference from A to B as one plain sentence: the rules first, then the other settings."""
    lines = list(_rules(a, b)) + list(_other_settings(a, b))
    if (a.name, a.version) != (b.name, b.version):
        lines.insert(0, f"Profile {a.name} {a.version} → {b.name} {b.version}.")
    return lines
