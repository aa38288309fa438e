"""The ``Graph`` builder: ``GraphCore`` (tensors, UIDs, outputs, adding operations, checks and finalize, compiled in
``_core.pyx``) and the ``Graph`` mixin of every operation family (``core.families``: each family module defines its
methods and names its mixin in its ``FAMILY``), so every operation is a ``Graph`` method, patterns are built from
those methods alone, and a new family's methods arrive with its module (no edit here). An operation method that
raises leaves the graph as it was: the tensors and operations it made are forgotten (``_undone_on_error``; the hot
methods of ``GraphCore`` do the same in C).
"""
from __future__ import annotations

import functools

from cudnn_backend.core.families import FAMILIES, GRAPH_MIXINS
from cudnn_backend.graph._core import GraphCore
from cudnn_backend.typed.introspection import graph_tensors, operations_dot, operations_table

__all__ = ["Graph"]


def _undone_on_error(method):
    """``method`` (an operation family's Graph method), with the tensors and operations it made forgotten where it
    raises (a composite one, such as softmax_composite, may have added operations before the one refused)."""
    @functools.wraps(method)
    def undone_on_error(self, *args, **kwargs):
        mark = self._mark()
        try:
            return method(self, *args, **kwargs)
        except BaseException:
            self._rollback(mark)
            raise
    return undone_on_error


class Graph(GraphCore, *GRAPH_MIXINS):
    """Builds an operation graph: tensors, operations (every family a method), checks, finalize.

    ``Graph(name="graph", io_data_type=HALF, intermediate_data_type=FLOAT, compute_data_type=FLOAT)``
    (data types as members, C names or short names like "half", "bfloat16", "float").

    Operation methods return their output tensor (or a dict of tensors): virtual by default (an
    intermediate, ``intermediate_data_type``), a real tensor with ``output=True`` (``io_data_type``), or
    the tensor given as ``output=``; ``output_data_type=`` overrides the type, ``name=`` names it,
    ``compute=`` sets the operation's compute type (default ``compute_data_type``). Every descriptor the
    graph makes stays reachable (``graph.tensors``, ``graph.operations``) and can be inspected before
    ``build()``. The bookkeeping (tensors, outputs, adding operations, the graph checks, finalize) is
    compiled (``graph/_core.pyx``); the families are the mixins.
    """

    def table(self) -> str:
        """A text table of the operations in topological order with their tensors (name, UID, dims, strides, type)."""
        return operations_table(self.operations)

    def to_dot(self) -> str:
        """Graphviz DOT of the dataflow: tensors as ellipses (virtual ones dashed), operations as boxes."""
        return operations_dot(self.operations, self.name)

    def graph_tensors(self) -> dict:
        """{uid: Tensor} of the tensors the operations read or write."""
        return graph_tensors(self.operations)

    def __copy__(self):
        raise TypeError("cannot copy a Graph: its tensors and operations are live cuDNN descriptors shared with the "
                        "original; build the graph again (a function that builds it is the way to copy it)")

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __reduce__(self):
        raise TypeError("cannot pickle a Graph: it holds live cuDNN descriptors; pickle the function (and arguments) "
                        "that builds it")

    def __repr__(self):
        state = "built" if self.built else "not built"
        return f"<Graph {self.name!r}: {len(self.operations)} operations, {len(self.tensors)} tensors, {state}>"


for _name in sorted({m for family in FAMILIES for m in family.graph_methods} - set(dir(GraphCore))):
    _method = next((vars(mixin)[_name] for mixin in GRAPH_MIXINS if _name in vars(mixin)), None)
    if callable(_method):
        setattr(Graph, _name, _undone_on_error(_method))
