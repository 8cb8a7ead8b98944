"""The process-wide lock around pypdfium2, which is not thread-safe."""

from __future__ import annotations

import threading

# Every call into pypdfium2, from any thread, holds this lock (Streamlit runs each session in a thread).
PDFIUM_LOCK = threading.RLock()
