"""Execution plans: built from an engine config, serialized to JSON and loaded back.

``build_plan(config, handle=..., device_profile=...)`` finalizes an ``ExecutionPlan`` descriptor and
returns a ``Plan``: the high-level object that holds the descriptor (``plan.descriptor``), as h5py's
objects hold their low-level ids, with the operation graph, the config, the handle and the device
properties it was built for. A plan built on a CPU machine against a GPU's profile can be serialized,
shipped and loaded onto a handle on that GPU. Runtime-compiled engines (NVRTC) compile while the plan
is built; the JSON then carries the compiled kernel, and a kernel cache (``make_kernel_cache``) lets
plans of same-topology graphs reuse compiled kernels.

Refusals are remembered: cuDNN keeps about 7 KB each time it refuses to build a runtime-compiled
config (``INTERNAL_ERROR_COMPILATION_FAILED``; 6.7 MiB per 1,000 measured on cuDNN 9.19), so a config
refused once for a graph and device is not handed to cuDNN again in this process: ``build_plan``
raises the remembered error at once, a new exception each time carrying the first one's status and
message (the record keeps no traceback, hence no plan of any call, alive; ``retry_refused=True`` asks
cuDNN anyway; ``forget_refusals()`` clears the record).
"""
from __future__ import annotations

import copy
import json
import pathlib
import re
import threading
import warnings
import weakref

from cudnn_backend._bindings.enums import AttributeName, AttributeType, BehaviorNote, DescriptorType
from cudnn_backend.core._coerce import as_int
from cudnn_backend.core._descriptor import Descriptor
from cudnn_backend.core._handle import Handle
from cudnn_backend.core._status import clear_error
from cudnn_backend.core._tables import PY_MAX_GET_ELEMENTS
from cudnn_backend.core.files import json_text as _json_text
from cudnn_backend.core.files import read_bounded, write_whole
from cudnn_backend.core.json_checks import (check_plan_json, document_release, plan_identity_members,
                                             plan_identity_probed)
from cudnn_backend.core.names import enumerants
from cudnn_backend.core.plain import LiveObject, PlainData, earlier_name
from cudnn_backend.core.versions import MIN_VERSION, format_version, loaded_version
from cudnn_backend.core import device as _device
from cudnn_backend.errors import (CudnnBackendError, CudnnError, CudnnLibraryNotFoundError, DeviceMemoryWarning,
                                  DeviceProfileIdentityWarning,
                                  JsonCheckError, JsonTableFallbackWarning, NoDeviceError, PlanVersionError,
                                  did_you_mean)
from cudnn_backend.runtime import engines as _engines
from cudnn_backend.runtime._packing import (check_graph_is_plans, check_plans_graph, graph_tensor_specs,
                                            plan_document)
from cudnn_backend.runtime.profiles import (as_deviceprop, bundled_profile_of, device_label, deviceprop_properties,
                                            profile_of)
from cudnn_backend.typed import DeviceProp, Engine, EngineConfig, ExecutionPlan, KernelCache, OperationGraph
from cudnn_backend.typed.introspection import graph_fingerprint

__all__ = ["Plan", "build_plan", "plan_from_json", "load_plan", "save_plan", "plan_json_info", "check_plan_version",
           "make_kernel_cache", "kernel_cache_json", "as_plan", "forget_refusals", "refused", "device_key",
           "deviceprop_of_handle", "operation_graph_of", "tensor_bytes", "device_memory", "DeviceMemoryWarning",
           "PlanVersionError"]

A = AttributeName
AT = AttributeType
DT = DescriptorType
MAX_PLAN_FILE_BYTES = 1 << 28  # 256 MiB: a saved plan is a few hundred KB (kernel caches a few MB)


# ---------------------------------------------------------------------------------------------
# what a plan is for: device keys and the refusal record
# ---------------------------------------------------------------------------------------------
_device_keys: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Handle / DeviceProp -> key


def device_key(handle=None, deviceprop=None) -> tuple:
    """(device name, SM version, SM count) of a handle's GPU or of a DEVICEPROP descriptor."""
    source = deviceprop if deviceprop is not None else handle
    if source is None:
        raise ValueError("device_key needs a handle or a device profile")
    try:
        return _device_keys[source]
    except KeyError:
        pass
    if deviceprop is None:
        from_handle = deviceprop_of_handle(handle)
        text = from_handle.json_representation
    else:
        text = deviceprop.json_representation
    props = json.loads(text) if text else {}
    key = (str(props.get("deviceName", "unknown")), int(props.get("deviceVer", 0) or 0),
           int(props.get("multiProcessorCount", 0) or 0))
    _device_keys[source] = key
    return key


def device_memory(handle=None, deviceprop=None) -> int | None:
    """The GPU's memory in bytes (``totalGlobalMem``) of a handle or a DEVICEPROP descriptor; None if unknown."""
    source = deviceprop if deviceprop is not None else handle
    if source is None:
        return None
    memory = _device_memory.get(source, False)
    if memory is False:
        dp = deviceprop if deviceprop is not None else deviceprop_of_handle(handle)
        text = dp.json_representation
        value = (json.loads(text) if text else {}).get("totalGlobalMem")
        memory = _device_memory[source] = int(value) if isinstance(value, (int, float)) and value > 0 else None
    return memory


_device_memory: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Handle / DeviceProp -> bytes or None


def tensor_bytes(operation_graph) -> int | None:
    """Bytes the graph's real tensors span together (virtual and by-value ones take no device memory); None when
    the graph's operations are not known on the Python side."""
    specs = graph_tensor_specs(operation_graph) if operation_graph is not None else None
    if not specs:
        return None
    sizes = [s.nbytes for s in specs.values() if not s.virtual and not s.by_value]
    return None if any(n is None for n in sizes) else sum(sizes)


_memory_warned: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # operation graph -> devices warned of


def _warn_if_too_large(plan, operation_graph, handle, deviceprop) -> None:
    """DeviceMemoryWarning (once per graph and device) when the graph's tensors and the plan's workspace need more
    memory than the GPU has: cuDNN builds such plans without a word, and they cannot run there."""
    memory = device_memory(handle, deviceprop)
    if memory is None or operation_graph is None:
        return
    device = device_key(handle, deviceprop)
    warned = _memory_warned.setdefault(operation_graph, set())
    if device in warned:
        return
    tensors = tensor_bytes(operation_graph)
    if tensors is None or tensors + plan.workspace_size <= memory:
        return
    warned.add(device)
    gib = 1 << 30
    workspace = f" (and this plan {plan.workspace_size / gib:.2f} GiB of workspace)" if plan.workspace_size >= 1 << 20 \
        else ""
    warnings.warn(DeviceMemoryWarning(
        f"the graph's tensors need {tensors / gib:.1f} GiB{workspace}, more than the {memory / gib:.1f} GiB of the "
        f"{device[0]}: the plan builds, but it cannot run there"), stacklevel=3)


def deviceprop_of_handle(handle):
    """A finalized DEVICEPROP descriptor of the handle's GPU (what heuristics and plans need when the operation
    graph was finalized without a handle)."""
    dp = DeviceProp(handle=handle)
    dp.finalize()
    return dp


_refused: dict = {}  # refusal key -> the error, without its traceback (a copy: see _fresh)
_refused_lock = threading.Lock()


def _fresh(error: BaseException) -> BaseException:
    """A new exception of ``error``'s class with its status, message and attributes, and no traceback, cause or
    context: raising it adds nothing to ``error``, and it keeps alive nothing of the call that raised ``error``."""
    return copy.copy(error)


def _refusal_key(config: "_engines.Config", handle, deviceprop):
    graph = config.operation_graph
    if graph is None:
        return None
    try:
        return (graph_fingerprint(graph), device_key(handle, deviceprop), config.key)
    except (CudnnBackendError, ValueError, TypeError):
        return None


def refused(config, handle=None, device_profile=None):
    """The error cuDNN refused ``config`` with for this graph and device earlier in this process (a new copy), or
    None."""
    config = _engines.as_config(config)
    key = _refusal_key(config, handle, as_deviceprop(device_profile) or config.deviceprop)
    earlier = _refused.get(key) if key is not None else None
    return _fresh(earlier) if earlier is not None else None


def forget_refusals():
    """Clear the record of refused configs (build_plan then asks cuDNN again)."""
    with _refused_lock:
        _refused.clear()


# ---------------------------------------------------------------------------------------------
# the plan
# ---------------------------------------------------------------------------------------------
class Plan(PlainData, LiveObject):
    """A finalized execution plan and what it was built for.

    ``descriptor`` is the ``ExecutionPlan`` descriptor (it keeps its config, engine and graph alive in
    cuDNN's terms); ``operation_graph``, ``config``, ``handle``, ``deviceprop``, ``kernel_cache`` are
    what the plan was built or loaded with (None where unknown, e.g. the graph of a plan loaded from
    JSON without one). ``workspace_size`` (bytes), ``engine_index``, ``knobs``, the notes, ``to_json()``
    and ``save()`` read it; variant packs and ``execute`` take it.
    """

    __slots__ = ("descriptor", "_operation_graph", "config", "handle", "deviceprop", "kernel_cache", "_workspace",
                 "_index", "_knobs", "_json_info", "__weakref__")

    def __init__(self, descriptor, *, operation_graph=None, config=None, handle=None, deviceprop=None,
                 kernel_cache=None):
        _engines._need_finalized(descriptor, DT.CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "descriptor")
        self.descriptor = descriptor
        self._operation_graph = operation_graph  # (the graph it was built or loaded with, checked there)
        self.config = config
        self.handle = handle
        self.deviceprop = deviceprop
        self.kernel_cache = kernel_cache
        self._workspace = None
        self._index = None
        self._knobs = None
        self._json_info = None

    # -- what the plan is --------------------------------------------------------------------------
    @property
    def operation_graph(self):
        """The finalized operation graph the plan was built for (None where unknown); one set here must be the
        plan's own, as its JSON says (``plan_from_json``'s check)."""
        return self._operation_graph

    @operation_graph.setter
    def operation_graph(self, graph):
        if graph is not None:
            check_plans_graph(self, _engines.check_graph(graph))
        self._operation_graph = graph

    @property
    def closed(self) -> bool:
        """Whether the plan's descriptor has been destroyed."""
        return self.descriptor.closed

    def close(self):
        """Destroy the plan's descriptor now (idempotent)."""
        self.descriptor.close()

    @property
    def workspace_size(self) -> int:
        """The workspace (bytes) the plan needs."""
        if self._workspace is None:
            self._workspace = int(self.descriptor.get(A.CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, AT.CUDNN_TYPE_INT64)[0])
        return self._workspace

    def _config_or_json(self):
        if self.config is not None:
            return self.config
        try:
            cfg = self.descriptor.engine_config
        except CudnnError:
            cfg = None
        if cfg is not None:
            self.config = _engines.Config(cfg, self.operation_graph, self.deviceprop)
        return self.config

    def _of_config(self, read):
        """``read(config)`` of the plan's engine config; None without one, or when cuDNN will not say."""
        cfg = self._config_or_json()
        try:
            return read(cfg) if cfg is not None else None
        except CudnnError:
            return None

    @property
    def engine_index(self) -> int:
        """The engine index of the plan's config (from its JSON for a plan loaded without one)."""
        if self._index is None:
            index = self._of_config(lambda cfg: cfg.engine_index)
            self._index = self.json_info["engine"] if index is None else index
        return self._index

    @property
    def knobs(self) -> dict:
        """``{KnobType: value}`` of the plan's engine config (from its JSON for a plan loaded without one)."""
        if self._knobs is None:
            self._knobs = self._of_config(lambda cfg: cfg.knobs)
            if self._knobs is None:
                self._knobs = {_engines.knob_type(k): v for k, v in self.json_info["knobs"].items()}
        return dict(self._knobs)

    @property
    def numerical_notes(self) -> tuple:
        """The engine's numerical notes (empty when the plan's config is unknown)."""
        cfg = self._config_or_json()
        return cfg.numerical_notes if cfg is not None else ()

    @property
    def behavior_notes(self) -> tuple:
        """The engine's behavior notes (empty when the plan's config is unknown)."""
        cfg = self._config_or_json()
        return cfg.behavior_notes if cfg is not None else ()

    @property
    def supports_native_cuda_graph(self) -> bool | None:
        """Whether the engine has CUDNN_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API (None: unknown)."""
        try:
            notes = self.behavior_notes
        except CudnnBackendError:
            return None
        if not notes and self._config_or_json() is None:
            return None
        return BehaviorNote.CUDNN_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API in notes

    def to_json(self) -> str:
        """CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION: the plan serialized (graph, device, engine, kernels)."""
        text = self.descriptor.get(A.CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, AT.CUDNN_TYPE_CHAR)
        if not text:
            raise CudnnBackendError("cuDNN returned an empty CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION")
        if self.descriptor.value_of(A.CUDNN_ATTR_EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS) is not None:
            warnings.warn("this plan's run_only_intermediate_uids is not in cuDNN's JSON of it: a plan loaded from "
                          "the JSON computes every intermediate", UserWarning, stacklevel=2)
        return text

    @property
    def json_info(self) -> dict:
        """What the plan's JSON says about itself: cuDNN version, device, engine, knobs."""
        if self._json_info is None:
            doc = plan_document(self)  # parsed once per plan (the pack's tensor specs read the same document)
            self._json_info = _json_info(doc) if doc is not None else plan_json_info(self.to_json())
        return self._json_info

    def save(self, path) -> pathlib.Path:
        """Write the plan's JSON to ``path``; returns the path."""
        return save_plan(self, path)

    def computed_intermediate_uids(self) -> list:
        """CUDNN_ATTR_EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS (cuDNN may answer NOT_SUPPORTED: CudnnError)."""
        return [int(u) for u in self.descriptor.get(A.CUDNN_ATTR_EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS,
                                                    AT.CUDNN_TYPE_INT64)]

    def to_dict(self) -> dict:
        """Engine, knobs, workspace, notes and device, as plain data."""
        profile = profile_of(self.deviceprop)
        return {
            "engine": self.engine_index,
            "knobs": {_engines.short_name(k): v for k, v in self.knobs.items()},
            "numerical_notes": [_engines.short_name(n) for n in self.numerical_notes],
            "behavior_notes": [_engines.short_name(n) for n in self.behavior_notes],
            "workspace_size": self.workspace_size,
            "handle": self.handle is not None,
            "device": profile.device_name if profile is not None else None,
        }

    summary = earlier_name("summary")

    _INSTEAD = "plan.to_json() is its plain data, and plan_from_json makes another"  # (pickle and copy: LiveObject)

    def __repr__(self):
        if self.closed:
            return "<Plan closed>"
        knobs = ", ".join(f"{_engines.short_name(k)}={v}" for k, v in self.knobs.items())
        return f"<Plan engine {self.engine_index} {{{knobs}}} workspace {self.workspace_size} B>"


def as_plan(plan, what="plan") -> Plan:
    """A Plan from a Plan or a finalized ExecutionPlan descriptor."""
    if isinstance(plan, Plan):
        return plan
    if isinstance(plan, Descriptor) and plan.descriptor_type == DT.CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
        _engines._need_finalized(plan, DT.CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, what)
        handle = plan.handle if hasattr(plan, "handle") else None
        return Plan(plan, handle=handle, deviceprop=getattr(plan, "deviceprop", None))
    raise TypeError(f"{what}: expected a Plan or a finalized CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, not "
                    f"{type(plan).__name__}")


def operation_graph_of(plan):
    """The plan's finalized operation graph: ``plan.operation_graph`` when known, else read back from cuDNN through
    the plan's engine config and engine (a plan loaded from JSON). Its operations are not readable from Python
    (cuDNN does not return them); the plan's JSON describes them."""
    plan = as_plan(plan)
    if plan.operation_graph is not None:
        return plan.operation_graph
    configs = plan.descriptor.get(A.CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, AT.CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                  cls=EngineConfig)
    if not configs:
        raise ValueError("the plan holds no engine config to read its operation graph from")
    engines = configs[0].get(A.CUDNN_ATTR_ENGINECFG_ENGINE, AT.CUDNN_TYPE_BACKEND_DESCRIPTOR, cls=Engine)
    if not engines:
        raise ValueError("the plan's engine config holds no engine")
    graphs = engines[0].get(A.CUDNN_ATTR_ENGINE_OPERATION_GRAPH, AT.CUDNN_TYPE_BACKEND_DESCRIPTOR, cls=OperationGraph)
    if not graphs:
        raise ValueError("the plan's engine holds no operation graph")
    return graphs[0]


def _check_handle(handle):
    if handle is None:
        return None
    if not isinstance(handle, Handle):
        raise TypeError(f"handle: expected a cudnn_backend.Handle, not {type(handle).__name__}")
    if handle.closed:
        raise ValueError("handle: the Handle is closed")
    return handle


def _targeted(plan, handle, deviceprop, kernel_cache):
    """An ExecutionPlan descriptor (not finalized) given the GPU it is for, a handle's or a device profile's, and the
    kernel cache its runtime-compiled kernels go to; returns it."""
    if handle is not None:
        plan.handle = handle
    if deviceprop is not None:
        plan.deviceprop = deviceprop
    if kernel_cache is not None:
        _engines._need_finalized(kernel_cache, DT.CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR, "kernel_cache")
        plan.kernel_cache = kernel_cache
    return plan


def _check_intermediates(uids, operation_graph) -> None:
    """``run_only_intermediate_uids`` must name the graph's intermediates (virtual tensors), each once: cuDNN takes
    any UID, an input's or one no tensor has, and computes what it computes."""
    specs = graph_tensor_specs(operation_graph) if operation_graph is not None else None
    if specs is None:
        return
    virtual = sorted(u for u, s in specs.items() if s.virtual)
    wrong = [u for u in uids if u not in virtual]
    if wrong:
        raise ValueError(f"run_only_intermediate_uids: {', '.join(map(str, wrong))} "
                         f"{'is not an intermediate' if len(wrong) == 1 else 'are not intermediates'} (virtual tensors) "
                         f"of the graph; its intermediates: {', '.join(map(str, virtual)) or 'none'}")
    if len(set(uids)) != len(uids):
        raise ValueError("run_only_intermediate_uids: a UID is given twice")


def build_plan(config, handle=None, device_profile=None, *, kernel_cache=None, run_only_intermediate_uids=None,
               allow_version_mismatch=None, retry_refused=False) -> Plan:
    """A Plan for a Config (or EngineConfig descriptor), with a ``Handle`` and/or a device profile.

    Without either, the profile the config was chosen for is used; on a machine without a GPU one of
    them is required. ``kernel_cache`` (a finalized KernelCache) lets runtime-compiled engines reuse
    kernels; ``run_only_intermediate_uids`` sets CUDNN_ATTR_EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS.
    A config cuDNN refused before for this graph and device raises that error again without asking
    cuDNN (see the module's notes), unless ``retry_refused``.
    """
    config = _engines.as_config(config)
    handle = _check_handle(handle)
    dp = as_deviceprop(device_profile, allow_version_mismatch)
    if dp is None and handle is None:
        dp = config.deviceprop
        if dp is None and _device.driver() != "cuda":
            raise NoDeviceError(f"build_plan: no GPU is visible here (CUDA driver: {_device.driver()}); pass handle= "
                                "on a GPU machine or device_profile= (e.g. DeviceProfile.bundled('h200')) to build the "
                                "plan offline")
    if not chosen_for(config, dp):
        _check_same_device(config.deviceprop, dp)
    descriptor = config.descriptor
    if descriptor in _planned:  # (9.19.0 fails a runtime-compiled config's second plan: COMPILATION_FAILED)
        descriptor = _engines.make_config(config.engine, config.knobs, check=False, operation_graph=
                                          config.operation_graph, deviceprop=config.deviceprop).descriptor
    plan = _targeted(ExecutionPlan(engine_config=descriptor), handle, dp, kernel_cache)
    if run_only_intermediate_uids is not None:
        uids = [as_int(u, "run_only_intermediate_uids") for u in
                _engines.user_sequence(run_only_intermediate_uids, "run_only_intermediate_uids")]
        _check_intermediates(uids, config.operation_graph)
        plan.run_only_intermediate_uids = uids
    key = _refusal_key(config, handle, dp)
    if key is not None and not retry_refused:
        earlier = _refused.get(key)
        if earlier is not None:
            raise _fresh(earlier)
    clear_error()  # a failure reports its own message
    try:
        plan.finalize()
    except CudnnError as e:
        if key is not None:
            with _refused_lock:
                _refused[key] = _fresh(e)
        raise
    _planned.add(descriptor)
    built = Plan(plan, operation_graph=config.operation_graph, config=config, handle=handle, deviceprop=dp,
                 kernel_cache=kernel_cache)
    _warn_if_too_large(built, config.operation_graph, handle, dp)
    return built


# the engine configs a plan was built from: each further plan of one is built from a copy (its engine and knobs)
_planned = weakref.WeakSet()


def chosen_for(config, deviceprop) -> bool:
    """Whether ``config`` (a Config) may be built against ``deviceprop`` as it is: no profile given, none it was chosen
    with, or one of the same device."""
    if deviceprop is None or config.deviceprop is None or deviceprop is config.deviceprop:
        return True
    return deviceprop_properties(config.deviceprop) == deviceprop_properties(deviceprop)


def _check_same_device(chosen_for, given):
    """Refuse a device profile other than the one a config was chosen for: the plan's JSON names the engine's device
    (loaded against the other, it is refused as ARCH_MISMATCH) while cuDNN compiles for the profile given, or
    refuses to (9.19), so the plan would name one device and be built for the other."""
    chosen, asked = deviceprop_properties(chosen_for), deviceprop_properties(given)
    if chosen != asked:
        differ = sorted(k for k in chosen.keys() | asked.keys() if chosen.get(k) != asked.get(k))
        raise ValueError(f"device_profile: the config was chosen for {device_label(chosen)}, and this profile "
                         f"describes {device_label(asked)} (they differ in {', '.join(differ[:4])}"
                         f"{', ...' if len(differ) > 4 else ''}): its plan would name the one and be built for the "
                         "other; get configs for this profile (get_configs(graph, device_profile=...)), or leave "
                         "device_profile out")


# ---------------------------------------------------------------------------------------------
# serialization
# ---------------------------------------------------------------------------------------------
def _loaded_or_none():
    """The loaded cuDNN's version, or None where no cuDNN can be loaded (a plan is still read without one)."""
    try:
        return loaded_version()
    except CudnnLibraryNotFoundError:
        return None


def plan_json_info(text) -> dict:
    """What a serialized plan says about itself, without cuDNN: cuDNN version, device, engine, knobs."""
    release = None
    try:
        release = document_release(text)
        with warnings.catch_warnings():
            if release is not None and release != _loaded_or_none():
                # read here, never given to this cuDNN: a release without a table of its own is no news
                warnings.simplefilter("ignore", JsonTableFallbackWarning)
            data = json.loads(check_plan_json(text, release=release))  # as its own release reads it
    except ValueError as e:
        # (read as the release its cudnnVersion names: a member of another release's is refused as that one's)
        which = f"cuDNN {format_version(release)} " if release is not None and release >= MIN_VERSION else "cuDNN "
        raise ValueError(f"not a serialized {which}execution plan: {e}") from None
    return _json_info(data)


def _json_info(data) -> dict:
    """``plan_json_info`` of a parsed plan document."""
    if not isinstance(data, dict) or not isinstance(data.get("engine"), dict):
        raise ValueError("not a serialized cuDNN execution plan: no 'engine' object")
    engine = data["engine"]
    gpu = data.get("GPUProfile") if isinstance(data.get("GPUProfile"), dict) else {}
    knobs = engine.get("knobChoices") if isinstance(engine.get("knobChoices"), dict) else {}
    out_knobs = {}
    for k, v in knobs.items():
        try:
            out_knobs[_engines.short_name(_engines.knob_type(k))] = as_int(v, f"knobChoices.{k}")
        except (TypeError, ValueError):
            raise ValueError(f"not a serialized cuDNN execution plan: knobChoices.{k} = {v!r}") from None
    version = data.get("cudnnVersion")
    return {
        "cudnn_version": as_int(version, "cudnnVersion") if version is not None else None,
        "schema_version": data.get("schemaVersion"),
        "device_name": gpu.get("deviceName"),
        "device_version": gpu.get("deviceVer"),
        "sm_count": gpu.get("multiProcessorCount"),
        "engine": as_int(engine["engineId"], "engine.engineId") if "engineId" in engine else None,
        "sm_version": engine.get("smVersion"),
        "knobs": out_knobs,
        "target_sm_count": engine.get("targetSMcount"),
    }


def check_plan_version(text, allow_version_mismatch=False) -> int | None:
    """Refuse (PlanVersionError) a serialized plan written by another cuDNN version than the loaded one.

    cuDNN itself compares the exact version (9.28.1 refuses a 9.28.0 plan with
    CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH); this says so before cuDNN is called. ``allow_version_mismatch``
    skips it: the JSON checks then refuse the plan (JsonCheckError), as cuDNN would.
    """
    version = document_release(text)
    if allow_version_mismatch or version is None:
        return version
    loaded = loaded_version()
    if version != loaded:
        raise PlanVersionError(
            f"this execution plan was serialized by cuDNN {format_version(version) if version >= 90000 else version}, "
            f"but the loaded cuDNN is {format_version(loaded)}; cuDNN does not load plans across versions (each "
            "release refuses every other's). Rebuild the plan with the loaded cuDNN (its engine and knobs are in "
            "plan_json_info(text)), or load it where that cuDNN is.")
    return version


def plan_from_json(text, handle=None, device_profile=None, *, operation_graph=None, kernel_cache=None,
                   allow_version_mismatch=None) -> Plan:
    """A Plan deserialized from ``to_json()`` text: the JSON is checked field by field (cuDNN crashes on
    malformed plans), then set and finalized with the handle.

    Needs a ``handle`` (the plan can then run on its GPU) or a ``device_profile`` (offline: the plan can
    be inspected, e.g. workspace size, engine and knobs, but not run). ``operation_graph`` (optional) is
    remembered as ``plan.operation_graph`` for whoever builds variant packs.
    """
    text = _json_text(text, "text", "plan JSON (Plan.to_json())")
    if not text.strip():
        raise ValueError("text: the plan JSON is empty")
    handle = _check_handle(handle)
    dp = as_deviceprop(device_profile, allow_version_mismatch)
    if handle is None and dp is None:
        raise ValueError("plan_from_json needs handle= (to run the plan on that GPU) or device_profile= (to inspect "
                         "it offline); cuDNN cannot deserialize a plan with neither (it crashes)")
    check_plan_version(text, bool(allow_version_mismatch))
    # cuDNN keeps the text as given and gives it back at most PY_MAX_GET_ELEMENTS characters long: a longer one
    # (whitespace) compact, and one longer even so refused, or the plan could not be saved, cached or inspected
    text = check_plan_json(text, canonical=len(text) >= PY_MAX_GET_ELEMENTS)
    if len(text) >= PY_MAX_GET_ELEMENTS:
        raise ValueError(f"text: the plan's JSON holds {len(text):,} characters, compact; cuDNN gives back at most "
                         f"{PY_MAX_GET_ELEMENTS - 1:,}, so the plan could not be saved or inspected")
    if operation_graph is not None:  # its tensors and wiring before cuDNN reads the text; its settings below
        _engines.check_graph(operation_graph)
        check_graph_is_plans(operation_graph, json.loads(text)["operationGraph"])
    plan = _targeted(ExecutionPlan(json_representation=text), handle, dp, kernel_cache)
    clear_error()
    try:
        plan.finalize(check_required=False)  # ENGINE_CONFIG is required when building, not when deserializing
    except CudnnError as e:
        if getattr(e.status, "name", "") == "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH":
            raise _arch_mismatch(e, text, handle, dp) from None
        if _is_schema_mismatch(e):
            raise _schema_mismatch("plan", text, e) from e
        unknown = next(_unknown_enumerants(json.loads(text)), None)
        if unknown is None:
            if getattr(e.status, "name", "") == "CUDNN_STATUS_NOT_SUPPORTED" and not e.cudnn_message:
                raise type(e)(e.status, e.function, e.descriptor_type, e.attribute, e.cudnn_message,
                              hint=_unexplained_refusal(text, operation_graph, handle, dp)) from None
            raise
        path, name, close = unknown
        raise JsonCheckError("plan", path, f"{name!r} is not a name of cuDNN's enums{close}; cuDNN refused the plan: {getattr(e.status, 'name', e.status)}") from e
    loaded = Plan(plan, handle=handle, deviceprop=dp, kernel_cache=kernel_cache)
    if operation_graph is not None:
        try:  # the settings as the loaded cuDNN writes the plan: both documents from one release
            check_plans_graph(loaded, operation_graph, wiring=False)
        except ValueError:
            plan.close()
            raise
        loaded.operation_graph = operation_graph  # (found its own just above: the setter's check is a lookup)
    return loaded


_CHECKED_WITH_GRAPH = "loaded with its graph, operation_graph=, the plan's engine and knobs are checked against it"


def _unexplained_refusal(text, operation_graph, handle, deviceprop) -> str:
    """What may be wrong with a plan cuDNN refused without a word: its engine and knobs, checked against the graph's
    engine where ``operation_graph`` is given, named otherwise."""
    info = _json_info(json.loads(text))
    engine, knobs = info["engine"], info["knobs"]
    chosen = f"engineId {engine}" + (f", knobs {', '.join(f'{k}={v}' for k, v in knobs.items())}" if knobs else "")
    rebuild = ("rebuild the plan from the graph (build_plan of a config from get_configs, or from config_from_index "
               "with an engine and knobs of its own)")
    if operation_graph is None:
        return (f"cuDNN gives no reason. A plan's engine and knob choices ({chosen}) must be ones the graph's engine "
                "takes on this device, and its kernels (payload) built for them: a plan edited, or written for "
                f"another graph, is refused so ({_CHECKED_WITH_GRAPH}); {rebuild}")
    count = _engines.engine_count(operation_graph)
    if engine >= count:
        return f"cuDNN gives no reason; the plan's engineId {engine} is no engine of this graph (0 to {count - 1}): {rebuild}"
    found = _engines.inspect_engine(operation_graph, engine, deviceprop if handle is None else None,
                                    probe_configs=False)
    if not found.finalized:
        return (f"cuDNN gives no reason; engine {engine} does not take this graph on this device ({found.reason}): "
                f"{rebuild}")
    try:  # (cuDNN writes the knobs a config left out as -1)
        _engines.check_knobs({k: v for k, v in knobs.items() if v != -1}, found.knobs, engine)
    except _engines.EngineError as e:
        return f"cuDNN gives no reason; the plan's knobs fall outside engine {engine}'s: {e}: {rebuild}"
    return (f"cuDNN gives no reason; the plan's engine and knobs ({chosen}) are this graph's, so its kernels "
            f"(payload) may not be the ones they make: {rebuild}")


def _is_schema_mismatch(error) -> bool:
    return getattr(error.status, "name", "") == "CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH"


def _schema_mismatch(kind, text, error) -> JsonCheckError:
    """cuDNN's SERIALIZATION_VERSION_MISMATCH on loading a plan or kernel cache, naming the member: the document's
    schemaVersion, and the one the loaded cuDNN reads where its message gives it (as "((MAJOR) * 100 + (MINOR))")."""
    try:
        given = json.loads(_json_text(text, "text", "JSON")).get("schemaVersion")
    except (ValueError, AttributeError, TypeError):
        given = None
    found = re.search(r"\(\((\d+)\) \* 100 \+ \((\d+)\)\)", error.cudnn_message or "")
    reads = f"reads schemaVersion {int(found[1]) * 100 + int(found[2])}" if found else "reads another schemaVersion"
    return JsonCheckError(kind, "schemaVersion", f"{json.dumps(given)}: the loaded cuDNN "
                          f"({format_version(loaded_version())}) {reads}, and refused the {kind} "
                          f"(CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH: {error.cudnn_message}); save it again "
                          "with this cuDNN")


def _arch_mismatch(error, text, handle, deviceprop):
    """cuDNN's ARCH_MISMATCH on loading a plan, saying which GPU the plan was built for, which members cuDNN
    compares differ from the target's (the handle's GPU, or the device profile), and the fix."""
    built_for = json.loads(text).get("GPUProfile") or {}
    target = deviceprop if deviceprop is not None else deviceprop_of_handle(handle)
    try:
        here = json.loads(target.json_representation)
    except (CudnnError, ValueError, TypeError):
        here = {}
    where = "the target device profile" if deviceprop is not None else "this GPU"
    compared = plan_identity_members() or tuple(built_for)
    differ = [f"{m} (plan {built_for[m]!r}, {where} {here[m]!r})" for m in compared
              if m in built_for and m in here and built_for[m] != here[m]]
    missing = [m for m in compared if (m in built_for) != (m in here)]
    plan_gpu, here_gpu = built_for.get("deviceName", "an unnamed GPU"), here.get("deviceName", "an unnamed GPU")
    what = f"the plan was built for {plan_gpu}" + (f", and {where} is {here_gpu}" if here_gpu != plan_gpu else
                                                   f", as {where} is")
    if differ or missing:
        compares = "compares" if plan_identity_probed() else "may compare (the releases probed around it do)"
        what += ("; they differ in " + ", ".join(differ + [f"{m} (set on one side only)" for m in missing])
                 + f", which cuDNN {format_version(loaded_version())} {compares} when it loads a plan")

    def profile_words(gpu):
        name = bundled_profile_of(gpu)
        return f"'{name}', bundled" if name else "one captured on it with `cudnn-backend profile capture`"

    fix = (f"to inspect it offline, load it with {plan_gpu}'s device profile ({profile_words(plan_gpu)}); to run it "
           f"on {here_gpu}, build it again there, or offline with {here_gpu}'s profile ({profile_words(here_gpu)})")
    return type(error)(error.status, error.function, error.descriptor_type, error.attribute,
                       f"{error.cudnn_message + '; ' if error.cudnn_message else ''}{what}", hint=fix)


def _enumerant_names() -> dict:
    """{prefix before the last word: enumerant names} of every cuDNN enum this package declares."""
    by_prefix: dict = {}
    for name in enumerants():
        by_prefix.setdefault(name.rsplit("_", 1)[0], set()).add(name)
    return by_prefix


def _unknown_enumerants(data, path=""):
    """(JSON path, name, "; did you mean X?") of each string in a plan's JSON that looks like a cuDNN enumerant
    name but is none the headers declare. Asked only after cuDNN refused a plan: the JSON checks leave enumerant
    values to cuDNN (a newer release may add names), whose refusal names no field."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _unknown_enumerants(value, f"{path}.{key}" if path else key)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _unknown_enumerants(value, f"{path}[{i}]")
    elif isinstance(data, str) and data.startswith("CUDNN_") and data.replace("_", "").isalnum():
        names = _enumerant_names()
        if not any(data in group for group in names.values()):
            family = max(names, key=lambda prefix: len(prefix) if data.startswith(prefix) else -1)
            yield path, data, did_you_mean(data, sorted(names[family]), listing=False)


def save_plan(plan, path) -> pathlib.Path:
    """Write the plan's JSON to ``path``; returns the path. A plan built offline with a device profile whose member
    cuDNN compares on load came from a published figure warns (``DeviceProfileIdentityWarning``): the GPU may
    refuse it."""
    plan = as_plan(plan)
    path = write_whole(path, plan.to_json())
    profile = profile_of(plan.deviceprop) if plan.handle is None else None
    risk = profile.plan_risk() if profile is not None else None
    if risk is not None:
        warnings.warn(DeviceProfileIdentityWarning(f"{path}: {risk}"), stacklevel=2)
    return path


def load_plan(path, handle=None, device_profile=None, **kwargs) -> Plan:
    """``plan_from_json`` of a file written by ``save_plan``."""
    raw = read_bounded(path, MAX_PLAN_FILE_BYTES, "path", "a saved plan is a few hundred KB")
    if not raw.strip():
        raise ValueError(f"path: {str(path)!r} is empty; a saved plan holds its JSON")
    return plan_from_json(raw, handle, device_profile, **kwargs)


# ---------------------------------------------------------------------------------------------
# kernel cache
# ---------------------------------------------------------------------------------------------
def make_kernel_cache(operation_graph=None, json_text=None):
    """A finalized CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR (cuDNN >= 9.4).

    cuDNN only finalizes it with an operation graph (9.5+: CUDNN_ATTR_KERNEL_CACHE_OPERATION_GRAPH);
    kernels are cached for dynamic-shape graphs (``is_dynamic_shape_enabled``) so that plans of later
    same-topology graphs skip runtime compilation. ``json_text`` (cuDNN >= 9.10) restores a cache saved
    with ``kernel_cache_json`` (checked field by field first: cuDNN crashes on malformed caches).
    """
    if operation_graph is None:
        raise ValueError("operation_graph: make_kernel_cache needs one (cuDNN refuses to finalize a kernel cache "
                         "without one: CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED)")
    _engines.check_graph(operation_graph)
    cache = KernelCache(operation_graph=operation_graph)
    if json_text is not None:
        json_text = _json_text(json_text, "json_text", "kernel cache JSON (kernel_cache_json())")
        cache.json_representation = json_text
    clear_error()
    try:
        cache.finalize()
    except CudnnError as e:
        if json_text is not None and _is_schema_mismatch(e):
            raise _schema_mismatch("kernel cache", json_text, e) from e
        raise
    return cache


def kernel_cache_json(cache) -> str:
    """CUDNN_ATTR_KERNEL_CACHE_JSON_REPRESENTATION (cuDNN >= 9.10) of a cache that has been used."""
    _engines._need_finalized(cache, DT.CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR, "cache")
    return cache.get(A.CUDNN_ATTR_KERNEL_CACHE_JSON_REPRESENTATION, AT.CUDNN_TYPE_CHAR)

