"""``python -m cudnn_backend info``: what cudnn-backend found on this machine."""
from __future__ import annotations

import ctypes

from cudnn_backend._version import __version__


def _gpus() -> list[str]:
    """Names of the CUDA devices the real driver reports ([] with none or with the stand-in)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        if hasattr(cuda, "cudnn_backend_nodevice_stub"):
            return []
        if cuda.cuInit(0) != 0:
            return []
        count = ctypes.c_int(0)
        if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
            return []
        names = []
        for i in range(count.value):
            dev = ctypes.c_int(0)
            buf = ctypes.create_string_buffer(256)
            if cuda.cuDeviceGet(ctypes.byref(dev), i) == 0 and cuda.cuDeviceGetName(buf, 256, dev) == 0:
                names.append(buf.value.decode(errors="replace"))
        return names
    except OSError:
        return []


def gpu_available() -> bool:
    """Whether the real CUDA driver is loadable and reports at least one device."""
    return bool(_gpus())


def info() -> dict:
    """Package and cuDNN versions, where cuDNN was found, the CUDA runtime it was built for, the GPUs."""
    from cudnn_backend._bindings import _loader
    from cudnn_backend._descriptor import get_cudart_version, get_max_device_version
    from cudnn_backend._generated.enums import HEADER_VERSION

    lib = _loader.load_cudnn()
    cudart = get_cudart_version()
    gpus = _gpus() if lib.driver == "cuda" else []
    return {
        "cudnn_backend": __version__,
        "header_version": HEADER_VERSION,
        "cudnn_version": lib.version_string,
        "cudnn_path": lib.path,
        "cudnn_found_via": lib.found_via,
        "cudart_version": f"{cudart // 1000}.{cudart % 1000 // 10}",
        "max_device_version": get_max_device_version(),
        "driver": lib.driver,
        "nodevice_stand_in_active": lib.driver == "stand-in",
        "nvrtc": lib.nvrtc,
        "gpus": gpus or "no GPU",
    }


def format_info(d: dict) -> str:
    width = max(len(k) for k in d)
    return "\n".join(f"{k:<{width}}  {', '.join(v) if isinstance(v, list) else v}" for k, v in d.items())
