"""Newer releases' features behind the one version gate (``core.check_available``), offline with the real cuDNN.

On a release that has a feature it is exercised; on an older one it is refused with exactly "NAME (context) needs
cuDNN >= X.Y (loaded: A.B)" before any descriptor is made. Run the file on 9.19.0 (the default) and on 9.28.1
(``CUDNN_BACKEND_LIBCUDNN=.../cu13-9.28.1.4/nvidia/cudnn/lib/libcudnn.so.9``): each test checks one side.
"""
import re

import pytest

import cudnn_backend as cb
from cudnn_backend._bindings.enums import SINCE, AttributeName, AttributeType, DataType, OperationGraphMode
from cudnn_backend.core import check_available, is_available, since_of
from cudnn_backend.errors import CudnnUnsafeCallError, CudnnVersionError, GraphError, needs_version_message
from cudnn_backend.graph import Graph, shapes
from cudnn_backend.runtime.heuristics import get_configs
from cudnn_backend.typed import OperationGraph
from tests.helpers import generic_graphs as gg
from tests.helpers.env import LOADED, loaded_has, version_text
from tests.helpers.releases import profile

F32 = DataType.CUDNN_DATA_FLOAT
LOADED_SHORT = f"{LOADED // 10000}.{LOADED % 10000 // 100}"


def gate_message(name, context, since):
    """The gate's exact wording, as a regex."""
    return "^" + re.escape(f"{name} ({context}) needs cuDNN >= {since[:since.rindex('.')]} (loaded: {LOADED_SHORT})") + "$"


# ---------------------------------------------------------------------------------------------
# the gate itself
# ---------------------------------------------------------------------------------------------
def test_the_gate_reads_the_headers_since_for_every_kind_of_name():
    assert since_of("CUDNN_BACKEND_OPERATION_ROPE_FWD_DESCRIPTOR") == "9.24.0"  # a descriptor type
    assert since_of("CUDNN_ATTR_OPERATIONGRAPH_MODE") == "9.23.0"  # an attribute
    assert since_of("CUDNN_KNOB_TYPE_INPUT_TMA_ENABLE") == "9.22.0"  # an enum value
    assert since_of("cudnnBackendOperationGraphMode_t") == "9.23.0"  # an enum type
    assert since_of("cudnnGetExecutionPlanWorkspaceSize") == "9.23.0"  # a function
    with pytest.raises(ValueError, match="'CUDNN_NO_SUCH_THING' is no enumerant, enum type or function"):
        since_of("CUDNN_NO_SUCH_THING")
    with pytest.raises(ValueError):  # a typo is never taken as "available"
        check_available("CUDNN_ATTR_OPERATIONGRAPH_MODEE")
    with pytest.raises(TypeError):
        since_of(806)
    for name in ("CUDNN_BACKEND_TENSOR_DESCRIPTOR", "cudnnBackendExecute", "CUDNN_ATTR_OPERATIONGRAPH_MODE",
                 "CUDNN_BACKEND_OPERATION_ROPE_BWD_DESCRIPTOR"):
        assert is_available(name) == loaded_has(since_of(name))


@pytest.mark.parametrize("name", ["CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR", "CUDNN_ATTR_OPERATIONGRAPH_MODE",
                                  "cudnnGetExecutionPlanWorkspaceSize", "CUDNN_BACKEND_OPERATION_ROPE_BWD_DESCRIPTOR",
                                  "CUDNN_CUDA_GRAPH_RETENTION_NONE", "cudnnCudaGraphRetention_t"])
def test_the_gate_refuses_in_one_wording(name):
    since = since_of(name)
    if loaded_has(since):
        check_available(name, "ctx")  # no error
        return
    with pytest.raises(CudnnVersionError, match=gate_message(name, "ctx", since)) as info:
        check_available(name, "ctx")
    assert (info.value.name, info.value.since, info.value.loaded) == (name, since, version_text())


def test_several_names_name_the_newest_missing_one():
    names = ("CUDNN_ATTR_OPERATIONGRAPH_IS_OVERRIDE_SHAPE_ENABLED", "cudnnGetExecutionPlanWorkspaceSize",
             "CUDNN_BACKEND_TENSOR_DESCRIPTOR")
    if loaded_has("9.23.0"):
        check_available(names, "override shapes")
        return
    with pytest.raises(CudnnVersionError, match=gate_message("cudnnGetExecutionPlanWorkspaceSize", "override shapes",
                                                             "9.23.0")):
        check_available(names, "override shapes")


def test_message_keeps_a_patch_level_that_matters():
    assert needs_version_message("X", "9.22.0", "9.19.0") == "X needs cuDNN >= 9.22 (loaded: 9.19)"
    assert needs_version_message("X", "9.28.1", "9.28.0") == "X needs cuDNN >= 9.28.1 (loaded: 9.28.0)"


@pytest.mark.skipif(loaded_has("9.23.0"), reason="the loaded cuDNN knows the attribute")
def test_an_attribute_cudnn_does_not_know_is_refused_by_the_gate_not_bad_param():
    g = cb.Descriptor(cb.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    with pytest.raises(CudnnVersionError, match=r"^CUDNN_ATTR_OPERATIONGRAPH_MODE \(.*\) needs cuDNN >= 9\.23 "
                                                r"\(loaded: " + re.escape(LOADED_SHORT) + r"\)$"):
        g.set(AttributeName.CUDNN_ATTR_OPERATIONGRAPH_MODE, AttributeType.CUDNN_TYPE_OPERATIONGRAPH_MODE, 0)
    assert AttributeName.CUDNN_ATTR_OPERATIONGRAPH_MODE not in g.set_attributes
    with pytest.raises(CudnnVersionError, match="needs cuDNN >= 9.23"):  # the typed class goes through it too
        OperationGraph(mode="CUDNN_OPERATIONGRAPH_MODE_AUTO")


# ---------------------------------------------------------------------------------------------
# the operation families: every method refuses before touching the graph, or finalizes
# ---------------------------------------------------------------------------------------------
def _bshd_scores(g):
    return g.tensor([2, 4, 128, 128], name="s")


def _freqs(g):
    return g.tensor([128, 1, 1, 64], [64, 64, 64, 1], F32, name="freqs")


METHODS = {  # method -> (the descriptor it makes, its arguments made in a fresh graph: (args, keywords))
    "transpose": ("CUDNN_BACKEND_OPERATION_TRANSPOSE_DESCRIPTOR",
                  lambda g: ((g.tensor([2, 3, 4, 5], name="x"), [0, 2, 3, 1]), {"output": True})),
    "slice": ("CUDNN_BACKEND_OPERATION_SLICE_DESCRIPTOR",
              lambda g: ((g.tensor([2, 3, 4, 5], name="x"), [0, 1, 0, 0], [2, 3, 4, 5]), {"output": True})),
    "softmax": ("CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR",
                lambda g: ((_bshd_scores(g),), {"stats": True, "max_sum": True, "output": True})),
    "diagonal_band_mask": ("CUDNN_BACKEND_OPERATION_DIAGONAL_BAND_MASK_DESCRIPTOR",
                           lambda g: ((_bshd_scores(g),), {"left_bound": 16, "output": True})),
    "rope_fwd": ("CUDNN_BACKEND_OPERATION_ROPE_FWD_DESCRIPTOR",
                 lambda g: ((g.tensor([2, 4, 128, 64], name="x"), _freqs(g)), {"rope_dim": 32})),
    "rope_bwd": ("CUDNN_BACKEND_OPERATION_ROPE_BWD_DESCRIPTOR",
                 lambda g: ((g.tensor([2, 4, 128, 64], name="dy"), _freqs(g)), {})),
}


@pytest.mark.parametrize("method", sorted(METHODS))
def test_each_newer_operation_is_gated_or_finalizes(method):
    descriptor, arguments = METHODS[method]
    since = SINCE[descriptor]
    g = Graph(method, io_data_type="half")
    args, kwargs = arguments(g)
    if not loaded_has(since):
        before = (dict(g.tensors), list(g.operations))
        with pytest.raises(CudnnVersionError, match=gate_message(descriptor, f"Graph.{method}", since)):
            getattr(g, method)(*args, **kwargs)
        assert (dict(g.tensors), list(g.operations)) == before  # nothing made, nothing added
        return
    out = getattr(g, method)(*args, **kwargs)
    [op] = g.operations
    assert op.DESCRIPTOR_TYPE.name == descriptor
    assert g.build().finalized
    ys = [y for y in (out.values() if isinstance(out, dict) else [out]) if y is not None]
    assert ys and all(g.tensors[y.uid] is y and not y.virtual for y in ys)


def test_shape_rules_refuse_before_cudnn():
    # cuDNN 9.28.1's own rules, checked first and naming the parameter (cuDNN says e.g. "statsDim[3] != 1")
    assert shapes.softmax_stats_dims([2, 4, 128, 96]) == [2, 4, 128, 1]
    with pytest.raises(GraphError, match=r"softmax: x is \[4, 128, 96\]"):
        shapes.softmax_stats_dims([4, 128, 96])
    assert shapes.rope_dims([2, 4, 128, 64], [128, 1, 1, 64]) == 64
    assert shapes.rope_dims([2, 4, 128, 64], [128, 1, 1, 32], 32) == 32
    with pytest.raises(GraphError, match="rope_dim 7 must be even"):
        shapes.rope_dims([2, 4, 128, 64], [128, 1, 1, 64], 7)
    with pytest.raises(GraphError, match=r"freqs is \[128, 1, 1, 32\]; it must be \[s=128, 1, 1, >= rope_dim 64\]"):
        shapes.rope_dims([2, 4, 128, 64], [128, 1, 1, 32])
    with pytest.raises(GraphError, match=r"freqs is \[64, 1, 1, 64\]"):
        shapes.rope_dims([2, 4, 128, 64], [64, 1, 1, 64])
    assert shapes.band_mask_dims([2, 4, 8, 8], [2, 1, 1, 1]) == [2, 4, 8, 8]
    with pytest.raises(GraphError, match=r"seq_len_q is \[3, 1, 1, 1\]"):
        shapes.band_mask_dims([2, 4, 8, 8], [3, 1, 1, 1], "seq_len_q")


@pytest.mark.skipif(not loaded_has("9.20.0"), reason="needs the band mask (9.20)")
def test_band_mask_arguments():
    g = Graph("band", io_data_type="half")
    s = _bshd_scores(g)
    with pytest.raises(GraphError, match="left_bound and shift_right_bound: one or neither"):
        g.diagonal_band_mask(s, left_bound=1, shift_right_bound=2)
    with pytest.raises(GraphError, match=r"left_bound is \[2, 2\]"):
        g.diagonal_band_mask(s, left_bound=g.tensor([2, 2], data_type="int32"))
    with pytest.raises(GraphError, match="fill: .* must be one value"):
        g.diagonal_band_mask(s, g.tensor([2, 4, 128, 128], data_type="float"))
    with pytest.raises(GraphError, match="seq_len_q and seq_len_kv: both or neither"):
        g.diagonal_band_mask(s, seq_len_q=g.tensor([2, 1, 1, 1], data_type="int32"))
    n = len(g.operations)
    lens = [g.tensor([2, 1, 1, 1], data_type="int32", name=f"seq_len_{w}") for w in ("q", "kv")]
    y = g.diagonal_band_mask(s, -1e4, shift_right_bound=8, seq_len_q=lens[0], seq_len_kv=lens[1])
    [op] = g.operations[n:]
    assert op.seq_len_qdesc is lens[0] and op.seq_len_kvdesc is lens[1]
    assert op.bdesc.scalar_value == -1e4 and op.shift_right_bound_desc.scalar_value == 8
    assert op.shift_right_bound_desc.get_keyword("data_type") == DataType.CUDNN_DATA_INT32
    assert y.shape == s.shape and y.virtual


@pytest.mark.skipif(not loaded_has("9.22.0"), reason="needs slice (9.22)")
def test_slice_always_sets_its_strides():
    g = Graph("slice", io_data_type="half")
    g.slice(g.tensor([4, 16, 8]), [0, 4, 0], [4, 12, 8], output=True)
    assert g.operations[0].get_keyword("strides") == [1, 1, 1]  # 9.28.1 refuses a slice without ("strides.empty()")
    assert g.build().finalized


# ---------------------------------------------------------------------------------------------
# Graph.build(mode=..., override_shapes=...)
# ---------------------------------------------------------------------------------------------
def _matmul_graph(name="mm"):
    g = Graph(name, io_data_type="bfloat16")
    a, b = g.tensor([1, 256, 128], name="a"), g.tensor([1, 128, 64], name="b")
    g.matmul(a, b, output=True, name="c")
    return g


def test_build_options_are_gated():
    if loaded_has("9.23.0"):
        pytest.skip("the loaded cuDNN has the mode and override shapes")
    g = _matmul_graph()
    with pytest.raises(CudnnVersionError, match=gate_message("CUDNN_ATTR_OPERATIONGRAPH_MODE", "Graph.build(mode=...)",
                                                             "9.23.0")):
        g.build(mode="blas_matmul")
    with pytest.raises(CudnnVersionError, match=gate_message("cudnnGetExecutionPlanWorkspaceSize",
                                                             "Graph.build(override_shapes=True)", "9.23.0")):
        g.build(override_shapes=True)
    assert not g.built and g.build().finalized  # refused before a descriptor: the plain build still works


@pytest.mark.skipif(not loaded_has("9.23.0"), reason="needs the operation-graph mode (9.23)")
def test_mode_reaches_cudnn_and_must_be_the_detected_one():
    dp = profile("h200")
    detected = _matmul_graph().build().get(AttributeName.CUDNN_ATTR_OPERATIONGRAPH_MODE,
                                           AttributeType.CUDNN_TYPE_OPERATIONGRAPH_MODE)[0]
    assert detected == OperationGraphMode.CUDNN_OPERATIONGRAPH_MODE_BLAS_MATMUL
    auto = _matmul_graph().build()
    for mode in ("auto", "blas_matmul", OperationGraphMode.CUDNN_OPERATIONGRAPH_MODE_BLAS_MATMUL):
        g = _matmul_graph()
        og = g.build(mode=mode)
        assert og.get(AttributeName.CUDNN_ATTR_OPERATIONGRAPH_MODE,
                      AttributeType.CUDNN_TYPE_OPERATIONGRAPH_MODE) == [detected]  # cuDNN read it back
        # the same engines as cuDNN's own detection (a mode is a hint that skips pattern matching)
        assert [c.engine_index for c in get_configs(og, "A", dp)] == [c.engine_index for c in get_configs(auto, "A", dp)]
    # another mode is refused before cuDNN finalizes (9.28.1 segfaults on e.g. CONV_BWD_DATA for a matmul)
    for mode in ("conv_bwd_data", "norm_bwd", "generic_pointwise_fusion"):
        g = _matmul_graph()
        with pytest.raises(CudnnUnsafeCallError, match=r"MODE_[A-Z_]+ does not fit this graph, whose operations cuDNN "
                                                       r"detects as CUDNN_OPERATIONGRAPH_MODE_BLAS_MATMUL"):
            g.build(mode=mode)
        assert not g.built
    with pytest.raises(ValueError, match="is not a OperationGraphMode"):
        _matmul_graph().build(mode="sideways")
    g = _matmul_graph()
    g.build(mode="blas_matmul")
    with pytest.raises(GraphError, match="already built with mode="):
        g.build(mode="auto")


@pytest.mark.skipif(not loaded_has("9.23.0"), reason="needs the operation-graph mode (9.23)")
def test_a_graph_whose_detected_mode_no_header_declares_takes_no_mode():
    """cuDNN detects a fused convolution as a value its header declares no mode for (11 on 9.24-9.28): the refusal
    says so, rather than to set a mode that cannot be named."""
    g = cb.patterns.conv_bias_relu(n=1, c=8, h=8, w=8, k=8, build=False).graph
    detected = cb.patterns.conv_bias_relu(n=1, c=8, h=8, w=8, k=8).op_graph.get(
        AttributeName.CUDNN_ATTR_OPERATIONGRAPH_MODE, AttributeType.CUDNN_TYPE_OPERATIONGRAPH_MODE)[0]
    if isinstance(detected, OperationGraphMode):
        with pytest.raises(CudnnUnsafeCallError, match="set the detected mode or leave it out"):
            g.build(mode="norm_bwd" if detected != OperationGraphMode.CUDNN_OPERATIONGRAPH_MODE_NORM_BWD else "auto")
        return
    with pytest.raises(CudnnUnsafeCallError, match=rf"detects as {int(detected)} \(a value of no declared mode\): .*its "
                                                   r"header declares no such mode, so no mode can be set for this "
                                                   r"graph: leave it out \(AUTO\)$"):
        g.build(mode="conv_forward")


@pytest.mark.skipif(not loaded_has("9.23.0"), reason="needs the operation-graph mode (9.23)")
def test_a_mode_is_not_sent_for_operations_cudnn_refuses_in_auto_mode():
    """A lone reshape of a tensor onto itself: cuDNN refuses it in AUTO mode (BAD_PARAM) and 9.28.1 segfaults
    finalizing it in CONV_BWD_FILTER mode, which skips those checks. Such a reshape is refused as it is finalized now
    (it writes the tensor it reads); two reshapes writing one tensor stand for any graph AUTO mode refuses."""
    A, T = AttributeName, AttributeType

    def reshape_op(x, y):
        op = cb.Descriptor(cb.CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR)
        op.set(A.CUDNN_ATTR_OPERATION_RESHAPE_XDESC, T.CUDNN_TYPE_BACKEND_DESCRIPTOR, x)
        op.set(A.CUDNN_ATTR_OPERATION_RESHAPE_YDESC, T.CUDNN_TYPE_BACKEND_DESCRIPTOR, y)
        return op

    x, y = (gg.tensor(u, [32, 64, 3, 3], [576, 1, 192, 64]) for u in (102, 103))
    with pytest.raises(GraphError, match=r"^Reshape: t102 \(uid 102\) is both its output ydesc and its input xdesc"):
        reshape_op(x, x).finalize()
    reshape = [reshape_op(x, y).finalize(), reshape_op(x, y).finalize()]

    def graph(mode=None):
        g = cb.Descriptor(cb.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
        if mode is not None:
            g.set(A.CUDNN_ATTR_OPERATIONGRAPH_MODE, T.CUDNN_TYPE_OPERATIONGRAPH_MODE, mode)
        g.set(A.CUDNN_ATTR_OPERATIONGRAPH_OPS, T.CUDNN_TYPE_BACKEND_DESCRIPTOR, reshape)
        return g

    with pytest.raises(cb.CudnnError) as auto:
        graph().finalize(check_required=False)
    assert not isinstance(auto.value, CudnnUnsafeCallError)  # cuDNN's own refusal, as it is
    for check_required in (True, False):
        with pytest.raises(CudnnUnsafeCallError, match=r"cuDNN refuses this graph's operations when it detects the "
                                                       r"mode itself \(.*BAD_PARAM.*\), so the graph is not finalized "
                                                       r"in mode CUDNN_OPERATIONGRAPH_MODE_CONV_BWD_FILTER"):
            graph(OperationGraphMode.CUDNN_OPERATIONGRAPH_MODE_CONV_BWD_FILTER).finalize(check_required=check_required)


@pytest.mark.skipif(not loaded_has("9.23.0"), reason="needs override shapes (9.23)")
def test_override_shapes_flag_reaches_cudnn():
    g = _matmul_graph()
    og = g.build(override_shapes=True)
    assert og.get(AttributeName.CUDNN_ATTR_OPERATIONGRAPH_IS_OVERRIDE_SHAPE_ENABLED,
                  AttributeType.CUDNN_TYPE_BOOLEAN) == [True]
    assert g.build(override_shapes=True) is og
    with pytest.raises(GraphError, match="override_shapes=True"):
        g.build()
    with pytest.raises(TypeError, match="override_shapes: expected True or False"):
        _matmul_graph().build(override_shapes=1)


@pytest.mark.skipif(not 91900 <= LOADED < 92000, reason="cuDNN 9.19 finalizes no graph with SDPA_BWD; others do")
def test_sdpa_backward_on_9_19_says_the_release_refuses_it():
    with pytest.raises(cb.CudnnError, match=r"buildDAG\(\)\n  hint: cuDNN 9\.19\.\d+ finalizes no graph holding an "
                                            r"SDPA_BWD operation .*patterns\.sdpa_composite_bwd"):
        cb.patterns.sdpa_bwd()
