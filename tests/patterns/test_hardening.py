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
