"""What part of a tensor an evaluation needs: a ``Request`` is a set of whole trailing blocks.

A tensor of dims ``[d0, ..., d(r-1)]`` split at ``r - depth`` has *outer* dims ``dims[:r-depth]`` and a *block*
``dims[r-depth:]``. A request holds the sorted unique row-major linear indices (``keys``) of the outer
coordinates it needs, each with its whole block; its values are an array ``(len(keys), *block)``. Depth 0 asks
for single elements, depth ``r`` (key 0) for the whole tensor. Rows of a matrix, heads of an attention, filters of
a convolution are blocks, so what an operation pulls back stays a few keys, never one index per element.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["Request", "full", "elements", "merge", "select", "take", "outer_coords", "ravel", "ravel_axes"]

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
