"""The one device probe: which CUDA driver cuDNN runs on, and the GPUs it reports.

Everything that asks "is there a GPU" (info, heuristics, plans, engines, profiles, the explorer) asks
here. Without a real driver the package runs cuDNN against its no-device stand-in (see the loader).
"""
from __future__ import annotations

import ctypes
import functools
import threading

from cudnn_backend._bindings import _loader

__all__ = ["driver", "gpus", "gpu_available", "gpu_count", "runtime_requests"]

_lock = threading.Lock()


def driver() -> str:
    """'cuda' (a real driver), 'stand-in' (the package's no-device driver) or 'none'."""
    return _loader.ensure_driver()


@functools.lru_cache(maxsize=1)
def _gpu_names() -> tuple:
    if driver() != "cuda":
        return ()
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return ()
    if hasattr(cuda, "cudnn_backend_nodevice_stub"):
        return ()
    with _lock:
        if cuda.cuInit(0) != 0:
            return ()
        count = ctypes.c_int(0)
        if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
            return ()
        names = []
        for i in range(count.value):
            dev = ctypes.c_int(0)
            buf = ctypes.create_string_buffer(256)
            if cuda.cuDeviceGet(ctypes.byref(dev), i) == 0 and cuda.cuDeviceGetName(buf, 256, dev) == 0:
                names.append(buf.value.decode(errors="replace"))
        return tuple(names)


def gpus() -> list[str]:
    """Names of the CUDA devices the real driver reports ([] with none, or with the stand-in)."""
    return list(_gpu_names())


def gpu_count() -> int:
    """How many CUDA devices the real driver reports (0 with none, or with the stand-in)."""
    return len(_gpu_names())


def gpu_available() -> bool:
    """Whether the real CUDA driver is loaded and reports at least one device."""
    return bool(_gpu_names())


@functools.lru_cache(maxsize=1)
def _runtime_counter():
    address = _loader.driver_symbol("cudnn_backend_stub_runtime_requests") if driver() == "stand-in" else 0
    return ctypes.CFUNCTYPE(ctypes.c_long)(address) if address else None


def runtime_requests() -> int | None:
    """How many times cuDNN's statically linked CUDA runtime asked the no-device stand-in for its entry points in this
    process (it asks when a step starts it, once per process: it remembers that it could not start); None with a real
    driver (or a stand-in built before it counted)."""
    counter = _runtime_counter()
    return None if counter is None else int(counter())
