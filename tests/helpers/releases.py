"""Offline device profiles for whatever cuDNN release is loaded, for the tests of newer releases' features (and the
JSON fuzz and tools/derive_json_tables.py).

The bundled H100 and H200 profiles are the ground truth; until they load on every release (the release-aware
profiles of issue 17), a release whose profile is refused gets the bundled capture handed over as that release
takes it: less the members its JSON table does not know (9.10.2 neither writes nor reads ``maxThreadsPerBlock``),
plus each member cuDNN itself asks for (its log names it) from the published GPU facts (``memoryBusWidth``, which
cuDNN 9.28 requires: H100 SXM 5120 bits, H200 6144 bits), with ``allow_version_mismatch=True``. cuDNN itself then
finalizes it; nothing is stood in for.
"""
from __future__ import annotations

import functools
import json
import re

from cudnn_backend.core import cudnn_messages
from cudnn_backend.core.json_checks import deviceprop_members
from cudnn_backend.errors import CudnnBackendError
from cudnn_backend.runtime.profiles import DeviceProfile
from tests.helpers.env import LOADED, PACKAGE_DATA

MEMORY_BUS_WIDTH = {"h100": 5120, "h200": 6144}  # bits, published GPU facts
_MISSING_MEMBER = re.compile(r'convert_child_from_json\(json_object, "([A-Za-z_][A-Za-z0-9_]*)"')


@functools.lru_cache(maxsize=None)
def profile(name: str = "h200") -> DeviceProfile:
    """The bundled ``name`` profile for the loaded cuDNN (see the module docstring)."""
    try:
        p = DeviceProfile.bundled(name)
        p.descriptor()
        return p
    except CudnnBackendError:
        pass
    data = json.loads((PACKAGE_DATA / f"{name}_deviceprop_cudnn91900.json").read_text())
    captured = dict(data.get("deviceprop", data), memoryBusWidth=MEMORY_BUS_WIDTH[name])
    known = set(deviceprop_members(LOADED, required=False))
    props = {k: v for k, v in captured.items() if k in known}
    while True:
        with cudnn_messages() as messages:
            try:
                p = DeviceProfile(json.dumps(props), LOADED, source=f"bundled {name} (the 9.19.0 capture as cuDNN "
                                  f"{LOADED} takes it)", allow_version_mismatch=True)
                p.descriptor()
                return p
            except CudnnBackendError as e:
                missing = [m for m in _MISSING_MEMBER.findall("\n".join(messages)) if m in captured and m not in props]
                if not missing:
                    raise
                props.update((m, captured[m]) for m in missing)
