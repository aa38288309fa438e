"""Block-scale quantize and dequantize in the Graph builder, offline with the real cuDNN: the scale tensor of the
F8_128x4 layout (tiles of 128 x 4 scales) in whole tiles, as cuDNN requires (9.19 and 9.28 refuse any other for
quantize; 9.28 for dequantize, where 9.19 takes an unpadded one), and the default layout by x's rank."""
import pytest

import cudnn_backend as cb
from cudnn_backend._bindings.enums import DataType, TensorReordering
from cudnn_backend.core import is_available
from cudnn_backend.core.families.quantize import f8_128x4_scale
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import Graph
from cudnn_backend.patterns import block_scale_dequantize_matmul

pytestmark = pytest.mark.skipif(not is_available("CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR"),
                                reason="block-scale operations need cuDNN 9.7")

F8_128X4 = TensorReordering.CUDNN_TENSOR_REORDERING_F8_128x4
NONE = TensorReordering.CUDNN_TENSOR_REORDERING_NONE
E4M3, E8M0 = DataType.CUDNN_DATA_FP8_E4M3, DataType.CUDNN_DATA_FP8_E8M0


def quantize(dims, strides=None, **kwargs):
    g = Graph("quantize", io_data_type="bfloat16")
    x = g.tensor(dims, strides, name="x")
    return g, g.block_scale_quantize(x, **kwargs)["scale"]


def layout(t):
    return [list(t.shape), list(t.signature().strides), TensorReordering(t.get_keyword("reordering_mode"))]


@pytest.mark.parametrize("dims, strides, axis, expected", [
    ([1, 100, 64], None, -1, ([1, 128, 4], [512, 4, 1])),  # 100 rows -> 128, 2 blocks -> 4
    ([3, 100, 64], None, -1, ([3, 128, 4], [512, 4, 1])),
    ([1, 256, 256], None, -1, ([1, 256, 8], [2048, 8, 1])),  # whole tiles already
    ([1, 64, 100], [6400, 1, 64], 1, ([1, 4, 128], [512, 1, 4])),  # blocks along the rows, x column-major
])
def test_quantize_makes_the_f8_128x4_scale_in_whole_tiles(dims, strides, axis, expected):
    g, scale = quantize(dims, strides, axis=axis)
    assert layout(scale) == [*expected, F8_128X4]
    assert list(f8_128x4_scale(dims, axis % 3, 32)) == list(expected)
    assert g.build().finalized  # cuDNN refuses the unpadded scale (BAD_PARAM_SHAPE_MISMATCH)


def test_quantize_along_an_axis_cuDNN_does_not_block_is_refused_naming_it():
    # cuDNN blocks x's innermost axis in the F8_128x4 layout: a scale shaped for another would be refused by it
    with pytest.raises(GraphError, match=r"^axis: F8_128x4 scales block x's innermost axis, 2 for x \(uid 1\) "
                                         r"\[1, 64, 100\] strides \[6400, 100, 1\].*not axis 1"):
        quantize([1, 64, 100], axis=1)
    # ... before its size: the batch axis of [2, 64, 128] is no multiple of 32 either, but no size would do there
    with pytest.raises(GraphError, match=r"^axis: F8_128x4 scales block x's innermost axis, 2 .*not axis 0"):
        quantize([2, 64, 128], axis=0)


@pytest.mark.parametrize("dims, axis, expected", [([100, 64], -1, [100, 2]), ([2, 100, 64, 1], 2, [2, 100, 2, 1])])
def test_quantize_of_other_ranks_keeps_plain_scales(dims, axis, expected):
    # cuDNN takes F8_128x4 scales for 3-d x only
    g, scale = quantize(dims, axis=axis)
    assert layout(scale)[0] == expected and layout(scale)[2] == NONE
    assert g.build().finalized


def dequantize(scale_dims, scale_strides, x_dims=(1, 100, 64)):
    g = Graph("dequantize", io_data_type="bfloat16")
    x = g.tensor(list(x_dims), data_type=E4M3, name="x")
    scale = g.tensor(scale_dims, scale_strides, E8M0, name="scale", reordering_mode=F8_128X4)
    g.block_scale_dequantize(x, scale, block_size=[1, 32], output=True)
    return g


def test_dequantize_takes_an_f8_128x4_scale_in_whole_tiles_only():
    assert dequantize([1, 128, 4], [512, 4, 1]).build().finalized
    assert dequantize([1, 128, 4], [512, 4, 1], x_dims=(3, 100, 64)).build().finalized  # batch 1: broadcast
    with pytest.raises(GraphError, match=r"scale_desc \(scale\) has dims \[1, 100, 2\] and strides \[200, 2, 1\], but "
                                         r"the F8_128x4 scale of x \[1, 100, 64\] in blocks \[1, 1, 32\] has dims "
                                         r"\[1, 128, 4\] and strides \[512, 4, 1\]"):
        dequantize([1, 100, 2], [200, 2, 1])  # 9.19 would finalize it
    with pytest.raises(GraphError, match=r"has dims \[1, 128, 4\] and strides \[512, 1, 128\]"):
        dequantize([1, 128, 4], [512, 1, 128])


@pytest.mark.parametrize("name", ["f8_128x4", "F8_128X4", "CUDNN_TENSOR_REORDERING_F8_128x4", F8_128X4])
def test_reordering_is_read_in_any_case_and_a_layout_of_the_wrong_rank_is_named(name):
    g, scale = quantize([1, 256, 256], reordering=name)
    assert layout(scale)[2] == F8_128X4
    with pytest.raises(GraphError, match=r"^reordering: cuDNN quantizes a 3-d x with F8_128x4 scales only, and another "
                                         r"rank without them; x \[256, 256\] is 2-d"):
        quantize([256, 256], reordering=name)
    with pytest.raises(GraphError, match=r"x \[1, 256, 256\] is 3-d, so not CUDNN_TENSOR_REORDERING_NONE"):
        quantize([1, 256, 256], reordering="none")


@pytest.mark.parametrize("sizes", [dict(m=100), dict(k=96), dict(n=64), dict()])
def test_the_dequantize_matmul_pattern_pads_its_f8_128x4_scales(sizes):
    p = block_scale_dequantize_matmul(reordering="f8_128x4", **sizes)  # builds: the finalize check passes
    m, n, k = (sizes.get(key, 256) for key in ("m", "n", "k"))
    assert [layout(p.a_scale)[0], layout(p.b_scale)[0]] == [f8_128x4_scale([1, m, k], 2, 32)[0],
                                                            f8_128x4_scale([1, k, n], 1, 32)[0]]


def plain_dequantize(scale_dims, x_dims=(1, 256, 256), block_size=(1, 32)):
    g = Graph("dequantize", io_data_type="bfloat16")
    x = g.tensor(list(x_dims), data_type=E4M3, name="x")
    scale = g.tensor(scale_dims, data_type=E8M0, name="scale")
    g.block_scale_dequantize(x, scale, block_size=list(block_size), output=True)
    return g


@pytest.mark.parametrize("scale_dims", [[1, 256, 16], [1, 256, 1], [1, 128, 8], [1, 1, 1], [256, 8]])
def test_a_plain_scale_of_other_than_one_per_block_is_refused(scale_dims):
    # cuDNN plans a larger one and finds no engine for a smaller one, naming neither
    with pytest.raises(GraphError, match=r"scale_desc \(scale\) has dims .*, but x \[1, 256, 256\] in blocks "
                                         r"\[1, 1, 32\] has one scale a block: dims \[1, 256, 8\]$"):
        plain_dequantize(scale_dims)


def test_a_plain_scale_of_one_per_block_or_a_batch_of_one_is_taken():
    assert plain_dequantize([1, 256, 8]).build().finalized
    assert plain_dequantize([1, 256, 8], x_dims=(3, 256, 256)).build().finalized  # batch 1: broadcast
    assert plain_dequantize([1, 8, 256], block_size=(32, 1)).build().finalized
    with pytest.raises(GraphError, match=r"x \[1, 256, 100\] is no whole number of blocks \[1, 1, 32\]"):
        plain_dequantize([1, 256, 4], x_dims=(1, 256, 100))
