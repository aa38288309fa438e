"""The cuDNN guide's conv + bias + ReLU, built three ways: the generic API (C names), the typed classes and the
Graph builder. Same tensors, same UIDs, same attributes: one computation."""
import cudnn_backend as cb
from cudnn_backend import *  # noqa: F403 - the C names
from cudnn_backend import typed

SIZES = dict(n=1, c=8, h=8, w=8, k=8)


def _nhwc(n, c, h, w):
    return [c * h * w, 1, w * c, c]


def _dims(n=1, c=8, h=8, w=8, k=8):
    return [n, c, h, w], [k, c, 3, 3], [1, k, 1, 1], [n, k, h, w]


def generic(n=1, c=8, h=8, w=8, k=8):
    xd, wd, bd, yd = _dims(n, c, h, w, k)

    def tensor(uid, dims, dt, virtual=False):
        t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
        t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, dt)
        t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims)
        t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, _nhwc(*dims))
        t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid)
        t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 16)
        t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, virtual)
        return t.finalize()

    def pointwise(mode, x, b, y):
        pw = cb.Descriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR)
        pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode)
        pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
        pw.finalize()
        op = cb.Descriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
        op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, pw)
        op.set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, x)
        if b is not None:
            op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, b)
        op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, y)
        return op.finalize()

    x = tensor(1, xd, CUDNN_DATA_HALF)
    wt = tensor(2, wd, CUDNN_DATA_HALF)
    conv_out = tensor(3, yd, CUDNN_DATA_FLOAT, True)
    bias = tensor(4, bd, CUDNN_DATA_HALF)
    biased = tensor(5, yd, CUDNN_DATA_FLOAT, True)
    y = tensor(6, yd, CUDNN_DATA_HALF)
    conv = cb.Descriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)
    conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, CUDNN_CROSS_CORRELATION)
    conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 2)
    conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, [1, 1])
    conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, [1, 1])
    conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, [1, 1])
    conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, [1, 1])
    conv.finalize()
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, x)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, wt)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, conv_out)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, conv)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1.0)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 0.0)
    op.finalize()
    add = pointwise(CUDNN_POINTWISE_ADD, conv_out, bias, biased)
    relu = pointwise(CUDNN_POINTWISE_RELU_FWD, biased, None, y)
    g = cb.Descriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    g.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, [op, add, relu])
    return g.finalize()


def typed_classes(n=1, c=8, h=8, w=8, k=8):
    xd, wd, bd, yd = _dims(n, c, h, w, k)

    def tensor(uid, dims, dt, virtual=False):
        return typed.Tensor(unique_id=uid, data_type=dt, dimensions=dims, strides=_nhwc(*dims), byte_alignment=16,
                            is_virtual=virtual).finalize()

    x, wt = tensor(1, xd, CUDNN_DATA_HALF), tensor(2, wd, CUDNN_DATA_HALF)
    conv_out, bias = tensor(3, yd, CUDNN_DATA_FLOAT, True), tensor(4, bd, CUDNN_DATA_HALF)
    biased, y = tensor(5, yd, CUDNN_DATA_FLOAT, True), tensor(6, yd, CUDNN_DATA_HALF)
    conv = typed.Convolution(comp_type=CUDNN_DATA_FLOAT, conv_mode=CUDNN_CROSS_CORRELATION, spatial_dims=2,
                             pre_paddings=[1, 1], post_paddings=[1, 1], filter_strides=[1, 1],
                             dilations=[1, 1]).finalize()
    op = typed.OperationConvolutionForward(x=x, w=wt, y=conv_out, conv_desc=conv, alpha=1.0, beta=0.0).finalize()
    add = typed.OperationPointwise(
        pw_descriptor=typed.Pointwise(mode=CUDNN_POINTWISE_ADD, math_prec=CUDNN_DATA_FLOAT).finalize(),
        xdesc=conv_out, bdesc=bias, ydesc=biased).finalize()
    relu = typed.OperationPointwise(
        pw_descriptor=typed.Pointwise(mode=CUDNN_POINTWISE_RELU_FWD, math_prec=CUDNN_DATA_FLOAT).finalize(),
        xdesc=biased, ydesc=y).finalize()
    return typed.OperationGraph(ops=[op, add, relu]).finalize()


def graph_builder(n=1, c=8, h=8, w=8, k=8):
    xd, wd, bd, _ = _dims(n, c, h, w, k)
    g = cb.Graph("conv_bias_relu")
    x = g.tensor(xd, layout="nhwc", name="x")
    wt = g.tensor(wd, layout="nhwc", name="w")
    conv_out = g.conv_fwd(x, wt, padding=1, name="conv_out")
    bias = g.tensor(bd, layout="nhwc", name="bias")
    g.relu(g.bias(conv_out, bias, name="biased"), output=True, name="y")
    return g
