"""The random-fill generator (``runtime.memory``) on the CPU: the kernel's own C source, compiled here by the C
compiler, gives bit for bit what the numpy twin (``host_random``) gives, for every data type; its conversions
(fp16, bf16, fp8 e4m3/e5m2) round exactly as the package's encoder (``typed.arrays.encode``) and numpy do, ties,
subnormals, saturation and signed zeros included; and the values follow the documented distribution.

The device side (the same source compiled by NVRTC, against the host twin and the host copy the reference reads):
tests/gpu/tune/test_inputs_gpu.py.
"""
import ctypes
import os
import math
import shutil
import subprocess

import numpy as np
import pytest

from cudnn_backend._bindings.enums import DataType
from cudnn_backend.runtime import memory
from cudnn_backend.runtime._packing import TensorSpec
from cudnn_backend.tune import inputs
from cudnn_backend.typed import arrays

D = DataType
FLOATS = [D.CUDNN_DATA_FLOAT, D.CUDNN_DATA_DOUBLE, D.CUDNN_DATA_HALF, D.CUDNN_DATA_BFLOAT16, D.CUDNN_DATA_FP8_E4M3,
          D.CUDNN_DATA_FP8_E5M2]
INTEGERS = [dt for dt in memory.RANDOM_KINDS if dt not in FLOATS and dt not in arrays.BOOLEAN_TYPES]
BOUND = 2 * math.sqrt(3)  # |value| <= BOUND * scale, before rounding to the type

HARNESS = r"""
void convert(int kind, const float* x, void* out, long n) {
    for (long i = 0; i < n; i++) {
        switch (kind) {
        case CB_F16: ((unsigned short*)out)[i] = cb_half(x[i]); break;
        case CB_BF16: ((unsigned short*)out)[i] = cb_bfloat16(x[i]); break;
        case CB_E4M3: ((unsigned char*)out)[i] = cb_fp8(x[i], 3u, 7u, 0x7Eu); break;
        case CB_E5M2: ((unsigned char*)out)[i] = cb_fp8(x[i], 2u, 15u, 0x7Bu); break;
        }
    }
}
"""


@pytest.fixture(scope="module")
def kernel_on_cpu(tmp_path_factory):
    """RANDOM_FILL_SOURCE compiled for the CPU (strict IEEE float: no contraction), with a conversion harness."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the kernel's source for the CPU")
    folder = tmp_path_factory.mktemp("random_fill")
    source = folder / "random_fill.c"
    source.write_text(memory.RANDOM_FILL_SOURCE + HARNESS)
    lib_path = folder / "random_fill.so"
    out = subprocess.run([cc, "-std=c99", "-O2", "-Wall", "-Werror", "-ffp-contract=off", "-shared", "-fPIC", "-o",
                          str(lib_path), str(source)], capture_output=True, text=True)
    assert out.returncode == 0, f"the kernel's source does not compile as C:\n{out.stderr}"
    lib = ctypes.CDLL(str(lib_path))
    lib.cb_random_fill_host.argtypes = [ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_ulonglong, ctypes.c_float,
                                        ctypes.c_int]
    lib.convert.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long]
    return lib


def c_fill(lib, data_type, count, key, scale=0.5):
    """The C source's fill of ``count`` elements: the bytes it writes (BOOLEAN: ceil(count / 8), bit-packed)."""
    out = np.full((count * arrays.DATA_TYPE_BITS[data_type] + 7) // 8, 0xAA, dtype=np.uint8)
    lib.cb_random_fill_host(out.ctypes.data, count, key, ctypes.c_float(memory.random_step(scale)),
                            memory.RANDOM_KINDS[data_type])
    return out


def c_convert(lib, data_type, x):
    x = np.ascontiguousarray(x, dtype=np.float32)
    out = np.empty(x.size, dtype=np.uint16 if data_type in (D.CUDNN_DATA_HALF, D.CUDNN_DATA_BFLOAT16) else np.uint8)
    lib.convert(memory.RANDOM_KINDS[data_type], x.ctypes.data, out.ctypes.data, x.size)
    return out


# ---------------------------------------------------------------------------------------------
# the kernel's source against the host twin
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("data_type", list(memory.RANDOM_KINDS), ids=lambda d: d.name)
def test_the_kernel_source_and_the_host_twin_agree_bit_for_bit(kernel_on_cpu, data_type):
    count = 3 * memory._HOST_CHUNK + 17  # the twin's chunks and their seams
    for seed, uid, scale in ((0, 1, 0.5), (12345, 2**40 + 3, 0.5), (7, 9, 3.0)):
        key = memory.random_key(seed, uid)
        want = arrays.memory_bytes(memory.host_random(data_type, count, key, scale), data_type)
        got = c_fill(kernel_on_cpu, data_type, count, key, scale)
        differ = np.flatnonzero(got != want)
        assert np.array_equal(got, want), (
            f"{data_type.name}, seed {seed}, uid {uid}: the C source and the twin differ (first bytes {differ[:5]})")


def test_the_stream_is_counter_based(kernel_on_cpu):
    """Element i depends on (key, i) only: a shorter fill is a prefix of a longer one."""
    key = memory.random_key(3, 4)
    long = memory.host_random(D.CUDNN_DATA_FLOAT, 5000, key)
    assert np.array_equal(memory.host_random(D.CUDNN_DATA_FLOAT, 1234, key), long[:1234])
    assert np.array_equal(c_fill(kernel_on_cpu, D.CUDNN_DATA_FLOAT, 77, key).view(np.float32), long[:77])


# ---------------------------------------------------------------------------------------------
# the conversions against the encoder and numpy
# ---------------------------------------------------------------------------------------------
def _probe_floats(data_type) -> np.ndarray:
    """float32 values that probe a conversion: random bit patterns (every exponent), every value of the target
    type, the midpoints between neighbours (the ties) and one float32 step either side of each, signed zeros."""
    rng = np.random.default_rng(0)
    random_bits = rng.integers(0, 1 << 32, 1 << 18, dtype=np.uint64).astype(np.uint32).view(np.float32)
    if data_type == D.CUDNN_DATA_HALF:
        values = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float64)
    elif data_type == D.CUDNN_DATA_BFLOAT16:
        with np.errstate(invalid="ignore"):  # (signalling NaN codes among them)
            values = arrays.decode(np.arange(1 << 16, dtype=np.uint32).astype(np.uint16), data_type)
    else:
        values = arrays.decode(np.arange(256, dtype=np.uint8), data_type)
    finite = np.unique(values[np.isfinite(values)])
    mids = (finite[:-1] + finite[1:]) / 2
    near = np.concatenate([finite, mids]).astype(np.float32)
    around = np.concatenate([near, np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(-np.inf))])
    with np.errstate(over="ignore"):  # (bfloat16's largest times 4 is beyond float32: infinity)
        beyond = np.array([finite[-1] * 1.5, finite[-1] * 4, np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-45, -1e-45],
                          dtype=np.float32)
    return np.concatenate([random_bits, around, -around, beyond])


@pytest.mark.parametrize("data_type", [D.CUDNN_DATA_HALF, D.CUDNN_DATA_BFLOAT16, D.CUDNN_DATA_FP8_E4M3,
                                       D.CUDNN_DATA_FP8_E5M2], ids=lambda d: d.name)
def test_conversions_round_as_the_encoder(kernel_on_cpu, data_type):
    x = _probe_floats(data_type)
    got = c_convert(kernel_on_cpu, data_type, x)
    nan = np.isnan(x)
    with np.errstate(over="ignore", invalid="ignore"):
        if data_type == D.CUDNN_DATA_HALF:
            want = x.astype(np.float16).view(np.uint16)
            got_values, want_values = got.view(np.float16), want.view(np.float16)
        else:
            want = arrays.encode(x, data_type)
            got_values, want_values = arrays.decode(got, data_type), arrays.decode(want, data_type)
    assert np.isnan(got_values[nan]).all(), f"{data_type.name}: a NaN did not stay NaN"
    assert np.isnan(want_values[nan]).all()
    wrong = np.flatnonzero(got[~nan] != want[~nan])
    assert wrong.size == 0, (
        f"{data_type.name}: {wrong.size} of {x[~nan].size} values rounded otherwise than the encoder, e.g. "
        + ", ".join(f"{x[~nan][i]!r} -> 0x{int(got[~nan][i]):x} (want 0x{int(want[~nan][i]):x})" for i in wrong[:5]))


def test_fp8_saturates_and_zero_is_positive(kernel_on_cpu):
    e4m3 = c_convert(kernel_on_cpu, D.CUDNN_DATA_FP8_E4M3, [448, 460, 500, 1e30, np.inf, -1e30, -np.inf])
    assert list(e4m3) == [0x7E, 0x7E, 0x7E, 0x7E, 0x7E, 0xFE, 0xFE]  # 448, never the NaN code 0x7F
    e5m2 = c_convert(kernel_on_cpu, D.CUDNN_DATA_FP8_E5M2, [57344, 61439, 70000, np.inf, -np.inf])
    assert list(e5m2) == [0x7B, 0x7B, 0x7B, 0x7B, 0xFB]  # never infinity
    tiny = c_convert(kernel_on_cpu, D.CUDNN_DATA_FP8_E4M3, [-0.0, -1e-9, -2.0 ** -10, 2.0 ** -10, 2.0 ** -9])
    assert list(tiny) == [0, 0, 0, 0, 1]  # to zero: +0; the tie with the smallest subnormal goes to even (0)


# ---------------------------------------------------------------------------------------------
# the distribution
# ---------------------------------------------------------------------------------------------
N = 1 << 20


@pytest.mark.parametrize("data_type", FLOATS, ids=lambda d: d.name)
def test_floats_are_centred_with_the_scale_as_standard_deviation_and_bounded(data_type):
    for scale in (0.5, 2.0):
        values = arrays.decode(memory.host_random(data_type, N, memory.random_key(1, 2), scale), data_type)
        assert np.isfinite(values).all()
        assert abs(values.mean()) < 5 * scale / math.sqrt(N), f"{data_type.name}: mean {values.mean()}"
        coarse = data_type in (D.CUDNN_DATA_FP8_E4M3, D.CUDNN_DATA_FP8_E5M2)  # 2-3 mantissa bits shift the spread
        assert values.std() == pytest.approx(scale, rel=0.03 if coarse else 0.005), data_type.name
        limit = BOUND * scale * (1.13 if coarse else 1.001)  # rounding may carry past the bound by half a step
        assert np.abs(values).max() <= limit
        assert np.abs(values).max() > 0.8 * BOUND * scale  # the tails are there
        if not coarse:  # close to normal: about 68% within one standard deviation (a normal: 68.3%, this sum 67.3%)
            assert 0.65 < np.mean(np.abs(values) < scale) < 0.71


@pytest.mark.parametrize("data_type", INTEGERS, ids=lambda d: d.name)
def test_integers_are_uniform_in_0_to_7(data_type):
    values = memory.host_random(data_type, N, memory.random_key(5, 6))
    assert values.dtype == arrays.storage_dtype(data_type)
    counts = np.bincount(values.astype(np.int64), minlength=8)
    assert counts.size == 8 and values.min() == 0 and values.max() == 7
    expected = N / 8
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 30, f"{data_type.name}: counts {counts} (chi-square {chi2:.1f}, 7 degrees of freedom)"


def test_booleans_are_fair_and_scale_factors_ones():
    b = memory.host_random(D.CUDNN_DATA_BOOLEAN, N, memory.random_key(0, 0))
    assert b.dtype == np.bool_ and abs(b.mean() - 0.5) < 5 * 0.5 / math.sqrt(N)
    byte_bools = memory.host_random(D.CUDNN_DATA_BYTE_BOOLEAN, N, memory.random_key(0, 0))
    assert np.array_equal(byte_bools, b)  # the same elements; only their memory differs
    if "CUDNN_DATA_FP8_E8M0" in D.__members__:
        e8m0 = D.CUDNN_DATA_FP8_E8M0
        ones = memory.host_random(e8m0, 1000, 123)
        assert (ones == 0x7F).all() and (arrays.decode(ones, e8m0) == 1.0).all()


def test_keys_separate_seeds_and_streams():
    keys = {memory.random_key(seed, uid) for seed in range(20) for uid in range(50)}
    assert len(keys) == 1000 and all(0 <= k < 1 << 64 for k in keys)
    assert memory.random_key(3, 4) == memory.random_key(3, 4)
    a = memory.host_random(D.CUDNN_DATA_HALF, 1000, memory.random_key(0, 1))
    b = memory.host_random(D.CUDNN_DATA_HALF, 1000, memory.random_key(0, 2))
    assert np.mean(a == b) < 0.05  # equal only by chance (fp16 values repeat)


def test_bad_requests_are_refused_naming_the_parameter():
    with pytest.raises(TypeError, match=r"data_type: no random fill for CUDNN_DATA_INT8x4"):
        memory.host_random(D.CUDNN_DATA_INT8x4, 10, 0)
    with pytest.raises(TypeError, match=r"data_type: 'half' is not a cuDNN data type"):
        memory.host_random("half", 10, 0)
    with pytest.raises(ValueError, match=r"count: cannot fill -1"):
        memory.host_random(D.CUDNN_DATA_HALF, -1, 0)
    assert memory.host_random(D.CUDNN_DATA_HALF, 0, 0).size == 0


# ---------------------------------------------------------------------------------------------
# tune.inputs on top of it
# ---------------------------------------------------------------------------------------------
def test_random_values_are_the_generators_in_logical_order():
    spec = TensorSpec(1, "x", (2, 3, 4, 5), (60, 1, 15, 3), D.CUDNN_DATA_BFLOAT16)
    a = inputs.random_values(spec, np.random.default_rng(9))
    b = inputs.random_values(spec, np.random.default_rng(9))
    assert a.shape == (2, 3, 4, 5) and a.dtype == np.uint16 and np.array_equal(a, b)
    key = int(np.random.default_rng(9).integers(0, 1 << 63, dtype=np.int64))
    assert np.array_equal(a.reshape(-1), memory.host_random(D.CUDNN_DATA_BFLOAT16, 120, key))
    assert not np.array_equal(a, inputs.random_values(spec, np.random.default_rng(10)))


def test_nvrtc_compiles_the_kernel_without_fused_arithmetic():
    """The source as NVRTC sees it (no GPU needed to compile): the kernel's entry, its one multiply correctly rounded
    (mul.rn, as the twin's float32 multiply), nothing fused into it."""
    nvrtc = pytest.importorskip("cuda.bindings.nvrtc")
    try:
        err, prog = nvrtc.nvrtcCreateProgram(memory.RANDOM_FILL_SOURCE.encode(), b"random_fill.cu", 0, [], [])
    except Exception as e:  # noqa: BLE001 - libnvrtc not found: nothing to compile with here
        pytest.skip(f"NVRTC is not loadable here: {e}")
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    try:
        err, = nvrtc.nvrtcCompileProgram(prog, 1, [b"--gpu-architecture=compute_90"])
        # NVRTC writes into the buffers: bytearrays (an empty log is one NUL, and b" " * 1 is the interpreter's
        # shared b" ", which NVRTC would overwrite for the whole process)
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = bytearray(size)
        nvrtc.nvrtcGetProgramLog(prog, log)
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, log.decode(errors="replace")
        _, size = nvrtc.nvrtcGetPTXSize(prog)
        ptx = bytearray(size)
        nvrtc.nvrtcGetPTX(prog, ptx)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    text = bytes(ptx).decode(errors="replace")
    assert ".entry cb_random_fill(" in text
    assert os.fsencode(" ") == b" "
    assert "mul.rn.f32" in text and "fma." not in text and "mad." not in text


def test_boolean_memory_is_bit_packed_least_significant_bit_first(kernel_on_cpu):
    """BOOLEAN's fill writes element 8j + k in bit k of byte j (as cuDNN reads it), worked out here bit by bit;
    BYTE_BOOLEAN's writes element i in byte i."""
    count, key = 8 * 5 + 3, memory.random_key(1, 2)
    b = memory.host_random(D.CUDNN_DATA_BOOLEAN, count, key).astype(np.uint8)
    by_hand = [sum(int(b[8 * j + k]) << k for k in range(8) if 8 * j + k < count) for j in range((count + 7) // 8)]
    assert c_fill(kernel_on_cpu, D.CUDNN_DATA_BOOLEAN, count, key).tolist() == by_hand
    assert arrays.memory_bytes(b, D.CUDNN_DATA_BOOLEAN).tolist() == by_hand
    assert c_fill(kernel_on_cpu, D.CUDNN_DATA_BYTE_BOOLEAN, count, key).tolist() == b.tolist()
