"""A reviewer's draft of a packet's answer — decision, segment rows, mixture, evidence, notes, reasons,
confidence — turned from the packet page's session state into one JSON payload the store keeps per claim
(arbiter.store.drafts), and back after a reload. Plain code: the page passes its session state in."""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

DECISIONS = ("Agree", "Correct")
AUTO_DOMINANT = "(largest share in the mixture)"
# Widgets restored by setting their session-state key before they are drawn (none has an explicit default).
KEYED = {
    "decision": "decision_{}",
    "agree_notes": "agree_notes_{}",
    "correct_notes": "correct_notes_{}",
    "dominant": "doc_dominant_{}",
    "reasons": "reasons_{}",
}
# Widgets with an explicit default (sliders, a checkbox) are restored through that default instead:
# Streamlit warns when a widget gets both a default and a value set in session state.
DEFAULTED: dict[str, tuple[str, type]] = {
    "agree_conf": ("agree_conf_{}", float),
    "correct_conf": ("correct_conf_{}", float),
    "mix_auto": ("mix_auto_{}", bool),
}
# Tables the page keeps in its own draft dict; its editors start from them. "evidence" is an evidence
# editor's rows, kept the same way.
TABLES = ("rows", "mixture", "evidence")
# Drafts the page keeps as one JSON object in its draft dict: "answer" is the answer desk's AnswerDraft
# (arbiter/review/answer_draft.py) of a grounded-answer packet.
OBJECTS = ("answer",)
RESTORED = "restored"  # marks a page draft dict that has been filled from the server once
DEFAULTS = "defaults"


def collect(packet_id: str, session: Mapping[Any, Any], kept: Mapping[str, Any]) -> dict[str, Any]:
    """The draft as it stands: the packet's widget values and tables, as plain JSON values."""
    payload: dict[str, Any] = {}
    for name, key in KEYED.items():
        if key.format(packet_id) in session:
            payload[name] = session[key.format(packet_id)]
    for name, (key, _kind) in DEFAULTED.items():
        if key.format(packet_id) in session:
            payload[name] = session[key.format(packet_id)]
    for name in TABLES:
        if kept.get(name) is not None:
            payload[name] = kept[name]
    for name in OBJECTS:
        if isinstance(kept.get(name), dict):
            payload[name] = kept[name]
    return dict(json.loads(canonical(payload)))


def canonical(payload: Mapping[str, Any]) -> str:
    """One text per draft (to write only what changed); numpy scalars from the editors become numbers."""
    return json.dumps(payload, sort_keys=True, default=_plain, allow_nan=False)


def restore(
    packet_id: str,
    payload: Mapping[str, Any],
    session: MutableMapping[Any, Any],
    kept: MutableMapping[str, Any],
    options: Mapping[str, Sequence[str]],
) -> None:
    """Put a saved draft back: widget values the session does not hold yet (each checked against the
    widget's options), tables the page does not hold yet, and the defaults of sliders and checkboxes."""
    for name, key in KEYED.items():
        value = _allowed(payload.get(name), options.get(name))
        if value is not None and key.format(packet_id) not in session:
            session[key.format(packet_id)] = value
    kept[DEFAULTS] = {
        name: payload[name]
        for name, (_key, kind) in DEFAULTED.items()
        if type(payload.get(name)) is kind or (kind is float and type(payload.get(name)) is int)
    }
    for name in TABLES:
        if isinstance(payload.get(name), list) and kept.get(name) is None:
            kept[name] = [row for row in payload[name] if isinstance(row, dict)]
    for name in OBJECTS:
        if isinstance(payload.get(name), dict) and kept.get(name) is None:
            kept[name] = dict(payload[name])


def initial(kept: Mapping[str, Any], name: str, fallback: Any) -> Any:
    """The value a defaulted widget starts from: the restored draft's, else the page's own default."""
    defaults = kept.get(DEFAULTS)
    return defaults.get(name, fallback) if isinstance(defaults, dict) else fallback


def _allowed(value: Any, options: Sequence[str] | None) -> Any:
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and (options is None or v in options)]
    if not isinstance(value, str):
        return None
    return value if options is None or value in options else None


def _plain(value: Any) -> Any:
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    raise TypeError(f"{type(value).__name__} cannot be kept in a draft")
