# Checked wrappers: the Handle and the generic backend Descriptor (see _descriptor.pyx).
from cudnn_backend._bindings.cycudnn cimport cudnnBackendDescriptor_t, cudnnHandle_t, cudnnStatus_t


cdef class Handle:
    cdef cudnnHandle_t _handle
    cdef object _stream_ref
    cdef readonly object device
    cdef int _busy  # cuDNN calls in flight with the GIL released: close() waits for none
    cdef object __weakref__
    cdef int _need_open(self) except -1


cdef class Descriptor:
    cdef cudnnBackendDescriptor_t _ptr
    cdef int _dtype
    cdef bint _finalized
    cdef dict _children      # attribute value -> tuple of objects kept alive (child descriptors, handle)
    cdef set _set_attributes  # attribute values set through set()
    cdef int _busy  # cuDNN calls in flight with the GIL released: close() refuses while any are
    cdef object __weakref__
    cdef int _check_open(self) except -1


cdef int raise_status(cudnnStatus_t status, str function, object descriptor_type=*, object attribute=*) except -1
