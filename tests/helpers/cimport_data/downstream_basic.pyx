# cython: language_level=3
"""A downstream module built on cudnn_backend's raw declarations alone (no vendor header).

Compiled by tests/test_cimport.py, once as is and once with the CUDA runtime headers on the
include path (copied to downstream_basic_cudart.pyx), then imported and run in a subprocess.
"""
from cudnn_backend._bindings.cycudnn cimport *
cimport cudnn_backend._bindings.cycudnn as cy

# Enumerants newer than the installed cuDNN 9.19, used only as compile-time constants: they prove
# the declarations follow the 9.28 header, whatever library is loaded at run time.
cdef cudnnBackendAttributeType_t _TYPE_RETENTION = CUDNN_TYPE_CUDA_GRAPH_RETENTION
cdef cudnnBackendAttributeName_t _ATTR_RETENTION = CUDNN_ATTR_EXECUTION_PLAN_CUDA_GRAPH_RETENTION
cdef cudnnCudaGraphRetention_t _RETENTION_NONE = CUDNN_CUDA_GRAPH_RETENTION_NONE
cdef cudnnDataType_t _FP8_E5M3 = CUDNN_DATA_FP8_E5M3


def newer_enumerants():
    return {
        "CUDNN_TYPE_CUDA_GRAPH_RETENTION": <int>_TYPE_RETENTION,
        "CUDNN_ATTR_EXECUTION_PLAN_CUDA_GRAPH_RETENTION": <int>_ATTR_RETENTION,
        "CUDNN_CUDA_GRAPH_RETENTION_NONE": <int>_RETENTION_NONE,
        "CUDNN_DATA_FP8_E5M3": <int>_FP8_E5M3,
    }


def header_version():
    return (CUDNN_BACKEND_HEADER_MAJOR, CUDNN_BACKEND_HEADER_MINOR, CUDNN_BACKEND_HEADER_PATCH)


def run():
    cdef size_t version
    cdef cudnnBackendDescriptor_t desc = NULL
    cdef cudnnStatus_t create_status
    cdef cudnnStatus_t destroy_status = CUDNN_STATUS_NOT_INITIALIZED
    cdef bint created = False
    with nogil:
        version = cy.cudnnGetVersion()
        create_status = cy.cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &desc)
        if create_status == CUDNN_STATUS_SUCCESS:
            created = desc != NULL
            destroy_status = cudnnBackendDestroyDescriptor(desc)  # the star-cimported name
    return {
        "version": version,
        "create_status": <int>create_status,
        "created": created,
        "destroy_status": <int>destroy_status,
        "newer_enumerants": newer_enumerants(),
        "header_version": header_version(),
    }
