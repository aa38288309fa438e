# cython: language_level=3
"""``Resource``: the one lifetime of a cuDNN object (handles, descriptors, variant packs). It owns the raw pointer and
the one close; each kind supplies only its destroy call and what it holds for cuDNN.

* ``close()`` swaps the pointer out while holding the GIL, so two threads closing one object destroy it once; an
  object closed while a call uses it (counted by the call gate, ``core._gate``) is destroyed by the last such call as
  it returns, and what cuDNN may still read through it (children, buffers, the stream) stays alive until then.
* at collection the pointer left is destroyed with C calls only (safe during interpreter shutdown: the library is
  never unloaded), before the object's own references go, so what cuDNN reads through it outlives it.
* a destroy that fails is raised by ``close()``; where no caller is left (a deferred close, a collection) it is
  reported as a ``RuntimeWarning`` naming the object, never dropped.
"""
import sys
import warnings

from libc.stdint cimport intptr_t

from cudnn_backend._bindings.cycudnn cimport *

from cudnn_backend.core._status cimport raise_status
from cudnn_backend.errors import CudnnUnsafeCallError


cdef void _warn_destroy_failed(str name, cudnnStatus_t status) noexcept:
    """A destroy no caller can be told of (a deferred close, a collection): a RuntimeWarning naming the object
    (none once the interpreter is exiting: its machinery may be gone; an exception the warning raises, a filter
    turning it into an error, is reported as unraisable, never propagated)."""
    if sys.is_finalizing():
        return
    warnings.warn(f"destroying the {name} failed (cuDNN status {<int>status}); the object was released anyway",
                  RuntimeWarning, stacklevel=2)


cdef class Resource:
    """What handles, descriptors and variant packs share: the lifetime of one cuDNN object.

    Open, then in use by cuDNN calls that released the GIL (counted by the call gate, ``enter_call``), then
    closed: at once, or, when ``close()`` comes while calls use it, by the last of them as it returns (what
    cuDNN may still read through it stays alive until then). Not instantiated by itself.
    """

    # (no __cinit__: the fields start zeroed, NULL and None)

    @property
    def closed(self):
        """Whether the cuDNN object is gone (``close()``) or was never made."""
        return self._raw == NULL

    @property
    def ptr(self):
        """The raw cuDNN object (cudnnHandle_t, cudnnBackendDescriptor_t) as an int, for interop."""
        return <intptr_t>self._raw

    # (no __dealloc__: each kind's own calls _dealloc() first, before its references go; one here would run again
    # after it, a second wrapper per collected object that finds nothing left to destroy)

    cdef cudnnStatus_t _destroy(self, void* raw) noexcept nogil:
        """The kind's cuDNN destroy (cudnnDestroy, cudnnBackendDestroyDescriptor)."""
        return CUDNN_STATUS_SUCCESS

    cdef object _release(self):
        return None

    cdef object _descriptor_type(self):
        return None

    cdef str _name(self):
        return type(self).__name__

    cdef int _refuse_closed(self) except -1:
        raise CudnnUnsafeCallError(f"this {self._name()} is closed")

    cdef int _refuse_made(self) except -1:
        raise CudnnUnsafeCallError(f"this {self._name()} is made already: __init__ cannot make it again (that would "
                                   f"leak the cuDNN object it holds); make a new {type(self).__name__}")

    cdef int _close(self) except -1:
        cdef void* raw = self._raw
        cdef cudnnStatus_t status
        if raw == NULL:
            return 0
        self._raw = NULL  # under the GIL: no other thread can take it from here on
        self._closed = True
        keep = self._release()
        if self._busy > 0:
            self._pending = raw
            self._pending_keep = keep
            return 0
        with nogil:
            status = self._destroy(raw)
        if status != CUDNN_STATUS_SUCCESS:
            dtype = self._descriptor_type()
            raise_status(status, "cudnnDestroy" if dtype is None else "cudnnBackendDestroyDescriptor", dtype)
        return 0

    cdef void _destroy_deferred(self) noexcept:
        cdef void* raw = self._pending
        cdef cudnnStatus_t status
        self._pending = NULL
        status = self._destroy(raw)
        self._pending_keep = None
        if status != CUDNN_STATUS_SUCCESS:
            self._destroy_failed(status)

    cdef void _destroy_failed(self, cudnnStatus_t status) noexcept:
        _warn_destroy_failed(self._name(), status)


def _in_flight(Resource resource not None):
    """How many cuDNN calls use ``resource`` now (what its close() waits for); for tests."""
    return resource._busy
