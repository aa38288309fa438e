"""``Descriptor.set`` has a quick path (plain values of a type the attribute takes, checked in C) and the checked
one (everything else, and every refusal). Whichever path a value takes, the descriptor must end up the same: the
value kept, the attribute type remembered, cuDNN given the same elements; and what one path refuses, the other
refuses too, with the checked path's message."""
import struct

import pytest

import cudnn_backend as cb
from cudnn_backend import *  # noqa: F403 - the C names

from tests.helpers import generic_graphs as gg

OPS = CUDNN_ATTR_OPERATIONGRAPH_OPS
B = CUDNN_TYPE_BACKEND_DESCRIPTOR


def _f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def _pointwise_op(uid_in, uid_out):
    pw = cb.Descriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR)
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, CUDNN_POINTWISE_RELU_FWD)
    pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    pw.finalize()
    dims = [1, 8, 4, 4]
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, B, pw)
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, B, gg.tensor(uid_in, dims, gg.nhwc_strides(*dims)))
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, B, gg.tensor(uid_out, dims, gg.nhwc_strides(*dims)))
    return op.finalize()


@pytest.mark.parametrize("container", [list, tuple])
def test_descriptor_lists_are_kept_as_tuples(container):
    a, b = _pointwise_op(1, 2), _pointwise_op(3, 4)
    graph = cb.Descriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    ops = container([a, b])
    assert graph.set(OPS, B, ops) is graph
    kept = graph.values[OPS]
    assert type(kept) is tuple and kept == (a, b) and kept[0] is a and kept[1] is b
    if container is list:
        ops.append(a)  # the caller's list is not what the descriptor holds
        assert graph.values[OPS] == (a, b)
    graph.finalize()  # cuDNN read both operations (it answers no get of OPS to check them by)
    assert graph.children[OPS] == (a, b)


def test_descriptor_list_longer_than_the_quick_path_takes():
    ops = [_pointwise_op(2 * i + 1, 2 * i + 2) for i in range(10)]  # the quick path stops at 8
    graph = cb.Descriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    graph.set(OPS, B, ops)
    assert graph.values[OPS] == tuple(ops)
    graph.finalize()


def test_descriptor_list_refusals_name_the_element():
    good = _pointwise_op(1, 2)
    open_op = cb.Descriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
    closed = _pointwise_op(3, 4)
    closed.close()
    graph = cb.Descriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    with pytest.raises(ValueError, match=r"element 1 .*not finalized"):
        graph.set(OPS, B, [good, open_op])
    with pytest.raises(ValueError, match=r"element 1 .*closed"):
        graph.set(OPS, B, (good, closed))
    with pytest.raises(TypeError, match=r"takes cudnn_backend.Descriptor objects, not int"):
        graph.set(OPS, B, [good, 7])
    tensor = gg.tensor(9, [1, 8, 4, 4], gg.nhwc_strides(1, 8, 4, 4))
    with pytest.raises(TypeError, match=r"element 0 is a CUDNN_BACKEND_TENSOR_DESCRIPTOR"):
        graph.set(OPS, B, [tensor])
    with pytest.raises(ValueError, match=r"element"):
        graph.set(OPS, B, [])
    assert graph.values == {}  # nothing was kept by the refused sets
    graph.set(OPS, B, [good])
    assert graph.values[OPS] == (good,)


def test_a_single_descriptor_is_kept_as_it_is():
    op = _pointwise_op(1, 2)
    pw = op.values[CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR]
    assert isinstance(pw, cb.Descriptor) and pw.descriptor_type == CUDNN_BACKEND_POINTWISE_DESCRIPTOR


@pytest.mark.parametrize("atype, value, kept", [
    (CUDNN_TYPE_FLOAT, 0.1, _f32(0.1)),   # another type the attribute takes: the quick path too
    (CUDNN_TYPE_DOUBLE, 0.1, 0.1),
    (CUDNN_TYPE_FLOAT, 2, 2.0),           # an int: the checked path converts it
])
def test_alpha_in_either_type_is_remembered(atype, value, kept):
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, atype, value)
    assert op.values[CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA] == kept
    assert op.attribute_type_of(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA) == atype
    other = CUDNN_TYPE_DOUBLE if atype == CUDNN_TYPE_FLOAT else CUDNN_TYPE_FLOAT
    op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, other, 1.0)  # set again: the new type replaces the old
    assert op.attribute_type_of(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA) == other


def test_a_type_the_attribute_does_not_take_is_refused():
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
    with pytest.raises(TypeError, match=r"ALPHA takes attribute type .*not CUDNN_TYPE_INT64"):
        op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_INT64, 1)
    assert op.values == {}


def test_handle_attribute_refusals_are_the_checked_paths():
    graph = cb.Descriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    with pytest.raises(TypeError, match=r"takes a cudnn_backend.Handle, not NoneType"):
        graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, None)
    with pytest.raises(TypeError, match=r"takes a cudnn_backend.Handle, not Descriptor"):
        graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, graph)


def test_values_that_would_be_changed_on_the_way_are_refused():
    import numpy as np
    conv = cb.Descriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
    with pytest.raises(ValueError, match=r"CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA: 1e\+39 does not fit in a "
                                         r"float"):
        conv.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1e39)
    with pytest.raises(ValueError, match="does not fit in a float"):
        conv.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, np.float64(-1e39))
    conv.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, float("inf"))  # inf stays inf
    # NaN: cuDNN takes it and computes NaN; refused on both paths (a Python float takes the fast one)
    pw = cb.Descriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR)
    for atype, attr, nan in ((CUDNN_TYPE_FLOAT, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, float("nan")),
                             (CUDNN_TYPE_FLOAT, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, np.float32("nan")),
                             (CUDNN_TYPE_DOUBLE, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, float("nan")),
                             (CUDNN_TYPE_DOUBLE, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, np.float64("nan"))):
        d = conv if "CONVOLUTION" in attr.name else pw
        before = d.values.get(attr)
        with pytest.raises(ValueError, match=rf"{attr.name}: NaN is not a number cuDNN can compute with"):
            d.set(attr, atype, nan)
        assert d.values.get(attr) == before  # nothing was set
    pw.set(CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_DOUBLE, float("inf"))  # (inf is a clip: no clip)
    t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    with pytest.raises(TypeError, match=r"CUDNN_ATTR_TENSOR_DIMENSIONS: a 2-d array; an attribute takes one value or "
                                        r"a flat sequence"):
        t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, np.ones((2, 2), dtype=np.int64))
    for unordered in ({7, 8}, frozenset({7, 8}), {7: 1, 8: 2}):
        with pytest.raises(TypeError, match=rf"a {type(unordered).__name__} has no order; give a list or tuple"):
            t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, unordered)
    t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, np.array([2, 3]))  # a flat array: taken
    assert t.value_of(CUDNN_ATTR_TENSOR_DIMENSIONS) == (2, 3)
