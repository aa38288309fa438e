"""Where the tests run: the repository root, the loaded cuDNN, whether a real GPU is visible."""
from __future__ import annotations

import pathlib

import pytest

import cudnn_backend as cb
from cudnn_backend.core import device

ROOT = pathlib.Path(__file__).resolve().parents[2]  # the checkout whose cudnn_backend is under test
DATA = ROOT / "tests" / "data"
PACKAGE_DATA = pathlib.Path(cb.__file__).resolve().parent / "data"
H200_PROFILE_JSON = PACKAGE_DATA / "h200_deviceprop_cudnn91900.json"

HAVE_GPU = device.gpu_available()
LOADED = cb.get_version()
VERIFIED = 91900  # the cuDNN release the refusals asserted in these tests were worked out against


def version_tuple(text: str) -> tuple:
    return tuple(int(x) for x in text.split("."))


def loaded_has(since: str) -> bool:
    """Whether the loaded cuDNN is at least ``since`` ("9.22.0")."""
    return version_tuple(since) <= (LOADED // 10000, LOADED % 10000 // 100, LOADED % 100)


def version_text(v: int = LOADED) -> str:
    return f"{v // 10000}.{v % 10000 // 100}.{v % 100}"


def needs_operation(descriptor: str, what: str):
    """A skip mark for a test of an operation the loaded cuDNN lacks (``descriptor``: its C name)."""
    return pytest.mark.skipif(not loaded_has(cb.core.since_of(descriptor)), reason=f"the loaded cuDNN has no {what}")


needs_sdpa_fwd = needs_operation("CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR", "unified SDPA forward")
needs_sdpa_bwd = needs_operation("CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR", "unified SDPA backward")

