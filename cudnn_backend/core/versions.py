"""cuDNN versions and GPU SM versions: one parser and one formatter for the whole package.

cuDNN numbers its versions ``MAJOR*10000 + MINOR*100 + PATCH`` (91900 is 9.19.0). Text versions
("9.19.0", "9.19") are read with ``packaging``; the loader formats the number it reads from the
library (``_bindings._loader.format_version``), and everything above uses this module. A GPU's SM version is
written as its compute capability ("9.0"), and a device as "NVIDIA H200 (SM 9.0, 132 SMs)".
"""
from __future__ import annotations

import math
import numbers

from packaging.version import InvalidVersion, Version

from cudnn_backend._bindings._loader import format_version as _format_int
from cudnn_backend._bindings._loader import load_cudnn

__all__ = ["parse_version", "format_version", "versions_compatible", "loaded_version", "loaded_version_string",
           "sm_words", "device_words", "OVERRIDE_SHAPES_NEEDS", "OLDEST_SUPPORTED", "OFFLINE_SINCE"]

MIN_VERSION = 90000  # cuDNN 9.0.0: the package needs nothing older
# The support range: 9.10.2 (cu12; the cu13 wheels begin at 9.12) up to the newest release on pip. CI runs the
# offline tests on 9.10.2; older 9.x releases load, untested (device profiles need 9.8).
OLDEST_SUPPORTED = 91002
OFFLINE_SINCE = 90800  # CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION: device profiles, so all offline work

#: What shape overrides use, for ``core.check_available``: the graph's flag (9.21), the variant pack's three
#: attributes (9.18) and the per-pack workspace query (9.23). The feature is one, so is its gate.
OVERRIDE_SHAPES_NEEDS = ("CUDNN_ATTR_OPERATIONGRAPH_IS_OVERRIDE_SHAPE_ENABLED",
                         "CUDNN_ATTR_VARIANT_PACK_OVERRIDE_UNIQUE_IDS", "CUDNN_ATTR_VARIANT_PACK_OVERRIDE_SHAPES",
                         "CUDNN_ATTR_VARIANT_PACK_OVERRIDE_STRIDES", "cudnnGetExecutionPlanWorkspaceSize")


def parse_version(value, what: str = "cuDNN version") -> int:
    """A cuDNN version as an int from 91900, '91900', '9.19.0', '9.19', (9, 19, 0) or a packaging Version.

    Refuses bools, floats, negative or pre-9 numbers, and text that is no version (ValueError/TypeError
    naming ``what``).
    """
    if isinstance(value, bool):
        raise TypeError(f"{what}: expected an int like 91900 or a string like '9.19.0', not bool")
    if isinstance(value, numbers.Integral):
        v = int(value)
    elif isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise ValueError(f"{what}: {value!r} is not a cuDNN version (expected e.g. 91900 or '9.19.0')")
        raise TypeError(f"{what}: expected an int like 91900 or a string like '9.19.0', not float")
    elif isinstance(value, (tuple, list)):
        if not 2 <= len(value) <= 3 or not all(isinstance(x, numbers.Integral) and not isinstance(x, bool)
                                               for x in value):
            raise ValueError(f"{what}: {value!r} is not a (major, minor[, patch]) tuple of ints")
        v = _from_parts(*[int(x) for x in value])
    elif isinstance(value, Version):
        v = _from_release(value.release, what, value)
    elif isinstance(value, str):
        text = value.strip()
        if text.isdigit():
            v = int(text)
        else:
            try:
                parsed = Version(text)
            except InvalidVersion:
                raise ValueError(f"{what}: cannot read a cuDNN version from {value!r} (expected e.g. 91900 or "
                                 "'9.19.0')") from None
            v = _from_release(parsed.release, what, value)
    else:
        raise TypeError(f"{what}: expected an int like 91900 or a string like '9.19.0', not {type(value).__name__}")
    if v < MIN_VERSION or v > 99_99_99:
        raise ValueError(f"{what}: {v} is not a cuDNN 9+ version (MAJOR*10000 + MINOR*100 + PATCH, e.g. 91900)")
    return v


def _from_parts(major, minor, patch=0) -> int:
    if not (0 <= minor < 100 and 0 <= patch < 100 and 0 <= major < 100):
        raise ValueError(f"cuDNN version {major}.{minor}.{patch} is out of range")
    return major * 10000 + minor * 100 + patch


def _from_release(release, what, original) -> int:
    if not 2 <= len(release) <= 3:
        raise ValueError(f"{what}: {original!r} is not MAJOR.MINOR[.PATCH]")
    try:
        return _from_parts(*release)
    except ValueError:
        raise ValueError(f"{what}: {original!r} is out of range") from None


def format_version(version) -> str:
    """91900 -> '9.19.0'; None -> 'unknown'."""
    if version is None:
        return "unknown"
    return _format_int(parse_version(version))


def sm_words(value, unknown: str = "?", *, per_major: int | None = None) -> str:
    """A GPU's SM version as its compute capability: ``900`` (cuDNN's ``smVersion``, a profile's ``deviceVer``:
    ``per_major`` 100) and ``90`` (errata rules, CUDA's major * 10 + minor: ``per_major`` 10) are both ``"9.0"``;
    ``unknown`` for none (or no integer). Without ``per_major`` the value says which: the two overlap only below
    300, which as major * 100 would be an SM older than any cuDNN 9 runs on, so 100 is SM 10.0."""
    if isinstance(value, (bool, float)):
        return unknown
    try:
        v = int(value)
    except (TypeError, ValueError, OverflowError):
        return unknown
    if v < 0:
        return unknown
    if per_major is None:
        per_major = 100 if v >= 300 else 10
    return f"{v // 100}.{v % 100 // 10}" if per_major == 100 else f"{v // 10}.{v % 10}"


def device_words(name, sm_version, sm_count) -> str:
    """``NVIDIA H200 (SM 9.0, 132 SMs)``: a device, for messages and headers (what is unknown left out)."""
    sm = sm_words(sm_version, "")
    details = ", ".join(part for part in (f"SM {sm}" if sm else "", f"{sm_count} SMs" if sm_count is not None else "")
                        if part)
    return f"{name or 'an unnamed device'}{f' ({details})' if details else ''}"


def versions_compatible(a, b) -> bool:
    """Whether two cuDNN versions share MAJOR.MINOR (what device profiles need)."""
    return parse_version(a) // 100 == parse_version(b) // 100


def loaded_version() -> int:
    """The loaded cuDNN's version (loads it if nothing has yet)."""
    return load_cudnn().version


def loaded_version_string() -> str:
    """The loaded cuDNN's version as "MAJOR.MINOR.PATCH" (loads cuDNN if nothing has yet)."""
    return _format_int(load_cudnn().version)
