"""Smoke test of the OCR benchmark at toy size: it runs and reports the documented JSON shape.

Performance itself is measured by `bench/ocr_speed.py`, never asserted here.
"""

from __future__ import annotations

from bench import ocr_speed


def test_ocr_speed_shape() -> None:
    """One one-page scanned fixture: pages/s against the render+Tesseract floor, CER, accept share off/on."""
    result = ocr_speed.run(doc_ids=["note-clinic-05-scan"], repeats=1)
    assert (result["documents"], result["pages"], result["ocr_pages"]) == (1, 1, 1)
    assert set(result["pages_per_s"]) == {"arbiter", "floor_render_tesseract"}
    assert all(rate > 0 for rate in result["pages_per_s"].values())
    assert result["ratio_to_floor"] > 0
    assert set(result["cer_by_noise"]) == {"fax"}
    assert 0 <= result["cer"] < 1
    assert set(result["accept_share"]) == {"ocr_off", "ocr_on"}
    off, on = result["acceptance"]["ocr_off"], result["acceptance"]["ocr_on"]
    assert off["correct_documents"] == on["correct_documents"] == 1
    assert off["decisions"] == {"note-clinic-05-scan__correct": "ESCALATE_TO_SME"}
    assert on["decisions"] == {"note-clinic-05-scan__correct": "AUTO_ACCEPT"}
    assert result["accept_share"] == {"ocr_off": 0.0, "ocr_on": 1.0}
