# cython: language_level=3
"""The call gate every cuDNN call of the package passes: calls in flight, the exit gate, interrupts raised inside
cuDNN's callback.

* every cuDNN call that releases the GIL passes ``enter_call``/``leave_call`` (inline, ``_gate.pxd``), naming the
  objects it uses: it counts the call in flight on each of them (``Resource._busy``) and process-wide
  (``calls_in_flight()``). Nothing else counts calls.
* at exit an ``atexit`` hook shuts the gate (new calls raise ``CudnnShutdownError``, a ``CudnnError``) and waits
  (bounded) for the calls in flight, so cuDNN's libraries are not torn down under them.
* a ``KeyboardInterrupt`` (or ``SystemExit``) raised inside cuDNN's logging callback is kept and raised in the
  calling thread when the cuDNN call returns (``note_interrupt``).
"""
import atexit
import time

from cudnn_backend._bindings.enums import Status
from cudnn_backend.errors import CudnnShutdownError

_calls_in_flight = 0
_exiting = False
_pending_interrupt = None
cdef object _SHUTDOWN_STATUS = Status.CUDNN_STATUS_NOT_INITIALIZED  # what CudnnShutdownError carries
EXIT_WAIT_SECONDS = 30.0  # how long the atexit hook waits for cuDNN calls in flight


cdef int _refuse_call(Resource a, Resource b, Resource c) except -1:
    """enter_call's refusals, out of line: the interpreter exits, or an object is closed (named)."""
    if _exiting:
        raise CudnnShutdownError(_SHUTDOWN_STATUS)
    for r in (a, b, c):
        if r is not None:
            (<Resource>r)._check_open()
    return 0


cdef int _raise_pending_interrupt() except -1:
    global _pending_interrupt
    exc, _pending_interrupt = _pending_interrupt, None
    if exc is not None:
        raise exc
    return 0


cdef void note_interrupt(object exc) noexcept:
    """Keep a KeyboardInterrupt/SystemExit raised inside a cuDNN callback for the calling thread."""
    global _pending_interrupt
    if _pending_interrupt is None:
        _pending_interrupt = exc


def calls_in_flight():
    """How many cuDNN calls are running now (with the GIL released), process-wide."""
    return _calls_in_flight


def _wait_at_exit(timeout=None):
    """The atexit hook: refuse new cuDNN calls, then wait (bounded) for those in flight to return."""
    global _exiting
    _exiting = True
    deadline = time.monotonic() + (EXIT_WAIT_SECONDS if timeout is None else timeout)
    while _calls_in_flight > 0 and time.monotonic() < deadline:
        time.sleep(0.005)
    return _calls_in_flight


atexit.register(_wait_at_exit)


def _call_gate(Resource a, Resource b, Resource c, int repeat=1):
    """enter_call and leave_call with ``a``, ``b``, ``c`` ``repeat`` times (no cuDNN call between): for measuring the
    gate's per-call cost (benchmarks/percall_gate.py)."""
    cdef int i
    for i in range(repeat):
        enter_call(a, b, c)
        leave_call(a, b, c)
    return repeat
