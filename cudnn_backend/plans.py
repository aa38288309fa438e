"""Execution plans: build from an engine config, inspect, serialize to JSON and load back.

    plan = build_plan(config, device_profile=profile)       # offline, against a device profile
    plan = build_plan(config, handle=handle)                # on the GPU
    plan.workspace_size, plan.engine_index, plan.knobs, plan.operation_graph, plan.handle
    text = plan.to_json()                                   # CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION
    plan = plan_from_json(text, handle=handle)              # on the GPU, ready to execute
    plan = plan_from_json(text, device_profile=profile)     # offline: inspect only

A plan holds references to everything it depends on: its engine config, the engine, the operation
graph (and through it the operations and tensors), the device properties, the kernel cache and the
handle. A plan built on a CPU machine against a GPU's profile can be serialized, shipped and loaded
onto a handle on that GPU. Runtime-compiled engines (NVRTC) compile while the plan is built; the
JSON then carries the compiled kernel, and a kernel cache (``make_kernel_cache``) lets plans of
same-topology graphs reuse compiled kernels.
"""
from __future__ import annotations

import json
import os
import pathlib

from cudnn_backend._descriptor import Descriptor, Handle, last_error_string
from cudnn_backend._errors import CudnnBackendError, CudnnError
from cudnn_backend._generated.enums import AttributeName, AttributeType, DescriptorType
from cudnn_backend import engines as _engines

A = AttributeName
AT = AttributeType
DT = DescriptorType


class PlanVersionError(CudnnBackendError, ValueError):
    """A serialized plan from another cuDNN version than the loaded one."""


def _driver() -> str:
    from cudnn_backend._bindings import _loader

    return _loader.load_cudnn().driver


def _check_handle(handle):
    if handle is None:
        return None
    if not isinstance(handle, Handle):
        raise TypeError(f"handle must be a cudnn_backend.Handle, not {type(handle).__name__}")
    if handle.closed:
        raise ValueError("the Handle is closed")
    return handle


def _config_deviceprop(config):
    """The DEVICEPROP a config was chosen for (heuristics' or its engine's), if known."""
    dp = _engines.get_ref(config, "deviceprop")
    if dp is None:
        engine = _engines._typed_value(config, "engine")
        if engine is not None:
            dp = _engines._first(_engines._typed_value(engine, "deviceprop"), _engines.get_ref(engine, "deviceprop"))
    return dp


def config_operation_graph(config):
    """The operation graph a config belongs to (attached, or its engine's), or None."""
    graph = _engines.get_ref(config, "operation_graph")
    if graph is None:
        engine = _engines._first(_engines._typed_value(config, "engine"), _engines.get_ref(config, "engine"))
        if engine is not None:
            graph = _engines._engine_graph(engine)
    return graph


def build_plan(config, handle=None, device_profile=None, *, kernel_cache=None, run_only_intermediate_uids=None,
               allow_version_mismatch=None):
    """A finalized ExecutionPlan for an EngineConfig, with a ``Handle`` and/or a device profile.

    Without either, the profile the config was chosen for (its heuristics' or engine's) is used;
    on a machine without a GPU one of them is required. ``kernel_cache`` (a finalized KernelCache)
    lets runtime-compiled engines reuse kernels; ``run_only_intermediate_uids`` sets
    CUDNN_ATTR_EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS.
    """
    from cudnn_backend.profiles import as_deviceprop
    from cudnn_backend.typed import ExecutionPlan

    _engines._need_finalized(config, DT.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
    handle = _check_handle(handle)
    dp = as_deviceprop(device_profile, allow_version_mismatch)
    if dp is None and handle is None:
        dp = _config_deviceprop(config)
        if dp is None and _driver() != "cuda":
            from cudnn_backend.heuristics import NoDeviceError

            raise NoDeviceError(f"build_plan: no GPU is visible here (CUDA driver: {_driver()}); pass handle= on a "
                                "GPU machine or device_profile= (e.g. DeviceProfile.bundled('h200')) to build the "
                                "plan offline")
    kwargs = {"engine_config": config}
    if handle is not None:
        kwargs["handle"] = handle
    if dp is not None:
        kwargs["deviceprop"] = dp
    if kernel_cache is not None:
        _engines._need_finalized(kernel_cache, DT.CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR)
        kwargs["kernel_cache"] = kernel_cache
    if run_only_intermediate_uids is not None:
        kwargs["run_only_intermediate_uids"] = [int(u) for u in run_only_intermediate_uids]
    plan = ExecutionPlan(**kwargs)
    last_error_string()  # drop a stale message so a failure reports its own
    plan.finalize()
    _engines.attach_refs(plan, operation_graph=config_operation_graph(config), engine_config=config,
                         engine=_engines._first(_engines._typed_value(config, "engine"),
                                                _engines.get_ref(config, "engine")),
                         deviceprop=dp, kernel_cache=kernel_cache, handle=handle)
    return plan


# ---------------------------------------------------------------------------------------------
# reading a plan
# ---------------------------------------------------------------------------------------------
def _need_plan(plan):
    _engines._need_finalized(plan, DT.CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)


def plan_engine_config(plan):
    """The plan's EngineConfig (the one it was built from, or read back from cuDNN and cached)."""
    _need_plan(plan)
    cfg = _engines._first(_engines.get_ref(plan, "engine_config"), _engines._typed_value(plan, "engine_config"))
    if cfg is None:
        configs = plan.get(A.CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, AT.CUDNN_TYPE_BACKEND_DESCRIPTOR)
        if not configs:
            raise CudnnBackendError("cuDNN returned no CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG for this plan")
        cfg = configs[0]
        _engines.attach_refs(cfg, operation_graph=_engines.get_ref(plan, "operation_graph"))
        try:
            _engines.attach_refs(plan, engine_config=cfg)
        except AttributeError:
            pass
    return cfg


def plan_workspace_size(plan) -> int:
    _need_plan(plan)
    return int(plan.get(A.CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, AT.CUDNN_TYPE_INT64)[0])


def plan_json(plan) -> str:
    """CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION: the plan serialized (graph, device, engine, kernels)."""
    _need_plan(plan)
    text = plan.get(A.CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, AT.CUDNN_TYPE_CHAR)
    if not text:
        raise CudnnBackendError("cuDNN returned an empty CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION")
    return text


def _from_json_engine(plan):
    """(engine index, knobs) parsed from the plan's JSON: a fallback where cuDNN cannot say."""
    info = plan_json_info(plan_json(plan))
    return info["engine"], {_engines.knob_type(k): v for k, v in info["knobs"].items()}


def plan_engine_index(plan) -> int:
    try:
        return _engines.config_engine_index(plan_engine_config(plan))
    except CudnnError:
        return _from_json_engine(plan)[0]


def plan_knobs(plan) -> dict:
    """``{KnobType: value}`` of the plan's engine config."""
    try:
        return _engines.config_knobs(plan_engine_config(plan))
    except CudnnError:
        return _from_json_engine(plan)[1]


def plan_operation_graph(plan):
    """The operation graph the plan was built from (None for a plan loaded from JSON without one)."""
    graph = _engines.get_ref(plan, "operation_graph")
    if graph is None:
        cfg = _engines._first(_engines.get_ref(plan, "engine_config"), _engines._typed_value(plan, "engine_config"))
        if cfg is not None:
            graph = config_operation_graph(cfg)
    return graph


def plan_handle(plan):
    """The Handle the plan was built or loaded with, or None (a plan for a device profile only)."""
    h = _engines._typed_value(plan, "handle")
    if h is None:
        h = _engines.get_ref(plan, "handle")
    if h is None and isinstance(plan, Descriptor):
        kept = plan.children.get(A.CUDNN_ATTR_EXECUTION_PLAN_HANDLE)
        h = kept[0] if kept else None
    return h


def plan_computed_intermediate_uids(plan) -> list:
    """CUDNN_ATTR_EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS (cuDNN may answer NOT_SUPPORTED: CudnnError)."""
    _need_plan(plan)
    return [int(u) for u in plan.get(A.CUDNN_ATTR_EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS, AT.CUDNN_TYPE_INT64)]


def plan_json_info(text) -> dict:
    """What a serialized plan says about itself, without cuDNN: cuDNN version, device, engine, knobs."""
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ValueError(f"not a serialized cuDNN execution plan (invalid JSON: {e})") from None
    if not isinstance(data, dict) or "engine" not in data:
        raise ValueError("not a serialized cuDNN execution plan (no 'engine' entry)")
    engine = data.get("engine") or {}
    gpu = data.get("GPUProfile") or {}
    version = data.get("cudnnVersion")
    return {
        "cudnn_version": int(version) if version is not None else None,
        "schema_version": data.get("schemaVersion"),
        "device_name": gpu.get("deviceName"),
        "device_version": gpu.get("deviceVer"),
        "engine": int(engine["engineId"]) if "engineId" in engine else None,
        "sm_version": engine.get("smVersion"),
        "knobs": {_engines.short_name(_engines.knob_type(k)): int(v)
                  for k, v in (engine.get("knobChoices") or {}).items()},
        "target_sm_count": engine.get("targetSMcount"),
    }


def plan_summary(plan) -> dict:
    """Engine, knobs, workspace, notes and device of a plan, as plain data."""
    cfg = plan_engine_config(plan)
    summary = _engines.config_summary(cfg)
    summary["workspace_size"] = plan_workspace_size(plan)
    summary["handle"] = plan_handle(plan) is not None
    dp = _engines._first(_engines.get_ref(plan, "deviceprop"), _engines._typed_value(plan, "deviceprop"))
    from cudnn_backend.profiles import profile_of

    profile = profile_of(dp)
    summary["device"] = profile.device_name if profile is not None else None
    return summary


# ---------------------------------------------------------------------------------------------
# serialization
# ---------------------------------------------------------------------------------------------
def check_plan_version(text, allow_version_mismatch=False) -> int | None:
    """Refuse (PlanVersionError) a serialized plan written by another cuDNN version than the loaded one.

    cuDNN itself compares the exact version (9.19.0 refuses a 9.19.1 plan with
    CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH); this says so before cuDNN is called.
    """
    from cudnn_backend.profiles import format_version, loaded_cudnn_version

    version = plan_json_info(text)["cudnn_version"]
    if allow_version_mismatch or version is None:
        return version
    loaded = loaded_cudnn_version()
    if version != loaded:
        raise PlanVersionError(
            f"this execution plan was serialized by cuDNN {format_version(version)}, but the loaded cuDNN is "
            f"{format_version(loaded)}; cuDNN does not load plans across versions. Rebuild the plan (its "
            "engine and knobs are in plan_json_info(text)), or pass allow_version_mismatch=True to let cuDNN try.")
    return version


def plan_from_json(text, handle=None, device_profile=None, *, operation_graph=None, kernel_cache=None,
                   allow_version_mismatch=None):
    """An ExecutionPlan deserialized from ``to_json()`` text: set the JSON, then finalize with the handle.

    Needs a ``handle`` (the plan can then run on its GPU) or a ``device_profile`` (offline: the plan
    can be inspected, e.g. workspace size, engine and knobs, but not run). cuDNN 9.19 crashes the
    process when given neither, so that is refused here. ``operation_graph`` (optional) is only
    remembered as ``plan.operation_graph`` for whoever builds variant packs.
    """
    from cudnn_backend.profiles import as_deviceprop
    from cudnn_backend.typed import ExecutionPlan

    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")
    if not isinstance(text, str) or not text:
        raise TypeError("plan_from_json takes the plan's JSON text (ExecutionPlan.to_json())")
    handle = _check_handle(handle)
    dp = as_deviceprop(device_profile, allow_version_mismatch)
    if handle is None and dp is None:
        raise ValueError("plan_from_json needs handle= (to run the plan on that GPU) or device_profile= (to inspect "
                         "it offline); cuDNN cannot deserialize a plan with neither (it crashes)")
    check_plan_version(text, bool(allow_version_mismatch))
    if operation_graph is not None:
        _engines._check_graph(operation_graph)
    plan = ExecutionPlan(json_representation=text)
    if handle is not None:
        plan.set_keyword("handle", handle)
    if dp is not None:
        plan.set_keyword("deviceprop", dp)
    if kernel_cache is not None:
        _engines._need_finalized(kernel_cache, DT.CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR)
        plan.set_keyword("kernel_cache", kernel_cache)
    last_error_string()
    # ENGINE_CONFIG is required when building, not when deserializing
    plan.finalize(check_required=False)
    _engines.attach_refs(plan, operation_graph=operation_graph, deviceprop=dp, kernel_cache=kernel_cache,
                         handle=handle)
    return plan


def save_plan(plan, path) -> pathlib.Path:
    """Write the plan's JSON to ``path``; returns the path."""
    path = pathlib.Path(os.fspath(path))
    path.write_text(plan_json(plan), encoding="utf-8")
    return path


def load_plan(path, handle=None, device_profile=None, **kwargs):
    """``plan_from_json`` of a file written by ``save_plan``."""
    path = pathlib.Path(os.fspath(path))
    return plan_from_json(path.read_text(encoding="utf-8"), handle, device_profile, **kwargs)


# ---------------------------------------------------------------------------------------------
# kernel cache
# ---------------------------------------------------------------------------------------------
def make_kernel_cache(operation_graph=None, json_text=None):
    """A finalized CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR (cuDNN >= 9.4).

    cuDNN only finalizes it with an operation graph (9.5+: CUDNN_ATTR_KERNEL_CACHE_OPERATION_GRAPH);
    kernels are cached for dynamic-shape graphs (``is_dynamic_shape_enabled``) so that plans of
    later same-topology graphs skip runtime compilation. ``json_text`` (cuDNN >= 9.10) restores a
    cache saved with ``kernel_cache_json``.
    """
    from cudnn_backend.typed import KernelCache

    if operation_graph is None:
        raise ValueError("make_kernel_cache needs operation_graph= (cuDNN refuses to finalize a kernel cache "
                         "without one: CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED)")
    _engines._check_graph(operation_graph)
    kwargs = {"operation_graph": operation_graph}
    if json_text is not None:
        kwargs["json_representation"] = json_text
    cache = KernelCache(**kwargs)
    last_error_string()
    cache.finalize()
    return cache


def kernel_cache_json(cache) -> str:
    """CUDNN_ATTR_KERNEL_CACHE_JSON_REPRESENTATION (cuDNN >= 9.10) of a cache that has been used."""
    _engines._need_finalized(cache, DT.CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR)
    return cache.get(A.CUDNN_ATTR_KERNEL_CACHE_JSON_REPRESENTATION, AT.CUDNN_TYPE_CHAR)
