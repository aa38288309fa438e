"""GPU work through cuda.core and cuda-bindings: the device, streams, timing events, device memory, copies,
fills and the L2 flush.

* ``device()``: the calling thread's cuda.core ``Device`` (the runtime's current device, whose primary context
  cuDNN's handles use), made current; ``stream_of(s)``: a cuda.core ``Stream`` for a handle's stream (an int,
  0 the legacy default stream, or any stream object);
* ``DeviceBuffer``: device memory from the device's memory resource (cuda.core ``Buffer``), freed on
  ``close()`` or collection; it speaks ``__cuda_array_interface__`` (a 1-D ``uint8`` array);
  ``allocate_workspace`` makes one for a variant pack;
* ``copy_to_device`` / ``copy_to_host`` / ``copy_device`` / ``fill_bytes``: the copies and memsets
  (cuda-bindings' runtime API), ``synchronize``;
* ``EventTimer``: two timing events on a stream (cuda.core ``Event``); ``L2Flush``: a buffer twice the
  L2 cache, overwritten between cold calls; ``HostBuffer``: page-locked host memory for fast reads back.

cuda-core and cuda-bindings (``pip install 'cudnn-backend[gpu]'``) are imported on first use: the rest of the
package, and variant packs over explicit pointers, work without them. Nothing here imports torch.
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from cudnn_backend.core import device as _device
from cudnn_backend.core._descriptor import _stream_to_int
from cudnn_backend.errors import CudaError, MissingDependencyError

__all__ = ["CudaError", "DeviceBuffer", "HostBuffer", "EventTimer", "L2Flush", "allocate", "allocate_workspace",
           "check", "cudart", "cudriver", "cuda_core", "device", "current_device_ordinal", "stream_of",
           "copy_to_device", "copy_to_host", "copy_device", "fill_bytes", "synchronize"]


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
        _local.device = dev
    return dev


def stream_of(stream=None):
    """A cuda.core ``Stream`` for ``stream``: an int handle (0 or None: the legacy default stream), a cuda.core
    or cuda-bindings stream, anything with ``__cuda_stream__``."""
    core = cuda_core()
    if isinstance(stream, core.Stream):
        return stream
    device()
    handle = _stream_to_int(stream)
    return core.LEGACY_DEFAULT_STREAM if handle == 0 else core.Stream.from_handle(handle)


def synchronize(stream=None):
    """Wait for ``stream`` (an int or stream object), or for the whole device when None."""
    rt = cudart()
    if stream is None:
        check(rt.cudaDeviceSynchronize(), "cudaDeviceSynchronize")
    else:
        check(rt.cudaStreamSynchronize(_stream_to_int(stream)), "cudaStreamSynchronize")


# ---------------------------------------------------------------------------------------------
# device memory
# ---------------------------------------------------------------------------------------------
class DeviceBuffer:
    """``nbytes`` of device memory from the current device's memory resource (a cuda.core ``Buffer``); freed on
    ``close()`` or collection.

    ``ptr`` is the device address (an int), ``int(buf)`` too. ``__cuda_array_interface__`` exposes it as a 1-D
    uint8 array (version 3). The memory is ready on every stream when the constructor returns (its allocation
    is waited for), and ``close()`` waits for the device before it gives the memory back.
    """

    __slots__ = ("_buffer", "_ptr", "_nbytes", "_closed", "__weakref__")

    def __init__(self, nbytes: int):
        if isinstance(nbytes, bool) or not isinstance(nbytes, int):
            raise TypeError(f"nbytes: expected an int, not {type(nbytes).__name__}")
        if nbytes < 0:
            raise ValueError(f"nbytes: cannot allocate {nbytes} bytes")
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
        buf, self._buffer = self._buffer, None
        self._ptr = 0
        self._closed = True
        if buf is not None:
            synchronize()
            buf.close()

    def __del__(self):
        try:
            if getattr(self, "_buffer", None) is not None:
                self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown, or a context already torn down
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

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


class HostBuffer:
    """``nbytes`` of page-locked host memory (``cudaMallocHost``), for fast copies back; ``array`` is a uint8
    numpy view of it (valid until ``close()``)."""

    def __init__(self, nbytes: int):
        self.nbytes = int(nbytes)
        self._ptr = int(check(cudart().cudaMallocHost(max(self.nbytes, 1)), f"cudaMallocHost({self.nbytes})"))
        self.array = np.ctypeslib.as_array((ctypes.c_uint8 * max(self.nbytes, 1)).from_address(self._ptr))[:self.nbytes]

    @property
    def ptr(self) -> int:
        return self._ptr

    def close(self):
        ptr, self._ptr = self._ptr, 0
        self.array = None
        if ptr:
            check(cudart().cudaFreeHost(ptr), "cudaFreeHost")

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def _address(ptr) -> int:
    return int(ptr.ptr) if isinstance(ptr, (DeviceBuffer, HostBuffer)) else int(ptr)


def copy_to_device(dst, host, stream=0):
    """Copy the C-contiguous bytes of ``host`` (a numpy array or bytes-like) to device address ``dst``; returns
    when the copy is done."""
    host = np.ascontiguousarray(host)
    if host.nbytes:
        rt = cudart()
        s = _stream_to_int(stream)
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
        s = _stream_to_int(stream)
        check(rt.cudaMemcpyAsync(out.ctypes.data, _address(src), nbytes, rt.cudaMemcpyKind.cudaMemcpyDeviceToHost, s),
              "cudaMemcpyAsync(DeviceToHost)")
        check(rt.cudaStreamSynchronize(s), "cudaStreamSynchronize")
    return out[:nbytes]


def copy_device(dst, src, nbytes: int, stream=0):
    """Queue a device-to-device copy of ``nbytes`` bytes on ``stream``."""
    if nbytes:
        rt = cudart()
        check(rt.cudaMemcpyAsync(_address(dst), _address(src), int(nbytes), rt.cudaMemcpyKind.cudaMemcpyDeviceToDevice,
                                 _stream_to_int(stream)), "cudaMemcpyAsync(DeviceToDevice)")


def fill_bytes(ptr, byte: int, nbytes: int, stream=0):
    """Queue a memset of ``nbytes`` bytes at ``ptr`` to ``byte`` on ``stream``."""
    if nbytes:
        check(cudart().cudaMemsetAsync(_address(ptr), int(byte) & 0xFF, int(nbytes), _stream_to_int(stream)),
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


class L2Flush:
    """A device buffer twice the size of the L2 cache (at least 1 MiB); calling it overwrites the buffer on
    ``stream``, which evicts what earlier work left in L2 (cold timing)."""

    def __init__(self, stream=None):
        l2 = int(device().properties.l2_cache_size or (64 << 20))
        self.buffer = DeviceBuffer(max(2 * l2, 1 << 20))
        self.stream = _stream_to_int(stream)

    @property
    def nbytes(self) -> int:
        return self.buffer.nbytes

    def __call__(self, value: int = 0):
        fill_bytes(self.buffer.ptr, value, self.buffer.nbytes, self.stream)

    def close(self):
        self.buffer.close()
