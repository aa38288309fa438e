/* The least binding of the generic descriptor API, for the graph-build benchmarks: what a Python binding of
 * cudnnBackendCreateDescriptor / SetAttribute / Finalize / DestroyDescriptor costs when it does nothing else.
 *
 *   build_floor.Descriptor(descriptor_type)           cudnnBackendCreateDescriptor (a vectorcall)
 *   d.set(attribute, attribute_type, values)          cudnnBackendSetAttribute (METH_FASTCALL): an int, a float, a
 *                                                     descriptor, a handle (its .ptr) or a list/tuple of them
 *   d.finalize()                                      cudnnBackendFinalize (the GIL held), returns d
 *   collection                                        cudnnBackendDestroyDescriptor
 *
 * It checks nothing (a wrong value reaches cuDNN as it is), keeps no value set on it, and holds only the
 * descriptors set on it (the least a binding must keep alive). Pointers, text and fractions it does not set. The
 * benchmarks run the user code of the generic API over it, unchanged, with `cb` a plain module holding this
 * Descriptor: what of the generic API's ratio to C no binding can remove, and so what is the package's.
 *
 * Build (the benchmarks do): cc -O2 -shared -fPIC build_floor.c -I include -I <Python include> -L<cudnn lib>
 *   -l:libcudnn.so.9 -Wl,-rpath,<cudnn lib> -o build_floor<EXT_SUFFIX> */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>
#include <stdint.h>

#include "cudnn_backend_graph.h"

#define MOST_ELEMENTS 16

typedef struct {
    PyObject_HEAD
    cudnnBackendDescriptor_t raw;
    PyObject *kept; /* the descriptors set on it (a list), or NULL */
} FloorDescriptor;

static PyTypeObject FloorDescriptorType;

static PyObject *refused(const char *call, cudnnStatus_t status) {
    PyErr_Format(PyExc_RuntimeError, "%s: cuDNN status %d", call, (int)status);
    return NULL;
}

static PyObject *floor_new(PyTypeObject *type, cudnnBackendDescriptorType_t descriptor_type) {
    FloorDescriptor *self = (FloorDescriptor *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    cudnnStatus_t status = cudnnBackendCreateDescriptor(descriptor_type, &self->raw);
    if (status != CUDNN_STATUS_SUCCESS) {
        Py_DECREF(self);
        return refused("cudnnBackendCreateDescriptor", status);
    }
    return (PyObject *)self;
}

static PyObject *floor_vectorcall(PyObject *type, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "Descriptor(descriptor_type)");
        return NULL;
    }
    long descriptor_type = PyLong_AsLong(args[0]);
    if (descriptor_type == -1 && PyErr_Occurred()) return NULL;
    return floor_new((PyTypeObject *)type, (cudnnBackendDescriptorType_t)descriptor_type);
}

static PyObject *floor_tp_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    long descriptor_type;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "Descriptor(descriptor_type) takes no keywords");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "l", &descriptor_type)) return NULL;
    return floor_new(type, (cudnnBackendDescriptorType_t)descriptor_type);
}

static void floor_dealloc(FloorDescriptor *self) {
    if (self->raw != NULL) cudnnBackendDestroyDescriptor(self->raw); /* before the children it reads go */
    Py_XDECREF(self->kept);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* One element of a set into data[i] (element size by attribute type). */
static int element(cudnnBackendAttributeType_t type, PyObject *v, char *data, Py_ssize_t i) {
    if (Py_TYPE(v) == &FloorDescriptorType) {
        ((void **)data)[i] = ((FloorDescriptor *)v)->raw;
        return 0;
    }
    if (type == CUDNN_TYPE_HANDLE) {
        PyObject *ptr = PyObject_GetAttrString(v, "ptr");
        if (ptr == NULL) return -1;
        ((void **)data)[i] = PyLong_AsVoidPtr(ptr);
        Py_DECREF(ptr);
        return PyErr_Occurred() ? -1 : 0;
    }
    if (type == CUDNN_TYPE_FLOAT || type == CUDNN_TYPE_DOUBLE) {
        double x = PyFloat_AsDouble(v);
        if (x == -1.0 && PyErr_Occurred()) return -1;
        if (type == CUDNN_TYPE_FLOAT)
            ((float *)data)[i] = (float)x;
        else
            ((double *)data)[i] = x;
        return 0;
    }
    long long x = PyLong_AsLongLong(v);
    if (x == -1 && PyErr_Occurred()) return -1;
    if (type == CUDNN_TYPE_INT64)
        ((int64_t *)data)[i] = x;
    else if (type == CUDNN_TYPE_BOOLEAN)
        ((bool *)data)[i] = x != 0;
    else /* INT32 and the enumerations */
        ((int32_t *)data)[i] = (int32_t)x;
    return 0;
}

/* The descriptors among what was set, kept alive with self (after cuDNN took the set). */
static int keep_children(FloorDescriptor *self, PyObject *values) {
    PyObject *one[1] = {values};
    PyObject **items = one;
    Py_ssize_t n = 1;
    if (PyList_CheckExact(values) || PyTuple_CheckExact(values)) {
        n = PySequence_Fast_GET_SIZE(values);
        items = PySequence_Fast_ITEMS(values);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (Py_TYPE(items[i]) != &FloorDescriptorType) continue;
        if (self->kept == NULL && (self->kept = PyList_New(0)) == NULL) return -1;
        if (PyList_Append(self->kept, items[i]) < 0) return -1;
    }
    return 0;
}

static PyObject *floor_set(FloorDescriptor *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "set(attribute, attribute_type, values)");
        return NULL;
    }
    long attribute = PyLong_AsLong(args[0]);
    if (attribute == -1 && PyErr_Occurred()) return NULL;
    long type = PyLong_AsLong(args[1]);
    if (type == -1 && PyErr_Occurred()) return NULL;
    if (type == CUDNN_TYPE_VOID_PTR || type == CUDNN_TYPE_CHAR || type == CUDNN_TYPE_FRACTION) {
        PyErr_Format(PyExc_TypeError, "attribute_type: %ld is not one the least binding sets", type);
        return NULL;
    }
    PyObject *values = args[2];
    _Alignas(8) char data[MOST_ELEMENTS * 8];
    Py_ssize_t n = 1;
    if (PyList_CheckExact(values) || PyTuple_CheckExact(values)) {
        n = PySequence_Fast_GET_SIZE(values);
        if (n > MOST_ELEMENTS) {
            PyErr_SetString(PyExc_ValueError, "values: too many");
            return NULL;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            if (PySequence_Fast_GET_SIZE(values) != n) { /* an element's conversion ran code that changed it */
                PyErr_SetString(PyExc_RuntimeError, "values: changed size while read");
                return NULL;
            }
            PyObject *item = PySequence_Fast_ITEMS(values)[i];
            Py_INCREF(item);
            int failed = element((cudnnBackendAttributeType_t)type, item, data, i) < 0;
            Py_DECREF(item);
            if (failed) return NULL;
        }
    } else if (element((cudnnBackendAttributeType_t)type, values, data, 0) < 0) {
        return NULL;
    }
    cudnnStatus_t status = cudnnBackendSetAttribute(self->raw, (cudnnBackendAttributeName_t)attribute,
                                                    (cudnnBackendAttributeType_t)type, n, data);
    if (status != CUDNN_STATUS_SUCCESS) return refused("cudnnBackendSetAttribute", status);
    if (keep_children(self, values) < 0) return NULL;
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *floor_finalize(FloorDescriptor *self, PyObject *unused) {
    cudnnStatus_t status = cudnnBackendFinalize(self->raw);
    if (status != CUDNN_STATUS_SUCCESS) return refused("cudnnBackendFinalize", status);
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyMethodDef floor_methods[] = {
    {"set", (PyCFunction)(void (*)(void))floor_set, METH_FASTCALL, "cudnnBackendSetAttribute, nothing checked"},
    {"finalize", (PyCFunction)floor_finalize, METH_NOARGS, "cudnnBackendFinalize"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject FloorDescriptorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "build_floor.Descriptor",
    .tp_basicsize = sizeof(FloorDescriptor),
    .tp_dealloc = (destructor)floor_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The least binding of a cuDNN backend descriptor",
    .tp_methods = floor_methods,
    .tp_new = floor_tp_new,
};

static struct PyModuleDef floor_module = {PyModuleDef_HEAD_INIT, "build_floor", NULL, -1, NULL};

PyMODINIT_FUNC PyInit_build_floor(void) {
    if (PyType_Ready(&FloorDescriptorType) < 0) return NULL;
    FloorDescriptorType.tp_vectorcall = floor_vectorcall; /* after PyType_Ready: Descriptor(t) without a tuple */
    PyObject *module = PyModule_Create(&floor_module);
    if (module == NULL) return NULL;
    Py_INCREF(&FloorDescriptorType);
    if (PyModule_AddObject(module, "Descriptor", (PyObject *)&FloorDescriptorType) < 0) {
        Py_DECREF(&FloorDescriptorType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
