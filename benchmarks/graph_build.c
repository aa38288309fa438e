/* The C baseline for graph construction (CPU only, no GPU needed): build and finalize the small
 * conv + bias + ReLU operation graph of the graph-build benchmark, the way a C programmer writes it.
 *
 *   X 1x8x8x8 fp16 NHWC, W 8x8x3x3 fp16 NHWC, padding 1, bias [1,8,1,1], ReLU -> Y 1x8x8x8 fp16
 *   6 tensors (two virtual fp32), a convolution descriptor, 2 pointwise descriptors, 3 operations
 *   and the operation graph: 13 descriptors, each created, set, finalized and destroyed.
 *
 * As a program it prints one JSON line: the median of 7 batches of microseconds per graph, and each
 * batch. As a shared library (-shared -fPIC) it exports graph_build_batch(iterations) -> microseconds
 * per graph, so a benchmark can alternate C and Python batches in one process, on one cuDNN.
 * Build: cc -O2 graph_build.c -I include -L<cudnn lib> -l:libcudnn.so.9 -Wl,-rpath,<cudnn lib>
 * (include/cudnn_backend_graph.h stands in for cudnn_graph.h, so no CUDA headers are needed). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cudnn_backend_graph.h"

#define CHECK(call)                                                                              \
    do {                                                                                         \
        cudnnStatus_t s_ = (call);                                                               \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                                        \
            char msg_[1024];                                                                     \
            cudnnGetLastErrorString(msg_, sizeof msg_);                                          \
            fprintf(stderr, "%s:%d %s -> %d %s\n", __FILE__, __LINE__, #call, (int)s_, msg_);    \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

#define BATCHES 7

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t t) {
    cudnnBackendDescriptor_t d;
    CHECK(cudnnBackendCreateDescriptor(t, &d));
    return d;
}

static cudnnBackendDescriptor_t tensor(int64_t uid, const int64_t *dims, const int64_t *strides,
                                       cudnnDataType_t dt, int virtual_) {
    cudnnBackendDescriptor_t t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t alignment = 16;
    bool v = virtual_ != 0;
    CHECK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt));
    CHECK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims));
    CHECK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides));
    CHECK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
    CHECK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment));
    if (v) CHECK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &v));
    CHECK(cudnnBackendFinalize(t));
    return t;
}

static cudnnBackendDescriptor_t pointwise_op(cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t x,
                                             cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t y,
                                             cudnnBackendDescriptor_t *pw_out) {
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    CHECK(cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode));
    CHECK(cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec));
    CHECK(cudnnBackendFinalize(pw));
    cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    CHECK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw));
    CHECK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x));
    if (b) CHECK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b));
    CHECK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y));
    CHECK(cudnnBackendFinalize(op));
    *pw_out = pw;
    return op;
}

/* One whole graph: build, finalize, destroy every descriptor. */
static void build_graph(void) {
    const int64_t xd[4] = {1, 8, 8, 8}, xs[4] = {512, 1, 64, 8};
    const int64_t wd[4] = {8, 8, 3, 3}, ws[4] = {72, 1, 24, 8};
    const int64_t bd[4] = {1, 8, 1, 1}, bs[4] = {8, 1, 8, 8};
    cudnnBackendDescriptor_t all[13];
    int n = 0;
    cudnnBackendDescriptor_t x = all[n++] = tensor(1, xd, xs, CUDNN_DATA_HALF, 0);
    cudnnBackendDescriptor_t w = all[n++] = tensor(2, wd, ws, CUDNN_DATA_HALF, 0);
    cudnnBackendDescriptor_t b = all[n++] = tensor(3, bd, bs, CUDNN_DATA_HALF, 0);
    cudnnBackendDescriptor_t conv_out = all[n++] = tensor(4, xd, xs, CUDNN_DATA_FLOAT, 1);
    cudnnBackendDescriptor_t biased = all[n++] = tensor(5, xd, xs, CUDNN_DATA_FLOAT, 1);
    cudnnBackendDescriptor_t y = all[n++] = tensor(6, xd, xs, CUDNN_DATA_HALF, 0);

    cudnnBackendDescriptor_t conv = all[n++] = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    int64_t nsp = 2, pad[2] = {1, 1}, one[2] = {1, 1};
    CHECK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp));
    CHECK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
    CHECK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &nsp));
    CHECK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad));
    CHECK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad));
    CHECK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, one));
    CHECK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one));
    CHECK(cudnnBackendFinalize(conv));

    cudnnBackendDescriptor_t cop = all[n++] = make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    float alpha = 1.0f, beta = 0.0f;
    CHECK(cudnnBackendSetAttribute(cop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x));
    CHECK(cudnnBackendSetAttribute(cop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w));
    CHECK(cudnnBackendSetAttribute(cop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv_out));
    CHECK(cudnnBackendSetAttribute(cop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv));
    CHECK(cudnnBackendSetAttribute(cop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha));
    CHECK(cudnnBackendSetAttribute(cop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta));
    CHECK(cudnnBackendFinalize(cop));

    cudnnBackendDescriptor_t pw_add, pw_relu;
    cudnnBackendDescriptor_t add = pointwise_op(CUDNN_POINTWISE_ADD, conv_out, b, biased, &pw_add);
    cudnnBackendDescriptor_t relu = pointwise_op(CUDNN_POINTWISE_RELU_FWD, biased, NULL, y, &pw_relu);
    all[n++] = pw_add;
    all[n++] = add;
    all[n++] = pw_relu;
    all[n++] = relu;

    cudnnBackendDescriptor_t ops[3] = {cop, add, relu};
    cudnnBackendDescriptor_t graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    CHECK(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 3, ops));
    CHECK(cudnnBackendFinalize(graph));
    CHECK(cudnnBackendDestroyDescriptor(graph));
    for (int i = 0; i < n; i++) CHECK(cudnnBackendDestroyDescriptor(all[i]));
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double graph_build_batch(int iters) {
    double t0 = now_us();
    for (int i = 0; i < iters; i++) build_graph();
    return (now_us() - t0) / iters;
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    double warm_until = now_us() + 500e3; /* half a second of warm-up, as the Python side gets */
    while (now_us() < warm_until) build_graph();
    double batches[BATCHES], sorted[BATCHES];
    for (int r = 0; r < BATCHES; r++) {
        double t0 = now_us();
        for (int i = 0; i < iters; i++) build_graph();
        batches[r] = sorted[r] = (now_us() - t0) / iters;
    }
    qsort(sorted, BATCHES, sizeof(double), cmp);
    printf("{\"build_graph_us\": %.3f, \"batches_us\": [", sorted[BATCHES / 2]);
    for (int r = 0; r < BATCHES; r++) printf("%s%.3f", r ? ", " : "", batches[r]);
    printf("], \"iterations\": %d, \"cudnn_version\": %zu}\n", iters, cudnnGetVersion());
    return 0;
}
