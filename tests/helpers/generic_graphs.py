"""Graphs built through the generic ``Descriptor.set`` with C names only, as a C programmer would
write them from NVIDIA's reference (no typed layer)."""
from cudnn_backend import *  # noqa: F403 - the C names
import cudnn_backend as cb


def nhwc_strides(n, c, h, w):
    return [c * h * w, 1, w * c, c]


def tensor(uid, dims, strides, data_type=CUDNN_DATA_HALF, virtual=False, alignment=16):
    t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, data_type)
    t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims)
    t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides)
    t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid)
    t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, alignment)
    t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, virtual)
    return t.finalize()


def pointwise_op(mode, x, y, b=None):
    """A finalized pointwise operation ``y = mode(x[, b])``, fp32 math."""
    pw = cb.Descriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR)
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode)
    pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, pw.finalize())
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, x)
    if b is not None:
        op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, b)
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, y)
    return op.finalize()


def convolution(padding=1, stride=1, dilation=1, compute=CUDNN_DATA_FLOAT):
    conv = cb.Descriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)
    conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, compute)
    conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, CUDNN_CROSS_CORRELATION)
    conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 2)
    conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, [padding, padding])
    conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, [padding, padding])
    conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, [stride, stride])
    conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, [dilation, dilation])
    return conv.finalize()


def notebook_conv_graph(n=8, c=64, h=56, w=56, k=32, r=3, s=3):
    """The cudnn-frontend notebook's conv: X 8x64x56x56 fp16 NHWC, W 32x64x3x3, padding 1 -> Y 8x32x56x56."""
    x = tensor(1, [n, c, h, w], nhwc_strides(n, c, h, w))
    wt = tensor(2, [k, c, r, s], nhwc_strides(k, c, r, s))
    y = tensor(3, [n, k, h, w], nhwc_strides(n, k, h, w))
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, x)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, wt)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, y)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, convolution())
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1.0)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 0.0)
    op.finalize()
    graph = cb.Descriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, [op])
    return graph.finalize()


def device_prop(json_text):
    dp = cb.Descriptor(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR)
    dp.set(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, json_text)
    return dp.finalize()


def heuristics(graph, mode, dp=None):
    heur = cb.Descriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)
    heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, graph)
    heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, mode)
    if dp is not None:
        heur.set(CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, CUDNN_TYPE_BACKEND_DESCRIPTOR, dp)
    heur.finalize()
    return heur.get(CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR)


def offline_plan(graph, dp, mode=CUDNN_HEUR_MODE_A):
    """The first config of ``mode`` as an execution plan built against a device profile (no GPU)."""
    plan = cb.Descriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, heuristics(graph, mode, dp)[0])
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, CUDNN_TYPE_BACKEND_DESCRIPTOR, dp)
    return plan.finalize()
