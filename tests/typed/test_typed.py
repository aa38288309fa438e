"""Typed descriptor classes: coverage, naming, values, validation, introspection, graphs."""
import json
import shutil
import subprocess

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend import schema, typed
from cudnn_backend.typed._base import Keyword
from cudnn_backend.graph import Graph, GraphError
from cudnn_backend.typed import (
    Convolution,
    EngineHeuristics,
    OperationConvolutionForward,
    OperationGraph,
    OperationPointwise,
    Pointwise,
    Tensor,
    descriptor_class,
    from_dict,
)

from tests.helpers import generic_graphs as gg
from tests.helpers.offline import conv_bias_relu_graph


# ---------------------------------------------------------------------------------------------
# coverage and names
# ---------------------------------------------------------------------------------------------
def test_descriptor_class_covers_all_51_types_and_every_attribute():
    assert len(cb.DescriptorType) == 51
    seen_attributes = set()
    for dtype in cb.DescriptorType:
        cls = descriptor_class(dtype)
        assert cls is descriptor_class(dtype.name) is descriptor_class(int(dtype))
        assert cls.DESCRIPTOR_TYPE is dtype and issubclass(cls, cb.Descriptor)
        for attr in schema.DESCRIPTORS[dtype].attributes:
            kw = typed.keyword(attr)
            assert cls.ATTRIBUTES[kw].name is attr
            assert isinstance(getattr(cls, kw), Keyword) and getattr(cls, kw).attribute is attr
            seen_attributes.add(attr)
    assert seen_attributes == set(cb.AttributeName) and len(seen_attributes) == 383


@pytest.mark.parametrize("c_name, keyword", [
    ("CUDNN_ATTR_TENSOR_UNIQUE_ID", "unique_id"),
    ("CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC", "conv_desc"),
    ("CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW", "dw"),
    ("CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC", "epsilon_desc"),
    ("CUDNN_ATTR_OPERATION_POINTWISE_XDESC", "xdesc"),
    ("CUDNN_ATTR_MATMUL_COMP_TYPE", "comp_type"),
])
def test_keyword_naming_rule(c_name, keyword):
    assert typed.keyword(c_name) == keyword


@pytest.mark.parametrize("dtype, name", [
    ("CUDNN_BACKEND_TENSOR_DESCRIPTOR", "Tensor"),
    ("CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR", "Convolution"),
    ("CUDNN_BACKEND_POINTWISE_DESCRIPTOR", "Pointwise"),
    ("CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR", "OperationConvolutionForward"),
    ("CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR", "OperationPointwise"),
    ("CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR", "OperationGraph"),
    ("CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR", "EngineHeuristics"),
    ("CUDNN_BACKEND_ENGINE_DESCRIPTOR", "Engine"),
    ("CUDNN_BACKEND_ENGINECFG_DESCRIPTOR", "EngineConfig"),
    ("CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR", "KnobChoice"),
    ("CUDNN_BACKEND_KNOB_INFO_DESCRIPTOR", "KnobInfo"),
    ("CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR", "ExecutionPlan"),
    ("CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR", "VariantPack"),
    ("CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR", "DeviceProp"),
])
def test_class_names(dtype, name):
    assert descriptor_class(dtype).__name__ == name
    assert getattr(typed, name) is descriptor_class(dtype)


# ---------------------------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------------------------
def test_keyword_construction_and_readback_after_finalize():
    t = Tensor(data_type=cb.CUDNN_DATA_HALF, dimensions=np.array([2, 3, 4, 5]), strides=(60, 20, 5, 1),
               unique_id=np.int64(11), byte_alignment=16, is_virtual=np.bool_(False))
    assert t.unique_id == 11  # before finalize: the value set
    t.finalize()
    assert t.unique_id == 11 and t.dimensions == [2, 3, 4, 5] and t.strides == [60, 20, 5, 1]
    assert t.data_type is cb.CUDNN_DATA_HALF and t.is_virtual is False
    assert t.get(cb.CUDNN_ATTR_TENSOR_UNIQUE_ID, cb.CUDNN_TYPE_INT64) == [11]  # generic layer still there


def test_enum_values_take_members_names_or_ints():
    for value in (cb.CUDNN_POINTWISE_RELU_FWD, "CUDNN_POINTWISE_RELU_FWD", int(cb.CUDNN_POINTWISE_RELU_FWD)):
        pw = Pointwise(mode=value, math_prec=cb.CUDNN_DATA_FLOAT).finalize()
        assert pw.mode is cb.CUDNN_POINTWISE_RELU_FWD


def test_scalars_converted_to_the_declared_type():
    pw = Pointwise(mode="CUDNN_POINTWISE_RELU_FWD", math_prec="CUDNN_DATA_FLOAT", relu_lower_clip=1,
                   relu_upper_clip=np.float32(6.5)).finalize()
    assert pw.relu_lower_clip == 1.0 and isinstance(pw.relu_lower_clip, float)
    assert pw.relu_upper_clip == 6.5


def test_descriptor_values_kept_alive_and_identity_preserved():
    x = gg.tensor(1, [1, 8, 4, 4], [128, 16, 4, 1])
    y = gg.tensor(2, [1, 8, 4, 4], [128, 16, 4, 1])
    pw = Pointwise(mode="CUDNN_POINTWISE_RELU_FWD", math_prec="CUDNN_DATA_FLOAT").finalize()
    op = OperationPointwise(pw_descriptor=pw, xdesc=x, ydesc=y).finalize()
    del x, y, pw
    import gc

    gc.collect()
    assert op.xdesc.get(cb.CUDNN_ATTR_TENSOR_UNIQUE_ID, cb.CUDNN_TYPE_INT64) == [1]
    assert op.ydesc is op.children[cb.CUDNN_ATTR_OPERATION_POINTWISE_YDESC][0]
    with pytest.raises(ValueError, match="already finalized"):
        op.ydesc = op.xdesc  # finalized descriptors are immutable
    assert isinstance(op.pw_descriptor, Pointwise)


# ---------------------------------------------------------------------------------------------
# validation before cuDNN
# ---------------------------------------------------------------------------------------------
def test_unknown_keyword_suggests_close_names():
    with pytest.raises(TypeError, match=r"Tensor \(CUDNN_BACKEND_TENSOR_DESCRIPTOR\) has no attribute 'uniqe_id'; "
                                        r"did you mean unique_id"):
        Tensor(uniqe_id=1)


def test_wrong_kind_of_value():
    with pytest.raises(TypeError, match=r"CUDNN_BACKEND_TENSOR_DESCRIPTOR\.CUDNN_ATTR_TENSOR_DIMENSIONS.*integer"):
        Tensor(dimensions=[1.5, 2])
    with pytest.raises(ValueError, match=r"CUDNN_ATTR_TENSOR_DATA_TYPE: 4242 is not a valid DataType"):
        Tensor(data_type=4242)
    with pytest.raises(TypeError, match=r"CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X takes "
                                        r"CUDNN_BACKEND_TENSOR_DESCRIPTOR, element 0 is a "
                                        r"CUDNN_BACKEND_POINTWISE_DESCRIPTOR"):
        OperationConvolutionForward(x=Pointwise(mode="CUDNN_POINTWISE_ADD", math_prec="CUDNN_DATA_FLOAT").finalize())


def test_wrong_count():
    with pytest.raises(ValueError, match=r"CUDNN_ATTR_TENSOR_DIMENSIONS takes 1 to 8 element\(s\), got 9"):
        Tensor(dimensions=[1] * 9)
    with pytest.raises(ValueError, match=r"CUDNN_ATTR_TENSOR_UNIQUE_ID takes exactly 1 element\(s\), got 2"):
        Tensor(unique_id=[1, 2])


def test_get_only_attribute():
    with pytest.raises(ValueError, match=r"CUDNN_ATTR_ENGINEHEUR_RESULTS \(results\) is get-only"):
        EngineHeuristics(results=[])
    with pytest.raises(AttributeError):
        EngineHeuristics().results = []


def test_required_attribute_missing_at_finalize():
    with pytest.raises(ValueError, match=r"CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR cannot be finalized: required "
                                         r"attribute\(s\) not set: .*CUDNN_ATTR_CONVOLUTION_DILATIONS"):
        Convolution(comp_type="CUDNN_DATA_FLOAT", conv_mode="CUDNN_CROSS_CORRELATION", spatial_dims=2).finalize()


@pytest.mark.skipif(cb.get_version() >= 92200, reason="the loaded cuDNN has transpose")
def test_typed_descriptor_newer_than_loaded_cudnn():
    with pytest.raises(cb.CudnnVersionError, match=r"OPERATION_TRANSPOSE_DESCRIPTOR.*>= 9\.22 \("):
        typed.OperationTranspose()


@pytest.mark.skipif(cb.get_version() >= 92800, reason="the loaded cuDNN has CUDA graph retention")
def test_typed_attribute_newer_than_loaded_cudnn():
    with pytest.raises(cb.CudnnVersionError, match=r"CUDNN_ATTR_EXECUTION_PLAN_CUDA_GRAPH_RETENTION.*>= 9\.28 \("):
        typed.ExecutionPlan(cuda_graph_retention="CUDNN_CUDA_GRAPH_RETENTION_NONE")


def test_unknown_attribute_access_is_attribute_error_with_hint():
    with pytest.raises(AttributeError, match="did you mean unique_id"):
        Tensor().uniqueid  # noqa: B018


# ---------------------------------------------------------------------------------------------
# introspection
# ---------------------------------------------------------------------------------------------
_cbr_graph = conv_bias_relu_graph


def test_to_dict_round_trip():
    og = _cbr_graph().build()
    d = og.to_dict()
    json.dumps(d)  # plain data
    rebuilt = from_dict(d)
    assert rebuilt is not og and rebuilt.finalized
    assert rebuilt.to_dict() == d
    assert d["attributes"]["ops"][0]["attributes"]["conv_desc"]["attributes"]["pre_paddings"] == [1, 1]
    assert d["attributes"]["ops"][0]["attributes"]["x"]["attributes"]["data_type"] == "CUDNN_DATA_HALF"


def test_repr_is_readable():
    t = Tensor(unique_id=3, dimensions=[1, 2], strides=[2, 1], data_type="CUDNN_DATA_FLOAT", byte_alignment=4)
    r = repr(t)
    assert r.startswith("Tensor(") and "unique_id=3" in r and "CUDNN_DATA_FLOAT" in r and "not finalized" in r


def test_operation_graph_table_in_topological_order():
    g = _cbr_graph()
    ops = list(g.operations)
    og = OperationGraph(ops=[ops[2], ops[0], ops[1]]).finalize()  # shuffled
    table = og.table()
    lines = table.splitlines()
    assert lines[0].split()[:4] == ["#", "operation", "inputs", "outputs"]
    assert "ConvolutionForward" in lines[2] and "Pointwise ADD" in lines[3] and "Pointwise RELU_FWD" in lines[4]
    assert "X (uid 1) [8, 64, 56, 56] strides [200704, 1, 3584, 64] fp16" in lines[2]
    assert "virtual" in lines[2] and "Y (uid" in lines[4]
    assert str(og) == table


def test_dot_export_of_conv_bias_relu(tmp_path):
    og = _cbr_graph().build()
    dot = og.to_dot()
    assert dot.startswith('digraph "cudnn_graph" {') and dot.rstrip().endswith("}")
    assert dot.count("shape=box") == 3 and dot.count("shape=ellipse") == 6
    assert dot.count("style=dashed") == 2  # the two virtual intermediates
    assert 't1 -> op0 [label="x"]' in dot and 'op2 -> t6 [label="ydesc"]' in dot
    if shutil.which("dot"):
        out = tmp_path / "cbr.svg"
        subprocess.run(["dot", "-Tsvg", "-o", str(out)], input=dot, text=True, check=True)
        assert out.read_text().lstrip().startswith(("<?xml", "<svg"))


# ---------------------------------------------------------------------------------------------
# tensors and UIDs
# ---------------------------------------------------------------------------------------------
def test_tensor_from_numpy_infers_everything():
    a = np.zeros((2, 3, 4, 5), dtype=np.float16).transpose(0, 2, 3, 1)  # a strided view
    t = Tensor.from_array(a, uid=5, name="A")
    assert t.dimensions == [2, 4, 5, 3] and t.strides == [60, 5, 1, 20]
    assert t.data_type is cb.CUDNN_DATA_HALF and t.unique_id == 5 and t.name == "A"
    assert t.byte_alignment in (1, 2, 4, 8, 16)


def test_tensor_from_a_cuda_array_and_alignment():
    """A CUDA array (DLPack, as cupy/torch/JAX export it; the CUDA array interface is read on a GPU)."""
    from tests.helpers.dlpack import cuda_array

    t = Tensor.from_array(cuda_array(0x10008, (4, 8), bits=32), uid=9)
    assert t.dimensions == [4, 8] and t.strides == [8, 1] and t.data_type is cb.CUDNN_DATA_FLOAT
    assert t.byte_alignment == 8


def test_tensor_from_dlpack():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)

    class OnlyDlpack:
        def __dlpack__(self, **kw):
            return a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return a.__dlpack_device__()

    t = Tensor.from_array(OnlyDlpack(), uid=10)
    assert t.dimensions == [2, 3] and t.strides == [3, 1] and t.data_type is cb.CUDNN_DATA_INT32


def test_uids_unique_within_a_graph_and_user_uids_respected():
    g = Graph()
    a = g.tensor([1, 2], uid=2)
    b = g.tensor([1, 2])
    c = g.tensor([1, 2])
    assert a.uid == 2 and len({a.uid, b.uid, c.uid}) == 3
    with pytest.raises(GraphError, match="uid: 2 is already used in this graph"):
        g.tensor([1, 2], uid=2)
    other = Graph()
    assert other.tensor([1]).uid == 1  # numbering is per graph


@pytest.mark.parametrize("refused", [
    lambda g, uid: g.from_array(np.zeros((2, 3), np.complex64), uid=uid),  # no cuDNN data type
    lambda g, uid: g.tensor([2, 3], uid=uid, name=5),  # a name that is no str
    lambda g, uid: g.tensor([2, 3], uid=uid, reordering_mode="no such mode"),  # a Tensor keyword refused
    lambda g, uid: g.tensor([2, 3], uid=uid, alignment=3),  # refused by cuDNN as the tensor is finalized
])
def test_a_tensor_refused_takes_no_uid(refused):
    g = Graph()
    with pytest.raises((TypeError, ValueError, cb.CudnnError)):
        refused(g, 5)
    assert g.from_array(np.zeros((2, 3), np.float32), uid=5).uid == 5  # the UID given is still free
    with pytest.raises((TypeError, ValueError, cb.CudnnError)):
        refused(g, None)
    assert g.tensor([2, 3]).uid == 1 and g.tensor([2, 3]).uid == 2  # nor is one skipped by the automatic numbering
    assert g.uids_used == {1, 2, 5} and sorted(g.tensors) == [1, 2, 5]


def test_virtual_by_value_vectorized_ragged_reordering_tensors():
    g = Graph()
    v = g.tensor([1, 4], virtual=True)
    assert v.is_virtual is True and v.data_type is cb.CUDNN_DATA_FLOAT
    s = g.scalar(0.5)
    assert s.is_by_value is True and s.dimensions == [1, 1, 1, 1]
    vec = Tensor(data_type="CUDNN_DATA_INT8",
                 dimensions=[1, 32, 4, 4], strides=[512, 16, 4, 1], unique_id=100, byte_alignment=16,
                 vector_count=4, vectorized_dimension=1)
    vec.finalize()
    assert vec.vector_count == 4 and vec.vectorized_dimension == 1
    offsets = Tensor(data_type="CUDNN_DATA_INT32", dimensions=[3, 1, 1, 1], strides=[1, 1, 1, 1],
                     unique_id=101, byte_alignment=16).finalize()
    ragged = Tensor(data_type="CUDNN_DATA_HALF", dimensions=[2, 4, 16, 8], strides=[512, 128, 8, 1],
                    unique_id=102, byte_alignment=16, ragged_offset_desc=offsets).finalize()
    assert ragged.ragged_offset_desc is offsets
    reordered = Tensor(data_type="CUDNN_DATA_HALF", dimensions=[1, 8, 1, 1], strides=[8, 1, 1, 1], unique_id=103,
                       byte_alignment=16, reordering_mode="CUDNN_TENSOR_REORDERING_NONE").finalize()
    assert reordered.reordering_mode is cb.CUDNN_TENSOR_REORDERING_NONE


