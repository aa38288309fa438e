# cython: language_level=3
"""Library-level queries of the loaded cuDNN: its version, the CUDA runtime it was built against, the newest device
it supports, its properties, the graph sub-library's version check, a status code's name."""
from cudnn_backend._bindings.cycudnn cimport *
from cudnn_backend._bindings cimport cycudnn

from cudnn_backend.core._gate cimport enter_call, leave_call
from cudnn_backend.core._status cimport raise_status
from cudnn_backend.core._coerce import as_int


def get_version():
    """cudnnGetVersion of the loaded library (MAJOR*10000 + MINOR*100 + PATCH)."""
    return cycudnn.cudnnGetVersion()


def get_cudart_version():
    """cudnnGetCudartVersion: the CUDA runtime version cuDNN was built against."""
    return cycudnn.cudnnGetCudartVersion()


def get_max_device_version():
    """cudnnGetMaxDeviceVersion: the newest compute capability the library supports (e.g. 1200)."""
    return cycudnn.cudnnGetMaxDeviceVersion()


def get_property(prop):
    """cudnnGetProperty(MAJOR_VERSION=0 / MINOR_VERSION=1 / PATCH_LEVEL=2)."""
    cdef int value = 0
    cdef cudnnStatus_t status
    cdef libraryPropertyType c_prop
    p = as_int(prop, "property", 0, 2)
    c_prop = <libraryPropertyType><int>p
    enter_call(None, None, None)
    with nogil:
        status = cycudnn.cudnnGetProperty(c_prop, &value)
    leave_call(None, None, None)
    raise_status(status, "cudnnGetProperty")
    return value


def graph_version_check():
    """cudnnGraphVersionCheck: raises if cuDNN's graph sub-library does not match."""
    cdef cudnnStatus_t status
    enter_call(None, None, None)
    with nogil:
        status = cycudnn.cudnnGraphVersionCheck()
    leave_call(None, None, None)
    raise_status(status, "cudnnGraphVersionCheck")


def get_error_string(status):
    """cudnnGetErrorString: cuDNN's name for a status code."""
    cdef const char* s = cycudnn.cudnnGetErrorString(<cudnnStatus_t><int>as_int(status, "status", 0, 0x7FFFFFFF))
    return (<bytes>s).decode() if s != NULL else ""
