# The one lifetime of a cuDNN object (see _resource.pyx): handles, descriptors and variant packs derive from Resource
# and supply only their destroy call (and what they hold for cuDNN).
from cudnn_backend._bindings.cycudnn cimport CUDNN_STATUS_SUCCESS, cudnnStatus_t


cdef class Resource:
    # Open (_raw set), in use by cuDNN calls that released the GIL (_busy, counted by the call gate), closed while in
    # use (_pending: destroyed by the last of those calls), closed (_raw NULL).
    cdef void* _raw                      # the live cuDNN object: cudnnHandle_t or cudnnBackendDescriptor_t
    cdef int _busy                       # cuDNN calls in flight (GIL released) that use this object
    cdef void* _pending                  # closed while busy: destroyed when the last call returns
    cdef object _pending_keep            # what cuDNN may still read through it meanwhile, released with it
    cdef bint _closed                    # closed once: never made again
    cdef object __weakref__

    # what each kind supplies
    cdef cudnnStatus_t _destroy(self, void* raw) noexcept nogil   # its cuDNN destroy call
    cdef object _release(self)           # at close: drop what it holds for cuDNN, returned (alive until the destroy)
    cdef object _descriptor_type(self)   # its DescriptorType (None for a handle): errors name it
    cdef str _name(self)                 # how messages name it ("Handle", "VariantPack", the descriptor type)

    # the one close, and its pieces
    cdef int _close(self) except -1      # destroy now, or by the last call in flight; idempotent, once whatever the threads
    cdef void _destroy_deferred(self) noexcept   # the last call in flight returned: the close it deferred
    cdef void _destroy_failed(self, cudnnStatus_t status) noexcept   # a RuntimeWarning naming the object
    cdef int _refuse_closed(self) except -1       # CudnnUnsafeCallError "this NAME is closed"
    cdef int _refuse_made(self) except -1         # CudnnUnsafeCallError: __init__ again on a made object

    # ValueError (CudnnUnsafeCallError) naming the object once closed; the call gate asks it of every object a call
    # uses, so a call cannot start on an object another thread closed while this one held no GIL
    cdef inline int _check_open(self) except -1:
        if self._raw == NULL:
            return self._refuse_closed()
        return 0

    # for __init__: refuses an object made before (open or closed)
    cdef inline int _check_new(self) except -1:
        if self._raw != NULL or self._closed:
            return self._refuse_made()
        return 0

    # at collection: destroy what is left (C only: safe at interpreter exit); each kind's __dealloc__ calls it first,
    # before its own references go, so what cuDNN reads through the object outlives it. Every kind must have that
    # __dealloc__: Resource has none (it would only run a second time, after the kind's), so a kind without one
    # would leak its cuDNN object (tests/core/test_resource_dealloc.py checks each kind)
    cdef inline void _dealloc(self) noexcept:
        cdef cudnnStatus_t status
        if self._raw != NULL:
            status = self._destroy(self._raw)
            self._raw = NULL
            if status != CUDNN_STATUS_SUCCESS:
                self._destroy_failed(status)
        elif self._pending != NULL:  # (a call in flight holds a reference: normally done by then)
            self._destroy_deferred()

    # a call in flight on this object: counted (the call gate, with the GIL held), and returned
    cdef inline void _enter(self) noexcept:
        self._busy += 1

    cdef inline void _leave(self) noexcept:
        self._busy -= 1
        if self._busy == 0 and self._pending != NULL:
            self._destroy_deferred()
