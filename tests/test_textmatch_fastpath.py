"""normalize's ASCII fast paths give exactly what the general path gives."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from verifiers.textmatch import normalize

ASCII_TEXT = st.text(alphabet=st.sampled_from(list("abcXYZ019 -.:\n")), max_size=80).map(str.rstrip)


@given(ASCII_TEXT)
def test_fast_path_matches_general_path(text: str) -> None:
    """For ASCII text the fast paths agree with the general path, text and origin map alike."""
    fast = normalize(text)
    general = normalize(text + "\u00e9")  # one non-ASCII character forces the general path
    assert general.text == fast.text + "\u00e9"
    assert general.origin[: len(fast.origin)] == fast.origin


@given(ASCII_TEXT)
def test_at_equals_origin(text: str) -> None:
    """Normalized.at(i) is origin[i] for every normalised character, without expanding the map first."""
    expected = normalize(text).origin
    lazy = normalize(text)
    assert [lazy.at(i) for i in range(len(lazy.text))] == list(expected)
