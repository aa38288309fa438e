"""What cudnn-backend found on this machine: package and cuDNN versions, paths, driver, GPUs."""
from __future__ import annotations

from cudnn_backend._bindings import _loader
from cudnn_backend._bindings.enums import HEADER_VERSION
from cudnn_backend._version import __version__
from cudnn_backend.core import device
from cudnn_backend.core._descriptor import get_cudart_version, get_max_device_version

__all__ = ["info"]


def info() -> dict:
    """Package and cuDNN versions, where cuDNN was found, the CUDA runtime it was built for, the GPUs."""
    lib = _loader.load_cudnn()
    cudart = get_cudart_version()
    names = device.gpus()
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
        "gpus": names or "no GPU",
    }
