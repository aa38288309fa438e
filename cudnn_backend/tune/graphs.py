"""What the main job accepts as "a graph": a finalized operation graph (built with any API), a ``Graph``, a
``Pattern``, a builder reference ``"file.py:func"`` / ``"package.module:func"``, or a saved plan; and device
profiles by name or file."""
from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import pathlib
import sys
from dataclasses import dataclass, field

from cudnn_backend._bindings.enums import AttributeName, DescriptorType
from cudnn_backend.core._descriptor import Descriptor
from cudnn_backend.core.families._build import as_name
from cudnn_backend.core.json_checks import graph_parts
from cudnn_backend.errors import did_you_mean
from cudnn_backend.graph import Graph
from cudnn_backend.patterns import CATALOGUE, Pattern
from cudnn_backend.reference import estimated_work
from cudnn_backend.runtime import plans as _plans
from cudnn_backend.runtime._packing import plan_document
from cudnn_backend.runtime.engines import check_graph
from cudnn_backend.runtime.profiles import DeviceProfile, bundled_profiles, profile_source
from cudnn_backend.typed.introspection import (
    graph_fingerprint,
    operation_label,
    operations_of,
    tensor_name,
    tensor_slots,
    topological_order,
)
from cudnn_backend.typed.tensors import TensorSpec, data_type_name

__all__ = ["Subject", "resolve", "load_builder", "load_file_module", "device_profile", "describe_graph", "describe_operations",
           "graph_summary", "operations_of", "work_estimate", "user_frame", "user_error_line", "builder_output",
           "check_reference", "not_a_graph"]


@dataclass
class Subject:
    """A graph to explore: the finalized operation graph, and what is known about it (the ``Graph`` or
    ``Pattern`` it came from; or, for a saved plan, the ``plan`` and its JSON ``json_graph``, since the
    operations of a graph read back from cuDNN are not readable)."""

    op_graph: object
    name: str
    graph: Graph | None = None
    pattern: Pattern | None = None
    params: dict = field(default_factory=dict)
    plan: object = None
    json_graph: dict | None = None

    @property
    def fingerprint(self) -> str:
        """The graph's canonical fingerprint (``json:``-prefixed for a graph known only from a plan's JSON)."""
        if self.json_graph is not None:
            text = json.dumps(self.json_graph, sort_keys=True, separators=(",", ":"))
            return "json:" + hashlib.sha256(text.encode()).hexdigest()
        return graph_fingerprint(self.op_graph)

    def summary(self) -> dict:
        return graph_summary(self.json_graph if self.json_graph is not None else self.op_graph)


def load_builder(ref: str):
    """The function ``ref`` names: ``"path/to/file.py:func"`` or ``"package.module:func"`` (imported as
    ``python -m`` would: the current folder first on ``sys.path``)."""
    if not isinstance(ref, str) or ":" not in ref:
        raise ValueError(f"graph: {ref!r} is not FILE.py:FUNC or module:FUNC")
    target, _, func = ref.rpartition(":")
    if not func.isidentifier():
        raise ValueError(f"graph: {func!r} in {ref!r} is not a function name")
    if target.endswith(".py") or os.sep in target or "/" in target:
        path = pathlib.Path(target)
        if not path.is_file():
            raise ValueError(f"graph: {target!r} is not a file")
        module = load_file_module(path, "graph")
    else:
        _on_path(os.getcwd())  # a console script's sys.path[0] is its bin folder, not where the user is
        try:
            module = importlib.import_module(target)
        except ImportError as e:
            raise ValueError(f"graph: cannot import {target!r} (from {os.getcwd()!r} or an installed package): "
                             f"{e}") from e
        except (Exception, SystemExit) as e:  # (a module that exits would end the caller's process)
            raise ValueError(f"graph: importing {target!r} failed: {user_error_line(e)}") from e
        if getattr(module, "__file__", None) and not module.__name__.startswith("cudnn_backend."):  # the user's,
            _user_folders.add(str(pathlib.Path(module.__file__).resolve().parent))  # not the package's own builders
    fn = getattr(module, func, None)
    if not callable(fn):
        names = [n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                 and getattr(v, "__module__", None) == module.__name__]
        raise ValueError(f"graph: {target!r} has no function {func!r}{did_you_mean(func, names)}")
    return fn


# the folders of the user's graph files and modules: their frames are the ones an error is reported at
_user_folders: set = set()


def _on_path(folder: str) -> None:
    if folder not in sys.path:
        sys.path.insert(0, folder)


def load_file_module(path, what="graph"):
    """A user's Python file imported as a module (named after its path), its folder first on ``sys.path`` (so it
    imports the modules beside it, as ``python FILE`` would); ValueError naming ``what`` and the file and line
    where importing it raised."""
    path = pathlib.Path(path)
    resolved = path.resolve()
    folder = str(resolved.parent)
    _on_path(folder)
    _user_folders.add(folder)
    try:
        stamp = (resolved.stat().st_mtime_ns, resolved.stat().st_size)
    except OSError:
        stamp = None
    name = f"cudnn_backend_user_graph_{abs(hash(str(resolved)))}"
    loaded = _loaded_files.get(str(resolved))
    if loaded is not None and loaded[0] == stamp and sys.modules.get(name) is loaded[1]:
        return loaded[1]  # once per process: its top-level code may be slow, or print, or count
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as e:  # (a file that exits would end the caller's process)
        sys.modules.pop(name, None)
        raise ValueError(f"{what}: importing {str(path)!r} failed: {user_error_line(e)}") from e
    _loaded_files[str(resolved)] = (stamp, module)
    return module


# the files load_file_module imported: resolved path -> ((mtime, size) then, the module); an edited file loads again
_loaded_files: dict = {}


def user_frame(error: BaseException) -> str | None:
    """``"FILE:LINE"`` of the innermost frame of ``error``'s traceback in the user's code (a graph file, a module
    ``--graph`` named, or a module beside them), or of the user's file a SyntaxError names; None when the error
    did not pass through it."""
    if isinstance(error, SyntaxError) and error.filename and _is_user_file(error.filename):
        return f"{_shown(error.filename)}:{error.lineno}"
    found = None
    tb = error.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if _is_user_file(filename):
            found = f"{_shown(filename)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def _shown(filename: str) -> str:
    """A file's path as messages show it: relative to the current folder when it lies under it."""
    path = os.path.normpath(filename)
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if relative.startswith("..") else relative


# the package's own files are never the user's, even where a user folder holds it (a checkout run from its root)
_PACKAGE_ROOT = pathlib.Path(__file__).resolve().parent.parent


def _is_user_file(filename: str) -> bool:
    try:
        path = pathlib.Path(filename).resolve()
    except (OSError, ValueError):
        return False
    return str(path.parent) in _user_folders and not path.is_relative_to(_PACKAGE_ROOT)


def stops_the_work(error: BaseException) -> bool:
    """Whether ``error`` ends a sweep or a support run rather than failing one graph of it: an interrupt, or a
    SystemExit raised outside the user's graph code (one a builder raises is that graph's failure)."""
    return isinstance(error, KeyboardInterrupt) or isinstance(error, SystemExit) and user_frame(error) is None


def user_error_line(error: BaseException) -> str:
    """``FILE:LINE: ExcType: message`` (the user's innermost frame; ``ExcType: message`` when it has none), one
    line."""
    text = " ".join(str(error).split()) or "(no message)"
    if isinstance(error, SyntaxError) and error.msg:
        text = error.msg
    where = user_frame(error)
    return f"{where + ': ' if where else ''}{type(error).__name__}: {text}"


def resolve(graph, *, handle=None, args=(), kwargs=None, name=None, device_profile=None) -> Subject:
    """A Subject from a Graph, a Pattern, a finalized operation graph, a pattern name of the catalogue, a
    builder reference (called with ``args``/``kwargs``; it returns any of the others), a ``Plan``, or the path
    of a saved plan (``.json``; loaded with ``handle`` or ``device_profile``). ``name``: a str, or None."""
    if name is not None:
        name = as_name(name)
    return _resolve(graph, handle, args, kwargs or {}, name, device_profile, None)


def not_a_graph(graph) -> TypeError:
    """The refusal of ``graph``, an object of no type a graph is given as."""
    return TypeError(f"graph: expected a Graph, a Pattern, a finalized OperationGraph descriptor, a pattern name or "
                     f"FILE.py:FUNC, not {type(graph).__name__}")


def check_reference(graph, args=(), kwargs=None) -> None:
    """Refuse, before any work (a GPU handle, a plan cache), what ``resolve`` cannot take: a ``graph`` of another
    type (TypeError), and builder arguments given with what takes none (they would be ignored): a graph made already
    or a saved plan."""
    if isinstance(graph, (str, os.PathLike)) and os.fspath(graph).endswith(".json"):
        made = "a saved plan (.json) takes none"
    elif isinstance(graph, (Graph, Pattern, Descriptor, _plans.Plan, Subject)):
        made = f"a {type(graph).__name__} is a graph made already, which takes none"
    elif isinstance(graph, str):
        return  # a builder reference: ``args``/``kwargs`` are its
    else:
        raise not_a_graph(graph)
    if args or kwargs:
        given = "kwargs" if kwargs else "args"
        raise TypeError(f"{given}: a graph builder's arguments (a pattern name, FILE.py:FUNC or module:FUNC takes "
                        f"them); {made} (they would be ignored): leave them out")


def _resolve(graph, handle, args, kwargs, name, device_profile, returned_by) -> Subject:
    """``resolve``; ``returned_by``: the builder reference that returned ``graph``, named when it is no graph."""
    if returned_by is not None:
        builder_output(graph, returned_by)
    else:
        check_reference(graph, args, kwargs)
    if isinstance(graph, Subject):
        return graph
    if isinstance(graph, _plans.Plan):
        return _plan_subject(graph, name or "plan")
    if isinstance(graph, (str, os.PathLike)) and os.fspath(graph).endswith(".json"):
        path = pathlib.Path(graph)
        if not path.is_file():
            raise ValueError(f"plan: {str(path)!r} is not a file")
        plan = _plans.load_plan(path, handle=handle, device_profile=device_profile)
        return _plan_subject(plan, name or path.stem)
    if isinstance(graph, str):
        fn = CATALOGUE.get(graph)
        if fn is None:
            fn = load_builder(graph)
        if "build" not in kwargs and _takes(fn, "build"):
            kwargs = dict(kwargs, build=False)  # finalized here, with the handle, not by the builder without one
        try:
            built = fn(*args, **kwargs)
        except SystemExit as e:  # (a builder that exits would end the caller's process: its graph's failure)
            raise ValueError(f"graph: {graph} exited: {user_error_line(e)}") from e
        return _resolve(built, handle, (), {}, name, None, graph)
    if isinstance(graph, Pattern):
        og = graph.graph.op_graph if graph.built else graph.build(handle)
        return Subject(og, name or graph.name, graph.graph, graph, dict(graph.params))
    if isinstance(graph, Graph):
        og = graph.op_graph if graph.built else graph.build(handle)
        return Subject(og, name or graph.name, graph)
    if isinstance(graph, Descriptor):
        check_graph(graph, "graph")
        return Subject(graph, name or "operation graph")
    raise not_a_graph(graph)  # (what check_reference and builder_output let through is handled above)


def builder_output(built, ref):
    """``built``, what the graph builder ``ref`` returned, when it is a graph (a Graph, a Pattern, a finalized
    operation graph or a plan); else a TypeError naming ``ref``. A str is refused too: it would be followed as
    another graph reference (a function returning its own reference would recurse until Python gives up)."""
    if isinstance(built, (Graph, Pattern, Descriptor, _plans.Plan, Subject)):
        return built
    what = f"a str ({built[:80]!r}), not a graph" if isinstance(built, str) else type(built).__name__
    raise TypeError(f"graph: {ref} returned {what}; a graph builder returns a Graph, a Pattern or a finalized "
                    "OperationGraph descriptor")


def work_estimate(builder: str, kwargs=None) -> float | None:
    """A rough measure of the work in the graph ``builder(**kwargs)`` makes, so that a sweep can start its
    largest graphs first: its multiply-adds as each operation's family counts them (``reference.estimated_work``).
    The graph is built unfinalized here (no handle, no GPU); None when the builder does not take ``build=False``
    (it is not run twice) or fails (the task then reports why where it runs)."""
    try:
        fn = CATALOGUE.get(builder) or load_builder(builder)
        if not _takes(fn, "build"):
            return None
        built = fn(**dict(kwargs or {}, build=False))
    except Exception:  # noqa: BLE001 - any failure only means "size unknown"
        return None
    graph = built.graph if isinstance(built, Pattern) else built
    if not isinstance(graph, Graph):
        return None
    try:
        return estimated_work(graph)
    except Exception:  # noqa: BLE001
        return None


def _takes(fn, parameter) -> bool:
    try:
        return parameter in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _plan_subject(plan, name) -> Subject:
    data = plan_document(plan) or {}
    og = _plans.operation_graph_of(plan)
    return Subject(og, name, plan=plan, json_graph=data.get("operationGraph") or {})


def device_profile(value, cudnn_version=None):
    """A DeviceProfile from a bundled name ("h100", "h200"), a file path, a DeviceProfile or a finalized DEVICEPROP
    descriptor (None stays None). A bundled one is for ``cudnn_version`` (default: the loaded cuDNN)."""
    if value is None or isinstance(value, DeviceProfile):
        return value
    if isinstance(value, Descriptor) and value.descriptor_type == DescriptorType.CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR:
        return DeviceProfile.from_descriptor(value)
    if isinstance(value, (str, os.PathLike)):
        kind, where = profile_source(value)
        if kind == "file":
            return DeviceProfile.load(where)
        if where not in bundled_profiles():
            raise ValueError(f"device_profile: {where!r} is neither a bundled profile ({', '.join(bundled_profiles())}) "
                             f"nor a file{did_you_mean(where.lower(), bundled_profiles(), listing=False)}")
        return DeviceProfile.bundled(where, cudnn_version)
    raise TypeError(f"device_profile: expected a bundled name ({', '.join(bundled_profiles())}), a file or a "
                    f"DeviceProfile, not {type(value).__name__}")


def graph_summary(op_graph) -> dict:
    """{"tensors": describe_graph rows, "operations": describe_operations rows}: the graph as data for reports
    (from a plan's JSON ``operationGraph`` when given a dict)."""
    if isinstance(op_graph, dict):
        return _json_summary(op_graph)
    return {"tensors": describe_graph(op_graph), "operations": describe_operations(op_graph)}


def _json_summary(data: dict) -> dict:
    tensors, written = [], set()
    parts = graph_parts(data)  # the nodes' own sub-graphs too (a score modifier's bias is an input)
    nodes = [n for g in parts if isinstance(g.get("nodes"), list) for n in g["nodes"]]
    listed = [t for g in parts if isinstance(g.get("tensors"), list) for t in g["tensors"]]
    ops = []
    names = {str(t.get("name")) for t in listed if isinstance(t, dict)}
    for node in nodes:
        if not isinstance(node, dict):
            continue
        refs = {k: v for k, v in node.items() if isinstance(v, str) and v in names and k != "operation"}
        label = str(node.get("operation", "?")).replace("CUDNN_BACKEND_OPERATION_", "").replace("_DESCRIPTOR", "")
        mode = node.get("pointwiseMode") or node.get("mode")
        if isinstance(mode, str):
            label += " " + mode.replace("CUDNN_POINTWISE_", "").replace("CUDNN_", "")
        ops.append({"operation": label, "inputs": ", ".join(f"{k}={v}" for k, v in refs.items()), "outputs": "",
                    "compute": data_type_name(node.get("mathPrec", "-"))})
        written.update(refs.values())
    for t in listed:
        if isinstance(t, dict):
            tensors.append(TensorSpec.from_json(t).row())
    return {"tensors": tensors, "operations": ops}


_COMPUTE_ATTRS = frozenset(int(a) for a in AttributeName if a.name.endswith(("_COMP_TYPE", "_MATH_PREC",
                                                                                "_COMPUTE_DATA_TYPE")))


def _compute_type(op) -> str:
    for value in (op, *[v for v in op.values.values() if isinstance(v, Descriptor)]):
        for attr, v in value.values.items():
            if int(attr) in _COMPUTE_ATTRS and v is not None:
                return data_type_name(v)
    return "-"


def describe_operations(op_graph) -> list[dict]:
    """One row per operation, producers first: label (``ConvolutionForward``, ``Pointwise ADD``), its inputs and
    outputs (``slot=name``) and its compute data type."""
    try:
        ops = topological_order(operations_of(op_graph))
    except Exception:  # noqa: BLE001 - a graph cuDNN accepted but we cannot order: keep its own order
        ops = list(operations_of(op_graph))
    rows = []
    for op in ops:
        ins, outs = [], []
        for slot, t, out in tensor_slots(op):
            (outs if out else ins).append(f"{slot}={tensor_name(t)}")
        rows.append({"operation": operation_label(op), "inputs": ", ".join(ins), "outputs": ", ".join(outs),
                     "compute": _compute_type(op)})
    return rows


def describe_graph(op_graph) -> list[dict]:
    """One row per tensor of the graph: name, UID, shape, strides, data type, role, virtual/by-value."""
    if isinstance(op_graph, Subject):
        op_graph = op_graph.op_graph
    from_ops = operations_of(op_graph)
    rows = {}
    written = set()
    for op in from_ops:
        for _, t, out in tensor_slots(op):
            spec = TensorSpec.from_descriptor(t)
            if out:
                written.add(spec.uid)
            rows.setdefault(spec.uid, (tensor_name(t), spec))
    out = [dataclasses.replace(spec, name=name).row("output" if uid in written else "input")
           for uid, (name, spec) in rows.items()]
    return sorted(out, key=lambda r: r["uid"])
