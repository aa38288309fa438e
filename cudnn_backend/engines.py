"""Engines, knobs and engine configurations as plain data.

For an operation graph, every engine cuDNN has (global index ``0 .. ENGINE_GLOBAL_COUNT-1``) can be
built and asked whether it supports the graph, what its numerical and behavior notes are and which
knobs it has (``KnobSpec``: type, minimum, maximum, stride). An engine plus knob values makes an
``EngineConfig``; a config (from here or from heuristics) reads back its engine index and knobs.

    infos = list_engines(graph, device_profile="h200")
    for info in infos:
        print(info.global_index, info.supported, info.reason, info.numerical_notes, info.knobs)
    cfg = make_config(infos[22].engine, {"TILE_SIZE": 2, "STAGES": 3})
    config_engine_index(cfg), config_knobs(cfg)     # 22, {KnobType.CUDNN_KNOB_TYPE_TILE_SIZE: 2, ...}
    to_rows(infos) / to_dataframe(infos)

Descriptors created here keep references to what they depend on (``attach_refs``): an Engine holds
its operation graph (as a set attribute) and device properties; a config holds its engine; configs
that cuDNN creates (heuristics results, a plan's config) get the graph attached explicitly.
"""
from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from cudnn_backend._descriptor import Descriptor, last_error_string
from cudnn_backend._errors import CudnnBackendError, CudnnError
from cudnn_backend._generated.enums import (
    AttributeName,
    AttributeType,
    BehaviorNote,
    DescriptorType,
    KnobType,
    NumericalNote,
)

A = AttributeName
AT = AttributeType
DT = DescriptorType

# cuDNN answers a size query (requestedElementCount 0) for CUDNN_ATTR_ENGINECFG_KNOB_CHOICES with 0,
# yet fills the array when asked for more: ask for room for every knob type.
MAX_KNOB_CHOICES = max(64, len(KnobType) + 8)
DEFAULT_SPACE_LIMIT = 100_000


class EngineError(CudnnBackendError, ValueError):
    """An engine or engine configuration request that cannot be met (caught before cuDNN is called)."""


# ---------------------------------------------------------------------------------------------
# references kept alive by descriptors cuDNN created
# ---------------------------------------------------------------------------------------------
def attach_refs(descriptor, **refs):
    """Keep Python references on a descriptor (what it depends on in cuDNN); None values are skipped."""
    store = descriptor.__dict__.setdefault("_cb_refs", {})
    for k, v in refs.items():
        if v is not None:
            store[k] = v
    return descriptor


def get_ref(descriptor, name, default=None):
    try:
        return descriptor.__dict__.get("_cb_refs", {}).get(name, default)
    except AttributeError:  # a plain Descriptor (no __dict__)
        return default


def _typed_value(descriptor, keyword):
    """A value set through the typed layer (None for plain Descriptors or unset keywords)."""
    try:
        return descriptor._typed_state["values"].get(keyword)
    except AttributeError:
        return None


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
        raise ValueError(f"{value!r} is not a {enum_cls.__name__} ({what}); e.g. "
                         f"{', '.join(m[len(prefix):] for m in list(enum_cls.__members__)[:4])}")
    if isinstance(value, bool):
        raise TypeError(f"{what}: expected a {enum_cls.__name__}, not bool")
    try:
        return enum_cls(int(value))
    except (TypeError, ValueError):
        raise ValueError(f"{value!r} is not a valid {enum_cls.__name__} ({what})") from None


def knob_type(value) -> KnobType:
    """A KnobType from a member, its C name, its short name (``"TILE_SIZE"``) or its int."""
    return _enum(KnobType, value, "CUDNN_KNOB_TYPE_", "knob type")


def numerical_note(value) -> NumericalNote:
    return _enum(NumericalNote, value, "CUDNN_NUMERICAL_NOTE_", "numerical note")


def behavior_note(value) -> BehaviorNote:
    return _enum(BehaviorNote, value, "CUDNN_BEHAVIOR_NOTE_", "behavior note")


def short_name(member) -> str:
    """CUDNN_KNOB_TYPE_TILE_SIZE -> TILE_SIZE (also for notes)."""
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


# ---------------------------------------------------------------------------------------------
# knob specs and knob spaces
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KnobSpec:
    """One knob of an engine (a KnobInfo descriptor as data): valid values are
    ``minimum, minimum + stride, ..., <= maximum``."""

    knob_type: KnobType
    minimum: int
    maximum: int
    stride: int = 1

    @classmethod
    def from_descriptor(cls, info) -> "KnobSpec":
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
        return short_name(self.knob_type)

    def values(self) -> range:
        """Every valid value, honouring the stride (empty when maximum < minimum)."""
        return range(self.minimum, self.maximum + 1, max(1, self.stride))

    def __len__(self):
        return len(self.values())

    def __contains__(self, value) -> bool:
        return value in self.values()

    def check(self, value) -> int:
        v = int(value)
        if v not in self.values():
            step = f" in steps of {self.stride}" if self.stride != 1 else ""
            raise EngineError(f"knob {self.name} = {v} is outside its valid values {self.minimum}..{self.maximum}{step}")
        return v

    def as_dict(self) -> dict:
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

    In order (the last knob varies fastest), at most ``limit`` of them; or, with ``sample=n``,
    n distinct combinations drawn uniformly at random (``seed`` for repeatability) without
    enumerating the space, so huge spaces are fine. Strides are honoured. An engine without knobs
    has exactly one combination: ``{}``.
    """
    specs = _specs_of(knobs)
    ranges = [s.values() for s in specs]
    total = math.prod(len(r) for r in ranges)
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, not {limit}")
    if sample is not None:
        if sample < 0:
            raise ValueError(f"sample must be >= 0, not {sample}")
        n = min(int(sample), total)
        if limit is not None:
            n = min(n, int(limit))
        rng = random.Random(seed)
        for index in rng.sample(range(total), n):
            yield _decode(specs, ranges, index)
        return
    product = itertools.product(*ranges)
    if limit is not None:
        product = itertools.islice(product, int(limit))
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


def knob_space(knobs, limit=DEFAULT_SPACE_LIMIT, sample=None, seed=None) -> list:
    """``iter_knob_space`` as a list; refuses (EngineError) a space larger than ``limit`` unless sampling."""
    total = knob_space_size(knobs)
    if sample is None and limit is not None and total > limit:
        raise EngineError(f"the knob space has {total} combinations, more than limit={limit}; pass sample=N for a "
                          f"random sample, a larger limit, or use iter_knob_space(..., limit=N) for the first N")
    return list(iter_knob_space(knobs, None if sample is None else limit, sample, seed))


def normalize_knobs(knobs) -> dict:
    """``{KnobType: int}`` from a mapping keyed by KnobType, C names, short names or ints (or pairs)."""
    if knobs is None:
        return {}
    items = knobs.items() if isinstance(knobs, Mapping) else knobs
    out = {}
    for k, v in items:
        kt = knob_type(k)
        if kt in out:
            raise EngineError(f"knob {short_name(kt)} given twice")
        if isinstance(v, bool):
            raise TypeError(f"knob {short_name(kt)}: expected an integer value, not bool")
        out[kt] = int(v)
    return out


# ---------------------------------------------------------------------------------------------
# engines
# ---------------------------------------------------------------------------------------------
def engine_count(operation_graph) -> int:
    """CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT of a finalized operation graph."""
    _check_graph(operation_graph)
    return int(operation_graph.get(A.CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, AT.CUDNN_TYPE_INT64)[0])


def _check_graph(operation_graph):
    if not isinstance(operation_graph, Descriptor) or \
            operation_graph.descriptor_type != DT.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
        raise TypeError(f"expected a CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, not "
                        f"{getattr(operation_graph, 'descriptor_type', type(operation_graph).__name__)!s}")
    if not operation_graph.finalized:
        raise ValueError("the operation graph is not finalized; finalize it (or Graph.build()) first")


def _deviceprop(device_profile, allow_version_mismatch=None):
    from cudnn_backend.profiles import as_deviceprop

    return as_deviceprop(device_profile, allow_version_mismatch)


def make_engine(operation_graph, global_index, device_profile=None, *, sm_count_target=None,
                allow_version_mismatch=None, finalize=True):
    """``Engine(operation_graph=g, global_index=i, deviceprop=...)``, finalized (CudnnError when unsupported)."""
    from cudnn_backend.typed import Engine

    _check_graph(operation_graph)
    count = engine_count(operation_graph)
    gi = int(global_index)
    if not 0 <= gi < count:
        raise EngineError(f"engine global index {gi} is out of range: this graph has engines 0..{count - 1} "
                          f"(CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT = {count})")
    dp = _deviceprop(device_profile, allow_version_mismatch)
    kwargs = {"operation_graph": operation_graph, "global_index": gi}
    if dp is not None:
        kwargs["deviceprop"] = dp
    if sm_count_target is not None:
        kwargs["sm_count_target"] = int(sm_count_target)
    engine = Engine(**kwargs)
    if finalize:
        last_error_string()  # drop a stale message so a failure reports its own
        engine.finalize()
    return engine


def engine_knobs(engine) -> tuple:
    """The engine's knobs (CUDNN_ATTR_ENGINE_KNOB_INFO) as KnobSpec tuples."""
    _need_finalized(engine, DT.CUDNN_BACKEND_ENGINE_DESCRIPTOR)
    infos = engine.get(A.CUDNN_ATTR_ENGINE_KNOB_INFO, AT.CUDNN_TYPE_BACKEND_DESCRIPTOR)
    return tuple(KnobSpec.from_descriptor(i) for i in infos)


def engine_numerical_notes(engine) -> tuple:
    _need_finalized(engine, DT.CUDNN_BACKEND_ENGINE_DESCRIPTOR)
    return _as_enum_list(NumericalNote, engine.get(A.CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, AT.CUDNN_TYPE_NUMERICAL_NOTE))


def engine_behavior_notes(engine) -> tuple:
    _need_finalized(engine, DT.CUDNN_BACKEND_ENGINE_DESCRIPTOR)
    return _as_enum_list(BehaviorNote, engine.get(A.CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, AT.CUDNN_TYPE_BEHAVIOR_NOTE))


def engine_global_index(engine) -> int:
    _need_finalized(engine, DT.CUDNN_BACKEND_ENGINE_DESCRIPTOR)
    return int(engine.get(A.CUDNN_ATTR_ENGINE_GLOBAL_INDEX, AT.CUDNN_TYPE_INT64)[0])


def _need_finalized(descriptor, dtype):
    if not isinstance(descriptor, Descriptor) or descriptor.descriptor_type != dtype:
        raise TypeError(f"expected a {dtype.name}, not "
                        f"{getattr(descriptor, 'descriptor_type', type(descriptor).__name__)!s}")
    if descriptor.closed:
        raise ValueError(f"this {dtype.name} is closed")
    if not descriptor.finalized:
        raise ValueError(f"this {dtype.name} is not finalized; finalize it first")


def _reason(error: BaseException) -> str:
    """cuDNN's own message for a CudnnError (its status name when cuDNN gave none)."""
    if isinstance(error, CudnnError):
        status = getattr(error.status, "name", str(error.status))
        msg = (error.cudnn_message or "").strip()
        where = getattr(error.descriptor_type, "name", None)
        head = f"{status}" + (f" from {error.function} on {where}" if where else f" from {error.function}")
        return f"{head}: {msg}" if msg else head
    return f"{type(error).__name__}: {error}"


@dataclass
class EngineInfo:
    """One engine for one operation graph: supported or not (and cuDNN's reason), notes and knobs."""

    global_index: int
    supported: bool
    reason: str = ""
    status: object = None
    numerical_notes: tuple = ()
    behavior_notes: tuple = ()
    knobs: tuple = ()
    engine: object = field(default=None, repr=False)
    error: object = field(default=None, repr=False)

    @property
    def runtime_compiled(self) -> bool:
        return BehaviorNote.CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION in self.behavior_notes

    @property
    def knob_space_size(self) -> int:
        return knob_space_size(self.knobs)

    def knob_space(self, limit=None, sample=None, seed=None) -> Iterator[dict]:
        return iter_knob_space(self.knobs, limit, sample, seed)

    def config(self, knobs=None, check=True):
        """An EngineConfig of this (supported) engine with the given knob values."""
        if not self.supported or self.engine is None:
            raise EngineError(f"engine {self.global_index} does not support this graph ({self.reason}); "
                              "no config can be made from it")
        return make_config(self.engine, knobs, check=check)

    def as_dict(self) -> dict:
        return {
            "engine": self.global_index,
            "supported": self.supported,
            "reason": self.reason,
            "status": getattr(self.status, "name", self.status),
            "numerical_notes": [short_name(n) for n in self.numerical_notes],
            "behavior_notes": [short_name(n) for n in self.behavior_notes],
            "runtime_compiled": self.runtime_compiled,
            "knobs": {s.name: [s.minimum, s.maximum, s.stride] for s in self.knobs},
            "knob_space_size": self.knob_space_size if self.supported else 0,
        }


def inspect_engine(operation_graph, global_index, device_profile=None, *, sm_count_target=None,
                   allow_version_mismatch=None) -> EngineInfo:
    """Build and finalize one engine; an EngineInfo whether cuDNN supports it or not."""
    try:
        engine = make_engine(operation_graph, global_index, device_profile, sm_count_target=sm_count_target,
                             allow_version_mismatch=allow_version_mismatch)
    except CudnnError as e:
        return EngineInfo(int(global_index), False, _reason(e), e.status, error=e)
    return EngineInfo(
        global_index=int(global_index), supported=True, reason="", status=None,
        numerical_notes=engine_numerical_notes(engine), behavior_notes=engine_behavior_notes(engine),
        knobs=engine_knobs(engine), engine=engine,
    )


def list_engines(operation_graph, device_profile=None, *, sm_count_target=None, supported_only=False,
                 allow_version_mismatch=None) -> list:
    """An EngineInfo for every global engine index 0..ENGINE_GLOBAL_COUNT-1 of the graph."""
    if device_profile is not None:
        _deviceprop(device_profile, allow_version_mismatch)  # version refusal before any engine
    else:
        _require_device("list_engines")
    infos = [inspect_engine(operation_graph, i, device_profile, sm_count_target=sm_count_target,
                            allow_version_mismatch=allow_version_mismatch)
             for i in range(engine_count(operation_graph))]
    return [i for i in infos if i.supported] if supported_only else infos


def _require_device(what):
    """Without a GPU every engine is refused (ARCH_MISMATCH) unless a device profile is given."""
    from cudnn_backend._bindings import _loader
    from cudnn_backend.heuristics import NoDeviceError

    if _loader.load_cudnn().driver != "cuda":
        raise NoDeviceError(f"{what}: no GPU is visible here (driver: {_loader.load_cudnn().driver}), so cuDNN "
                            "would refuse every engine (CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH). Pass "
                            "device_profile= (e.g. DeviceProfile.bundled('h200') or a profile captured on the "
                            "target GPU).")


# ---------------------------------------------------------------------------------------------
# engine configs
# ---------------------------------------------------------------------------------------------
def make_config(engine, knobs=None, *, check=True, finalize=True):
    """An EngineConfig of ``engine`` (a finalized Engine, or an EngineInfo) with ``{knob: value}``.

    Each choice becomes a finalized KnobChoice; the config gets ENGINE and KNOB_CHOICES. Knobs not
    given keep the engine's defaults. ``check`` validates knob types and values against the
    engine's KNOB_INFO first (cuDNN's own refusal at finalize only says NOT_SUPPORTED).
    """
    from cudnn_backend.typed import EngineConfig, KnobChoice

    if isinstance(engine, EngineInfo):
        if engine.engine is None:
            raise EngineError(f"engine {engine.global_index} is not supported ({engine.reason}); no config")
        engine = engine.engine
    _need_finalized(engine, DT.CUDNN_BACKEND_ENGINE_DESCRIPTOR)
    choices = normalize_knobs(knobs)
    if check and choices:
        specs = {s.knob_type: s for s in engine_knobs(engine)}
        for kt, v in choices.items():
            if kt not in specs:
                have = ", ".join(s.name for s in specs.values()) or "none"
                raise EngineError(f"engine {engine_global_index(engine)} has no knob {short_name(kt)} "
                                  f"(its knobs: {have})")
            specs[kt].check(v)
    knob_descs = []
    for kt, v in choices.items():
        kc = KnobChoice(knob_type=kt, knob_value=v)
        kc.finalize()
        knob_descs.append(kc)
    kwargs = {"engine": engine}
    if knob_descs:
        kwargs["knob_choices"] = knob_descs
    cfg = EngineConfig(**kwargs)
    attach_refs(cfg, engine=engine, operation_graph=_engine_graph(engine),
                deviceprop=_first(_typed_value(engine, "deviceprop"), get_ref(engine, "deviceprop")))
    if finalize:
        last_error_string()
        cfg.finalize()
    return cfg


def config_from_index(operation_graph, global_index, knobs=None, device_profile=None, *, sm_count_target=None,
                      check=True, allow_version_mismatch=None):
    """Engine ``global_index`` of the graph with the given knobs, as a finalized EngineConfig."""
    engine = make_engine(operation_graph, global_index, device_profile, sm_count_target=sm_count_target,
                         allow_version_mismatch=allow_version_mismatch)
    return make_config(engine, knobs, check=check)


def _first(*values):
    return next((v for v in values if v is not None), None)


def _engine_graph(engine):
    return _first(_typed_value(engine, "operation_graph"), get_ref(engine, "operation_graph"))


def config_engine(config):
    """The config's Engine: the one set on it, or (for configs cuDNN made) one read back and cached."""
    _need_finalized(config, DT.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
    engine = _first(_typed_value(config, "engine"), get_ref(config, "engine"))
    if engine is None:
        engines = config.get(A.CUDNN_ATTR_ENGINECFG_ENGINE, AT.CUDNN_TYPE_BACKEND_DESCRIPTOR)
        if not engines:
            raise EngineError("cuDNN returned no CUDNN_ATTR_ENGINECFG_ENGINE for this engine config")
        engine = engines[0]
        attach_refs(engine, operation_graph=get_ref(config, "operation_graph"))
        try:
            attach_refs(config, engine=engine)
        except AttributeError:  # a plain Descriptor cannot cache
            pass
    return engine


def config_engine_index(config) -> int:
    """The global index of the config's engine."""
    return engine_global_index(config_engine(config))


def config_knobs(config) -> dict:
    """``{KnobType: value}`` of the config's knob choices, in cuDNN's order."""
    _need_finalized(config, DT.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
    choices = config.get(A.CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, AT.CUDNN_TYPE_BACKEND_DESCRIPTOR,
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


def config_workspace_size(config) -> int | None:
    """CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE (cuDNN >= 9.2; None where cuDNN cannot tell)."""
    _need_finalized(config, DT.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
    try:
        return int(config.get(A.CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE, AT.CUDNN_TYPE_INT64)[0])
    except (CudnnError, NotImplementedError, IndexError):
        return None


def config_summary(config) -> dict:
    """Engine index, knobs (short names), notes and workspace of a config, as plain data."""
    engine = config_engine(config)
    return {
        "engine": engine_global_index(engine),
        "knobs": {short_name(k): v for k, v in config_knobs(config).items()},
        "numerical_notes": [short_name(n) for n in engine_numerical_notes(engine)],
        "behavior_notes": [short_name(n) for n in engine_behavior_notes(engine)],
        "workspace_size": config_workspace_size(config),
    }


def iter_configs(engine, limit=None, sample=None, seed=None, *, skip_unsupported=True) -> Iterator:
    """Finalized EngineConfigs over an engine's knob space (``iter_knob_space``'s order, limit, sampling).

    cuDNN accepts only some combinations; those it refuses are skipped (or raise with
    ``skip_unsupported=False``). ``limit``/``sample`` count combinations tried, not configs made.
    """
    if isinstance(engine, EngineInfo):
        engine = engine.engine
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
    """(numerical notes, behavior notes, workspace or None) of an EngineInfo, Engine, EngineConfig or plan."""
    if isinstance(item, EngineInfo):
        return set(item.numerical_notes), set(item.behavior_notes), None
    if isinstance(item, Descriptor):
        dtype = item.descriptor_type
        if dtype == DT.CUDNN_BACKEND_ENGINE_DESCRIPTOR:
            return set(engine_numerical_notes(item)), set(engine_behavior_notes(item)), None
        if dtype == DT.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
            engine = config_engine(item)
            return (set(engine_numerical_notes(engine)), set(engine_behavior_notes(engine)),
                    config_workspace_size(item))
        if dtype == DT.CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
            from cudnn_backend.plans import plan_engine_config, plan_workspace_size

            cfg = plan_engine_config(item)
            engine = config_engine(cfg)
            return (set(engine_numerical_notes(engine)), set(engine_behavior_notes(engine)),
                    plan_workspace_size(item))
    raise TypeError(f"cannot filter a {type(item).__name__}: expected EngineInfo, Engine, EngineConfig or "
                    f"ExecutionPlan")


def rejection(item, *, require_numerical=(), exclude_numerical=(), require_behavior=(), exclude_behavior=(),
              max_workspace=None) -> str | None:
    """Why ``item`` fails the filters (None when it passes). Notes by member, C name or short name."""
    if isinstance(item, EngineInfo) and not item.supported:
        return f"engine {item.global_index} is not supported: {item.reason}"
    num, beh, ws = _notes_of(item)
    for n in map(numerical_note, _listify(require_numerical)):
        if n not in num:
            return f"lacks numerical note {short_name(n)}"
    for n in map(numerical_note, _listify(exclude_numerical)):
        if n in num:
            return f"has excluded numerical note {short_name(n)}"
    for n in map(behavior_note, _listify(require_behavior)):
        if n not in beh:
            return f"lacks behavior note {short_name(n)}"
    for n in map(behavior_note, _listify(exclude_behavior)):
        if n in beh:
            return f"has excluded behavior note {short_name(n)}"
    if max_workspace is not None and ws is not None and ws > int(max_workspace):
        return f"workspace {ws} bytes exceeds max_workspace={int(max_workspace)}"
    return None


def _listify(values):
    if values is None:
        return ()
    if isinstance(values, (str, int)) and not isinstance(values, bool):
        return (values,)
    return tuple(values)


def filter_items(items: Iterable, *, require_numerical=(), exclude_numerical=(), require_behavior=(),
                 exclude_behavior=(), max_workspace=None, supported_only=True) -> list:
    """The EngineInfos / Engines / EngineConfigs / plans that pass every filter, order kept.

    ``require_*``/``exclude_*`` take notes (members, C names or short names like ``"TENSOR_CORE"``,
    ``"NONDETERMINISTIC"``, ``"RUNTIME_COMPILATION"``); ``max_workspace`` (bytes) applies where the
    workspace is known (configs, plans). Unsupported EngineInfos are dropped unless
    ``supported_only=False``.
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
    """One plain dict for an EngineInfo, KnobSpec, EngineConfig, ExecutionPlan or anything with as_dict()."""
    if isinstance(item, Mapping):
        return dict(item)
    if hasattr(item, "as_dict") and not isinstance(item, Descriptor):
        return item.as_dict()
    if isinstance(item, Descriptor):
        dtype = item.descriptor_type
        if dtype == DT.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
            row = config_summary(item)
            mode = get_ref(item, "heuristics_mode")
            if mode is not None:
                row["mode"] = short_name(mode)
                row["rank"] = get_ref(item, "rank")
            return row
        if dtype == DT.CUDNN_BACKEND_ENGINE_DESCRIPTOR:
            return inspect_engine_descriptor(item).as_dict()
        if dtype == DT.CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
            from cudnn_backend.plans import plan_summary

            return plan_summary(item)
    raise TypeError(f"cannot make a row of a {type(item).__name__}")


def inspect_engine_descriptor(engine) -> EngineInfo:
    """An EngineInfo of an already finalized Engine."""
    return EngineInfo(engine_global_index(engine), True, numerical_notes=engine_numerical_notes(engine),
                      behavior_notes=engine_behavior_notes(engine), knobs=engine_knobs(engine), engine=engine)


def to_rows(items: Iterable) -> list:
    """A list of plain dicts, one per item (see ``as_row``)."""
    return [as_row(i) for i in items]


def to_dataframe(items: Iterable):
    """A pandas DataFrame of ``to_rows(items)`` (pandas is optional: ImportError says how to get it)."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("to_dataframe needs pandas, which is optional: pip install pandas "
                          "(to_rows gives the same data as a list of dicts)") from None
    return pd.DataFrame(to_rows(items))
