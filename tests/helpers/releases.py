"""The bundled H100 and H200 device profiles for whatever cuDNN release is loaded, one finalized descriptor each per
process, for the tests of newer releases' features (and the JSON fuzz and tools/derive_json_tables.py).

The package is the one source: ``DeviceProfile.bundled`` converts the captures (``cudnn_backend/data``) for the loaded
release, with the members that release requires from the published GPU facts (``data/gpu_facts.json``).
"""
from __future__ import annotations

import functools

from cudnn_backend.runtime.profiles import DeviceProfile


@functools.lru_cache(maxsize=None)
def profile(name: str = "h200") -> DeviceProfile:
    """The bundled ``name`` profile for the loaded cuDNN, its descriptor finalized (cuDNN takes it)."""
    p = DeviceProfile.bundled(name)
    p.descriptor()
    return p
