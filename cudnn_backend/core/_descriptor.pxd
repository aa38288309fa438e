# The checked core: Handle, Descriptor and the call gate every cuDNN call passes (see _descriptor.pyx).
# Downstream Cython code (the generated typed classes, the variant packs) cimports these.
from libc.stdint cimport int64_t, uint64_t
from cudnn_backend._bindings.cycudnn cimport cudnnBackendDescriptor_t, cudnnHandle_t, cudnnStatus_t

cdef class Handle:
    cdef cudnnHandle_t _handle
    cdef cudnnHandle_t _pending          # closed while a call used it: destroyed when the last call returns
    cdef object _stream_ref
    cdef readonly object device
    cdef int _busy                       # cuDNN calls in flight (GIL released) that use this handle
    cdef object __weakref__
    cdef int _need_open(self) except -1
    cdef void _leave(self) noexcept


cdef class Descriptor:
    cdef cudnnBackendDescriptor_t _ptr
    cdef cudnnBackendDescriptor_t _pending  # closed while a call used it: destroyed when the last call returns
    cdef int _dtype
    cdef bint _finalized
    cdef int _busy                       # cuDNN calls in flight (GIL released) that use this descriptor
    # The one ownership field: one slot per attribute of the descriptor's type (schema order), holding the
    # value as set (child descriptors, the handle, host-data copies included) or None.
    cdef list _vals
    cdef object _read_from               # the descriptor this one was read from (get), kept alive with it
    cdef dict _atypes                    # attribute -> attribute type, for attributes set with a non-default type
    cdef uint64_t _mask                  # the attributes set, one bit each (their index among the type's attributes)
    cdef object __weakref__

    cdef int _create(self, int dtype) except -1
    cdef int _check_open(self) except -1
    cdef void _leave(self) noexcept
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
cdef int enter_call() except -1
cdef int leave_call() except -1
cdef void note_interrupt(object exc) noexcept
cdef int clear_last_error() except -1
