"""What cudnn-backend found on this machine: package and cuDNN versions, paths, driver, GPUs."""
from __future__ import annotations

from cudnn_backend._bindings import _loader
from cudnn_backend._bindings.enums import HEADER_VERSION
from cudnn_backend._version import __version__
from cudnn_backend.core import device
from cudnn_backend.core._library import get_cudart_version, get_max_device_version
from cudnn_backend.core.json_checks import TABLE_RELEASES, table_release
from cudnn_backend.core.versions import OFFLINE_SINCE, OLDEST_SUPPORTED, format_version

__all__ = ["info", "support", "json_table"]


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
        "cudnn_support": support(lib.version),
        "json_table": json_table(lib.version),
        "cudart_version": f"{cudart // 1000}.{cudart % 1000 // 10}",
        "max_device_version": get_max_device_version(),
        "driver": lib.driver,
        "nodevice_stand_in_active": lib.driver == "stand-in",
        "nvrtc": lib.nvrtc,
        "gpus": names or "no GPU",
    }


def support(version) -> str:
    """Where a cuDNN release stands in the support range (9.10.2 up to the newest release with a JSON table)."""
    newest = format_version(TABLE_RELEASES[-1])
    tested = f"{format_version(OLDEST_SUPPORTED)} to {newest}"
    if version < OFFLINE_SINCE:
        return (f"older than the support range ({tested}); no device profiles before cuDNN "
                f"{format_version(OFFLINE_SINCE)}, so no offline work")
    if version < OLDEST_SUPPORTED:
        return f"older than the support range ({tested}): untested"
    if version > TABLE_RELEASES[-1]:
        return f"newer than the newest release tested ({newest}): JSON checks fall back to its table"
    return f"supported ({tested})"


def json_table(version) -> str:
    """The release whose JSON table checks this release's plans, kernel caches and device profiles."""
    table = table_release(version)
    if table == version:
        return f"{format_version(table)} (its own)"
    return f"{format_version(table)} (the nearest; members unknown to it passed through)"
