"""Hardening of the Graph builder: hostile sizes and layouts refused naming the parameter, copying and
pickling refused, reductions with default axes and a given output, lone surrogates as names, and the statistics
shapes the builder derives (and refuses when given wrong)."""
import copy
import pickle

import pytest

import cudnn_backend as cb
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import Graph
from cudnn_backend.runtime.heuristics import get_configs
from cudnn_backend.typed import OperationGenStats

from tests.helpers.env import loaded_has
from tests.helpers.offline import h200

FOREIGN = (AttributeError, OverflowError, RecursionError, UnicodeDecodeError, ZeroDivisionError, IndexError,
           MemoryError, UnicodeEncodeError, KeyError, SystemError)


def refused(call, exc, match):
    with pytest.raises(exc, match=match) as info:
        call()
    assert not isinstance(info.value, FOREIGN) or isinstance(info.value, cb.CudnnBackendError), repr(info.value)
    return info.value


class LyingLen:
    def __len__(self):
        return 2 ** 62

    def __iter__(self):
        return iter([2, 2])


class RaisingLen:
    def __len__(self):
        raise OverflowError("len overflows")

    def __iter__(self):
        return iter([2, 2])


class RaisingIter:
    def __iter__(self):
        raise IndexError("iter is broken")


class RaisingIndex:
    def __index__(self):
        raise OverflowError("index overflows")


# ---------------------------------------------------------------------------------------------
# sizes
# ---------------------------------------------------------------------------------------------
def test_mixed_dims_are_refused_naming_the_first_wrong_one():
    refused(lambda: Graph().tensor([8.7, "64", True, 56]), TypeError, r"dims\[0\]: expected an integer, not float")
    refused(lambda: Graph().tensor([8, "64", True, 56]), TypeError, r"dims\[1\]: expected an integer, not str")
    refused(lambda: Graph().tensor([8, 64, True, 56]), TypeError, r"dims\[2\]: expected an integer, not bool")


@pytest.mark.parametrize("what", ["dims", "strides"])
@pytest.mark.parametrize("bad, exc, match", [
    (0, ValueError, r"\[1\] is 0; it must be >= 1"), (-5, ValueError, r"\[1\] is -5; it must be >= 1"),
    (2.0, TypeError, r"\[1\]: expected an integer, not float"), (False, TypeError, r"\[1\]: expected an integer, not bool"),
    ("8", TypeError, r"\[1\]: expected an integer, not str"), (None, TypeError, r"\[1\]: expected an integer"),
    (2 ** 63, ValueError, r"\[1\] is 9223372036854775808; it must be at most"),
    (RaisingIndex(), TypeError, r"\[1\]: cannot read an integer from RaisingIndex"),
])
def test_graph_tensor_refuses_bad_sizes_naming_the_entry(what, bad, exc, match):
    if what == "dims":
        refused(lambda: Graph().tensor([8, bad, 4]), exc, "dims" + match)
    else:
        refused(lambda: Graph().tensor([8, 4, 4], [16, bad, 1]), exc, "strides" + match)


@pytest.mark.parametrize("dims, exc, match", [
    (LyingLen(), ValueError, "dims: 4611686018427387904 entries"), (RaisingLen(), TypeError, r"dims: len\(\) failed"),
    (RaisingIter(), TypeError, "dims: iterating failed"), ([], ValueError, "dims: 0 dims"), ([1] * 9, ValueError, "9 dims"),
    ("1234", TypeError, "dims: expected a sequence of ints, not str"), (5, TypeError, "dims: expected a sequence"),
    ([2 ** 21] * 3, ValueError, "spans 9223372036854775808 elements"),
    ({8, 1, 3}, TypeError, r"^dims: a set is a set or a mapping, not a sequence in the caller's order; pass a list "
                           r"or tuple$"),
    ({2: 1, 3: 1}, TypeError, r"^dims: a dict is a set or a mapping"),
])
def test_graph_tensor_refuses_strange_sequences(dims, exc, match):
    refused(lambda: Graph().tensor(dims), exc, match)


@pytest.mark.parametrize("keyword, value, parameter", [
    ("unique_id", 99, "uid"), ("dimensions", [7, 7], "dims"), ("byte_alignment", 4, "alignment"),
    ("is_virtual", True, "virtual"), ("is_by_value", True, "by_value")])
def test_graph_tensor_refuses_tensor_keywords_it_sets_itself(keyword, value, parameter):
    g = Graph()
    refused(lambda: g.tensor([2, 3], **{keyword: value}), TypeError,
            rf"^{keyword}: Graph.tensor sets it from {parameter}=; pass {parameter}= instead$")
    assert g.tensor([2, 3]).uid == 1  # the refused call took no UID


@pytest.mark.parametrize("keyword", ["virtual", "by_value"])
def test_from_array_takes_only_true_or_false_flags(keyword):
    array = __import__("numpy").zeros((2, 3), "float32")
    refused(lambda: cb.typed.Tensor.from_array(array, **{keyword: "no"}), TypeError,
            rf"^{keyword}: expected True or False, not str$")
    refused(lambda: Graph().from_array(array, **{keyword: "false"}), TypeError, rf"^{keyword}: expected True or False")


def test_layouts():
    refused(lambda: Graph().tensor([8], layout="nhwc"), ValueError, r"layout: 'nhwc' needs \[N, C, spatial...\]")
    refused(lambda: Graph().tensor([8, 4], layout="bshd"), ValueError, "layout: 'bshd' needs")
    refused(lambda: Graph().tensor([8, 4, 2], layout="\ud800"), ValueError, "layout: '\\\\ud800' is not one of")
    refused(lambda: Graph().tensor([8, 4, 2], layout=3), TypeError, "layout: expected a str")
    assert Graph().tensor([2, 3, 4, 5], layout="nhwc").strides == [60, 1, 15, 3]


def test_convolution_with_a_zero_sized_filter_is_refused():
    g = Graph()
    x = g.tensor([8, 64, 56, 56], layout="nhwc")
    refused(lambda: g.conv_fwd(x, g.tensor([32, 0, 3, 3])), ValueError, r"dims\[1\] is 0; it must be >= 1")
    w = g.tensor([32, 64, 3, 3], layout="nhwc")
    for kw, exc, match in ((dict(padding=-1), ValueError, "padding is -1"), (dict(stride=0), ValueError, "stride is 0"),
                           (dict(dilation=1.5), TypeError, "dilation: expected an integer, not float"),
                           (dict(stride=[1, 2, 3]), ValueError, "stride: expected 2 entries, got 3"),
                           (dict(mode="\ud800"), ValueError, "mode: '\\\\ud800' is not a ConvolutionMode"),
                           (dict(padding=2 ** 70), ValueError, "does not fit in 64 bits|at most")):
        refused(lambda: g.conv_fwd(x, w, **kw), exc, match)
    assert len(g.operations) == 0


def test_scalars_and_ranks():
    g = Graph()
    refused(lambda: g.scalar(1.0, rank=0), ValueError, "rank: 0 is below the minimum 1")
    refused(lambda: g.scalar(1.0, rank=9), ValueError, "rank: 9 is above the maximum 8")
    refused(lambda: g.scalar(1.0, rank=2.0), TypeError, "rank: expected an integer, not float")
    refused(lambda: g.tensor([2, 2], uid=1.0), TypeError, "uid: expected an integer, not float")
    refused(lambda: g.tensor([2, 2], data_type="\ud800"), ValueError, "data_type: '\\\\ud800' is not a DataType")
    refused(lambda: g.tensor([2, 2], name=5), TypeError, "name: expected a str")


# ---------------------------------------------------------------------------------------------
# copying, pickling, names
# ---------------------------------------------------------------------------------------------
def test_a_graph_is_not_copied_or_pickled():
    g = Graph("g")
    g.relu(g.tensor([1, 8, 4, 4]), output=True)
    refused(lambda: copy.copy(g), TypeError, "cannot copy a Graph")
    refused(lambda: copy.deepcopy(g), TypeError, "cannot copy a Graph")
    refused(lambda: pickle.dumps(g), TypeError, "cannot pickle a Graph")
    assert g.build().finalized  # untouched by the attempts


def test_lone_surrogates_as_names():
    refused(lambda: Graph(5), TypeError, "name: expected a str")
    g = Graph("\ud800")
    x = g.tensor([1, 8, 4, 4], name="x\ud800")
    g.relu(x, output=True, name="\udfff")
    assert "x\ud800" in g.table() and g.to_dot().startswith('digraph "\ud800"')
    assert g.build().finalized
    with pytest.raises(GraphError, match="x\ud800"):  # the name is carried into messages as it is
        g2 = Graph()
        y = g2.tensor([1, 8, 4, 4], name="x\ud800", virtual=True)
        g2.relu(y, output=True)
        g2.build()


# ---------------------------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------------------------
def test_reduction_with_default_axes_reduces_everything():
    g = Graph("sum_all", io_data_type="float")
    x = g.tensor([8, 64, 4, 4], layout="nhwc", name="x")
    y = g.reduction(x, output=True, output_data_type="float", name="y")
    assert y.shape == (1, 1, 1, 1) and not y.virtual
    og = g.build()
    assert og.finalized and len(get_configs(og, "A", h200(), raise_if_empty=False)) >= 0


def test_reduction_into_a_given_output():
    g = Graph("per_channel_sum", io_data_type="half")
    x = g.tensor([8, 64, 56, 56], layout="nhwc", name="x")
    t = g.tensor([1, 64, 1, 1], layout="nhwc", data_type="float", name="sums")
    assert g.reduction(x, output=t) is t
    og = g.build()
    assert len(get_configs(og, "A", h200())) >= 1  # cuDNN runs it (ADD, full reduction per channel)
    g2 = Graph()
    x2 = g2.tensor([8, 64, 4, 4])
    refused(lambda: g2.reduction(x2, output=g2.tensor([1, 48, 1, 1])), GraphError, "is no reduction of x")
    refused(lambda: g2.reduction(x2, axes=[0, 2], output=g2.tensor([1, 64, 1, 1])), GraphError,
            r"is not x \[8, 64, 4, 4\] reduced over axes \[0, 2\]")
    refused(lambda: g2.reduction(x2, axes=[4]), GraphError, "axis 4 is out of range for 4 dims")
    refused(lambda: g2.reduction(x2, axes=[1.0]), TypeError, r"axes\[0\]: expected an integer, not float")
    refused(lambda: g2.reduction(x2, op="\ud800"), ValueError, "op: ")


# ---------------------------------------------------------------------------------------------
# statistics shapes: derived right by the builder, refused when given wrong
# ---------------------------------------------------------------------------------------------
def test_normalization_statistics_shapes_by_mode():
    g = Graph(io_data_type="half")
    x = g.tensor([8, 64, 16, 16], layout="nhwc")
    sc = g.tensor([1, 64, 1, 1], layout="nhwc", data_type="float")
    b = g.tensor([1, 64, 1, 1], layout="nhwc", data_type="float")
    bn = g.batch_norm(x, sc, b)
    assert bn["mean"].shape == bn["inv_variance"].shape == (1, 64, 1, 1)
    g2 = Graph(io_data_type="half")
    x2 = g2.tensor([8, 64, 16, 16], layout="nhwc")
    inorm = g2.instance_norm(x2, g2.tensor([1, 64, 1, 1], layout="nhwc", data_type="float"),
                             g2.tensor([1, 64, 1, 1], layout="nhwc", data_type="float"))
    assert inorm["mean"].shape == (8, 64, 1, 1)
    g3 = Graph(io_data_type="half")
    x3 = g3.tensor([512, 128, 1, 1], [128, 1, 128, 128])
    ln = g3.layer_norm(x3, g3.tensor([1, 128, 1, 1], [128, 1, 128, 128], "float"),
                       g3.tensor([1, 128, 1, 1], [128, 1, 128, 128], "float"))
    assert ln["mean"].shape == (512, 1, 1, 1)
    for stats in (bn, inorm, ln):
        assert stats["mean"].data_type == cb.CUDNN_DATA_FLOAT
    refused(lambda: g3.layer_norm(x3, g3.tensor([1, 128, 1, 1], [128, 1, 128, 128], "float"),
                                  stats_data_type="half"),
            GraphError, "stats_data_type: CUDNN_DATA_HALF, but .* must be CUDNN_DATA_FLOAT")


def test_gen_stats_added_by_hand_with_wrong_sums_is_refused():
    g = Graph()
    x = g.tensor([4, 256, 16, 16], layout="nhwc", name="y")
    s = g.tensor([1, 32, 1, 1], layout="nhwc", data_type="float", name="sum")
    sq = g.tensor([1, 32, 1, 1], layout="nhwc", data_type="float", name="sqsum")
    op = OperationGenStats(mode="CUDNN_GENSTATS_SUM_SQSUM", math_prec="CUDNN_DATA_FLOAT", xdesc=x, sumdesc=s,
                           sqsumdesc=sq)
    refused(lambda: g.add(op), GraphError, r"sumdesc \(sum\) has dims \[1, 32, 1, 1\] but must be \[1, 256, 1, 1\]")
    assert g.operations == []
    right = g.gen_stats(x)
    assert right["sum"].shape == right["sqsum"].shape == (1, 256, 1, 1)


def test_pointwise_into_a_given_output_of_the_wrong_shape():
    g = Graph()
    x = g.tensor([4, 64, 16, 16], layout="nhwc")
    b = g.tensor([1, 64, 1, 1], layout="nhwc")
    refused(lambda: g.pointwise("ADD", x, b, output=g.tensor([1, 64, 1, 1], layout="nhwc")), GraphError,
            r"should have dims \[4, 64, 16, 16\]")
    refused(lambda: g.pointwise("ADD", x, g.tensor([4, 32, 16, 16], layout="nhwc")), GraphError,
            "do not broadcast at axis 1")


def test_max_pooling_backward_needs_the_index():
    g = Graph()
    dy = g.tensor([2, 8, 4, 4], layout="nhwc")
    refused(lambda: g.resample_bwd(dy, [2, 8, 8, 8], mode="maxpool"), GraphError, "index: max pooling backward needs")


@pytest.mark.parametrize("norm, x_dims, scale_dims, bias_dims, message", [
    # cuDNN 9.10-9.28 build a plan of these and read the scale past its end
    ("batch_norm", [2, 8, 4, 4], [1, 7, 1, 1], [1, 7, 1, 1],
     r"scale_desc \(.*\) has dims \[1, 7, 1, 1\] but must be \[1, 8, 1, 1\] \(one value per channel for "
     r"CUDNN_BATCH_NORM of xdesc \[2, 8, 4, 4\]\); cuDNN would accept it and read out of bounds"),
    ("instance_norm", [2, 8, 4, 4], [1, 7, 1, 1], [1, 7, 1, 1],
     r"scale_desc \(.*\) has dims \[1, 7, 1, 1\] but must be \[1, 8, 1, 1\]"),
    # these cuDNN refuses only as the graph is finalized, naming nothing
    ("layer_norm", [2, 8, 4, 4], [1, 3, 4, 4], [1, 3, 4, 4],
     r"scale_desc \(.*\) has dims \[1, 3, 4, 4\], which do not broadcast to xdesc \[2, 8, 4, 4\] \(each must be 1 "
     r"or xdesc's\) for CUDNN_LAYER_NORM"),
    ("rms_norm", [4, 64, 1, 1], [1, 32, 1, 1], None, r"scale_desc \(.*\) has dims \[1, 32, 1, 1\], which do not"),
    ("layer_norm", [2, 8, 4, 4], [1, 8, 4, 4], [1, 8, 1, 1],
     r"bias_desc \(.*\) has dims \[1, 8, 1, 1\] but must be \[1, 8, 4, 4\] \(the bias has the scale's shape\)"),
])
def test_a_norms_scale_and_bias_must_fit_its_input(norm, x_dims, scale_dims, bias_dims, message):
    g = Graph("n")
    x = g.tensor(x_dims, data_type="half", layout="nhwc")
    affine = [g.tensor(d, data_type="float") for d in (scale_dims, bias_dims) if d is not None]
    with pytest.raises(GraphError, match=message):
        getattr(g, norm)(x, *affine)
        g.build()


def test_a_norms_scale_that_broadcasts_is_taken():
    g = Graph("n")
    x = g.tensor([2, 8, 4, 4], data_type="half", layout="nhwc")
    g.layer_norm(x, g.tensor([1, 8, 4, 4], data_type="float"), g.tensor([1, 8, 4, 4], data_type="float"),
                 output=True)
    g.build()


@pytest.mark.parametrize("wrong, dims, message", [
    ("stats", [1, 2, 1, 1],
     r"stats: .* \[1, 2, 1, 1\] .* is not CUDNN_DATA_FLOAT \[b, h_q, s_q, 1\] = \[1, 2, 16, 1\]"),
    ("stats", [1, 2, 16, 64], r"stats: .* \[1, 2, 16, 64\] .* is not CUDNN_DATA_FLOAT \[b, h_q, s_q, 1\]"),
    ("do", [1, 2, 8, 64], r"do: .* \[1, 2, 8, 64\] .* is not \[b, h_q, s_q, d_v\] = \[1, 2, 16, 64\]"),
])
@pytest.mark.skipif(not loaded_has(cb.core.since_of("CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR")),
                    reason="the loaded cuDNN has no unified SDPA backward")
def test_sdpa_backward_reads_statistics_and_do_of_the_forwards_shapes(wrong, dims, message):
    # cuDNN 9.28.1 builds a plan of each of these (and refuses none of them itself)
    g = Graph("s")
    shapes = dict(q=[1, 2, 16, 64], k=[1, 2, 16, 64], v=[1, 2, 16, 64], o=[1, 2, 16, 64], do=[1, 2, 16, 64])
    shapes[wrong] = dims
    t = {name: g.tensor(d, data_type="half") for name, d in shapes.items() if name != "stats"}
    stats = g.tensor(dims if wrong == "stats" else [1, 2, 16, 1], data_type="float")
    with pytest.raises(GraphError, match=message):
        g.sdpa_bwd(t["q"], t["k"], t["v"], t["o"], t["do"], stats)


@pytest.mark.parametrize("wrong, dims, message", [
    ("stats", [1, 2, 1, 1], r"statsdesc \(.*\) has dims \[1, 2, 1, 1\] but must be \[1, 2, 16, 1\] \(the forward's "
                            r"statistics of qdesc \[1, 2, 16, 64\]\); cuDNN would accept it and misread it"),
    ("stats", [1, 2, 16, 64], r"statsdesc \(.*\) has dims \[1, 2, 16, 64\] but must be \[1, 2, 16, 1\]"),
    ("do", [1, 2, 8, 64], r"doddesc \(.*\) has dims \[1, 2, 8, 64\] but must be \[1, 2, 16, 64\]"),
    ("o", [1, 2, 16, 32], r"odesc \(.*\) has dims \[1, 2, 16, 32\] but must be \[1, 2, 16, 64\] \(the forward's "
                          r"output of qdesc"),
    ("k", [1, 2, 16, 32], r"q \[1, 2, 16, 64\], k \[1, 2, 16, 32\], v \[1, 2, 16, 64\]: batch, head counts"),
    ("stats_half", None, r"statsdesc \(.*\) is CUDNN_DATA_HALF but must be CUDNN_DATA_FLOAT"),
])
@pytest.mark.skipif(not loaded_has(cb.core.since_of("CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR")),
                    reason="the loaded cuDNN has no unified SDPA backward")
def test_sdpa_backward_made_by_hand_is_checked_at_finalize(wrong, dims, message):
    # the finalize check: what the builder refuses by parameter, an operation made by hand is refused by slot
    g = Graph("s")
    shapes = dict(q=[1, 2, 16, 64], k=[1, 2, 16, 64], v=[1, 2, 16, 64], o=[1, 2, 16, 64], do=[1, 2, 16, 64])
    if dims is not None:
        shapes[wrong] = dims
    t = {name: g.tensor(d, data_type="half") for name, d in shapes.items() if name != "stats"}
    stats = g.tensor(dims if wrong == "stats" else [1, 2, 16, 1],
                     data_type="half" if wrong == "stats_half" else "float")
    grads = {f"d{n}desc": g.tensor(t[n].shape, data_type="half") for n in "qkv"}
    op = g._operation("SDPA_BWD", qdesc=t["q"], kdesc=t["k"], vdesc=t["v"], odesc=t["o"], doddesc=t["do"],
                      statsdesc=stats, scaledesc=g.scalar(0.125), **grads)
    with pytest.raises(GraphError, match=message):
        op.finalize()


@pytest.mark.parametrize("stats_dims, data_type, message", [
    ([1, 2, 16, 1], "half", r"statsdesc \(.*\) is CUDNN_DATA_HALF but must be CUDNN_DATA_FLOAT \(cuDNN writes fp32 "
                            r"statistics\); cuDNN would accept it and write past it"),
    ([1, 2, 1, 1], "float", r"statsdesc \(.*\) has dims \[1, 2, 1, 1\] but must be \[1, 2, 16, 1\] \(a row's "
                            r"statistics per query of qdesc \[1, 2, 16, 64\]\); cuDNN would accept it and write out "
                            r"of bounds"),
])
@pytest.mark.skipif(not loaded_has(cb.core.since_of("CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR")),
                    reason="the loaded cuDNN has no unified SDPA forward")
def test_sdpa_forward_writes_fp32_statistics_of_each_query(stats_dims, data_type, message):
    # cuDNN 9.19.0 and 9.28.1 plan each of these, and write fp32 [b, h_q, s_q, 1] all the same
    g = Graph("s")
    q, k, v, o = (g.tensor([1, 2, 16, 64], data_type="half") for _ in range(4))
    op = g._operation("SDPA_FWD", qdesc=q, kdesc=k, vdesc=v, odesc=o, scaledesc=g.scalar(0.125),
                      statsdesc=g.tensor(stats_dims, data_type=data_type))
    with pytest.raises(GraphError, match=message):
        op.finalize()
    g._operation("SDPA_FWD", qdesc=q, kdesc=k, vdesc=v, odesc=o, scaledesc=g.scalar(0.125),
                 statsdesc=g.tensor([1, 2, 16, 1], data_type="float")).finalize()


def test_gen_index_needs_its_axis():
    g = Graph("p", io_data_type="float")
    x = g.tensor([2, 8, 4, 4])
    with pytest.raises(GraphError, match=r"^axis: pointwise GEN_INDEX needs it \(the dimension whose index each "
                                         r"element gets\)$"):
        g.pointwise("GEN_INDEX", x, output=True)
    g.pointwise("GEN_INDEX", x, axis=1, output=True)


@pytest.mark.parametrize("mode, operands, message", [
    ("ADD", (), "pointwise: ADD needs b"),  # cuDNN: "xPort.tensor.getNbDims() != bPort.tensor.getNbDims()"
    ("binary_select", ("b",), "pointwise: BINARY_SELECT needs t"),
    ("RELU_FWD", ("b",), r"pointwise: RELU_FWD takes no b \(its operands: x\)"),  # an input nothing would read
    ("ADD", ("b", "t"), r"pointwise: ADD takes no t \(its operands: x, b\)"),
    ("RELU_BWD", (), "pointwise: RELU_BWD needs dy"),
])
def test_a_pointwise_mode_takes_the_operands_it_reads(mode, operands, message):
    g = Graph("p")
    x = g.tensor([1, 4, 4, 4])
    given = {name: g.tensor([1, 4, 4, 4]) for name in operands}
    with pytest.raises(ValueError, match=message):
        g.pointwise(mode, x, **given, output=True)


@pytest.mark.parametrize("value, data_type, fits", [
    (1e10, "half", False), (65504.0, "half", True), (float("inf"), "half", True), (-1e39, "float", False),
    (3e38, "float", True), (10 ** 400, "float", False), (500.0, "fp8_e4m3", False), (448.0, "fp8_e4m3", True),
    (float("inf"), "fp8_e4m3", False), (float("inf"), "fp8_e5m2", True), (3.4e38, "bfloat16", False),
    (2.0 ** 127, "fp8_e8m0", True), (2.0 ** -127, "fp8_e8m0", True),
    (2.0 ** 128, "fp8_e8m0", False), (0.0, "fp8_e8m0", False), (-1.0, "fp8_e8m0", False), (2.0 ** -128, "fp8_e8m0", False),
    # rounded to nearest as IEEE converts: below the midpoint past the largest finite value, the largest it is
    (65519.0, "half", True), (65520.0, "half", False), (3.4028235e38, "float", True), (3.3895e38, "bfloat16", True),
    (10 ** 400, "double", False)])
def test_a_floating_scalar_must_fit_its_data_type(value, data_type, fits):
    # (a finite value rounding past the type's range would be stored as infinity or saturated, as an int8 300 would
    # wrap; an E8M0 scale holds positive powers of two only): refused as the graph is built, by the packs' rule
    g = Graph("s")
    if fits:
        g.scalar(value, data_type=data_type)
    else:
        with pytest.raises(ValueError, match=r"^value: .* does not fit in CUDNN_DATA_\w+( \(its largest finite value is "
                                             r"| \(its finite values are |: it has no infinity| \(it rounds to infinity)"):
            g.scalar(value, data_type=data_type)


def test_a_graph_whose_operation_graph_was_closed_is_built_again():
    g = cb.Graph("closed")
    g.relu(g.tensor([1, 8, 8, 8], layout="nhwc"), output=True)
    og = g.build()
    og.close()
    assert not g.built
    again = g.build()
    assert again is not og and g.built and again.finalized
    og2 = g.op_graph
    og2.close()
    assert cb.explore(g, device_profile="h200").chosen is not None  # (it said the graph's operations were unknown)


@pytest.mark.parametrize("value, data_type, stored", [
    (2.5, "CUDNN_DATA_FLOAT", 2.5), (2.5, "CUDNN_DATA_HALF", 2.5), (3, "CUDNN_DATA_FLOAT", 3.0),
    (__import__("numpy").float32(1.5), "CUDNN_DATA_HALF", 1.5)])
def test_graph_tensor_takes_a_constant_value_in_its_own_data_type(value, data_type, stored):
    """Graph.tensor(by_value=True, constant_value=...) was refused (the constant set before IS_BY_VALUE); a number is
    stored in the tensor's data type (a float64's 8 bytes were read as a FLOAT's first 4)."""
    if not loaded_has("9.22.0"):
        pytest.skip("constant values came with cuDNN 9.22")
    import json

    from cudnn_backend.runtime.plans import build_plan

    g = Graph("c")
    x, w = g.tensor([8, 64, 8, 8], layout="nhwc"), g.tensor([32, 64, 3, 3], layout="nhwc")
    c = g.tensor([1, 1, 1, 1], data_type=data_type, by_value=True, constant_value=value)
    g.pointwise("CUDNN_POINTWISE_ADD", g.conv_fwd(x, w, padding=1), c, output=True)
    plan = build_plan(get_configs(g.build(), "A", h200())[0], device_profile=h200())
    assert [t["constValue"] for t in json.loads(plan.to_json())["operationGraph"]["tensors"]
            if t.get("hasConstValue")] == [stored]
    with pytest.raises(ValueError, match=r"constant_value: 1e\+60 does not fit in CUDNN_DATA_HALF"):
        Graph("g").tensor([1, 1, 1, 1], data_type="CUDNN_DATA_HALF", by_value=True, constant_value=1e60)
