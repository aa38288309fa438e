"""Descriptors cuDNN fills in (get() of a descriptor-valued attribute) carry the values cuDNN holds, so the checks
that read what was set on a tensor (the 2**32-tile count, the statistics' shapes) check them as they check tensors
set by hand: they took a read-back tensor's dims for unknown and checked nothing (cuDNN 9.28.1 then divided by zero
in a conv's engine config, and norm plans were built that write past their statistics)."""
import pytest

import cudnn_backend as cb
from cudnn_backend import typed as ty
from cudnn_backend.errors import GraphError

H, F = "CUDNN_DATA_HALF", "CUDNN_DATA_FLOAT"


def _tensor(uid, dims, data_type=H, **kw):
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * dims[i + 1]
    return ty.Tensor(unique_id=uid, data_type=data_type, dimensions=dims, strides=strides, byte_alignment=16,
                     **kw).finalize()


def _read_back(uid, dims, data_type=H):
    """A tensor of ``dims`` as cuDNN gives it back: the X of a finalized reduction."""
    op = ty.OperationReduction(xdesc=_tensor(uid, dims, data_type), ydesc=_tensor(uid + 1000, [1] * len(dims), F),
                               desc=ty.Reduction(operator="CUDNN_REDUCE_TENSOR_ADD", comp_type=F).finalize()).finalize()
    return op.get("CUDNN_ATTR_OPERATION_REDUCTION_XDESC", "CUDNN_TYPE_BACKEND_DESCRIPTOR")[0]


def test_a_read_back_tensor_has_the_values_cudnn_holds():
    t = _read_back(7, [2, 3, 4, 5])
    assert t.finalized and t.read_from is not None
    assert t.value_of("CUDNN_ATTR_TENSOR_DIMENSIONS") == (2, 3, 4, 5)
    assert t.value_of("CUDNN_ATTR_TENSOR_STRIDES") == (60, 20, 5, 1)
    assert t.value_of("CUDNN_ATTR_TENSOR_UNIQUE_ID") == 7
    assert int(t.value_of("CUDNN_ATTR_TENSOR_DATA_TYPE")) == int(cb.DataType.CUDNN_DATA_HALF)
    assert t.value_of("CUDNN_ATTR_TENSOR_IS_VIRTUAL") is False
    assert t.value_of("CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT") is None  # cuDNN does not give it back: unknown, not 0


def test_read_back_statistics_too_small_are_refused_as_set_ones_are():
    x = [8, 64, 16, 16]
    with pytest.raises(GraphError, match=r"mean_desc .* has dims \[1, 1, 1, 1\] but must be \[1, 64, 1, 1\]"):
        ty.OperationNormForward(mode="CUDNN_BATCH_NORM", phase="CUDNN_NORM_FWD_TRAINING", xdesc=_tensor(1, x),
                                ydesc=_tensor(2, x), scale_desc=_tensor(3, [1, 64, 1, 1], F),
                                bias_desc=_tensor(4, [1, 64, 1, 1], F),
                                epsilon_desc=_tensor(5, [1, 1, 1, 1], F, is_by_value=True),
                                mean_desc=_read_back(6, [1, 1, 1, 1], F),
                                inv_variance_desc=_read_back(8, [1, 1, 1, 1], F)).finalize()


def test_a_read_back_tensor_of_2_to_the_32_positions_is_refused_before_cudnn_divides_by_zero():
    conv = ty.Convolution(spatial_dims=2, comp_type=F, conv_mode="CUDNN_CROSS_CORRELATION", pre_paddings=[0, 0],
                          post_paddings=[0, 0], filter_strides=[1, 1], dilations=[1, 1]).finalize()
    x, y = _read_back(1, [65536, 8, 256, 256]), _read_back(2, [65536, 8, 256, 256])
    with pytest.raises(GraphError, match=r"within 1024 of a multiple of 2\^32"):
        ty.OperationConvolutionForward(x=x, w=_tensor(3, [8, 8, 1, 1]), y=y, conv_desc=conv, alpha=1.0,
                                       beta=0.0).finalize()


def test_a_typed_class_of_another_descriptor_type_is_refused_as_cls():
    op = ty.OperationReduction(xdesc=_tensor(1, [2, 3], F), ydesc=_tensor(2, [1, 1], F),
                               desc=ty.Reduction(operator="CUDNN_REDUCE_TENSOR_ADD", comp_type=F).finalize()).finalize()
    assert type(op.get("CUDNN_ATTR_OPERATION_REDUCTION_XDESC", "CUDNN_TYPE_BACKEND_DESCRIPTOR", cls=ty.Tensor)[0]) \
        is ty.Tensor
    with pytest.raises(TypeError, match=r"^cls: Engine wraps CUDNN_BACKEND_ENGINE_DESCRIPTOR descriptors, but "
                                        r".*XDESC gives CUDNN_BACKEND_TENSOR_DESCRIPTOR ones$"):
        op.get("CUDNN_ATTR_OPERATION_REDUCTION_XDESC", "CUDNN_TYPE_BACKEND_DESCRIPTOR", cls=ty.Engine)
