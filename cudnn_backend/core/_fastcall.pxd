# The positional call in front of a def function (see _fastcall.pyx): the few entry points a loop calls (execute,
# Descriptor.set) take their usual positional form without Cython's argument parsing; any other call goes to the def.
from cpython.object cimport PyObject

# What runs a call: the builtin's self (the module, or the method's object), the positional arguments then the
# keyword values, their count, the keyword names (NULL: none). Returns the result, or NULL with an exception set.
ctypedef object (*PositionalCall)(PyObject* self, PyObject** args, Py_ssize_t nargs, PyObject* kwnames)

cdef object function_in_front(object function, PositionalCall call)
cdef object method_in_front(type owner, str name, PositionalCall call)
cdef object call_def(object function, PyObject* self, PyObject** args, Py_ssize_t nargs, PyObject* kwnames)
