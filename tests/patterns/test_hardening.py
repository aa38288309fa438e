"""Hardening of the patterns: every size parameter of every pattern in the catalogue refuses zero,
negative, float, bool, str, None and int64-overflowing values with a TypeError/ValueError naming the parameter;
never a foreign exception, never a half-built graph."""
import inspect

import pytest

import cudnn_backend as cb
from cudnn_backend import patterns as P
from cudnn_backend.core.versions import parse_version

FOREIGN = (AttributeError, OverflowError, RecursionError, UnicodeDecodeError, ZeroDivisionError, IndexError,
           MemoryError, UnicodeEncodeError, KeyError, SystemError)
BAD = [(-1, ValueError), (1.5, TypeError), (True, TypeError), ("8", TypeError), (None, TypeError),
       (2 ** 63, ValueError), ("\ud800", TypeError)]
# parameters where 0 is a valid value (paddings; the in-place input index)
ZERO_OK = {"padding", "inplace_index"}


def _size_parameters():
    for name, factory in sorted(P.CATALOGUE.items()):
        for pname, p in inspect.signature(factory).parameters.items():
            if type(p.default) is int:
                yield name, factory, pname


SIZE_PARAMETERS = list(_size_parameters())


def test_every_pattern_has_its_size_parameters_listed():
    assert len(SIZE_PARAMETERS) > 60
    assert {name for name, _, _ in SIZE_PARAMETERS} >= {"conv_fwd", "matmul_bias_gelu", "layer_norm_fwd", "sdpa_fwd",
                                                         "bn_finalize", "pooling", "concat"}


@pytest.mark.parametrize("name, factory, parameter", SIZE_PARAMETERS,
                         ids=[f"{n}-{p}" for n, _, p in SIZE_PARAMETERS])
def test_pattern_size_parameters_refuse_bad_values_naming_them(name, factory, parameter):
    cases = BAD + ([] if parameter in ZERO_OK else [(0, ValueError)])
    for bad, exc in cases:
        if parameter == "inplace_index" and bad is None:
            continue  # None: no input in place
        try:
            factory(**{parameter: bad}, build=False)
        except cb.CudnnVersionError:
            pytest.skip(f"{name} needs a newer cuDNN")
        except (TypeError, ValueError) as e:
            assert not isinstance(e, FOREIGN), repr(e)
            assert isinstance(e, exc) or isinstance(e, cb.errors.GraphError), (bad, repr(e))
            assert parameter in str(e), f"{name}({parameter}={bad!r}): {e}"
        else:
            pytest.fail(f"{name}({parameter}={bad!r}) was accepted")


@pytest.mark.parametrize("name", sorted(P.CATALOGUE))
def test_every_pattern_builds_with_its_defaults_or_says_which_cudnn_it_needs(name):
    try:
        p = P.CATALOGUE[name](build=False)
    except cb.CudnnVersionError as e:
        assert parse_version(e.since) > cb.get_version() and "needs cuDNN" in str(e)
        return
    assert isinstance(p, P.Pattern) and p.name == name and not p.built
    assert p.operations and p.tensors and all(not t.closed for t in p.tensors.values())
    assert p.outputs(), name
    assert set(p.inputs()).isdisjoint(p.outputs())


def _flag_parameters():
    for name, factory in sorted(P.CATALOGUE.items()):
        for pname, p in inspect.signature(factory).parameters.items():
            if isinstance(p.default, bool) and pname != "build":
                yield name, factory, pname


FLAG_PARAMETERS = list(_flag_parameters())


def test_every_pattern_flag_is_listed():
    assert {p for _, _, p in FLAG_PARAMETERS} >= {"training", "causal", "stats", "running_stats", "bias", "matmul"}


@pytest.mark.parametrize("name, factory, parameter", FLAG_PARAMETERS + [(n, f, "build") for n, f in
                                                                         sorted(P.CATALOGUE.items())],
                         ids=[f"{n}-{p}" for n, _, p in FLAG_PARAMETERS] + [f"{n}-build" for n in sorted(P.CATALOGUE)])
def test_pattern_flags_take_only_a_bool_naming_the_parameter(name, factory, parameter):
    """"no" or 0 would act as its truth value: a graph other than the one asked for."""
    for bad in ("no", 0, 1, None, "False"):
        with pytest.raises(TypeError, match=f"^{parameter}: expected True or False"):
            factory(**{parameter: bad}) if parameter == "build" else factory(**{parameter: bad}, build=False)


def test_pattern_flags_take_numpy_bools_and_python_names_the_call_otherwise():
    import numpy as np

    p = P.layer_norm_fwd(tokens=8, hidden=16, training=np.bool_(False), build=False)
    assert "mean" not in p.tensors
    with pytest.raises(TypeError, match="layer_norm_fwd"):
        P.layer_norm_fwd(8, 16, True)  # too many positional arguments: Python's own words
    assert P.layer_norm_fwd.__name__ == "layer_norm_fwd" and "training" in inspect.signature(P.layer_norm_fwd).parameters


@pytest.mark.parametrize("name", sorted(P.CATALOGUE))
def test_a_pattern_records_every_argument_it_was_made_with(name):
    factory = P.CATALOGUE[name]
    try:
        p = factory(build=False)
    except cb.CudnnVersionError:
        pytest.skip(f"{name} needs a newer cuDNN")
    expected = set(inspect.signature(factory).parameters) - {"build"}
    assert expected <= set(p.params), name
    if "data_type" in p.params:  # by its short name, whatever form it was given in
        again = factory(data_type=cb.DataType[f"CUDNN_DATA_{p.params['data_type'].upper()}"]
                        if p.params["data_type"] in ("half", "float") else p.params["data_type"], build=False)
        assert again.params["data_type"] == p.params["data_type"]
        assert p.params["data_type"] in ("fp16", "bf16", "fp32", "fp8_e4m3", "fp8_e5m2", "int8"), p.params


def test_pattern_params_name_the_data_type_given_as_a_dtype_or_alias():
    import numpy as np

    assert P.conv_fwd(data_type="half", build=False).params["data_type"] == "fp16"
    assert P.conv_fwd(data_type=np.float32, build=False).params["data_type"] == "fp32"
    assert P.matmul_bias_relu(data_type=cb.DataType.CUDNN_DATA_BFLOAT16, build=False).params["data_type"] == "bf16"


@pytest.mark.parametrize("gelu, mode", [("tanh", "GELU_APPROX_TANH_FWD"), ("Tanh", "GELU_APPROX_TANH_FWD"),
                                        ("EXACT", "GELU_FWD"), ("ERF", "GELU_FWD"), ("erf", "GELU_FWD"),
                                        (cb.PointwiseMode.CUDNN_POINTWISE_GELU_FWD, "GELU_FWD")])
def test_matmul_bias_gelu_takes_its_gelu_names_in_any_case(gelu, mode):
    assert P.matmul_bias_gelu(gelu=gelu, build=False).params["gelu"] == f"CUDNN_POINTWISE_{mode}"


@pytest.mark.parametrize("gelu, exc", [("sigmoid_fwd", ValueError), ("relu_fwd", ValueError), ("tanh_fwd", ValueError),
                                       (cb.PointwiseMode.CUDNN_POINTWISE_TANH_FWD, ValueError), (3, TypeError),
                                       (None, TypeError)])
def test_matmul_bias_gelu_refuses_a_mode_that_is_no_gelu(gelu, exc):
    # (its reference computes GELU: a graph of another activation would be checked against the wrong math)
    with pytest.raises(exc, match=r"^gelu: .* is no GELU: give 'erf', 'exact', 'tanh'"):
        P.matmul_bias_gelu(gelu=gelu, build=False)


def test_batch_norm_names_the_statistics_it_reads_and_those_it_writes_apart():
    p = P.batch_norm_fwd(n=2, c=3, h=4, w=5, build=False)
    assert {"running_mean", "running_var"} <= set(p.inputs())
    assert {"next_running_mean", "next_running_var"} <= set(p.outputs())
    assert p.running_mean.uid != p.next_running_mean.uid
    assert "next_running_mean" not in P.batch_norm_fwd(n=2, c=3, h=4, w=5, running_stats=False, build=False).tensors


def test_reduction_over_every_axis_and_by_any_op_form():
    p = P.reduction(dims=(2, 3, 4, 5), axes=None, build=False)
    assert p.params["axes"] == (0, 1, 2, 3) and list(p.y.shape) == [1, 1, 1, 1]
    assert P.reduction(op=cb.ReduceTensorOp.CUDNN_REDUCE_TENSOR_MUL, build=False).params["op"] == "MUL"
    assert P.reduction(op="amax", build=False).params["op"] == "AMAX"
    with pytest.raises(ValueError, match=r"^layout: 'xyz' is not one of"):
        P.reduction(dims=(2, 3), layout="xyz", build=False)  # (checked though two dims have no use for it)


@pytest.mark.parametrize("op", [op.name.removeprefix("CUDNN_REDUCE_TENSOR_") for op in cb.ReduceTensorOp])
def test_reduction_reference_computes_every_op(op):
    torch = pytest.importorskip("torch")
    import numpy as np

    try:
        p = P.reduction(dims=(2, 3, 4), axes=(0, 2), op=op, build=False)
    except cb.CudnnNotSupportedError:  # (9.19-9.28: the reduction descriptor takes ADD, MUL, MIN, MAX, AMAX)
        pytest.skip(f"cuDNN {cb.get_version()} refuses a REDUCTION descriptor of {op}")
    x = torch.tensor(np.random.default_rng(1).standard_normal((2, 3, 4)))
    x[0, 0, 0] = 0.0
    got = p.reference({"x": x})["y"].numpy()
    xx = x.numpy()
    want = {"ADD": xx.sum((0, 2)), "MUL": xx.prod((0, 2)), "MIN": xx.min((0, 2)), "MAX": xx.max((0, 2)),
            "AMAX": np.abs(xx).max((0, 2)), "AVG": xx.mean((0, 2)), "NORM1": np.abs(xx).sum((0, 2)),
            "NORM2": np.sqrt((xx * xx).sum((0, 2))),
            "MUL_NO_ZEROS": np.where(xx == 0, 1.0, xx).prod((0, 2))}[op].reshape(1, 3, 1)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("margin", [(1,), (1, 2, 3)])
def test_slice_matmul_margin_takes_two_and_says_so(margin):
    with pytest.raises(ValueError, match=r"^margin: expected two margins"):
        P.slice_matmul(margin=margin, build=False)


@pytest.mark.parametrize("name", ["sdpa_fwd", "sdpa_bwd", "sdpa_composite_fwd", "sdpa_composite_bwd",
                                  "sdpa_softmax_fwd", "diagonal_band_mask"])
@pytest.mark.parametrize("scale", [float("inf"), -float("inf")])
def test_an_infinite_attention_scale_is_refused(name, scale):
    try:
        with pytest.raises(ValueError, match=r"^attn_scale: -?inf makes every score infinite"):
            P.CATALOGUE[name](attn_scale=scale, build=False)
    except cb.CudnnVersionError:
        pytest.skip(f"{name} needs a newer cuDNN")


def test_a_pattern_names_its_tensors_when_asked_for_one_it_lacks():
    p = P.matmul_bias_relu(batch=1, m=16, n=16, k=16, build=False)
    with pytest.raises(KeyError, match=r"pattern 'matmul_bias_relu' has no tensor 'nope'; it has a, b, bias, "):
        p["nope"]
