"""The pointwise broadcast check has a fast path in C (``_pointwise_broadcast_ok``) that accepts the common case
and leaves everything else to ``core.families.pointwise.check_pointwise``: whatever the shapes, finalize must refuse exactly
what the Python check refuses (the fast path may never accept a shape cuDNN would write out of bounds)."""
from hypothesis import given, settings
from hypothesis import strategies as st

import cudnn_backend as cb
from cudnn_backend import *  # noqa: F403 - the C names
from cudnn_backend.core.families.pointwise import check_pointwise
from cudnn_backend.errors import CudnnError, GraphError


def _tensor(uid, dims):
    t = cb.Descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims)
    strides, s = [], 1
    for d in reversed(dims):
        strides.insert(0, s)
        s *= d
    t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides)
    t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid)
    t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 16)
    return t.finalize()


def _op(x_dims, b_dims, y_dims):
    pw = cb.Descriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR)
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, CUDNN_POINTWISE_ADD if b_dims else CUDNN_POINTWISE_RELU_FWD)
    pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
    pw.finalize()
    op = cb.Descriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, pw)
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, _tensor(1, x_dims))
    if b_dims:
        op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, _tensor(2, b_dims))
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, _tensor(3, y_dims))
    return op


@st.composite
def _shapes(draw):
    rank = draw(st.integers(1, 5))
    dim = st.sampled_from([1, 2, 3, 4])
    x = draw(st.lists(dim, min_size=rank, max_size=rank))
    b = draw(st.one_of(st.none(), st.lists(dim, min_size=rank, max_size=rank),
                       st.lists(dim, min_size=1, max_size=5)))  # sometimes another rank
    broadcast = [max(p, q) for p, q in zip(x, b)] if b and len(b) == rank else list(x)
    y = draw(st.one_of(st.just(broadcast), st.lists(dim, min_size=1, max_size=5)))
    return x, b, y


@settings(max_examples=300, deadline=None)
@given(_shapes())
def test_finalize_refuses_exactly_what_the_python_check_refuses(shapes):
    x, b, y = shapes
    op = _op(x, b, y)
    try:
        check_pointwise(op)
        python_refuses = False
    except GraphError:
        python_refuses = True
    try:
        op.finalize()
        refused = False
    except GraphError as e:
        refused = True
        assert "ydesc" in str(e) or "inputs" in str(e)
    except CudnnError:  # cuDNN's own refusal of a shape the check lets through
        refused = False
    assert refused == python_refuses, (x, b, y)


def test_the_accepting_case_and_a_too_small_output():
    assert _op([2, 3, 4, 4], [1, 3, 1, 1], [2, 3, 4, 4]).finalize().finalized
    try:
        _op([2, 3, 4, 4], [1, 3, 1, 1], [2, 1, 4, 4]).finalize()
    except GraphError as e:
        assert "ydesc" in str(e) and "[2, 3, 4, 4]" in str(e)
    else:
        raise AssertionError("a too-small output was accepted")
