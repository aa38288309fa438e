"""The operations' common ground: the registry of operation types, ``Op`` (whole evaluation and the default pull),
``Unsupported``, and the broadcast rule (a size-1 dim is read for every index of the output's dim)."""
from __future__ import annotations

import math

import numpy as np

from cudnn_backend._bindings.enums import DescriptorType
from cudnn_backend.core.families.pointwise import broadcasts_to
from cudnn_backend.reference._blocks import Request, elements, full, outer_coords, ravel, take

__all__ = ["Unsupported", "Op", "register", "REGISTRY", "broadcast_keys", "check_broadcast", "scalar", "real", "Gather",
           "needs_of", "element_coords", "grid", "pick"]

REGISTRY: dict = {}  # DescriptorType value -> Op subclass


class Unsupported(Exception):
    """An operation, or a setting of it, the evaluator cannot compute; the message says why."""


def register(*names):
    """Class decorator: the Op for the operation types ``CUDNN_BACKEND_OPERATION_<name>_DESCRIPTOR``."""
    def deco(cls):
        for name in names:
            REGISTRY[int(DescriptorType[f"CUDNN_BACKEND_OPERATION_{name}_DESCRIPTOR"])] = cls
        return cls
    return deco


def real(value, what) -> float:
    """An attribute value as a float (Unsupported when it is not a number)."""
    if isinstance(value, (tuple, list)) and len(value) == 1:
        value = value[0]
    try:
        return float(value)
    except (TypeError, ValueError):
        raise Unsupported(f"{what} is {value!r}, not a number") from None


def scalar(values, uid) -> float:
    """A tensor's single value (a by-value scalar or an all-ones-dims tensor) as a float."""
    v = np.asarray(values[uid]).reshape(-1)
    if v.size != 1:
        raise Unsupported(f"uid {uid} should hold one value, not {v.size}")
    return float(v[0])


def check_broadcast(in_dims, out_dims, what):
    """Unsupported unless ``in_dims`` broadcasts to ``out_dims`` (same rank; each dim equal or 1)."""
    if not broadcasts_to(in_dims, out_dims):  # the pointwise family's one broadcast rule
        raise Unsupported(f"{what} {list(in_dims)} does not broadcast to {list(out_dims)} (same rank, dims equal "
                          "or 1)")


def broadcast_keys(out_dims, want: Request, in_dims):
    """(request of the input, inverse): the blocks of a broadcast input that the output's ``want`` reads; the
    input's values ``v`` give, per wanted output block, ``v[inverse]`` (broadcasting over the block); inverse is
    None when the input's blocks are the output's (``v`` as it is)."""
    rank, depth = len(out_dims), want.depth
    if depth == rank:
        return full(in_dims), np.zeros(1, dtype=np.int64)
    if tuple(in_dims[:rank - depth]) == tuple(out_dims[:rank - depth]):
        return want, None
    coords = outer_coords(want.keys, out_dims, depth)
    outer_in = tuple(in_dims[:rank - depth])
    for axis, d in enumerate(outer_in):
        if d == 1:
            coords[:, axis] = 0
    keys = ravel(coords, outer_in)
    unique, inverse = np.unique(keys, return_inverse=True)
    return Request(depth, unique), inverse


def pick(values, inverse):
    """``values[inverse]``, or ``values`` when inverse is None (``broadcast_keys``' identity)."""
    return values if inverse is None else values[inverse]


class Op:
    """One operation of the graph, ready to evaluate. Subclasses read their attributes in ``__init__`` (raising
    ``Unsupported``) and compute the whole operation in ``dense``; those whose outputs can be computed at a few
    coordinates from a few input blocks also override ``pull``."""

    def __init__(self, node, graph):
        self.node = node
        self.graph = graph
        self.blend = {}  # output uid -> (alpha, beta): out = alpha * result + beta * the output's prior value

    # -- the graph ----------------------------------------------------------------------------------------------
    def dims(self, uid) -> tuple:
        return self.graph.tensors[uid].dims

    def info(self, uid):
        return self.graph.tensors[uid]

    def need(self, keyword):
        """The UID in slot ``keyword``; Unsupported when the slot is empty."""
        uid = self.node.uid(keyword)
        if uid is None:
            raise Unsupported(f"its {keyword} tensor is not set")
        return uid

    def refuse_set(self, *keywords, why="not modelled"):
        """Unsupported when any of these attributes (or tensor slots) is set (to anything but 0, false or empty)."""
        for kw in keywords:
            value = self.node.attr(kw)
            if not (value is None or isinstance(value, (bool, int, float, tuple)) and value in ((), False, 0)):
                raise Unsupported(f"{kw} is set ({why})")

    @property
    def inputs(self) -> list:
        return self.node.inputs

    @property
    def outputs(self) -> list:
        return self.node.outputs

    def work(self) -> float:
        """Rough multiply-adds of the whole operation (decides whole against sampled evaluation)."""
        return float(sum(math.prod(self.dims(u)) for u in set(self.inputs) | set(self.outputs)))

    # -- evaluation ---------------------------------------------------------------------------------------------
    def dense(self, values) -> dict:
        """{output uid: float64 array of its dims} from {input uid: float64 array of its dims}."""
        raise NotImplementedError

    def pull(self, wanted, cheap):
        """(needs, finish): ``needs`` {input uid: Request} for the outputs' ``wanted`` {uid: Request}; ``finish``
        maps {input uid: values of its request} to {output uid: values of its wanted request}. ``cheap(uid)``
        tells whether a tensor is already whole (a graph input), so asking for all of it costs nothing.
        The default evaluates the whole operation."""
        needs = {u: full(self.dims(u)) for u in self.inputs}

        def finish(values):
            out = self.dense({u: np.asarray(v).reshape(self.dims(u)) for u, v in values.items()})
            return {u: take(out[u], r) for u, r in wanted.items()}

        return needs, finish

    def all_whole(self, wanted) -> bool:
        """True when every wanted output is whole (then ``dense`` is the cheapest way)."""
        return all(r.is_full(self.dims(u)) for u, r in wanted.items())


class Gather:
    """Elements of one input at linear indices ``lin`` (any shape, in range): the whole tensor when it is already
    whole (``whole``), else the unique elements. ``request`` goes into the op's needs; calling it with the
    finish's values gives the elements shaped like ``lin``."""

    def __init__(self, uid, dims, lin, whole):
        self.uid, self.lin = uid, np.asarray(lin, dtype=np.int64)
        if whole:
            self.request, self.inverse = full(dims), None
        else:
            self.request, self.inverse = elements(dims, self.lin)

    def __call__(self, values) -> np.ndarray:
        flat = np.asarray(values[self.uid]).reshape(-1)
        return flat[self.lin] if self.inverse is None else flat[self.inverse]


def needs_of(*gathers) -> dict:
    """{uid: request} of gathers (one per uid)."""
    out = {}
    for g in gathers:
        if g.uid in out:
            raise AssertionError(f"uid {g.uid} gathered twice")
        out[g.uid] = g.request
    return out


def element_coords(dims, want: Request) -> np.ndarray:
    """Every element coordinate ``(count, rank)`` a request covers, its keys' blocks in order."""
    rank, depth = len(dims), want.depth
    block = math.prod(dims[rank - depth:])
    lin = (want.keys[:, None] * block + np.arange(block, dtype=np.int64)[None, :]).reshape(-1)
    return outer_coords(lin, dims, 0)


def grid(dims, want: Request) -> list:
    """Per axis, the coordinates of a request's elements as arrays broadcastable to ``want.shape(dims)``."""
    rank, depth = len(dims), want.depth
    outer = outer_coords(want.keys, dims, depth)
    out = []
    for axis in range(rank):
        shape = [1] * (depth + 1)
        if axis < rank - depth:
            shape[0] = len(want.keys)
            out.append(outer[:, axis].reshape(shape))
        else:
            shape[1 + axis - (rank - depth)] = dims[axis]
            out.append(np.arange(dims[axis], dtype=np.int64).reshape(shape))
    return out
