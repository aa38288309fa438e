"""The fp64 reference evaluator's common ground, below every family (each family module defines the ``Op`` of its
operations and declares them in its ``Family``, ``reference_ops``; ``reference.evaluator`` reads them there).

What part of a tensor an evaluation needs: a ``Request`` is a set of whole trailing blocks.

A tensor of dims ``[d0, ..., d(r-1)]`` split at ``r - depth`` has *outer* dims ``dims[:r-depth]`` and a *block*
``dims[r-depth:]``. A request holds the sorted unique row-major linear indices (``keys``) of the outer
coordinates it needs, each with its whole block; its values are an array ``(len(keys), *block)``. Depth 0 asks
for single elements, depth ``r`` (key 0) for the whole tensor. Rows of a matrix, heads of an attention, filters of
a convolution are blocks, so what an operation pulls back stays a few keys, never one index per element.

``Op`` is one operation ready to evaluate (whole evaluation and the default pull), ``Gather`` elements of one
input, ``Unsupported`` an operation or setting the evaluator cannot compute, ``not_computed`` the Op of an
operation whose outputs it does not compute (with the reason).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["Request", "full", "elements", "merge", "select", "take", "outer_coords", "ravel", "ravel_axes",
           "Unsupported", "Op", "Gather", "not_computed", "as_tuple", "scalar", "real", "needs_of", "element_coords",
           "grid"]

_EMPTY = np.zeros(0, dtype=np.int64)


class Request:
    """Whole blocks of depth ``depth`` at the outer linear indices ``keys`` (sorted, unique, int64)."""

    __slots__ = ("depth", "keys")

    def __init__(self, depth: int, keys):
        self.depth = int(depth)
        self.keys = np.asarray(keys, dtype=np.int64)

    def is_full(self, dims) -> bool:
        return self.depth == len(dims) or len(self.keys) == math.prod(dims[:len(dims) - self.depth])

    def count(self, dims) -> int:
        """How many elements the request covers."""
        return len(self.keys) * math.prod(dims[len(dims) - self.depth:])

    def shape(self, dims) -> tuple:
        """The shape of its values: ``(len(keys), *block)``."""
        return (len(self.keys), *dims[len(dims) - self.depth:])

    def __repr__(self):
        return f"Request(depth={self.depth}, {len(self.keys)} keys)"


def full(dims) -> Request:
    """The whole tensor."""
    return Request(len(dims), np.zeros(1, dtype=np.int64))


def ravel(coords, dims) -> np.ndarray:
    """Row-major linear indices of integer coordinates ``(..., len(dims))`` (in range)."""
    coords = np.asarray(coords, dtype=np.int64)
    if not dims:
        return np.zeros(coords.shape[:-1], dtype=np.int64)
    return ravel_axes(dims, [coords[..., axis] for axis in range(len(dims))])


def ravel_axes(dims, indices) -> np.ndarray:
    """Row-major linear indices from one index array per axis (broadcasting against each other, in range)."""
    lin = np.asarray(indices[0], dtype=np.int64)
    for d, index in zip(dims[1:], indices[1:]):
        lin = lin * d + index
    return lin


def outer_coords(keys, dims, depth) -> np.ndarray:
    """The outer coordinates ``(len(keys), rank - depth)`` of a request's keys."""
    outer = tuple(dims[:len(dims) - depth])
    if not outer:
        return np.zeros((len(keys), 0), dtype=np.int64)
    return np.stack(np.unravel_index(np.asarray(keys, dtype=np.int64), outer), axis=-1).astype(np.int64)


def elements(dims, lin):
    """(Request of the unique elements among ``lin``, inverse): the values of ``lin`` are ``values[inverse]``."""
    keys, inverse = np.unique(np.asarray(lin, dtype=np.int64).ravel(), return_inverse=True)
    return Request(0, keys), inverse.reshape(np.shape(lin))


def _coarsen(dims, request: Request, depth: int) -> np.ndarray:
    """The keys of ``request`` at a larger ``depth`` (the blocks that contain its blocks)."""
    if depth == request.depth:
        return request.keys
    ratio = math.prod(dims[len(dims) - depth:len(dims) - request.depth])
    return np.unique(request.keys // ratio)


def merge(dims, requests) -> Request:
    """One request covering every one of ``requests`` (at the largest depth among them)."""
    requests = [r for r in requests if r is not None]
    if not requests:
        return Request(0, _EMPTY)
    depth = max(r.depth for r in requests)
    if depth == len(dims):
        return full(dims)
    parts = [_coarsen(dims, r, depth) for r in requests]
    keys = parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts))
    merged = Request(depth, keys)
    return full(dims) if merged.is_full(dims) else merged


def select(dims, have: Request, values, want: Request) -> np.ndarray:
    """The values of ``want`` from ``values`` computed for ``have`` (which covers ``want``)."""
    rank = len(dims)
    if want.depth == have.depth and (want.keys is have.keys or np.array_equal(want.keys, have.keys)):
        return values  # the same blocks: nothing to pick
    if want.depth > have.depth:
        raise AssertionError(f"{want} is not covered by {have}")
    ratio = math.prod(dims[rank - have.depth:rank - want.depth])
    block = dims[rank - want.depth:]
    flat = np.asarray(values).reshape(len(have.keys), ratio, *block)
    if have.depth == rank:
        return flat[0, want.keys]
    parent = want.keys // ratio
    pos = np.searchsorted(have.keys, parent)
    if len(parent) and (pos.max() >= len(have.keys) or not np.array_equal(have.keys[pos], parent)):
        raise AssertionError("a request reaches outside what was evaluated")
    return flat[pos, want.keys % ratio]


def take(array, request: Request) -> np.ndarray:
    """The values of ``request`` from a whole array of the tensor's dims."""
    return select(array.shape, full(array.shape), array, request)


class Unsupported(Exception):
    """An operation, or a setting of it, the evaluator cannot compute; the message says why."""


def as_tuple(value) -> tuple:
    """An attribute value as a tuple (a single value set alone is stored bare)."""
    if value is None:
        return ()
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


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


def not_computed(reason):
    """The Op of an operation whose outputs the evaluator does not compute: refuses with ``reason``."""
    class NotComputed(Op):
        def __init__(self, node, graph):
            raise Unsupported(reason)

    return NotComputed
