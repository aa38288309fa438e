"""``Pattern``: a ready-made graph, its important tensors by name, and (where the math is known) an fp32
reference of what it computes."""
from __future__ import annotations

import enum
import functools
import inspect

from cudnn_backend._bindings.enums import DataType
from cudnn_backend.core._coerce import as_int
from cudnn_backend.core.families._build import as_data_type, flags_checked
from cudnn_backend.core.names import data_type_name
from cudnn_backend.core.plain import LiveObject
from cudnn_backend.graph import Graph
from cudnn_backend.runtime import heuristics as _heuristics
from cudnn_backend.typed import TensorBase, TypedDescriptor

__all__ = ["Pattern", "size", "finish", "pattern_function"]


def size(value, what, minimum=1) -> int:
    """A pattern's size parameter: an exact int >= ``minimum`` (ValueError/TypeError naming the parameter)."""
    return as_int(value, what, minimum, (1 << 63) - 1)  # cuDNN sizes are int64


def pattern_function(function):
    """The pattern ``function`` with its flags checked (``flags_checked``) and every argument it was called with, its
    defaults too (``build`` aside), in the Pattern's ``params`` where the function put none of that name: the
    arguments that made the graph, whole (data types by name, other enums by member name)."""
    checked = flags_checked(function)
    signature = inspect.signature(function)

    @functools.wraps(function)
    def pattern(*args, **kwargs):
        made = checked(*args, **kwargs)
        arguments = signature.bind(*args, **kwargs)
        arguments.apply_defaults()
        for name, value in arguments.arguments.items():
            if name != "build" and name not in made.params:
                made.params[name] = _plain(value, signature.parameters[name].default)
        return made

    return pattern


def _plain(value, default):
    """An argument as ``params`` keeps it: a data type (where the default is one: a member, a name, a dtype) by its
    short name, another enum by its member's name."""
    if isinstance(default, DataType) and value is not None:
        return data_type_name(as_data_type(value))
    if isinstance(value, enum.Enum):
        return value.name
    return value


class Pattern(LiveObject):
    """A pattern's Graph and its important tensors by name; ``op_graph`` once built.

    ``graph, tensors = pattern`` unpacks it; ``pattern.y`` / ``pattern["y"]`` name tensors; ``params`` are
    the arguments it was made with; ``reference(inputs)`` (where the math is known) computes its outputs
    in fp32 from ``{name: torch tensor}`` (``reference`` is None otherwise).
    """

    def __init__(self, name: str, graph: Graph, tensors: dict, *, notes: str = "", params: dict | None = None,
                 reference=None):
        self.name = name
        self.graph = graph
        self.tensors = {k: v for k, v in tensors.items() if v is not None}
        self.notes = notes
        self.params = dict(params or {})
        self.reference = reference

    # -- access ----------------------------------------------------------------------------------
    def __iter__(self):
        return iter((self.graph, self.tensors))

    def __getitem__(self, name) -> TensorBase:
        try:
            return self.tensors[name]
        except KeyError:
            raise KeyError(f"pattern {self.name!r} has no tensor {name!r}; it has {', '.join(self.tensors)}") from None
        except TypeError:  # (an unhashable key)
            raise TypeError(f"a pattern's tensors are named by str, not {type(name).__name__}") from None

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        tensors = self.__dict__.get("tensors", {})
        if name in tensors:
            return tensors[name]
        raise AttributeError(f"pattern {self.__dict__.get('name')!r} has no tensor {name!r}; it has "
                             f"{', '.join(tensors)}")

    @property
    def op_graph(self):
        """The finalized OperationGraph (None until ``build()``)."""
        return self.graph.op_graph

    @property
    def built(self) -> bool:
        """Whether the operation graph has been finalized (and is open)."""
        return self.graph.built

    @property
    def operations(self) -> list:
        """The graph's operation descriptors, in the order they were added."""
        return list(self.graph.operations)

    def outputs(self) -> dict:
        """{name: tensor} of the named tensors the graph writes and keeps (real, not virtual)."""
        written = {sig[0] for slots in self.graph.slots for _, _, sig, out in slots if out}
        return {n: t for n, t in self.tensors.items() if not t.virtual and t.uid in written}

    def inputs(self) -> dict:
        """{name: tensor} of the named real tensors the graph reads and does not write (by-value scalars too)."""
        outs = {t.uid for t in self.outputs().values()}
        return {n: t for n, t in self.tensors.items() if not t.virtual and t.uid not in outs}

    def descriptors(self) -> list:
        """Every descriptor this pattern created: operations, their child descriptors and tensors, each once."""
        seen, out = set(), []

        def visit(d):
            if not isinstance(d, TypedDescriptor) or id(d) in seen:
                return
            seen.add(id(d))
            out.append(d)
            for value in d.values.values():
                for v in value if isinstance(value, tuple) else (value,):
                    visit(v)

        for op in self.graph.operations:
            visit(op)
        for t in self.graph.tensors.values():
            visit(t)
        return out

    # -- finalize and engines ------------------------------------------------------------------------
    def build(self, handle=None, **options):
        """Finalize the OperationGraph (idempotent); ``options``: ``Graph.build``'s (``mode``, ``override_shapes``:
        make the pattern with ``build=False`` to choose them)."""
        return self.graph.build(handle, **options)

    def heuristics(self, mode="A", device_profile=None) -> list:
        """``get_configs`` of the built graph: cuDNN's engine configs in ``mode``, best first."""
        return _heuristics.get_configs(self.build(), mode, device_profile)

    def engine_config_counts(self, device_profile=None, modes=("A", "FALLBACK")) -> dict:
        """{mode: number of engine configs heuristics return} for the built graph."""
        return _heuristics.engine_config_counts(self.build(), device_profile, modes)

    def why_no_engine(self, device_profile=None, modes=("A", "FALLBACK")) -> str:
        """cuDNN's own reasons (its warning log) why heuristics find no engine for the built graph."""
        return _heuristics.why_no_engine(self.build(), device_profile, modes)

    def table(self) -> str:
        """``Graph.table()`` of the pattern's graph: operations in order with their tensors."""
        return self.graph.table()

    def to_dot(self) -> str:
        """``Graph.to_dot()`` of the pattern's graph (Graphviz DOT)."""
        return self.graph.to_dot()

    _INSTEAD = "its name and params are its plain data: call the pattern function again"  # (LiveObject)

    def __repr__(self):
        state = "built" if self.built else "not built"
        return (f"<Pattern {self.name!r}: {len(self.graph.operations)} operations, tensors "
                f"{', '.join(self.tensors)} ({state})>")


def finish(name, g, tensors, build, **kwargs) -> Pattern:
    """A ``Pattern`` of graph ``g`` and its named tensors, built (finalized) when ``build`` is true."""
    p = Pattern(name, g, tensors, **kwargs)
    if build:
        p.build()
    return p
