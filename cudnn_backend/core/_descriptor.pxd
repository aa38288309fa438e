# The checked core: Resource (the one lifetime of a cuDNN object), Handle, Descriptor and the call gate every
# cuDNN call passes (see _descriptor.pyx). Downstream Cython code (the generated typed classes, the variant
# packs) cimports these.
from libc.stdint cimport int64_t, uint64_t
from cudnn_backend._bindings.cycudnn cimport cudnnBackendDescriptor_t, cudnnHandle_t, cudnnStatus_t


cdef class Resource:
    # One cuDNN object's lifetime, for every kind (handle, descriptor, variant pack): open, in use by cuDNN calls
    # that released the GIL (_busy), closed while in use (_pending: destroyed by the last of those calls), closed.
    # The live pointer stays in the subclass, typed for its kind; _destroy is the kind's cuDNN destroy.
    cdef int _busy                       # cuDNN calls in flight (GIL released) that use this object
    cdef void* _pending                  # closed while busy: destroyed when the last call returns
    cdef object _pending_keep            # what cuDNN may still read through it meanwhile, released with it
    cdef object __weakref__
    cdef cudnnStatus_t _destroy(self, void* raw) noexcept nogil
    cdef cudnnStatus_t _retire(self, void* raw, object keep) noexcept
    cdef int _check_open(self) except -1  # ValueError naming the kind once closed (the call gate asks it)


cdef class Handle(Resource):
    cdef cudnnHandle_t _handle
    cdef object _stream_ref
    cdef readonly object device
    cdef void* _context                  # the CUcontext current when it was made (NULL: none, e.g. no GPU)
    cdef int _context_device             # that context's device ordinal (-1: unknown)
    cdef int _check_open(self) except -1


# A Handle's CUDA context in the calling thread (execute and the CUDA graph calls; finalizing plans): made current
# where the thread has none, left alone where it has another (cuDNN's failure then says which device the handle
# is on, context_hint). A cuCtxGetCurrent and a compare when it is current already; no Python object.
cdef enum:
    CONTEXT_UNKNOWN = 0                  # no context recorded, or the driver cannot say
    CONTEXT_CURRENT = 1                  # the handle's context is the thread's current one
    CONTEXT_MADE_CURRENT = 2             # the thread had none: the handle's was made current
    CONTEXT_OTHER = 3                    # the thread's current context is another one (left alone)
    CONTEXT_SET_FAILED = 4               # the thread had none and cuCtxSetCurrent failed
cdef int use_context(void* context) noexcept nogil
cdef str context_hint(Handle handle, int state)


cdef class Descriptor(Resource):
    cdef cudnnBackendDescriptor_t _ptr
    cdef int _dtype
    cdef bint _finalized
    # The one ownership field: one slot per attribute of the descriptor's type (schema order), holding the
    # value as set (child descriptors, the handle, host-data copies included) or None.
    cdef list _vals
    cdef object _read_from               # the descriptor this one was read from (get), kept alive with it
    cdef dict _atypes                    # attribute -> attribute type, for attributes set with a non-default type
    cdef uint64_t _mask                  # the attributes set, one bit each (their index among the type's attributes)

    cdef int _create(self, int dtype) except -1
    cdef int _check_open(self) except -1
    cdef int _set(self, int attr, int atype, object values) except -1
    cdef int _set_checked(self, int attr, int atype, object values) except -1
    cdef int _set_auto(self, int attr, object values) except -1
    cdef object _value(self, int attr)
    cdef bint _has(self, int attr)
    cdef list _items(self)
    cdef void _forget(self) noexcept
    cdef tuple _get_spec(self, object attribute, object attribute_type)
    cdef int64_t _count(self, int attr, int atype) except -1
    cdef object _finalize(self, bint check_required)  # finalize() without the Python call
    cdef int _check_required(self) except -1


cdef int raise_status(cudnnStatus_t status, str function, object descriptor_type=*, object attribute=*) except -1
# The call gate: every cuDNN call that releases the GIL is bracketed by enter_call/leave_call with the objects it
# uses (None for fewer than three); that is the one place calls are counted, per object and process-wide.
cdef int enter_call(Resource a, Resource b, Resource c) except -1
cdef int leave_call(Resource a, Resource b, Resource c) except -1
cdef void note_interrupt(object exc) noexcept
cdef int clear_last_error() except -1
