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

    p = P.softmax(stats=np.bool_(False), build=False)
    assert "stats" not in p.tensors
    with pytest.raises(TypeError, match="softmax"):
        P.softmax((2, 4, 8, 8), True)  # too many positional arguments: Python's own words
    assert P.softmax.__name__ == "softmax" and "stats" in inspect.signature(P.softmax).parameters


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
