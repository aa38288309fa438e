"""Python floats are set as CUDNN_TYPE_FLOAT where an attribute takes FLOAT or DOUBLE: cuDNN 9.19's convolution
reads a DOUBLE alpha as 0.0 and writes an all-zero output (found by explore's reference check on an H100)."""
import cudnn_backend as cb
from cudnn_backend import AttributeName as A
from cudnn_backend import AttributeType as AT


def test_graph_alphas_and_betas_are_float():
    g = cb.Graph("alphas")
    x = g.tensor([1, 8, 8, 8], layout="nhwc")
    w = g.tensor([8, 8, 3, 3], layout="nhwc")
    y = g.conv_fwd(x, w, padding=1, output=True)
    g.build()
    op = g.operations[0]
    for attr in (A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA):
        assert op.attribute_type_of(attr) == AT.CUDNN_TYPE_FLOAT
    assert y.virtual is False


def test_typed_and_generic_auto_choose_float():
    op = cb.typed.OperationConvolutionForward(alpha=1.0, beta=0.0)
    assert op.attribute_type_of(A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA) == AT.CUDNN_TYPE_FLOAT
    assert cb.core.choose_type(A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, 0.5) == AT.CUDNN_TYPE_FLOAT
    pw = cb.typed.Pointwise(mode=cb.CUDNN_POINTWISE_RELU_FWD, relu_lower_clip_slope=0.01)
    assert pw.attribute_type_of(A.CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE) == AT.CUDNN_TYPE_FLOAT


def test_a_nan_constant_is_refused_as_a_nan_attribute_is():
    """A graph's constant (a scalar, an attention scale, a constant tensor's value) is refused as NaN, as a float
    attribute is: cuDNN takes it and computes NaN. Infinity stays a value (a causal mask's -inf)."""
    import math

    import numpy as np
    import pytest

    from cudnn_backend import patterns
    from cudnn_backend import typed as T
    from cudnn_backend.core.versions import loaded_version

    g = cb.Graph("nan")
    q, k, v = (g.tensor([1, 1, 8, 64]) for _ in range(3))
    nan = r"NaN is not a number cuDNN can compute with; give a real value"
    sdpa = [(lambda: g.sdpa_fwd(q, k, v, attn_scale=math.nan), "attn_scale"),
            (lambda: patterns.sdpa_fwd(attn_scale=float("nan")), "attn_scale")] if loaded_version() >= 91300 else []
    for make, what in (*sdpa,  # (the SDPA_FWD operation: cuDNN 9.13 and later)
                       (lambda: g.scalar(np.float32("nan")), "value"),
                       (lambda: g.scalar(math.nan, name="bias"), "bias"),
                       (lambda: g.scalar(math.nan, data_type="fp8_e8m0"), "value")):  # (E8M0's NaN code too)
        with pytest.raises(ValueError, match=f"^{what}: {nan}"):
            make()
    assert g.scalar(-math.inf).scalar_value == -math.inf
    if loaded_version() >= 92200:  # CUDNN_ATTR_TENSOR_CONSTANT_VALUE: the typed and generic APIs too
        for data_type, value in ((cb.CUDNN_DATA_FLOAT, np.float32("nan")), (cb.CUDNN_DATA_HALF, np.float16("nan")),
                                 (cb.CUDNN_DATA_BFLOAT16, b"\xc0\x7f")):
            t = T.Tensor(unique_id=1, data_type=data_type, dimensions=[1], strides=[1], byte_alignment=16,
                         is_by_value=True, constant_value=value)
            with pytest.raises(ValueError, match=f"CUDNN_ATTR_TENSOR_CONSTANT_VALUE: {nan}"):
                t.finalize()
        T.Tensor(unique_id=1, data_type=cb.CUDNN_DATA_BFLOAT16, dimensions=[1], strides=[1], byte_alignment=16,
                 is_by_value=True, constant_value=b"\x80\x3f").finalize()  # 1.0
