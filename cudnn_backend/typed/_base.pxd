# Hand-written bases of the generated typed classes (see _base.pyx); _classes.pyx cimports them.
from cudnn_backend.core._descriptor cimport Descriptor


cdef class TypedDescriptor(Descriptor):
    cdef object _present(self, int attr, int atype, int kind, object enum_cls, bint single)
    cdef int _unknown_keywords(self, dict unknown) except -1


cdef class TensorBase(TypedDescriptor):
    cdef public object name_           # the display name given (None: "t<uid>")
    cdef public object scalar_value    # a by-value tensor's value, bound into variant packs by default
    cdef public bint allow_unconsumed  # a virtual output nothing reads, on purpose
    cdef tuple _signature              # (uid, dims, strides, data type, virtual, by value) once finalized
    cpdef tuple signature(self)


cdef class OperationGraphBase(TypedDescriptor):
    pass
