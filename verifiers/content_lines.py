"""A page's lines as the content reading sees them: body lines with whether each is a heading, running
headers/footers apart, and which lines are fill-in fields (labels with nothing after them, blanks,
check boxes, a bare Yes/No choice) rather than written content.
"""

from __future__ import annotations

import re

from arbiter.contracts import BlockType, Page
from arbiter.verifiers.textnorm import normalize_plain

_HEADER_FOOTER = (BlockType.HEADER, BlockType.FOOTER)
# A fill-in field: only labels ending in ":" (each a few words), blanks or check boxes.
_LABEL = r"[^\W\d_][^:_\n]{0,60}?:"
_FIELD_LINE = re.compile(rf"^(?:(?:{_LABEL}|[☐□❏❑❒☑☒]|\[ \])\s*(?:_{{2,}}\s*)?)+$")
_BLANKS = "____"  # a run of four or more underscores holds this
_BOXES = "☐□❏❑❒☑☒"
# A check box: a box character, "[ ]" or "( )". Led by a set of first characters so that the regex engine
# skips ahead to them instead of trying each alternative at every position.
_CHECKBOXES = re.compile(rf"[{_BOXES}\[(](?:(?<=[{_BOXES}])|(?<=\[) \]|(?<=\()\s\))")
_YES_NO = re.compile(r"[?:]\s*yes\*?\s+no\b\s*$")


def page_lines(page: Page) -> tuple[list[tuple[str, bool]], list[str]]:
    """(body lines with whether they sit in a heading block, running header/footer lines)."""
    if not page.paragraphs:
        return [(line, False) for line in page.text.splitlines() if line.strip()], []
    body: list[tuple[str, bool]] = []
    capitals: list[bool] = []  # a heading only because it is a short line in capitals
    running: list[str] = []
    for paragraph in page.paragraphs:
        lines = [line for line in paragraph.text.splitlines() if line.strip()]
        if paragraph.block_type in _HEADER_FOOTER:
            running.extend(lines)
        else:
            heading = paragraph.block_type == BlockType.HEADING
            for line in lines:
                by_capitals = not heading and _capitals_heading(line)
                body.append((line, heading or by_capitals))
                capitals.append(by_capitals)
    # A capitals label with another field (or nothing) after it is a form's field, not a section heading:
    # "PATIENT NAME:" above "DATE OF BIRTH:" on an all-capitals form.
    for i, (line, _) in enumerate(body):
        if capitals[i] and line.rstrip().endswith(":"):
            after = normalize_plain(body[i + 1][0]).strip() if i + 1 < len(body) else ""
            if not after or is_field(after, heading_block=False):
                body[i] = (line, False)
    return body, running


def _capitals_heading(line: str) -> bool:
    """A short line in capitals is a section heading even inside a paragraph block (typed and dictated
    reports put "GROSS DESCRIPTION:" on its own line with the text right under it), unless it is a field."""
    text = line.strip()
    if not 4 <= len(text) <= 60:
        return False
    letters = [c for c in text if c.isalpha()]
    return (
        len(letters) >= 4
        and all(c.isupper() for c in letters)
        and _BLANKS not in text
        and not _CHECKBOXES.search(text)
    )


def is_field(norm: str, heading_block: bool) -> bool:
    """A fill-in field: labels with nothing after them, blanks, check boxes or a bare Yes/No choice. A single
    label in a heading block ("DISCHARGE DIAGNOSES:") is a section heading, not a field."""
    if _BLANKS in norm or _CHECKBOXES.search(norm) or ("yes" in norm and _YES_NO.search(norm)):
        return True
    if ":" not in norm or not _FIELD_LINE.match(norm):  # without a box, a field line has a label's ":"
        return False
    return not (heading_block and norm.count(":") == 1)
