"""Device profiles: a GPU's properties as cuDNN describes them, for heuristics and plans without the GPU.

cuDNN (>= 9.8) can describe a device as JSON (``CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION`` of a
``CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR``) and accept that JSON back in place of the device: engine
heuristics, engines and execution plans then work on a machine with no GPU at all.

A ``DeviceProfile`` is that JSON plus what it does not record itself: the cuDNN release that wrote it
and where it came from. Releases read different members (cuDNN 9.28 requires ``memoryBusWidth``, which
9.19 never wrote; it ignores members it does not know), so a profile is converted for the release that
uses it (``for_release``): a member that release reads and the profile lacks comes from the caller
(``facts=``), else from a bundled capture of the same GPU (``captured_facts``: what that GPU reported to
another release), else, for a member the release requires, from a small table of published GPU facts
(``data/gpu_facts.json``). Published figures can differ from what a GPU reports (the H200 reports a
``memoryBusWidth`` of 6016 bits; NVIDIA publishes 6144), and cuDNN compares some members when it loads a
plan (``plan_identity_members``): a plan built with a profile holding such a member from the
table warns when it is saved (``DeviceProfileIdentityWarning``) that it may be refused on the GPU. Each filled member's
source is kept (``filled``). Members that release does not know are dropped. The captures stay the ground
truth: converted back for the release that captured them they come out byte for byte. A profile that
cannot be converted is refused with ``DeviceProfileVersionError`` naming the missing member and the fix.
It is plain data: it pickles and deep-copies (the finalized descriptor it caches is left behind).

* ``DeviceProfile.capture(handle_or_device)``  on a GPU machine
* ``DeviceProfile.bundled("h200")``            the captures shipped in ``cudnn_backend/data``, for the loaded cuDNN
* ``DeviceProfile.load(path)`` / ``save(path)``  our JSON file, or a raw cuDNN deviceprop JSON
* ``profile.for_release("9.28.1")``            the profile as that release expects it
* ``profile.descriptor()``                     a finalized ``DeviceProp`` for the loaded cuDNN
"""
from __future__ import annotations

import functools
import json
import os
import pathlib
import re
import threading
import weakref
from dataclasses import dataclass, field

from cudnn_backend._bindings._loader import ENV_NODEVICE
from cudnn_backend._bindings.enums import AttributeName, AttributeType, DescriptorType
from cudnn_backend.core import device as _device
from cudnn_backend.core._descriptor import Descriptor
from cudnn_backend.core._handle import Handle
from cudnn_backend.core._logging import cudnn_messages
from cudnn_backend.core.files import file_path, json_text, read_limited, write_whole
from cudnn_backend.core.json_checks import (TABLE_RELEASES, JsonCheckError, check_deviceprop_json,
                                            control_character_at, deviceprop_members, duplicate_key_words, json_error_words,
                                            plan_identity_members, plan_identity_minimums, table_release)
from cudnn_backend.core.versions import (OFFLINE_SINCE, device_words, format_version, loaded_version, parse_version,
                                         versions_compatible)
from cudnn_backend.errors import (CudnnBadParamError, CudnnError, DeviceProfileError, DeviceProfileIdentityWarning,
                                  DeviceProfileVersionError, NoDeviceError, did_you_mean)
from cudnn_backend.runtime import device_facts as _device_facts
from cudnn_backend.typed import DeviceProp

__all__ = ["DeviceProfile", "DeviceProfileError", "DeviceProfileVersionError", "DeviceProfileIdentityWarning",
           "as_deviceprop", "profile_of", "captured_facts", "bundled_profile_of",
           "bundled_profiles", "version_from_filename", "DATA_DIR", "gpu_facts",
           "offline_profiles", "offline_blocked", "release_members", "ReleaseMembers"]

DATA_DIR = pathlib.Path(__file__).resolve().parent.parent / "data"
GPU_FACTS = DATA_DIR / "gpu_facts.json"
FORMAT = "cudnn_backend.device_profile"
FORMAT_VERSION = 1
# the members of our file format (to_dict's): another one, a misspelt "cudnn_verison", would be ignored silently
FORMAT_MEMBERS = ("format", "format_version", "device_name", "cudnn_version", "cudnn_version_string", "source",
                  "deviceprop", "converted_from", "filled", "device_facts")
MAX_PROFILE_BYTES = 1 << 20  # a deviceprop JSON is about 1 KB; a larger file is not one
MAX_SOURCE_CHARS = 4096  # a profile's ``source``: a path or a sentence, printed in headers
# h200_deviceprop_cudnn91900.json: <name>_deviceprop_cudnn<MAJOR*10000 + MINOR*100 + PATCH>.json
_FILE_VERSION = re.compile(r"cudnn(\d{5,6})(?:\D[^/\\]*)?\.json$", re.IGNORECASE)
_BUNDLED = re.compile(r"^(?P<name>.+?)_deviceprop_cudnn(?P<version>\d{5,6})\.json$", re.IGNORECASE)
# cuDNN's log when its JSON reader misses a member or finds another type: the member's name is quoted
_MEMBER_IN_LOG = re.compile(r'convert_child_from_json\(\s*json_object,\s*"([A-Za-z0-9_]+)"')


_PROFILE_OF: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # DeviceProp descriptor -> its profile


@dataclass(frozen=True)
class ReleaseMembers:
    """The deviceprop members cuDNN ``release`` requires and every member it reads (``known``), each in the order
    cuDNN writes them (core.json_checks' tables). A release without a table of its own has ``known`` None: what it
    reads is unknown, so a conversion keeps every member; ``required`` is what the tables on either side require
    (a member it does not read, cuDNN ignores)."""

    release: int
    required: tuple
    known: tuple | None


def release_members(release) -> ReleaseMembers:
    """What cuDNN ``release`` reads in a device profile (see ``ReleaseMembers``)."""
    release = parse_version(release, "release")
    if table_release(release) == release:
        return ReleaseMembers(release, deviceprop_members(release), deviceprop_members(release, required=False))
    # the tables on either side: a member the newer one requires, this release may require (else it ignores it)
    sides = [t for t in TABLE_RELEASES if t < release][-1:] + [t for t in TABLE_RELEASES if t > release][:1]
    return ReleaseMembers(release, tuple(dict.fromkeys(m for t in sides for m in deviceprop_members(t))), None)


def version_from_filename(path) -> int | None:
    """The cuDNN version in a file name like ``h200_deviceprop_cudnn91900.json`` (None when absent)."""
    m = _FILE_VERSION.search(pathlib.Path(path).name)
    return int(m.group(1)) if m else None


def _check_json(text, what, release=None):
    """The deviceprop JSON, checked field by field against ``release``'s table (cuDNN aborts on some values, e.g.
    a 256-byte deviceName)."""
    try:
        return check_deviceprop_json(text, release=release)
    except JsonCheckError as e:
        hint = ""
        if release is not None and e.problem.startswith(("missing member", "unknown member")):
            hint = (f" (as cuDNN {format_version(release)} writes it, the release the profile says wrote it; if "
                    "another release wrote it, name that one: cudnn_version=, or a file name ending in "
                    "_cudnn<MMmmpp>.json)")
        raise DeviceProfileError(f"{what}: {e}{hint}") from None
    except (ValueError, TypeError) as e:
        raise DeviceProfileError(f"{what}: {e}") from None


@functools.lru_cache(maxsize=1)
def _facts_table() -> dict:
    return json.loads(GPU_FACTS.read_text(encoding="utf-8"))


def gpu_facts(device_name, device_ver=None) -> dict:
    """The deviceprop members the table of published GPU facts (``data/gpu_facts.json``) gives for a GPU: those
    of every GPU of its compute capability (``device_ver``, deviceVer: 900 for 9.0), then its own by ``deviceName``
    as cuDNN records it, e.g. ``{"maxThreadsPerBlock": 1024, "memoryBusWidth": 6144}`` for ("NVIDIA H200", 900)."""
    table = _facts_table()
    found = {}
    if device_ver is not None:
        for entry in table["compute_capabilities"]:
            low, high = entry["deviceVer"]
            if low <= device_ver and (high is None or device_ver <= high):
                found.update(entry["members"])
    entry = table["gpus"].get(str(device_name))
    if entry:
        found.update(entry["members"])
    return found


def _published_source(device_name, member) -> str:
    """Where the table of published facts has ``member`` of ``device_name`` from (its entry's source)."""
    table = _facts_table()
    entry = table["gpus"].get(str(device_name))
    if entry and member in entry["members"]:
        return entry["source"]
    return next((e["source"] for e in table["compute_capabilities"] if member in e["members"]), "data/gpu_facts.json")


@functools.lru_cache(maxsize=None)
def captured_facts(device_name) -> dict:
    """What the bundled captures of GPU ``device_name`` (its ``deviceName``) record: {member: (value, the capture
    it comes from)}, a newer capture's value first. These are the values the GPU itself reports, which a conversion
    prefers to published figures (they can differ, and cuDNN compares some of them when it loads a plan)."""
    found = {}
    for path in sorted(DATA_DIR.glob("*_deviceprop_cudnn*.json"), key=version_from_filename, reverse=True):
        m = _BUNDLED.match(path.name)
        if not m:
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        props = data.get("deviceprop", data)
        if props.get("deviceName") != device_name:
            continue
        where = f"the cuDNN {format_version(int(m.group('version')))} capture of {device_name} ({path.name})"
        for member, value in props.items():
            found.setdefault(member, (value, where))
    return found


def _member_help(member) -> str:
    text = _facts_table()["member_help"].get(member)
    return f"{member} ({text})" if text else member


def _check_facts(facts) -> dict:
    if facts is None:
        return {}
    if not isinstance(facts, dict):
        raise TypeError(f"facts: expected a dict of deviceprop members, e.g. {{'memoryBusWidth': 5120}}, not "
                        f"{type(facts).__name__}")
    for k in facts:
        if not isinstance(k, str):
            raise TypeError(f"facts: member names are strings, not {type(k).__name__}")
    return dict(facts)


def _insert_in_order(props: dict, added: dict, order) -> dict:
    """``props`` with ``added`` members placed where cuDNN writes them (``order``), or last if it does not say."""
    out = dict(props)
    for member, value in added.items():
        if member in out or member not in order:
            out[member] = value
            continue
        before = order[:order.index(member)]
        items = list(out.items())
        at = max((i + 1 for i, (k, _) in enumerate(items) if k in before), default=0)
        items.insert(at, (member, value))
        out = dict(items)
    return out


def _no_version(error):
    """``error`` marked as the missing ``cudnn_version`` (``.option``, as ``check_option`` marks a bad option), so
    the command line, which has no such option, says its own fix."""
    error.option = "cudnn_version"
    return error


@dataclass
class DeviceProfile:
    """One GPU's cuDNN device properties (the raw deviceprop JSON) and the cuDNN release that wrote it.

    ``deviceprop_json`` is the raw text of CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION. ``converted_from`` is the
    release of the capture this JSON was converted from (``for_release``; None for a capture). ``device_facts``:
    what cuDNN reads only from the live GPU and its JSON cannot carry (``runtime.device_facts``: the cluster
    occupancy), captured beside it; cuDNN never sees them.

    ``filled`` says where each member a conversion added came from: {member: "given" | "the cuDNN 9.28.1 capture
    of NVIDIA H200 (...)" | "published: <source>"}.

    ``descriptor()`` converts the profile for the loaded cuDNN; ``allow_version_mismatch=True`` hands the JSON to
    it as it is instead (for experts: cuDNN may refuse or misread a profile from another release).
    """

    deviceprop_json: str
    cudnn_version: int | None = None
    source: str | None = None
    allow_version_mismatch: bool = False
    converted_from: int | None = None
    filled: dict = field(default_factory=dict)
    device_facts: dict | None = None
    _descriptor_cache: object = field(default=None, init=False, repr=False, compare=False)
    _descriptor_text: object = field(default=None, init=False, repr=False, compare=False)
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
        for name in ("cudnn_version", "converted_from"):
            if getattr(self, name) is not None:
                try:
                    setattr(self, name, parse_version(getattr(self, name), name))
                except (TypeError, ValueError) as e:
                    raise DeviceProfileError(str(e)) from None
        # checked against the table of the release that wrote it: what a release writes, its table accepts
        self.deviceprop_json = _check_json(self.deviceprop_json, "deviceprop_json", self.cudnn_version)
        parsed = json.loads(self.deviceprop_json)
        if not isinstance(parsed, dict) or not any(k in parsed for k in ("deviceName", "deviceVer", "multiProcessorCount")):
            raise DeviceProfileError("deviceprop_json: not a cuDNN deviceprop JSON "
                                     "(no deviceName/deviceVer/multiProcessorCount keys)")
        if not isinstance(self.allow_version_mismatch, bool):
            raise TypeError("allow_version_mismatch: expected a bool")
        if not isinstance(self.filled, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                        for k, v in self.filled.items()):
            raise DeviceProfileError("filled: expected {member: where its value came from}, strings")
        foreign = [m for m in self.filled if m not in parsed]
        if foreign:  # (origin and plan_risk name these members: each must be one the profile holds)
            raise DeviceProfileError(f"filled: {', '.join(map(repr, foreign[:4]))} "
                                     f"{'is no member' if len(foreign) == 1 else 'are no members'} of the deviceprop")
        if self.source is not None and not isinstance(self.source, str):
            raise TypeError(f"source: expected a str (where the profile came from) or None, not "
                            f"{type(self.source).__name__}")
        if self.source is not None and len(self.source) > MAX_SOURCE_CHARS:
            raise DeviceProfileError(f"source: {len(self.source):,} characters; it says where the profile came from "
                                     f"in at most {MAX_SOURCE_CHARS:,}")
        self.device_facts = _device_facts.check(self.device_facts) or None

    # -- plain data: pickling and copying leave the cached descriptor and the lock behind ---------------
    def __getstate__(self):
        return {"deviceprop_json": self.deviceprop_json, "cudnn_version": self.cudnn_version, "source": self.source,
                "allow_version_mismatch": self.allow_version_mismatch, "converted_from": self.converted_from,
                "filled": dict(self.filled), "device_facts": self.device_facts}

    def __setstate__(self, state):
        self.deviceprop_json = state["deviceprop_json"]
        self.cudnn_version = state["cudnn_version"]
        self.source = state["source"]
        self.allow_version_mismatch = state["allow_version_mismatch"]
        self.converted_from = state.get("converted_from")
        self.filled = dict(state.get("filled", {}))
        self.device_facts = state.get("device_facts")
        self._descriptor_cache = self._descriptor_text = None
        self._lock = threading.Lock()

    def __copy__(self):
        return DeviceProfile(self.deviceprop_json, self.cudnn_version, self.source, self.allow_version_mismatch,
                             self.converted_from, dict(self.filled), self.device_facts)

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

    @property
    def origin(self) -> str:
        """How the JSON came to be: "captured with cuDNN 9.19.0" or "converted for cuDNN 9.28.1 from a cuDNN
        9.19.0 capture", and where each member a conversion filled came from (given by hand, another capture of
        this GPU, published figures)."""
        if self.converted_from is None:
            how = f"captured with cuDNN {self.cudnn_version_string}"
        else:
            how = (f"converted for cuDNN {self.cudnn_version_string} from a cuDNN "
                   f"{format_version(self.converted_from)} capture")
        published = self.published_members
        sources = {}
        for member, where in self.filled.items():
            if member not in published:
                sources.setdefault("given by hand" if where == "given" else f"from {where}", []).append(member)
        for where, members in sources.items():
            how += f"; {', '.join(members)} {where}"
        if published:
            how += f"; {', '.join(published)} from published figures, not a capture"
        return how

    @property
    def given_members(self) -> tuple:
        """The members set by hand (``facts=``, ``profile convert --set``), not read from a capture."""
        return tuple(m for m, where in self.filled.items() if where == "given")

    @property
    def published_members(self) -> tuple:
        """The members a conversion took from the table of published GPU facts (not from a capture)."""
        return tuple(m for m, where in self.filled.items() if where.startswith("published"))

    def plan_target(self, release=None) -> str:
        """Where plans built with this profile load, in words: the GPU, and the driver version cuDNN ``release``
        (default: the one the profile is for) compares, e.g. "NVIDIA H200 with a driver reporting driverVer 13000
        or newer"."""
        release = self.cudnn_version if release is None else release
        compared = plan_identity_members(release) or ()
        driver = self.properties.get("driverVer")
        if "driverVer" not in compared or driver is None:
            return self.device_name
        newer = " or newer" if "driverVer" in plan_identity_minimums(release) else " exactly"
        return f"{self.device_name} with a driver reporting driverVer {driver}{newer}"

    def plan_risk(self, release=None) -> str | None:
        """Why plans built with this profile may be refused on its GPU by cuDNN ``release`` (default: the one the
        profile is for), or None: a member that release compares when it loads a plan (``plan_identity_members``;
        every member where the release was never probed) came from published figures or was set by hand rather
        than read from a capture."""
        release = self.cudnn_version if release is None else release
        compared = plan_identity_members(release) if release is not None else None
        risky = [m for m in (*self.published_members, *self.given_members) if compared is None or m in compared]
        if not risky:
            return None
        values = ", ".join(f"{m} {self.properties.get(m)!r}" for m in risky)
        by_hand = [m for m in risky if m in self.given_members]
        set_by_hand = "were set by hand" if len(risky) > 1 else "was set by hand"
        how = ("came from published figures" if not by_hand else set_by_hand if len(by_hand) == len(risky)
               else "came from published figures or were set by hand")
        return (f"the {self.device_name} profile's {values} {how}, not from a capture; "
                f"cuDNN {format_version(release)} compares {'them' if len(risky) > 1 else 'it'} when it loads a plan, "
                f"so plans built with this profile may be refused on that GPU "
                f"(CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH) if it reports another value. Capture the profile on "
                f"that GPU with this cuDNN (`cudnn-backend profile capture`) for plans that load")

    def __repr__(self):
        return (f"DeviceProfile({self.device_name!r}, cuDNN {self.cudnn_version_string}, "
                f"{self.sm_count} SMs, source={self.source!r}"
                + (f", converted_from={format_version(self.converted_from)!r}" if self.converted_from else "") + ")")

    # -- constructors ---------------------------------------------------------------------------------
    @classmethod
    def from_json(cls, text, cudnn_version=None, *, source=None, allow_version_mismatch=False) -> "DeviceProfile":
        """From JSON text: our wrapped format or cuDNN's raw deviceprop JSON (then give ``cudnn_version``)."""
        return cls._from_text(text, cudnn_version, source, allow_version_mismatch)

    @classmethod
    def _from_text(cls, text, cudnn_version, source, allow_version_mismatch, *, raw_version=None):
        """``from_json``; ``raw_version`` (a file name's) serves a raw deviceprop JSON given no ``cudnn_version``."""
        what = source or "the device profile"
        try:
            text = json_text(text, "text", "device profile JSON")
        except ValueError as e:  # (a TypeError, for another type, passes as it is)
            raise DeviceProfileError(f"{what}: {str(e).partition(': ')[2]}") from None
        if len(text) > MAX_PROFILE_BYTES:
            raise DeviceProfileError(f"{what}: {len(text)} characters; a device profile is about 1 KB")
        try:
            data = json.loads(text)
        except RecursionError:
            raise DeviceProfileError(f"{what}: nested too deeply to be a device profile") from None
        except ValueError as e:
            raise DeviceProfileError(f"{what} is not valid JSON: {json_error_words(e)}") from None
        try:  # (the raw deviceprop JSON's own check finds them in it)
            duplicate = duplicate_key_words(text) if isinstance(data, dict) and data.get("format") == FORMAT else None
        except RecursionError:
            raise DeviceProfileError(f"{what}: nested too deeply to be a device profile") from None
        if duplicate is not None:
            raise DeviceProfileError(f"{what}: {duplicate}")
        if isinstance(data, dict) and data.get("format") == FORMAT:
            return cls._from_wrapped(data, cudnn_version, source, allow_version_mismatch)
        if isinstance(data, dict) and "format" in data:  # (cuDNN's raw deviceprop JSON has no such member)
            raise DeviceProfileError(f"{what}: format {data['format']!r} is not this package's device profile format "
                                     f"({FORMAT!r}) nor cuDNN's raw deviceprop JSON")
        if cudnn_version is None:
            cudnn_version = raw_version
        # no version, and no device profile at all: asking for its version would mislead
        if cudnn_version is None and (not isinstance(data, dict) or not {"deviceName", "deviceVer"} & data.keys()):
            kind = "a plan" if isinstance(data, dict) and "operationGraph" in data else \
                f"a JSON {type(data).__name__}" if not isinstance(data, dict) else "an object without them"
            raise DeviceProfileError(f"{source or 'the JSON'} is not a device profile: cuDNN's deviceprop JSON has "
                                     f"deviceName, deviceVer, ..., and this package's wrapped one format {FORMAT!r}; "
                                     f"this is {kind}")
        if cudnn_version is None:
            raise _no_version(DeviceProfileError(
                f"{source or 'this raw cuDNN deviceprop JSON'} does not record which cuDNN version wrote it; "
                "pass cudnn_version= (e.g. cudnn_version=91900 or '9.19.0'), or name the file "
                "<name>_deviceprop_cudnn<MMmmpp>.json (e.g. h200_deviceprop_cudnn91900.json)"))
        return cls(deviceprop_json=text, cudnn_version=cudnn_version, source=source,
                   allow_version_mismatch=allow_version_mismatch)

    @classmethod
    def _from_wrapped(cls, data, cudnn_version, source, allow_version_mismatch):
        fmt_version = data.get("format_version", 1)
        if isinstance(fmt_version, bool) or not isinstance(fmt_version, int):
            raise DeviceProfileError(f"{source or 'the device profile'}: format_version must be an int, not "
                                     f"{fmt_version!r}")
        if fmt_version < 1:
            raise DeviceProfileError(f"{source or 'the device profile'}: format_version {fmt_version} is no version "
                                     f"(1 to {FORMAT_VERSION})")
        if fmt_version > FORMAT_VERSION:
            raise DeviceProfileError(f"{source or 'the device profile'} has format_version {fmt_version}; this "
                                     f"cudnn-backend reads up to {FORMAT_VERSION}")
        unknown = [k for k in data if k not in FORMAT_MEMBERS]
        if unknown:
            raise DeviceProfileError(f"{source or 'the device profile'}: unknown member {unknown[0]!r}"
                                     f"{did_you_mean(str(unknown[0]), FORMAT_MEMBERS)}")
        for member in ("device_name", "source", "cudnn_version_string"):
            if data.get(member) is not None and not isinstance(data[member], str):
                raise DeviceProfileError(f"{source or 'the device profile'}: {member} must be a str, not "
                                         f"{type(data[member]).__name__}")
        where = control_character_at({k: v for k, v in data.items() if k != "deviceprop"})  # (its own check)
        if where is not None:  # (printed by `profile show`: a terminal would run escape sequences)
            raise DeviceProfileError(f"{source or 'the device profile'}: {where[0]}: control character "
                                     f"{where[1]!r} in a profile's text")
        if data.get("cudnn_version_string") is not None and data.get("cudnn_version") is not None:
            try:
                agree = parse_version(data["cudnn_version_string"], "cudnn_version_string") == \
                    parse_version(data["cudnn_version"], "cudnn_version")
            except (TypeError, ValueError) as e:
                raise DeviceProfileError(f"{source or 'the device profile'}: {e}") from None
            if not agree:
                raise DeviceProfileError(f"{source or 'the device profile'}: cudnn_version_string "
                                         f"{data['cudnn_version_string']!r} contradicts cudnn_version "
                                         f"{data['cudnn_version']!r}; edit one (the release that wrote the profile)")
        raw = data.get("deviceprop")
        if not isinstance(raw, (str, dict)):
            raise DeviceProfileError(f"{source or 'the device profile'}: 'deviceprop' must be the deviceprop JSON "
                                     f"(an object), not {type(raw).__name__}")
        text = raw if isinstance(raw, str) else json.dumps(raw, separators=(",", ":"))
        if data.get("device_name") is not None:
            try:
                held = json.loads(text).get("deviceName") if isinstance(raw, str) else raw.get("deviceName")
            except (ValueError, AttributeError, RecursionError):  # (the deviceprop's own check names what is wrong)
                held = None
            if isinstance(held, str) and held != data["device_name"]:
                raise DeviceProfileError(f"{source or 'the device profile'}: device_name {data['device_name']!r} "
                                         f"contradicts the deviceprop's deviceName {held!r}; edit one")
        version = data.get("cudnn_version") if cudnn_version is None else cudnn_version
        if cudnn_version is not None and data.get("cudnn_version") is not None:
            # the file records the release that wrote it: a different one given would be taken silently
            try:
                given, recorded = (parse_version(cudnn_version, "cudnn_version"),
                                   parse_version(data["cudnn_version"], "cudnn_version"))
            except (TypeError, ValueError) as e:
                raise DeviceProfileError(f"{source or 'the device profile'}: {e}") from None
            if given != recorded:
                raise DeviceProfileError(
                    f"cudnn_version={format_version(given)} contradicts {source or 'the device profile'}, which "
                    f"records cuDNN {format_version(recorded)}; leave cudnn_version= out (or convert the profile "
                    "with for_release())")
        if version is None:
            raise _no_version(DeviceProfileError(f"{source or 'the device profile'} records no cudnn_version; pass "
                                                 "cudnn_version="))
        filled = data.get("filled", {})
        if not isinstance(filled, dict):
            raise DeviceProfileError(f"{source or 'the device profile'}: 'filled' must be an object, not "
                                     f"{type(filled).__name__}")
        return cls(deviceprop_json=text, cudnn_version=version, source=data.get("source") or source,
                   allow_version_mismatch=allow_version_mismatch, converted_from=data.get("converted_from"),
                   filled=filled, device_facts=data.get("device_facts"))

    @classmethod
    def load(cls, path, cudnn_version=None, *, allow_version_mismatch=False) -> "DeviceProfile":
        """Read a profile file: ours (``save``) or a raw cuDNN deviceprop JSON.

        For a raw JSON the cuDNN version comes from ``cudnn_version=`` or else from a file name
        ending in ``_cudnnMMmmpp.json`` (``h200_deviceprop_cudnn91900.json`` -> 9.19.0).
        """
        path = file_path(path, "device profile")
        try:
            raw = read_limited(path, MAX_PROFILE_BYTES)
            if raw is None:
                raise DeviceProfileError(f"{str(path)!r} holds more than {MAX_PROFILE_BYTES} bytes; a device profile "
                                         "is about 1 KB")
        except OSError as e:
            raise DeviceProfileError(f"cannot read device profile {str(path)!r}: {e.strerror or e}") from None
        return cls._from_text(raw, cudnn_version, str(path), allow_version_mismatch,
                              raw_version=version_from_filename(path))

    @classmethod
    def bundled(cls, name="h200", cudnn_version=None, *, allow_version_mismatch=False) -> "DeviceProfile":
        """A GPU whose capture ships with the package (``cudnn_backend/data/<name>_deviceprop_cudnn*.json``), for
        cuDNN ``cudnn_version`` (default: the loaded one): the capture of that MAJOR.MINOR if one is bundled, else
        a capture converted (``for_release``): one whose conversion needs no published figure for a member cuDNN
        compares when it loads a plan first, then the nearest release. With ``allow_version_mismatch=True``, the
        nearest capture as it is.
        """
        captures = _bundled_captures()
        key = str(name).lower()
        if key not in captures:
            raise DeviceProfileError(f"no bundled device profile {name!r}; bundled: {', '.join(sorted(captures)) or 'none'}")
        target = loaded_version() if cudnn_version is None else parse_version(cudnn_version, "cudnn_version")
        loaded = {v: cls.load(path, v, allow_version_mismatch=allow_version_mismatch)
                  for v, path in captures[key].items()}
        if allow_version_mismatch:
            chosen = min(loaded, key=lambda v: (not versions_compatible(v, target), abs(v - target)))
            return loaded[chosen]
        converted, refusals = {}, []
        for v, profile in loaded.items():
            try:
                converted[v] = profile.for_release(target)
            except DeviceProfileVersionError as e:
                refusals.append(e)
        if not converted:
            raise refusals[0]
        # the capture of that release first, then one needing no published figure for a member cuDNN compares
        # when it loads a plan, then the nearest release
        chosen = min(converted, key=lambda v: (not versions_compatible(v, target),
                                               converted[v].plan_risk(target) is not None, abs(v - target)))
        return converted[chosen]

    @classmethod
    def from_descriptor(cls, descriptor) -> "DeviceProfile":
        """The profile a finalized ``CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR`` describes (its JSON representation, read
        back), for the loaded cuDNN; the descriptor is the one its plans are built against."""
        if not isinstance(descriptor, Descriptor) or \
                descriptor.descriptor_type != DescriptorType.CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR:
            kind = descriptor.descriptor_type.name if isinstance(descriptor, Descriptor) else type(descriptor).__name__
            raise TypeError(f"device_profile: expected a CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, not {kind}")
        if descriptor.closed or not descriptor.finalized:
            raise ValueError("device_profile: the CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR is "
                             f"{'closed' if descriptor.closed else 'not finalized; finalize it first'}")
        profile = cls._read_back(descriptor, "a DEVICEPROP descriptor given")
        _PROFILE_OF.setdefault(descriptor, profile)  # (plans built against it name its device: profile_of)
        return profile

    @classmethod
    def _read_back(cls, descriptor, source, device_facts=None) -> "DeviceProfile":
        """The profile of a finalized DEVICEPROP descriptor's JSON representation, for the loaded cuDNN, with the
        descriptor kept as its own (``descriptor()`` gives it back while it lives)."""
        text = deviceprop_json(descriptor)
        if not text:
            raise DeviceProfileError("cuDNN returned an empty CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION")
        profile = cls(deviceprop_json=text, cudnn_version=loaded_version(), source=source, device_facts=device_facts)
        profile._descriptor_cache, profile._descriptor_text = weakref.ref(descriptor), profile.deviceprop_json
        return profile

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
        return cls._read_back(dp, source, _device_facts.capture(0 if device is None else device))

    # -- files ----------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The profile as our file format's plain data (what ``save`` writes and ``load`` reads)."""
        data = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "device_name": self.device_name,
            "cudnn_version": self.cudnn_version,
            "cudnn_version_string": self.cudnn_version_string if self.cudnn_version is not None else None,
            "source": self.source,
            "deviceprop": json.loads(self.deviceprop_json),
        }
        if self.converted_from is not None:
            data["converted_from"] = self.converted_from
        if self.filled:
            data["filled"] = dict(self.filled)
        if self.device_facts:
            data["device_facts"] = self.device_facts
        return data

    def save(self, path) -> pathlib.Path:
        """Write our JSON format (device name, cuDNN version, the deviceprop JSON); returns the path."""
        if self.cudnn_version is None:
            raise DeviceProfileError("cannot save a profile whose cuDNN version is unknown; set cudnn_version first")
        return write_whole(path, json.dumps(self.to_dict(), indent=2) + "\n")

    # -- releases ---------------------------------------------------------------------------------------
    def for_release(self, release=None, *, facts=None) -> "DeviceProfile":
        """This profile as cuDNN ``release`` (default: the loaded one) reads it.

        A member ``release`` reads and the profile lacks comes from ``facts`` (deviceprop members, e.g.
        ``{"memoryBusWidth": 5120}``, which also replace members the profile has), else from a bundled capture of
        the same GPU (``captured_facts``), else, if ``release`` requires it, from the table of published GPU facts
        (``gpu_facts``); ``filled`` records which. A member ``release`` does not know is dropped (cuDNN ignores it,
        the JSON checks refuse it). For a release no table describes every member is kept and cuDNN has the last
        word (``descriptor()`` names a member it then asks for). This profile itself comes back when it is
        ``release``'s already. DeviceProfileVersionError names each member no fact gives, and the fix.
        """
        target = loaded_version() if release is None else parse_version(release, "release")
        if target < OFFLINE_SINCE:
            raise DeviceProfileVersionError(
                f"cuDNN {format_version(target)} takes no device profile (CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION "
                f"came with cuDNN {format_version(OFFLINE_SINCE)}): work offline with a newer cuDNN, e.g. `pip install "
                f"-U nvidia-cudnn-cu12` or nvidia-cudnn-cu13", self.cudnn_version, target)
        if self.cudnn_version is None:
            raise DeviceProfileVersionError(
                f"the device profile for {self.device_name} does not say which cuDNN release wrote it, so it cannot "
                f"be converted for cuDNN {format_version(target)}. Set cudnn_version (DeviceProfile(..., "
                f"cudnn_version='9.19.0')), or pass allow_version_mismatch=True to use it as it is.", None, target)
        given = _check_facts(facts)
        members = release_members(target)
        props = self.properties
        captured = captured_facts(self.device_name)
        published = gpu_facts(self.device_name, props.get("deviceVer"))
        added, filled, missing = dict(given), dict(self.filled), []
        filled.update((m, "given") for m in given)
        # what a capture of this GPU holds, for any member the release reads; published figures only where required
        readable = members.known if members.known is not None else members.required
        for member in dict.fromkeys((*members.required, *readable)):
            if member in props or member in added:
                continue
            if member in captured:
                added[member], filled[member] = captured[member]
            elif member in members.required and member in published:
                added[member] = published[member]
                filled[member] = f"published: {_published_source(self.device_name, member)}"
            elif member in members.required and members.known is not None:  # without a table: cuDNN decides
                missing.append(member)
        if missing:
            raise DeviceProfileVersionError(self._missing_message(missing, target), self.cudnn_version, target,
                                            missing)
        dropped = set()
        if members.known is not None:
            foreign = [m for m in given if m not in members.known]
            if foreign:
                raise DeviceProfileError(f"facts: cuDNN {format_version(target)} reads no deviceprop member "
                                         f"{', '.join(foreign)}; it reads {', '.join(members.known)}")
            dropped = {m for m in props if m not in members.known}
        order = members.known if members.known is not None else deviceprop_members(TABLE_RELEASES[-1], required=False)
        converted = _insert_in_order({k: v for k, v in props.items() if k not in dropped}, added, order)
        filled = {m: where for m, where in filled.items() if m in converted}
        # (facts given are checked and recorded even where they equal the profile's: 5120.0 == 5120)
        changed = bool(given) or list(converted.items()) != list(props.items())
        if not changed and self.cudnn_version == target:
            return self
        origin = self.converted_from if self.converted_from is not None else self.cudnn_version
        # cuDNN writes compact JSON: a capture converted back for its own release is itself, byte for byte; one
        # whose members were filled on the way (dropped by a release that does not read them, set by hand) is not
        text = json.dumps(converted, separators=(",", ":")) if changed else self.deviceprop_json
        return DeviceProfile(text, cudnn_version=target, source=self.source,
                             allow_version_mismatch=self.allow_version_mismatch,
                             converted_from=None if origin == target and not filled else origin, filled=filled,
                             device_facts=self.device_facts)

    def missing_problem(self, missing, release) -> str:
        """What is wrong when cuDNN ``release`` requires ``missing`` members this profile lacks (no fix: the
        Python API and the command line each name their own)."""
        return (f"the device profile for {self.device_name} ({self.source or 'in memory'}; {self.origin}) lacks "
                f"{', '.join(_member_help(m) for m in missing)}, which cuDNN {format_version(release)} requires, and "
                f"no published fact for {self.device_name} gives it (cudnn_backend/data/gpu_facts.json)")

    def _missing_message(self, missing, release) -> str:
        example = ", ".join(f"{m!r}: ..." for m in missing)
        return (f"{self.missing_problem(missing, release)}. Give the value: profile.for_release("
                f"'{format_version(release)}', facts={{{example}}}), or capture the profile on that GPU with cuDNN "
                f"{format_version(release)} (DeviceProfile.capture).")

    def check_version(self, loaded=None, allow_version_mismatch=None) -> None:
        """Raise DeviceProfileVersionError unless the profile serves cuDNN ``loaded`` (default: the loaded one): it
        was written by that MAJOR.MINOR or converts for it (``for_release``)."""
        allow = self.allow_version_mismatch if allow_version_mismatch is None else allow_version_mismatch
        if not allow:
            self.for_release(loaded)

    # -- use ------------------------------------------------------------------------------------------
    def descriptor(self, allow_version_mismatch=None, *, fresh=False):
        """A finalized ``DeviceProp`` descriptor for the loaded cuDNN (cached; ``fresh=True`` for a new one): the
        JSON converted for it (``for_release``), or with ``allow_version_mismatch`` the JSON as it is."""
        allow = self.allow_version_mismatch if allow_version_mismatch is None else allow_version_mismatch
        converted = self if allow else self.for_release()
        text = converted.deviceprop_json
        with self._lock:
            # held weakly: _PROFILE_OF maps the descriptor to this profile, and a strong reference back would keep
            # both alive for ever (a descriptor nobody holds is made again, in ~0.2 ms)
            dp = self._descriptor_cache() if self._descriptor_cache is not None else None
            if dp is not None and not fresh and not dp.closed and self._descriptor_text == text:
                return dp
            with cudnn_messages(warnings=False) as messages:
                try:
                    dp = DeviceProp(json_representation=text)
                    dp.finalize()
                except JsonCheckError as e:
                    if not allow or self.cudnn_version in (None, loaded_version()):
                        raise
                    raise self._unconverted(e) from None
                except CudnnError as e:
                    blocked = offline_blocked()
                    if blocked:  # (the machine's setting, not the profile's fault)
                        raise NoDeviceError(f"{e.reason}: {blocked}") from None
                    refusal = self._refusal(e, messages)
                    if refusal is None and isinstance(e, CudnnBadParamError):  # a value past what cuDNN takes
                        refusal = self._bad_value(e, text)
                    if refusal is None:
                        raise
                    raise refusal from None
            _PROFILE_OF[dp] = converted  # the profile cuDNN was given (profile_of)
            if not fresh:
                self._descriptor_cache, self._descriptor_text = weakref.ref(dp), text
        return dp

    def _unconverted(self, error) -> DeviceProfileVersionError:
        """The loaded cuDNN's JSON checks refusing this profile of another release, handed over unconverted."""
        loaded, written = loaded_version(), format_version(self.cudnn_version)
        missing = tuple(re.findall(r'missing member "(\w+)"', str(error)))
        return DeviceProfileVersionError(
            f"the loaded cuDNN ({format_version(loaded)}) does not read this cuDNN {written} profile for "
            f"{self.device_name} as it is: {error}. Leave out allow_version_mismatch= to have it converted for "
            f"cuDNN {format_version(loaded)} (for_release), or capture it with that release",
            self.cudnn_version, loaded, missing)

    def _bad_value(self, error, text) -> DeviceProfileError:
        """cuDNN refusing a value of the JSON (BAD_PARAM: its checks are stricter than the package's, as
        smCountOrigin's range in 9.28) as a DeviceProfileError naming the members its reason names."""
        try:
            members = [m for m in json.loads(text) if re.search(rf"\b{re.escape(m)}\b", error.reason or "")]
        except (ValueError, TypeError):
            members = []
        which = f"member {', '.join(map(repr, members))}" if members else "a value"
        return DeviceProfileError(f"cuDNN {format_version(loaded_version())} refused the device profile for "
                                  f"{self.device_name} ({self.source or 'in memory'}; {self.origin}): {which} is "
                                  "out of its range "
                                  f"({error.reason})")

    def _refusal(self, error, messages) -> DeviceProfileError | None:
        """cuDNN's refusal of the JSON as a DeviceProfileError naming the member its log names (None: another)."""
        log = "\n".join(messages)
        found = _MEMBER_IN_LOG.search(log)
        if found is None:
            return None
        member, loaded = found.group(1), loaded_version()
        if "HasMember" in log:  # a release without a table asks for a member no table knew
            return DeviceProfileVersionError(f"cuDNN {format_version(loaded)} refused the profile: "
                                             + self._missing_message((member,), loaded), self.cudnn_version, loaded,
                                             (member,))
        lead = f"cuDNN {format_version(loaded)} refused the device profile for {self.device_name} ({self.origin})"
        return DeviceProfileError(f"{lead}: it cannot read member {member!r} ({error.reason})")


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


def profile_source(value, what="device_profile"):
    """Where a profile named by ``value`` (a str or path) comes from: ``("bundled", name)`` for a bundled profile's
    name (``"h200"``, any case), whatever the current folder holds (``"./h200"`` names a file there), else
    ``("file", path)`` for a ``.json`` name or an existing path, else ``("bundled", text)`` (the bundled profiles'
    error lists them)."""
    p = file_path(value, what)  # ("" is no name: refused, not the current folder)
    text = os.fspath(value)
    if os.sep in text or "/" in text:
        return "file", p
    if text.lower() in bundled_profiles():
        return "bundled", text.lower()
    try:
        is_file = p.suffix.lower() == ".json" or p.exists()
    except OSError:  # a name too long for the file system (ENAMETOOLONG), ...: no file, so a bundled name
        is_file = False
    return ("file", p) if is_file else ("bundled", str(p))


def as_deviceprop(device_profile, allow_version_mismatch=None):
    """Resolve what users pass as ``device_profile=`` to a finalized DeviceProp descriptor (or None).

    Accepts a ``DeviceProfile``, a finalized ``CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR``, the name of a
    bundled profile (``"h200"``), or the path of a profile file (``profile_source``).
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
        kind, where = profile_source(device_profile)
        if kind == "file":
            return DeviceProfile.load(where, allow_version_mismatch=bool(allow_version_mismatch)).descriptor()
        return DeviceProfile.bundled(where, allow_version_mismatch=bool(allow_version_mismatch)).descriptor()
    raise TypeError(f"device_profile must be a DeviceProfile, a DEVICEPROP descriptor, a bundled profile name or a "
                    f"path, not {type(device_profile).__name__}")


def deviceprop_json(deviceprop) -> str:
    """A finalized DEVICEPROP descriptor's JSON representation, read back."""
    return deviceprop.get(AttributeName.CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, AttributeType.CUDNN_TYPE_CHAR)


def deviceprop_properties(deviceprop) -> dict:
    """The device properties a finalized DEVICEPROP descriptor holds (``deviceprop_json``, parsed)."""
    return json.loads(deviceprop_json(deviceprop) or "{}")


def device_label(properties) -> str:
    """``NVIDIA H200 (SM 9.0, 132 SMs)``: a deviceprop's device, for messages."""
    return device_words(properties.get("deviceName"), properties.get("deviceVer"),
                        properties.get("multiProcessorCount"))


def profile_of(deviceprop) -> DeviceProfile | None:
    """The DeviceProfile a DeviceProp descriptor was made from (None if it was made otherwise)."""
    if deviceprop is None:
        return None
    try:
        return _PROFILE_OF.get(deviceprop)
    except TypeError:
        return None


def _bundled_captures() -> dict:
    """{name: {cuDNN version: path}} of the captures in ``cudnn_backend/data``."""
    found = {}
    for p in sorted(DATA_DIR.glob("*_deviceprop_cudnn*.json")):
        m = _BUNDLED.match(p.name)
        if m:
            found.setdefault(m.group("name").lower(), {})[int(m.group("version"))] = p
    return found


def bundled_profiles() -> list[str]:
    """Names of the bundled profiles (``["h100", "h200"]``)."""
    return sorted(_bundled_captures())


def bundled_profile_of(device_name) -> str | None:
    """The name of the bundled profile of GPU ``device_name`` (its ``deviceName``: "NVIDIA H200" -> "h200")."""
    return next((name for name in bundled_profiles() if _bundled_device_name(name) == device_name), None)


def _bundled_device_name(name) -> str | None:
    path = next(iter(_bundled_captures()[name].values()))
    data = json.loads(path.read_text(encoding="utf-8"))
    return data.get("deviceprop", data).get("deviceName")


def offline_blocked() -> str:
    """Why no device profile can be used in this process ("" where one can): no CUDA driver, and
    ``$CUDNN_BACKEND_NODEVICE=0`` keeping cuDNN off the stand-in that offline work runs on."""
    if _device.driver() == "none" and os.environ.get(ENV_NODEVICE) == "0":
        return (f"this machine has no CUDA driver, and ${ENV_NODEVICE}=0 keeps cuDNN off the package's no-device "
                "stand-in, which offline work with a device profile runs on; unset it")
    return ""


def offline_profiles(release=None) -> dict:
    """{bundled name: how it serves cuDNN ``release`` (default: the loaded one)}: "captured with cuDNN 9.19.0",
    "converted for cuDNN 9.28.1 from a cuDNN 9.19.0 capture", or why it cannot (never raises)."""
    out = {}
    blocked = offline_blocked()
    for name in bundled_profiles():
        if blocked:  # (whether the loaded release needs the stand-in for a profile: asked, not assumed)
            try:
                DeviceProfile.bundled(name, release).descriptor(fresh=True).close()
            except NoDeviceError:
                out[name] = f"unusable here: {blocked}"
                continue
            except (CudnnError, DeviceProfileError, ValueError, TypeError):
                pass  # (said below, as any other profile's trouble)
        try:
            out[name] = DeviceProfile.bundled(name, release).origin
        except (DeviceProfileError, ValueError, TypeError) as e:
            out[name] = f"unavailable: {e}"
    return out
