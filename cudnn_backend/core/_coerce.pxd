# Argument coercion: Python values read as the C values cuDNN takes (see _coerce.pyx). The lowest compiled module of
# core: the descriptors, the handles and the operation families' builders read the user's values through it.
from libc.stdint cimport int64_t

cdef str _w(object what)
cdef str _what(int dtype, int attr)
cdef str _dtype_name(int dtype)
cdef str _attr_name(int attr)
cdef int _enum_arg(object value, object enum_cls, str what) except? -1
cdef object _index(object v, object what)
cdef int64_t _int64(object v, object what) except? -1
cdef double _real(object v, object what) except? -1.0
cdef bint _is_int_like(object v)
