"""Engines, knobs and engine configurations.

For an operation graph, every engine cuDNN has (global index ``0 .. ENGINE_GLOBAL_COUNT-1``) can be
built and asked whether it supports the graph, what its numerical and behavior notes are and which
knobs it has (``KnobSpec``: type, minimum, maximum, stride). An engine plus knob values makes a
``Config``; configs also come from heuristics.

    infos = list_engines(graph, device_profile="h200")
    for info in infos:
        print(info.engine_index, info.supported, info.reason, info.numerical_notes, info.knobs)
    cfg = make_config(infos[22], {"TILE_SIZE": 2, "STAGES": 3})
    cfg.engine_index, cfg.knobs     # 22, {KnobType.CUDNN_KNOB_TYPE_TILE_SIZE: 2, ...}

``Config`` is the high-level object: it holds its ``EngineConfig`` descriptor (``cfg.descriptor``),
the operation graph and, for heuristics results, the mode and rank, as h5py's objects hold their
low-level ids. The descriptors themselves keep what cuDNN needs alive (an engine config its engine,
an engine its graph; a config cuDNN made, the heuristics it was read from).
"""
from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from cudnn_backend._bindings.enums import (
    AttributeName,
    AttributeType,
    BehaviorNote,
    DescriptorType,
    KnobType,
    NumericalNote,
)
from cudnn_backend.core import device as _device
from cudnn_backend.core._coerce import as_int, user_sequence
from cudnn_backend.core._descriptor import Descriptor
from cudnn_backend.core._status import check_available, clear_error
from cudnn_backend.core.families._build import flags_checked
from cudnn_backend.core.plain import LiveObject, PlainData, earlier_name
from cudnn_backend.errors import CudnnError, EngineError, NoDeviceError, detached, did_you_mean
from cudnn_backend.runtime.profiles import as_deviceprop
from cudnn_backend.typed import Engine, EngineConfig, KnobChoice

__all__ = [
    "EngineError", "KnobSpec", "EngineInfo", "Config", "knob_type", "numerical_note", "behavior_note", "short_name",
    "knob_space_size", "iter_knob_space", "knob_space", "normalize_knobs", "check_knobs", "user_sequence",
    "engine_count", "make_engine",
    "engine_knobs", "engine_numerical_notes", "engine_behavior_notes", "engine_global_index", "inspect_engine",
    "list_engines", "make_config", "config_from_index", "as_config", "iter_configs", "rejection", "filter_items",
    "filter_engines", "filter_configs", "as_row", "to_rows", "to_dataframe", "reason_of", "check_graph",
    "require_device", "as_operation_graph", "find_config", "target_device", "CONFIG_SEARCH_LIMIT",
]

A = AttributeName
AT = AttributeType
DT = DescriptorType

# cuDNN answers a size query for CUDNN_ATTR_ENGINECFG_KNOB_CHOICES with 0, yet fills the array when
# asked for more: ask for room for every knob type.
MAX_KNOB_CHOICES = max(64, len(KnobType) + 8)
DEFAULT_SPACE_LIMIT = 100_000
UNSET_KNOB = -1  # cudnn-frontend writes -1 for a knob it leaves to the engine; cuDNN 9.19 builds such plans


# ---------------------------------------------------------------------------------------------
# enum coercion
# ---------------------------------------------------------------------------------------------
def _enum(enum_cls, value, prefix, what):
    if isinstance(value, enum_cls):
        return value
    if isinstance(value, str):
        name = value.strip()
        for candidate in (name, name.upper(), prefix + name.upper()):
            if candidate in enum_cls.__members__:
                return enum_cls[candidate]
        short = [m[len(prefix):] for m in enum_cls.__members__ if m.startswith(prefix)]
        hint = did_you_mean(name.upper().removeprefix(prefix), short, listing=False) or \
            f"; e.g. {', '.join(short[:4])}"
        raise ValueError(f"{what}: {value!r} is not a {enum_cls.__name__}{hint}")
    try:
        return enum_cls(as_int(value, what))
    except ValueError:
        raise ValueError(f"{what}: {value!r} is not a valid {enum_cls.__name__}") from None


def knob_type(value) -> KnobType:
    """A KnobType from a member, its C name, its short name (``"TILE_SIZE"``) or its int."""
    return _enum(KnobType, value, "CUDNN_KNOB_TYPE_", "knob type")


def numerical_note(value) -> NumericalNote:
    """A NumericalNote from a member, its C name, its short name (``"TENSOR_CORE"``) or its int."""
    return _enum(NumericalNote, value, "CUDNN_NUMERICAL_NOTE_", "numerical note")


def behavior_note(value) -> BehaviorNote:
    """A BehaviorNote from a member, its C name, its short name (``"RUNTIME_COMPILATION"``) or its int."""
    return _enum(BehaviorNote, value, "CUDNN_BEHAVIOR_NOTE_", "behavior note")


def short_name(member) -> str:
    """CUDNN_KNOB_TYPE_TILE_SIZE -> TILE_SIZE (also for notes and heuristics modes)."""
    name = getattr(member, "name", str(member))
    for prefix in ("CUDNN_KNOB_TYPE_", "CUDNN_NUMERICAL_NOTE_", "CUDNN_BEHAVIOR_NOTE_", "CUDNN_HEUR_MODE_"):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def _as_enum_list(enum_cls, values):
    out = []
    for v in values or ():
        try:
            out.append(enum_cls(int(v)))
        except ValueError:  # newer than our header
            out.append(int(v))
    return tuple(out)


def reason_of(error: BaseException) -> str:
    """cuDNN's own message for a CudnnError (its status name when cuDNN gave none), else the error's text."""
    if isinstance(error, CudnnError):
        status = getattr(error.status, "name", str(error.status))
        msg = (error.cudnn_message or "").strip()
        return f"{status}: {msg}" if msg else status
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text}"


# ---------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------
def check_graph(operation_graph, what="operation_graph"):
    """A finalized CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, or a TypeError/ValueError naming ``what``."""
    if not isinstance(operation_graph, Descriptor) or \
            operation_graph.descriptor_type != DT.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
        got = getattr(operation_graph, "descriptor_type", None)
        raise TypeError(f"{what}: expected a finalized CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR (Graph.build() gives "
                        f"one), not {got.name if got is not None else type(operation_graph).__name__}")
    if operation_graph.closed:
        raise ValueError(f"{what}: the operation graph is closed")
    if not operation_graph.finalized:
        raise ValueError(f"{what}: the operation graph is not finalized; finalize it (or Graph.build()) first")
    return operation_graph


def as_operation_graph(graph, what="operation_graph", handle=None):
    """The finalized operation graph of ``graph``: an OPERATIONGRAPH descriptor (checked as ``check_graph`` does), a
    ``Graph`` (built here with ``handle`` when it is not built yet) or a ``Pattern`` (its graph)."""
    if isinstance(graph, Descriptor):
        return check_graph(graph, what)
    inner = getattr(graph, "graph", None)
    if not hasattr(graph, "op_graph") and inner is not None and hasattr(inner, "op_graph"):  # a Pattern
        graph = inner
    if hasattr(graph, "op_graph") and callable(getattr(graph, "build", None)):  # a Graph
        return check_graph(graph.op_graph if graph.op_graph is not None else graph.build(handle), what)
    return check_graph(graph, what)


def _need_finalized(descriptor, dtype, what):
    if not isinstance(descriptor, Descriptor) or descriptor.descriptor_type != dtype:
        got = getattr(descriptor, "descriptor_type", None)
        raise TypeError(f"{what}: expected a {dtype.name}, not {got.name if got is not None else type(descriptor).__name__}")
    if descriptor.closed:
        raise ValueError(f"{what}: this {dtype.name} is closed")
    if not descriptor.finalized:
        raise ValueError(f"{what}: this {dtype.name} is not finalized; finalize it first")


def require_device(what):
    """Without a GPU every engine is refused (ARCH_MISMATCH) unless a device profile is given."""
    if _device.driver() != "cuda":
        raise NoDeviceError(f"{what}: no GPU is visible here (driver: {_device.driver()}), so cuDNN would refuse every "
                            "engine (CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH). Pass device_profile= (e.g. "
                            "DeviceProfile.bundled('h200') or a profile captured on the target GPU).")


# ---------------------------------------------------------------------------------------------
# knob specs and knob spaces
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KnobSpec(PlainData):
    """One knob of an engine (a KnobInfo descriptor as data): valid values are
    ``minimum, minimum + stride, ..., <= maximum``."""

    knob_type: KnobType
    minimum: int
    maximum: int
    stride: int = 1

    @classmethod
    def from_descriptor(cls, info) -> "KnobSpec":
        """The KnobSpec of a finalized KnobInfo descriptor (type, minimum, maximum, stride)."""
        def one(attr, atype):
            values = info.get(attr, atype)
            return values[0] if values else None

        kt = one(A.CUDNN_ATTR_KNOB_INFO_TYPE, AT.CUDNN_TYPE_KNOB_TYPE)
        lo = one(A.CUDNN_ATTR_KNOB_INFO_MINIMUM_VALUE, AT.CUDNN_TYPE_INT64)
        hi = one(A.CUDNN_ATTR_KNOB_INFO_MAXIMUM_VALUE, AT.CUDNN_TYPE_INT64)
        st = one(A.CUDNN_ATTR_KNOB_INFO_STRIDE, AT.CUDNN_TYPE_INT64)
        try:
            kt = KnobType(int(kt))
        except ValueError:
            kt = int(kt)
        return cls(kt, int(lo), int(hi), int(st) if st else 1)

    @property
    def name(self) -> str:
        """The knob's short name: CUDNN_KNOB_TYPE_TILE_SIZE -> "TILE_SIZE"."""
        return short_name(self.knob_type)

    def values(self) -> range:
        """Every valid value, honouring the stride (empty when maximum < minimum)."""
        return range(self.minimum, self.maximum + 1, max(1, self.stride))

    def __len__(self):
        return len(self.values())

    def __contains__(self, value) -> bool:
        return value in self.values()

    def check(self, value) -> int:
        """``value`` if it is a valid value of this knob (or -1, the engine's default); else EngineError."""
        v = as_int(value, f"knob {self.name}")
        if v == UNSET_KNOB:
            return v  # "unset": the engine's default
        if v not in self.values():
            step = f" in steps of {self.stride}" if self.stride != 1 else ""
            raise EngineError(f"knob {self.name} = {v} is outside its valid values {self.minimum}..{self.maximum}"
                              f"{step} (or -1 for the engine's default)")
        return v

    def to_dict(self) -> dict:
        """The knob as plain data: name, minimum, maximum, stride and how many values."""
        return {"knob": self.name, "minimum": self.minimum, "maximum": self.maximum, "stride": self.stride,
                "count": len(self)}



def _specs_of(knobs) -> tuple:
    if isinstance(knobs, Descriptor):
        return engine_knobs(knobs)
    if isinstance(knobs, EngineInfo):
        return knobs.knobs
    return tuple(knobs)


def knob_space_size(knobs) -> int:
    """How many knob combinations (the product of each knob's value count; 1 for no knobs)."""
    return math.prod(len(s) for s in _specs_of(knobs))


def iter_knob_space(knobs, limit=None, sample=None, seed=None) -> Iterator[dict]:
    """Knob combinations ``{KnobType: value}`` of a knob list, an Engine or an EngineInfo.

    In order (the last knob varies fastest), at most ``limit`` of them; or, with ``sample=n``, n
    distinct combinations drawn uniformly at random (``seed`` for repeatability) without enumerating
    the space, so huge spaces are fine. An engine without knobs has exactly one combination: ``{}``.
    """
    specs = _specs_of(knobs)
    ranges = [s.values() for s in specs]
    total = math.prod(len(r) for r in ranges)
    if limit is not None:
        limit = as_int(limit, "limit", 0)
    if sample is not None:
        n = min(as_int(sample, "sample", 0), total)
        if limit is not None:
            n = min(n, limit)
        rng = random.Random(seed)
        for index in rng.sample(range(total), n):
            yield _decode(specs, ranges, index)
        return
    product = itertools.product(*ranges)
    if limit is not None:
        product = itertools.islice(product, limit)
    for values in product:
        yield {s.knob_type: v for s, v in zip(specs, values)}


def _decode(specs, ranges, index) -> dict:
    """The index-th combination in itertools.product order (mixed radix, last knob fastest)."""
    values = []
    for r in reversed(ranges):
        index, digit = divmod(index, len(r))
        values.append(r[digit])
    values.reverse()
    return {s.knob_type: v for s, v in zip(specs, values)}


MAX_LISTED_SPACE = 1 << 24  # a list of more knob combinations takes gigabytes: iterate, or sample, instead


def knob_space(knobs, limit=DEFAULT_SPACE_LIMIT, sample=None, seed=None) -> list:
    """``iter_knob_space`` as a list; refuses (EngineError) a space larger than ``limit`` (None: no limit but
    ``MAX_LISTED_SPACE``, past which the list would not fit in memory) unless sampling."""
    total = knob_space_size(knobs)
    if limit is not None:
        limit = as_int(limit, "limit", 0)
    cap = MAX_LISTED_SPACE if limit is None else limit
    if sample is None and total > cap:
        what = f"more than limit={limit}" if limit is not None else \
            f"more than a list holds ({MAX_LISTED_SPACE:,}: gigabytes)"
        raise EngineError(f"the knob space has {total:,} combinations, {what}; pass sample=N for a random sample, "
                          f"{'a larger limit, ' if limit is not None else ''}or use iter_knob_space(..., limit=N) "
                          "for the first N")
    return list(iter_knob_space(knobs, None if sample is None else limit, sample, seed))


def _knob_pairs(knobs) -> list:
    """``[(knob, value), ...]`` from None, a mapping or (knob, value) pairs; TypeError/ValueError naming ``knobs``."""
    if knobs is None:
        return []
    if isinstance(knobs, Mapping):
        return list(knobs.items())
    try:
        items = [tuple(user_sequence(p, "knobs: a (knob, value) pair", 2)) for p in user_sequence(knobs, "knobs")]
    except TypeError:
        raise TypeError(f"knobs: expected a mapping {{knob: value}} or (knob, value) pairs, not "
                        f"{type(knobs).__name__}") from None
    if any(len(p) != 2 for p in items):
        raise ValueError("knobs: expected (knob, value) pairs")
    return items


def normalize_knobs(knobs, specs=None, engine_index=None) -> dict:
    """``{KnobType: int}`` from a mapping keyed by KnobType, C names, short names or ints (or pairs).

    ``specs`` (an engine's ``KnobSpec``s): a knob the engine lacks, or a name that is no knob at all, is an
    EngineError listing this engine's knobs (``engine_index`` names it) and suggesting the closest."""
    out = {}
    for k, v in _knob_pairs(knobs):
        kt = _engine_knob(k, specs, engine_index) if specs is not None else knob_type(k)
        check_available(kt.name, "knob")  # e.g. INPUT_TMA_ENABLE, OUTPUT_TMA_ENABLE: cuDNN 9.22+
        if kt in out:
            raise EngineError(f"knob {short_name(kt)} given twice")
        out[kt] = as_int(v, f"knob {short_name(kt)}")
    return out


def check_knobs(knobs, specs, engine_index=None) -> dict:
    """``normalize_knobs`` against an engine's ``KnobSpec``s, each value checked too: one of the knob's values, or -1
    (the engine's default); EngineError naming the knob and its values otherwise."""
    choices = normalize_knobs(knobs, specs, engine_index)
    by_type = {s.knob_type: s for s in specs}
    for kt, v in choices.items():
        by_type[kt].check(v)
    return choices


def _engine_knob(key, specs, engine_index) -> KnobType:
    """The KnobType ``key`` names among an engine's knobs; EngineError listing them (the closest suggested)."""
    names = [s.name for s in specs]
    which = f"engine {engine_index}" if engine_index is not None else "this engine"
    have = f"{which}'s knobs: {', '.join(names)}" if names else f"{which} has no knobs"
    try:
        kt = knob_type(key)
    except (TypeError, ValueError):
        label = key if isinstance(key, str) else repr(key)
        raise EngineError(f"knobs: {label!r} is not a KnobType; {have}"
                          f"{did_you_mean(str(label).upper(), names, listing=False)}") from None
    if kt not in {s.knob_type for s in specs}:
        raise EngineError(f"{which} has no knob {short_name(kt)} ({have}"
                          f"{did_you_mean(short_name(kt), names, listing=False)})")
    return kt


# ---------------------------------------------------------------------------------------------
# engines
# ---------------------------------------------------------------------------------------------
def engine_count(operation_graph) -> int:
    """CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT of a finalized operation graph."""
    check_graph(operation_graph)
    return int(operation_graph.get(A.CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, AT.CUDNN_TYPE_INT64)[0])


def target_device(descriptor, device_profile=None, sm_count_target=None, allow_version_mismatch=None):
    """``descriptor`` (an Engine or EngineHeuristics, not finalized) aimed at a GPU: its device profile's DEVICEPROP
    (none: the handle's GPU) and an SM count to stay within; returns it."""
    dp = as_deviceprop(device_profile, allow_version_mismatch)
    if dp is not None:
        descriptor.deviceprop = dp
    if sm_count_target is not None:
        descriptor.sm_count_target = as_int(sm_count_target, "sm_count_target", 1)
    return descriptor


def make_engine(operation_graph, global_index, device_profile=None, *, sm_count_target=None,
                allow_version_mismatch=None, finalize=True):
    """``Engine(operation_graph=g, global_index=i, deviceprop=...)``, finalized (CudnnError when unsupported)."""
    check_graph(operation_graph)
    gi = as_int(global_index, "global_index")
    if gi < 0:  # (past the graph's count: the engine's finalize says so)
        raise EngineError(f"global_index: engine {gi} is out of range: engines are numbered from 0")
    engine = target_device(Engine(operation_graph=operation_graph, global_index=gi), device_profile,
                           sm_count_target, allow_version_mismatch)
    if finalize:
        clear_error()  # a failure reports its own message
        engine.finalize()
    return engine


def engine_knobs(engine) -> tuple:
    """The engine's knobs (CUDNN_ATTR_ENGINE_KNOB_INFO) as KnobSpec tuples."""
    _need_finalized(engine, DT.CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine")
    infos = engine.get(A.CUDNN_ATTR_ENGINE_KNOB_INFO, AT.CUDNN_TYPE_BACKEND_DESCRIPTOR)
    return tuple(KnobSpec.from_descriptor(i) for i in infos)


def engine_numerical_notes(engine) -> tuple:
    """CUDNN_ATTR_ENGINE_NUMERICAL_NOTE of a finalized Engine, as NumericalNote members."""
    _need_finalized(engine, DT.CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine")
    return _as_enum_list(NumericalNote, engine.get(A.CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, AT.CUDNN_TYPE_NUMERICAL_NOTE))


def engine_behavior_notes(engine) -> tuple:
    """CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE of a finalized Engine, as BehaviorNote members."""
    _need_finalized(engine, DT.CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine")
    return _as_enum_list(BehaviorNote, engine.get(A.CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, AT.CUDNN_TYPE_BEHAVIOR_NOTE))


def engine_global_index(engine) -> int:
    """The engine index of a finalized Engine (cuDNN's CUDNN_ATTR_ENGINE_GLOBAL_INDEX)."""
    _need_finalized(engine, DT.CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine")
    value = engine.value_of(A.CUDNN_ATTR_ENGINE_GLOBAL_INDEX)
    if value is not None:
        return int(value)
    return int(engine.get(A.CUDNN_ATTR_ENGINE_GLOBAL_INDEX, AT.CUDNN_TYPE_INT64)[0])


@dataclass
class EngineInfo(PlainData):
    """One engine for one operation graph: supported or not (and why), notes and knobs.

    ``finalized``: cuDNN finalized the engine for this graph and device. ``supported``: it did, and cuDNN accepts at
    least one engine config of it: ``working_knobs`` are that config's ({} when the engine's defaults work; see
    ``find_config``), ``configs_tried`` how many configs cuDNN was asked for. An engine that finalizes but refuses
    every config tried is not supported, and ``reason`` says so (some engines finalize for a graph none of their
    kernels can run: 7 of a matmul's 8 on an H200). ``inspect_engine(..., probe_configs=False)`` asks for no
    config: ``supported`` then only says that the engine finalized.
    """

    engine_index: int
    supported: bool
    reason: str = ""
    status: object = None
    numerical_notes: tuple = ()
    behavior_notes: tuple = ()
    knobs: tuple = ()
    engine: object = field(default=None, repr=False, compare=False)
    error: object = field(default=None, repr=False, compare=False)
    finalized: bool = False
    working_knobs: dict | None = None
    configs_tried: int = 0

    @property
    def runtime_compiled(self) -> bool:
        return BehaviorNote.CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION in self.behavior_notes

    @property
    def knob_space_size(self) -> int:
        return knob_space_size(self.knobs)

    def knob_space(self, limit=None, sample=None, seed=None) -> Iterator[dict]:
        return iter_knob_space(self.knobs, limit, sample, seed)

    def live_engine(self):
        """The finalized Engine descriptor this EngineInfo holds; EngineError where it holds none: an engine cuDNN
        did not finalize, or an EngineInfo copied or unpickled (its live engine stays in the process it came from)."""
        if self.engine is not None:
            return self.engine
        if self.finalized:
            raise EngineError(f"engine {self.engine_index}: this EngineInfo was copied or unpickled, and its live "
                              "engine stayed behind; inspect_engine(graph, index) gives one that holds it")
        raise EngineError(f"engine {self.engine_index} is not supported ({self.reason}); no config")

    @flags_checked
    def config(self, knobs=None, check=True) -> "Config":
        """A Config of this (supported) engine with the given knob values."""
        return make_config(self, knobs, check=check)

    def to_dict(self) -> dict:
        """The engine as plain data: index, supported or why not, notes and knobs."""
        return {
            "engine": self.engine_index,
            "supported": self.supported,
            "reason": self.reason,
            "status": getattr(self.status, "name", self.status),
            "numerical_notes": [short_name(n) for n in self.numerical_notes],
            "behavior_notes": [short_name(n) for n in self.behavior_notes],
            "runtime_compiled": self.runtime_compiled,
            "knobs": {s.name: [s.minimum, s.maximum, s.stride] for s in self.knobs},
            "knob_space_size": self.knob_space_size if self.supported else 0,
            "finalized": self.finalized,
            "working_knobs": None if self.working_knobs is None else {short_name(k): v for k, v in
                                                                      self.working_knobs.items()},
            "configs_tried": self.configs_tried,
        }


    def __getstate__(self):  # plain data: the live descriptors stay behind
        state = dict(self.__dict__)
        state["engine"] = None
        state["error"] = None
        return state


def inspect_engine(operation_graph, global_index, device_profile=None, *, sm_count_target=None,
                   allow_version_mismatch=None, probe_configs=True) -> EngineInfo:
    """Build and finalize one engine; an EngineInfo whether cuDNN supports it or not (see EngineInfo: with
    ``probe_configs`` an engine is supported only when cuDNN accepts one of its configs)."""
    operation_graph = as_operation_graph(operation_graph)
    try:
        engine = make_engine(operation_graph, global_index, device_profile, sm_count_target=sm_count_target,
                             allow_version_mismatch=allow_version_mismatch)
    except CudnnError as e:
        return EngineInfo(as_int(global_index, "global_index"), False, reason_of(e), e.status, error=detached(e))
    return inspect_engine_descriptor(engine, probe_configs=probe_configs)


@flags_checked
def inspect_engine_descriptor(engine, *, probe_configs=True) -> EngineInfo:
    """An EngineInfo of an already finalized Engine (``probe_configs``: whether cuDNN accepts one of its configs,
    by ``find_config``)."""
    info = EngineInfo(engine_global_index(engine), True, numerical_notes=engine_numerical_notes(engine),
                      behavior_notes=engine_behavior_notes(engine), knobs=engine_knobs(engine), engine=engine,
                      finalized=True)
    if not probe_configs:
        return info
    found, tried, error = find_config(engine, specs=info.knobs)
    info.configs_tried = tried
    if found is not None:
        info.working_knobs = found
        return info
    info.supported, info.status, info.error = False, error.status, error
    info.reason = f"{reason_of(error)}: {_no_config_text(tried, info.knob_space_size)}"
    return info


@flags_checked
def list_engines(operation_graph, device_profile=None, *, sm_count_target=None, supported_only=False,
                 allow_version_mismatch=None, probe_configs=True) -> list:
    """An EngineInfo for every global engine index 0..ENGINE_GLOBAL_COUNT-1 of the graph (a finalized operation
    graph, a ``Graph`` or a ``Pattern``); see ``EngineInfo`` for what "supported" means."""
    operation_graph = as_operation_graph(operation_graph)
    if device_profile is not None:
        as_deviceprop(device_profile, allow_version_mismatch)  # version refusal before any engine
    else:
        require_device("list_engines")
    infos = [inspect_engine(operation_graph, i, device_profile, sm_count_target=sm_count_target,
                            allow_version_mismatch=allow_version_mismatch, probe_configs=probe_configs)
             for i in range(engine_count(operation_graph))]
    return [i for i in infos if i.supported] if supported_only else infos


# ---------------------------------------------------------------------------------------------
# engine configs
# ---------------------------------------------------------------------------------------------
class Config(PlainData, LiveObject):
    """An engine configuration: its ``EngineConfig`` descriptor and what it was made for.

    ``engine_index`` and ``knobs`` (``{KnobType: value}``), ``numerical_notes``, ``behavior_notes``,
    ``workspace_size``; ``mode`` and ``rank`` when heuristics proposed it (rank 0 is cuDNN's first
    choice); ``operation_graph`` and ``deviceprop`` it was made for. Its ``descriptor`` can be set
    wherever cuDNN takes an ENGINECFG descriptor. ``denied_by``: the errata rule that denies it (``runtime.errata``;
    set where configs are listed with errata, e.g. ``get_configs``), else None.
    """

    __slots__ = ("descriptor", "operation_graph", "deviceprop", "mode", "rank", "denied_by", "_engine", "_index",
                 "_knobs", "__weakref__")

    def __init__(self, descriptor, operation_graph=None, deviceprop=None, mode=None, rank=None):
        _need_finalized(descriptor, DT.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "descriptor")
        self.descriptor = descriptor
        self.operation_graph = operation_graph
        self.deviceprop = deviceprop
        self.mode = mode
        self.rank = rank
        self.denied_by = None
        self._engine = None
        self._index = None
        self._knobs = None

    @property
    def engine(self):
        """The config's Engine descriptor: the one set on it, or (for configs cuDNN made) read back once."""
        if self._engine is None:
            engine = self.descriptor.engine
            if engine is None:
                raise EngineError("cuDNN returned no CUDNN_ATTR_ENGINECFG_ENGINE for this engine config")
            self._engine = engine
        return self._engine

    @property
    def engine_index(self) -> int:
        """The engine index (cuDNN's CUDNN_ATTR_ENGINE_GLOBAL_INDEX): 0 .. ENGINE_GLOBAL_COUNT - 1."""
        if self._index is None:
            self._index = engine_global_index(self.engine)
        return self._index

    @property
    def knobs(self) -> dict:
        """``{KnobType: value}`` of the knob choices, in cuDNN's order."""
        if self._knobs is None:
            self._knobs = config_knobs(self.descriptor)
        return dict(self._knobs)

    @property
    def numerical_notes(self) -> tuple:
        """The engine's numerical notes (TENSOR_CORE, DOWN_CONVERT_INPUTS, NONDETERMINISTIC, ...)."""
        return engine_numerical_notes(self.engine)

    @property
    def behavior_notes(self) -> tuple:
        """The engine's behavior notes (RUNTIME_COMPILATION, SUPPORTS_CUDA_GRAPH_NATIVE_API, ...)."""
        return engine_behavior_notes(self.engine)

    @property
    def runtime_compiled(self) -> bool:
        """Whether the engine compiles its kernel at plan build (behavior note RUNTIME_COMPILATION)."""
        return BehaviorNote.CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION in self.behavior_notes

    @property
    def workspace_size(self) -> int | None:
        """CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE (cuDNN >= 9.2; None where cuDNN cannot tell)."""
        try:
            return int(self.descriptor.get(A.CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE, AT.CUDNN_TYPE_INT64)[0])
        except (CudnnError, NotImplementedError, IndexError):
            return None

    @property
    def key(self) -> tuple:
        """(engine index, ((knob type value, value), ...)): the config's identity within one graph."""
        return (self.engine_index, tuple(sorted((int(k), v) for k, v in self.knobs.items())))

    def to_dict(self) -> dict:
        """Engine index, knobs, notes, workspace (and mode and rank) as plain data."""
        row = {
            "engine": self.engine_index,
            "knobs": {short_name(k): v for k, v in self.knobs.items()},
            "numerical_notes": [short_name(n) for n in self.numerical_notes],
            "behavior_notes": [short_name(n) for n in self.behavior_notes],
            "workspace_size": self.workspace_size,
        }
        if self.mode is not None:
            row["mode"] = short_name(self.mode)
            row["rank"] = self.rank
        if self.denied_by is not None:
            row["denied_by"] = self.denied_by.name
        return row

    summary = earlier_name("summary")

    _INSTEAD = "config.to_dict(), or (config.engine_index, config.knobs), is its plain data"  # (LiveObject)

    def __repr__(self):
        knobs = ", ".join(f"{short_name(k)}={v}" for k, v in self.knobs.items())
        src = f" from {short_name(self.mode)}#{self.rank}" if self.mode is not None else ""
        denied = f" denied (rule {self.denied_by.name})" if self.denied_by is not None else ""
        return f"<Config engine {self.engine_index} {{{knobs}}}{src}{denied}>"


def config_knobs(descriptor) -> dict:
    """``{KnobType: value}`` of an EngineConfig descriptor's knob choices (read with room for every knob type)."""
    _need_finalized(descriptor, DT.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "config")
    choices = descriptor.get(A.CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, AT.CUDNN_TYPE_BACKEND_DESCRIPTOR,
                             count=MAX_KNOB_CHOICES)
    out = {}
    for c in choices:
        kt = c.get(A.CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, AT.CUDNN_TYPE_KNOB_TYPE)[0]
        v = c.get(A.CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, AT.CUDNN_TYPE_INT64)[0]
        try:
            kt = KnobType(int(kt))
        except ValueError:
            kt = int(kt)
        out[kt] = int(v)
    return out


def as_config(item, what="config") -> Config:
    """A Config from a Config or a finalized EngineConfig descriptor."""
    if isinstance(item, Config):
        return item
    if isinstance(item, Descriptor) and item.descriptor_type == DT.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
        _need_finalized(item, DT.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, what)
        engine = item.engine
        graph = engine.operation_graph if engine is not None else None
        return Config(item, graph, engine.deviceprop if engine is not None else None)
    raise TypeError(f"{what}: expected a Config or a finalized CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, not "
                    f"{type(item).__name__}")


@flags_checked
def make_config(engine, knobs=None, *, check=True, finalize=True, operation_graph=None, deviceprop=None) -> Config:
    """A Config of ``engine`` (a finalized Engine, or an EngineInfo) with ``{knob: value}``.

    Each choice becomes a finalized KnobChoice; knobs not given are left to the engine (its defaults), and -1
    means "the engine's default" too (cudnn-frontend writes it). Some engines have no defaults that suit every
    graph (cuDNN then refuses ``{}`` with NOT_SUPPORTED: SDPA engines whose default KERNEL_CFG does not fit the
    head size, for one), so with no knobs given at all the first values cuDNN accepts are filled in (``find_config``:
    each knob alone, then combinations, at most ``CONFIG_SEARCH_LIMIT`` configs; an EngineInfo's ``working_knobs``
    when it has them) and ``Config.knobs`` says which. ``{}`` fails only for an engine with no config cuDNN accepts
    for this graph (``list_engines`` reports it unsupported): NOT_SUPPORTED, its hint saying so.
    ``check`` validates knob names and values against the engine's KNOB_INFO first (a knob the engine lacks is
    named with the engine's knobs and the closest suggested; cuDNN's own refusal at finalize says only
    NOT_SUPPORTED). ``operation_graph`` / ``deviceprop``: what the Config records it was made for, when the caller
    knows them (an engine read back from a heuristics config answers with cuDNN's copy of the graph, whose tensors
    Python does not know: variant packs by tensor and reference checks need the original).
    """
    known = None
    if isinstance(engine, EngineInfo):
        known = engine.working_knobs
        engine = engine.live_engine()
    _need_finalized(engine, DT.CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine")
    # the knobs as (knob, value) pairs first: a user's object is read once, and never asked its truth
    pairs = _knob_pairs(knobs)
    specs = engine_knobs(engine) if check or not pairs else None
    if check and pairs:
        choices = check_knobs(pairs, specs, engine_global_index(engine))
    else:
        choices = normalize_knobs(pairs)
    if choices or not finalize:
        return Config(_engine_config(engine, choices, finalize), engine.operation_graph if operation_graph is None
                      else operation_graph, engine.deviceprop if deviceprop is None else deviceprop)
    if known:
        choices = dict(known)
    else:
        specs = specs if specs is not None else engine_knobs(engine)  # given as empty pairs, unchecked
        choices, tried, error = find_config(engine, specs=specs)
        if choices is None:
            index = engine_global_index(engine)
            raise type(error)(error.status, error.function, error.descriptor_type, error.attribute,
                              error.cudnn_message, hint=f"engine {index}: {_no_config_text(tried, knob_space_size(specs))}"
                                                        f"; list_engines reports it unsupported")
    return Config(_engine_config(engine, choices, True), engine.operation_graph if operation_graph is None
                  else operation_graph, engine.deviceprop if deviceprop is None else deviceprop)


CONFIG_SEARCH_LIMIT = 512  # engine configs find_config asks cuDNN for (~0.1 ms each offline)


def _engine_config(engine, choices: dict, finalize=True):
    cfg = EngineConfig(engine=engine)
    if choices:
        cfg.knob_choices = [KnobChoice(knob_type=kt, knob_value=v).finalize() for kt, v in choices.items()]
    if finalize:
        clear_error()
        cfg.finalize()
    return cfg


def _knob_candidates(specs) -> Iterator[dict]:
    """The configs find_config tries: the engine's defaults, each knob alone over its values (the others left to
    the engine), then every knob together in ``iter_knob_space`` order."""
    yield {}
    for s in specs:
        for v in s.values():
            yield {s.knob_type: v}
    if len(specs) > 1:
        yield from iter_knob_space(specs)


def find_config(engine, *, specs=None, limit=CONFIG_SEARCH_LIMIT) -> tuple:
    """``(knobs, tried, error)``: the first engine config of ``engine`` (a finalized Engine) cuDNN accepts —
    its defaults (``{}``) first, then each knob alone over its values, then combinations, at most ``limit``
    configs — as ``{KnobType: value}`` (None when none was accepted), how many configs cuDNN was asked for, and
    its last refusal (None when the first worked)."""
    specs = engine_knobs(engine) if specs is None else tuple(specs)
    seen, tried, error = set(), 0, None
    for knobs in _knob_candidates(specs):
        key = tuple(sorted((int(k), v) for k, v in knobs.items()))
        if key in seen:
            continue
        if tried >= limit:
            break
        seen.add(key)
        tried += 1
        try:
            _engine_config(engine, knobs)
        except CudnnError as e:
            error = detached(e)
            continue
        return knobs, tried, error
    return None, tried, error


def _no_config_text(tried, space) -> str:
    """Why an engine that finalized is not supported (the same words for every such engine up to the parentheses,
    so tables can group them)."""
    if tried == 1:
        what = "its only config: it has no knobs"
    elif tried < CONFIG_SEARCH_LIMIT:  # find_config ran out of candidates: every combination was refused
        what = f"all {tried:,} configs tried: its defaults, each knob alone, all {space:,} knob combinations"
    else:
        what = f"its defaults and {tried - 1:,} other configs; its knob space has {space:,} combinations"
    return f"the engine finalizes, but cuDNN accepts none of its configs for this graph (refused {what})"


def config_from_index(operation_graph, global_index, knobs=None, device_profile=None, *, sm_count_target=None,
                      check=True, allow_version_mismatch=None) -> Config:
    """Engine ``global_index`` of the graph with the given knobs, as a finalized Config."""
    engine = make_engine(operation_graph, global_index, device_profile, sm_count_target=sm_count_target,
                         allow_version_mismatch=allow_version_mismatch)
    return make_config(engine, knobs, check=check)


@flags_checked
def iter_configs(engine, limit=None, sample=None, seed=None, *, skip_unsupported=True) -> Iterator[Config]:
    """Configs over an engine's knob space (``iter_knob_space``'s order, limit, sampling).

    cuDNN accepts only some combinations; those it refuses are skipped (or raise with
    ``skip_unsupported=False``). ``limit``/``sample`` count combinations tried, not configs made.
    """
    if isinstance(engine, EngineInfo):
        engine = engine.live_engine()
    _need_finalized(engine, DT.CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine")
    for knobs in iter_knob_space(engine, limit, sample, seed):
        try:
            yield make_config(engine, knobs, check=False)
        except CudnnError:
            if not skip_unsupported:
                raise


# ---------------------------------------------------------------------------------------------
# filters
# ---------------------------------------------------------------------------------------------
def _notes_of(item):
    """(numerical notes, behavior notes, workspace or None) of an EngineInfo, Engine, Config or plan."""
    if isinstance(item, EngineInfo):
        return set(item.numerical_notes), set(item.behavior_notes), None
    if isinstance(item, Config):
        return set(item.numerical_notes), set(item.behavior_notes), item.workspace_size
    if isinstance(item, Descriptor):
        if item.descriptor_type == DT.CUDNN_BACKEND_ENGINE_DESCRIPTOR:
            return set(engine_numerical_notes(item)), set(engine_behavior_notes(item)), None
        if item.descriptor_type == DT.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
            return _notes_of(as_config(item))
    notes = getattr(item, "numerical_notes", None)
    if notes is not None and hasattr(item, "behavior_notes"):  # a plan
        return set(notes), set(item.behavior_notes), getattr(item, "workspace_size", None)
    raise TypeError(f"cannot filter a {type(item).__name__}: expected EngineInfo, Engine, Config or Plan")


def _listify(values, what="notes"):
    if values is None:
        return ()
    if isinstance(values, (str, int)) and not isinstance(values, bool):
        return (values,)
    return tuple(user_sequence(values, what, 256))


def rejection(item, *, require_numerical=(), exclude_numerical=(), require_behavior=(), exclude_behavior=(),
              max_workspace=None) -> str | None:
    """Why ``item`` fails the filters (None when it passes). Notes by member, C name or short name."""
    if isinstance(item, EngineInfo) and not item.supported:
        return f"engine {item.engine_index} is not supported: {item.reason}"
    if max_workspace is not None:
        max_workspace = as_int(max_workspace, "max_workspace", 0)
    num, beh, ws = _notes_of(item)
    for what, wanted, convert, have, required in (
            ("numerical", require_numerical, numerical_note, num, True),
            ("numerical", exclude_numerical, numerical_note, num, False),
            ("behavior", require_behavior, behavior_note, beh, True),
            ("behavior", exclude_behavior, behavior_note, beh, False)):
        for n in map(convert, _listify(wanted, f"{'require' if required else 'exclude'}_{what}")):
            if (n in have) != required:
                return (f"lacks {what} note {short_name(n)}" if required else
                        f"has excluded {what} note {short_name(n)}")
    if max_workspace is not None and ws is not None and ws > max_workspace:
        return f"workspace {ws} bytes exceeds max_workspace={max_workspace}"
    return None


def filter_items(items: Iterable, *, require_numerical=(), exclude_numerical=(), require_behavior=(),
                 exclude_behavior=(), max_workspace=None, supported_only=True) -> list:
    """The EngineInfos / Engines / Configs / plans that pass every filter, order kept.

    ``require_*``/``exclude_*`` take notes (members, C names or short names like ``"TENSOR_CORE"``,
    ``"NONDETERMINISTIC"``, ``"RUNTIME_COMPILATION"``); ``max_workspace`` (bytes) applies where the
    workspace is known (configs, plans). Unsupported EngineInfos are dropped unless ``supported_only=False``.
    """
    out = []
    for item in items:
        if isinstance(item, EngineInfo) and not item.supported:
            if not supported_only:
                out.append(item)
            continue
        if rejection(item, require_numerical=require_numerical, exclude_numerical=exclude_numerical,
                     require_behavior=require_behavior, exclude_behavior=exclude_behavior,
                     max_workspace=max_workspace) is None:
            out.append(item)
    return out


filter_engines = filter_items
filter_configs = filter_items


# ---------------------------------------------------------------------------------------------
# rows and DataFrames
# ---------------------------------------------------------------------------------------------
def as_row(item) -> dict:
    """One plain dict for an EngineInfo, KnobSpec, Config, plan or anything with to_dict()."""
    if isinstance(item, Mapping):
        return dict(item)
    if isinstance(item, Descriptor):
        if item.descriptor_type == DT.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
            return as_config(item).to_dict()
        if item.descriptor_type == DT.CUDNN_BACKEND_ENGINE_DESCRIPTOR:
            return inspect_engine_descriptor(item).to_dict()
        raise TypeError(f"cannot make a row of a {item.descriptor_type.name}")
    fn = getattr(item, "to_dict", None)
    if callable(fn):
        return fn()
    raise TypeError(f"cannot make a row of a {type(item).__name__}")


def to_rows(items: Iterable) -> list:
    """A list of plain dicts, one per item (see ``as_row``)."""
    return [as_row(i) for i in items]


def to_dataframe(items: Iterable):
    """A pandas DataFrame of ``to_rows(items)`` (pandas is optional: ImportError says how to get it)."""
    try:
        import pandas as pd  # optional dependency
    except ImportError:
        raise ImportError("to_dataframe needs pandas, which is optional: pip install pandas "
                          "(to_rows gives the same data as a list of dicts)") from None
    return pd.DataFrame(to_rows(items))

