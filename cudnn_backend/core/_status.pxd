# cuDNN's statuses as exceptions, its last message, and the release gate (see _status.pyx).
from cudnn_backend._bindings cimport cycudnn
from cudnn_backend._bindings.cycudnn cimport cudnnStatus_t

cdef int _LOADED_VERSION                 # the loaded cuDNN's version (MAJOR*10000 + MINOR*100 + PATCH), 0 until read
cdef dict _UNAVAILABLE                   # enumerant C name -> the release that added it, for those newer than loaded
cdef int ensure_versions() except -1     # reads the two above once (loads cuDNN)

cdef int raise_status(cudnnStatus_t status, str function, object descriptor_type=*, object attribute=*) except -1


cdef inline int clear_last_error() except -1:
    """cuDNN keeps the last message across successful calls (warnings too): read it away, so an error is never
    explained by an older call's text."""
    cdef char buf[2]
    cycudnn.cudnnGetLastErrorString(buf, 2)
    return 0
