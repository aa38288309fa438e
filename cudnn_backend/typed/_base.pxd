# Hand-written bases of the generated typed classes (see _base.pyx); _classes.pyx cimports them.
from cudnn_backend.core._descriptor cimport Descriptor
from cudnn_backend.typed._signature cimport TensorSignature


cdef class TypedDescriptor(Descriptor):
    cdef object _present(self, int attr, int atype, int kind, object enum_cls, bint single)
    cdef int _unknown_keywords(self, dict unknown) except -1


cdef class TensorBase(TypedDescriptor):
    cdef public object name_           # the display name given (None: core.names.default_tensor_name)
    cdef public object scalar_value    # a by-value tensor's value, bound into variant packs by default
    cdef public bint allow_unconsumed  # a virtual output nothing reads, on purpose
    cdef TensorSignature _signature    # kept once finalized
    cpdef TensorSignature signature(self)


cdef class OperationGraphBase(TypedDescriptor):
    pass
