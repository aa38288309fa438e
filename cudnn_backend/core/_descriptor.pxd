# Descriptor (see _descriptor.pyx): a Resource whose raw pointer is a cudnnBackendDescriptor_t, checked against the
# schema's C tables. Downstream Cython code (the typed classes, the variant packs, the Graph builder) cimports it.
from libc.stdint cimport int64_t, uint64_t
from cudnn_backend.core._resource cimport Resource as _Resource  # (the name Resource: re-exported in Python)
from cudnn_backend.core._tables cimport AttrSpec


cdef class Descriptor(_Resource):
    cdef int _dtype
    cdef bint _finalized
    # The one ownership field: one slot per attribute of the descriptor's type (schema order), holding the
    # value as set (child descriptors, the handle, host-data copies included) or None.
    cdef list _vals
    cdef object _read_from               # the descriptor this one was read from (get), kept alive with it
    cdef dict _atypes                    # attribute -> attribute type, for attributes set with a non-default type
    cdef uint64_t _mask                  # the attributes set, one bit each (their index among the type's attributes)

    cdef int _create(self, int dtype) except -1
    cdef AttrSpec* _attr_spec(self, int attr, int atype) except NULL
    cdef int _set(self, int attr, int atype, object values) except -1
    cdef int _set_checked(self, int attr, int atype, object values) except -1
    cdef int _set_auto(self, int attr, object values) except -1
    cdef object _value(self, int attr)
    cdef bint _has(self, int attr)
    cdef list _items(self)
    cdef tuple _get_spec(self, object attribute, object attribute_type)
    cdef int64_t _count(self, int attr, int atype) except -1
    cdef int _read_back(self) except -1
    cdef object _finalize(self, bint check_required)  # finalize() without the Python call
    cdef int _check_required(self) except -1


cpdef list tensor_slots_of(Descriptor op)  # (also a C call, for the Graph builder's operations)
