"""Ingestion in worker processes with a hard time bound per document (`IsolatedIngestor`).

A hung or crashing PDF engine costs one document, never the batch. OCR stretches the bound: before
each page it OCRs, the worker tells the parent how long that page may take, so the hard timeout is
the text pass's limit plus each OCR'd page's (itself bounded by the OCR per-document budget).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing import forkserver
from multiprocessing.connection import Connection
from pathlib import Path
from types import ModuleType
from typing import Any

from arbiter.contracts.bundle import DocumentBundle, FailureKind
from arbiter.diagnostics import describe
from arbiter.errors import ExtractionError
from arbiter.ingest import ocr_pass
from arbiter.ingest.ocr import OcrConfig, set_budget_hook
from arbiter.ingest.reader import IngestFailure, IngestResult, file_sha256, ingest_pdf
from arbiter.run import heap

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Handed:
    """What a target hands back besides ingestion's result: work it did in the worker on the bundle (a run's
    classification and verification, arbiter/run/worker.py); opaque to ingestion."""

    result: IngestResult
    extra: Any = None


IngestTarget = Callable[..., IngestResult | Handed]
_EXTEND = "extend"  # worker to parent: ("extend", seconds) before an OCR page


def _context(target: IngestTarget) -> Any:
    """Where workers come from: a fork server where the platform has one, spawn elsewhere. Never plain
    fork: forking while another thread holds PDFIUM_LOCK would deadlock the child; the fork server is
    single-threaded. The fork server imports ingestion and the target's module once, and each worker is a
    fork of it. A worker runs the parent's main module again only when the target lives there (a script's
    own function); then the server imports what that main module imports too."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    main = _main_imports() if _in_main(target) else []
    ctx.set_forkserver_preload([__name__, *_module_of(target), *main])
    return ctx


def _in_main(target: Any) -> bool:
    """Whether the target is defined in the parent's main module, which its workers then must run again."""
    return getattr(getattr(target, "func", target), "__module__", None) in (None, "__main__", "__mp_main__")


_BLANK_MAIN = ModuleType("__main__")  # no spec, no file: multiprocessing finds no main module to run again
_main_swap = threading.Lock()


@contextmanager
def _main_hidden(hide: bool) -> Iterator[None]:
    """While a worker starts, the parent's main module hidden from multiprocessing, so the worker does not run
    it again: under `arbiter run` that is the whole CLI (typer, rich, SQLAlchemy: ~26 MB a process that
    ingestion never uses). The worker needs only the target's module, which it imports by name."""
    if not hide:
        yield
        return
    with _main_swap:
        main = sys.modules.get("__main__")
        sys.modules["__main__"] = _BLANK_MAIN
        try:
            yield
        finally:
            if main is not None:
                sys.modules["__main__"] = main


_server_users = 0  # open ingestors whose workers come from the fork server
_server_lock = threading.Lock()


def _server_opened() -> None:
    global _server_users
    with _server_lock:
        _server_users += 1
        forkserver.ensure_running()  # preloading applies from the server's start


def _server_closed() -> None:
    """The last open ingestor closed: the fork server is stopped and waited for, so it outlives no run and
    its workers' CPU time is counted in the parent's children's."""
    global _server_users
    with _server_lock:
        _server_users -= 1
        stop = getattr(forkserver._forkserver, "_stop", None)  # private: there is no public stop
        if _server_users == 0 and stop is not None:
            stop()


def _module_of(target: Any) -> list[str]:
    module = getattr(getattr(target, "func", target), "__module__", None)
    return [module] if isinstance(module, str) and module != "__main__" else []


def _main_imports() -> list[str]:
    """The modules a worker imports when it runs the parent's main module again (as spawn's and the fork
    server's workers do): those the main module's top-level names come from, e.g. arbiter.cli.run and
    typer for `python -m arbiter.cli.main`, arbiter.cli.main for the `arbiter` console script. Not the
    main module itself: the worker runs it, and a fork server on this Python does not preload it."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    own = {"__main__", "builtins", getattr(spec, "name", "__main__")}
    names: set[str] = set()
    for value in vars(main).values() if main is not None else ():
        module: object
        if isinstance(value, ModuleType):
            module = value.__name__
        elif callable(value):
            module = getattr(value, "__module__", None)
        else:
            continue
        if isinstance(module, str) and module not in own:
            names.add(module)
    return sorted(names)


def _worker_main(
    conn: Connection,
    target: IngestTarget,
    memory_limit_mb: int | None,
    environ: dict[str, str] | None = None,
    cwd: str | None = None,
) -> None:
    """Worker process loop: one job in, one result out, until told to stop. When the parent is gone (killed
    by TERM or KILL mid-run) the worker ends quietly: a broken pipe is no news to anyone. `environ` and
    `cwd`: the parent's when it started this worker (a fork server keeps those of its own start)."""
    if environ is not None:
        os.environ.clear()
        os.environ.update(environ)
        _reread_environment()
    if cwd is not None:
        os.chdir(cwd)
    # Ctrl+C reaches the whole process group: the parent stops the run and its workers, so a worker
    # must not print a KeyboardInterrupt traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if memory_limit_mb:
        import resource

        limit = memory_limit_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    ocr_pass.quiet_ocr_reports()

    def announce(seconds: float) -> None:
        try:
            conn.send((_EXTEND, seconds))
        except OSError:
            raise _ParentGone from None

    set_budget_hook(announce)
    heap.settle()  # what the worker holds now lives as long as it does (arbiter/run/heap.py)
    try:
        _serve(conn, target)
    except (_ParentGone, OSError, EOFError):
        return


def _reread_environment() -> None:
    """Configuration the fork server's modules read from the environment at import, read again from the
    worker's: fsspec's (`FSSPEC_S3_ENDPOINT_URL` and friends, the endpoint a run's `--out s3://…` opens), as a
    worker of its own interpreter would have it."""
    config = sys.modules.get("fsspec.config")
    if config is None:
        return
    config.conf.clear()
    config.set_conf_files(os.environ.get("FSSPEC_CONFIG_DIR", config.default_conf_dir), config.conf)
    config.set_conf_env(config.conf)


class _ParentGone(ExtractionError):
    """The parent process closed the pipe (it was killed): nobody is waiting for this document."""


def _serve(conn: Connection, target: IngestTarget) -> None:
    conn.send("ready")
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        path, kwargs = job
        try:
            result = target(path, **kwargs)
        except _ParentGone:
            raise
        except BaseException as exc:
            log.error("ingestion worker failed on %s: %s", Path(path).name, describe(exc))
            result = IngestFailure(
                doc_id=kwargs.get("doc_id") or Path(path).stem,
                file_path=str(path),
                file_sha256=None,
                kind="unreadable",
                message="The PDF could not be read because of an unexpected problem in the PDF reader.",
            )
        conn.send(result)


class WorkerStartError(ExtractionError, RuntimeError):
    """A worker process died before it could take any document: the environment is at fault, not a PDF."""


class _WorkerLost(ExtractionError):
    """The worker process died or stopped answering."""


class _Worker:
    def __init__(self, ctx: Any, target: IngestTarget, memory_limit_mb: int | None) -> None:
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(
            target=_worker_main,
            args=(child, target, memory_limit_mb, dict(os.environ), os.getcwd()),
            name="arbiter-ingest",
            daemon=True,
        )
        with _main_hidden(not _in_main(target)):
            self.process.start()
        child.close()
        self.ready = False

    def run(self, job: tuple[Path, dict[str, Any]], timeout_s: float) -> IngestResult | Handed | None:
        """The job's result; None on timeout; _WorkerLost when the process died."""
        try:
            if not self.ready:
                # Interpreter start-up is not the document's fault: it does not count against the timeout.
                if not self.conn.poll(max(timeout_s, 60.0)) or self.conn.recv() != "ready":
                    raise EOFError
                self.ready = True
            self.conn.send(job)
            deadline = time.monotonic() + timeout_s
            while True:
                if not self.conn.poll(max(deadline - time.monotonic(), 0.0)):
                    return None
                result = self.conn.recv()
                if not (isinstance(result, tuple) and len(result) == 2 and result[0] == _EXTEND):
                    break
                deadline += float(result[1])  # the worker starts an OCR page, bounded on its side
        except (EOFError, OSError) as exc:
            if not self.ready:
                raise WorkerStartError(
                    "An ingestion worker process could not start. A script that uses IsolatedIngestor "
                    'must guard its entry point with `if __name__ == "__main__":`.'
                ) from exc
            raise _WorkerLost from exc
        if not isinstance(result, DocumentBundle | IngestFailure | Handed):
            raise _WorkerLost
        return result

    def stop(self, *, kill: bool) -> None:
        if not kill:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                kill = True
            self.process.join(2.0)
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5.0)
        self.conn.close()


class IsolatedIngestor:
    """Runs ingestion in worker processes with a hard time bound per document.

    Thread-safe: up to `workers` documents are in flight at once. A worker that overruns `timeout_s`
    (plus the time announced for its OCR pages) is killed and replaced (kind "timeout"); one that dies,
    e.g. on a segfault in the engine, is replaced too (kind "unreadable"). `target` replaces ingest_pdf,
    for tests; `ocr` overrides the ARBITER_OCR* environment the workers would otherwise read.
    """

    def __init__(
        self,
        workers: int = 1,
        timeout_s: float = 60.0,
        *,
        target: IngestTarget = ingest_pdf,
        memory_limit_mb: int | None = 4096,
        ocr: OcrConfig | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.timeout_s = timeout_s
        self._ocr = ocr
        self._target = target
        self._memory_limit_mb = memory_limit_mb
        self._ctx = _context(target)
        self._serves = self._ctx.get_start_method() == "forkserver"
        if self._serves:
            _server_opened()
        self._slots = threading.BoundedSemaphore(workers)
        self._idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
        self._closed = False

    def ingest(self, path: Path, *, doc_id: str | None = None, password: str | None = None) -> IngestResult:
        """Ingest one file in a worker; never raises for a bad file."""
        result = self.handed(path, doc_id=doc_id, password=password)
        return result.result if isinstance(result, Handed) else result

    def handed(
        self, path: Path, *, doc_id: str | None = None, password: str | None = None
    ) -> IngestResult | Handed:
        """Ingest one file in a worker, with whatever else the target did there; never raises for a bad file."""
        path = Path(path)
        doc_id = doc_id if doc_id is not None else path.stem
        # The soft deadline inside the worker normally answers first, with a cleaner message.
        kwargs: dict[str, Any] = {"doc_id": doc_id, "password": password, "deadline_s": self.timeout_s * 0.9}
        if self._ocr is not None:
            kwargs["ocr"] = self._ocr
        with self._slots:
            if self._closed:
                raise RuntimeError("IsolatedIngestor is closed")
            worker = self._take()
            try:
                result = worker.run((path, kwargs), self.timeout_s)
            except WorkerStartError:
                worker.stop(kill=True)
                raise
            except _WorkerLost:
                worker.stop(kill=True)
                return self._failure(
                    path,
                    doc_id,
                    "unreadable",
                    "The PDF reader crashed on this file; it is probably damaged.",
                )
            if result is None:
                worker.stop(kill=True)
                return self._failure(
                    path,
                    doc_id,
                    "timeout",
                    f"Reading the PDF took longer than the {self.timeout_s:g}-second limit and was stopped.",
                )
            if self._closed:
                worker.stop(kill=False)
            else:
                self._idle.put(worker)
            ocr_pass.report_ocr_gaps(result.result if isinstance(result, Handed) else result, self._ocr)
            return result

    def _take(self) -> _Worker:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            return _Worker(self._ctx, self._target, self._memory_limit_mb)

    @staticmethod
    def _failure(path: Path, doc_id: str, kind: FailureKind, message: str) -> IngestFailure:
        try:
            sha: str | None = file_sha256(path)
        except OSError:
            sha = None
        return IngestFailure(doc_id=doc_id, file_path=str(path), file_sha256=sha, kind=kind, message=message)

    def close(self) -> None:
        """Stop the idle workers; documents in flight finish first."""
        closing, self._closed = not self._closed, True
        while True:
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                break
            worker.stop(kill=False)
        if closing and self._serves:
            _server_closed()

    def __enter__(self) -> IsolatedIngestor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
