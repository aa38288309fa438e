"""The one array adapter (``typed.arrays.view``, through cuda.core's StridedMemoryView) without a GPU: numpy arrays
and DLPack producers (versioned and unversioned capsules, CUDA memory at fake addresses), the consumer stream
handed to the producer, and every refusal a variant pack makes of an array that does not describe its tensor —
each message naming the tensor and what differs. Also the host side of cuDNN's data types (bfloat16 and fp8
bits), checked against values worked out by hand. The CUDA array interface and real GPU libraries (cupy, JAX,
numba) are in tests/gpu/runtime/test_arrays_gpu.py."""
import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.errors import MissingDependencyError
from cudnn_backend.graph import Graph
from cudnn_backend.runtime import _packing, memory
from cudnn_backend.runtime.execution import VariantPack
from cudnn_backend.typed import arrays

from tests.helpers import dlpack
from tests.helpers.dlpack import BFLOAT, FLOAT, INT, UINT, FakeDLPack, cuda_array, nhwc_strides

D = cb.DataType
A = 0x10000  # fake, 16-byte aligned device addresses
N, C, H, W, K = 2, 8, 4, 4, 8


# ---------------------------------------------------------------------------------------------
# reading arrays
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,data_type", [
    (np.float16, D.CUDNN_DATA_HALF), (np.float32, D.CUDNN_DATA_FLOAT), (np.float64, D.CUDNN_DATA_DOUBLE),
    (np.int8, D.CUDNN_DATA_INT8), (np.uint8, D.CUDNN_DATA_UINT8), (np.int32, D.CUDNN_DATA_INT32),
    (np.int64, D.CUDNN_DATA_INT64), (np.bool_, D.CUDNN_DATA_BOOLEAN)])
def test_numpy_arrays_are_read_with_element_strides(dtype, data_type):
    base = np.zeros((2, 3, 4, 5), dtype)
    a = base.transpose(0, 2, 3, 1)[:, ::2]  # strided and permuted
    info = arrays.view(a)
    assert info.shape == (2, 2, 5, 3) and info.strides == (60, 10, 1, 20)
    assert info.data_type is data_type and info.device == "cpu" and info.device_id == -1
    assert info.ptr == a.ctypes.data and info.protocol == "dlpack"
    assert info.nbytes == (1 + 1 * 60 + 1 * 10 + 4 * 1 + 2 * 20) * base.itemsize
    assert not info.contiguous and arrays.view(base).contiguous
    assert arrays.describe(a) == info


def test_read_only_and_zero_sized_numpy_arrays():
    a = np.arange(6, dtype=np.float32)
    a.flags.writeable = False  # exported through the versioned capsule, which can say read-only
    assert arrays.view(a).shape == (6,)
    assert arrays.view(np.zeros((0, 3), np.float16)).nbytes == 0


@pytest.mark.parametrize("versioned", [False, True])
def test_dlpack_producers_versioned_or_not(versioned):
    f = cuda_array(A, (N, C, H, W), nhwc_strides(N, C, H, W), versioned=versioned)
    info = arrays.view(f, stream=0x77)
    assert info.shape == (N, C, H, W) and info.strides == nhwc_strides(N, C, H, W)
    assert info.device == "cuda" and info.device_id == 0 and info.ptr == A and info.data_type is D.CUDNN_DATA_HALF
    # the consumer stream reaches the producer (an unversioned producer is asked twice: first with max_version)
    assert f.streams[-1] == 0x77 and set(f.streams) == {0x77}
    assert len(f.streams) == (1 if versioned else 2)


def test_metadata_only_asks_for_no_stream_order_and_the_byte_offset_counts():
    f = FakeDLPack(A, (4,), bits=32, byte_offset=64, versioned=True)
    info = arrays.view(f)
    assert f.streams == [-1] and info.ptr == A + 64 and info.data_type is D.CUDNN_DATA_FLOAT


def test_the_capsule_is_released_once_read():
    f = cuda_array(A, (8,), versioned=True)
    arrays.view(f)
    assert f.deleted == 1  # cuda.core consumed the capsule and called its deleter when done


@pytest.mark.parametrize("code,bits,producer_dtype,data_type", [
    (BFLOAT, 16, "torch.bfloat16", D.CUDNN_DATA_BFLOAT16),
    (10, 8, "float8_e4m3fn", D.CUDNN_DATA_FP8_E4M3),  # DLPack 1.1 kDLFloat8_e4m3fn
    (12, 8, "torch.float8_e5m2", D.CUDNN_DATA_FP8_E5M2),
])
def test_types_cuda_core_cannot_map_are_named_by_the_producer(code, bits, producer_dtype, data_type):
    info = arrays.view(FakeDLPack(A, (2, 3), code=code, bits=bits, dtype=producer_dtype))
    assert info.data_type is data_type and info.itemsize == bits // 8 and info.nbytes == 6 * bits // 8
    bare = arrays.view(FakeDLPack(A, (2, 3), code=code, bits=bits))  # no dtype attribute: unknown, said why
    assert bare.data_type is None and bare.nbytes is None and "cuda.core cannot read" in bare.dtype_name


@pytest.mark.parametrize("obj,match", [
    (object(), r"x: a 'object' object is no array: need an object with __dlpack__ or __cuda_array_interface__"),
    ([1, 2], r"x: a 'list' object is no array"),
    (FakeDLPack(A, (2,), device_type=10), r"x: the FakeDLPack lives on DLPack device type 10, neither the host"),
    (type("Masked", (), {"__cuda_array_interface__": {"shape": (2,), "typestr": "<f2", "data": (A, False),
                                                      "version": 3, "mask": object()}})(),
     r"x: cannot read the Masked through cuda_array_interface: BufferError: mask is not supported"),
    (type("Old", (), {"__cuda_array_interface__": {"shape": (2,), "typestr": "<f2", "data": (A, False),
                                                   "version": 2}})(),
     r"x: cannot read the Old through cuda_array_interface: BufferError: only CUDA Array Interface v3"),
    (np.zeros(2, dtype=[("a", np.int8)]), r"x: cannot read the ndarray through dlpack"),
])
def test_objects_that_are_no_readable_arrays(obj, match):
    with pytest.raises(TypeError, match=match):
        arrays.view(obj, what="x")


def test_without_cuda_core_the_error_names_the_extra(monkeypatch):
    monkeypatch.setattr(arrays, "_smv", None)

    def missing():
        raise MissingDependencyError("cuda-core", "reading arrays (DLPack, __cuda_array_interface__)", "gpu")

    monkeypatch.setattr(arrays, "_strided_memory_view", missing)
    with pytest.raises(MissingDependencyError, match=r"needs cuda-core.*cudnn-backend\[gpu\]"):
        arrays.view(np.zeros(2))


# ---------------------------------------------------------------------------------------------
# layouts an array may have for a tensor
# ---------------------------------------------------------------------------------------------
def _info(shape, strides, data_type=D.CUDNN_DATA_HALF):
    return arrays.ArrayInfo(tuple(shape), tuple(strides), data_type, A, "cuda", None, 0, 2, "float16")


NHWC = ((N, C, H, W), nhwc_strides(N, C, H, W))


@pytest.mark.parametrize("shape,strides", [
    NHWC,  # exactly the tensor
    ((N, H, W, C), (H * W * C, W * C, C, 1)),  # an NHWC-shaped contiguous array: the same memory
    ((N * C * H * W,), (1,)),  # a flat contiguous buffer (its size is checked apart)
    ((N, C, H, W), (H * W * C, 1, W * C, C)),
])
def test_layouts_that_describe_the_tensor(shape, strides):
    assert arrays.layout_mismatch(_info(shape, strides), *NHWC) is None


def test_dims_of_size_one_may_have_any_stride():
    assert arrays.layout_mismatch(_info((1, 8, 1, 1), (999, 1, 5, 7)), (1, 8, 1, 1), (8, 1, 8, 8)) is None


@pytest.mark.parametrize("shape,strides,match", [
    ((N, C, H, W), (C * H * W, H * W, W, 1), r"the array's strides \[128, 16, 4, 1\] \(in elements, shape "
                                             r"\[2, 8, 4, 4\]\) are not the tensor's \[128, 1, 32, 8\]"),
    ((N, C, H, 2 * W), (2 * H * W * C, 1, 2 * W * C, C), r"the array's shape \[2, 8, 4, 8\] is not the tensor's dims"),
    ((N * C * H * W // 2,), (2,), r"the array's shape \[128\] is not the tensor's dims"),  # every other element
    ((N, C, H, W), (-128, 1, 32, 8), r"negative strides"),
])
def test_layouts_that_do_not(shape, strides, match):
    problem = arrays.layout_mismatch(_info(shape, strides), *NHWC)
    assert problem is not None and __import__("re").search(match, problem), problem


# ---------------------------------------------------------------------------------------------
# variant packs refuse arrays that do not describe their tensor, naming it
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def conv():
    g = Graph("conv")
    x = g.tensor([N, C, H, W], layout="nhwc", name="x")
    w = g.tensor([K, C, 3, 3], layout="nhwc", name="w")
    y = g.conv_fwd(x, w, padding=1, output=True, name="y")
    return g.build(), x, w, y


def _pack(conv, **replace):
    og, x, w, y = conv
    buffers = {x: cuda_array(A, (N, C, H, W), nhwc_strides(N, C, H, W)),
               w: cuda_array(2 * A, (K, C, 3, 3), nhwc_strides(K, C, 3, 3)),
               y: cuda_array(3 * A, (N, K, H, W), nhwc_strides(N, K, H, W))}
    buffers.update({{"x": x, "w": w, "y": y}[k]: v for k, v in replace.items()})
    return VariantPack(None, buffers, operation_graph=og)


def test_arrays_that_describe_their_tensors_are_bound(conv):
    pack = _pack(conv, x=cuda_array(A, (N, H, W, C)), y=cuda_array(3 * A, (N * K * H * W * 2,), bits=8, code=UINT))
    assert set(pack.pointers.values()) == {A, 2 * A, 3 * A}


@pytest.mark.parametrize("name,array,exc,match", [
    ("x", cuda_array(A, (N, C, H, W), bits=32), ValueError,
     r"UID 1 \(x\): the array holds float32 \(CUDNN_DATA_FLOAT\) but the tensor is CUDNN_DATA_HALF"),
    ("x", cuda_array(A, (N, C, H, W), code=INT, bits=32), ValueError,
     r"UID 1 \(x\): the array holds int32 \(CUDNN_DATA_INT32\) but the tensor is CUDNN_DATA_HALF"),
    ("x", FakeDLPack(A, (N, C, H, W), code=12, bits=8), ValueError,
     r"UID 1 \(x\): the array holds a dtype cuda.core cannot read .* but the tensor is CUDNN_DATA_HALF"),
    ("x", cuda_array(A, (N, C, H, W)), ValueError,
     r"UID 1 \(x\): the array's strides \[128, 16, 4, 1\] \(in elements, shape \[2, 8, 4, 4\]\) are not the "
     r"tensor's \[128, 1, 32, 8\] .*: a view whose elements the tensor cannot describe; the tensor is x \(uid 1\) "
     r"\[2, 8, 4, 4\] strides \[128, 1, 32, 8\] fp16"),
    ("w", cuda_array(2 * A, (K, C, 5, 5), nhwc_strides(K, C, 5, 5)), ValueError,
     r"UID 2 \(w\): the array's shape \[8, 8, 5, 5\] is not the tensor's dims \[8, 8, 3, 3\]"),
    ("y", cuda_array(3 * A, (N * K * H * W // 2,), (2,)), ValueError,
     r"UID 3 \(y\): the array's shape \[128\] is not the tensor's dims \[2, 8, 4, 4\]"),
    ("y", cuda_array(3 * A, (N * K * H * W - 1,)), ValueError,
     r"UID 3 \(y\): the buffer holds 510 bytes but the tensor y \(uid 3\) .* spans 512 bytes"),
    ("x", cuda_array(A + 2, (N, C, H, W), nhwc_strides(N, C, H, W)), ValueError,
     r"UID 1 \(x\): pointer 0x10002 is not aligned to the tensor's byte alignment 16"),
    ("x", np.zeros((N, C, H, W), np.float16), TypeError,
     r"UID 1 \(x\): the ndarray \(float16 \[2, 8, 4, 4\] strides \[128, 16, 4, 1\] on the host\) is host memory; "
     r"cuDNN needs device memory"),
    ("x", FakeDLPack(A, (N, C, H, W), device_type=dlpack.kDLCUDAHost), TypeError,
     r"UID 1 \(x\): the FakeDLPack \(float16 .* on the host\) is host memory"),
])
def test_arrays_that_do_not_are_refused_naming_the_tensor(conv, name, array, exc, match):
    with pytest.raises(exc, match=match):
        _pack(conv, **{name: array})


def test_an_array_on_another_gpu_is_refused(conv, monkeypatch):
    monkeypatch.setattr(memory, "current_device_ordinal", lambda: 0)
    with pytest.raises(ValueError, match=r"UID 1 \(x\): the array is on cuda:1 but cuDNN runs on cuda:0; the tensor "
                                         r"is x \(uid 1\)"):
        _pack(conv, x=FakeDLPack(A, (N, C, H, W), nhwc_strides(N, C, H, W), device_id=1))
    _pack(conv)  # device 0: bound


def test_check_dtype_false_binds_another_type_whatever_its_layout(conv):
    og, x, w, y = conv
    buffers = {x: cuda_array(A, (N * C * H * W,), bits=32), w: 2 * A, y: 3 * A}
    with pytest.raises(ValueError, match="holds float32"):
        VariantPack(None, buffers, operation_graph=og)
    pack = VariantPack(None, buffers, operation_graph=og, check_dtype=False)
    assert pack.pointers[x.uid] == A


def test_the_consumer_stream_reaches_the_producer():
    f = cuda_array(A, (4,), versioned=True)
    spec = _packing.TensorSpec(7, "t", (4,), (1,), D.CUDNN_DATA_HALF)
    assert _packing.resolve_slot(7, spec, f, stream=0x1234)[0] == A
    assert f.streams == [0x1234]
    assert _packing.consumer_stream(None) == -1  # no plan, no handle: metadata only


def test_rebinding_refuses_like_the_constructor(conv):
    pack = _pack(conv)
    og, x, w, y = conv
    with pytest.raises(ValueError, match=r"UID 3 \(y\): the array's shape \[2, 8, 4, 5\] is not the tensor's dims"):
        pack.rebind({y: cuda_array(4 * A, (N, K, H, W + 1), nhwc_strides(N, K, H, W + 1))})
    pack.rebind({y: cuda_array(4 * A, (N, H, W, K))})
    assert pack.pointers[y.uid] == 4 * A


# ---------------------------------------------------------------------------------------------
# the host side of the data types
# ---------------------------------------------------------------------------------------------
def test_bfloat16_bits_round_to_nearest_even():
    # 1.0, 1 + 2**-8 (a tie: to even, 1.0), 1 + 3 * 2**-8 (a tie: to even, 1 + 2**-6), 0.1, -2, inf, nan
    values = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 0.1, -2.0, np.inf], np.float32)
    bits = arrays.encode(values, D.CUDNN_DATA_BFLOAT16)
    assert bits.dtype == np.uint16
    assert bits.tolist() == [0x3F80, 0x3F80, 0x3F82, 0x3DCD, 0xC000, 0x7F80]
    nan = arrays.encode(np.float32(np.nan), D.CUDNN_DATA_BFLOAT16)
    assert np.isnan(arrays.decode(nan, D.CUDNN_DATA_BFLOAT16))
    back = arrays.decode(bits, D.CUDNN_DATA_BFLOAT16)
    assert back.dtype == np.float64 and back.tolist()[:5] == [1.0, 1.0, 1 + 2 ** -6, 0.10009765625, -2.0]


@pytest.mark.parametrize("data_type,largest,smallest,specials", [
    (D.CUDNN_DATA_FP8_E4M3, 448.0, 2.0 ** -9, {0x7F: "nan", 0xFF: "nan", 0x7E: 448.0, 0x38: 1.0, 0x80: -0.0}),
    (D.CUDNN_DATA_FP8_E5M2, 57344.0, 2.0 ** -16, {0x7C: "inf", 0xFC: "-inf", 0x7D: "nan", 0x3C: 1.0}),
])
def test_fp8_codes_decode_and_encode_back(data_type, largest, smallest, specials):
    codes = np.arange(256, dtype=np.uint8)
    values = arrays.decode(codes, data_type)
    finite = values[np.isfinite(values)]
    assert finite.max() == largest and finite[finite > 0].min() == smallest
    for code, want in specials.items():
        got = values[code]
        assert (np.isnan(got) if want == "nan" else got == float(want)), (hex(code), got)
    again = arrays.encode(values, data_type)
    same = np.isfinite(values) & (codes != 0x80)  # -0 encodes as +0
    assert (again[same] == codes[same]).all()
    assert np.isnan(arrays.decode(arrays.encode(np.nan, data_type), data_type))
    # halfway between 1.0 and the next value: ties to the even code; beyond the largest: saturated
    step = values[0x39] - values[0x38] if data_type == D.CUDNN_DATA_FP8_E4M3 else values[0x3D] - values[0x3C]
    assert arrays.encode(1.0 + step / 2, data_type) % 2 == 0
    assert arrays.decode(arrays.encode(1e9, data_type), data_type) == largest


@pytest.mark.parametrize("data_type", [D.CUDNN_DATA_HALF, D.CUDNN_DATA_FLOAT, D.CUDNN_DATA_DOUBLE, D.CUDNN_DATA_INT8,
                                       D.CUDNN_DATA_INT32, D.CUDNN_DATA_INT64, D.CUDNN_DATA_UINT8,
                                       D.CUDNN_DATA_BOOLEAN])
def test_plain_types_are_their_numpy_types(data_type):
    stored = arrays.encode(np.array([0, 1, 3, 7]), data_type)
    assert stored.dtype == arrays.storage_dtype(data_type)
    assert stored.dtype.itemsize * 8 == arrays.DATA_TYPE_BITS[data_type]
    assert arrays.decode(stored, data_type).tolist() == ([False, True, True, True] if data_type == D.CUDNN_DATA_BOOLEAN
                                                         else [0, 1, 3, 7])


def test_types_without_host_storage_are_refused():
    with pytest.raises(TypeError, match="no host storage for cuDNN data type"):
        arrays.storage_dtype(D.CUDNN_DATA_INT8x4)
