# cython: language_level=3
"""Errors and versions: every non-success status of cuDNN becomes a ``CudnnError`` carrying cuDNN's own message
(``raise_status``), and every feature newer than the oldest supported release passes the version gate
(``check_available``) before anything is made of it."""
import threading

from cudnn_backend._bindings.cycudnn cimport *
from cudnn_backend._bindings cimport cycudnn

from cudnn_backend._bindings import _loader
from cudnn_backend._bindings import enums as _enums
from cudnn_backend._bindings.enums import Status
from cudnn_backend.core.versions import format_version, parse_version
from cudnn_backend.errors import CudnnVersionError, make_error

cdef enum:
    LAST_ERROR_SIZE = 4096

_LOADED_VERSION = 0
_UNAVAILABLE = {}
cdef object _VERSIONS_LOCK = threading.Lock()


cdef int ensure_versions() except -1:
    global _LOADED_VERSION
    if _LOADED_VERSION:
        return 0
    with _VERSIONS_LOCK:
        if not _LOADED_VERSION:
            version = _loader.load_cudnn().version
            for name, since in _enums.SINCE.items():
                if parse_version(since) > version:
                    _UNAVAILABLE[name] = since
            _LOADED_VERSION = version
    return 0


def last_error_string():
    """cuDNN's message for the last failed call on this thread (cudnnGetLastErrorString)."""
    cdef char buf[LAST_ERROR_SIZE]
    buf[0] = 0
    cycudnn.cudnnGetLastErrorString(buf, LAST_ERROR_SIZE)
    return buf[:LAST_ERROR_SIZE].split(b"\0", 1)[0].decode("utf-8", "replace").strip()


def clear_error():
    """Forget cuDNN's last message (before a call whose failure should report its own)."""
    clear_last_error()


cdef object _status_member(int status):
    try:
        return Status(status)
    except ValueError:  # newer than the header
        return status


cdef int raise_status(cudnnStatus_t status, str function, object descriptor_type=None, object attribute=None) except -1:
    if status == CUDNN_STATUS_SUCCESS:
        return 0
    raise make_error(_status_member(<int>status), function, descriptor_type, attribute, last_error_string())


def since_of(name):
    """The cuDNN release ("9.23.0") that introduced ``name``: an enumerant (descriptor type, attribute, attribute
    type, enum value), an enum type ("cudnnBackendOperationGraphMode_t") or a function, by its C name, from the
    header's ``@since`` (the generator's tables). ValueError for a name the header does not have."""
    if not isinstance(name, str):
        raise TypeError(f"name: expected a C name (str), not {type(name).__name__}")
    for table in (_enums.SINCE, _enums.FUNCTION_SINCE, _enums.ENUM_SINCE):
        since = table.get(name)
        if since is not None:
            return since
    raise ValueError(f"{name!r} is no enumerant, enum type or function of cudnn_graph.h")


cdef dict _SINCE_NUMBER = {}  # C name -> since_of(name) as a number: the gate runs for every knob of every config


cdef int _since_number(object name) except -1:
    v = _SINCE_NUMBER.get(name) if isinstance(name, str) else None
    if v is None:  # since_of refuses a name that is no str, or no C name of the header
        v = _SINCE_NUMBER[name] = parse_version(since_of(name))
    return v


def is_available(name):
    """Whether the loaded cuDNN has ``name`` (an enumerant, enum type or function: see ``since_of``)."""
    ensure_versions()
    return _since_number(name) <= _LOADED_VERSION


def check_available(names, context=""):
    """The version gate: CudnnVersionError "NAME (context) needs cuDNN >= X.Y (loaded: A.B)" unless the loaded
    cuDNN has every one of ``names`` (a C name, or several: the newest one missing is named). Every feature newer
    than the oldest supported release goes through here (or through the same tables, for attributes and values
    set on a descriptor) before any descriptor is made."""
    ensure_versions()
    missing = None
    cdef int since
    for name in ((names,) if isinstance(names, str) else tuple(names)):
        since = _since_number(name)
        if since > _LOADED_VERSION and (missing is None or since > _since_number(missing)):
            missing = name
    if missing is not None:
        raise CudnnVersionError(missing, since_of(missing), format_version(_LOADED_VERSION), context)


def unavailable_enumerants():
    """{C name: version} of every enumerant of the header newer than the loaded cuDNN."""
    ensure_versions()
    return dict(_UNAVAILABLE)
