# Shared body of downstream_vendor_first.pyx and downstream_ours_first.pyx (included after both
# cudnn.h and the cimports, in whichever order the including file chose).

# Which header supplied the cudnn_graph.h types: the vendor's cudnn_graph.h defines
# CUDNN_GRAPH_MAJOR; cudnn_backend_graph.h does not, and when it comes first the vendor's
# cudnn_graph.h is skipped (same include guard).
cdef extern from *:
    """
    #if defined(CUDNN_GRAPH_MAJOR)
    #define DOWNSTREAM_GRAPH_TYPES_FROM_VENDOR 1
    #else
    #define DOWNSTREAM_GRAPH_TYPES_FROM_VENDOR 0
    #endif
    """
    int DOWNSTREAM_GRAPH_TYPES_FROM_VENDOR


def run():
    cdef cudnnTensorDescriptor_t vendor_tensor = NULL             # cudnn_ops.h type
    cdef cudnnSoftmaxAlgorithm_t softmax = CUDNN_SOFTMAX_ACCURATE  # cudnn_ops.h enum
    cdef cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_GEMM  # cudnn_cnn.h enum
    cdef cudnnDataType_t dtype = CUDNN_DATA_HALF                   # cudnn_graph.h enum, via the .pxd
    cdef size_t version
    cdef cudnnBackendDescriptor_t desc = NULL
    cdef cudnnStatus_t create_status
    cdef cudnnStatus_t destroy_status = CUDNN_STATUS_NOT_INITIALIZED
    with nogil:
        version = cy.cudnnGetVersion()
        create_status = cy.cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &desc)
        if create_status == CUDNN_STATUS_SUCCESS:
            destroy_status = cy.cudnnBackendDestroyDescriptor(desc)
    return {
        "graph_types_from_vendor": bool(DOWNSTREAM_GRAPH_TYPES_FROM_VENDOR),
        "vendor_header_version": (CUDNN_MAJOR, CUDNN_MINOR),
        "backend_header_version": (CUDNN_BACKEND_HEADER_MAJOR, CUDNN_BACKEND_HEADER_MINOR),
        "vendor_tensor_is_null": vendor_tensor == NULL,
        "softmax_accurate": <int>softmax,
        "conv_fwd_algo_gemm": <int>algo,
        "data_half": <int>dtype,
        "version": version,
        "create_status": <int>create_status,
        "destroy_status": <int>destroy_status,
    }
