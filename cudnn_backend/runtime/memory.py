"""GPU work through cuda.core and cuda-bindings: the device, streams, timing events, device memory, copies,
fills and the L2 flush.

* ``device()``: the calling thread's cuda.core ``Device`` (the runtime's current device, whose primary context
  cuDNN's handles use), made current; ``stream_of(s)``: a cuda.core ``Stream`` for a handle's stream (an int,
  0 the legacy default stream, or any stream object);
* ``CudaResource``: the one close of the CUDA objects the package owns (device and host buffers, the L2 flusher,
  CUDA graphs): ``close()`` releases at once and raises what fails; a collection releases through a
  ``weakref.finalize`` and reports a failure as a ``RuntimeWarning`` naming the object;
* ``DeviceBuffer``: device memory from the device's memory resource (cuda.core ``Buffer``), freed on
  ``close()`` or collection; it speaks ``__cuda_array_interface__`` (a 1-D ``uint8`` array);
  ``allocate_workspace`` makes one for a variant pack;
* ``copy_to_device`` / ``copy_to_host`` / ``copy_device`` / ``fill_bytes``: the copies and memsets
  (cuda-bindings' runtime API), ``synchronize``;
* ``EventTimer``: two timing events on a stream (cuda.core ``Event``); ``L2Flush``: a buffer twice the
  L2 cache, overwritten between cold calls; ``HostBuffer``: page-locked host memory for fast reads back;
* ``fill_random``: random values of any plain data type written on the device by a small kernel (NVRTC, compiled
  once per process), or by its host twin ``host_random`` where NVRTC is missing: the same bits either way.

cuda-core and cuda-bindings (the ``gpu`` extra) are imported on first use: the rest of the
package, and variant packs over explicit pointers, work without them. Nothing here imports torch.
"""
from __future__ import annotations

import ctypes
import math
import sys
import threading
import warnings
import weakref

import numpy as np

from cudnn_backend._bindings.enums import DataType
from cudnn_backend.core import device as _device
from cudnn_backend.core._coerce import stream_address
from cudnn_backend.core._context import context_changed
from cudnn_backend.errors import CudaError, MissingDependencyError
from cudnn_backend.typed import arrays as _arrays

__all__ = ["CudaError", "DeviceBuffer", "HostBuffer", "EventTimer", "L2Flush", "allocate", "allocate_workspace",
           "check", "cudart", "cudriver", "cuda_core", "device", "current_device_ordinal", "stream_of",
           "copy_to_device", "copy_to_host", "copy_device", "fill_bytes", "synchronize", "fill_random", "host_random",
           "random_key", "random_step", "random_fill_kernel", "RANDOM_FILL_SOURCE", "RANDOM_KINDS", "RANDOM_ONES"]


_lock = threading.Lock()
_modules: dict = {}
_local = threading.local()


def _import(key, importer, package, needed_for):
    module = _modules.get(key)
    if module is None:
        with _lock:
            module = _modules.get(key)
            if module is None:
                try:
                    module = importer()
                except ImportError as e:
                    raise MissingDependencyError(package, needed_for, "gpu") from e
                _modules[key] = module
    return module


def _runtime():
    from cuda.bindings import runtime

    return runtime


def _driver():
    from cuda.bindings import driver

    return driver


def _core():
    import cuda.core

    return cuda.core


def cudart():
    """``cuda.bindings.runtime``, imported on first use (a clear error when cuda-bindings is missing)."""
    return _import("runtime", _runtime, "cuda-bindings", "device memory, copies and CUDA graphs (without it, pass "
                   "device pointers yourself: arrays of any GPU library, and workspace=)")


def cudriver():
    """``cuda.bindings.driver``, imported on first use (kernel names of CUDA graph nodes)."""
    return _import("driver", _driver, "cuda-bindings", "reading kernel nodes")


def cuda_core():
    """``cuda.core``, imported on first use (devices, streams, events, memory resources)."""
    return _import("core", _core, "cuda-core", "GPU work (devices, streams, events, device memory)")


def _error_text(rt, err):
    name = text = ""
    try:
        r = rt.cudaGetErrorName(err)
        name = r[1].decode() if isinstance(r[1], bytes) else str(r[1])
        r = rt.cudaGetErrorString(err)
        text = r[1].decode() if isinstance(r[1], bytes) else str(r[1])
    except Exception:  # noqa: BLE001 - best effort: the code itself is reported anyway
        pass
    return name, text


def check(result, function: str):
    """Unwrap a cuda-bindings result tuple ``(err, *values)``: raise CudaError unless ``err`` is success.

    Returns None, the single value, or a tuple of values.
    """
    if not isinstance(result, tuple):
        result = (result,)
    err, values = result[0], result[1:]
    if int(err) != 0:
        name, text = _error_text(cudart(), err)
        raise CudaError(function, err, name, text)
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def _need_gpu(what):
    if not _device.gpu_available():
        raise CudaError(what, 100, "cudaErrorNoDevice", f"no CUDA GPU is visible (driver: {_device.driver()})")


# ---------------------------------------------------------------------------------------------
# the device and its streams
# ---------------------------------------------------------------------------------------------
def current_device_ordinal() -> int | None:
    """The runtime's current device (the one new cuDNN handles use); None without a GPU or cuda-bindings."""
    if not _device.gpu_available():
        return None
    try:
        rt = cudart()
    except MissingDependencyError:
        return None
    return int(check(rt.cudaGetDevice(), "cudaGetDevice"))


def device():
    """The calling thread's cuda.core ``Device``: the runtime's current device, its primary context current."""
    _need_gpu("cuInit")
    ordinal = current_device_ordinal()
    dev = getattr(_local, "device", None)
    if dev is None or dev.device_id != ordinal:
        dev = cuda_core().Device(ordinal)
        dev.set_current()
        context_changed()  # this thread's current context may be another one now: handles check theirs again
        _local.device = dev
    return dev


def stream_of(stream=None):
    """A cuda.core ``Stream`` for ``stream``: an int handle (0 or None: the legacy default stream), a cuda.core
    or cuda-bindings stream, anything with ``__cuda_stream__``."""
    core = cuda_core()
    if isinstance(stream, core.Stream):
        return stream
    device()
    handle = stream_address(stream)
    return core.LEGACY_DEFAULT_STREAM if handle == 0 else core.Stream.from_handle(handle)


def synchronize(stream=None):
    """Wait for ``stream`` (an int or stream object), or for the whole device when None."""
    rt = cudart()
    if stream is None:
        check(rt.cudaDeviceSynchronize(), "cudaDeviceSynchronize")
    else:
        check(rt.cudaStreamSynchronize(stream_address(stream)), "cudaStreamSynchronize")


# ---------------------------------------------------------------------------------------------
# the one close of a CUDA object
# ---------------------------------------------------------------------------------------------
def _release_at_collection(name, release, args):
    """A CUDA object collected without close(): its release, with a failure reported as a RuntimeWarning naming it
    (a finalizer raises nothing). Nothing at interpreter exit: the driver frees the process's memory then, and
    its calls may no longer work."""
    if sys.is_finalizing():
        return
    try:
        release(*args)
    except Exception as e:  # noqa: BLE001 - reported, not raised: no caller is left to raise it to
        warnings.warn(f"{name}: releasing it at collection failed ({type(e).__name__}: {e}); close() it to get the "
                      "error where it happens", RuntimeWarning, stacklevel=2)


class CudaResource:
    """The one close of the CUDA objects the package owns (device and host buffers, the L2 flusher, CUDA graphs).

    A subclass registers how to release what it owns (``_own(release, *args, name=...)``: ``release(*args)``,
    which must not refer to the object itself). ``close()`` (``_release_now``) runs it at once and raises what
    fails; a collection runs it through a ``weakref.finalize`` and reports a failure as a ``RuntimeWarning`` naming
    the object. Either way it runs at most once, whatever the threads; at interpreter exit it does not run.
    """

    __slots__ = ("_finalizer", "__weakref__")

    def _own(self, release, *args, name: str):
        finalizer = weakref.finalize(self, _release_at_collection, name, release, args)
        finalizer.atexit = False
        self._finalizer = finalizer

    def _release_now(self):
        """The release, now, if it has not run: what fails is raised."""
        finalizer = getattr(self, "_finalizer", None)
        info = finalizer.detach() if finalizer is not None else None
        if info is not None:
            _, _, (_, release, args), _ = info
            release(*args)

    def close(self):
        """Release what the object owns now (idempotent); a failure is raised."""
        self._release_now()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _free_device_memory(buf):
    synchronize()  # work queued anywhere may still use the memory
    buf.close()


# ---------------------------------------------------------------------------------------------
# device memory
# ---------------------------------------------------------------------------------------------
class DeviceBuffer(CudaResource):
    """``nbytes`` of device memory from the current device's memory resource (a cuda.core ``Buffer``); freed on
    ``close()`` or collection.

    ``ptr`` is the device address (an int), ``int(buf)`` too. ``__cuda_array_interface__`` exposes it as a 1-D
    uint8 array (version 3). The memory is ready on every stream when the constructor returns (its allocation
    is waited for), and ``close()`` waits for the device before it gives the memory back.
    """

    __slots__ = ("_buffer", "_ptr", "_nbytes", "_closed")

    def __init__(self, nbytes: int):
        if isinstance(nbytes, bool) or not isinstance(nbytes, int):
            raise TypeError(f"nbytes: expected an int, not {type(nbytes).__name__}")
        if nbytes < 0:
            raise ValueError(f"nbytes: cannot allocate {nbytes} bytes")
        self._finalizer = None
        self._buffer = None
        self._ptr = 0
        self._nbytes = nbytes
        self._closed = False
        if nbytes == 0:
            return
        dev = device()
        stream = dev.default_stream
        try:
            buf = dev.allocate(nbytes, stream=stream)
            stream.sync()
        except Exception as e:  # noqa: BLE001 - cuda.core's own errors: out of memory and the like
            raise CudaError(f"allocate({nbytes})", getattr(e, "code", -1), type(e).__name__, str(e)) from e
        self._buffer = buf
        self._ptr = int(buf.handle)
        self._own(_free_device_memory, buf, name=f"DeviceBuffer of {nbytes} bytes at 0x{self._ptr:x}")

    @property
    def ptr(self) -> int:
        """The device address (0 for a zero-byte buffer); ValueError once closed."""
        if self._closed:
            raise ValueError("this DeviceBuffer is closed")
        return self._ptr

    @property
    def nbytes(self) -> int:
        """The size in bytes."""
        return self._nbytes

    @property
    def closed(self) -> bool:
        """Whether the memory has been freed."""
        return self._closed

    @property
    def buffer(self):
        """The cuda.core ``Buffer`` behind it (None for a zero-byte or closed buffer)."""
        return self._buffer

    def __int__(self):
        return self.ptr

    def __len__(self):
        return self._nbytes

    @property
    def __cuda_array_interface__(self):
        return {"shape": (self._nbytes,), "typestr": "|u1", "data": (self.ptr, False), "version": 3,
                "strides": None}

    def close(self):
        """Wait for the device (work may still use the memory), then free it; idempotent."""
        self._buffer = None
        self._ptr = 0
        self._closed = True
        self._release_now()

    # -- convenience copies (synchronous) ----------------------------------------------------------
    def fill(self, byte: int = 0):
        """Set every byte to ``byte``."""
        if self._nbytes:
            fill_bytes(self.ptr, byte, self._nbytes)
            synchronize(0)

    def copy_from_host(self, data):
        """Copy a bytes-like object (or a C-contiguous numpy array) into the start of the buffer."""
        host = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
        if host.nbytes > self._nbytes:
            raise ValueError(f"{host.nbytes} bytes do not fit in a {self._nbytes}-byte DeviceBuffer")
        copy_to_device(self.ptr, host)

    def copy_to_host(self, nbytes: int | None = None) -> bytes:
        """The first ``nbytes`` (default all) bytes of the buffer, copied to the host."""
        n = self._nbytes if nbytes is None else int(nbytes)
        return copy_to_host(self.ptr, n).tobytes() if n else b""

    def __repr__(self):
        state = "closed" if self.closed else f"0x{self._ptr:x}"
        return f"<cudnn_backend.memory.DeviceBuffer {self._nbytes} bytes at {state}>"


def allocate(nbytes: int) -> DeviceBuffer:
    """A new DeviceBuffer of ``nbytes`` bytes."""
    return DeviceBuffer(nbytes)


def allocate_workspace(nbytes: int) -> DeviceBuffer | None:
    """A workspace for a plan: a DeviceBuffer of ``nbytes`` bytes, or None when no workspace is needed.

    Variant packs call this (looked up on this module at call time) when they need a workspace
    and none was given.
    """
    nbytes = int(nbytes)
    if nbytes <= 0:
        return None
    return DeviceBuffer(nbytes)


def _free_host_memory(ptr):
    check(cudart().cudaFreeHost(ptr), "cudaFreeHost")


class HostBuffer(CudaResource):
    """``nbytes`` of page-locked host memory (``cudaMallocHost``), for fast copies back; ``array`` is a uint8
    numpy view of it (valid until ``close()``)."""

    __slots__ = ("nbytes", "_ptr", "array")

    def __init__(self, nbytes: int):
        self._finalizer = None
        self.nbytes = int(nbytes)
        self._ptr = int(check(cudart().cudaMallocHost(max(self.nbytes, 1)), f"cudaMallocHost({self.nbytes})"))
        self._own(_free_host_memory, self._ptr, name=f"HostBuffer of {self.nbytes} bytes at 0x{self._ptr:x}")
        self.array = np.ctypeslib.as_array((ctypes.c_uint8 * max(self.nbytes, 1)).from_address(self._ptr))[:self.nbytes]

    @property
    def ptr(self) -> int:
        return self._ptr

    @property
    def closed(self) -> bool:
        """Whether the memory has been freed."""
        return self._ptr == 0

    def close(self):
        """Free the memory (idempotent); ``array`` is gone with it."""
        self._ptr = 0
        self.array = None
        self._release_now()


def _address(ptr) -> int:
    return int(ptr.ptr) if isinstance(ptr, (DeviceBuffer, HostBuffer)) else int(ptr)


def copy_to_device(dst, host, stream=0):
    """Copy the C-contiguous bytes of ``host`` (a numpy array or bytes-like) to device address ``dst``; returns
    when the copy is done."""
    host = np.ascontiguousarray(host)
    if host.nbytes:
        rt = cudart()
        s = stream_address(stream)
        check(rt.cudaMemcpyAsync(_address(dst), host.ctypes.data, host.nbytes,
                                 rt.cudaMemcpyKind.cudaMemcpyHostToDevice, s), "cudaMemcpyAsync(HostToDevice)")
        check(rt.cudaStreamSynchronize(s), "cudaStreamSynchronize")


def copy_to_host(src, nbytes: int, out=None, stream=0) -> np.ndarray:
    """``nbytes`` bytes at device address ``src`` as a uint8 numpy array (``out``, e.g. a ``HostBuffer``'s
    array, or a new one), after the work queued on ``stream`` (the copy waits for it)."""
    nbytes = int(nbytes)
    if out is None:
        out = np.empty(nbytes, dtype=np.uint8)
    elif out.nbytes < nbytes or not out.flags.c_contiguous:
        raise ValueError(f"out: {out.nbytes} contiguous bytes cannot take {nbytes}")
    if nbytes:
        rt = cudart()
        s = stream_address(stream)
        check(rt.cudaMemcpyAsync(out.ctypes.data, _address(src), nbytes, rt.cudaMemcpyKind.cudaMemcpyDeviceToHost, s),
              "cudaMemcpyAsync(DeviceToHost)")
        check(rt.cudaStreamSynchronize(s), "cudaStreamSynchronize")
    return out[:nbytes]


def copy_device(dst, src, nbytes: int, stream=0):
    """Queue a device-to-device copy of ``nbytes`` bytes on ``stream``."""
    if nbytes:
        rt = cudart()
        check(rt.cudaMemcpyAsync(_address(dst), _address(src), int(nbytes), rt.cudaMemcpyKind.cudaMemcpyDeviceToDevice,
                                 stream_address(stream)), "cudaMemcpyAsync(DeviceToDevice)")


def fill_bytes(ptr, byte: int, nbytes: int, stream=0):
    """Queue a memset of ``nbytes`` bytes at ``ptr`` to ``byte`` on ``stream``."""
    if nbytes:
        check(cudart().cudaMemsetAsync(_address(ptr), int(byte) & 0xFF, int(nbytes), stream_address(stream)),
              "cudaMemsetAsync")


# ---------------------------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------------------------
class EventTimer:
    """Two timing events (cuda.core ``Event``) on ``stream``: ``start()``, ``stop()``, then ``elapsed_ms()`` waits
    for the stop event and returns the milliseconds between them. The events are made once and reused."""

    def __init__(self, stream=None):
        core = cuda_core()
        dev = device()
        self.stream = stream_of(stream)
        options = core.EventOptions(timing_enabled=True)
        self._start = dev.create_event(options)
        self._end = dev.create_event(options)

    def start(self):
        self.stream.record(self._start)

    def stop(self):
        self.stream.record(self._end)

    def elapsed_ms(self) -> float:
        self._end.sync()
        return float(self._end - self._start)


class L2Flush(CudaResource):
    """A device buffer twice the size of the L2 cache (at least 1 MiB); calling it overwrites the buffer on
    ``stream``, which evicts what earlier work left in L2 (cold timing). ``close()`` frees the buffer."""

    __slots__ = ("buffer", "stream")

    def __init__(self, stream=None):
        self._finalizer = None
        l2 = int(device().properties.l2_cache_size or (64 << 20))
        self.buffer = DeviceBuffer(max(2 * l2, 1 << 20))
        self.stream = stream_address(stream)
        self._own(DeviceBuffer.close, self.buffer, name=f"L2Flush buffer of {self.buffer.nbytes} bytes")

    @property
    def nbytes(self) -> int:
        return self.buffer.nbytes

    def __call__(self, value: int = 0):
        fill_bytes(self.buffer.ptr, value, self.buffer.nbytes, self.stream)

    @property
    def closed(self) -> bool:
        return self.buffer.closed


# ---------------------------------------------------------------------------------------------
# random fills: a counter-based generator, on the device (NVRTC) or, where that is missing, its host twin
# ---------------------------------------------------------------------------------------------
# Element i of a fill with key K (a 64-bit integer) is made from r = splitmix64(K + (i + 1) * 0x9E3779B97F4A7C15):
#   * floating-point types: x = (the sum of r's four 16-bit fields - 131070) * step, in float32, with step = scale /
#     sqrt((2**32 - 1) / 3) rounded to float32: mean 0, standard deviation ``scale``, |x| <= 2*sqrt(3)*scale (a
#     centred Irwin-Hall sum of four uniforms, close to a normal distribution), then rounded to the type to nearest
#     (ties to even; fp8 saturating, and a value rounding to zero is +0, as ``typed.arrays.encode``); fp64 holds the
#     float32 value;
#   * integers: r's top 3 bits, uniform in [0, 8); booleans: r's top bit; fp8 e8m0 scale factors: ones (code 127).
#     BYTE_BOOLEAN stores element i in byte i; BOOLEAN is bit-packed as cuDNN reads it: byte j holds elements 8j to
#     8j+7, element 8j+k in bit k (a fill of n elements writes ceil(n / 8) bytes, a last byte's missing bits 0).
# Every step is exact integer arithmetic or one correctly rounded float32 multiply, so the device kernel and the
# numpy twin (``host_random``) give the same bits: the values are the same with or without NVRTC, on every GPU.
RANDOM_FILL_SOURCE = r"""
/* cudnn-backend's random fills (cudnn_backend/runtime/memory.py). Compiled by NVRTC for the device, and by the
   tests' C compiler for the CPU: no CUDA header, no fused or approximate arithmetic. */
#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define CB_FN __device__ __forceinline__
#define CB_MUL(a, b) __fmul_rn((a), (b))
#define CB_BITS(x) __float_as_uint(x)
#else
#define CB_FN static inline
#define CB_MUL(a, b) ((a) * (b))
static inline unsigned int cb_float_bits(float x) { union { float f; unsigned int u; } v; v.f = x; return v.u; }
#define CB_BITS(x) cb_float_bits(x)
#endif
typedef unsigned long long cb_u64;
typedef unsigned int cb_u32;

enum { CB_F32, CB_F64, CB_F16, CB_BF16, CB_E4M3, CB_E5M2, CB_BOOL, CB_I8, CB_U8, CB_I32, CB_I64, CB_U32, CB_BITS };

CB_FN cb_u64 cb_bits(cb_u64 key, cb_u64 i) {  /* splitmix64 at position i of the stream keyed by key */
    cb_u64 z = key + (i + 1ULL) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

CB_FN float cb_value(cb_u64 r, float step) {  /* |sum - 131070| < 2**18: exact in float32, one rounding after */
    int s = (int)(r & 0xFFFFULL) + (int)((r >> 16) & 0xFFFFULL) + (int)((r >> 32) & 0xFFFFULL) + (int)(r >> 48);
    return CB_MUL((float)(s - 131070), step);
}

CB_FN cb_u32 cb_round_shift(cb_u32 m, cb_u32 shift) {  /* m / 2**shift to nearest, ties to even (m < 2**24) */
    cb_u32 q, rest, half;
    if (shift > 24) return 0;
    q = m >> shift; rest = m & ((1u << shift) - 1u); half = 1u << (shift - 1u);
    return q + ((rest > half) | ((rest == half) & q));
}

CB_FN unsigned short cb_half(float x) {
    cb_u32 f = CB_BITS(x), sign = (f >> 16) & 0x8000u, a = f & 0x7FFFFFFFu, h, rest;
    if (a > 0x7F800000u) return (unsigned short)(sign | 0x7E00u);       /* NaN */
    if (a >= 0x477FF000u) return (unsigned short)(sign | 0x7C00u);      /* 65520 and beyond: infinity */
    if (a >= 0x38800000u) {                                             /* normal */
        h = (a - 0x38000000u) >> 13; rest = a & 0x1FFFu;
        return (unsigned short)(sign | (h + ((rest > 0x1000u) | ((rest == 0x1000u) & h))));
    }
    return (unsigned short)(sign | cb_round_shift((a & 0x7FFFFFu) | 0x800000u, 126u - (a >> 23)));  /* subnormal */
}

CB_FN unsigned short cb_bfloat16(float x) {
    cb_u32 f = CB_BITS(x);
    if ((f & 0x7FFFFFFFu) > 0x7F800000u) return (unsigned short)((f >> 16) | 0x40u);
    return (unsigned short)((f + 0x7FFFu + ((f >> 16) & 1u)) >> 16);
}

/* 8-bit float with mbits mantissa bits, exponent bias `bias`, largest finite code `top` */
CB_FN unsigned char cb_fp8(float x, cb_u32 mbits, cb_u32 bias, cb_u32 top) {
    cb_u32 f = CB_BITS(x), sign = (f >> 24) & 0x80u, a = f & 0x7FFFFFFFu, q, rest, drop, e;
    if (a > 0x7F800000u) return 0xFFu;                                  /* NaN */
    if (a >= ((128u - bias) << 23)) {                                   /* normal */
        drop = 23u - mbits;
        q = (a - ((127u - bias) << 23)) >> drop; rest = a & ((1u << drop) - 1u);
        q += (rest > (1u << (drop - 1u))) | ((rest == (1u << (drop - 1u))) & q);
    } else {                                                            /* subnormal: units of 2**(1 - bias - mbits) */
        e = a >> 23;
        q = cb_round_shift((a & 0x7FFFFFu) | (e ? 0x800000u : 0u), 151u - bias - mbits - e);
    }
    if (q > top) q = top;                                               /* saturate */
    return q ? (unsigned char)(sign | q) : (unsigned char)0;            /* zero is +0 */
}

CB_FN void cb_store(void* out, cb_u64 i, cb_u64 r, float step, int kind) {
    switch (kind) {
    case CB_F32: ((float*)out)[i] = cb_value(r, step); break;
    case CB_F64: ((double*)out)[i] = (double)cb_value(r, step); break;
    case CB_F16: ((unsigned short*)out)[i] = cb_half(cb_value(r, step)); break;
    case CB_BF16: ((unsigned short*)out)[i] = cb_bfloat16(cb_value(r, step)); break;
    case CB_E4M3: ((unsigned char*)out)[i] = cb_fp8(cb_value(r, step), 3u, 7u, 0x7Eu); break;
    case CB_E5M2: ((unsigned char*)out)[i] = cb_fp8(cb_value(r, step), 2u, 15u, 0x7Bu); break;
    case CB_BOOL: ((unsigned char*)out)[i] = (unsigned char)(r >> 63); break;
    case CB_I8: ((signed char*)out)[i] = (signed char)(r >> 61); break;
    case CB_U8: ((unsigned char*)out)[i] = (unsigned char)(r >> 61); break;
    case CB_I32: ((int*)out)[i] = (int)(r >> 61); break;
    case CB_I64: ((long long*)out)[i] = (long long)(r >> 61); break;
    case CB_U32: ((unsigned int*)out)[i] = (unsigned int)(r >> 61); break;
    }
}

/* byte j of a bit-packed fill of n elements: elements 8j..8j+7, element 8j+k in bit k */
CB_FN void cb_store_bits(void* out, cb_u64 j, cb_u64 n, cb_u64 key) {
    unsigned int byte = 0, k;
    for (k = 0; k < 8u && 8ULL * j + k < n; k++) byte |= (unsigned int)(cb_bits(key, 8ULL * j + k) >> 63) << k;
    ((unsigned char*)out)[j] = (unsigned char)byte;
}

CB_FN void cb_store_at(void* out, cb_u64 i, cb_u64 n, cb_u64 key, float step, int kind) {
    if (kind == CB_BITS) cb_store_bits(out, i, n, key);
    else cb_store(out, i, cb_bits(key, i), step, kind);
}

/* n elements; a bit-packed fill's threads write its ceil(n / 8) bytes */
#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
extern "C" __global__ void cb_random_fill(void* out, cb_u64 n, cb_u64 key, float step, int kind) {
    cb_u64 m = kind == CB_BITS ? (n + 7ULL) / 8ULL : n;
    for (cb_u64 i = blockIdx.x * (cb_u64)blockDim.x + threadIdx.x; i < m; i += (cb_u64)gridDim.x * blockDim.x)
        cb_store_at(out, i, n, key, step, kind);
}
#else
void cb_random_fill_host(void* out, cb_u64 n, cb_u64 key, float step, int kind) {
    cb_u64 m = kind == CB_BITS ? (n + 7ULL) / 8ULL : n;
    for (cb_u64 i = 0; i < m; i++) cb_store_at(out, i, n, key, step, kind);
}
#endif
"""

_D = DataType
# data type -> the kernel's kind (RANDOM_FILL_SOURCE's enum)
RANDOM_KINDS = {_D.CUDNN_DATA_FLOAT: 0, _D.CUDNN_DATA_DOUBLE: 1, _D.CUDNN_DATA_HALF: 2, _D.CUDNN_DATA_BFLOAT16: 3,
                _D.CUDNN_DATA_FP8_E4M3: 4, _D.CUDNN_DATA_FP8_E5M2: 5, _D.CUDNN_DATA_BOOLEAN: 12, _D.CUDNN_DATA_INT8: 7,
                _D.CUDNN_DATA_UINT8: 8, _D.CUDNN_DATA_INT32: 9, _D.CUDNN_DATA_INT64: 10}
if "CUDNN_DATA_UINT32" in _D.__members__:
    RANDOM_KINDS[_D.CUDNN_DATA_UINT32] = 11
if "CUDNN_DATA_BYTE_BOOLEAN" in _D.__members__:
    RANDOM_KINDS[_D.CUDNN_DATA_BYTE_BOOLEAN] = 6
RANDOM_ONES = {_D[n]: 0x7F for n in ("CUDNN_DATA_FP8_E8M0",) if n in _D.__members__}  # scale factors: one byte, 1.0
_M64 = (1 << 64) - 1
_GAMMA, _MIX1, _MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
_STD_OF_SUM = math.sqrt(((1 << 32) - 1) / 3)  # the standard deviation of the sum of four 16-bit uniforms
_HOST_CHUNK = 1 << 16  # elements per step of the host twin (its temporaries stay in cache: measured 2-3x faster)


def _splitmix64(z: int) -> int:
    z = (z ^ (z >> 30)) * _MIX1 & _M64
    z = (z ^ (z >> 27)) * _MIX2 & _M64
    return z ^ (z >> 31)


def random_key(seed: int, stream: int) -> int:
    """The 64-bit key of a fill: stream ``stream`` (a tensor's UID, say) of ``seed``; the same pair, the same values."""
    return _splitmix64((_splitmix64((int(seed) * _GAMMA + _GAMMA) & _M64) ^ (int(stream) & _M64)) & _M64)


def random_step(scale: float = 0.5) -> np.float32:
    """The float32 factor of the centred sums (see the notes above): the fill's standard deviation is ``scale``."""
    return np.float32(float(scale) / _STD_OF_SUM)


def _random_data_type(data_type) -> DataType:
    try:
        dt = DataType(int(data_type))
    except (TypeError, ValueError):
        raise TypeError(f"data_type: {data_type!r} is not a cuDNN data type") from None
    if dt not in RANDOM_KINDS and dt not in RANDOM_ONES:
        raise TypeError(f"data_type: no random fill for {dt.name} (vectorized, sub-byte or complex): pass the buffer "
                        "yourself")
    return dt


def _random_bits(key: int, start: int, count: int) -> np.ndarray:
    z = np.arange(start + 1, start + count + 1, dtype=np.uint64)
    z *= np.uint64(_GAMMA)  # (numpy arrays wrap modulo 2**64, as the kernel's unsigned arithmetic)
    z += np.uint64(key & _M64)
    z ^= z >> np.uint64(30)
    z *= np.uint64(_MIX1)
    z ^= z >> np.uint64(27)
    z *= np.uint64(_MIX2)
    z ^= z >> np.uint64(31)
    return z


def _random_chunk(dt: DataType, r: np.ndarray, step: np.float32) -> np.ndarray:
    if dt in _arrays.BOOLEAN_TYPES:
        return (r >> np.uint64(63)).astype(np.bool_)
    if not _arrays.is_float(dt):
        return (r >> np.uint64(61)).astype(_arrays.storage_dtype(dt))
    mask = np.uint64(0xFFFF)
    s = ((r & mask) + ((r >> np.uint64(16)) & mask) + ((r >> np.uint64(32)) & mask) + (r >> np.uint64(48)))
    x = (s.astype(np.int64) - 131070).astype(np.float32)
    x *= step  # one float32 rounding, as the kernel's __fmul_rn
    if dt == _D.CUDNN_DATA_FLOAT:
        return x
    if dt == _D.CUDNN_DATA_DOUBLE:
        return x.astype(np.float64)
    if dt == _D.CUDNN_DATA_HALF:
        return x.astype(np.float16)  # to nearest, ties to even, as the kernel
    return _arrays.encode(x, dt)  # bfloat16 bits, fp8 codes: the package's one encoder


def host_random(data_type, count: int, key: int, scale: float = 0.5) -> np.ndarray:
    """``count`` elements of a random fill (``key``, standard deviation ``scale``) in ``data_type``'s host storage
    (``typed.arrays.storage_dtype``): on the host, bit for bit what the device kernel writes (``fill_random``) once
    laid out in memory (``typed.arrays.memory_bytes``: BOOLEAN packed)."""
    dt = _random_data_type(data_type)
    count = int(count)
    if count < 0:
        raise ValueError(f"count: cannot fill {count} elements")
    if dt in RANDOM_ONES:
        return np.full(count, RANDOM_ONES[dt], dtype=np.uint8)
    step = random_step(scale)
    out = np.empty(count, dtype=_arrays.storage_dtype(dt))
    for start in range(0, count, _HOST_CHUNK):
        n = min(_HOST_CHUNK, count - start)
        out[start:start + n] = _random_chunk(dt, _random_bits(key, start, n), step)
    return out


_kernels: dict = {}  # device ordinal -> the compiled cb_random_fill, or the reason it is missing (a str)
# The failure is memoized too: NVRTC does not appear mid-process, and a retry per fill would cost a compile
# attempt and a warning each time (the host twin gives the same bits meanwhile).


def random_fill_kernel():
    """The random-fill kernel for the current device (compiled once per process and device, with NVRTC through
    ``cuda.core.Program``), or a str saying why there is none (NVRTC missing or failing)."""
    dev = device()
    kernel = _kernels.get(dev.device_id)
    if kernel is None:
        with _lock:
            kernel = _kernels.get(dev.device_id)
            if kernel is None:
                core = cuda_core()
                try:
                    program = core.Program(RANDOM_FILL_SOURCE, code_type="c++",
                                           options=core.ProgramOptions(arch=f"sm_{dev.arch}"))
                    kernel = program.compile("cubin").get_kernel("cb_random_fill")
                except Exception as e:  # noqa: BLE001 - NVRTC absent or refusing: the host twin takes over
                    kernel = (f"random inputs are generated on the host: the random-fill kernel did not compile "
                              f"({type(e).__name__}: {e})")
                    warnings.warn(kernel, RuntimeWarning, stacklevel=3)
                _kernels[dev.device_id] = kernel
    return kernel


def fill_random(ptr, data_type, count: int, key: int, scale: float = 0.5, stream=0) -> np.ndarray | None:
    """Queue a random fill of ``count`` elements of ``data_type`` at device address ``ptr`` on ``stream`` (the
    generator above, keyed by ``key``, standard deviation ``scale``). On the device, by a kernel: returns None (the
    values are read back where needed). Where the kernel cannot be compiled (``random_fill_kernel`` says why), the
    host twin makes them and they are copied (done when this returns): returns those host values (storage dtype,
    ``count`` elements; ``typed.arrays.memory_bytes`` gives the bytes copied, BOOLEAN packed), the same bits the
    kernel would have written."""
    dt = _random_data_type(data_type)
    count = int(count)
    if count <= 0:
        return None
    if dt in RANDOM_ONES:
        fill_bytes(ptr, RANDOM_ONES[dt], count, stream)
        return None
    kernel = random_fill_kernel()
    if isinstance(kernel, str):
        values = host_random(dt, count, key, scale)
        copy_to_device(ptr, _arrays.memory_bytes(values, dt), stream)
        return values
    core = cuda_core()
    config = core.LaunchConfig(grid=max(1, min((count + 255) // 256, 8 * _multiprocessors())), block=256)
    core.launch(stream_of(stream), config, kernel, _address(ptr), np.uint64(count), np.uint64(key & _M64),
                random_step(scale), np.int32(RANDOM_KINDS[dt]))
    return None


def _multiprocessors() -> int:
    dev = device()
    count = _sm_counts.get(dev.device_id)
    if count is None:
        count = _sm_counts[dev.device_id] = int(dev.properties.multiprocessor_count)
    return count


_sm_counts: dict = {}
