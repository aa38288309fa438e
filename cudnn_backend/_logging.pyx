# cython: language_level=3
"""cuDNN's messages (cudnnSetCallback) routed to Python's ``logging``, off until asked for.

cuDNN may call back from any thread (and from inside calls that released the GIL): the callback
takes the GIL itself and never lets an exception escape into cuDNN.
"""
import atexit
import logging
import threading

from cudnn_backend._bindings.cycudnn cimport *
from cudnn_backend._bindings cimport cycudnn
from cudnn_backend._descriptor cimport raise_status

LOGGER = logging.getLogger("cudnn_backend.cudnn")
_LEVELS = {0: logging.CRITICAL, 1: logging.ERROR, 2: logging.WARNING, 3: logging.INFO}
_lock = threading.Lock()
_enabled = False


cdef bytes _message_bytes(const char* msg):
    """cuDNN separates a message's lines with NUL and ends it with two: take all of them."""
    cdef Py_ssize_t n = 0
    if msg == NULL:
        return b""
    while not (msg[n] == 0 and (n == 0 or msg[n - 1] == 0)) and n < 1 << 20:
        n += 1
    return msg[:n]


cdef void _callback(cudnnSeverity_t sev, void* udata, const cudnnDebug_t* dbg, const char* msg) noexcept with gil:
    if not _enabled:
        return
    try:
        raw = _message_bytes(msg)
        text = "\n".join(line for line in raw.decode("utf-8", "replace").split("\0") if line).rstrip()
        status = dbg.cudnnStatus if dbg != NULL else 0
        LOGGER.log(_LEVELS.get(<int>sev, logging.INFO), "%s", text, extra={"cudnn_status": status})
    except BaseException:  # never propagate into cuDNN
        pass


def enable_logging(level=logging.WARNING):
    """Send cuDNN's messages at ``level`` and above to the ``cudnn_backend.cudnn`` logger.

    cuDNN only produces messages for the severities its own logging enables; errors and warnings
    are reported by default, info messages need ``CUDNN_LOGLEVEL_DBG=3`` as well.
    """
    global _enabled
    cdef unsigned mask = 0
    cdef cudnnStatus_t status
    if level <= logging.ERROR:
        mask |= CUDNN_SEV_ERROR_EN
    if level <= logging.WARNING:
        mask |= CUDNN_SEV_WARNING_EN
    if level <= logging.INFO:
        mask |= CUDNN_SEV_INFO_EN
    with _lock:
        with nogil:
            status = cycudnn.cudnnSetCallback(mask, NULL, _callback)
        raise_status(status, "cudnnSetCallback")
        _enabled = True


def disable_logging():
    """Stop routing cuDNN's messages to Python (and keep cuDNN from printing them itself)."""
    global _enabled
    cdef cudnnStatus_t status
    with _lock:
        if not _enabled:
            return
        _enabled = False
        # a NULL callback would make cuDNN print to stderr itself: keep ours, with every severity off
        with nogil:
            status = cycudnn.cudnnSetCallback(0, NULL, _callback)
        raise_status(status, "cudnnSetCallback")


def logging_enabled():
    return _enabled


@atexit.register
def _detach_at_exit():
    # A callback into a finalizing interpreter would crash; detach before Python shuts down.
    if _enabled:
        try:
            disable_logging()
        except Exception:
            pass
