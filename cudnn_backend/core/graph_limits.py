"""What cuDNN's operation-graph finalize cannot take, refused before it is called (descriptors and plan JSON alike).

cuDNN's graph finalize takes time exponential in the operations that run side by side. Measured offline with
ReLUs and adds (cuDNN 9.10.2, 9.19.0 and 9.28.1 alike):

* *entrance operations*, those that read no tensor another operation writes, triple it each: 12 take 1.4 s, 14 take
  12 s, 15 take 35 s, 16 minutes; 28 exhaust the memory, 31 to 63 abort the process (std::bad_alloc,
  std::length_error);
* operations side by side after one entrance (a fan-out, merged or not) double it each: 20 take 1.9 s, 24 take
  30 s, 28 and more abort.

Short chains cost little (60 operations in a row finalize at once). So a graph is refused where
``3 ** entrances * 2 ** (width - entrances)`` passes ``3 ** 14`` (about 12 s offline), ``width`` being the most
operations at one depth (the length of the longest chain of operations before them).

Long ones cost time quadratic in their length, in a check that recurses once per operation: a chain of 1000 ReLUs
finalizes in 1.2 s on cuDNN 9.28.1, 2000 in 4.9 s, 4000 in 20 s (then 17 s of heuristics), a plan of 60000 nodes
not in minutes; 1500 overflow a 256 KiB thread stack (SIGSEGV). A graph of more than ``MAX_OPERATIONS`` is refused.
"""
from __future__ import annotations

import math
from typing import Iterable

__all__ = ["MAX_ENTRANCE_OPERATIONS", "MAX_OPERATIONS", "MAX_FINALIZE_COST", "graph_shape", "finalize_cost", "graph_problem",
           "TILE_COUNT_WRAP", "WIDEST_TILE", "TILE_COUNT_LOW", "tile_count_problem", "RESAMPLE_EXTENT_LIMIT",
           "resample_extent_problem", "MAX_TENSOR_ELEMENTS", "tensor_extent_words"]

# the most elements a tensor may span (its count, and its largest offset): far beyond any device (an H200 holds 2**37
# bytes), and byte sizes (x 16-byte elements x a vector count) stay in int64. One bound for tensors as they are made
# and as plan JSON gives them: a plan that saves loads back.
MAX_TENSOR_ELEMENTS = 1 << 56


def tensor_extent_words(dims, strides) -> str:
    """Why a tensor past MAX_TENSOR_ELEMENTS is refused (the descriptors' words and plan JSON's)."""
    return (f"dims {list(dims)} with strides {list(strides)} hold or span more than "
            f"2**{MAX_TENSOR_ELEMENTS.bit_length() - 1} elements; no device holds that, and cuDNN's byte offsets "
            "would overflow")


MAX_ENTRANCE_OPERATIONS = 14  # alone: 12 s offline, and each one more about three times as long
MAX_OPERATIONS = 4096  # a chain of them: about 20 s offline (cuDNN 9.28.1), four times as long at twice the length
MAX_FINALIZE_COST = 3 ** MAX_ENTRANCE_OPERATIONS


def graph_shape(operations: Iterable) -> tuple[int, int] | None:
    """(entrance operations, the most operations at one depth) of ``operations``, each (tensors read, tensors
    written) with any hashable tensor keys; None where the operations form a cycle (cuDNN refuses those itself)."""
    ops = [(frozenset(reads), frozenset(writes)) for reads, writes in operations]
    writers = {}
    for index, (_, writes) in enumerate(ops):
        for tensor in writes:
            writers.setdefault(tensor, set()).add(index)
    before = [set().union(*(writers.get(t, ()) for t in reads)) - {index} for index, (reads, _) in enumerate(ops)]
    after = [[] for _ in ops]
    for index, earlier in enumerate(before):
        for op in earlier:
            after[op].append(index)
    waiting = [len(earlier) for earlier in before]
    ready = [index for index, n in enumerate(waiting) if n == 0]
    depth = [0] * len(ops)
    done = 0
    while ready:  # Kahn's order: each operation after those it reads from, at one more than the deepest of them
        op = ready.pop()
        done += 1
        for later in after[op]:
            depth[later] = max(depth[later], depth[op] + 1)
            waiting[later] -= 1
            if waiting[later] == 0:
                ready.append(later)
    if done < len(ops):
        return None
    at_depth = {}
    for d in depth:
        at_depth[d] = at_depth.get(d, 0) + 1
    return at_depth.get(0, 0), max(at_depth.values(), default=0)


def finalize_cost(entrances: int, width: int) -> int:
    """The growth of cuDNN's graph finalize time in a graph's entrances and width (in units of a lone operation)."""
    return 3 ** entrances * 2 ** max(0, width - entrances)


def graph_problem(operations: Iterable) -> str | None:
    """Why cuDNN cannot finalize a graph of ``operations`` (as ``graph_shape`` takes them), else None. A graph of
    at most ``MAX_ENTRANCE_OPERATIONS`` operations is not looked at: it cannot cost more."""
    operations = list(operations)
    if len(operations) <= MAX_ENTRANCE_OPERATIONS:
        return None
    if len(operations) > MAX_OPERATIONS:
        return (f"{len(operations)} operations, more than {MAX_OPERATIONS}: cuDNN's graph finalize takes time "
                "quadratic in a graph's operations (4000 in a chain take 20 s, 60000 not minutes) and recurses once "
                "per operation, so this graph is refused: split it into several")
    shape = graph_shape(operations)
    if shape is None or finalize_cost(*shape) <= MAX_FINALIZE_COST:
        return None
    entrances, width = shape
    return (f"{len(operations)} operations, of which {entrances} {'reads' if entrances == 1 else 'read'} no tensor "
            f"another one writes and {width} run "
            f"side by side at one depth: cuDNN's graph finalize takes time exponential in those (about 3x for each "
            f"entrance and 2x for each other operation side by side; 15 entrances take 35 s, 24 side by side 30 s, "
            f"and 28 or more abort the process), so this graph is refused: split it into several")


# cuDNN's engine configs count the tiles of a GEMM extent (a conv's output positions N*P*Q, a matmul's M) as
# (extent + tile - 1) / tile in 32 bits: an extent within a tile of a multiple of 2^32 wraps to no tile, and the
# finalize divides by it (SIGFPE, offline too). Measured: conv forward engine 72, backward data 78 and matmul 4 of
# cuDNN 9.10.2, 9.26.1 and 9.28.1 (not 9.19.0, 9.22.0), with tiles up to 512.
TILE_COUNT_WRAP = 1 << 32
WIDEST_TILE = 1024  # twice the widest tile seen wrapping
TILE_COUNT_LOW = TILE_COUNT_WRAP - WIDEST_TILE  # the first extent that can wrap


def tile_count_problem(extents) -> str | None:
    """What is wrong with a GEMM's ``extents`` ((what, value) pairs) for cuDNN's tile counts, else None."""
    for what, value in extents:
        if value is None or value < TILE_COUNT_LOW:
            continue
        rest = value % TILE_COUNT_WRAP
        if rest == 0 or rest > TILE_COUNT_LOW:
            return (f"{what} is {value}, within {WIDEST_TILE} of a multiple of 2^32: cuDNN's engine configs count its "
                    "tiles in 32 bits and then divide by zero (SIGFPE in cuDNN 9.10 to 9.28)")
    return None


# cuDNN's resampling (pooling) engine configs compute with the channels and the output positions of one image in
# 32 bits, and divide by what wraps (SIGFPE, offline too). Measured on 9.19.0 and 9.28.1 (max and average pooling):
# channels of 2^31, 2^32 - 1 and 2^32, and output positions from 1.5 * 2^30 to 2^31, 3 * 2^31 and 2^32 crash,
# scattered between values that do not; so every extent from 2^30 on is refused (an image of 32768 x 32768 outputs).
# The backward, and the forward's input positions (2^32 of them), were measured not to crash.
RESAMPLE_EXTENT_LIMIT = 1 << 30


def resample_extent_problem(y_dims, slot="ydesc") -> str | None:
    """What is wrong for cuDNN's 32-bit counts with a resampling's output ``y_dims`` ([N, C, *spatial]; ``slot``
    names it): its channels and the output positions of one image, else None."""
    if y_dims is None or len(y_dims) <= 2:
        return None
    for what, value in (("the channels", y_dims[1]), ("the output positions of one image", math.prod(y_dims[2:]))):
        if value >= RESAMPLE_EXTENT_LIMIT:
            return (f"{what} of {slot} {list(y_dims)} is {value}, 2^30 or more: cuDNN's resampling (pooling) engine "
                    "configs count it in 32 bits and then divide by zero for some such values (SIGFPE in cuDNN 9.19 "
                    "and 9.28); split the tensor")
    return None
