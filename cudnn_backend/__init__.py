"""cudnn-backend: full manual control over NVIDIA cuDNN's backend graph API from Python.

Layers, each a folder, importing only downward (import-linter checks it)::

    errors        every exception class
    _bindings     raw declarations (cycudnn.pxd), the loader, the generated enums and schema
    core          Descriptor, Handle, logging, schema queries, versions, the device probe; the operation
                  families (core/families: one module each with its shape rules, checks, Graph methods and
                  reference ops)
    typed         the generated typed classes, tensors from arrays, introspection
    graph         the Graph builder: GraphCore plus every family's methods; shapes; graph checks
    reference     the fp64 reference evaluator of operation graphs (numpy, on the CPU): the families' ops
    runtime       profiles, engines, heuristics, plans, variant packs, execution, CUDA graphs, memory
    patterns      ready-made graphs built from Graph methods
    tune          explore, autotune, the plan cache, fusion reports, microbenchmarks, sweeps
    cli           the command line and all terminal output

Every enumerant of cudnn_graph.h is a module attribute under its exact C name
(``cudnn_backend.CUDNN_ATTR_TENSOR_UNIQUE_ID``). ``import cudnn_backend`` loads the lower layers;
the others load on first use (PEP 562).
"""
import importlib as _importlib
import importlib.machinery as _machinery
import os as _os
import pathlib as _pathlib
import sys as _sys

from cudnn_backend._version import __version__


def _unbuilt_source_tree(error: ModuleNotFoundError):
    """The one-line ImportError for a source tree whose compiled modules are not built (a clone before ``pip
    install``: run from its root, it shadows the installed package); None when ``error`` is about another module.
    A compiled module is one with a ``.pyx`` source in this folder."""
    here = _pathlib.Path(__file__).resolve().parent
    name = error.name or ""
    if not name.startswith(__name__ + "."):
        return None
    source = here.joinpath(*name.split(".")[1:]).with_suffix(".pyx")
    if not source.is_file():
        return None
    elsewhere = [p for p in _sys.path if _pathlib.Path(p or _os.curdir).resolve() != here.parent]
    installed = _machinery.PathFinder.find_spec(__name__, elsewhere)
    fix = (f"run from another folder to use the installed package ({_pathlib.Path(installed.origin).parent}), or "
           if installed is not None and installed.origin else "install it (`pip install \".[cu13]\"` here), or ")
    return ImportError(f"{here} is cudnn-backend's source tree, and its compiled modules are not built ({name} "
                       f"has only its source, {source.name}); Python takes it before an installed copy when run from "
                       f"{here.parent}: {fix}build it in place with `python setup.py build_ext --inplace` (or `pip "
                       "install -e .`)", name=name, path=str(source))


def _raise_unbuilt(error: ModuleNotFoundError):
    """Re-raise ``error``, or the unbuilt source tree's one line in its place: for ``python -m cudnn_backend`` that
    line alone (exit code 1), as the command line reports every failure, with no traceback."""
    unbuilt = _unbuilt_source_tree(error)
    if unbuilt is None:
        raise error
    if _sys.argv[:1] == ["-m"]:  # runpy is still locating ``python -m cudnn_backend``'s __main__
        raise SystemExit(f"cudnn-backend: error: {unbuilt}")
    raise unbuilt from None


try:
    from cudnn_backend._bindings import _loader
    from cudnn_backend._bindings.enums import *  # noqa: F401,F403 - every enum and enumerant by C name
    from cudnn_backend.errors import (
        CudaError,
        CudnnBackendError,
        CudnnBadParamError,
        CudnnError,
        CudnnExecutionFailedError,
        CudnnFunctionNotFoundError,
        CudnnInternalError,
        CudnnLibraryNotFoundError,
        CudnnNotInitializedError,
        CudnnNotSupportedError,
        CudnnShutdownError,
        CudnnUnsafeCallError,
        CudnnVersionError,
        DeviceMemoryWarning,
        DeviceProfileError,
        DeviceProfileIdentityWarning,
        DeviceProfileVersionError,
        EngineError,
        ErrataError,
        GraphError,
        JsonCheckError,
        JsonTableFallbackWarning,
        MissingDependencyError,
        NativeCudaGraphNotSupportedError,
        NoDeviceError,
        NoWorkingPlanError,
        PlanCacheError,
        PlanVersionError,
        ReferenceUnsupportedError,
        SweepError,
    )
    from cudnn_backend.core import (
        Descriptor,
        Handle,
        check_available,
        cudnn_messages,
        disable_logging,
        enable_logging,
        get_cudart_version,
        get_error_string,
        get_execution_plan_workspace_size,
        get_max_device_version,
        get_property,
        get_version,
        graph_version_check,
        info,
        is_available,
        is_same_topology,
        last_error_string,
        logging_enabled,
        schema,
        since_of,
    )
    from cudnn_backend.core._descriptor import explain_finalize_refusals as _explain_finalize_refusals
except ModuleNotFoundError as _error:
    _raise_unbuilt(_error)

# what cuDNN refuses saying only "buildDAG" or "finalize_internal()" (or nothing), explained by the package's checks
# (loaded on the first such refusal): an operation graph set by hand (a UID written twice, a cycle), a pooling whose
# output does not fit its window, a batch-norm finalize not in fp32
_explain_finalize_refusals("CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR", "cudnn_backend.graph.checks:explain_graph_refusal")
for _pooling in ("CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR", "CUDNN_BACKEND_OPERATION_RESAMPLE_BWD_DESCRIPTOR"):
    _explain_finalize_refusals(_pooling, "cudnn_backend.core.families.resample:explain_resample_refusal")
_explain_finalize_refusals("CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR",
                           "cudnn_backend.core.families.norm:explain_bn_finalize_refusal")

# name -> (module, attribute or None for the module itself), imported on first access
_LAZY = {
    "typed": ("cudnn_backend.typed", None),
    "descriptor_class": ("cudnn_backend.typed", "descriptor_class"),
    "arrays": ("cudnn_backend.typed.arrays", None),
    "graph": ("cudnn_backend.graph", None),
    "Graph": ("cudnn_backend.graph", "Graph"),
    "shapes": ("cudnn_backend.graph.shapes", None),
    "runtime": ("cudnn_backend.runtime", None),
    "profiles": ("cudnn_backend.runtime.profiles", None),
    "engines": ("cudnn_backend.runtime.engines", None),
    "heuristics": ("cudnn_backend.runtime.heuristics", None),
    "plans": ("cudnn_backend.runtime.plans", None),
    "errata": ("cudnn_backend.runtime.errata", None),
    "Errata": ("cudnn_backend.runtime.errata", "Errata"),
    "execution": ("cudnn_backend.runtime.execution", None),
    "memory": ("cudnn_backend.runtime.memory", None),
    "DeviceProfile": ("cudnn_backend.runtime.profiles", "DeviceProfile"),
    "Config": ("cudnn_backend.runtime.engines", "Config"),
    "Plan": ("cudnn_backend.runtime.plans", "Plan"),
    "build_first_plan": ("cudnn_backend.runtime.heuristics", "build_first_plan"),
    "get_configs": ("cudnn_backend.runtime.heuristics", "get_configs"),
    "list_engines": ("cudnn_backend.runtime.engines", "list_engines"),
    "make_config": ("cudnn_backend.runtime.engines", "make_config"),
    "build_plan": ("cudnn_backend.runtime.plans", "build_plan"),
    "plan_from_json": ("cudnn_backend.runtime.plans", "plan_from_json"),
    "load_plan": ("cudnn_backend.runtime.plans", "load_plan"),
    "CudaGraph": ("cudnn_backend.runtime.execution", "CudaGraph"),
    "CapturedGraph": ("cudnn_backend.runtime.execution", "CapturedGraph"),
    "VariantPack": ("cudnn_backend.runtime.execution", "VariantPack"),
    "execute": ("cudnn_backend.runtime.execution", "execute"),
    "populate_cuda_graph": ("cudnn_backend.runtime.execution", "populate_cuda_graph"),
    "update_cuda_graph": ("cudnn_backend.runtime.execution", "update_cuda_graph"),
    "reference": ("cudnn_backend.reference", None),
    "ReferenceResult": ("cudnn_backend.reference", "ReferenceResult"),
    "evaluate_reference": ("cudnn_backend.reference", "evaluate"),
    "patterns": ("cudnn_backend.patterns", None),
    "Pattern": ("cudnn_backend.patterns", "Pattern"),
    "tune": ("cudnn_backend.tune", None),
    "explore": ("cudnn_backend.tune", "explore"),
    "autotune": ("cudnn_backend.tune", "autotune"),
    "Exploration": ("cudnn_backend.tune", "Exploration"),
    "PlanCache": ("cudnn_backend.tune", "PlanCache"),
    "fusion_report": ("cudnn_backend.tune", "fusion_report"),
    "bench": ("cudnn_backend.tune", "bench"),
    "sweep": ("cudnn_backend.tune", "sweep"),
    "Task": ("cudnn_backend.tune", "Task"),
    "TuneOptions": ("cudnn_backend.tune", "TuneOptions"),
    "support_matrix": ("cudnn_backend.tune", "support_matrix"),
    "compare_support": ("cudnn_backend.tune", "compare_support"),
    "SupportMatrix": ("cudnn_backend.tune", "SupportMatrix"),
    "why": ("cudnn_backend.tune", "why"),
    "presets": ("cudnn_backend.patterns.presets", None),
    "cli": ("cudnn_backend.cli", None),
}


def __getattr__(name):  # PEP 562: the higher layers load on first use
    try:
        module, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'cudnn_backend' has no attribute {name!r}") from None
    try:
        value = _importlib.import_module(module)
    except ModuleNotFoundError as error:
        _raise_unbuilt(error)
    if attribute is not None:
        value = getattr(value, attribute)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def get_include() -> str:
    """The folder holding cudnn_backend_graph.h, for Cython code that cimports cudnn_backend's .pxd files."""
    here = _pathlib.Path(__file__).resolve().parent
    shipped = here / "include"
    return str(shipped if shipped.exists() else here.parent / "include")


def loaded_library():
    """Where and which cuDNN was loaded (loads it if nothing has yet)."""
    return _loader.load_cudnn()
