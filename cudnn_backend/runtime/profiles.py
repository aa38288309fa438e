"""Device profiles: a GPU's properties as cuDNN describes them, for heuristics and plans without the GPU.

cuDNN (>= 9.8) can describe a device as JSON (``CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION`` of a
``CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR``) and accept that JSON back in place of the device: engine
heuristics, engines and execution plans then work on a machine with no GPU at all.

A ``DeviceProfile`` is that JSON plus what it does not record itself: the cuDNN version that wrote
it (cuDNN refuses, or may misread, a profile written by another version) and where it came from.
It is plain data: it pickles and deep-copies (the finalized descriptor it caches is left behind).

* ``DeviceProfile.capture(handle_or_device)``  on a GPU machine
* ``DeviceProfile.bundled("h200")``            the profiles shipped in ``cudnn_backend/data``
* ``DeviceProfile.load(path)`` / ``save(path)``  our JSON file, or a raw cuDNN deviceprop JSON
* ``profile.descriptor()``                     a finalized ``DeviceProp`` (checks the cuDNN version)
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import threading
import weakref
from dataclasses import dataclass, field

from cudnn_backend._bindings.enums import DescriptorType
from cudnn_backend.core import device as _device
from cudnn_backend.core._descriptor import Descriptor, Handle
from cudnn_backend.core.json_checks import check_deviceprop_json
from cudnn_backend.core.versions import format_version, loaded_version, parse_version, versions_compatible
from cudnn_backend.errors import DeviceProfileError, DeviceProfileVersionError
from cudnn_backend.typed import DeviceProp

__all__ = ["DeviceProfile", "DeviceProfileError", "DeviceProfileVersionError", "as_deviceprop", "profile_of",
           "bundled_profiles", "version_from_filename", "file_path", "DATA_DIR"]

DATA_DIR = pathlib.Path(__file__).resolve().parent.parent / "data"
FORMAT = "cudnn_backend.device_profile"
FORMAT_VERSION = 1
MAX_PROFILE_BYTES = 1 << 20  # a deviceprop JSON is about 1 KB; a larger file is not one
# h200_deviceprop_cudnn91900.json: <name>_deviceprop_cudnn<MAJOR*10000 + MINOR*100 + PATCH>.json
_FILE_VERSION = re.compile(r"cudnn(\d{5,6})(?:\D[^/\\]*)?\.json$", re.IGNORECASE)
_BUNDLED = re.compile(r"^(?P<name>.+?)_deviceprop_cudnn(?P<version>\d{5,6})\.json$", re.IGNORECASE)


_PROFILE_OF: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # DeviceProp descriptor -> its profile


def file_path(path, what="path") -> pathlib.Path:
    """A file path from a str, bytes or os.PathLike: TypeError/ValueError naming ``what`` for anything the file
    system cannot take (a lone surrogate, a NUL character), rather than UnicodeEncodeError from deep inside open()."""
    try:
        raw = os.fspath(path)
    except TypeError:
        raise TypeError(f"{what}: expected a file path (str, bytes or os.PathLike), not {type(path).__name__}") from None
    if isinstance(raw, bytes):
        raw = os.fsdecode(raw)
    try:
        os.fsencode(raw)
    except UnicodeEncodeError as e:
        raise ValueError(f"{what}: {raw!r} is no file name this system can encode ({e.reason})") from None
    if "\0" in raw:
        raise ValueError(f"{what}: a file path cannot hold a NUL character")
    return pathlib.Path(raw)


def version_from_filename(path) -> int | None:
    """The cuDNN version in a file name like ``h200_deviceprop_cudnn91900.json`` (None when absent)."""
    m = _FILE_VERSION.search(pathlib.Path(path).name)
    return int(m.group(1)) if m else None


def _check_json(text, what):
    """The deviceprop JSON, checked field by field (cuDNN aborts on some, e.g. a 256-byte deviceName)."""
    try:
        return check_deviceprop_json(text)
    except ValueError as e:
        raise DeviceProfileError(f"{what}: {e}") from None
    except TypeError as e:
        raise DeviceProfileError(f"{what}: {e}") from None


@dataclass
class DeviceProfile:
    """One GPU's cuDNN device properties (the raw deviceprop JSON) and the cuDNN version that wrote it.

    ``deviceprop_json`` is the raw text of CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION.

    ``allow_version_mismatch=True`` lets ``descriptor()`` hand a profile from another cuDNN
    version to the loaded one (for experts: cuDNN may reject or misread it).
    """

    deviceprop_json: str
    cudnn_version: int | None = None
    source: str | None = None
    allow_version_mismatch: bool = False
    _descriptor_cache: object = field(default=None, init=False, repr=False, compare=False)
    _lock: object = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def __post_init__(self):
        if isinstance(self.deviceprop_json, (bytes, bytearray, memoryview)):
            try:
                self.deviceprop_json = bytes(self.deviceprop_json).decode("utf-8")
            except UnicodeDecodeError as e:
                raise DeviceProfileError(f"deviceprop_json: not UTF-8 text ({e.reason} at byte {e.start})") from None
        if not isinstance(self.deviceprop_json, str):
            raise TypeError(f"deviceprop_json: expected the deviceprop JSON text, not "
                            f"{type(self.deviceprop_json).__name__}")
        self.deviceprop_json = _check_json(self.deviceprop_json, "deviceprop_json")
        parsed = json.loads(self.deviceprop_json)
        if not isinstance(parsed, dict) or not any(k in parsed for k in ("deviceName", "deviceVer", "multiProcessorCount")):
            raise DeviceProfileError("deviceprop_json: not a cuDNN deviceprop JSON "
                                     "(no deviceName/deviceVer/multiProcessorCount keys)")
        if self.cudnn_version is not None:
            try:
                self.cudnn_version = parse_version(self.cudnn_version, "cudnn_version")
            except (TypeError, ValueError) as e:
                raise DeviceProfileError(str(e)) from None
        if not isinstance(self.allow_version_mismatch, bool):
            raise TypeError("allow_version_mismatch: expected a bool")

    # -- plain data: pickling and copying leave the cached descriptor and the lock behind ---------------
    def __getstate__(self):
        return {"deviceprop_json": self.deviceprop_json, "cudnn_version": self.cudnn_version, "source": self.source,
                "allow_version_mismatch": self.allow_version_mismatch}

    def __setstate__(self, state):
        self.deviceprop_json = state["deviceprop_json"]
        self.cudnn_version = state["cudnn_version"]
        self.source = state["source"]
        self.allow_version_mismatch = state["allow_version_mismatch"]
        self._descriptor_cache = None
        self._lock = threading.Lock()

    def __copy__(self):
        return DeviceProfile(self.deviceprop_json, self.cudnn_version, self.source, self.allow_version_mismatch)

    def __deepcopy__(self, memo):
        return self.__copy__()

    # -- what the JSON says -------------------------------------------------------------------------
    @property
    def properties(self) -> dict:
        """The deviceprop JSON as a dict (a fresh copy)."""
        return json.loads(self.deviceprop_json)

    @property
    def device_name(self) -> str:
        """The GPU's name as cuDNN recorded it (``deviceName``), e.g. "NVIDIA H200"."""
        return str(self.properties.get("deviceName", "unknown device"))

    @property
    def sm_count(self) -> int | None:
        """The GPU's multiprocessor count (``multiProcessorCount``); None if the JSON lacks it."""
        v = self.properties.get("multiProcessorCount")
        return int(v) if v is not None else None

    @property
    def compute_capability(self) -> tuple | None:
        """(major, minor) from ``deviceVer`` (900 -> (9, 0))."""
        v = self.properties.get("deviceVer")
        return None if v is None else (int(v) // 100, int(v) % 100 // 10)

    @property
    def cudnn_version_string(self) -> str:
        """The cuDNN version that wrote the profile as "MAJOR.MINOR.PATCH" (e.g. "9.19.0")."""
        return format_version(self.cudnn_version)

    def __repr__(self):
        return (f"DeviceProfile({self.device_name!r}, cuDNN {self.cudnn_version_string}, "
                f"{self.sm_count} SMs, source={self.source!r})")

    # -- constructors ---------------------------------------------------------------------------------
    @classmethod
    def from_json(cls, text, cudnn_version=None, *, source=None, allow_version_mismatch=False) -> "DeviceProfile":
        """From JSON text: our wrapped format or cuDNN's raw deviceprop JSON (then give ``cudnn_version``)."""
        return cls._from_text(text, cudnn_version, source, allow_version_mismatch)

    @classmethod
    def _from_text(cls, text, cudnn_version, source, allow_version_mismatch, *, raw_version=None):
        """``from_json``; ``raw_version`` (a file name's) serves a raw deviceprop JSON given no ``cudnn_version``."""
        what = source or "the device profile"
        if isinstance(text, (bytes, bytearray, memoryview)):
            try:
                text = bytes(text).decode("utf-8")
            except UnicodeDecodeError as e:
                raise DeviceProfileError(f"{what}: not UTF-8 text ({e.reason} at byte {e.start})") from None
        if not isinstance(text, str):
            raise TypeError(f"text: expected JSON text (str or bytes), not {type(text).__name__}")
        if len(text) > MAX_PROFILE_BYTES:
            raise DeviceProfileError(f"{what}: {len(text)} characters; a device profile is about 1 KB")
        try:
            data = json.loads(text)
        except RecursionError:
            raise DeviceProfileError(f"{what}: nested too deeply to be a device profile") from None
        except ValueError as e:
            raise DeviceProfileError(f"{what} is not valid JSON: {e}") from None
        if isinstance(data, dict) and data.get("format") == FORMAT:
            return cls._from_wrapped(data, cudnn_version, source, allow_version_mismatch)
        if cudnn_version is None:
            cudnn_version = raw_version
        if cudnn_version is None:
            raise DeviceProfileError(
                f"{source or 'this raw cuDNN deviceprop JSON'} does not record which cuDNN version wrote it; "
                "pass cudnn_version= (e.g. cudnn_version=91900 or '9.19.0'), or name the file "
                "<name>_deviceprop_cudnn<MMmmpp>.json (e.g. h200_deviceprop_cudnn91900.json)")
        return cls(deviceprop_json=text, cudnn_version=cudnn_version, source=source,
                   allow_version_mismatch=allow_version_mismatch)

    @classmethod
    def _from_wrapped(cls, data, cudnn_version, source, allow_version_mismatch):
        fmt_version = data.get("format_version", 1)
        if isinstance(fmt_version, bool) or not isinstance(fmt_version, int):
            raise DeviceProfileError(f"{source or 'the device profile'}: format_version must be an int, not "
                                     f"{fmt_version!r}")
        if fmt_version > FORMAT_VERSION:
            raise DeviceProfileError(f"{source or 'the device profile'} has format_version {fmt_version}; this "
                                     f"cudnn-backend reads up to {FORMAT_VERSION}")
        raw = data.get("deviceprop")
        if not isinstance(raw, (str, dict)):
            raise DeviceProfileError(f"{source or 'the device profile'}: 'deviceprop' must be the deviceprop JSON "
                                     f"(an object), not {type(raw).__name__}")
        text = raw if isinstance(raw, str) else json.dumps(raw, separators=(",", ":"))
        version = data.get("cudnn_version") if cudnn_version is None else cudnn_version
        if version is None:
            raise DeviceProfileError(f"{source or 'the device profile'} records no cudnn_version; pass cudnn_version=")
        return cls(deviceprop_json=text, cudnn_version=version, source=data.get("source") or source,
                   allow_version_mismatch=allow_version_mismatch)

    @classmethod
    def load(cls, path, cudnn_version=None, *, allow_version_mismatch=False) -> "DeviceProfile":
        """Read a profile file: ours (``save``) or a raw cuDNN deviceprop JSON.

        For a raw JSON the cuDNN version comes from ``cudnn_version=`` or else from a file name
        ending in ``_cudnnMMmmpp.json`` (``h200_deviceprop_cudnn91900.json`` -> 9.19.0).
        """
        path = file_path(path)
        try:
            if path.stat().st_size > MAX_PROFILE_BYTES:
                raise DeviceProfileError(f"{str(path)!r} is {path.stat().st_size} bytes; a device profile is about 1 KB")
            raw = path.read_bytes()
        except OSError as e:
            raise DeviceProfileError(f"cannot read device profile {str(path)!r}: {e}") from None
        return cls._from_text(raw, cudnn_version, str(path), allow_version_mismatch,
                              raw_version=version_from_filename(path))

    @classmethod
    def bundled(cls, name="h200", cudnn_version=None, *, allow_version_mismatch=False) -> "DeviceProfile":
        """A profile shipped with the package (``cudnn_backend/data/<name>_deviceprop_cudnn*.json``).

        With several versions of one device, the one matching the loaded cuDNN (or ``cudnn_version``)
        is chosen.
        """
        found = {}
        for p in sorted(DATA_DIR.glob("*_deviceprop_cudnn*.json")):
            m = _BUNDLED.match(p.name)
            if m:
                found.setdefault(m.group("name").lower(), {})[int(m.group("version"))] = p
        key = str(name).lower()
        if key not in found:
            raise DeviceProfileError(f"no bundled device profile {name!r}; bundled: {', '.join(sorted(found)) or 'none'}")
        versions = found[key]
        want = parse_version(cudnn_version) if cudnn_version is not None else None
        if want is None:
            loaded = loaded_version()
            match = [v for v in versions if loaded is not None and versions_compatible(v, loaded)]
            chosen = max(match) if match else max(versions)
        else:
            if want not in versions:
                raise DeviceProfileError(f"no bundled {name!r} profile for cuDNN {format_version(want)}; bundled "
                                         f"versions: {', '.join(format_version(v) for v in sorted(versions))}")
            chosen = want
        return cls.load(versions[chosen], chosen, allow_version_mismatch=allow_version_mismatch)

    @classmethod
    def capture(cls, handle_or_device=None) -> "DeviceProfile":
        """The profile of a real GPU: a ``Handle``, a CUDA device ordinal, or None (device 0). Needs a GPU.

        Builds a ``DEVICEPROP`` descriptor with the handle or the device id, finalizes it and reads its
        JSON representation; the cuDNN version is the loaded one.
        """
        if not _device.gpu_available():
            raise DeviceProfileError("DeviceProfile.capture needs a CUDA GPU and its driver; none is loaded here "
                                     "(the no-device stand-in is in use). Capture the profile on the GPU machine, "
                                     "save() it, and load() it here.")
        dp = DeviceProp()
        if isinstance(handle_or_device, Handle):
            if handle_or_device.closed:
                raise ValueError("DeviceProfile.capture: the Handle is closed")
            # the handle alone: cuDNN 9.19 refuses DEVICE_ID once HANDLE is set ("fromSerialization || initialized")
            dp.set_keyword("handle", handle_or_device)
            device = handle_or_device.device
            if device is None:
                device = _current_device()
            source = f"captured from a Handle (device {device if device is not None else 'current'})"
        elif handle_or_device is None or (isinstance(handle_or_device, int) and not isinstance(handle_or_device, bool)):
            device = 0 if handle_or_device is None else int(handle_or_device)
            if device < 0:
                raise ValueError(f"DeviceProfile.capture: device ordinal must be >= 0, not {device}")
            dp.set_keyword("device_id", device)
            source = f"captured from CUDA device {device}"
        else:
            raise TypeError(f"DeviceProfile.capture takes a cudnn_backend.Handle, a CUDA device ordinal or None, "
                            f"not {type(handle_or_device).__name__}")
        dp.finalize()
        text = dp.get_keyword("json_representation")
        if not text:
            raise DeviceProfileError("cuDNN returned an empty CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION")
        profile = cls(deviceprop_json=text, cudnn_version=loaded_version(), source=source)
        profile._descriptor_cache = dp
        return profile

    # -- files ----------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The profile as our file format's plain data (what ``save`` writes and ``load`` reads)."""
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "device_name": self.device_name,
            "cudnn_version": self.cudnn_version,
            "cudnn_version_string": self.cudnn_version_string if self.cudnn_version is not None else None,
            "source": self.source,
            "deviceprop": json.loads(self.deviceprop_json),
        }

    def save(self, path) -> pathlib.Path:
        """Write our JSON format (device name, cuDNN version, the deviceprop JSON); returns the path."""
        if self.cudnn_version is None:
            raise DeviceProfileError("cannot save a profile whose cuDNN version is unknown; set cudnn_version first")
        path = file_path(path)
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
        return path

    # -- use ------------------------------------------------------------------------------------------
    def check_version(self, loaded=None, allow_version_mismatch=None) -> None:
        """Raise DeviceProfileVersionError unless the profile's cuDNN MAJOR.MINOR is the loaded one."""
        allow = self.allow_version_mismatch if allow_version_mismatch is None else allow_version_mismatch
        if allow:
            return
        loaded = loaded_version() if loaded is None else parse_version(loaded, "loaded")
        if self.cudnn_version is None:
            raise DeviceProfileVersionError(
                f"the device profile for {self.device_name} does not say which cuDNN version wrote it; the loaded "
                f"cuDNN is {format_version(loaded)}. Set cudnn_version, or pass allow_version_mismatch=True.",
                None, loaded)
        if not versions_compatible(self.cudnn_version, loaded):
            raise DeviceProfileVersionError(
                f"the device profile for {self.device_name} ({self.source or 'in memory'}) was written by cuDNN "
                f"{format_version(self.cudnn_version)}, but the loaded cuDNN is {format_version(loaded)}: cuDNN "
                f"refuses or misreads device profiles of another version. Capture the profile again with cuDNN "
                f"{format_version(loaded)} (DeviceProfile.capture on the GPU machine), or, at your own risk, pass "
                f"allow_version_mismatch=True.", self.cudnn_version, loaded)

    def descriptor(self, allow_version_mismatch=None, *, fresh=False):
        """A finalized ``DeviceProp`` descriptor from the JSON (cached; ``fresh=True`` for a new one)."""
        self.check_version(allow_version_mismatch=allow_version_mismatch)
        with self._lock:
            if self._descriptor_cache is not None and not fresh and not self._descriptor_cache.closed:
                return self._descriptor_cache
            dp = DeviceProp(json_representation=self.deviceprop_json)
            dp.finalize()
            _PROFILE_OF[dp] = self  # the profile this descriptor was made from (profile_of)
            if not fresh:
                self._descriptor_cache = dp
            return dp


def _current_device():
    try:
        from cuda.bindings import runtime as cudart
    except ImportError:
        return None
    try:
        err, dev = cudart.cudaGetDevice()
    except Exception:  # pragma: no cover
        return None
    return int(dev) if int(err) == 0 else None


def as_deviceprop(device_profile, allow_version_mismatch=None):
    """Resolve what users pass as ``device_profile=`` to a finalized DeviceProp descriptor (or None).

    Accepts a ``DeviceProfile``, a finalized ``CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR``, the name of a
    bundled profile (``"h200"``), or the path of a profile file.
    """
    if device_profile is None:
        return None
    if isinstance(device_profile, DeviceProfile):
        return device_profile.descriptor(allow_version_mismatch)
    if isinstance(device_profile, Descriptor):
        if device_profile.descriptor_type != DescriptorType.CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR:
            raise TypeError(f"device_profile must be a DeviceProfile or a CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, not a "
                            f"{device_profile.descriptor_type.name}")
        if not device_profile.finalized:
            raise ValueError("device_profile: the CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR is not finalized; finalize it first")
        return device_profile
    if isinstance(device_profile, (str, os.PathLike)):
        text = os.fspath(device_profile)
        p = pathlib.Path(text)
        try:
            is_file = p.suffix.lower() == ".json" or p.exists()
        except OSError:  # a name too long for the file system (ENAMETOOLONG), ...: no file, so a bundled name
            is_file = False
        if is_file:
            return DeviceProfile.load(p, allow_version_mismatch=bool(allow_version_mismatch)).descriptor()
        return DeviceProfile.bundled(text, allow_version_mismatch=bool(allow_version_mismatch)).descriptor()
    raise TypeError(f"device_profile must be a DeviceProfile, a DEVICEPROP descriptor, a bundled profile name or a "
                    f"path, not {type(device_profile).__name__}")


def profile_of(deviceprop) -> DeviceProfile | None:
    """The DeviceProfile a DeviceProp descriptor was made from (None if it was made otherwise)."""
    if deviceprop is None:
        return None
    try:
        return _PROFILE_OF.get(deviceprop)
    except TypeError:
        return None


def bundled_profiles() -> list[str]:
    """Names of the bundled profiles (``["h200"]``)."""
    names = set()
    for p in DATA_DIR.glob("*_deviceprop_cudnn*.json"):
        m = _BUNDLED.match(p.name)
        if m:
            names.add(m.group("name").lower())
    return sorted(names)
