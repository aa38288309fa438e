# cython: language_level=3
"""cuDNN's messages through the one ``cudnnSetCallback`` of the package.

Two consumers share it: Python's ``logging`` (``enable_logging``; off until asked for) and message
capture (``cudnn_messages()``: collect cuDNN's own errors and warnings, every line, e.g. the reasons
heuristics found no engine). While neither wants messages the callback stays installed with every
severity off, so cuDNN never falls back to printing them itself.

cuDNN may call back from any thread and from inside calls that released the GIL: the callback takes
the GIL itself and never lets an exception escape into cuDNN. A KeyboardInterrupt (or SystemExit)
raised while it runs is kept and re-raised in the calling thread when the cuDNN call returns.
"""
import atexit
import contextlib
import logging
import threading

from cudnn_backend._bindings.cycudnn cimport *
from cudnn_backend._bindings cimport cycudnn
from cudnn_backend.core._gate cimport note_interrupt
from cudnn_backend.core._status cimport raise_status

LOGGER = logging.getLogger("cudnn_backend.cudnn")
_LEVELS = {0: logging.CRITICAL, 1: logging.ERROR, 2: logging.WARNING, 3: logging.INFO}
_lock = threading.RLock()
cdef bint _logging_on = False
cdef unsigned _log_mask = 0
cdef list _sinks = []          # lists that cudnn_messages() contexts collect into
cdef unsigned _capture_mask = 0

__all__ = ["enable_logging", "disable_logging", "logging_enabled", "cudnn_messages", "cudnn_reasons"]


cdef bytes _message_bytes(const char* msg):
    """cuDNN separates a message's lines with NUL and ends it with two: take all of them."""
    cdef Py_ssize_t n = 0
    if msg == NULL:
        return b""
    while not (msg[n] == 0 and (n == 0 or msg[n - 1] == 0)) and n < 1 << 20:
        n += 1
    return msg[:n]


cdef void _callback(cudnnSeverity_t sev, void* udata, const cudnnDebug_t* dbg, const char* msg) noexcept with gil:
    cdef unsigned bit = 1u << <int>sev
    try:
        if not ((_logging_on and _log_mask & bit) or (_sinks and _capture_mask & bit)):
            return
        raw = _message_bytes(msg)
        text = "\n".join(line for line in raw.decode("utf-8", "replace").split("\0") if line).rstrip()
        if _sinks and _capture_mask & bit:
            for sink in list(_sinks):
                sink.append(text)
        if _logging_on and _log_mask & bit:
            status = dbg.cudnnStatus if dbg != NULL else 0
            LOGGER.log(_LEVELS.get(<int>sev, logging.INFO), "%s", text, extra={"cudnn_status": status})
    except (KeyboardInterrupt, SystemExit) as e:  # never into cuDNN: raised when its call returns
        note_interrupt(e)
    except BaseException:  # a failing log handler must not unwind through cuDNN's C++ frames
        pass


cdef int _install() except -1:
    """Point cuDNN at the callback with the union of what the consumers want (lock held)."""
    cdef cudnnStatus_t status
    cdef unsigned mask = (_log_mask if _logging_on else 0) | (_capture_mask if _sinks else 0)
    with nogil:
        status = cycudnn.cudnnSetCallback(mask, NULL, _callback)
    raise_status(status, "cudnnSetCallback")
    return 0


def enable_logging(level=logging.WARNING):
    """Send cuDNN's messages at ``level`` and above to the ``cudnn_backend.cudnn`` logger.

    cuDNN only produces messages for the severities its own logging enables; errors and warnings
    are reported by default, info messages need ``CUDNN_LOGLEVEL_DBG=3`` as well.
    """
    global _logging_on, _log_mask
    if isinstance(level, bool) or not isinstance(level, int):
        raise TypeError(f"level: expected a logging level (int), not {type(level).__name__}")
    cdef unsigned mask = 0
    if level <= logging.ERROR:
        mask |= CUDNN_SEV_ERROR_EN
    if level <= logging.WARNING:
        mask |= CUDNN_SEV_WARNING_EN
    if level <= logging.INFO:
        mask |= CUDNN_SEV_INFO_EN
    with _lock:
        _log_mask = mask
        _logging_on = True
        _install()


def disable_logging():
    """Stop routing cuDNN's messages to Python (cuDNN still does not print them itself)."""
    global _logging_on
    with _lock:
        if not _logging_on:
            return
        _logging_on = False
        _install()


def logging_enabled():
    """Whether cuDNN's messages are routed to Python's logging (``enable_logging``)."""
    return _logging_on


@contextlib.contextmanager
def cudnn_messages(errors=True, warnings=True):
    """Collect cuDNN's own error/warning messages (full text, every line) into the list yielded."""
    global _capture_mask
    sink = []
    cdef unsigned mask = (CUDNN_SEV_ERROR_EN if errors else 0) | (CUDNN_SEV_WARNING_EN if warnings else 0)
    with _lock:
        _sinks.append(sink)
        _capture_mask |= mask
        _install()
    try:
        yield sink
    finally:
        with _lock:
            _detach(sink)


cdef int _detach(list sink) except -1:
    """Stop collecting into ``sink`` (lock held): found by identity (two blocks' lists may be equal), and maybe
    gone already: a block left open in a suspended generator ends when the generator is collected, after the
    exit hook detached every sink."""
    global _capture_mask
    cdef Py_ssize_t i
    for i in range(len(_sinks)):
        if _sinks[i] is sink:
            del _sinks[i]
            if not _sinks:
                _capture_mask = 0
            _install()
            return 0
    return 0


_NOISE = ("finalize_internal()", "ptr->isSupported()", "CUDNN_STATUS_NOT_INITIALIZED == status", "ptrDesc->finalize()",
          "library configuration is set to AUTO")


def cudnn_reasons(messages, limit=8):
    """The distinct "Reason:" lines of captured cuDNN messages (see ``cudnn_messages``), noise dropped."""
    out = []
    for text in messages:
        for line in str(text).splitlines():
            line = line.strip()
            if "Reason:" not in line or any(n.lower() in line.lower() for n in _NOISE):
                continue
            if line not in out:
                out.append(line)
    return "\n".join(out[:limit])


@atexit.register
def _detach_at_exit():
    # A callback into a finalizing interpreter would crash: turn every severity off before Python shuts down.
    global _logging_on
    try:
        with _lock:
            _logging_on = False
            _sinks.clear()
            if _installed_or_used():
                _install()
    except Exception:
        pass


def _installed_or_used():
    return _logging_on or _log_mask != 0 or _capture_mask != 0
