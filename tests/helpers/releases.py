"""Offline device profiles for whatever cuDNN release is loaded, for the tests of newer releases' features.

The bundled H100 and H200 profiles are the ground truth; until they load on every release (the release-aware
profiles of issue 17), a release whose profile is refused gets the bundled capture handed over with the member
cuDNN 9.28 requires added (``memoryBusWidth``: H100 SXM 5120 bits, H200 6144 bits, the published figures) and
``allow_version_mismatch=True``. cuDNN itself then finalizes it; nothing is stood in for.
"""
from __future__ import annotations

import functools
import json

from cudnn_backend.errors import DeviceProfileError
from cudnn_backend.runtime.profiles import DeviceProfile
from tests.helpers.env import LOADED, PACKAGE_DATA

MEMORY_BUS_WIDTH = {"h100": 5120, "h200": 6144}  # bits, published GPU facts


@functools.lru_cache(maxsize=None)
def profile(name: str = "h200") -> DeviceProfile:
    """The bundled ``name`` profile for the loaded cuDNN (see the module docstring)."""
    try:
        p = DeviceProfile.bundled(name)
        p.descriptor()
        return p
    except DeviceProfileError:
        data = json.loads((PACKAGE_DATA / f"{name}_deviceprop_cudnn91900.json").read_text())
        props = data.get("deviceprop", data)
        props.setdefault("memoryBusWidth", MEMORY_BUS_WIDTH[name])
        return DeviceProfile(json.dumps(props), LOADED, source=f"bundled {name} (9.19.0 capture, memoryBusWidth "
                             "added)", allow_version_mismatch=True)
