"""The page viewer's pure parts: the shared page cache with its prefetch, margin cropping, thumbnails and
the zoom widths."""

from __future__ import annotations

import io
import threading

from PIL import Image
from review_helpers import PDFS

from arbiter.review.page_cache import PageCache
from arbiter.review.render import Mark, MarkKind, render_page, render_thumbnail
from arbiter.review_app.page_viewer import zoom_width

PDF = PDFS / "note-injection-03.pdf"


def _png(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data)).convert("RGB")


def test_a_prefetched_page_is_not_rendered_again() -> None:
    """A page prefetched in the background is served from the cache: one render in all."""
    cache = PageCache()
    future = cache.prefetch("p2", lambda: b"png-2")
    assert future is not None
    assert future.result() == b"png-2"
    assert cache.get("p2", lambda: b"other") == b"png-2"
    assert cache.renders == 1


def test_a_page_asked_for_while_it_is_prefetched_waits_for_that_render() -> None:
    """get() during a prefetch of the same key returns the prefetch's bytes instead of rendering twice."""
    cache = PageCache()
    release = threading.Event()

    def slow() -> bytes:
        release.wait(5)
        return b"slow"

    cache.prefetch("p", slow)
    threading.Timer(0.2, release.set).start()
    assert cache.get("p", lambda: b"second") == b"slow"
    assert cache.renders == 1


def test_the_cache_keeps_the_most_recent_pages() -> None:
    """Beyond max_entries the least recently used page is dropped."""
    cache = PageCache(max_entries=2)
    for key in ("a", "b"):
        cache.get(key, lambda: b"x")
    cache.get("a", lambda: b"x")  # a is now the most recent
    cache.get("c", lambda: b"x")
    assert "a" in cache
    assert "c" in cache
    assert "b" not in cache


def test_a_failed_prefetch_is_rendered_again_when_opened() -> None:
    """A prefetch that raised leaves nothing cached: opening the page renders it (and shows its error)."""
    cache = PageCache()

    def broken() -> bytes:
        raise RuntimeError("damaged")

    future = cache.prefetch("p", broken)
    assert future is not None
    assert future.exception() is not None
    assert cache.get("p", lambda: b"ok") == b"ok"


def test_cropping_cuts_the_margins_and_keeps_the_marks() -> None:
    """Fit text: the cropped page is narrower than the whole page, and a mark's tint is still drawn."""
    box = (72.0, 700.0, 300.0, 720.0)
    whole = _png(render_page(PDF, 1, dpi=72))
    cropped = _png(render_page(PDF, 1, [Mark(MarkKind.ISSUE, box)], dpi=72, crop=True))
    assert cropped.width < whole.width - 60
    assert cropped.height <= whole.height
    left = 60 - 6  # the fixtures' content starts 60 pt from the left; the crop keeps 6 pt of margin
    top_gap = 792 - 764 - 6
    assert cropped.getpixel((round(150 - left), round(82 - top_gap))) != whole.getpixel((150, 82))


def test_a_thumbnail_is_small() -> None:
    """The page strip's thumbnail is the width asked for."""
    assert _png(render_thumbnail(PDF, 1, width_px=64)).width == 64


def test_percentage_zooms_are_of_the_page_s_actual_size() -> None:
    """100 % of a letter page is 816 CSS px; 150 % is 1224; the fit zooms have no fixed width."""
    assert zoom_width("150%") == 1224
    assert zoom_width("200%") == 1632
    assert zoom_width("Fit text") is None
    assert zoom_width("Fit page") is None
