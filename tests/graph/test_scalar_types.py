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
