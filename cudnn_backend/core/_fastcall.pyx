# cython: language_level=3
"""The positional call in front of a def function, for the few entry points a user calls in a tight loop
(``execute``, ``VariantPack.execute``, ``bind_and_execute``, ``Descriptor.set``).

Cython's argument parsing takes an owned reference to each argument and lays out the keyword names' table on every
call: about a hundred instructions, a tenth of what a launch-bound execute adds to cuDNN's own call. In front of the
def function sits a METH_FASTCALL builtin of the same name, docstring and signature that takes the usual call (the
positional arguments the entry point expects, of the types it expects) itself and hands every other call (keywords,
another count, other types) to the def function as it came, so that errors, keywords and introspection stay the
def function's.
"""
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_RawMalloc
from cpython.object cimport PyObject, PyTypeObject
from libc.string cimport memcpy

cdef extern from "Python.h":
    ctypedef struct PyMethodDef:
        const char* ml_name
        void* ml_meth
        int ml_flags
        const char* ml_doc
    int METH_FASTCALL
    int METH_KEYWORDS
    object PyCFunction_NewEx(PyMethodDef* ml, PyObject* self, object module)
    object PyDescr_NewMethod(PyTypeObject* owner, PyMethodDef* ml)
    object PyObject_Vectorcall(object callable, PyObject** args, size_t nargsf, PyObject* kwnames)
    Py_ssize_t PyTuple_GET_SIZE(PyObject* p)
    void PyType_Modified(PyTypeObject* t)
    ctypedef struct _TypeDict "PyTypeObject":
        PyObject* tp_dict


cdef const char* _kept_text(str text) except NULL:
    """``text`` as UTF-8 in memory never freed: a method table's name and docstring must outlive every builtin made
    from it, and those outlive this module's globals at exit (a bytes object kept in a global would be freed first)."""
    cdef bytes encoded = text.encode()
    cdef char* copy = <char*>PyMem_RawMalloc(len(encoded) + 1)
    if copy == NULL:
        raise MemoryError()
    memcpy(copy, <const char*>encoded, len(encoded) + 1)
    return copy


cdef PyMethodDef* _method_table(object function, PositionalCall call) except NULL:
    """A METH_FASTCALL table running ``call``, named and documented as ``function`` (its ``__text_signature__``
    first, as inspect.signature reads it); never freed, as the builtins made from it."""
    cdef PyMethodDef* ml = <PyMethodDef*>PyMem_RawMalloc(sizeof(PyMethodDef))
    if ml == NULL:
        raise MemoryError()
    signature = getattr(function, "__text_signature__", None)
    doc = (f"{function.__name__}{signature}\n--\n\n" if signature else "") + (function.__doc__ or "")
    ml.ml_name = _kept_text(function.__name__)
    ml.ml_meth = <void*>call
    ml.ml_flags = METH_FASTCALL | METH_KEYWORDS
    ml.ml_doc = _kept_text(doc)
    return ml


cdef object function_in_front(object function, PositionalCall call):
    """The builtin function to bind in ``function``'s place (its module's global of that name); ``call`` hands
    what it does not take to ``call_def(function, ...)``."""
    return PyCFunction_NewEx(_method_table(function, call), NULL, function.__module__)


cdef object method_in_front(type owner, str name, PositionalCall call):
    """Put a method running ``call`` in ``owner``'s ``name``; returns the def method it replaces, for
    ``call_def``. Subclasses inherit it as any method."""
    cdef PyTypeObject* t = <PyTypeObject*>owner
    cdef PyObject* namespace = (<_TypeDict*>t).tp_dict
    original = (<dict>namespace)[name]
    (<dict>namespace)[name] = PyDescr_NewMethod(t, _method_table(original, call))
    PyType_Modified(t)
    return original


cdef object call_def(object function, PyObject* self, PyObject** args, Py_ssize_t nargs, PyObject* kwnames):
    """The call as it came, to the def function (``self`` NULL) or method (``self`` first): the path of every call
    the positional one does not take."""
    cdef Py_ssize_t i, total = nargs + (0 if kwnames == NULL else PyTuple_GET_SIZE(kwnames))
    cdef PyObject** full
    if self == NULL:
        return PyObject_Vectorcall(function, args, <size_t>nargs, kwnames)
    full = <PyObject**>PyMem_Malloc((total + 1) * sizeof(PyObject*))
    if full == NULL:
        raise MemoryError()
    try:
        full[0] = self
        for i in range(total):
            full[i + 1] = args[i]
        return PyObject_Vectorcall(function, full, <size_t>(nargs + 1), kwnames)
    finally:
        PyMem_Free(full)
