"""Reference operation graphs (cudnn_backend.patterns): built and finalized through the typed classes
on CPU, heuristics run against the bundled H200 profile.

Where the loaded cuDNN has no engine for a pattern (finalize fails, or heuristics A and FALLBACK give
no configuration), the test xfails with cuDNN's own reason; a pattern newer than the loaded cuDNN must
raise CudnnVersionError.
"""
import math

import pytest

import cudnn_backend as cb
from cudnn_backend import patterns as P
from cudnn_backend._bindings.enums import SINCE, DataType, DescriptorType
from cudnn_backend.core import attribute_io, check_available, cudnn_messages, cudnn_reasons, schema
from cudnn_backend.graph import Graph, GraphError, shapes
from cudnn_backend.runtime.heuristics import engine_config_counts, get_configs
from cudnn_backend.runtime.profiles import DeviceProfile
from tests.helpers.releases import profile
from cudnn_backend.typed import (
    Convolution,
    EngineConfig,
    OperationConvolutionForward,
    OperationGraph,
    OperationNormForward,
    OperationPointwise,
    OperationReshape,
    OperationRng,
    Pointwise,
    Resample,
    Rng,
    Tensor,
)

VERSION = cb.get_version()
VERSION_TEXT = f"{VERSION // 10000}.{VERSION % 10000 // 100}.{VERSION % 100}"
F32, F16 = DataType.CUDNN_DATA_FLOAT, DataType.CUDNN_DATA_HALF


def _has(name) -> bool:
    return tuple(int(x) for x in SINCE[name].split(".")) <= (VERSION // 10000, VERSION % 10000 // 100, VERSION % 100)


@pytest.fixture(scope="module")
def dp():
    """The H200 profile for the loaded cuDNN (tests.helpers.releases: the bundled capture, made loadable on 9.28)."""
    return profile("h200").descriptor(fresh=True)


def heuristics(og, mode, dp):
    return get_configs(og, mode, dp, raise_if_empty=False)


def engines(pattern: P.Pattern, dp) -> dict:
    """Finalize the pattern and count engine configs (heuristics A, FALLBACK); xfail with cuDNN's
    reason if it cannot be finalized or no configuration is found."""
    with cudnn_messages() as messages:
        try:
            og = pattern.build()
        except cb.CudnnError as e:
            detail = cudnn_reasons(messages) or e.cudnn_message
            pytest.xfail(f"cuDNN {VERSION_TEXT}: {pattern.name} does not finalize: {str(e).splitlines()[0]}\n{detail}")
    assert isinstance(og, OperationGraph) and og.finalized
    counts = {"A": len(heuristics(og, "A", dp))}
    counts["FALLBACK"] = len(heuristics(og, "FALLBACK", dp))
    if counts["A"] == 0 and counts["FALLBACK"] == 0:
        pytest.xfail(f"cuDNN {VERSION_TEXT}: no engine configuration for {pattern.name} on the H200 profile:\n"
                     f"{pattern.why_no_engine(dp)}")
    configs = heuristics(og, "A" if counts["A"] else "FALLBACK", dp)
    assert all(isinstance(c.descriptor, EngineConfig) and c.descriptor.finalized for c in configs)
    assert counts["A"] >= 1 or counts["FALLBACK"] >= 1
    return counts


def strides(t: Tensor) -> list:
    return list(t.get_keyword("strides"))


def dtype(t: Tensor):
    return DataType(t.get_keyword("data_type"))


# ---------------------------------------------------------------------------------------------
# convolutions
# ---------------------------------------------------------------------------------------------
def test_conv_fwd(dp):
    p = P.conv_fwd()
    assert p.x.shape == (8, 64, 56, 56) and strides(p.x) == [200704, 1, 3584, 64] and dtype(p.x) == F16
    assert p.w.shape == (32, 64, 3, 3) and p.y.shape == (8, 32, 56, 56)
    [op] = p.operations
    assert isinstance(op, OperationConvolutionForward)
    assert op.conv_desc.get_keyword("pre_paddings") == [1, 1]
    assert engines(p, dp)["A"] >= 1


def test_conv_bwd_data(dp):
    p = P.conv_bwd_data()
    assert p.dy.shape == (8, 32, 56, 56) and p.dx.shape == (8, 64, 56, 56) and not p.dx.virtual
    assert engines(p, dp)["A"] >= 1


def test_conv_bwd_filter(dp):
    p = P.conv_bwd_filter()
    assert p.x.shape == (8, 64, 56, 56) and p.dw.shape == (32, 64, 3, 3) and strides(p.dw) == [576, 1, 192, 64]
    assert engines(p, dp)["A"] >= 1


def test_conv_bias_relu_guide_fusion(dp):
    p = P.conv_bias_relu()
    assert [type(op).__name__ for op in p.operations] == ["OperationConvolutionForward", "OperationPointwise",
                                                          "OperationPointwise"]
    assert p.conv_out.virtual and p.biased.virtual and not p.y.virtual
    assert dtype(p.conv_out) == F32 and dtype(p.y) == F16
    assert p.bias.shape == (1, 32, 1, 1) and p.y.shape == (8, 32, 56, 56)
    assert engines(p, dp)["A"] >= 1


def test_build_false_keeps_every_descriptor_reachable():
    p = P.conv_bias_relu(build=False)
    assert not p.built and p.op_graph is None
    graph, tensors = p
    assert isinstance(graph, Graph) and set(tensors) >= {"x", "w", "bias", "conv_out", "biased", "y"}
    kinds = {type(d) for d in p.descriptors()}
    assert {Convolution, Pointwise, OperationConvolutionForward, OperationPointwise, Tensor} <= kinds
    assert all(t in p.descriptors() for t in tensors.values())
    relu = p.operations[2]
    assert relu.pw_descriptor.get_keyword("mode") == cb.CUDNN_POINTWISE_RELU_FWD
    og = p.build()
    assert og.finalized and p.built and p.build() is og
    assert "ConvolutionForward" in p.table() and p.to_dot().startswith("digraph")
    assert "built" in repr(p) and p["y"] is p.y
    with pytest.raises(AttributeError, match="has no tensor 'nope'"):
        p.nope


# ---------------------------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("gelu, mode", [("erf", cb.CUDNN_POINTWISE_GELU_FWD),
                                        ("tanh", cb.CUDNN_POINTWISE_GELU_APPROX_TANH_FWD)])
def test_matmul_bias_gelu(dp, gelu, mode):
    p = P.matmul_bias_gelu(gelu=gelu)
    assert p.operations[2].pw_descriptor.get_keyword("mode") == mode
    assert p.c.virtual and p.c.shape == (16, 128, 256) and p.bias.shape == (1, 1, 256)
    assert engines(p, dp)["A"] >= 1


# ---------------------------------------------------------------------------------------------
# normalization
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("training", [True, False], ids=["training", "inference"])
def test_layer_norm_fwd(dp, training):
    p = P.layer_norm_fwd(training=training)
    [op] = p.operations
    assert isinstance(op, OperationNormForward)
    assert op.get_keyword("mode") == cb.CUDNN_LAYER_NORM
    assert p.epsilon.get_keyword("is_by_value") and p.epsilon.scalar_value == 1e-5
    if training:
        assert p.mean.shape == p.inv_variance.shape == (4096, 1, 1, 1)
        assert dtype(p.mean) == dtype(p.inv_variance) == F32
    else:
        assert "mean" not in p.tensors and "inv_variance" not in p.tensors
    assert engines(p, dp)["A"] >= 1


@pytest.mark.parametrize("training", [True, False], ids=["training", "inference"])
def test_rms_norm_fwd(dp, training):
    p = P.rms_norm_fwd(training=training)
    assert p.operations[0].get_keyword("mode") == cb.CUDNN_RMS_NORM
    assert "mean" not in p.tensors and ("inv_variance" in p.tensors) == training
    assert engines(p, dp)["A"] >= 1


def test_rms_norm_fwd_with_bias(dp):
    assert engines(P.rms_norm_fwd(training=False, bias=True), dp)["A"] >= 1


def test_layer_norm_bwd(dp):
    p = P.layer_norm_bwd()
    assert p.dx.shape == (4096, 128, 1, 1) and p.dscale.shape == p.dbias.shape == (1, 128, 1, 1)
    assert dtype(p.dscale) == F32
    counts = engines(p, dp)
    assert counts["A"] >= 1


def test_rms_norm_bwd(dp):
    p = P.rms_norm_bwd()
    assert "dbias" not in p.tensors
    assert engines(p, dp)["A"] >= 1


# ---------------------------------------------------------------------------------------------
# batch-norm statistics
# ---------------------------------------------------------------------------------------------
def test_bn_gen_stats_fused_with_conv(dp):
    p = P.bn_gen_stats()
    assert p.sum.shape == p.sqsum.shape == (1, 32, 1, 1) and dtype(p.sum) == F32
    assert engines(p, dp)["A"] >= 1


def test_bn_gen_stats_alone(dp):
    g = Graph("gen_stats_alone")
    x = g.tensor([4, 32, 16, 16], layout="nhwc", name="x")
    stats = g.gen_stats(x)
    assert stats["sum"].shape == stats["sqsum"].shape == (1, 32, 1, 1) and dtype(stats["sum"]) == F32
    p = P.Pattern("gen_stats_alone", g, {"x": x, **stats})
    assert p.build().finalized
    engines(p, dp)  # cuDNN 9.19: no engine runs GEN_STATS alone (xfails with its reason)


def test_bn_finalize(dp):
    p = P.bn_finalize()
    assert p.accum_count.get_keyword("is_by_value") and dtype(p.accum_count) == DataType.CUDNN_DATA_INT64
    assert p.accum_count.scalar_value == 64
    assert {"eq_scale", "eq_bias", "saved_mean", "saved_inv_std", "next_running_mean", "next_running_var"} <= set(
        p.tensors)
    assert engines(p, dp)["FALLBACK"] >= 1


# ---------------------------------------------------------------------------------------------
# reduction, resample
# ---------------------------------------------------------------------------------------------
def test_reduction_sum_over_axes(dp):
    p = P.reduction()
    assert p.y.shape == (1, 64, 1, 1) and dtype(p.y) == F32
    assert engines(p, dp)["A"] >= 1


def test_reduction_row_sum_fp32(dp):
    p = P.reduction((64, 1024), (1,), data_type=F32)
    assert p.y.shape == (64, 1)
    assert engines(p, dp)["A"] >= 1


@pytest.mark.parametrize("mode, index", [("MAXPOOL", False), ("MAXPOOL", True), ("AVGPOOL_INCLUDE_PADDING", False)],
                         ids=["max", "max+index", "avg"])
def test_pooling_resample(dp, mode, index):
    p = P.pooling(mode=mode, index=index)
    expected = [8, 8, 1 + (56 + 2 + 4 - 2) // 4, 1 + (56 + 3 + 5 - 3) // 5]
    assert list(p.y.shape) == expected == shapes.resample_output_dims([8, 8, 56, 56], (2, 3), (4, 5), (2, 3), (4, 5))
    desc = p.operations[0].desc
    assert isinstance(desc, Resample) and desc.get_keyword("window_dims") == [2, 3]
    if index:
        assert dtype(p.index) == DataType.CUDNN_DATA_INT8 and p.index.shape == p.y.shape
    assert engines(p, dp)["A"] >= 1


# ---------------------------------------------------------------------------------------------
# concat, reshape, rng: fused where cuDNN runs them, alone to show what it says
# ---------------------------------------------------------------------------------------------
def test_concat_fused_with_conv(dp):
    p = P.concat()
    assert p.y.shape == (16, 512, 64, 64) and p.conv_y.virtual
    assert p.operations[1].get_keyword("inplace_index") == 1
    assert engines(p, dp)["A"] >= 1


def test_concat_alone(dp):
    g = Graph("concat_alone")
    a = g.tensor([4, 16, 8, 8], layout="nhwc", name="a")
    b = g.tensor([4, 32, 8, 8], layout="nhwc", name="b")
    p = P.Pattern("concat_alone", g, {"a": a, "b": b, "y": g.concat([a, b], 1, name="y")})
    assert p.y.shape == (4, 48, 8, 8)
    assert p.build().finalized
    engines(p, dp)


def test_reshape_in_attention_backward(dp):
    p = P.sdpa_composite_bwd()
    reshapes = [op for op in p.operations if isinstance(op, OperationReshape)]
    assert len(reshapes) == 3
    assert p.p_t.shape == (2, 4, 128, 128) and strides(p.p_t) == [4 * 128 * 128, 128 * 128, 1, 128]
    assert p.k.shape == (2, 4, 128, 64) and p.k.virtual and not p.k_t.virtual
    assert engines(p, dp)["A"] >= 1


def test_reshape_alone(dp):
    p = P.reshape()
    assert p.c.shape == (4, 16, 8) and p.c.virtual and p.y.shape == (1, 64, 8)
    assert p.build().finalized
    engines(p, dp)


def test_rng_as_attention_dropout(dp):
    p = P.sdpa_composite_fwd(dropout=0.1)
    [rng_op] = [op for op in p.operations if isinstance(op, OperationRng)]
    rng = rng_op.desc
    assert isinstance(rng, Rng) and math.isclose(rng.get_keyword("bernoulli_dist_probability"), 0.9)
    assert dtype(p.dropout_seed) == DataType.CUDNN_DATA_INT64 and rng_op.ydesc.virtual
    assert p.dropout_scale.scalar_value == pytest.approx(1 / 0.9)
    assert engines(p, dp)["A"] >= 1


def test_rng_alone(dp):
    p = P.rng()
    assert p.y.shape == (4, 16, 8, 8) and p.seed.shape == p.offset.shape == (1, 1, 1, 1)
    assert p.build().finalized
    engines(p, dp)


# ---------------------------------------------------------------------------------------------
# attention
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("training, causal, dropout", [(True, False, 0.0), (False, False, 0.0), (True, True, 0.0),
                                                       (False, True, 0.1)],
                         ids=["training", "inference", "causal", "inference-causal-dropout"])
def test_sdpa_composite_fwd(dp, training, causal, dropout):
    p = P.sdpa_composite_fwd(training=training, causal=causal, dropout=dropout)
    assert p.o.shape == (2, 4, 128, 64) and p.k_t.shape == (2, 4, 64, 128)
    assert p.stats.virtual == (not training) and p.stats.shape == (2, 4, 128, 1) and dtype(p.stats) == F32
    assert dtype(p.p) == F16  # the second matmul needs P in V's data type
    assert engines(p, dp)["A"] >= 1


def test_sdpa_composite_inference_keeps_an_unconsumed_virtual_stats():
    # cuDNN's fused attention wants the softmax stats computed even in inference; the pattern marks the virtual
    # stats allow_unconsumed, which the graph checks honour (without the mark they refuse it)
    p = P.sdpa_composite_fwd(training=False, build=False)
    assert p.stats.virtual and p.stats.allow_unconsumed
    assert p.graph.build(check=True).finalized
    g = Graph()
    g.pointwise("CUDNN_POINTWISE_RELU_FWD", g.tensor([1, 8, 4, 4]))  # virtual output, never read, not marked
    with pytest.raises(GraphError, match="nothing consumes it"):
        g.build()


@pytest.mark.parametrize("causal, dropout", [(False, 0.0), (True, 0.1)], ids=["plain", "causal-dropout"])
def test_sdpa_composite_bwd(dp, causal, dropout):
    p = P.sdpa_composite_bwd(causal=causal, dropout=dropout)
    assert p.dq.shape == p.o.shape and p.dk.shape == p.dv.shape == (2, 4, 128, 64)
    assert dtype(p.dq_accum) == F32 and not p.dq_accum.virtual
    assert engines(p, dp)["A"] >= 1


def test_sdpa_unified_fwd(dp):
    if not _has("CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR"):
        with pytest.raises(cb.CudnnVersionError, match=r"needs cuDNN >= 9\.13 \(loaded: "):
            P.sdpa_fwd()
        return
    p = P.sdpa_fwd()
    assert p.o.shape == (2, 4, 128, 64) and p.stats.shape == (2, 4, 128, 1)
    assert p.attn_scale.scalar_value == pytest.approx(1 / 8)
    assert engines(p, dp)["A"] >= 1


def test_sdpa_unified_bwd(dp):
    if not _has("CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR"):
        with pytest.raises(cb.CudnnVersionError, match=r"needs cuDNN >= 9\.17 \(loaded: "):
            P.sdpa_bwd()
        return
    p = P.sdpa_bwd(build=False)
    assert p.operations[0].finalized  # the operation itself finalizes
    engines(p, dp)  # cuDNN 9.19 refuses the graph (outputGraph.buildDAG): xfails with that reason


# ---------------------------------------------------------------------------------------------
# block scaling (9.7), and operations newer than 9.19
# ---------------------------------------------------------------------------------------------
def test_block_scale_dequantize_matmul(dp):
    if not _has("CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR"):
        with pytest.raises(cb.CudnnVersionError, match="9.7.0"):
            P.block_scale_dequantize_matmul()
        return
    p = P.block_scale_dequantize_matmul()
    assert dtype(p.a) == DataType.CUDNN_DATA_FP8_E4M3 and dtype(p.a_scale) == DataType.CUDNN_DATA_FP8_E8M0
    assert p.a_scale.shape == (1, 256, 8) and p.b_scale.shape == (1, 8, 256) and p.a_dq.virtual
    assert p.operations[1].get_keyword("block_size") == [32, 1]
    assert engines(p, dp)["A"] >= 1


def test_block_scale_dequantize_matmul_blackwell_layout(dp):
    if not _has("CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR"):
        pytest.skip("needs cuDNN 9.7")
    p = P.block_scale_dequantize_matmul(reordering=cb.CUDNN_TENSOR_REORDERING_F8_128x4)
    assert p.a_scale.get_keyword("reordering_mode") == cb.CUDNN_TENSOR_REORDERING_F8_128x4
    engines(p, dp)  # the F8_128x4 scale layout is for Blackwell engines: xfails on the H200 profile with the reason


@pytest.mark.parametrize("matmul", [False, True], ids=["alone", "matmul-epilogue"])
def test_block_scale_quantize(dp, matmul):
    if not _has("CUDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR"):
        with pytest.raises(cb.CudnnVersionError, match="9.7.0"):
            P.block_scale_quantize(matmul=matmul)
        return
    p = P.block_scale_quantize(matmul=matmul)
    assert dtype(p.y) == DataType.CUDNN_DATA_FP8_E4M3 and p.scale.shape == (1, 256, 8)
    assert p.scale.get_keyword("reordering_mode") == cb.CUDNN_TENSOR_REORDERING_F8_128x4
    assert p.build().finalized
    engines(p, dp)  # quantize engines are sm100/sm120 only: on the H200 profile this xfails with cuDNN's reason


NEWER = [
    ("transpose", P.transpose, "CUDNN_BACKEND_OPERATION_TRANSPOSE_DESCRIPTOR", "9.22.0"),
    ("slice", P.slice, "CUDNN_BACKEND_OPERATION_SLICE_DESCRIPTOR", "9.22.0"),
    ("slice_matmul", P.slice_matmul, "CUDNN_BACKEND_OPERATION_SLICE_DESCRIPTOR", "9.22.0"),
    ("softmax", P.softmax, "CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR", "9.20.0"),
    ("sdpa_softmax_fwd", P.sdpa_softmax_fwd, "CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR", "9.20.0"),
    ("diagonal_band_mask", P.diagonal_band_mask, "CUDNN_BACKEND_OPERATION_DIAGONAL_BAND_MASK_DESCRIPTOR", "9.20.0"),
    ("rope", P.rope, "CUDNN_BACKEND_OPERATION_ROPE_FWD_DESCRIPTOR", "9.24.0"),
    ("rope_bwd", P.rope_bwd, "CUDNN_BACKEND_OPERATION_ROPE_BWD_DESCRIPTOR", "9.25.0"),
]


@pytest.mark.parametrize("name, factory, descriptor, since", NEWER, ids=[n[0] for n in NEWER])
def test_operations_newer_than_loaded_cudnn(dp, name, factory, descriptor, since):
    assert SINCE[descriptor] == since
    if not _has(descriptor):
        with pytest.raises(cb.CudnnVersionError, match=rf"{descriptor}.*needs cuDNN >= {since[:-2]} \(loaded: ") as info:
            factory()
        assert info.value.since == since and info.value.loaded == VERSION_TEXT
        with pytest.raises(cb.CudnnVersionError):
            check_available(descriptor)
        return
    p = factory()
    assert p.build().finalized and p.outputs()
    engines(p, dp)


def test_newer_op_helpers_refuse_before_touching_the_graph():
    if _has("CUDNN_BACKEND_OPERATION_TRANSPOSE_DESCRIPTOR"):
        pytest.skip("the loaded cuDNN has transpose")
    g = Graph()
    x = g.tensor([2, 3, 4, 5])
    before = (len(g.tensors), len(g.operations))
    with pytest.raises(cb.CudnnVersionError):
        g.transpose(x, [0, 2, 3, 1])
    with pytest.raises(cb.CudnnVersionError):
        g.slice(x, [0, 0, 0, 0], [1, 3, 4, 5])
    if not _has("CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR"):  # (softmax came in 9.20, transpose and slice in 9.22)
        with pytest.raises(cb.CudnnVersionError):
            g.softmax(x)
    assert (len(g.tensors), len(g.operations)) == before


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------
def test_shape_helpers():
    assert shapes.resample_output_dims([1, 3, 8, 8], [2, 2], [2, 2], [0, 0], [0, 0]) == [1, 3, 4, 4]
    assert shapes.norm_stats_dims("layer", [4096, 128, 1, 1], [1, 128, 1, 1]) == [4096, 1, 1, 1]
    assert shapes.norm_stats_dims("batch", [8, 64, 16, 16], [1, 64, 1, 1]) == [1, 64, 1, 1]
    assert shapes.norm_stats_dims("instance", [8, 64, 16, 16], [1, 64, 1, 1]) == [8, 64, 1, 1]
    assert shapes.concat_output_dims([[2, 3, 4], [2, 5, 4]], 1) == [2, 8, 4]
    with pytest.raises(GraphError, match="does not match"):
        shapes.concat_output_dims([[2, 3, 4], [3, 5, 4]], 1)
    assert shapes.transpose_output_dims([2, 3, 4], [2, 0, 1]) == [4, 2, 3]
    with pytest.raises(GraphError, match="not a permutation"):
        shapes.transpose_output_dims([2, 3, 4], [2, 2, 1])
    assert shapes.slice_output_dims([10, 8], [2, 0], [9, 8], [3, 1]) == [3, 8]
    assert shapes.bshd_strides([2, 4, 128, 64]) == [128 * 4 * 64, 64, 4 * 64, 1]


def test_cudnn_messages_capture_and_restore(dp):
    was_enabled = cb.logging_enabled()
    g = Graph("gen_stats_alone")
    g.gen_stats(g.tensor([4, 32, 16, 16], layout="nhwc"))
    with cudnn_messages() as messages:
        heuristics(g.build(), "A", dp)
    assert cb.logging_enabled() == was_enabled
    if not messages:
        pytest.skip("heuristics found an engine; nothing to explain")
    text = "\n".join(messages)
    assert "Reason:" in text and "\n" in text  # every line of the message, not only its header
    assert cudnn_reasons(messages)


def test_heuristics_by_mode_name_and_enum(dp):
    og = P.conv_fwd().op_graph
    assert len(heuristics(og, "A", dp)) == len(heuristics(og, cb.CUDNN_HEUR_MODE_A, dp)) >= 1
    assert engine_config_counts(og, dp, modes=("FALLBACK",))["FALLBACK"] >= 1
    p = P.conv_fwd()
    assert p.engine_config_counts(dp, modes=("A",))["A"] == len(p.heuristics("A", dp)) >= 1
    h200 = DeviceProfile.bundled()
    assert h200.descriptor() is h200.descriptor()
    with pytest.raises(ValueError, match="no bundled device profile"):
        DeviceProfile.bundled("a100")


def test_every_pattern_operation_has_outputs_the_graph_checks_know():
    for factory in P.CATALOGUE.values():
        try:
            p = factory(build=False)
        except cb.CudnnVersionError:  # an operation newer than the loaded cuDNN: refused before any descriptor
            continue
        for op in p.operations:
            spec = schema.DESCRIPTORS[DescriptorType(op.DESCRIPTOR_TYPE)]
            assert any(attribute_io(a) == "output" for a in spec.attributes), op.DESCRIPTOR_TYPE.name
