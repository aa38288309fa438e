"""Operation graphs built from Python: the ``Graph`` builder (every operation family a method), shapes and
the graph checks."""
from cudnn_backend.errors import GraphError
from cudnn_backend.graph import shapes
from cudnn_backend.graph._graph import Graph
from cudnn_backend.graph.checks import check_operations
from cudnn_backend.typed.uids import UidAllocator, default_uids

__all__ = ["Graph", "GraphError", "check_operations", "shapes", "UidAllocator", "default_uids"]
