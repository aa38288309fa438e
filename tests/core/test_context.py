"""A Handle's CUDA context in a thread that has none, offline: the no-device stand-in emulates a per-thread current
context (``cudnn_backend_stub_emulate_contexts``), and ``core._context._use_context`` runs the check that execute,
the CUDA graph calls and plan finalizes make before cuDNN launches (``use_context``).

What it must do: in a thread with no current context, make the handle's current (once: the next call finds it
current); in a thread with another context current, leave that one alone and say so (the call's error then names
the handle's device, ``context_hint``); with no context recorded (no GPU) or a driver that cannot answer, do
nothing. On a GPU the same is tested through execute from a fresh thread: tests/gpu/runtime/test_context_gpu.py.
"""
import ctypes
import threading

import pytest

import cudnn_backend as cb
from cudnn_backend._bindings import _loader
from cudnn_backend.core import _context, _handle

UNKNOWN, CURRENT, MADE_CURRENT, OTHER, SET_FAILED = 0, 1, 2, 3, 4
MINE, THEIRS = 0x7F0000001230, 0x7F0000004560

pytestmark = pytest.mark.skipif(_loader.ensure_driver() != "stand-in",
                                reason="emulated contexts need the no-device stand-in (a real driver is loaded)")


def _stand_in():
    lib = _loader._driver_lib
    lib.cuCtxGetCurrent.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.cuCtxSetCurrent.argtypes = [ctypes.c_void_p]
    lib.cudnn_backend_stub_set_current_calls.restype = ctypes.c_long
    return lib


@pytest.fixture
def contexts():
    """The stand-in emulating contexts (each thread starts with none); off again afterwards."""
    lib = _stand_in()
    lib.cudnn_backend_stub_emulate_contexts(1)
    lib.cuCtxSetCurrent(None)  # this thread's, left by an earlier test
    lib.cudnn_backend_stub_emulate_contexts(1)  # (again: the count of cuCtxSetCurrent calls from 0)
    yield lib
    lib.cuCtxSetCurrent(None)
    lib.cudnn_backend_stub_emulate_contexts(0)


def current(lib):
    ctx = ctypes.c_void_p()
    assert lib.cuCtxGetCurrent(ctypes.byref(ctx)) == 0
    return ctx.value or 0


def in_a_thread(fn):
    """fn() in a fresh thread (which has no current context); its result or its exception."""
    out = {}

    def run():
        try:
            out["result"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller
            out["error"] = e

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["result"]


def test_a_thread_without_a_context_gets_the_handles_once(contexts):
    def run():
        before = current(contexts)
        first = _context._use_context(MINE)
        after = current(contexts)
        second = _context._use_context(MINE)
        return before, first, after, second

    before, first, after, second = in_a_thread(run)
    assert before == 0, "a fresh thread has no current context"
    assert first == MADE_CURRENT and after == MINE, "the handle's context is made current"
    assert second == CURRENT, "and found current by the next call"
    assert contexts.cudnn_backend_stub_set_current_calls() == 1, "cuCtxSetCurrent only when none is current"


def test_another_current_context_is_left_alone(contexts):
    def run():
        contexts.cuCtxSetCurrent(THEIRS)
        state = _context._use_context(MINE)
        return state, current(contexts)

    state, after = in_a_thread(run)
    assert state == OTHER
    assert after == THEIRS, "the thread's own context stays current"
    assert contexts.cudnn_backend_stub_set_current_calls() == 1  # the test's own, none by the check


def test_threads_are_independent(contexts):
    contexts.cuCtxSetCurrent(THEIRS)  # this thread's
    assert in_a_thread(lambda: (_context._use_context(MINE), current(contexts))) == (MADE_CURRENT, MINE)
    assert current(contexts) == THEIRS
    assert _context._use_context(MINE) == OTHER


def test_repeated_checks_keep_the_context(contexts):
    """The loop the per-call cost is measured with: one set, then found current every time."""
    assert in_a_thread(lambda: _context._use_context(MINE, 100_000)) == CURRENT
    assert contexts.cudnn_backend_stub_set_current_calls() == 1


def test_nothing_recorded_or_no_driver_answer_does_nothing(contexts):
    assert in_a_thread(lambda: (_context._use_context(0), current(contexts))) == (UNKNOWN, 0)
    contexts.cudnn_backend_stub_fail_context_query(1)  # a driver that cannot say which context is current
    try:
        assert in_a_thread(lambda: _context._use_context(MINE)) == UNKNOWN
        assert contexts.cudnn_backend_stub_set_current_calls() == 0  # (emulation on: a set would count)
    finally:
        contexts.cudnn_backend_stub_fail_context_query(0)


def test_a_thread_without_context_where_none_can_be_set(contexts):
    contexts.cudnn_backend_stub_emulate_contexts(0)  # the stand-in as cuDNN sees it: no context, none can be set
    assert in_a_thread(lambda: _context._use_context(MINE)) == SET_FAILED


def test_the_hint_names_both_contexts_and_devices(contexts):
    handle = cb.Handle.__new__(cb.Handle)  # never created (no GPU): no context recorded
    assert handle.context == 0
    contexts.cuCtxSetCurrent(THEIRS)
    hint = _handle._context_hint(handle, OTHER)
    device = (THEIRS // 16) % 8  # the stand-in's emulated device of a context
    assert f"this thread's current context is 0x{THEIRS:x} (device {device})" in hint
    assert "the handle belongs to the CUDA context 0x0, device unknown" in hint
    assert "set_current" in hint and "CUDNN_LOGLEVEL_DBG" in hint
    assert "cuCtxSetCurrent" in _handle._context_hint(handle, 4)
    for state in (UNKNOWN, CURRENT, MADE_CURRENT):
        assert _handle._context_hint(handle, state) is None


def test_context_argument_is_checked():
    with pytest.raises(ValueError, match="context"):
        _context._use_context(-1)
    with pytest.raises(TypeError, match="context"):
        _context._use_context("0x10")


def test_stand_in_without_emulation_has_no_context_and_sets_none():
    lib = _stand_in()
    ctx = ctypes.c_void_p(1)
    # a driver's answer in a thread with no context (cuDNN 9.28's TensorIR engine needs it to finalize offline)
    assert lib.cuCtxGetCurrent(ctypes.byref(ctx)) == 0 and not ctx.value
    assert lib.cuCtxSetCurrent(ctypes.c_void_p(MINE)) == 100  # CUDA_ERROR_NO_DEVICE


# --- execute: once per handle and thread ------------------------------------------------------------------------
# A handle's context as execute checks it (context_for_call), on a probe of its own: the thread that found the
# context current is remembered, so the driver is not asked again there. That is what the stale case below shows:
# with the thread's context cleared behind the package's back, the remembered thread is not asked (the context
# stays cleared), until a failed call asks again (``failed``: what execute does when cuDNN refuses a call).

def clear_current(lib):
    lib.cuCtxSetCurrent(None)


def test_execute_checks_the_context_once_per_handle_and_thread(contexts):
    probe = _context._HandleContextProbe(MINE)

    def run():
        first, second = probe.check(), probe.check(1000)
        clear_current(contexts)  # the thread's own code, which the package cannot see
        remembered = probe.check()
        after = current(contexts)
        again = probe.failed()
        return first, second, remembered, after, again, current(contexts)

    first, second, remembered, after, again, now = in_a_thread(run)
    assert (first, second) == (MADE_CURRENT, CURRENT), "made current once, then found so"
    assert remembered == CURRENT and after == 0, "a remembered thread is not asked again"
    assert again == MADE_CURRENT and now == MINE, "a failed call asks again, and makes the context current"
    assert contexts.cudnn_backend_stub_set_current_calls() == 3  # the check's, the test's clear, the second check's


def test_each_thread_checks_for_itself_and_thread_ids_are_never_reused(contexts):
    """Fresh threads one after another (the OS reuses their ids and stacks; a Python thread state's id is never
    reused): each one's first check makes the context current there."""
    probe = _context._HandleContextProbe(MINE)
    states = [in_a_thread(lambda: (probe.check(), probe.check())) for _ in range(12)]
    assert states == [(MADE_CURRENT, CURRENT)] * 12
    assert contexts.cudnn_backend_stub_set_current_calls() == 12
    remembered = [t for t in probe.threads if t]
    assert len(remembered) == 4 and len(set(remembered)) == 4, "the last four threads, in four slots"


def test_threads_share_a_handle_each_remembered(contexts):
    probe = _context._HandleContextProbe(MINE)
    go, done = threading.Barrier(2), threading.Barrier(2)
    out = {}

    def worker(name):
        out[name] = [probe.check()]
        go.wait()
        clear_current(contexts)
        out[name].append(probe.check())  # both remembered: neither asked again
        done.wait()

    threads = [threading.Thread(target=worker, args=(n,)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == {"a": [MADE_CURRENT, CURRENT], "b": [MADE_CURRENT, CURRENT]}


def test_the_package_changing_a_context_makes_every_handle_check_again(contexts):
    """context_changed (a new Handle, memory.device()) bumps the epoch: every remembered thread is asked again."""
    probe = _context._HandleContextProbe(MINE)

    def run():
        first = probe.check()
        clear_current(contexts)
        _context.context_changed()
        return first, probe.check(), current(contexts)

    assert in_a_thread(run) == (MADE_CURRENT, MADE_CURRENT, MINE)


def test_another_context_is_never_remembered(contexts):
    """A thread with another context current is asked at every call (the call is likely to fail: its error names
    the handle's device), and the thread's context stays its own."""
    probe = _context._HandleContextProbe(MINE)

    def run():
        contexts.cuCtxSetCurrent(THEIRS)
        states = [probe.check(), probe.check()]
        clear_current(contexts)
        states.append(probe.check())  # asked: the context is made current now
        return states, current(contexts)

    assert in_a_thread(run) == ([OTHER, OTHER, MADE_CURRENT], MINE)
    assert not any(probe.threads[1:]) and probe.threads[0] != 0


def test_no_context_recorded_asks_nothing(contexts):
    probe = _context._HandleContextProbe(0)
    assert in_a_thread(lambda: (probe.check(100), current(contexts))) == (UNKNOWN, 0)
    assert contexts.cudnn_backend_stub_set_current_calls() == 0 and probe.threads == (0, 0, 0, 0)
