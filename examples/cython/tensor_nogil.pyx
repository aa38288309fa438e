# cython: language_level=3
"""Downstream Cython code on cudnn-backend's declarations: raw cudnnBackend* calls without the GIL, and
raw calls on descriptors made (and owned) by the Python API.

Built by examples/cython_downstream.py (cythonize with ``include_path`` = the folder holding the
cudnn_backend package and ``include_dirs = [cudnn_backend.get_include()]``)."""
from libc.stdint cimport int64_t

from cudnn_backend._bindings.cycudnn cimport *
cimport cudnn_backend._bindings.cycudnn as cy


def make_tensor(int64_t uid, int64_t n, int64_t c, int64_t h, int64_t w):
    """A channels-last half tensor made and finalized with six raw calls, all without the GIL; destroyed
    again. Returns the status of every call (0 = CUDNN_STATUS_SUCCESS)."""
    cdef cudnnBackendDescriptor_t t = NULL
    cdef int64_t dims[4]
    cdef int64_t strides[4]
    cdef int64_t alignment = 16
    cdef cudnnDataType_t dtype = CUDNN_DATA_HALF
    cdef cudnnStatus_t st[7]
    dims[:] = [n, c, h, w]
    strides[:] = [c * h * w, 1, w * c, c]
    with nogil:
        st[0] = cy.cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &t)
        st[1] = cy.cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid)
        st[2] = cy.cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dtype)
        st[3] = cy.cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims)
        st[4] = cy.cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides)
        st[5] = cy.cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment)
        st[6] = cy.cudnnBackendFinalize(t)
        cy.cudnnBackendDestroyDescriptor(t)
    return [<int>s for s in st]


def read_dims(descriptor):
    """The dimensions of a finalized tensor made by the Python API (``Descriptor.ptr`` is its address):
    a raw cudnnBackendGetAttribute. The Python object keeps owning the descriptor."""
    cdef cudnnBackendDescriptor_t t = <cudnnBackendDescriptor_t><size_t>descriptor.ptr
    cdef int64_t dims[8]
    cdef int64_t count = 0
    cdef cudnnStatus_t st
    with nogil:
        st = cy.cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 8, &count, dims)
    if st != CUDNN_STATUS_SUCCESS:
        raise RuntimeError(f"cudnnBackendGetAttribute failed with status {<int>st}")
    return [dims[i] for i in range(count)]
