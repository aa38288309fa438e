# TensorSignature (see _signature.pyx); _base.pyx and graph/_core.pyx cimport it to make and read signatures in C.

cdef class TensorSignature:
    cdef readonly object uid          # CUDNN_ATTR_TENSOR_UNIQUE_ID (-1: unset)
    cdef readonly tuple dims
    cdef readonly tuple strides
    cdef readonly object data_type    # the value set (a DataType or an int; None: unset)
    cdef readonly bint virtual
    cdef readonly bint by_value
    cdef int _fill(self, object uid, object dims, object strides, object data_type, object virtual,
                   object by_value) except -1
    cpdef bint same_tensor(self, TensorSignature other)


cdef TensorSignature make_signature(object uid, object dims, object strides, object data_type, object virtual,
                                    object by_value)
