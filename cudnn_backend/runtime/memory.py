"""Device memory through cuda-bindings: workspaces and plain device buffers.

``DeviceBuffer`` owns one ``cudaMalloc`` allocation and frees it (``cudaFree``) when closed or
collected. It speaks ``__cuda_array_interface__`` (a 1-D ``uint8`` array), so any code that takes
cupy/numba-style arrays takes it too, and it can be passed wherever a variant pack takes a buffer.

cuda-bindings (``pip install cudnn-backend[gpu]``) is imported only when memory is first
allocated: the rest of the package, and building variant packs from explicit pointers, works
without it.
"""
from __future__ import annotations

import threading

import numpy as np

from cudnn_backend.errors import CudaError, MissingDependencyError

__all__ = ["CudaError", "DeviceBuffer", "allocate", "allocate_workspace", "check", "cudart", "cudriver"]


_lock = threading.Lock()
_cudart = None
_cudriver = None


def cudart():
    """``cuda.bindings.runtime``, imported on first use (a clear error when cuda-bindings is missing)."""
    global _cudart
    if _cudart is None:
        with _lock:
            if _cudart is None:
                try:
                    from cuda.bindings import runtime
                except ImportError as e:
                    raise MissingDependencyError(
                        "cuda-bindings", "device memory and CUDA graphs (without it, pass device pointers yourself: "
                        "torch or cupy arrays, and workspace=)", "gpu") from e
                _cudart = runtime
    return _cudart


def cudriver():
    """``cuda.bindings.driver``, imported on first use (kernel names of CUDA graph nodes)."""
    global _cudriver
    if _cudriver is None:
        with _lock:
            if _cudriver is None:
                try:
                    from cuda.bindings import driver
                except ImportError as e:
                    raise MissingDependencyError("cuda-bindings", "reading kernel nodes", "gpu") from e
                _cudriver = driver
    return _cudriver


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


class DeviceBuffer:
    """``nbytes`` of device memory from ``cudaMalloc`` on the current device; freed on ``close()`` or collection.

    ``ptr`` is the device address (an int), ``int(buf)`` too. ``__cuda_array_interface__`` exposes
    it as a 1-D uint8 array (version 3, no stream synchronization implied).
    """

    __slots__ = ("_ptr", "_nbytes", "_closed", "__weakref__")

    def __init__(self, nbytes: int):
        if isinstance(nbytes, bool) or not isinstance(nbytes, int):
            raise TypeError(f"nbytes: expected an int, not {type(nbytes).__name__}")
        if nbytes < 0:
            raise ValueError(f"nbytes: cannot allocate {nbytes} bytes")
        self._ptr = 0
        self._nbytes = nbytes
        self._closed = False
        if nbytes == 0:
            return
        ptr = check(cudart().cudaMalloc(nbytes), f"cudaMalloc({nbytes})")
        self._ptr = int(ptr)

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

    def __int__(self):
        return self.ptr

    def __len__(self):
        return self._nbytes

    @property
    def __cuda_array_interface__(self):
        return {"shape": (self._nbytes,), "typestr": "|u1", "data": (self.ptr, False), "version": 3,
                "strides": None}

    def close(self):
        """Free the memory now (cudaFree, which waits for work using it); idempotent."""
        ptr, self._ptr = self._ptr, 0
        self._closed = True
        if ptr:
            check(cudart().cudaFree(ptr), "cudaFree")

    def __del__(self):
        try:
            if getattr(self, "_ptr", 0):
                self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown, or a context already torn down
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- convenience copies (synchronous) ----------------------------------------------------------
    def fill(self, byte: int = 0):
        """cudaMemset the whole buffer to ``byte``."""
        if self._nbytes:
            check(cudart().cudaMemset(self.ptr, int(byte), self._nbytes), "cudaMemset")

    def copy_from_host(self, data):
        """Copy a bytes-like object (or a C-contiguous numpy array) into the start of the buffer."""
        mv = memoryview(data).cast("B")
        if mv.nbytes > self._nbytes:
            raise ValueError(f"{mv.nbytes} bytes do not fit in a {self._nbytes}-byte DeviceBuffer")
        rt = cudart()
        host = np.frombuffer(mv, dtype=np.uint8)
        check(rt.cudaMemcpy(self.ptr, host.ctypes.data, mv.nbytes, rt.cudaMemcpyKind.cudaMemcpyHostToDevice),
              "cudaMemcpy(HostToDevice)")

    def copy_to_host(self, nbytes: int | None = None) -> bytes:
        """The first ``nbytes`` (default all) bytes of the buffer, copied to the host."""
        n = self._nbytes if nbytes is None else int(nbytes)
        out = np.empty(n, dtype=np.uint8)
        if n:
            rt = cudart()
            check(rt.cudaMemcpy(out.ctypes.data, self.ptr, n, rt.cudaMemcpyKind.cudaMemcpyDeviceToHost),
                  "cudaMemcpy(DeviceToHost)")
        return out.tobytes()

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
