"""What the main job accepts as "a graph": a finalized operation graph (built with any API), a ``Graph``, a
``Pattern``, a builder reference ``"file.py:func"`` / ``"package.module:func"``, or a saved plan; and device
profiles by name or file."""
from __future__ import annotations

import importlib
import importlib.util
import os
import pathlib
import sys
from dataclasses import dataclass, field

from cudnn_backend._bindings.enums import AttributeName, DataType, DescriptorType
from cudnn_backend.core._descriptor import Descriptor
from cudnn_backend.graph import Graph
from cudnn_backend.patterns import CATALOGUE, Pattern
from cudnn_backend.runtime.engines import check_graph
from cudnn_backend.runtime.profiles import DeviceProfile, bundled_profiles
from cudnn_backend.typed.introspection import signature_of, tensor_name, tensor_slots

__all__ = ["Subject", "resolve", "load_builder", "device_profile", "describe_graph", "operations_of"]


@dataclass
class Subject:
    """A graph to explore: the finalized operation graph, and what is known about it."""

    op_graph: object
    name: str
    graph: Graph | None = None
    pattern: Pattern | None = None
    params: dict = field(default_factory=dict)

    @property
    def reference(self):
        return self.pattern.reference if self.pattern is not None else None


def load_builder(ref: str):
    """The function ``ref`` names: ``"path/to/file.py:func"`` or ``"package.module:func"``."""
    if not isinstance(ref, str) or ":" not in ref:
        raise ValueError(f"graph: {ref!r} is not FILE.py:FUNC or module:FUNC")
    target, _, func = ref.rpartition(":")
    if not func.isidentifier():
        raise ValueError(f"graph: {func!r} in {ref!r} is not a function name")
    if target.endswith(".py") or os.sep in target or "/" in target:
        path = pathlib.Path(target)
        if not path.is_file():
            raise ValueError(f"graph: {target!r} is not a file")
        name = f"cudnn_backend_user_graph_{abs(hash(str(path.resolve())))}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as e:
            sys.modules.pop(name, None)
            raise ValueError(f"graph: importing {target!r} failed: {type(e).__name__}: {e}") from e
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as e:
            raise ValueError(f"graph: cannot import {target!r}: {e}") from e
    fn = getattr(module, func, None)
    if not callable(fn):
        raise ValueError(f"graph: {target!r} has no function {func!r}")
    return fn


def resolve(graph, *, handle=None, args=(), kwargs=None, name=None) -> Subject:
    """A Subject from a Graph, a Pattern, a finalized operation graph, a pattern name of the catalogue, or a
    builder reference (called with ``args``/``kwargs``; it returns any of the others)."""
    kwargs = kwargs or {}
    if isinstance(graph, str):
        fn = CATALOGUE.get(graph)
        if fn is None:
            fn = load_builder(graph)
        built = fn(*args, **kwargs)
        return resolve(built, handle=handle, name=name or graph)
    if isinstance(graph, Pattern):
        og = graph.graph.op_graph if graph.built else graph.build(handle)
        return Subject(og, name or graph.name, graph.graph, graph, dict(graph.params))
    if isinstance(graph, Graph):
        og = graph.op_graph if graph.built else graph.build(handle)
        return Subject(og, name or graph.name, graph)
    if isinstance(graph, Descriptor):
        check_graph(graph, "graph")
        return Subject(graph, name or "operation graph")
    raise TypeError(f"graph: expected a Graph, a Pattern, a finalized OperationGraph descriptor, a pattern name or "
                    f"FILE.py:FUNC, not {type(graph).__name__}")


def device_profile(value):
    """A DeviceProfile from a bundled name ("h100", "h200"), a file path, or a DeviceProfile (None stays None)."""
    if value is None or isinstance(value, DeviceProfile):
        return value
    if isinstance(value, Descriptor) and value.descriptor_type == DescriptorType.CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR:
        return value
    if isinstance(value, (str, os.PathLike)):
        text = os.fspath(value)
        if text.lower() in bundled_profiles():
            return DeviceProfile.bundled(text.lower())
        return DeviceProfile.load(text)
    raise TypeError(f"device_profile: expected a bundled name ({', '.join(bundled_profiles())}), a file or a "
                    f"DeviceProfile, not {type(value).__name__}")


def describe_graph(subject: Subject) -> list[dict]:
    """One row per tensor of the graph: name, UID, shape, strides, data type, role, virtual/by-value."""
    from_ops = operations_of(subject.op_graph)
    rows = {}
    written = set()
    for op in from_ops:
        for _, t, out in tensor_slots(op):
            sig = signature_of(t)
            if out:
                written.add(sig[0])
            rows.setdefault(sig[0], (t, sig))
    out = []
    for uid, (t, sig) in rows.items():
        role = "virtual" if sig[4] else ("scalar" if sig[5] else ("output" if uid in written else "input"))
        out.append({"name": tensor_name(t), "uid": uid, "dims": list(sig[1]), "strides": list(sig[2]),
                    "data_type": _dt_name(sig[3]), "role": role})
    return out


def operations_of(op_graph) -> tuple:
    """The operations of a finalized operation graph, typed or generic."""
    ops = getattr(op_graph, "operations", None)
    if ops is None:
        ops = op_graph.values.get(AttributeName.CUDNN_ATTR_OPERATIONGRAPH_OPS, ())
    return tuple(ops) if isinstance(ops, (tuple, list)) else (ops,)


def _dt_name(value):
    try:
        return DataType(int(value)).name.replace("CUDNN_DATA_", "").lower()
    except (TypeError, ValueError):
        return str(value)
