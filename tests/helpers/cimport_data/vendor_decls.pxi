# The vendor's cudnn.h (which includes cuda_runtime_api.h, cudnn_graph.h, cudnn_ops.h, ...). Only
# names that cudnn_graph.h does not define are declared here, so they cannot clash with the
# cimported ones; cudnnCreateTensorDescriptor is declared but never referenced (nothing links cuDNN).
cdef extern from "cudnn.h" nogil:
    int CUDNN_MAJOR
    int CUDNN_MINOR
    ctypedef struct cudnnTensorStruct
    ctypedef cudnnTensorStruct* cudnnTensorDescriptor_t
    ctypedef enum cudnnSoftmaxAlgorithm_t:
        CUDNN_SOFTMAX_ACCURATE
    ctypedef enum cudnnConvolutionFwdAlgo_t:
        CUDNN_CONVOLUTION_FWD_ALGO_GEMM
    int cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* tensorDesc)
