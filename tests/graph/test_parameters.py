"""The Graph builder refuses, naming the parameter, what cuDNN would plan and then misread or ignore: attention
backward tensors of another attention, pointwise parameters a mode does not read, a momentum nothing reads, matmul
overrides of another type or shape, a max-pool index too narrow for its window, MoE backward operands, truthy
strings for bool parameters, a layout contradicting the strides, a band wider than its matrix."""
import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend import DataType as D
from cudnn_backend.core.families._build import as_bool
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import Graph

from tests.helpers.env import loaded_has, needs_sdpa_bwd, needs_sdpa_fwd

F32 = D.CUDNN_DATA_FLOAT


# -- sdpa_bwd ----------------------------------------------------------------------------------------------------------
def _sdpa_bwd(q=(2, 4, 128, 64), k=(2, 4, 128, 64), v=(2, 4, 128, 64), o=(2, 4, 128, 64), stats=(2, 4, 128, 1),
              stats_type=F32, **kw):
    g = Graph("sdpa_bwd")
    t = {n: g.tensor(list(d), name=n) for n, d in (("q", q), ("k", k), ("v", v), ("o", o), ("do", o))}
    st = g.tensor(list(stats), data_type=stats_type, name="stats")
    g.sdpa_bwd(t["q"], t["k"], t["v"], t["o"], t["do"], st, **kw)
    return g


@needs_sdpa_bwd
@pytest.mark.parametrize("kw, message", [
    (dict(o=(2, 4, 64, 64)), r"^o: .* is not \[b, h_q, s_q, d_v\] = \[2, 4, 128, 64\]"),
    (dict(o=(2, 4, 128, 32)), r"^o: .* is not \[b, h_q, s_q, d_v\] = \[2, 4, 128, 64\]"),
    (dict(stats_type=D.CUDNN_DATA_HALF), r"^stats: .* is not CUDNN_DATA_FLOAT \[b, h_q, s_q, 1\]"),
    (dict(stats=(2, 4, 1, 1)), r"^stats: .* is not CUDNN_DATA_FLOAT \[b, h_q, s_q, 1\] = \[2, 4, 128, 1\]"),
    (dict(k=(2, 4, 128, 32)), r"q \[2, 4, 128, 64\], k \[2, 4, 128, 32\], v \[2, 4, 128, 64\]: batch, head"),
    (dict(v=(1, 4, 128, 64)), r"q \[2, 4, 128, 64\], k \[2, 4, 128, 64\], v \[1, 4, 128, 64\]: batch, head"),
    (dict(k=(2, 3, 128, 64), v=(2, 3, 128, 64)), r"h_q a multiple of h_k and h_v"),
    (dict(q=(2, 128, 64), stats=(2, 128, 1)), r"^q: attention tensors are \[b, h, s, d\], not \[2, 128, 64\]"),
])
def test_sdpa_bwd_refuses_tensors_of_another_attention(kw, message):
    with pytest.raises(GraphError, match=message):
        _sdpa_bwd(**kw)


@needs_sdpa_bwd
def test_sdpa_bwd_of_a_gqa_attention_with_another_d_v_is_taken():
    g = _sdpa_bwd(k=(2, 2, 128, 64), v=(2, 2, 128, 32), o=(2, 4, 128, 32))
    if loaded_has("9.28.0"):  # (9.19 refuses every SDPA_BWD graph at finalize)
        g.build()


@needs_sdpa_fwd
def test_sdpa_fwd_refuses_v_of_another_batch_by_the_shared_rule():
    g = Graph("sdpa")
    q, k, v = g.tensor([2, 4, 128, 64]), g.tensor([2, 4, 128, 64]), g.tensor([1, 4, 128, 64])
    with pytest.raises(GraphError, match=r"v \[1, 4, 128, 64\]: batch, head counts"):
        g.sdpa_fwd(q, k, v)


# -- gelu --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("approximate, mode", [("none", "GELU_FWD"), ("NONE", "GELU_FWD"),
                                               ("tanh", "GELU_APPROX_TANH_FWD"), (" TANH ", "GELU_APPROX_TANH_FWD")])
def test_gelu_takes_pytorchs_names_in_any_case(approximate, mode):
    g = Graph("gelu")
    g.gelu(g.tensor([4, 8]), approximate=approximate, output=True)
    assert g.operations[-1].pw_descriptor.mode.name == f"CUDNN_POINTWISE_{mode}"


@pytest.mark.parametrize("approximate, exc", [("erf", ValueError), ("exact", ValueError), (True, TypeError),
                                              (None, TypeError)])
def test_gelu_refuses_another_approximation_naming_it(approximate, exc):
    g = Graph("gelu")
    with pytest.raises(exc, match=r"^approximate: "):
        g.gelu(g.tensor([4, 8]), approximate=approximate)


# -- momentum ----------------------------------------------------------------------------------------------------------
def _norm_operands(g, x_dims=(4, 64, 8, 8)):
    x = g.tensor(list(x_dims))
    pc = [1, x_dims[1], *([1] * (len(x_dims) - 2))]
    return x, g.tensor(pc, data_type=F32), g.tensor(pc, data_type=F32)


@pytest.mark.parametrize("build", [
    lambda g, x, s, b: g.layer_norm(x, s, b, momentum=0.5),
    lambda g, x, s, b: g.batch_norm(x, s, b, momentum=0.9),
    lambda g, x, s, b: g.batch_norm(x, s, b, momentum=0.1),  # the old default, given: no running stats to weigh
    lambda g, x, s, b: g.norm_forward(x, s, b, mode="instance", momentum=0.2),
])
def test_momentum_without_running_statistics_is_refused(build):
    g = Graph("norm")
    x, s, b = _norm_operands(g)
    with pytest.raises(GraphError, match=r"^momentum: .* only to update running statistics"):
        build(g, x, s, b)


def test_running_statistics_of_a_mode_without_them_are_refused_in_inference_too():
    g = Graph("norm")
    x, s, b = _norm_operands(g)
    rm, rv = g.tensor([1, 64, 1, 1], data_type=F32), g.tensor([1, 64, 1, 1], data_type=F32)
    with pytest.raises(GraphError, match=r"^running_mean and running_var: both, and for batch norm only"):
        g.layer_norm(x, s, b, training=False, running_mean=rm, running_var=rv)


@pytest.mark.parametrize("momentum, expected", [(None, 0.1), (0.25, 0.25)])
def test_batch_norm_momentum_defaults_to_0_1_with_running_statistics(momentum, expected):
    g = Graph("bn")
    x, s, b = _norm_operands(g)
    rm, rv = g.tensor([1, 64, 1, 1], data_type=F32), g.tensor([1, 64, 1, 1], data_type=F32)
    out = g.batch_norm(x, s, b, momentum=momentum, running_mean=rm, running_var=rv)
    assert g.operations[-1].exp_avg_factor_desc.scalar_value == pytest.approx(expected)
    assert out["running_mean"] is not None
    cb.build_first_plan(g.build(), device_profile="h200")


def test_batch_norm_without_running_statistics_still_builds():
    g = Graph("bn")
    x, s, b = _norm_operands(g)
    out = g.batch_norm(x, s, b)
    assert out["running_mean"] is None
    g.build()


# -- pointwise parameters ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode, operands, kw, message", [
    ("RELU_FWD", (), dict(elu_alpha=5.0),
     r"^elu_alpha: pointwise RELU_FWD does not read it \(it reads relu_lower_clip"),
    ("ADD", ("b",), dict(relu_lower_clip=5.0), r"^relu_lower_clip: pointwise ADD does not read it"),
    ("ADD", ("b",), dict(axis=1), r"^axis: pointwise ADD does not read it"),
    ("ELU_FWD", (), dict(swish_beta=2.0), r"^swish_beta: pointwise ELU_FWD does not read it \(it reads elu_alpha\)"),
    ("SOFTPLUS_FWD", (), dict(elu_alpha=1.0), r"^elu_alpha: pointwise SOFTPLUS_FWD"),
    ("EXP", (), dict(alpha2=3.0), r"^alpha2: pointwise EXP has no second input"),
    ("RELU_FWD", (), dict(alpha1=2.0, alpha2=3.0), r"^alpha2: pointwise RELU_FWD has no second input"),
])
def test_pointwise_refuses_parameters_the_mode_does_not_read(mode, operands, kw, message):
    g = Graph("pw")
    x = g.tensor([4, 8])
    args = [g.tensor([4, 8]) for _ in operands]
    with pytest.raises(GraphError, match=message):
        g.pointwise(mode, x, *args, **kw)


def test_relu_shortcut_refuses_them_too():
    g = Graph("pw")
    with pytest.raises(GraphError, match=r"^elu_alpha: pointwise RELU_FWD"):
        g.relu(g.tensor([4, 8]), elu_alpha=5.0)


@pytest.mark.parametrize("mode, operands, kw", [
    ("RELU_FWD", (), dict(relu_lower_clip=0.5, relu_upper_clip=6.0, relu_lower_clip_slope=0.01)),
    ("RELU_BWD", ("dy",), dict(relu_lower_clip=0.5)),
    ("ELU_FWD", (), dict(elu_alpha=0.5)),
    ("SWISH_FWD", (), dict(swish_beta=2.0)),
    ("SOFTPLUS_BWD", ("dy",), dict(softplus_beta=2.0)),
    ("ADD", ("b",), dict(alpha1=2.0, alpha2=0.5)),
    ("BINARY_SELECT", ("b", "t"), dict(alpha2=0.5)),
    ("MAX", ("b",), dict(nan_propagation="CUDNN_PROPAGATE_NAN")),
])
def test_pointwise_takes_the_parameters_the_mode_reads(mode, operands, kw):
    g = Graph("pw", io_data_type="float")
    x = g.tensor([4, 8])
    given = {o: g.tensor([4, 8], data_type="boolean" if o == "t" else None) for o in operands}
    g.pointwise(mode, x, given.get("b"), given.get("t"), dy=given.get("dy"), output=True, **kw)
    g.build()


def test_gen_index_takes_axis():
    g = Graph("gi")
    g.gen_index(g.tensor([4, 8]), 1, output=True)
    g.build()


# -- matmul overrides --------------------------------------------------------------------------------------------------
def _matmul(a_dims, b_dims, **overrides):
    g = Graph("mm")
    a, b = g.tensor(a_dims), g.tensor(b_dims)
    kw = {k: g.tensor(list(d), data_type=dt, name=k) for k, (d, dt) in overrides.items()}
    g.matmul(a, b, output=True, **kw)
    return g


@pytest.mark.parametrize("data_type", ["float", "int8", "half"])
def test_matmul_override_of_a_non_integer_or_narrow_type_is_refused(data_type):
    with pytest.raises(GraphError, match=r"^k_override: .* per-batch sizes are INT32 or INT64"):
        _matmul([4, 64, 32], [4, 32, 16], k_override=([4, 1, 1], data_type))


@pytest.mark.parametrize("a, b, shape", [
    ([4, 64, 32], [4, 32, 16], [4, 1, 1, 1]),   # the old docstring's [B,1,1,1] for a 3-d matmul: NOT_SUPPORTED
    ([4, 64, 32], [4, 32, 16], [1, 1, 1]),
    ([2, 4, 64, 32], [2, 4, 32, 16], [2, 4, 1, 1]),  # per (batch, head): NOT_SUPPORTED on 9.19 and 9.28
])
def test_matmul_override_of_another_shape_is_refused(a, b, shape):
    with pytest.raises(GraphError, match=r"^m_override: .* is not \["):
        _matmul(a, b, m_override=(shape, "int32"))


def test_matmul_override_of_a_2d_matmul_is_refused():
    with pytest.raises(GraphError, match=r"^n_override: C \[64, 16\] has no batch dim"):
        _matmul([64, 32], [32, 16], n_override=([1, 1], "int32"))


@pytest.mark.parametrize("data_type", ["int32", "int64"])
def test_matmul_overrides_of_int32_or_int64_plan(data_type):
    g = _matmul([4, 64, 32], [4, 32, 16], m_override=([4, 1, 1], data_type), n_override=([4, 1, 1], data_type),
                k_override=([4, 1, 1], data_type))
    cb.build_first_plan(g.build(), device_profile="h200")


def test_matmul_override_of_a_4d_matmul_is_per_first_batch_dim():
    _matmul([2, 4, 64, 32], [2, 4, 32, 16], m_override=([2, 1, 1, 1], "int32")).build()


# -- group norm --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["group", "group_norm", "CUDNN_GROUP_NORM"])
def test_group_norm_is_refused_for_want_of_a_groups_parameter(mode):
    g = Graph("gn")
    x, s, b = _norm_operands(g)
    with pytest.raises(GraphError, match=r"^mode: group norm needs a number of groups"):
        g.norm_forward(x, s, b, mode=mode)
    with pytest.raises(GraphError, match=r"^mode: group norm needs a number of groups"):
        g.norm_backward(x, x, s, s, s, mode=mode)


# -- max-pool index ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("window, index_data_type", [(16, "int8"), (12, "int8"), (17, "uint8")])
def test_pool_index_too_narrow_for_the_window_is_refused(window, index_data_type):
    g = Graph("pool")
    x = g.tensor([2, 8, 34, 34], layout="nhwc")
    with pytest.raises(GraphError, match=r"^index_data_type: CUDNN_DATA_U?INT8 holds taps up to"):
        g.pool(x, window=window, stride=window, index=True, index_data_type=index_data_type)


@pytest.mark.parametrize("window, index_data_type", [(2, "int8"), ([8, 16], "int8"), (16, "int32"), (16, "uint8")])
def test_pool_index_wide_enough_plans(window, index_data_type):
    g = Graph("pool")
    x = g.tensor([2, 8, 32, 32], layout="nhwc")
    g.pool(x, window=window, stride=window, index=True, index_data_type=index_data_type)
    cb.build_first_plan(g.build(), device_profile="h200")


def test_pool_backward_refuses_an_index_too_narrow_for_the_window():
    g = Graph("pool")
    dy = g.tensor([2, 8, 2, 2], layout="nhwc")
    index = g.tensor([2, 8, 2, 2], layout="nhwc", data_type="int8")
    with pytest.raises(GraphError, match=r"^index: CUDNN_DATA_INT8 holds taps up to 127, but window \[16, 16\] has "
                                         r"256; give an index tensor of a wider data type"):
        g.resample_bwd(dy, [2, 8, 32, 32], window=16, stride=16, index=index)


# -- moe backward ------------------------------------------------------------------------------------------------------
needs_moe_bwd = pytest.mark.skipif(
    not loaded_has(cb.core.since_of("CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_BWD_DESCRIPTOR")),
    reason="the loaded cuDNN has no MoE grouped matmul backward")


@needs_moe_bwd
@pytest.mark.parametrize("tokens, dout, offsets, message", [
    ([64, 32], [1, 64, 16], ([4, 1, 1], "int32"), r"^tokens: \[64, 32\] is not \[1, T, K\]"),
    ([2, 64, 32], [2, 64, 16], ([4, 1, 1], "int32"), r"^tokens: \[2, 64, 32\] is not \[1, T, K\]"),
    ([1, 64, 32], [1, 48, 16], ([4, 1, 1], "int32"), r"^doutput: \[1, 48, 16\] is not \[1, T, N\] with the T = 64"),
    ([1, 64, 32], [1, 64], ([4, 1, 1], "int32"), r"^doutput: \[1, 64\] is not \[1, T, N\]"),
    ([1, 64, 32], [1, 64, 16], ([3, 1, 1], "int32"), r"^first_token_offset: .* is not INT32 \[4, 1, 1\] \(one "
                                                     r"offset per expert of num_experts=4\)"),
    ([1, 64, 32], [1, 64, 16], ([4, 1, 1], "int64"), r"^first_token_offset: .* is not INT32 \[4, 1, 1\]"),
])
def test_moe_backward_shares_the_forwards_checks(tokens, dout, offsets, message):
    g = Graph("moe")
    t, d = g.tensor(tokens), g.tensor(dout)
    o = g.tensor(offsets[0], data_type=offsets[1])
    with pytest.raises(GraphError, match=message):
        g.moe_grouped_matmul_bwd(t, d, o, num_experts=4)


@needs_moe_bwd
def test_moe_backward_of_matching_operands_builds():
    g = Graph("moe")
    g.moe_grouped_matmul_bwd(g.tensor([1, 64, 32]), g.tensor([1, 64, 16]), g.tensor([4, 1, 1], data_type="int32"),
                             num_experts=4)
    g.build()


# -- bool parameters ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["no", "", 0, 1, None, 1.0])
def test_as_bool_refuses_anything_but_a_bool(value):
    with pytest.raises(TypeError, match=r"^flag: expected True or False, not "):
        as_bool(value, "flag")


@pytest.mark.parametrize("value, expected", [(True, True), (False, False), (np.True_, True), (np.False_, False)])
def test_as_bool_takes_bools_and_numpy_bools(value, expected):
    assert as_bool(value, "flag") is expected


@pytest.mark.parametrize("parameter, call", [
    ("training", lambda g, x, s, b: g.layer_norm(x, s, b, training="no")),
    ("training", lambda g, x, s, b: g.rms_norm(x, s, training="no")),
    ("dbias", lambda g, x, s, b: g.layer_norm_bwd(x, x, s, s, s, dbias="no")),
    ("index", lambda g, x, s, b: g.pool(x, index="no")),
    ("virtual", lambda g, x, s, b: g.tensor([2, 2], virtual="no")),
    ("by_value", lambda g, x, s, b: g.tensor([1, 1], by_value="no")),
    ("deterministic", lambda g, x, s, b: g.reduction(x, deterministic="no")),
])
def test_truthy_strings_are_refused_for_bool_parameters(parameter, call):
    g = Graph("b")
    x, s, b = _norm_operands(g, (4, 64, 1, 1))
    with pytest.raises(TypeError, match=rf"^{parameter}: expected True or False, not str"):
        call(g, x, s, b)


@needs_sdpa_fwd
def test_sdpa_stats_refuses_a_truthy_string():
    g = Graph("sdpa")
    q = g.tensor([2, 4, 128, 64])
    with pytest.raises(TypeError, match=r"^stats: expected True or False, not str"):
        g.sdpa_fwd(q, g.tensor([2, 4, 128, 64]), g.tensor([2, 4, 128, 64]), stats="no")


def test_numpy_bools_are_taken_for_bool_parameters():
    g = Graph("b")
    x, s, b = _norm_operands(g, (4, 64, 1, 1))
    assert g.layer_norm(x, s, b, training=np.False_)["mean"] is None
    assert g.tensor([2, 2], virtual=np.True_).virtual
    assert g.matmul(g.tensor([2, 2]), g.tensor([2, 2]), output=np.True_).virtual is False
    assert g.matmul(g.tensor([2, 2]), g.tensor([2, 2]), output=np.False_).virtual is True


def test_output_of_another_type_is_still_refused():
    g = Graph("b")
    with pytest.raises(TypeError, match=r"^output: expected True, False or a Tensor, not int"):
        g.matmul(g.tensor([2, 2]), g.tensor([2, 2]), output=1)


# -- layout and strides ------------------------------------------------------------------------------------------------
def test_layout_contradicting_the_strides_is_refused():
    g = Graph("t")
    with pytest.raises(ValueError, match=r"^layout and strides: layout 'nhwc' gives strides \[64, 1, 16, 4\]"):
        g.tensor([2, 4, 4, 4], [64, 16, 4, 1], layout="nhwc")
    with pytest.raises(ValueError, match=r"^layout and strides: layout 'bshd'"):
        g.tensor([2, 4, 8, 16], [512, 128, 16, 1], layout="bshd")


def test_layout_agreeing_with_the_strides_is_taken():
    g = Graph("t")
    assert list(g.tensor([2, 4, 4, 4], [64, 1, 16, 4], layout="nhwc").strides) == [64, 1, 16, 4]
    assert list(g.tensor([2, 4, 4, 4], [64, 16, 4, 1], layout="nchw").strides) == [64, 16, 4, 1]


# -- messages name the parameter ---------------------------------------------------------------------------------------
def test_stats_data_type_is_named():
    g = Graph("n")
    x, s, b = _norm_operands(g)
    with pytest.raises(GraphError, match=r"^stats_data_type: CUDNN_DATA_HALF, but .* must be CUDNN_DATA_FLOAT"):
        g.batch_norm(x, s, b, stats_data_type="half")


@needs_sdpa_fwd
@pytest.mark.parametrize("value", ["x", True])
def test_attn_scale_is_named(value):
    g = Graph("sdpa")
    q = g.tensor([2, 4, 128, 64])
    with pytest.raises(TypeError, match=r"^attn_scale: a CUDNN_DATA_FLOAT scalar takes a real number"):
        g.sdpa_fwd(q, g.tensor([2, 4, 128, 64]), g.tensor([2, 4, 128, 64]), attn_scale=value)


@pytest.mark.parametrize("call, parameter", [
    (lambda g, x, s, b: g.layer_norm(x, s, b, epsilon="x"), "epsilon"),
    (lambda g, x, s, b: g.batch_norm(x, s, b, momentum="x", running_mean=s, running_var=b), "momentum"),
])
def test_norm_scalars_are_named(call, parameter):
    g = Graph("n")
    x, s, b = _norm_operands(g)
    with pytest.raises(TypeError, match=rf"^{parameter}: "):
        call(g, x, s, b)


def test_a_tensor_whose_uid_the_graph_gives_another_is_named_by_its_parameter():
    g = Graph("mm")
    a = g.tensor([2, 2])
    stranger = cb.typed.Tensor(data_type=D.CUDNN_DATA_HALF, dimensions=[2, 2], strides=[2, 1], unique_id=a.uid,
                               byte_alignment=16).finalize()
    with pytest.raises(GraphError, match=r"^b: .* has a UID this graph gives"):
        g.matmul(a, stranger)


# -- band --------------------------------------------------------------------------------------------------------------
needs_band = pytest.mark.skipif(
    not loaded_has(cb.core.since_of("CUDNN_BACKEND_OPERATION_CONTRACT_BAND_MATRIX_DESCRIPTOR")),
    reason="the loaded cuDNN has no contract band matrix")


@needs_band
@pytest.mark.parametrize("lower, upper, parameter", [(100, 2, "lower"), (2, 16, "upper")])
def test_contract_band_wider_than_the_matrix_is_refused(lower, upper, parameter):
    g = Graph("band")
    with pytest.raises(GraphError, match=rf"^{parameter}: {max(lower, upper)} diagonals, but x \[2, 16, 16\] has 16 "
                                         r"along axis 2; a bandwidth is at most 15"):
        g.contract_band_matrix(g.tensor([2, 16, 16]), lower=lower, upper=upper, axis=2, output=True)


@needs_band
def test_contract_band_of_the_widest_band_builds():
    # (one side at its widest: cuDNN 9.10 also wants the band no wider than the matrix, lower + upper + 1 <= 16)
    g = Graph("band")
    y = g.contract_band_matrix(g.tensor([2, 16, 16]), lower=15, upper=0, axis=2, output=True)
    assert y.shape == (2, 16, 16)
    g.build()


@needs_band
def test_expand_band_wider_than_the_matrix_is_refused():
    g = Graph("band")
    with pytest.raises(GraphError, match=r"^lower: 17 diagonals, but output_dims \[2, 16, 16\] has 16 along axis 2; a "
                                         r"bandwidth is at most 15"):
        g.expand_band_matrix(g.tensor([2, 16, 20]), [2, 16, 16], lower=17, upper=2, axis=2, output=True)
    assert g.expand_band_matrix(g.tensor([2, 16, 3]), [2, 16, 16], lower=1, upper=1, axis=2, output=True).shape == \
        (2, 16, 16)


# -- output_data_type ----------------------------------------------------------------------------------------------------
def _out_type_cases():
    def resample(g, x, dt):
        return g.resample(x, output_data_type=dt)["y"]

    def concat(g, x, dt):
        return g.concat([x, x], 1, output_data_type=dt)

    def layer_norm(g, x, dt):
        scale = g.tensor([1, 8, 8, 8], data_type="float", layout="nhwc")
        return g.layer_norm(x, scale, g.tensor([1, 8, 8, 8], data_type="float", layout="nhwc"),
                            output_data_type=dt)["y"]

    return [resample, concat, layer_norm]  # (transpose and slice keep their type: cuDNN refuses another)


@pytest.mark.parametrize("make", _out_type_cases(), ids=lambda f: f.__name__)
@pytest.mark.parametrize("given", [F32, 0, "float"])
def test_output_data_type_float_is_taken_though_it_is_zero(make, given):
    # CUDNN_DATA_FLOAT is 0: "output_data_type or the input's type" took it for not given
    g = Graph("out_type", io_data_type="half")
    x = g.tensor([2, 8, 8, 8], layout="nhwc")
    assert int(make(g, x, given).data_type) == int(F32)
    assert int(make(g, x, None).data_type) == int(D.CUDNN_DATA_HALF)


def test_momentum_is_a_weight_from_0_to_1_checked_before_any_tensor_is_made():
    g = Graph("bn")
    t = {n: g.tensor([1, 8, 1, 1], data_type="float", name=n) for n in ("sum", "sq", "scale", "bias")}
    made = dict(g.tensors)
    for bad in (2.0, -0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"^momentum: .*; it must be a number from 0 to 1"):
            g.bn_finalize(t["sum"], t["sq"], t["scale"], t["bias"], accum_count=8, momentum=bad)
        with pytest.raises(ValueError, match=r"^epsilon: "):
            g.bn_finalize(t["sum"], t["sq"], t["scale"], t["bias"], accum_count=8, epsilon=bad if bad != 2.0 else -1)
    for bad in (True, "0.1"):
        with pytest.raises(TypeError, match=r"^momentum: expected a number from 0 to 1 or a Tensor, not (bool|str)"):
            g.bn_finalize(t["sum"], t["sq"], t["scale"], t["bias"], accum_count=8, momentum=bad)
    assert g.tensors == made
    x = g.tensor([2, 8, 4, 4], layout="nhwc", name="x")
    made = dict(g.tensors)
    with pytest.raises(ValueError, match=r"^momentum: 1.5; it must be"):
        g.batch_norm(x, t["scale"], t["bias"], momentum=1.5, running_mean=t["sum"], running_var=t["sq"])
    assert g.tensors == made and g.operations == []  # a refused call leaves the graph as it was
    g.bn_finalize(t["sum"], t["sq"], t["scale"], t["bias"], accum_count=8, momentum=1)
    g.batch_norm(x, t["scale"], t["bias"], momentum=0.0, running_mean=t["sum"], running_var=t["sq"])


def test_bn_finalize_not_in_fp32_is_explained():
    # cuDNN refuses another math_prec with NOT_SUPPORTED and no reason, an fp16 statistic with a bare condition
    g = Graph("bn")
    t = {n: g.tensor([1, 8, 1, 1], data_type="float", name=n) for n in ("sum", "sq", "scale", "bias")}
    with pytest.raises(cb.CudnnError, match=r"hint: math_prec is CUDNN_DATA_HALF: BN_FINALIZE_STATISTICS computes "
                                            r"in CUDNN_DATA_FLOAT"):
        g.bn_finalize(t["sum"], t["sq"], t["scale"], t["bias"], accum_count=8, compute="half")
    half = g.tensor([1, 8, 1, 1], data_type="half", name="half")
    with pytest.raises(cb.CudnnError, match=r"hint: scale_desc is CUDNN_DATA_HALF: BN_FINALIZE"):
        g.bn_finalize(t["sum"], t["sq"], half, t["bias"], accum_count=8)


def test_a_name_that_prefixes_an_operations_tensors_is_a_str():
    g = Graph("names")
    x = g.tensor([1, 8, 4, 4], name="x")
    calls = {"reshape": lambda n: g.reshape(x, [1, 8, 16], name=n),
             "concat": lambda n: g.concat([x, x], 1, name=n),
             "softmax": lambda n: g.softmax(x, name=n),
             "gen_stats": lambda n: g.gen_stats(x, name=n),
             "rng": lambda n: g.rng([1, 8, 4, 4], name=n),
             "pool": lambda n: g.pool(x, window=[2, 2], name=n)}
    for method, call in calls.items():
        for bad in (5, b"y", ["y"]):
            with pytest.raises(TypeError, match=r"^name: expected a str, not "):
                call(bad)
    assert list(g.tensors.values()) == [x] and g.operations == []
    assert g.reshape(x, [1, 8, 16], name="flat").name == "flat_y"
    assert g.reshape(x, [1, 8, 16], name=None).name == "reshape_y"  # None: the method's own name, as elsewhere


def test_bn_finalize_inference_is_a_truth_value():
    g = Graph("bn")
    t = {n: g.tensor([1, 8, 1, 1], data_type="float", name=n) for n in ("sum", "sq", "scale", "bias")}
    with pytest.raises(TypeError, match="^inference: "):
        g.bn_finalize(t["sum"], t["sq"], t["scale"], t["bias"], accum_count=8, inference="no")


def test_keywords_of_another_type_are_named():
    g = Graph("kw", io_data_type="float")
    with pytest.raises(TypeError, match=r"^layout: expected a str"):
        g.tensor([1, 8, 8, 8], layout=np.array(["nhwc", "nchw"]))
    for name in (1.5, np.array([1, 2])):
        with pytest.raises(TypeError, match=r"^name: expected a str"):
            g.scalar(1.0, name=name)
    x = g.tensor([2, 8, 4, 4], layout="nhwc")
    scale = g.tensor([1, 8, 4, 4], layout="nhwc")
    with pytest.raises(TypeError, match=r"^epsilon: expected a number >= 0 or a Tensor, not None"):
        g.layer_norm(x, scale, epsilon=None)
    for bad in (float("nan"), -1e-5, float("inf")):
        with pytest.raises(ValueError, match=r"^epsilon: .*; it must be a finite number >= 0"):
            g.layer_norm(x, scale, epsilon=bad)
    g.layer_norm(x, scale, epsilon=0)


@pytest.mark.skipif(not loaded_has("9.20.0"), reason="DIAGONAL_BAND_MASK came with cuDNN 9.20")
def test_a_band_comparison_of_another_type_names_comparison():
    g = Graph("band", io_data_type="float")
    scores = g.tensor([1, 2, 64, 64])
    for bad in (None, 1.5, "zz"):
        with pytest.raises((TypeError, ValueError), match=r"^comparison: "):
            g.diagonal_band_mask(scores, comparison=bad)


@needs_sdpa_fwd
@pytest.mark.skipif(not loaded_has(cb.since_of("CUDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_QDESC")),
                    reason="SDPA sequence lengths came after SDPA forward")
@pytest.mark.parametrize("given", ["seq_len_q", "seq_len_kv"])
def test_one_sequence_length_without_the_other_is_refused(given):
    # cuDNN 9.28 refuses one alone; 9.19 plans it, masking whatever it does
    g = Graph("sdpa")
    q, k, v = (g.tensor([2, 4, 128, 64], cb.graph.shapes.bshd_strides([2, 4, 128, 64]), "half") for _ in range(3))
    lengths = g.tensor([2, 1, 1, 1], data_type="int32")
    missing = "seq_len_kv" if given == "seq_len_q" else "seq_len_q"
    with pytest.raises(GraphError, match=rf"^{missing}: {given} is given without it; padding masks both sides"):
        g.sdpa_fwd(q, k, v, **{given: lengths})
    assert g.sdpa_fwd(q, k, v, seq_len_q=lengths, seq_len_kv=lengths)["o"] is not None


@pytest.mark.parametrize("method", ["layer_norm", "rms_norm"])
def test_a_norm_whose_scale_spans_no_axis_is_refused(method):
    # each element would be normalized by itself: layer norm would give the bias; cuDNN plans it
    g = Graph("norm")
    x = g.tensor([4, 64, 1, 1], data_type="half")
    one = g.tensor([1, 1, 1, 1], data_type="float")
    with pytest.raises(GraphError, match=r"^scale: \[1, 1, 1, 1\] spans no axis of x \[4, 64, 1, 1\] but the batch: "
                                         r"each element would be normalized by itself"):
        getattr(g, method)(x, one, one)
    scale = g.tensor([1, 64, 1, 1], data_type="float")
    assert getattr(g, method)(x, scale, scale)["y"] is not None
    rows = g.tensor([4, 1, 1, 1], data_type="half")  # one element a row: nothing the scale could span
    assert getattr(g, method)(rows, one, one)["y"] is not None


def test_a_reduction_over_no_axis_and_add_of_tensors_are_refused():
    g = Graph("r")
    x, b = g.tensor([1, 4, 4, 4]), g.tensor([1, 4, 1, 1])
    with pytest.raises(GraphError, match=r"^axes: \[\] reduces no axis; name the axes to reduce, or give None"):
        g.reduction(x, "ADD", axes=[])
    for args in ((x, b), (x,)):  # sub, mul and div are pointwise; add adds an operation
        with pytest.raises(TypeError, match=r"^add\(\) adds an operation descriptor to the graph, not tensors "
                                            r"together: for x \+ b use bias\(x, b\) or pointwise\('ADD', x, b=b\)$"):
            g.add(*args)
    assert len(g.operations) == 0
