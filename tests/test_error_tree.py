"""Every exception class Arbiter defines sits in the one tree of arbiter/errors.py, which its docstring draws."""

from __future__ import annotations

import ast
import importlib
import inspect

import arbiter.errors
from arbiter.errors import ArbiterError, UserError
from tests.test_import_graph import modules


def exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined at module or class level in arbiter/ and verifiers/, by qualified name."""
    found: dict[str, type[BaseException]] = {}
    for name, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if not any(isinstance(node, ast.ClassDef) for node in ast.walk(tree)):
            continue  # nothing to check; some modules (alembic's env.py) cannot be imported on their own
        module = importlib.import_module(name)
        pending: list[object] = [value for value in vars(module).values() if inspect.isclass(value)]
        while pending:
            cls = pending.pop()
            if not inspect.isclass(cls) or cls.__module__ != name:
                continue
            if issubclass(cls, BaseException):
                found[f"{name}.{cls.__qualname__}"] = cls
            pending.extend(value for value in vars(cls).values() if inspect.isclass(value))
    return found


def test_every_exception_class_derives_from_arbiter_error() -> None:
    """No exception class of arbiter/ or verifiers/ derives from Exception outside the ArbiterError tree."""
    classes = exception_classes()
    assert len(classes) > 30  # the walk found them
    outside = sorted(
        name
        for name, cls in classes.items()
        if issubclass(cls, Exception) and not issubclass(cls, ArbiterError)
    )
    assert outside == []


def test_only_deliberate_signals_are_not_exceptions() -> None:
    """The BaseExceptions outside Exception are the CLI's SIGTERM signal and the interrupted run (with its
    summary), KeyboardInterrupts on purpose."""
    signals = sorted(name for name, cls in exception_classes().items() if not issubclass(cls, Exception))
    assert signals == ["arbiter.cli.run._Terminated", "arbiter.run.batch.RunInterrupted"]
    assert all(issubclass(exception_classes()[name], KeyboardInterrupt) for name in signals)


def test_the_docstring_draws_every_public_exception_class() -> None:
    """Each public exception class appears by name in arbiter/errors.py's drawing of the tree."""
    drawing = arbiter.errors.__doc__ or ""
    missing = sorted(
        cls.__name__
        for cls in exception_classes().values()
        if issubclass(cls, Exception) and not cls.__name__.startswith("_") and cls.__name__ not in drawing
    )
    assert missing == []


def test_builtin_bases_are_kept_where_callers_catch_them() -> None:
    """Moving into the tree kept the builtin bases callers catch (ValueError, RuntimeError)."""
    from arbiter.ingest.documentai.shape import DocumentAIFormatError
    from arbiter.ingest.isolated import WorkerStartError

    assert issubclass(DocumentAIFormatError, ValueError)
    assert issubclass(WorkerStartError, RuntimeError)


def test_only_user_errors_become_one_line_at_the_cli() -> None:
    """Joining the tree did not make internal errors "user mistakes": the CLI prints UserError, StoreError
    and LLMError in one line, while e.g. a ClassificationError or PatchFailed escaping a command is a bug
    and keeps its traceback (None)."""
    from arbiter.classify.base import ClassificationError
    from arbiter.cli.support import user_error_message
    from arbiter.decide.autofix import PatchFailed
    from arbiter.errors import ConfigError, InputError
    from arbiter.llm.port import LLMError
    from arbiter.run.lock import RunLocked
    from arbiter.store.errors import DatabaseUnavailable, UnknownUser

    assert user_error_message(ConfigError("bad profile")) == "bad profile"
    assert user_error_message(InputError("no PDFs")) == "no PDFs"
    assert user_error_message(UnknownUser("no such user")) == "no such user"
    assert user_error_message(LLMError("config", "no key")) == "no key"
    assert issubclass(RunLocked, UserError)
    assert issubclass(DatabaseUnavailable, UserError)
    assert user_error_message(ClassificationError("model said nothing")) is None
    assert user_error_message(PatchFailed("i1", "V2.CODE", "/segments/0", "missing path")) is None
