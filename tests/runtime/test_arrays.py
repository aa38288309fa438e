"""The one array adapter (``typed.arrays.view``, through cuda.core's StridedMemoryView) without a GPU: numpy arrays
and DLPack producers (versioned and unversioned capsules, CUDA memory at fake addresses), the consumer stream
handed to the producer, and every refusal a variant pack makes of an array that does not describe its tensor —
each message naming the tensor and what differs. Also the host side of cuDNN's data types (bfloat16 and fp8
bits), checked against values worked out by hand. The CUDA array interface and real GPU libraries (cupy, JAX,
numba) are in tests/gpu/runtime/test_arrays_gpu.py."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.errors import MissingDependencyError
from cudnn_backend.graph import Graph
from cudnn_backend.runtime import _packing, memory
from cudnn_backend.runtime.execution import VariantPack, execute
from cudnn_backend import typed
from cudnn_backend.typed import arrays

from tests.helpers import dlpack, producers
from tests.helpers.crash import child_env, run_python
from tests.helpers.env import ROOT
from tests.helpers.dlpack import BFLOAT, FLOAT, INT, UINT, FakeDLPack, cuda_array, nhwc_strides

D = cb.DataType
# a bool array's data type: BYTE_BOOLEAN, none before cuDNN 9.25 (tests/runtime/test_booleans.py)
BOOL = D.CUDNN_DATA_BYTE_BOOLEAN if cb.get_version() >= 92500 else None
A = 0x10000  # fake, 16-byte aligned device addresses
N, C, H, W, K = 2, 8, 4, 4, 8


# ---------------------------------------------------------------------------------------------
# reading arrays
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,data_type", [
    (np.float16, D.CUDNN_DATA_HALF), (np.float32, D.CUDNN_DATA_FLOAT), (np.float64, D.CUDNN_DATA_DOUBLE),
    (np.int8, D.CUDNN_DATA_INT8), (np.uint8, D.CUDNN_DATA_UINT8), (np.int32, D.CUDNN_DATA_INT32),
    (np.int64, D.CUDNN_DATA_INT64), (np.bool_, BOOL)])
def test_numpy_arrays_are_read_with_element_strides(dtype, data_type):
    base = np.zeros((2, 3, 4, 5), dtype)
    a = base.transpose(0, 2, 3, 1)[:, ::2]  # strided and permuted
    info = arrays.view(a)
    assert info.shape == (2, 2, 5, 3) and info.strides == (60, 10, 1, 20)
    assert info.data_type is data_type and info.device == "cpu" and info.device_id == -1
    assert info.ptr == a.ctypes.data and info.protocol == "numpy" and info.library == "numpy"
    assert info.nbytes == (1 + 1 * 60 + 1 * 10 + 4 * 1 + 2 * 20) * base.itemsize
    assert not info.contiguous and arrays.view(base).contiguous
    assert arrays.describe(a) == info


def test_read_only_and_zero_sized_numpy_arrays():
    a = np.arange(6, dtype=np.float32)
    a.flags.writeable = False
    assert arrays.view(a).shape == (6,) and arrays.view(a).readonly
    assert not arrays.view(np.arange(6)).readonly
    assert arrays.view(np.zeros((0, 3), np.float16)).nbytes == 0


class _CaiView:
    """What cuda.core's CUDA array interface reader makes of an interface dict (the driver, which it asks for the
    pointer's device, is a GPU machine's): the read-only flag is ``data[1]``."""

    def __init__(self, obj, stream_ptr):
        cai = obj.__cuda_array_interface__
        self.shape, self.strides, self.dtype = cai["shape"], None, np.dtype(cai["typestr"])
        (self.ptr, self.readonly), self.device_id = cai["data"], 0

    from_cuda_array_interface = classmethod(lambda cls, obj, stream_ptr: cls(obj, stream_ptr))


_real_strided_memory_view = arrays._strided_memory_view


@pytest.mark.parametrize("array,readonly", [
    (cuda_array(A, (4,), versioned=True, readonly=True), True),  # DLPack 1.x's DLPACK_FLAG_BITMASK_READ_ONLY
    (cuda_array(A, (4,), versioned=True), False),
    (cuda_array(A, (4,)), False),  # an unversioned capsule has no flag: nothing says it is read-only
    (type("Cai", (), {"__cuda_array_interface__": {"shape": (4,), "typestr": "<f2", "data": (A, True),
                                                   "version": 3}})(), True),
    (type("Cai", (), {"__cuda_array_interface__": {"shape": (4,), "typestr": "<f2", "data": (A, False),
                                                   "version": 3}})(), False),
])
def test_arrays_say_whether_they_are_read_only(monkeypatch, array, readonly):
    monkeypatch.setattr(arrays, "_strided_memory_view", lambda: _CaiView if hasattr(array, "__cuda_array_interface__")
                        else _real_strided_memory_view())
    assert arrays.view(array, stream=0x7000).readonly is readonly


def test_jax_arrays_are_read_only_whatever_their_export_says():
    a = producers.JaxArray(A, (4,), np.float16)  # its DLPack export carries no read-only flag
    assert arrays.describe(a).readonly and arrays.view(a, stream=0x7000).readonly
    assert arrays.view(a, stream=0x7000).protocol == "dlpack"


@pytest.mark.parametrize("versioned", [False, True])
def test_dlpack_producers_versioned_or_not(versioned):
    f = cuda_array(A, (N, C, H, W), nhwc_strides(N, C, H, W), versioned=versioned)
    info = arrays.view(f, stream=0x77)
    assert info.shape == (N, C, H, W) and info.strides == nhwc_strides(N, C, H, W)
    assert info.device == "cuda" and info.device_id == 0 and info.ptr == A and info.data_type is D.CUDNN_DATA_HALF
    # the consumer stream reaches the producer (an unversioned producer is asked twice: first with max_version)
    assert f.streams[-1] == 0x77 and set(f.streams) == {0x77}
    assert len(f.streams) == (1 if versioned else 2)


def test_the_legacy_default_stream_is_passed_as_dlpack_names_it():
    f = cuda_array(A, (4,), versioned=True)
    arrays.view(f, stream=0)
    assert f.streams == [1]  # DLPack's legacy default stream (0 is ambiguous there), CU_STREAM_LEGACY as a handle


def test_metadata_only_asks_for_no_stream_order_and_the_byte_offset_counts():
    f = FakeDLPack(A, (4,), bits=32, byte_offset=64, versioned=True)
    info = arrays.view(f)
    assert f.streams == [-1] and info.ptr == A + 64 and info.data_type is D.CUDNN_DATA_FLOAT


def test_the_capsule_is_released_once_read():
    f = cuda_array(A, (8,), versioned=True)
    arrays.view(f)
    assert f.deleted == 1  # cuda.core consumed the capsule and called its deleter when done


@pytest.mark.parametrize("device_type", [dlpack.kDLCUDA, dlpack.kDLCPU])  # read by cuda.core, by numpy
@pytest.mark.parametrize("versioned", [False, True])
@pytest.mark.parametrize("header,match", [
    ({"ndim": 1 << 30}, r"its DLPack export has ndim 1073741824, not 0 to 64$"),
    ({"ndim": -1}, r"its DLPack export has ndim -1, not 0 to 64$"),
    ({"dtype": dlpack.DLDataType(FLOAT, 0, 1)}, r"its DLPack export's dtype \(code 2, 0 bits, 1 lanes\) has elements "
                                                r"of no size$"),
    ({"dtype": dlpack.DLDataType(FLOAT, 16, 0)}, r"its DLPack export's dtype \(code 2, 16 bits, 0 lanes\)"),
])
def test_capsule_headers_that_describe_no_array_are_refused_before_a_consumer_reads_them(device_type, versioned,
                                                                                         header, match):
    host = np.zeros(8, np.float32)
    f = FakeDLPack(host.ctypes.data, (2, 4), bits=32, device_type=device_type, versioned=versioned, header=header,
                   destructor=True)
    with pytest.raises(TypeError, match=r"^array: FakeDLPack: " + match):
        arrays.describe(f)
    assert f.deleted == 1  # never consumed: freed once, by its own destructor


def test_a_capsule_without_its_shape_is_refused_not_read():
    """ndim > 0 and a NULL shape pointer: cuda.core and numpy read the shape through it (SIGSEGV). A child process
    keeps a regression from taking the test run down with it."""
    child = run_python("""
        import numpy as np
        from cudnn_backend.typed import arrays
        from tests.helpers.dlpack import FakeDLPack, kDLCPU, kDLCUDA
        host = np.zeros(8, np.float32)
        for device_type in (kDLCUDA, kDLCPU):
            for versioned in (False, True):
                f = FakeDLPack(host.ctypes.data, (2, 4), bits=32, device_type=device_type, versioned=versioned,
                               header={"shape": None}, destructor=True)
                try:
                    arrays.describe(f)
                except TypeError as e:
                    refusal = str(e)
                print(refusal, f.deleted)
    """)
    assert not child.crashed and child.returncode == 0, child.describe()
    assert child.stdout.splitlines() == ["array: FakeDLPack: its DLPack export has ndim 2 and a NULL shape pointer "
                                         "(reading it would crash the process) 1"] * 4, child.describe()


def test_a_zero_dimensional_export_needs_no_shape():
    f = FakeDLPack(A, (), bits=32, versioned=True, header={"shape": None}, destructor=True)
    assert arrays.describe(f).shape == () and f.deleted == 1  # consumed, and freed by its consumer alone


@pytest.mark.parametrize("versioned", [False, True])
@pytest.mark.parametrize("said,held,match", [
    # a host pointer bound as device memory
    ((dlpack.kDLCUDA, 0), (dlpack.kDLCPU, 0), r"\(2, 0\) \(cuda\) but its DLPack capsule says \(1, 0\) \(cpu\): a "
                                              r"malformed export \(the two disagree, so neither says where the memory "
                                              r"is\)$"),
    # memory on another GPU reported as cuda:0 (the pack's "array on another GPU" refusal bypassed)
    ((dlpack.kDLCUDA, 0), (dlpack.kDLCUDA, 3), r"\(2, 0\) \(cuda\) but .* says \(2, 3\) \(cuda\):"),
    ((dlpack.kDLCUDA, 0), (dlpack.kDLCUDAManaged, 0), r"\(2, 0\) \(cuda\) but .* says \(13, 0\) \(cuda managed\):"),
    ((dlpack.kDLCUDAManaged, 1), (dlpack.kDLCUDAManaged, 0), r"\(13, 1\) \(cuda managed\) but .* says \(13, 0\)"),
    # device memory read by numpy as host memory
    ((dlpack.kDLCPU, 0), (dlpack.kDLCUDA, 0), r"\(1, 0\) \(cpu\) but its DLPack capsule says \(2, 0\) "),
    ((dlpack.kDLCUDAHost, 0), (dlpack.kDLCUDA, 0), r"\(3, 0\) \(cuda pinned host\) but .* says \(2, 0\) \(cuda\)"),
    ((dlpack.kDLCPU, 0), (10, 0), r"\(1, 0\) \(cpu\) but .* says \(10, 0\) \(unknown device type\):"),
])
def test_a_capsule_on_another_device_than_its_producer_says_is_refused(said, held, versioned, match):
    host = np.zeros(8, np.float32)
    f = FakeDLPack(host.ctypes.data, (2, 4), bits=32, device_type=said[0], device_id=said[1], versioned=versioned,
                   header={"device": dlpack.DLDevice(*held)}, destructor=True)
    with pytest.raises(TypeError, match=r"^x: FakeDLPack: its __dlpack_device__\(\) says device " + match):
        arrays.view(f, what="x")
    assert f.deleted == 1  # never consumed: freed once, by its own destructor


@pytest.mark.parametrize("said,held,device,device_id", [
    ((dlpack.kDLCUDA, 1), (dlpack.kDLCUDA, 1), "cuda", 1),
    ((dlpack.kDLCUDAManaged, 0), (dlpack.kDLCUDAManaged, 0), "cuda", 0),
    ((dlpack.kDLCUDAHost, 0), (dlpack.kDLCUDAHost, 0), "cpu", -1),
    ((dlpack.kDLCUDAHost, 0), (dlpack.kDLCPU, 0), "cpu", -1),  # torch's pinned memory (pytorch#136250)
])
def test_a_capsule_on_the_device_its_producer_says_is_read(said, held, device, device_id):
    host = np.zeros(8, np.float32)
    f = FakeDLPack(host.ctypes.data, (2, 4), bits=32, device_type=said[0], device_id=said[1], versioned=True,
                   header={"device": dlpack.DLDevice(*held)})
    info = arrays.view(f)
    assert (info.device, info.device_id, info.ptr, info.shape) == (device, device_id, host.ctypes.data, (2, 4))


def test_the_producer_is_asked_its_device_once_a_read():
    class Counting(FakeDLPack):
        asked = 0

        def __dlpack_device__(self):
            self.asked += 1
            return super().__dlpack_device__()
    for device_type in (dlpack.kDLCUDA, dlpack.kDLCPU):  # read by cuda.core, by numpy
        f = Counting(np.zeros(4, np.float16).ctypes.data, (4,), device_type=device_type, versioned=True)
        arrays.view(f)
        assert f.asked == 1


@pytest.mark.parametrize("device_type", [dlpack.kDLCUDA, dlpack.kDLCPU])
@pytest.mark.parametrize("ptr,shape,byte_offset,match", [
    (A, (2, 4), 2 ** 64 - 2, r"its DLPack export's data pointer 0x10000 plus its byte_offset 18446744073709551614 "
                             r"passes the end of the 64-bit address space$"),
    (2 ** 64 - 16, (2, 4), 16, r"its DLPack export's data pointer 0xfffffffffffffff0 plus its byte_offset 16 passes"),
    (0, (2, 4), 0, r"its DLPack export's data pointer is NULL, for 8 elements \(shape \[2, 4\]\)$"),
    (0, (2, 4), 64, r"its DLPack export's data pointer is NULL, for 8 elements"),
    (0, (), 0, r"its DLPack export's data pointer is NULL, for 1 element \(shape \[\]\)$"),
])
def test_a_capsule_pointing_at_no_memory_is_refused(device_type, ptr, shape, byte_offset, match):
    f = FakeDLPack(ptr, shape, bits=32, device_type=device_type, versioned=True, byte_offset=byte_offset,
                   destructor=True)
    with pytest.raises(TypeError, match=r"^array: FakeDLPack: " + match):
        arrays.describe(f)
    assert f.deleted == 1


def test_pointers_up_to_the_end_of_the_address_space_and_empty_arrays_without_memory_are_read():
    # its last byte: 2**64 - 1 (read by numpy: cuda.core's view holds the pointer as intptr_t, negative up there)
    f = FakeDLPack(2 ** 64 - 16, (2,), bits=32, device_type=dlpack.kDLCPU, versioned=True, byte_offset=8)
    assert arrays.describe(f).ptr == 2 ** 64 - 8
    empty = arrays.describe(FakeDLPack(0, (0, 3), bits=32, versioned=True))  # (torch's empty tensors: NULL)
    assert (empty.ptr, empty.shape, empty.nbytes) == (0, (0, 3), 0)


def test_an_address_cuda_core_reads_back_negative_is_the_unsigned_one():
    high = 2 ** 63 + 256  # (cuda.core's view keeps the pointer as intptr_t: negative up there)
    assert arrays.view(cuda_array(high, (4,)), stream=0x7000).ptr == high


def test_an_interface_that_is_no_dict_is_refused_naming_it():
    for interface in (None, [("shape", (4,))]):
        with pytest.raises(TypeError, match=rf"^x: Cai: its __cuda_array_interface__ is a "
                                            rf"{type(interface).__name__}, not a dict$"):
            arrays.view(type("Cai", (), {"__cuda_array_interface__": interface})(), what="x")


@pytest.mark.parametrize("device_type", [dlpack.kDLCUDA, dlpack.kDLCPU])  # read by cuda.core, by numpy
@pytest.mark.parametrize("versioned", [False, True])
@pytest.mark.parametrize("returns,match", [
    (None, r"returned None, not a DLPack capsule$"),
    (3, r"returned an object of type 'int', not a DLPack capsule$"),
    (object(), r"returned an object of type 'object', not a DLPack capsule$"),
    (dlpack.named_capsule(b"not_dltensor"), r"returned a capsule named 'not_dltensor', not a DLPack capsule "
                                            r"\('dltensor' or 'dltensor_versioned'\)$"),
    (dlpack.named_capsule(None), r"returned a capsule without a name, not a DLPack capsule"),
    (dlpack.named_capsule(b"used_dltensor"), r"returned a capsule named 'used_dltensor': already consumed$"),
])
def test_what_dlpack_returns_that_is_no_capsule_is_named(device_type, versioned, returns, match):
    f = dlpack.OddDLPack(returns, A, (4,), device_type=device_type, versioned=versioned)
    with pytest.raises(TypeError, match=r"^x: OddDLPack: its __dlpack__\(\) " + match):
        arrays.view(f, what="x")
    assert len(f.streams) == 1  # a BufferError: no consumer asks again (they do after a TypeError)


@pytest.mark.parametrize("device_type", [dlpack.kDLCUDA, dlpack.kDLCPU])
@pytest.mark.parametrize("versioned", [False, True])
def test_a_capsule_handed_out_again_after_its_consumer_took_it_is_refused(device_type, versioned):
    host = np.zeros(4, np.float16)
    f = dlpack.OddDLPack("again", host.ctypes.data, (4,), device_type=device_type, versioned=versioned)
    assert arrays.describe(f).shape == (4,)
    used = "used_dltensor_versioned" if versioned else "used_dltensor"
    with pytest.raises(TypeError, match=rf"its __dlpack__\(\) returned a capsule named '{used}': already consumed$"):
        arrays.describe(f)


@pytest.mark.parametrize("code,bits,producer_dtype,data_type", [
    (BFLOAT, 16, "torch.bfloat16", D.CUDNN_DATA_BFLOAT16),
    (10, 8, "float8_e4m3fn", D.CUDNN_DATA_FP8_E4M3),  # DLPack 1.1 kDLFloat8_e4m3fn
    (12, 8, "torch.float8_e5m2", D.CUDNN_DATA_FP8_E5M2),
])
def test_types_cuda_core_cannot_map_are_named_by_the_producer(code, bits, producer_dtype, data_type):
    info = arrays.view(FakeDLPack(A, (2, 3), code=code, bits=bits, dtype=producer_dtype))
    assert info.data_type is data_type and info.itemsize == bits // 8 and info.nbytes == 6 * bits // 8
    # no dtype attribute: DLPack 1.1's own codes say it whole
    bare = arrays.view(FakeDLPack(A, (2, 3), code=code, bits=bits))
    assert (bare.data_type, bare.itemsize) == (data_type, bits // 8)


@pytest.mark.parametrize("code,bits,lanes,name,itemsize", [  # (cuda.core reads whole bytes only)
    (FLOAT, 8, 1, "DLPack code 2 (float) of 8 bits", 1),  # an fp8 export from before DLPack 1.1: which one?
    (99, 16, 1, "DLPack code 99 (unknown) of 16 bits", 2),
    (FLOAT, 16, 2, "DLPack code 2 (float) of 16 bits x 2 lanes", 4),
    (11, 8, 1, "float8_e4m3fnuz", 1),  # DLPack 1.1 names it whole (no cuDNN data type has it)
])
def test_an_export_no_reader_names_says_its_code_bits_and_lanes(code, bits, lanes, name, itemsize):
    info = arrays.view(FakeDLPack(A, (2, 3), code=code, bits=bits, lanes=lanes))
    assert (info.data_type, info.dtype_name, info.itemsize) == (None, name, itemsize)


@pytest.mark.parametrize("code,bits,lanes", [(FLOAT, 24, 1), (FLOAT, 16, 2), (99, 32, 1)])
def test_a_data_type_of_another_element_size_than_the_exports_is_refused(code, bits, lanes):
    with pytest.raises(TypeError, match=rf"^array: the array holds FakeDLPack DLPack code {code} .*, "
                                        rf"{bits * lanes // 8}-byte elements, but CUDNN_DATA_HALF has 2-byte "
                                        r"elements: the array's shape \[4\] and strides \[1\], counted in its own "
                                        r"elements, would describe other memory"):
        typed.Tensor.from_array(FakeDLPack(A, (4,), code=code, bits=bits, lanes=lanes), uid=1, data_type="HALF")


@pytest.mark.parametrize("strides", [(-(2 ** 63) + 1,), (2 ** 62 + 8,), (-(2 ** 63),)])
@pytest.mark.parametrize("device_type", [dlpack.kDLCPU, dlpack.kDLCUDA])  # read by numpy, by cuda.core
def test_a_dlpack_stride_past_int64_in_bytes_is_refused(strides, device_type):
    """numpy multiplies the stride by the element's bytes and wraps: read as another stride."""
    with pytest.raises(TypeError, match=rf"^x: FakeDLPack: its DLPack export's stride {strides[0]} \(dimension 0\) "
                                        r"is -?\d+ bytes, past int64: its readers would wrap it to another stride$"):
        arrays.view(FakeDLPack(A, (4,), strides=strides, bits=32, device_type=device_type), what="x")


def test_a_class_is_no_array():
    with pytest.raises(TypeError, match=r"^x: the class numpy.ndarray itself, not an array$"):
        arrays.view(np.ndarray, what="x")


@pytest.mark.parametrize("code,bits,lanes,producer_dtype,match", [
    (12, 8, 1, "float8_e4m3fn", r"float8_e4m3fn \(CUDNN_DATA_FP8_E4M3: 8 bits, DLPack code 10 \(float8_e4m3fn\), 1 "
                                r"lane\) but its DLPack export holds code 12 \(float8_e5m2\), 8 bits, 1 lane: the two "
                                r"disagree, so neither says what the memory holds$"),
    (10, 16, 1, "torch.float8_e4m3fn", r"float8_e4m3fn .* holds code 10 \(float8_e4m3fn\), 16 bits, 1 lane:"),
    (10, 8, 2, "float8_e4m3fn", r"float8_e4m3fn .* holds code 10 \(float8_e4m3fn\), 8 bits, 2 lanes:"),
    (2, 16, 2, "float16", r"float16 \(CUDNN_DATA_HALF: 16 bits, DLPack code 2 \(float\), 1 lane\) but its DLPack "
                          r"export holds code 2 \(float\), 16 bits, 2 lanes:"),
    (12, 8, 1, "int8", r"int8 \(CUDNN_DATA_INT8: 8 bits, DLPack code 0 \(int\), 1 lane\) but .* code 12 "),
    (17, 4, 1, "bfloat16", r"bfloat16 \(CUDNN_DATA_BFLOAT16: 16 bits, DLPack code 4 \(bfloat\), 1 lane\) but .* "
                           r"code 17 \(float4_e2m1fn\), 4 bits"),
])
def test_a_producer_dtype_the_capsule_contradicts_is_refused(code, bits, lanes, producer_dtype, match):
    """Where cuda.core cannot read the capsule's dtype, the producer's own name is used only if the capsule's
    type code, bits and lanes agree with it."""
    with pytest.raises(TypeError, match=r"^x: FakeDLPack \w+: its dtype attribute says " + match):
        arrays.view(FakeDLPack(A, (2, 3), code=code, bits=bits, lanes=lanes, dtype=producer_dtype), what="x")


@pytest.mark.parametrize("bits", [8, 32, 64])
def test_a_bfloat_export_of_other_than_16_bits_is_refused(bits):
    """cuda.core (with ml_dtypes) reads every kDLBfloat export as bfloat16, whatever its bits say: the array would
    be taken for 2-byte elements."""
    try:
        import ml_dtypes  # noqa: F401 - without it cuda.core maps no bfloat: the producer's name is checked instead
    except ImportError:
        pytest.skip("ml_dtypes is not installed: cuda.core reads no bfloat export")
    with pytest.raises(TypeError, match=rf"^x: FakeDLPack: its DLPack export holds code 4 \(bfloat\), {bits} bits, 1 "
                                        rf"lane, which cuda.core reads as bfloat16 of 16 bits: the two disagree on the "
                                        r"element's size$"):
        arrays.view(FakeDLPack(A, (2, 3), code=BFLOAT, bits=bits), what="x")


def test_an_fp8_export_from_before_dlpack_1_1_is_read_by_its_name():
    """kDLFloat of 8 bits is all an fp8 export could say before DLPack 1.1 gave fp8 its codes."""
    info = arrays.view(FakeDLPack(A, (2, 3), code=FLOAT, bits=8, dtype="float8_e5m2"))
    assert info.data_type is D.CUDNN_DATA_FP8_E5M2 and info.nbytes == 6


@pytest.mark.parametrize("obj,match", [
    (object(), r"^x: an object of type 'object' is no array: need one with __dlpack__ or __cuda_array_interface__"),
    ([1, 2], r"^x: an object of type 'list' is no array"),
    (FakeDLPack(A, (2,), device_type=10), r"^x: FakeDLPack: it lives on DLPack device type 10, neither the host"),
    (type("Masked", (), {"__cuda_array_interface__": {"shape": (2,), "typestr": "<f2", "data": (A, False),
                                                      "version": 3, "mask": object()}})(),
     r"^x: Masked: a masked array with masked elements: cuDNN reads every element, the masked ones too; fill them "
     r"first \(a.filled\(value\)\)$"),
    (type("Old", (), {"__cuda_array_interface__": {"shape": (2,), "typestr": "<f2", "data": (A, False),
                                                   "version": 2}})(),
     r"^x: Old: cannot read it through cuda_array_interface: BufferError: only CUDA Array Interface v3"),
    (np.zeros(2, dtype=[("a", np.int8)]), r"^x: numpy \[\('a', 'i1'\)\] ndarray: a structured or object dtype has no "
                                          r"cuDNN data type$"),
])
def test_objects_that_are_no_readable_arrays(obj, match):
    with pytest.raises(TypeError, match=match) as e:
        arrays.view(obj, what="x")
    assert "\n" not in str(e.value)


@pytest.mark.skipif(cb.core.device.driver() == "cuda", reason="offline: without a CUDA driver")
def test_a_device_array_offline_says_the_driver_is_missing():
    cai = type("Cai", (), {"__cuda_array_interface__": {"shape": (2, 3), "typestr": "<f2", "data": (A, False),
                                                        "version": 3, "strides": None}})()
    with pytest.raises(TypeError, match=r"^x: Cai: cannot read it through cuda_array_interface: .* \(cuda.core asks "
                                        r"the CUDA driver where a device array lives, and this machine has (only the "
                                        r"no-device stand-in|no CUDA driver): bind device arrays on a GPU, or give "
                                        r"their pointers as ints offline\)$"):
        arrays.view(cai, what="x")


def test_a_gpu_array_without_cuda_core_names_the_extra(monkeypatch):
    monkeypatch.setattr(arrays, "_smv", None)

    def missing():
        raise MissingDependencyError("cuda-core", "reading GPU arrays (DLPack, __cuda_array_interface__)", "gpu")

    monkeypatch.setattr(arrays, "_strided_memory_view", missing)
    with pytest.raises(MissingDependencyError, match=r"needs cuda-core.*cudnn-backend\[gpu\]"):
        arrays.view(cuda_array(A, (2,)))
    assert arrays.view(np.zeros(2)).device == "cpu"  # host arrays: numpy reads them


# ---------------------------------------------------------------------------------------------
# which reader: the producer's own (torch always, JAX for metadata, numpy for the host), else the protocols
# ---------------------------------------------------------------------------------------------
class TorchParameter(producers.TorchTensor):  # a subclass from another module (torch.nn.Parameter, a user's)
    __module__ = "tests.runtime.test_arrays"


@pytest.mark.parametrize("obj,library,first", [
    (producers.TorchTensor(A, (2,)), "torch", "always"),
    (TorchParameter(A, (2,)), "torch", "always"),
    (producers.JaxArray(A, (2,), np.float16), "JAX", "metadata"),
    (np.zeros(2), "numpy", "always"),
    (cuda_array(A, (2,)), "FakeDLPack", None),
])
def test_the_reader_is_chosen_by_the_library(obj, library, first):
    p = arrays.producer_of(obj)
    assert (p.first if p is not None else None) == first
    assert arrays.library_of(obj) == library


@pytest.mark.parametrize("dtype,data_type", [
    ("float8_e4m3fn", D.CUDNN_DATA_FP8_E4M3), ("float8_e5m2", D.CUDNN_DATA_FP8_E5M2),
    ("bfloat16", D.CUDNN_DATA_BFLOAT16), ("float16", D.CUDNN_DATA_HALF), ("bool", BOOL),
    ("int64", D.CUDNN_DATA_INT64)])
def test_torch_tensors_are_read_by_their_own_attributes_fp8_included(monkeypatch, dtype, data_type):
    torch = producers.torch_module(current_stream=0x5000)
    monkeypatch.setitem(sys.modules, "torch", torch)
    t = producers.TorchTensor(A, (N, C, H, W), nhwc_strides(N, C, H, W), dtype=dtype, device=("cuda", 0))
    info = arrays.describe(t)  # its __dlpack__ fails as cuda.core's torch path does on fp8: never called
    assert (info.data_type, info.shape, info.strides, info.ptr) == (data_type, (N, C, H, W), nhwc_strides(N, C, H, W),
                                                                     A)
    assert info.device == "cuda" and info.library == "torch" and info.protocol == "torch attributes"
    assert info.nbytes == N * C * H * W * t.element_size() and torch.waits == []  # metadata: no ordering
    assert arrays.view(t, stream=0x7000).ptr == A
    assert torch.waits == [(0x7000, 0x5000)]  # the consumer waits for torch's current stream
    arrays.view(t, stream=0x5000)
    assert torch.waits == [(0x7000, 0x5000)]  # the same stream: nothing to order


def test_fp8_torch_tensors_bind_to_fp8_tensors(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", producers.torch_module())
    spec = _packing.TensorSpec(7, "x8", (N, C, H, W), nhwc_strides(N, C, H, W), D.CUDNN_DATA_FP8_E4M3)
    good = producers.TorchTensor(A, (N, C, H, W), nhwc_strides(N, C, H, W), dtype="float8_e4m3fn")
    assert _packing.resolve_slot(7, spec, good, stream=0x7000)[0] == A
    wrong = producers.TorchTensor(A, (N, C, H, W), nhwc_strides(N, C, H, W), dtype="float8_e5m2")
    with pytest.raises(ValueError, match=r"^UID 7 \(x8\): the array holds torch float8_e5m2 \(CUDNN_DATA_FP8_E5M2\) "
                                         r"but the tensor is CUDNN_DATA_FP8_E4M3"):
        _packing.resolve_slot(7, spec, wrong)


@pytest.mark.parametrize("tensor,match", [
    (producers.TorchTensor(A, (4,), layout="torch.sparse_coo"),
     r"^x: torch float16 TorchTensor: a sparse_coo tensor; cuDNN reads strided \(dense\) memory"),
    (producers.TorchTensor(A, (4,), dtype="complex64", conj=True),
     r"^x: torch complex64 TorchTensor: its lazy conj bit is set; call .resolve_conj\(\) first$"),
    (producers.TorchTensor(A, (4,), device=("meta", None)),
     r"^x: torch float16 TorchTensor: it lives on meta, neither the host nor a CUDA GPU$"),
])
def test_torch_tensors_cudnn_cannot_read_are_refused_in_one_line(tensor, match):
    with pytest.raises(TypeError, match=match):
        arrays.view(tensor, what="x")


def test_torch_dtypes_cudnn_lacks_are_refused_naming_them(monkeypatch):
    spec = _packing.TensorSpec(7, "x8", (4,), (1,), D.CUDNN_DATA_FP8_E4M3)
    fnuz = producers.TorchTensor(A, (4,), dtype="float8_e4m3fnuz")
    assert arrays.describe(fnuz).data_type is None
    with pytest.raises(ValueError, match=r"^UID 7 \(x8\): the array holds torch float8_e4m3fnuz, which has no cuDNN "
                                         r"data type \(the fnuz variant .*float8_e4m3fn\), but the tensor is "
                                         r"CUDNN_DATA_FP8_E4M3"):
        _packing.resolve_slot(7, spec, fnuz)


def test_jax_metadata_is_read_without_dlpack_and_with_a_stream_through_it():
    a = producers.JaxArray(A, (N, H, W, C), np.float16, code=FLOAT, bits=16)
    info = arrays.describe(a)  # JAX refuses __dlpack__(stream=-1): its own attributes, never DLPack
    assert a.streams == [] and a.waited == 0
    assert (info.shape, info.strides, info.ptr, info.data_type) == ((N, H, W, C), (H * W * C, W * C, C, 1), A,
                                                                    D.CUDNN_DATA_HALF)
    assert info.library == "JAX" and info.protocol == "JAX attributes" and info.device_id == 0
    ordered = arrays.view(a, stream=0x7000)  # with a real consumer stream: DLPack, which JAX orders itself
    assert a.streams == [0x7000] and ordered.protocol == "dlpack" and ordered.ptr == A and a.waited == 0


def test_jax_fp8_that_dlpack_refuses_is_read_by_attributes_after_the_host_waits():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = producers.JaxArray(A, (4, 8), ml_dtypes.float8_e4m3fn, code=10, bits=8, dlpack_refuses=True)
    assert arrays.describe(a).data_type is D.CUDNN_DATA_FP8_E4M3
    info = arrays.view(a, stream=0x7000)
    assert set(a.streams) == {0x7000} and a.waited == 1  # DLPack refused the dtype: the host waited for the array
    assert info.data_type is D.CUDNN_DATA_FP8_E4M3 and info.nbytes == 32 and info.protocol == "JAX attributes"


@pytest.mark.parametrize("array,match", [
    (producers.JaxArray(A, (4,), np.float16, devices=[producers.JaxDevice(), producers.JaxDevice("gpu", 1)]),
     r"^x: JAX float16 JaxArray: the array is split over 2 devices; bind one shard"),
    (producers.JaxArray(A, (4,), np.float16, deleted=True), r"^x: JAX float16 JaxArray: the array was deleted"),
    (producers.JaxArray(A, (4,), np.float16, devices=[producers.JaxDevice("tpu")]),
     r"^x: JAX float16 JaxArray: it lives on tpu, neither the host nor a CUDA GPU$"),
])
def test_jax_arrays_cudnn_cannot_read_are_refused_in_one_line(array, match):
    with pytest.raises(TypeError, match=match):
        arrays.view(array, what="x")


def test_ml_dtypes_bfloat16_and_fp8_host_arrays_are_recognised():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for dtype, data_type in ((ml_dtypes.bfloat16, D.CUDNN_DATA_BFLOAT16),
                             (ml_dtypes.float8_e4m3fn, D.CUDNN_DATA_FP8_E4M3),
                             (ml_dtypes.float8_e5m2, D.CUDNN_DATA_FP8_E5M2)):
        info = arrays.view(np.zeros((2, 3), dtype).T)
        assert info.data_type is data_type and info.strides == (1, 3) and info.itemsize == np.dtype(dtype).itemsize
    ieee = arrays.view(np.zeros(2, ml_dtypes.float8_e4m3))  # IEEE-style e4m3: not cuDNN's E4M3 (e4m3fn)
    assert ieee.data_type is None and "float8_e4m3fn" in arrays.no_data_type_reason(ieee.dtype_name)
    with pytest.raises(TypeError, match=r"no cuDNN data type for .*float8_e4m3.* cuDNN's FP8_E4M3 is float8_e4m3fn"):
        arrays.data_type_of(np.dtype(ml_dtypes.float8_e4m3))


def test_host_dlpack_producers_are_read_by_numpy():
    info = arrays.view(FakeDLPack(np.zeros(6, np.float32).ctypes.data, (2, 3), bits=32, device_type=dlpack.kDLCPU))
    assert info.device == "cpu" and info.protocol == "numpy" and info.data_type is D.CUDNN_DATA_FLOAT


def test_host_arrays_are_read_without_cuda_core():
    """A base install (no gpu extra): numpy arrays are described, Tensor.from_array works, and the example of
    tensors runs; a GPU array names the extra it needs."""
    code = textwrap.dedent("""
        import sys
        sys.modules["cuda.core"] = sys.modules["cuda.bindings"] = None  # as without the gpu extra
        import numpy as np
        import runpy
        from cudnn_backend.typed import Tensor, arrays
        from cudnn_backend.errors import MissingDependencyError
        from tests.helpers.dlpack import cuda_array
        a = np.zeros((2, 4, 5, 3), np.float16).transpose(0, 3, 1, 2)
        assert arrays.describe(a).strides == (60, 1, 15, 3)
        t = Tensor.from_array(a, uid=7)
        assert list(t.strides) == [60, 1, 15, 3]
        runpy.run_path("examples/graph_tensors.py", run_name="__main__")
        try:
            arrays.view(cuda_array(0x10000, (2,)))
        except MissingDependencyError as e:
            print("refused:", e)
        print("ok")
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=child_env(),
                         timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.rstrip().endswith("ok") and "refused: reading GPU arrays" in res.stdout, res.stdout[-2000:]


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


def test_a_padded_array_in_its_own_row_major_order_describes_a_padded_tensor():
    # an NHWC-shaped slice of a wider buffer (numba, cupy): each pixel's 8 channels 16 elements apart
    padded = _info((2, 4, 6, 8), (384, 96, 16, 1))
    assert arrays.layout_mismatch(padded, (2, 8, 4, 6), (384, 1, 96, 16)) is None


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
     r"UID 1 \(x\): the array holds FakeDLPack float32 \(CUDNN_DATA_FLOAT\) but the tensor is CUDNN_DATA_HALF"),
    ("x", cuda_array(A, (N, C, H, W), code=INT, bits=32), ValueError,
     r"UID 1 \(x\): the array holds FakeDLPack int32 \(CUDNN_DATA_INT32\) but the tensor is CUDNN_DATA_HALF"),
    ("x", FakeDLPack(A, (N, C, H, W), code=12, bits=8), ValueError,
     r"UID 1 \(x\): the array holds FakeDLPack float8_e5m2 \(CUDNN_DATA_FP8_E5M2\) but the tensor is CUDNN_DATA_HALF"),
    ("x", FakeDLPack(A, (N, C, H, W), code=99, bits=8), ValueError,
     r"UID 1 \(x\): the array holds FakeDLPack DLPack code 99 \(unknown\) of 8 bits, which has no cuDNN data type, "
     r"but the tensor is CUDNN_DATA_HALF"),
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
     r"UID 1 \(x\): the array \(numpy float16 \[2, 8, 4, 4\] strides \[128, 16, 4, 1\] on the host\) is host "
     r"memory; "
     r"cuDNN needs device memory"),
    ("x", FakeDLPack(A, (N, C, H, W), device_type=dlpack.kDLCUDAHost), TypeError,
     r"UID 1 \(x\): the array \(FakeDLPack float16 .* on the host\) is host memory"),
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
    with pytest.raises(ValueError, match="holds FakeDLPack float32"):
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
                                       D.CUDNN_DATA_BYTE_BOOLEAN])
def test_plain_types_are_their_numpy_types(data_type):
    stored = arrays.encode(np.array([0, 1, 3, 7]), data_type)
    assert stored.dtype == arrays.storage_dtype(data_type)
    assert stored.dtype.itemsize * 8 == arrays.DATA_TYPE_BITS[data_type]
    assert arrays.decode(stored, data_type).tolist() == (
        [False, True, True, True] if data_type == D.CUDNN_DATA_BYTE_BOOLEAN else [0, 1, 3, 7])


def test_types_without_host_storage_are_refused():
    with pytest.raises(TypeError, match="no host storage for cuDNN data type"):
        arrays.storage_dtype(D.CUDNN_DATA_INT8x4)


def test_tensor_from_array_refuses_a_dtype_cudnn_lacks_in_one_line():
    with pytest.raises(TypeError, match=r"^array: the numpy complex64 array has no cuDNN data type; pass data_type="):
        cb.typed.Tensor.from_array(np.zeros((2, 3), np.complex64))
    t = cb.typed.Tensor.from_array(np.zeros((2, 3), np.uint16), data_type=D.CUDNN_DATA_HALF)
    assert t.signature()[3] == D.CUDNN_DATA_HALF


# ---------------------------------------------------------------------------------------------
# views and producers that would bind the wrong elements, or name nothing, are refused in one line
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,strides,dims,tensor_strides", [
    ((4, 4), (1, 4), (4, 4), (4, 1)),  # a.T of a square matrix: the same (size, stride) pairs, transposed
    ((2, 4, 4), (16, 1, 4), (2, 4, 4), (16, 4, 1)),  # a batch of them
    ((N, H, H, C), (H * H * C, C, H * C, 1), (N, C, H, H), nhwc_strides(N, C, H, H)),  # H and W swapped (H == W)
])
def test_transposed_views_are_refused_even_where_their_pairs_match(shape, strides, dims, tensor_strides):
    problem = arrays.layout_mismatch(_info(shape, strides), dims, tensor_strides)
    assert problem is not None and "is the tensor's memory in another axis order; bind a view in the tensor's " \
        f"order (dims {list(dims)}" in problem, problem
    assert arrays.layout_mismatch(_info(dims, tensor_strides), dims, tensor_strides) is None


@pytest.mark.parametrize("dims", [(16, 3, 3, 3), (2, 4, 4, 4)])
def test_an_array_shaped_as_the_dims_with_other_strides_is_refused_where_sizes_repeat(dims):
    # a row-major KCRS filter for an NHWC (KRSC) one whose C, R and S are equal: the same (size, stride) pairs in
    # another order, and in its own row-major order, yet its axes are the tensor's: bound, it would scramble the filter
    n, c, h, w = dims
    nchw = (c * h * w, h * w, w, 1)
    problem = arrays.layout_mismatch(_info(dims, nchw), dims, nhwc_strides(n, c, h, w))
    assert problem is not None and f"the array's shape {list(dims)} is the tensor's dims, but its strides " \
        f"{list(nchw)}" in problem, problem
    # a KRSC buffer is the same array here (nothing tells them apart), so only a view with the tensor's strides binds
    assert arrays.layout_mismatch(_info(dims, nhwc_strides(n, c, h, w)), dims, nhwc_strides(n, c, h, w)) is None


@pytest.mark.parametrize("array,match", [
    (np.zeros((4, 6), np.float32)[::-1], r"strides \[-6, 1\] \(shape \[4, 6\]\): a reversed or broadcast view"),
    (np.broadcast_to(np.zeros(6, np.float32), (4, 6)), r"strides \[0, 1\] \(shape \[4, 6\]\)"),
    (np.zeros(5, np.float16)[::-1], r"strides \[-1\]"),
])
def test_tensor_from_array_refuses_reversed_and_broadcast_views(array, match):
    with pytest.raises(ValueError, match=r"^array: " + match):
        cb.typed.Tensor.from_array(array)
    size_one = np.lib.stride_tricks.as_strided(np.zeros(6, np.float32), shape=(1, 6), strides=(0, 4))
    t = cb.typed.Tensor.from_array(size_one)  # a dim of size 1 may have any stride
    assert [list(x) for x in t.signature()[1:3]] == [[1, 6], [1, 1]]


@pytest.mark.parametrize("dtype", [">f4", ">f2", ">i4"])
def test_the_other_byte_order_is_refused_by_every_reader(dtype):
    with pytest.raises(TypeError, match=rf"^array: numpy \w+ ndarray: its dtype '{dtype}' is big-endian"):
        arrays.describe(np.zeros(4, dtype))
    view = type("View", (), {"dtype": np.dtype(dtype)})()  # cuda.core's view of a CAI typestr of that order
    with pytest.raises(TypeError, match=f"its dtype '{dtype}' is big-endian"):
        arrays._smv_dtype(view, object())


@pytest.mark.parametrize("shape,strides,match", [
    ((2.9, 8), None, r"its shape \(2.9, 8\) is not a sequence of integers"),
    (("2", 8), None, r"is not a sequence of integers"),
    ((2, 8), (8.0, 1), r"its strides \(8.0, 1\) is not a sequence of integers"),
    ((2 ** 40, 2 ** 40), None, r"spans more than 72057594037927936 elements"),  # (2**56)
    ((2 ** 62, 4), None, r"spans more than"),
    ((-2, 4), None, r"a negative size"),
    ((2, 4), (4,), r"do not match its shape"),
])
def test_producer_shapes_that_are_no_tensor_are_refused(shape, strides, match):
    with pytest.raises(TypeError, match=match):
        arrays._info(shape, strides, "float16", 2, A, "cuda", 0, "cuda_array_interface", "x")
    with pytest.raises(TypeError, match=r"it names CUDA device -1, no device ordinal"):
        arrays._info((2, 4), None, "float16", 2, A, "cuda", -1, "dlpack", "x")


def test_a_bare_assertion_of_cuda_core_is_said_to_be_a_malformed_export():
    assert "AssertionError: (no message: the producer's DLPack capsule or interface dict is malformed)" == \
        arrays._failure(AssertionError())


class _Raising:
    """A producer whose protocol attributes (and dtype) raise something else than AttributeError."""

    def __init__(self, *attributes):
        self.attributes = attributes

    def __getattr__(self, name):
        if name in self.attributes or name == "dtype":
            raise RuntimeError("boom")
        raise AttributeError(name)


@pytest.mark.parametrize("attributes", [("__cuda_array_interface__",), ("__array_interface__",),
                                        ("__dlpack__", "__dlpack_device__")])
def test_a_producer_attribute_that_raises_is_named_in_one_line(attributes):
    with pytest.raises(TypeError, match=r"^array: _Raising: .*RuntimeError: boom$"):
        arrays.describe(_Raising(*attributes))


def test_numpy_operator_mixins_are_read_through_their_protocols():
    class Host(np.lib.mixins.NDArrayOperatorsMixin):
        def __init__(self, a):
            self.a = a

        def __array__(self, dtype=None, copy=None):
            return self.a

    class Device(np.lib.mixins.NDArrayOperatorsMixin):
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f2", "data": (A, False), "version": 3}

    assert arrays.producer_of(Host(np.zeros(3))) is None and arrays.producer_of(Device()) is None
    info = arrays.describe(Host(np.zeros(3, np.float16)))
    assert (info.shape, info.data_type, info.device) == ((3,), D.CUDNN_DATA_HALF, "cpu")
    assert arrays.producer_of(np.zeros(3)).library == "numpy"
    assert arrays.producer_of(np.float32(1)).library == "numpy"


def test_check_dtype_false_still_checks_the_size(conv):
    og, x, w, y = conv
    unknown = FakeDLPack(A, (N * C * H * W,), code=99, bits=8)  # no data type: its size is the export's
    with pytest.raises(ValueError, match=r"UID 1 \(x\): the buffer holds 256 bytes but the tensor .* spans 512"):
        VariantPack(None, {x: unknown, w: 2 * A, y: 3 * A}, operation_graph=og, check_dtype=False)
    fits = FakeDLPack(A, (N * C * H * W,), code=99, bits=16)
    assert VariantPack(None, {x: fits, w: 2 * A, y: 3 * A}, operation_graph=og, check_dtype=False).pointers[x.uid] == A
    small = cuda_array(A, (N * C * H * W // 4,), bits=32)  # 256 bytes, for a 512-byte fp16 tensor
    with pytest.raises(ValueError, match=r"UID 1 \(x\): the buffer holds 256 bytes but the tensor .* spans 512"):
        VariantPack(None, {x: small, w: 2 * A, y: 3 * A}, operation_graph=og, check_dtype=False)


def test_a_scalar_no_float_holds_is_refused_naming_its_slot():
    with pytest.raises(ValueError, match=r"^UID 9 \(s\): 1000+ does not fit in CUDNN_DATA_FLOAT \(it rounds to "
                                         r"infinity; its largest finite value is 3.40282e\+38\)$"):
        _packing.scalar_bytes(10 ** 400, D.CUDNN_DATA_FLOAT, "UID 9 (s)")
    with pytest.raises(ValueError, match=r"^UID 9 \(s\): 1000+ does not fit in CUDNN_DATA_INT64"):
        _packing.scalar_bytes(10 ** 400, D.CUDNN_DATA_INT64, "UID 9 (s)")


class _RaisingProtocol:
    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("boom")


def test_a_buffer_whose_protocol_raises_is_named_in_one_line(conv):
    og, x, w, y = conv
    with pytest.raises(TypeError, match=r"^UID 1 \(x\): _RaisingProtocol: .*RuntimeError: boom$"):
        VariantPack(None, {x: _RaisingProtocol(), w: 2 * A, y: 3 * A}, operation_graph=og)


# ---------------------------------------------------------------------------------------------
# memory a pack takes: from the pointer up, writable where cuDNN writes, sizes an int64 holds
# ---------------------------------------------------------------------------------------------
REVERSED = r"\) has negative strides: its elements lie below its pointer, where cuDNN, reading from the pointer up, " \
           r"never looks; bind a copy in memory order"


def test_a_reversed_array_is_never_taken_as_memory(conv):
    og, x, w, y = conv
    reversed_bytes = cuda_array(A + 4095, (4096,), (-1,), bits=8, code=UINT)
    assert arrays.describe(reversed_bytes).descending
    with pytest.raises(ValueError, match=r"^workspace: the array \(FakeDLPack uint8 \[4096\] strides \[-1\] on "
                                         r"cuda:0" + REVERSED):
        _packing.resolve_workspace(reversed_bytes, 4096)
    flat = cuda_array(A + 510, (N * C * H * W,), (-1,))
    for check_dtype in (True, False):  # (without the dtype check the layout is not compared: still refused)
        with pytest.raises(ValueError, match=r"^UID 1 \(x\): the array \(FakeDLPack float16 \[256\] strides \[-1\] on "
                                             r"cuda:0" + REVERSED):
            VariantPack(None, {x: flat, w: 2 * A, y: 3 * A}, operation_graph=og, check_dtype=check_dtype)
    with pytest.raises(ValueError, match=r"^UID 1 \(x\): the array \(FakeDLPack float32 \[256\] strides \[-1\] on "
                                         r"cuda:0" + REVERSED):
        VariantPack(None, {x: cuda_array(A + 1020, (256,), (-1,), bits=32), w: 2 * A, y: 3 * A}, operation_graph=og,
                    check_dtype=False)
    pack = _pack(conv)
    with pytest.raises(ValueError, match=r"^workspace: the array .*" + REVERSED):
        pack.rebind(workspace=reversed_bytes)
    size_one = cuda_array(A, (1, 4096), (-1, 1), bits=8, code=UINT)  # a dim of one element steps nowhere
    assert _packing.resolve_workspace(size_one, 4096)[:2] == (A, 4096)


@pytest.mark.parametrize("stream,exc,match", [
    (1.5, TypeError, r"^stream: expected an int \(a CUDA stream's handle, or -1\), not float$"),
    ("7", TypeError, r"not str$"), (None, TypeError, r"not NoneType$"), (True, TypeError, r"not bool$"),
    (-2, ValueError, r"^stream: -2 is neither a CUDA stream's handle nor -1"), (2 ** 64, ValueError, r"^stream: "),
])
def test_view_names_a_stream_that_is_no_stream(stream, exc, match):
    with pytest.raises(exc, match=match):
        arrays.view(cuda_array(A, (4,)), stream=stream)


@pytest.mark.parametrize("workspace,refusal", [
    (type("Buffer", (), {"__module__": "cuda.core._memory", "handle": 0, "size": 4096})(),
     r"^workspace: null device pointer; the plan needs a 4096-byte workspace$"),
    (cuda_array(A, (16,), bits=16, lanes=4), r"^the workspace holds 128 bytes but the plan needs 4096$"),
    (cuda_array(A, (16,), bits=8, code=UINT), r"^the workspace holds 16 bytes but the plan needs 4096$"),
])
def test_a_workspace_array_must_point_somewhere_and_hold_the_plans_bytes(workspace, refusal):
    with pytest.raises(ValueError, match=refusal):
        _packing.resolve_workspace(workspace, 4096)
    _packing.resolve_workspace(workspace, 0)  # a plan that needs none reads none of it


def test_a_torch_tensor_at_address_zero_is_no_workspace(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", producers.torch_module())
    # (refused where it is read, as every producer's NULL pointer for elements is)
    with pytest.raises(TypeError, match=r"^workspace: torch uint8 TorchTensor: its data pointer is NULL, for 1024 "
                                        r"elements \(shape \[1024\]\)$"):
        _packing.resolve_workspace(producers.TorchTensor(0, (1024,), dtype="uint8"), 131)


def _cai(readonly=False, **members):
    return type("Cai", (), {"__cuda_array_interface__": {"shape": (4096,), "typestr": "|u1", "data": (A, readonly),
                                                         "version": 3, **members}})()


@pytest.mark.parametrize("workspace,holds", [
    (cuda_array(A, (4096,), bits=8, code=UINT, versioned=True, readonly=True), "FakeDLPack uint8"),
    (producers.JaxArray(A, (4096,), np.uint8, code=UINT, bits=8), "JAX uint8"),
    (_cai(readonly=True), "Cai uint8"),
])
def test_a_read_only_array_is_no_workspace(monkeypatch, conv, workspace, holds):
    cai = hasattr(workspace, "__cuda_array_interface__")
    monkeypatch.setattr(arrays, "_strided_memory_view", lambda: _CaiView if cai else _real_strided_memory_view())
    og, x, w, y = conv
    refusal = (rf"^workspace: the array \({holds} \[4096\] strides \[1\] on cuda:0\) is read-only, but the plan uses "
               r"it as its workspace: cuDNN would write memory its owner declared immutable; bind a writable array$")
    buffers = {x: A, w: 2 * A, y: 3 * A}
    with pytest.raises(ValueError, match=refusal):
        VariantPack(None, buffers, workspace, operation_graph=og)
    pack = VariantPack(None, buffers, operation_graph=og)
    with pytest.raises(ValueError, match=refusal):
        pack.rebind(workspace=workspace)
    assert pack.workspace == 0  # unchanged
    with pytest.raises(ValueError, match=refusal):
        execute(None, None, buffers, workspace)  # (refused as it is packed, before any handle is asked for)
    monkeypatch.undo()
    writable = cuda_array(A, (4096,), bits=8, code=UINT, versioned=True)
    assert pack.rebind(workspace=writable).workspace == A


def test_arrays_and_tensors_past_the_tensor_span_are_refused_naming_them():
    g = Graph("huge")
    with pytest.raises(ValueError, match=r"^dims: \[1, 2147483648, 2147483648\] spans 4611686018427387904 elements; "
                                         r"a cuDNN tensor spans at most 72057594037927936$"):
        g.tensor([1, 2 ** 31, 2 ** 31], name="x")  # 2**62 elements
    huge = cuda_array(A, (2 ** 62,), bits=32)
    spec = _packing.TensorSpec(7, "t", (4,), (1,), D.CUDNN_DATA_FLOAT)
    for refused in (lambda: _packing.resolve_workspace(huge, 0), lambda: _packing.resolve_slot(7, spec, huge)):
        with pytest.raises(TypeError, match=r"^(workspace|UID 7 \(t\)): FakeDLPack: its shape "
                                            r"\[4611686018427387904\] with strides \[1\] spans more than "
                                            r"72057594037927936 elements$"):
            refused()


def test_a_jax_array_on_device_zero_is_on_device_zero():
    first = producers.JaxDevice("gpu", 0)
    first.id = 8  # JAX's own id; the CUDA ordinal is local_hardware_id
    assert arrays.describe(producers.JaxArray(A, (4,), np.float16, devices=[first])).device_id == 0
    no_hardware_id = producers.JaxDevice("gpu", None)
    no_hardware_id.id = 3
    assert arrays.describe(producers.JaxArray(A, (4,), np.float16, devices=[no_hardware_id])).device_id == 3


# ---------------------------------------------------------------------------------------------
# arrays described as tensors, element for element
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [cb.typed.Tensor.from_array, lambda a, **kw: Graph().from_array(a, **kw)])
def test_another_data_type_is_taken_only_of_the_arrays_element_size(make):
    with pytest.raises(TypeError, match=r"^array: the array holds numpy float32, 4-byte elements, but CUDNN_DATA_HALF "
                                        r"has 2-byte elements: the array's shape \[4, 6\] and strides \[6, 1\], "
                                        r"counted in its own elements, would describe other memory; view the array as "
                                        r"2-byte elements first \(a.view\(numpy.uint16\)\)$"):
        make(np.zeros((4, 6), np.float32), data_type=D.CUDNN_DATA_HALF)
    with pytest.raises(TypeError, match=r"^array: the array holds numpy uint8, 1-byte elements, but CUDNN_DATA_INT4 "
                                        r"has 4-bit elements: .*; give the tensor its own dims and strides"):
        make(np.zeros(8, np.uint8), data_type="CUDNN_DATA_INT4")
    reinterpreted = make(np.zeros((4, 6), np.float32).view(np.uint16), data_type="half")  # all 96 bytes
    assert list(reinterpreted.signature().dims) == [4, 12]
    assert make(np.zeros(8, np.int8), data_type=D.CUDNN_DATA_FP8_E4M3).signature().data_type == \
        D.CUDNN_DATA_FP8_E4M3


def test_a_misaligned_array_is_refused_naming_the_alignment():
    base = np.zeros(32, np.uint8)
    start = (-base.ctypes.data) % 16 + 1  # one byte past a 16-byte boundary
    misaligned = base[start:start + 16].view(np.float32)
    with pytest.raises(ValueError, match=r"^array: its data pointer 0x[0-9a-f]+ is 1-byte aligned, not a multiple of "
                                         r"its 4-byte CUDNN_DATA_FLOAT elements, as cuDNN needs: describe an aligned "
                                         r"copy \(a.copy\(\)\), or pass alignment= \(a multiple of 4\)"):
        cb.typed.Tensor.from_array(misaligned)
    assert cb.typed.Tensor.from_array(misaligned, alignment=16).byte_alignment == 16  # for memory bound later
    assert cb.typed.Tensor.from_array(misaligned.view(np.uint8)).byte_alignment == 1  # 1-byte elements


# ---------------------------------------------------------------------------------------------
# 4-bit dtypes: one element a byte in every library, two a byte in cuDNN
# ---------------------------------------------------------------------------------------------
def _four_bit_arrays():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for dtype in (ml_dtypes.int4, ml_dtypes.uint4):
        yield np.zeros(8, dtype), "numpy", -1  # numpy's reader
        yield producers.JaxArray(A, (8,), dtype, code=INT, bits=4), "JAX", -1  # JAX's attributes
        yield producers.JaxArray(A, (8,), dtype, code=INT, bits=4), "JAX", 0x7000  # DLPack refuses 4 bits: JAX's


def test_four_bit_arrays_have_no_cudnn_data_type_in_any_reader():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for array, library, stream in _four_bit_arrays():
        info = arrays.view(array, stream=stream)
        assert (info.library, info.data_type, info.itemsize) == (library, None, 1)
        packed = "INT4" if info.dtype_name == "int4" else "UINT4"
        assert arrays.no_data_type_reason(info.dtype_name) == (
            f"one element a byte, while cuDNN's {packed} packs two elements a byte: bind the packed bytes as a flat "
            "uint8 array")
    for dtype in (ml_dtypes.int4, np.dtype(ml_dtypes.uint4), "int4", ml_dtypes.float4_e2m1fn):
        with pytest.raises(TypeError, match=r"no cuDNN data type for .* \(one element a byte, while cuDNN's"):
            arrays.data_type_of(dtype)
    assert arrays.data_type_of("CUDNN_DATA_INT4") is D.CUDNN_DATA_INT4  # cuDNN's own name: its packed type


def test_four_bit_arrays_describe_no_tensor_and_bind_to_none(conv):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    with pytest.raises(TypeError, match=r"^array: the numpy int4 array has no cuDNN data type \(one element a byte, "
                                        r"while cuDNN's INT4 packs two elements a byte: bind the packed bytes as a "
                                        r"flat uint8 array\); pass data_type="):
        cb.typed.Tensor.from_array(np.zeros((2, 4), ml_dtypes.int4))
    g = Graph("int4")
    x = g.tensor([1, 8], data_type="CUDNN_DATA_INT4", name="x")
    y = g.tensor([1, 8], data_type="CUDNN_DATA_INT4", name="y")
    g.add(cb.typed.OperationPointwise(pw_descriptor=cb.typed.Pointwise(mode="CUDNN_POINTWISE_IDENTITY",
                                                                       math_prec="CUDNN_DATA_FLOAT").finalize(),
                                      xdesc=x, ydesc=y))
    with pytest.raises(ValueError, match=r"^UID 1 \(x\): the array holds JAX int4, which has no cuDNN data type \(one "
                                         r"element a byte, while cuDNN's INT4 packs two"):
        VariantPack(None, {x: producers.JaxArray(A, (1, 8), ml_dtypes.int4, code=INT, bits=4), y: 2 * A},
                    operation_graph=g.build())


# ---------------------------------------------------------------------------------------------
# what cuda.core would take on trust or fail on with a bare assert
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("members,match", [
    ({"shape": (2.9, 3)}, r"its __cuda_array_interface__ shape \(2.9, 3\) is not a sequence of integers$"),
    ({"shape": (True, 3)}, r"its __cuda_array_interface__ shape \(True, 3\) is not a sequence of integers$"),
    ({"shape": (2, 3), "strides": (6.5, 2)}, r"its __cuda_array_interface__ strides \(6.5, 2\) is not a sequence"),
    ({"stream": 0}, r"its __cuda_array_interface__ stream is 0, which the interface forbids \(ambiguous: 1 is the "
                    r"legacy default stream, 2 the per-thread one\)$"),
    ({"stream": -1}, r"its __cuda_array_interface__ stream is -1, no stream handle$"),
    ({"stream": 2.0}, r"its __cuda_array_interface__ stream 2.0 is no integer \(a stream handle, or None\)$"),
    ({"data": (None, False)}, r"its __cuda_array_interface__ data \(None, False\) is not \(pointer, read-only flag\) "
                              r"with the pointer an address \(an int from 0 to 2\*\*63 - 1\)$"),
    ({"data": (-16, False)}, r"its __cuda_array_interface__ data \(-16, False\) is not \(pointer, read-only flag\)"),
    ({"data": (2 ** 64, False)}, r"its __cuda_array_interface__ data \(18446744073709551616, False\) is not"),
    ({"data": (2 ** 64 - 16, False)}, r"its __cuda_array_interface__ data \(18446744073709551600, False\) is not"),
    ({"shape": (1 << 63,)}, r"its __cuda_array_interface__ shape \[9223372036854775808\] has a value past int64$"),
    ({"shape": (2, 3), "strides": (-(1 << 63) - 2, 2)}, r"its __cuda_array_interface__ strides \[-9223372036854775810, "
                                                        r"2\] has a value past int64$"),
    ({"version": "3"}, r"its __cuda_array_interface__ version '3' is no integer \(an export says which version it "
                       r"is: 3 today\)$"),
    ({"version": None}, r"its __cuda_array_interface__ has no version \(an export says which version it is: 3 "
                        r"today\)$"),
    ({"data": 65536}, r"its __cuda_array_interface__ data 65536 is not \(pointer, read-only flag\)"),
    ({"typestr": None}, r"its __cuda_array_interface__ typestr None is no type string \(such as '<f4'\)$"),
    ({"typestr": 4}, r"its __cuda_array_interface__ typestr 4 is no type string"),
    ({"data": (0, False)}, r"its __cuda_array_interface__ data pointer is NULL, for 4096 elements \(shape \[4096\]\)$"),
    ({"data": (0, False), "shape": (1,)}, r"its __cuda_array_interface__ data pointer is NULL, for 1 element "
                                          r"\(shape \[1\]\)$"),
])
def test_interface_members_cuda_core_misreads_are_refused_naming_them(monkeypatch, members, match):
    monkeypatch.setattr(arrays, "_strided_memory_view", lambda: _CaiView)
    with pytest.raises(TypeError, match=r"^x: Cai: " + match):
        arrays.view(_cai(**members), what="x")
    assert arrays.view(_cai(stream=1), stream=0x7000).shape == (4096,)  # a well-formed dict reaches cuda.core


@pytest.mark.parametrize("device_id", [-1, 1 << 40])
def test_a_dlpack_export_naming_no_device_ordinal_is_refused_naming_it(device_id):
    with pytest.raises(TypeError, match=rf"^x: FakeDLPack: its __dlpack_device__\(\) names CUDA device {device_id}, no "
                                        r"device ordinal$"):
        arrays.view(cuda_array(A, (4,), device_id=device_id), what="x")


@pytest.mark.parametrize("device", [(2.7, 0), ("2", "0"), (2, True)])
def test_a_dlpack_device_of_other_than_two_ints_is_refused(device):
    class Odd(FakeDLPack):
        def __dlpack_device__(self):
            return device

    with pytest.raises(TypeError, match=r"^x: Odd: its __dlpack_device__\(\) gave .*, not two ints \(a device type and "
                                        r"id\)$"):
        arrays.view(Odd(A, (4,)), what="x")


def test_a_dlpack_export_without_dlpack_device_says_so():
    class NoDevice:
        def __dlpack__(self, **kwargs):
            raise AssertionError("never asked: the device comes first")

    with pytest.raises(TypeError, match=r"^x: NoDevice: it has __dlpack__ but no __dlpack_device__, which DLPack "
                                        r"consumers ask first"):
        arrays.view(NoDevice(), what="x")


def test_a_timedelta_is_no_scalar():
    for value in (np.timedelta64(1, "s"), np.timedelta64(1)):  # (numpy registers timedelta64 as an integer)
        with pytest.raises(TypeError, match=r"^UID 3 \(s\): a by-value tensor takes a real number \(int, float, "
                                            r"bool\), a 1-element array or raw bytes, not timedelta64$"):
            _packing.scalar_bytes(value, D.CUDNN_DATA_FLOAT, "UID 3 (s)")
        with pytest.raises(TypeError, match=r"^s: a CUDNN_DATA_FLOAT scalar takes a real number, not timedelta64$"):
            Graph().scalar(value, name="s")


@pytest.mark.parametrize("value", [float("nan"), 1.5, 2, -1, __import__("fractions").Fraction(1, 2)])
def test_a_boolean_scalar_takes_only_truth_values(value):
    with pytest.raises(ValueError, match=r"^UID 3 \(s\): .* is no truth value \(CUDNN_DATA_BOOLEAN takes True, False, "
                                         r"0 or 1\)$"):
        _packing.scalar_bytes(value, D.CUDNN_DATA_BOOLEAN, "UID 3 (s)")
    for truth, code in ((True, b"\x01"), (False, b"\x00"), (1, b"\x01"), (0.0, b"\x00"), (np.bool_(True), b"\x01")):
        assert _packing.scalar_bytes(truth, D.CUDNN_DATA_BOOLEAN, "s") == code


def test_a_pointer_whose_tensor_runs_past_the_address_space_is_refused():
    spec = _packing.TensorSpec(7, "t", (256,), (1,), D.CUDNN_DATA_HALF)
    with pytest.raises(ValueError, match=r"^UID 7 \(t\): pointer 0xffffffffffffff00 plus the 512 bytes the tensor .* "
                                         r"passes the end of the 64-bit address space$"):
        _packing.resolve_slot(7, spec, 2 ** 64 - 256)
    assert _packing.resolve_slot(7, spec, 2 ** 64 - 512)[0] == 2 ** 64 - 512


def test_a_scalar_whose_item_raises_is_named():
    class Broken:
        size = 1

        def item(self):
            return 1 / 0

    with pytest.raises(TypeError, match=r"^UID 3 \(s\): the Broken's item\(\) failed \(ZeroDivisionError: division by "
                                        r"zero\)$"):
        _packing.scalar_bytes(Broken(), D.CUDNN_DATA_FLOAT, "UID 3 (s)")


def test_cuda_objects_that_hold_no_address_are_named():
    stream_like = type("CUstream", (), {"__module__": "cuda.bindings.driver"})()
    with pytest.raises(TypeError, match=r"^UID 7: a CUstream holds no device address \(int\(\) of it fails\); need an "
                                        r"int device address"):
        _packing.resolve_buffer(stream_like, "UID 7")

    class Buffer:
        __module__ = "cuda.core._memory"
        handle, size = 0x10000, 64

        @property
        def is_device_accessible(self):
            raise RuntimeError("function cuPointerGetAttributes is not found")

    with pytest.raises(TypeError, match=r"^UID 7: the cuda.core Buffer cannot say where its memory is \(RuntimeError: "
                                        r"function cuPointerGetAttributes is not found; CUDA driver: "):
        _packing.resolve_buffer(Buffer(), "UID 7")


# ---------------------------------------------------------------------------------------------
# what no reader may describe otherwise than it is
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("device_type", [dlpack.kDLCUDA, dlpack.kDLCPU])
@pytest.mark.parametrize("version", [(2, 0), (0, 9)])
def test_a_versioned_dlpack_capsule_of_another_major_version_is_refused(device_type, version):
    # its struct is laid out otherwise: read as 1.x, its shape and dtype would be whatever lies there; on the host,
    # numpy's refusal must not hand it to cuda.core either
    array = FakeDLPack(A, (2, 3), versioned=True, device_type=device_type, version=version)
    with pytest.raises(TypeError, match=rf"^x: FakeDLPack: its DLPack export is version {version[0]}\.{version[1]}; "
                                        r"this reader knows DLPack 1\.x"):
        arrays.view(array, what="x")
    assert len(array.streams) == 1  # asked once, refused at once
    assert arrays.view(FakeDLPack(A, (2, 3), versioned=True, version=(1, 3))).shape == (2, 3)  # a newer minor: read


def test_a_masked_array_with_masked_elements_is_refused_everywhere():
    masked = np.ma.masked_array(np.arange(4.0, dtype=np.float32), mask=[False, True, False, False])
    with pytest.raises(TypeError, match=r"^x: numpy float32 MaskedArray: a masked array with masked elements"):
        arrays.view(masked, what="x")
    assert arrays.view(np.ma.masked_array(np.arange(4.0))).shape == (4,)  # nothing masked: its memory is its values
    base = np.arange(3.0)

    class HostInterface:  # numpy itself ignores an __array_interface__ mask
        __array_interface__ = {**base.__array_interface__, "mask": np.array([True, False, True])}

    with pytest.raises(TypeError, match=r"^x: HostInterface: a masked array with masked elements"):
        arrays.view(HostInterface(), what="x")
    with pytest.raises(ValueError, match=r"^s: the array's one element is masked; give a value$"):
        _packing.scalar_bytes(np.ma.masked_array([1.0], mask=[True]), D.CUDNN_DATA_FLOAT, "s")
    assert _packing.scalar_bytes(np.ma.masked_array([1.0], mask=[False]), D.CUDNN_DATA_FLOAT) == \
        np.float32(1).tobytes()


def test_a_dtype_of_elements_of_no_size_is_refused():
    with pytest.raises(TypeError, match=r"^x: numpy void ndarray: its dtype '\|V0' has elements of no size$"):
        arrays.view(np.empty(3, "V0"), what="x")


@pytest.mark.parametrize("value", [np.longdouble("1e400"), np.array([np.longdouble("-1e400")])])
def test_a_scalar_past_a_double_is_refused_not_made_infinite(value):
    if np.isinf(np.longdouble("1e400")):
        pytest.skip("this machine's longdouble is a double")
    for data_type in (D.CUDNN_DATA_DOUBLE, D.CUDNN_DATA_FLOAT, D.CUDNN_DATA_HALF, D.CUDNN_DATA_BFLOAT16):
        with pytest.raises(ValueError, match=rf"^s: .* does not fit in {data_type.name}"):
            _packing.scalar_bytes(value, data_type, "s")
    assert _packing.scalar_bytes(np.longdouble("inf"), D.CUDNN_DATA_FLOAT) == np.float32("inf").tobytes()


def test_a_producer_exception_without_words_is_not_called_a_malformed_export():
    class Failing(FakeDLPack):
        def __dlpack__(self, stream=None, **kwargs):
            raise MemoryError()

    with pytest.raises(TypeError, match=r"^x: Failing: cannot read it through dlpack: MemoryError: \(no message\)$"):
        arrays.view(Failing(A, (2,)), what="x")


def test_a_nested_torch_tensor_is_refused_saying_what_to_bind():
    nested = producers.TorchTensor(A, (2, 3))
    nested.is_nested = True
    with pytest.raises(TypeError, match=r"^x: torch float16 TorchTensor: a nested tensor .* bind its \.values\(\), or "
                                        r"a padded tensor"):
        arrays.view(nested, what="x")


_TORCH_FLOAT16 = type("dtype", (), {"__module__": "torch", "__str__": lambda self: "torch.float16"})()


@pytest.mark.parametrize("data_type", [np.float16, np.dtype("float16"), "float16", _TORCH_FLOAT16,
                                       np.int32(2)])  # (a numpy int is a value: HALF is 2)
def test_from_array_takes_an_array_librarys_dtype_as_data_type(data_type):
    t = cb.typed.Tensor.from_array(np.zeros((2, 3), np.int16), data_type=data_type)
    assert t.data_type == D.CUDNN_DATA_HALF


def test_from_array_refuses_a_dtype_without_a_cudnn_type_and_a_vectorized_type():
    with pytest.raises(TypeError, match=r"^data_type: the numpy dtype complex64 has no cuDNN data type$"):
        cb.typed.Tensor.from_array(np.zeros((2, 3), np.float32), data_type=np.complex64)
    with pytest.raises(TypeError, match=r"^data_type: CUDNN_DATA_INT8x4 has no plain per-element size \(a vectorized "
                                        r"type"):
        cb.typed.Tensor.from_array(np.zeros((2, 3), np.int32), data_type="CUDNN_DATA_INT8x4")


def test_host_memory_read_by_cuda_core_is_no_devices():
    # numpy reads no bfloat16 through DLPack: cuda.core does, and says device 0 for host memory
    info = arrays.view(FakeDLPack(A, (2, 3), code=BFLOAT, bits=16, device_type=dlpack.kDLCPU))
    assert (info.device, info.device_id, info.dtype_name) == ("cpu", -1, "bfloat16")


def test_torchs_packed_fp4_says_how_to_describe_it():
    with pytest.raises(TypeError, match=r"float4_e2m1fn_x2' \(two FP4_E2M1 elements a byte.*Graph\.tensor, its last "
                                        r"dim doubled"):
        arrays.data_type_of("float4_e2m1fn_x2")


# ---------------------------------------------------------------------------------------------
# what a reader meets past the protocols' letter
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("data_type, values, expected", [
    (D.CUDNN_DATA_INT64, [1e19, np.inf, -np.inf, -1e30, np.nan, 5.5, 2.0 ** 62],
     [2 ** 63 - 1, 2 ** 63 - 1, -(2 ** 63), -(2 ** 63), 0, 6, 2 ** 62]),
    (D.CUDNN_DATA_INT32, [3e9, -3e9, 2147483647.0, 2.5], [2 ** 31 - 1, -(2 ** 31), 2 ** 31 - 1, 2]),
    (D.CUDNN_DATA_UINT8, [300.0, -5.0, 254.5], [255, 0, 254]),
])
def test_integers_saturate_at_both_ends_whatever_their_width(data_type, values, expected):
    # int64's largest value has no float64: a bound taken as a float would wrap 1e19 to the most negative
    got = arrays.encode(np.array(values), data_type)
    assert got.tolist() == expected
    assert arrays.as_stored(np.array([1e19]), D.CUDNN_DATA_INT64)[0] > 0
    assert arrays.encode(np.array(7.6), D.CUDNN_DATA_INT8).shape == ()


def test_data_type_of_takes_a_data_type_and_refuses_none():
    assert arrays.data_type_of(D.CUDNN_DATA_HALF) is D.CUDNN_DATA_HALF
    assert arrays.data_type_of(np.float32) is D.CUDNN_DATA_FLOAT
    with pytest.raises(TypeError, match="^no cuDNN data type for None"):
        arrays.data_type_of(None)  # (numpy would read it as float64)


@pytest.mark.parametrize("module", ["torch", "jaxlib._jax"])
def test_an_object_of_an_array_library_that_is_no_array_is_said_to_be_none(module):
    size = type("Size", (tuple,), {"__module__": module})((2, 3))  # torch.Size: the module torch, no tensor
    with pytest.raises(TypeError, match=r"^array: an object of type 'Size' is no array: need one with __dlpack__"):
        arrays.describe(size)


def _interface(**members):
    members = {"shape": (4,), "typestr": "<f2", "data": (A, False), "version": 3, **members}
    return type("Cai", (), {"__cuda_array_interface__": {k: v for k, v in members.items() if v is not ...}})()


@pytest.mark.parametrize("members, match", [
    ({"shape": ...}, r"its __cuda_array_interface__ has no shape"),
    ({"shape": None}, r"its __cuda_array_interface__ has no shape"),
    ({"data": None}, r"its __cuda_array_interface__ has no data \(an export gives \(pointer, read-only flag\)\)"),
    ({"data": ...}, r"its __cuda_array_interface__ has no data"),
    ({"shape": range(10 ** 12)}, r"its __cuda_array_interface__ shape is a range, not a tuple of integers"),
    ({"strides": iter([2])}, r"its __cuda_array_interface__ strides is a list_iterator, not a tuple of integers"),
])
def test_a_cuda_array_interface_missing_a_member_or_with_an_endless_one_is_named(members, match):
    with pytest.raises(TypeError, match=r"^array: Cai: " + match):
        arrays.describe(_interface(**members))  # (an endless shape refused before it is iterated)


@pytest.mark.parametrize("ptr, match", [(0, r"its data pointer is NULL, for 4 elements \(shape \[4\]\)"),
                                         (1 << 64, r"its data pointer 18446744073709551616 is no 64-bit address")])
def test_a_producer_s_null_or_impossible_pointer_is_refused_where_it_is_read(monkeypatch, ptr, match):
    monkeypatch.setitem(sys.modules, "torch", producers.torch_module())
    with pytest.raises(TypeError, match=r"^array: torch float16 TorchTensor: " + match):
        arrays.describe(producers.TorchTensor(ptr, (4,)))
    assert arrays.describe(producers.TorchTensor(0, (0, 4))).ptr == 0  # no element: no memory


@pytest.mark.parametrize("members, exc, match", [
    ({"size": 1 << 63}, ValueError, r"^workspace: the cuda.core Buffer says it holds 9223372036854775808 bytes"),
    ({"size": -1}, ValueError, r"^workspace: the cuda.core Buffer says it holds -1 bytes"),
    ({"handle": object()}, TypeError, r"^workspace: a object is no device address"),
])
def test_a_cuda_core_buffer_of_impossible_size_or_handle_is_named(members, exc, match):
    buffer = type("Buffer", (), {"__module__": "cuda.core._memory._buffer", "handle": A, "size": 4096,
                                 "is_device_accessible": True, **members})()
    with pytest.raises(exc, match=match):
        _packing.resolve_workspace(buffer, 131)
    with pytest.raises(exc, match=match.replace("workspace", "UID 1")):
        _packing.resolve_buffer(buffer, "UID 1")


def test_flags_of_from_array_and_variant_pack_take_only_a_bool():
    with pytest.raises(TypeError, match="^finalize: expected True or False, not str"):
        typed.Tensor.from_array(np.zeros((2, 2), np.float32), uid=1, finalize="no")
    with pytest.raises(TypeError, match="^check_dtype: expected True or False, not NoneType"):
        VariantPack(None, {}, check_dtype=None)  # (None would turn the dtype check off)
