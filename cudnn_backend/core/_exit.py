"""A thread that the call gate refused at exit ends without a word.

At exit the call gate (``core._descriptor``) refuses every new cuDNN call with ``CudnnShutdownError``, because
cuDNN's libraries are torn down next. A daemon thread still working (heuristics, runtime-compiled plan builds,
anything that calls cuDNN) then dies of that refusal, and ``threading.excepthook`` would print its traceback on a
program that did nothing wrong. Refusing is right; printing is not: CPython ends daemon threads at finalization
without a word, and a thread ended by the refusal ends the same way.

Just before the gate shuts, the exit hook here wraps whatever ``threading.excepthook`` the program has then
(its own or Python's), so that a thread that ended because of the refusal (``CudnnShutdownError`` raised, or the
cause or context of what it raised) says nothing; every other exception still reaches that hook.
"""
from __future__ import annotations

import atexit
import threading

# imported first, so the gate's exit hook (shut the gate) is registered before ours and runs after it (atexit runs
# hooks in reverse order): the wrapper is in place before any thread can be refused
from cudnn_backend.core import _descriptor  # noqa: F401
from cudnn_backend.errors import CudnnShutdownError

__all__ = ["ended_by_refusal", "quiet_refused_threads"]


def ended_by_refusal(exc: BaseException | None) -> bool:
    """Whether ``exc`` is the gate's exit refusal or was raised because of it (its cause or context chain)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, CudnnShutdownError):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ if exc.__cause__ is not None else exc.__context__
    return False


def quiet_refused_threads() -> None:
    """Make the current ``threading.excepthook`` silent for threads ended by the exit refusal (once)."""
    previous = threading.excepthook
    if getattr(previous, "quiet_refusals", False):
        return

    def excepthook(args):
        if ended_by_refusal(args.exc_value):
            return
        previous(args)

    excepthook.quiet_refusals = True
    threading.excepthook = excepthook


atexit.register(quiet_refused_threads)
