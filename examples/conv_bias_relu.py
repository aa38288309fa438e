"""Conv + bias + ReLU, fused: the cuDNN Graph API guide's example, in the three APIs of cudnn-backend.

X 8x64x56x56 fp16 NHWC, W 32x64x3x3, padding 1, bias 1x32x1x1; the conv output and the biased sum are
virtual (fp32, never in memory); Y = ReLU(conv(X, W) + B) is the one output. The three functions build
the same graph; ``main()`` checks that they do (same table, same DOT) and finds a plan for each offline.

    python examples/conv_bias_relu.py
"""
import cudnn_backend as cb
from cudnn_backend import *  # noqa: F401,F403 - every enumerant by its C name, for the generic API

N, C, H, W, K, R, S = 8, 64, 56, 56, 32, 3, 3


def nhwc(n, c, h, w):
    """Channels-last strides of [N, C, H, W], in elements."""
    return [c * h * w, 1, w * c, c]


# [generic]
def generic_api(n=N, c=C, h=H, w=W, k=K):
    """1. The generic API: C names, every call checked against the schema before cuDNN sees it."""
    def tensor(uid, dims, strides, data_type=CUDNN_DATA_HALF, virtual=False):
        t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
        t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid)
        t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, data_type)
        t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims)
        t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides)
        t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 16)
        t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, virtual)
        return t.finalize()

    x = tensor(1, [n, c, h, w], nhwc(n, c, h, w))
    wt = tensor(2, [k, c, R, S], nhwc(k, c, R, S))
    b = tensor(3, [1, k, 1, 1], nhwc(1, k, 1, 1))
    conv_out = tensor(4, [n, k, h, w], nhwc(n, k, h, w), CUDNN_DATA_FLOAT, virtual=True)
    biased = tensor(5, [n, k, h, w], nhwc(n, k, h, w), CUDNN_DATA_FLOAT, virtual=True)
    y = tensor(6, [n, k, h, w], nhwc(n, k, h, w))

    conv = cb.Descriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)
    conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, CUDNN_CROSS_CORRELATION)
    conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 2)
    conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, [1, 1])
    conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, [1, 1])
    conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, [1, 1])
    conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, [1, 1])
    conv.finalize()

    conv_op = cb.Descriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
    conv_op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, x)
    conv_op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, wt)
    conv_op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, conv_out)
    conv_op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, conv)
    conv_op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1.0)
    conv_op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 0.0)
    conv_op.finalize()

    def pointwise(mode, x_desc, y_desc, b_desc=None):
        pw = cb.Descriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR)
        pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode)
        pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
        pw.finalize()
        op = cb.Descriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
        op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, pw)
        op.set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, x_desc)
        if b_desc is not None:
            op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, b_desc)
        op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, y_desc)
        return op.finalize()

    add_op = pointwise(CUDNN_POINTWISE_ADD, conv_out, biased, b)
    relu_op = pointwise(CUDNN_POINTWISE_RELU_FWD, biased, y)

    graph = cb.Descriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, [conv_op, add_op, relu_op])
    return graph.finalize()
# [/generic]


# [typed]
def typed_api(n=N, c=C, h=H, w=W, k=K):
    """2. The typed API: one class per descriptor type, keyword = attribute name minus its prefix."""
    from cudnn_backend.typed import (Convolution, OperationConvolutionForward, OperationGraph,
                                     OperationPointwise, Pointwise, Tensor)

    def tensor(uid, dims, name, data_type=CUDNN_DATA_HALF, virtual=False):
        t = Tensor(unique_id=uid, data_type=data_type, dimensions=dims, strides=nhwc(*dims), byte_alignment=16,
                   is_virtual=virtual)
        t.name = name                      # shown by tables, to_dot() and error messages
        return t.finalize()

    x = tensor(1, [n, c, h, w], "x")
    wt = tensor(2, [k, c, R, S], "w")
    b = tensor(3, [1, k, 1, 1], "b")
    conv_out = tensor(4, [n, k, h, w], "conv_out", CUDNN_DATA_FLOAT, virtual=True)
    biased = tensor(5, [n, k, h, w], "biased", CUDNN_DATA_FLOAT, virtual=True)
    y = tensor(6, [n, k, h, w], "y")

    conv = Convolution(comp_type=CUDNN_DATA_FLOAT, conv_mode=CUDNN_CROSS_CORRELATION, spatial_dims=2, pre_paddings=[1, 1],
                       post_paddings=[1, 1], filter_strides=[1, 1], dilations=[1, 1]).finalize()
    conv_op = OperationConvolutionForward(x=x, w=wt, y=conv_out, conv_desc=conv, alpha=1.0, beta=0.0).finalize()
    add = Pointwise(mode=CUDNN_POINTWISE_ADD, math_prec=CUDNN_DATA_FLOAT).finalize()
    add_op = OperationPointwise(pw_descriptor=add, xdesc=conv_out, bdesc=b, ydesc=biased).finalize()
    relu = Pointwise(mode=CUDNN_POINTWISE_RELU_FWD, math_prec=CUDNN_DATA_FLOAT).finalize()
    relu_op = OperationPointwise(pw_descriptor=relu, xdesc=biased, ydesc=y).finalize()
    return OperationGraph(ops=[conv_op, add_op, relu_op]).finalize()
# [/typed]


# [graph]
def graph_api(handle=None, n=N, c=C, h=H, w=W, k=K):
    """3. The Graph builder: shapes inferred, UIDs allocated, intermediates virtual, the graph checked.
    On a GPU pass the ``Handle`` the plans will run with (see "Troubleshooting": ARCH_MISMATCH)."""
    g = cb.Graph("conv_bias_relu")                        # io: half; intermediates and compute: float
    x = g.tensor([n, c, h, w], layout="nhwc", name="x")
    wt = g.tensor([k, c, R, S], layout="nhwc", name="w")
    b = g.tensor([1, k, 1, 1], layout="nhwc", name="b")
    conv_out = g.conv_fwd(x, wt, padding=1, name="conv_out")   # virtual: never written to memory
    biased = g.bias(conv_out, b, name="biased")
    g.relu(biased, output=True, name="y")                 # the one real output
    g.build(handle=handle)                                # checks, then finalizes the OperationGraph
    return g
# [/graph]


def main():
    generic, typed, built = generic_api(), typed_api(), graph_api()
    print(built.table())
    # the typed and Graph versions name their tensors alike: same table, same picture
    assert typed.table() == built.op_graph.table(), "typed and Graph APIs built different graphs"
    assert typed.to_dot("conv_bias_relu") == built.to_dot()
    # and cuDNN itself says the generic one is the same graph
    assert cb.is_same_topology(generic, built.op_graph) and cb.is_same_topology(typed, built.op_graph)
    profile = cb.DeviceProfile.bundled()                  # no GPU needed: heuristics and plans for an H200
    for name, op_graph in (("generic", generic), ("typed", typed), ("Graph", built.op_graph)):
        plan, report = cb.build_first_plan(op_graph, device_profile=profile)
        print(f"{name:8s} API -> {plan}")


if __name__ == "__main__":
    main()
