"""Booleans without a GPU: cuDNN reads CUDNN_DATA_BOOLEAN bit-packed (eight elements a byte, least significant bit
first), while every array library's bool holds a byte an element, which is CUDNN_DATA_BYTE_BOOLEAN (cuDNN 9.25 on).
A bool array is described as BYTE_BOOLEAN, or refused in one line before 9.25 (the loaded release, and one made
older here by hiding BYTE_BOOLEAN from the package); a bool array is never bound to a BOOLEAN tensor, nor made one;
the sizes, the host layout the fp64 reference reads and the Graph builder's boolean outputs follow the two layouts.
The random fill's packing: tests/runtime/test_random_fill.py."""
import re
import sys

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.core.names import data_type_name, read_data_type
from cudnn_backend.core.versions import loaded_version_string
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import Graph
from cudnn_backend.runtime import _packing
from cudnn_backend.runtime.execution import VariantPack
from cudnn_backend.tune import inputs
from cudnn_backend.typed import arrays

from tests.helpers import producers
from tests.helpers.dlpack import BOOL, UINT, cuda_array

D = cb.DataType
BOOLEAN, BYTE = D.CUDNN_DATA_BOOLEAN, D.CUDNN_DATA_BYTE_BOOLEAN
HAS_BYTE = cb.get_version() >= 92500
needs_byte = pytest.mark.skipif(not HAS_BYTE, reason="the loaded cuDNN has no BYTE_BOOLEAN (before 9.25)")
A = 0x10000  # fake, 16-byte aligned device addresses
DIMS = (2, 3, 4, 5)


@pytest.fixture
def older(monkeypatch):
    """The package as it is on a cuDNN without BYTE_BOOLEAN (9.19.0), whatever release is loaded."""
    monkeypatch.setattr(arrays, "is_available", lambda name: name != "CUDNN_DATA_BYTE_BOOLEAN")
    monkeypatch.setattr(arrays, "loaded_version_string", lambda: "9.19.0")


def _bool_arrays(monkeypatch):
    """A bool array of each route: numpy (host), a DLPack producer (cuda.core's reader), a torch stand-in."""
    monkeypatch.setitem(sys.modules, "torch", producers.torch_module(current_stream=0x5000))
    return {"numpy": np.zeros(DIMS, np.bool_), "dlpack": cuda_array(A, DIMS, code=BOOL, bits=8),
            "torch": producers.TorchTensor(A, DIMS, dtype="bool")}


# ---------------------------------------------------------------------------------------------
# names and sizes
# ---------------------------------------------------------------------------------------------
def test_bool_names_byte_boolean_and_boolean_stays_bit_packed():
    assert read_data_type("bool") is BYTE and read_data_type("boolean") is BOOLEAN
    assert read_data_type("byte_boolean") is BYTE and data_type_name(BYTE) == "byte_boolean"
    assert cb.graph.Graph("g").tensor([1, 2], data_type="boolean").signature()[3] is BOOLEAN


def test_boolean_is_one_bit_and_byte_boolean_eight():
    assert arrays.DATA_TYPE_BITS[BOOLEAN] == 1 and arrays.DATA_TYPE_BITS[BYTE] == 8
    assert BOOLEAN not in arrays.ITEMSIZE and arrays.ITEMSIZE[BYTE] == 1
    assert arrays.span_bytes([17], [1], BOOLEAN) == 3 and arrays.span_bytes([17], [1], BYTE) == 17
    assert arrays.span_bytes([2, 3], [8, 1], BOOLEAN) == 2  # 11 elements spanned: two bytes
    spec = _packing.TensorSpec(1, "m", DIMS, (60, 20, 5, 1), BOOLEAN)
    assert spec.nbytes == 15 and spec.itemsize == 1 / 8
    assert _packing.TensorSpec(1, "m", DIMS, (60, 20, 5, 1), BYTE).nbytes == 120


def test_memory_bytes_pack_least_significant_bit_first():
    elements = np.array([1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1], np.bool_)
    assert arrays.memory_bytes(elements, BOOLEAN).tolist() == [0x01, 0x06]
    assert arrays.memory_bytes(elements, BYTE).tolist() == [1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]
    back = arrays.memory_elements(np.array([0x01, 0x06], np.uint8), BOOLEAN)
    assert back.dtype == np.bool_ and back.tolist() == elements.tolist() + [False] * 5
    assert arrays.memory_elements(np.array([0, 1, 1], np.uint8), BYTE).tolist() == [False, True, True]
    assert arrays.memory_elements(np.arange(8, dtype=np.uint8), D.CUDNN_DATA_FLOAT).size == 2  # other types: views


def test_the_host_layout_of_a_strided_boolean_tensor_is_its_bits():
    spec = _packing.TensorSpec(1, "m", (2, 3), (8, 2), BOOLEAN)  # every other element, rows 8 apart: 13 bits
    values = np.array([[1, 1, 0], [0, 1, 1]], np.bool_)
    raw = inputs.host_layout(values, spec)
    # element (i, j) is bit 8i + 2j: (0, 0) bit 0, (0, 1) bit 2, (1, 1) bit 10, (1, 2) bit 12; the gaps are 0
    assert raw.tolist() == [0b00000101, 0b00010100]
    assert inputs.stored_view(raw, spec).tolist() == values.tolist()
    byte_spec = _packing.TensorSpec(1, "m", (2, 3), (8, 2), BYTE)
    byte_raw = inputs.host_layout(values, byte_spec)
    assert byte_raw.tolist() == [1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1]
    assert inputs.stored_view(byte_raw, byte_spec).tolist() == values.tolist()


@pytest.mark.parametrize("data_type", [BOOLEAN, pytest.param(BYTE, marks=needs_byte)], ids=lambda d: d.name)
def test_the_fp64_reference_reads_each_layout(data_type):
    """y = x * 2 over a boolean x, its inputs read from the bytes a device would hold: BOOLEAN's bits, BYTE_BOOLEAN's
    bytes (the route of the tuner's check and the GPU tests: stored_view, decode, the reference)."""
    g = Graph("mask", io_data_type="float")
    x = g.tensor([1, 1, 3, 3], data_type=data_type, name="x")
    y = g.pointwise("CUDNN_POINTWISE_MUL", x, g.scalar(2.0, name="s"), output=True, name="y")
    og = g.build()
    spec = _packing.tensor_specs(operation_graph=og)[x.uid]
    raw = np.array([0b00000101, 0b1], np.uint8) if data_type == BOOLEAN else \
        np.array([1, 0, 1, 0, 0, 0, 0, 0, 1], np.uint8)
    assert spec.nbytes == raw.size
    feed = arrays.decode(inputs.stored_view(raw, spec), data_type)
    ref = cb.reference.evaluate(og, {x.uid: feed})
    assert ref.outputs[y.uid].reshape(-1).tolist() == [2, 0, 2, 0, 0, 0, 0, 0, 2]


# ---------------------------------------------------------------------------------------------
# describing bool arrays
# ---------------------------------------------------------------------------------------------
@needs_byte
@pytest.mark.parametrize("route", ["numpy", "dlpack", "torch"])
def test_a_bool_array_is_byte_boolean(monkeypatch, route):
    a = _bool_arrays(monkeypatch)[route]
    info = arrays.describe(a)
    assert info.data_type is BYTE and info.nbytes == 120
    assert arrays.data_type_of(np.bool_) is BYTE and arrays.data_type_of("torch.bool") is BYTE
    t = cb.typed.Tensor.from_array(a, uid=5)
    assert t.signature()[3] is BYTE
    g = Graph("g")
    assert g.from_array(a).signature()[3] is BYTE


def _refusal_pattern(version):
    return (rf"cuDNN {version} has no CUDNN_DATA_BYTE_BOOLEAN \(9\.25 on\), and its BOOLEAN is bit-packed, eight "
            r"elements a byte: bind numpy\.packbits\(a, bitorder='little'\) as a uint8 buffer for a tensor of "
            r"data_type BOOLEAN, or a uint8 view")


@pytest.mark.parametrize("route", ["numpy", "dlpack", "torch"])
def test_before_9_25_a_bool_array_is_refused_in_one_line(monkeypatch, older, route):
    a = _bool_arrays(monkeypatch)[route]
    info = arrays.describe(a)  # described (its memory), without a data type: as any dtype cuDNN lacks
    assert info.data_type is None and info.dtype_name == "bool"
    with pytest.raises(TypeError) as e:
        cb.typed.Tensor.from_array(a, uid=5)
    line = str(e.value)
    assert "\n" not in line and line.startswith(f"array: the {info.holds()} array has no cuDNN data type (")
    assert re.search(_refusal_pattern(r"9\.19\.0"), line), line
    with pytest.raises(TypeError, match=_refusal_pattern(r"9\.19\.0")):
        Graph("g").from_array(a)
    with pytest.raises(TypeError, match=r"no cuDNN data type for .*bool.*" + _refusal_pattern(r"9\.19\.0")):
        arrays.data_type_of(np.bool_)


@pytest.mark.skipif(HAS_BYTE, reason="the loaded cuDNN has BYTE_BOOLEAN")
def test_the_loaded_release_without_byte_boolean_refuses_naming_itself():
    with pytest.raises(TypeError, match=_refusal_pattern(loaded_version_string().replace(".", r"\."))):
        cb.typed.Tensor.from_array(np.zeros(DIMS, np.bool_))
    with pytest.raises(cb.errors.CudnnVersionError, match=r"CUDNN_DATA_BYTE_BOOLEAN .* needs cuDNN >= 9\.25"):
        Graph("g").tensor([2], data_type="bool")  # the name reads as BYTE_BOOLEAN too


@pytest.mark.parametrize("route", ["numpy", "dlpack", "torch"])
def test_a_bool_array_is_never_made_a_boolean_tensor(monkeypatch, route):
    a = _bool_arrays(monkeypatch)[route]
    with pytest.raises(TypeError, match=r"^array: the array holds .*bool, one byte an element, but the tensor is "
                                        r"CUDNN_DATA_BOOLEAN, which cuDNN reads bit-packed"):
        cb.typed.Tensor.from_array(a, data_type="boolean")
    # another type of a byte an element is the caller's to choose
    assert cb.typed.Tensor.from_array(a, data_type=D.CUDNN_DATA_UINT8).signature()[3] is D.CUDNN_DATA_UINT8


# ---------------------------------------------------------------------------------------------
# binding bool arrays
# ---------------------------------------------------------------------------------------------
def _mask_graph(data_type):
    g = Graph("mask", io_data_type="float")
    x = g.tensor(list(DIMS), data_type=data_type, name="x")
    y = g.pointwise("CUDNN_POINTWISE_MUL", x, g.scalar(2.0, name="s"), output=True, name="y")
    return g.build(), x, y


@pytest.mark.parametrize("check_dtype", [True, False])
@pytest.mark.parametrize("older_release", [False, True])
def test_a_bool_array_for_a_boolean_tensor_is_refused(monkeypatch, request, check_dtype, older_release):
    if older_release:
        request.getfixturevalue("older")
    og, x, y = _mask_graph(BOOLEAN)
    y_buf = cuda_array(2 * A, DIMS, bits=32)
    with pytest.raises(ValueError, match=r"^UID 1 \(x\): the array holds FakeDLPack bool, one byte an element, but "
                                         r"the tensor is CUDNN_DATA_BOOLEAN, which cuDNN reads bit-packed, eight "
                                         r"elements a byte, least significant bit first: bind numpy\.packbits"):
        VariantPack(None, {x: cuda_array(A, DIMS, code=BOOL, bits=8), y: y_buf}, operation_graph=og,
                    check_dtype=check_dtype)
    # the workaround: its bits, packed, as a flat uint8 buffer (plain memory)
    pack = VariantPack(None, {x: cuda_array(A, (15,), code=UINT, bits=8), y: y_buf}, operation_graph=og)
    assert pack.pointers[x.uid] == A


def test_a_packed_buffer_for_a_byte_boolean_tensor_is_refused():
    """The reverse: bits for a byte an element. A packed flat uint8 buffer is too small; an array described as
    BOOLEAN (no library's, but the rule is one) is refused by name."""
    spec = _packing.TensorSpec(1, "x", DIMS, (60, 20, 5, 1), BYTE)
    with pytest.raises(ValueError, match=r"the buffer holds 15 bytes but the tensor x .* spans 120 bytes"):
        _packing.resolve_slot(1, spec, cuda_array(A, (15,), code=UINT, bits=8))
    info = arrays.ArrayInfo(DIMS, (60, 20, 5, 1), BOOLEAN, A, "cuda", 15, 0, None, "boolean", "dlpack", "stand-in")
    for check_dtype in (True, False):
        with pytest.raises(ValueError, match=r"x: the array holds stand-in boolean \(CUDNN_DATA_BOOLEAN, bit-packed, "
                                             r"eight elements a byte\) but the tensor is CUDNN_DATA_BYTE_BOOLEAN"):
            _packing.check_array("x", spec, info, check_dtype)


@needs_byte
def test_a_bool_array_binds_a_byte_boolean_tensor(monkeypatch):
    og, x, y = _mask_graph(BYTE)
    for a in (cuda_array(A, DIMS, code=BOOL, bits=8), _bool_arrays(monkeypatch)["torch"]):
        pack = VariantPack(None, {x: a, y: cuda_array(2 * A, DIMS, bits=32)}, operation_graph=og)
        assert pack.pointers[x.uid] == A
    with pytest.raises(ValueError, match=r"the buffer holds 119 bytes but the tensor x .* spans 120 bytes"):
        VariantPack(None, {x: cuda_array(A, (119,), code=BOOL, bits=8), y: 2 * A}, operation_graph=og)


# ---------------------------------------------------------------------------------------------
# the Graph builder's boolean outputs
# ---------------------------------------------------------------------------------------------
def test_comparisons_give_boolean():
    g = Graph("cmp", io_data_type="float")
    a, b = g.tensor([2, 3], name="a"), g.tensor([2, 3], name="b")
    assert g.pointwise("CMP_GT", a, b).signature()[3] is BOOLEAN  # virtual: cuDNN's own
    assert g.pointwise("CMP_GT", a, b, output=True).signature()[3] is BOOLEAN  # real: its memory is bit-packed
    with pytest.raises(GraphError, match=r"should be CUDNN_DATA_BOOLEAN"):  # not a boolean type: refused as before
        g.pointwise("CMP_GT", a, b, output=g.tensor([2, 3], data_type="float"))


@needs_byte
def test_comparisons_keep_a_byte_boolean_output():
    g = Graph("cmp", io_data_type="float")
    a, b = g.tensor([2, 3], name="a"), g.tensor([2, 3], name="b")
    assert g.pointwise("CMP_GT", a, b, output_data_type="byte_boolean").signature()[3] is BYTE
    out = g.tensor([2, 3], data_type=BYTE, name="mask")  # as Graph.from_array makes one of a bool array
    assert g.pointwise("CMP_LT", a, b, output=out) is out
    assert g.pointwise("LOGICAL_AND", out, out, output=g.tensor([2, 3], data_type=BOOLEAN)).signature()[3] is BOOLEAN


def test_boolean_scalars_take_bools():
    g = Graph("s")
    assert g.scalar(True, BOOLEAN, name="t").signature()[3] is BOOLEAN
    for data_type in (BOOLEAN, BYTE):  # (checked before any tensor is made: on every release)
        with pytest.raises(TypeError, match=rf"^f: a {data_type.name[11:]} scalar takes a bool, not int"):
            g.scalar(1, data_type, name="f")


@needs_byte
def test_byte_boolean_scalars_are_made():
    assert Graph("s").scalar(True, BYTE, name="t").signature()[3] is BYTE
