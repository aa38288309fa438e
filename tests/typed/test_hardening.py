"""Hardening of the typed layer: hostile sizes through keywords and properties, FRACTION attributes
given as (numerator, denominator) pairs and ``fractions.Fraction``, and the statistics checks through typed
operations."""
import fractions

import pytest

import cudnn_backend as cb
from cudnn_backend.errors import GraphError
from cudnn_backend.typed import (
    OperationGenStats,
    OperationResampleFwd,
    Resample,
    Tensor,
)

FOREIGN = (AttributeError, OverflowError, RecursionError, UnicodeDecodeError, ZeroDivisionError, IndexError,
           MemoryError, UnicodeEncodeError, KeyError, SystemError)


class LyingLen:
    def __len__(self):
        return 2 ** 62

    def __iter__(self):
        return iter([1])


class RaisingIndex:
    def __index__(self):
        raise ZeroDivisionError("no index")


@pytest.mark.parametrize("keyword, attribute", [("dimensions", "CUDNN_ATTR_TENSOR_DIMENSIONS"),
                                                ("strides", "CUDNN_ATTR_TENSOR_STRIDES")])
@pytest.mark.parametrize("bad, exc, match", [
    (0, ValueError, "element 1 is 0; it must be >= 1"), (-1, ValueError, "element 1 is -1; it must be >= 1"),
    (3.5, TypeError, "expected an integer, not float"), (False, TypeError, "expected an integer, not bool"),
    ("64", TypeError, "expected an integer, not str"), (2 ** 64, ValueError, "does not fit in 64 bits"),
    (RaisingIndex(), TypeError, "cannot read an integer from RaisingIndex"),
])
def test_typed_sizes_refused_naming_the_attribute(keyword, attribute, bad, exc, match):
    for make in (lambda: Tensor(**{keyword: [8, bad, 4]}), lambda: setattr(Tensor(), keyword, [8, bad, 4])):
        with pytest.raises(exc, match=f"{attribute}.*{match}") as info:
            make()
        assert not isinstance(info.value, FOREIGN)


def test_typed_lying_len_and_scalars():
    with pytest.raises(ValueError, match="claims 4611686018427387904 elements"):
        Tensor(dimensions=LyingLen())
    with pytest.raises(TypeError, match="CUDNN_ATTR_TENSOR_UNIQUE_ID: expected an integer, not float"):
        Tensor(unique_id=1.0)
    with pytest.raises(TypeError, match="CUDNN_ATTR_TENSOR_IS_VIRTUAL: expected a bool"):
        Tensor(is_virtual="yes")
    with pytest.raises(ValueError, match="CUDNN_ATTR_TENSOR_DATA_TYPE: '\\\\ud800' is not a name of DataType"):
        Tensor(data_type="\ud800")


def _resample(window, stride, pre=(0, 0), post=(0, 0)):
    return Resample(mode="CUDNN_RESAMPLE_AVGPOOL_INCLUDE_PADDING", comp_type="CUDNN_DATA_FLOAT", spatial_dims=2,
                    window_dims=window, strides=stride, pre_paddings=pre, post_paddings=post)


@pytest.mark.parametrize("window, stride, pre, post, expected", [
    ([(3, 1), (2, 1)], [(2, 1), (2, 1)], [(0, 1), (0, 1)], [(1, 2), (0, 1)],
     ([(3, 1), (2, 1)], [(2, 1), (2, 1)], [(0, 1), (0, 1)], [(1, 2), (0, 1)])),
    ([fractions.Fraction(3), fractions.Fraction(5, 2)], [fractions.Fraction(1, 2), 2], [0, 0], [fractions.Fraction(1, 2)] * 2,
     ([(3, 1), (5, 2)], [(1, 2), (2, 1)], [(0, 1), (0, 1)], [(1, 2), (1, 2)])),
])
def test_fraction_attributes_take_pairs_and_fractions(window, stride, pre, post, expected):
    # FRACTION is chosen for pairs and Fractions (INT64 otherwise); cuDNN reads them back as (numerator, denominator)
    rs = _resample(window, stride, pre, post).finalize()
    for kw, want in zip(("window_dims", "strides", "pre_paddings", "post_paddings"), expected):
        assert rs.get(getattr(cb, f"CUDNN_ATTR_RESAMPLE_{kw.upper()}"), cb.CUDNN_TYPE_FRACTION) == want, kw
    one = Resample(window_dims=fractions.Fraction(3, 2))  # a single Fraction (or one pair) is one element
    assert one.attribute_type_of(cb.CUDNN_ATTR_RESAMPLE_WINDOW_DIMS) == cb.CUDNN_TYPE_FRACTION
    assert one.window_dims == [(3, 2)]


@pytest.mark.parametrize("bad, exc, match", [
    ([(1, 0), (1, 1)], ValueError, "zero denominator"), ([(1.5, 1), (1, 1)], TypeError, "expected an integer, not float"),
    ([(True, 1), (1, 1)], TypeError, "expected an integer, not bool"), ([(2 ** 63, 1)], ValueError, "64 bits"),
    ([(-1, 2), (1, 1)], ValueError, "must be >= 1"), ([fractions.Fraction(0)], ValueError, "must be >= 1"),
])
def test_fraction_attributes_refuse_bad_values(bad, exc, match):
    with pytest.raises(exc, match=f"CUDNN_ATTR_RESAMPLE_WINDOW_DIMS.*{match}"):
        Resample(window_dims=bad)


def test_fractions_reach_the_pooling_output_shape():
    from cudnn_backend.graph import Graph

    g = Graph()
    x = g.tensor([2, 8, 16, 16], layout="nhwc")
    out = g.resample(x, mode="avgpool", window=(fractions.Fraction(2), (2, 1)), stride=(2, 2), pre_padding=0,
                     output=True)
    assert out["y"].shape == (2, 8, 8, 8)
    op = g.operations[0]
    assert isinstance(op, OperationResampleFwd)
    assert op.desc.window_dims in ([(2, 1), (2, 1)], [2, 2])
    assert g.build().finalized


def test_gen_stats_through_typed_operations_names_the_tensors():
    x = Tensor(data_type="CUDNN_DATA_HALF", dimensions=[4, 256, 16, 16], strides=[65536, 1, 4096, 256], unique_id=1,
               byte_alignment=16).finalize()
    x.name = "conv_out"
    s = Tensor(data_type="CUDNN_DATA_FLOAT", dimensions=[1, 32, 1, 1], strides=[32, 1, 32, 32], unique_id=2,
               byte_alignment=16).finalize()
    s.name = "sum"
    sq = Tensor(data_type="CUDNN_DATA_FLOAT", dimensions=[1, 32, 1, 1], strides=[32, 1, 32, 32], unique_id=3,
                byte_alignment=16).finalize()
    op = OperationGenStats(mode="CUDNN_GENSTATS_SUM_SQSUM", math_prec="CUDNN_DATA_FLOAT", xdesc=x, sumdesc=s,
                           sqsumdesc=sq)
    with pytest.raises(GraphError, match=r"sumdesc \(sum\) has dims \[1, 32, 1, 1\] but must be \[1, 256, 1, 1\] "
                                         r"\(one value per channel of xdesc \[4, 256, 16, 16\]\)"):
        op.finalize()
    assert not op.finalized


def test_a_closed_descriptors_properties_raise_as_get_does():
    # None would say "not set": what was set is gone with the descriptor, and get() refuses it too
    t = Tensor(unique_id=1, dimensions=[1, 2, 3, 4], strides=[24, 12, 4, 1], data_type=cb.CUDNN_DATA_FLOAT,
               byte_alignment=16).finalize()
    assert t.dimensions == [1, 2, 3, 4] and t.vector_count == 1  # set, and cuDNN's own default
    t.close()
    for keyword in ("dimensions", "vector_count", "is_virtual"):
        with pytest.raises(cb.CudnnUnsafeCallError, match="closed"):
            getattr(t, keyword)
    with pytest.raises(cb.CudnnUnsafeCallError, match="closed"):
        t.get(cb.CUDNN_ATTR_TENSOR_DIMENSIONS, cb.CUDNN_TYPE_INT64)
    assert "closed" in repr(t) and t.attributes() == {}


def test_from_dict_refuses_a_dict_nested_without_end():
    import cudnn_backend as cb
    looped = {"descriptor_type": "CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR", "attributes": {}}
    looped["attributes"]["ops"] = [looped]
    deep = {"descriptor_type": "CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR", "attributes": {}}
    for _ in range(5000):
        deep = {"descriptor_type": "CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR", "attributes": {"ops": [deep]}}
    for data in (looped, deep):
        with pytest.raises(ValueError, match=r"^data: descriptors nested more than 32 deep"):
            cb.typed.from_dict(data)


def test_a_keyword_that_is_no_str_is_named():
    import cudnn_backend as cb
    with pytest.raises(TypeError, match=r"^Tensor: an attribute keyword is a str, not list$"):
        cb.typed.Tensor().get_keyword(["x"])
