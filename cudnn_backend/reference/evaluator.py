"""``evaluate`` and ``unsupported``: the graph read from its own descriptors, evaluated in float64 whole or at a
random sample of output coordinates; ``estimated_work``: its multiply-adds as each operation's family counts them.

Sampled evaluation pulls back, operation by operation from the outputs to the inputs, only the blocks of each
tensor that the sampled coordinates need (``core.families._reference.Request``: rows, filters, heads, single elements), then
computes forward exactly those. Every output that is small enough is evaluated whole in the same pass.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from cudnn_backend._bindings.enums import DataType
from cudnn_backend.core._descriptor import Descriptor
from cudnn_backend.core.families import REFERENCE_OPS
from cudnn_backend.core.families._reference import Op, Request, Unsupported, full, merge, outer_coords, select, take
from cudnn_backend.core.names import data_type_name
from cudnn_backend.errors import GraphError, ReferenceUnsupportedError
from cudnn_backend.reference._graph import read_graph
from cudnn_backend.typed.arrays import as_stored, storage_dtype
from cudnn_backend.typed.introspection import signature_of

__all__ = ["ReferenceResult", "evaluate", "unsupported", "estimated_work", "DEFAULT_MAX_ELEMENTS",
           "DEFAULT_MAX_WORK", "DEFAULT_SAMPLES"]

DEFAULT_MAX_ELEMENTS = 1 << 20
DEFAULT_MAX_WORK = 1 << 28
DEFAULT_SAMPLES = 1024
WHOLE = "fp64 reference"


@dataclass
class ReferenceResult:
    """What ``evaluate`` computed, in float64.

    ``outputs``: {uid: array of the tensor's dims} of every non-virtual output evaluated whole;
    ``samples``: {uid: (coords int64 (N, rank), values float64 (N,))} of the outputs evaluated at N random
    coordinates; ``method``: "fp64 reference" or "sampled fp64 reference (N points)"; ``names``: {uid: name}
    and ``dims``: {uid: dims} of every output (``values`` and ``take`` take a UID or the tensor). Each input, each
    output, and each real tensor an operation reads back, holds what its data type
    stores: computed (or given) in float64, then, for fp8, integers and booleans, rounded and saturated as the GPU
    converts (``arrays.as_stored``); fp16, bfloat16 and fp32 keep float64's precision (their rounding is below any
    check's tolerance) but overflow to infinity. Tolerances are the caller's.
    """

    outputs: dict = field(default_factory=dict)
    samples: dict = field(default_factory=dict)
    method: str = WHOLE
    names: dict = field(default_factory=dict)
    dims: dict = field(default_factory=dict)

    @staticmethod
    def _uid(key):
        """An output's UID from a UID or a tensor descriptor (as ``evaluate``'s inputs are keyed)."""
        return signature_of(key).uid if isinstance(key, Descriptor) else key

    def values(self, uid) -> np.ndarray:
        """The reference's values of output ``uid`` (a UID or the tensor): the whole array, or the sampled values."""
        uid = self._uid(uid)
        if uid in self.outputs:
            return self.outputs[uid]
        if uid in self.samples:
            return self.samples[uid][1]
        raise KeyError(f"uid {uid} is no output of this result (outputs: {sorted(self.names)})")

    def take(self, uid, actual) -> np.ndarray:
        """The elements of ``actual`` (an array-like of output ``uid``'s dims, logical order) that
        ``values(uid)`` holds, as float64: the whole array, or its elements at the sampled coordinates."""
        uid = self._uid(uid)
        reference = self.values(uid)
        a = np.asarray(actual)
        dims = self.dims.get(uid, reference.shape if uid in self.outputs else None)
        if dims is not None and a.shape != tuple(dims):
            raise ValueError(f"actual: shape {a.shape} is not output uid {uid}'s dims {tuple(dims)}")
        if uid in self.outputs:
            return a.astype(np.float64)
        coords = self.samples[uid][0]
        if a.ndim != coords.shape[1]:
            raise ValueError(f"actual: {a.ndim} dims, output uid {uid} has {coords.shape[1]}")
        return a[tuple(coords.T)].astype(np.float64)


def _check_layouts(node, graph):
    """Unsupported when the operation reads or writes a tensor whose elements are not the scalars its dims and
    strides say: vectorized (a vector of several values at each position) or ragged (rows of their own lengths, at
    the offsets another tensor holds). And when it reads a graph input stored reordered (cuDNN's tiled layouts:
    INT8x32, F16x16, F8_128x4): its strides do not say where each element lies, so its values cannot be laid out in
    memory as cuDNN reads them. (A reordered tensor the graph computes is computed here like any other.)"""
    for uid in dict.fromkeys(node.inputs + node.outputs):
        spec = graph.tensors[uid]
        if spec.vector_count > 1:
            raise Unsupported(f"{spec.name} is vectorized ({spec.vector_count} values at each position along dim "
                              f"{spec.vectorized_dimension}): the reference computes one value per position")
        if uid in graph.ragged:
            raise Unsupported(f"{spec.name} is ragged (its rows' offsets in {graph.ragged[uid].name}, uid "
                              f"{graph.ragged[uid].uid}): the reference computes dense tensors only")
        if not spec.virtual and spec.data_type is not None and spec.data_type not in _HELD:
            raise Unsupported(f"{spec.name} is {data_type_name(spec.data_type)}, whose stored values the reference "
                              "has no encoding for (it would compute with values the tensor cannot hold)")
    for uid in node.inputs:
        spec = graph.tensors[uid]
        if uid in graph.producer or spec.virtual or not spec.tiled:
            continue
        layout = spec.reordering.name.removeprefix("CUDNN_TENSOR_REORDERING_")
        raise Unsupported(f"{spec.name} is stored in cuDNN's {layout} tiled layout, which its strides do not "
                          "describe: its values cannot be laid out for it")


def _ops(graph):
    """(the evaluable operations producers first, one line per operation that is not: its name and why)."""
    ops, lines = [], []
    for node in graph.nodes:
        try:
            cls = REFERENCE_OPS.get(int(node.kind))
            if cls is None:
                raise Unsupported("no reference for this operation type")
            _check_layouts(node, graph)
            ops.append(cls(node, graph))
        except Unsupported as e:
            lines.append(_line(node, graph, e))
    return ops, lines


def estimated_work(op_graph) -> float:
    """Rough multiply-adds of a graph: each operation's own estimate, from its family's reference op
    (``Op.work``); an operation without one, or one the reference does not model, counts the elements it reads and
    writes. ``op_graph`` as ``unsupported`` takes it (a ``Graph`` not built yet is read as it stands)."""
    graph = read_graph(op_graph)
    total = 0.0
    for node in graph.nodes:
        cls = REFERENCE_OPS.get(int(node.kind), Op)
        try:
            op = cls(node, graph)
        except Unsupported:
            op = Op(node, graph)
        total += op.work()
    return total


def _line(node, graph, reason) -> str:
    writes = ", ".join(graph.tensors[u].name for u in node.outputs)
    return f"{node.label} (operation {node.index}{', writes ' + writes if writes else ''}): {reason}"


def unsupported(op_graph) -> list:
    """One line per operation of ``op_graph`` the evaluator cannot compute, naming it and why; [] when every
    operation is computable (``evaluate`` raises ``ReferenceUnsupportedError`` with these lines otherwise); for a
    graph whose operations are unknown (read back from cuDNN, as a loaded plan's) the one line says so.
    ``op_graph``: a finalized OperationGraph (any API), a ``Graph`` or a ``Pattern`` (one not built yet is read as it
    stands, not built)."""
    try:
        graph = read_graph(op_graph)
    except GraphError as e:  # a graph read back from cuDNN: no operation is known, none can be computed
        return [str(e)]
    return _ops(graph)[1]


def _uid_of(key, graph) -> int:
    if isinstance(key, Descriptor):
        key = signature_of(key).uid
    if isinstance(key, bool) or not isinstance(key, numbers.Integral):
        raise TypeError(f"inputs: a key is a tensor UID (int) or a tensor descriptor, not {type(key).__name__}")
    uid = int(key)
    if uid not in graph.tensors:
        raise ValueError(f"inputs: uid {uid} is no tensor of the graph (its tensors: "
                         f"{', '.join(t.describe() for t in graph.tensors.values())})")
    return uid


def _as_array(value, info) -> np.ndarray:
    what = f"inputs[{info.uid}] ({info.name})"
    try:
        a = np.asarray(value)
    except Exception as e:  # noqa: BLE001 - any array-like that numpy cannot read
        raise TypeError(f"{what}: cannot read an array from {type(value).__name__} ({e})") from None
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{what}: dtype {a.dtype} is not a real number type")
    if info.by_value and a.size == 1:
        a = a.reshape(info.dims)
    if tuple(a.shape) != tuple(info.dims):
        raise ValueError(f"{what}: shape {list(a.shape)} is not the tensor's dims {list(info.dims)} (logical order)")
    return a  # kept in its own dtype: only the elements an evaluation pulls back become float64 (``_take``)


def _inputs(graph, ops, inputs) -> dict:
    """{uid: array (its own dtype)} of every input the graph reads (and every output prior an operation blends in)."""
    if not isinstance(inputs, dict):
        raise TypeError(f"inputs: expected a dict {{uid: array}}, not {type(inputs).__name__}")
    priors = {u for op in ops for u, (_, beta) in op.blend.items() if beta != 0}
    needed = set(graph.inputs) | priors
    given = {}
    for key, value in inputs.items():
        uid = _uid_of(key, graph)
        info = graph.tensors[uid]
        if uid in given:
            raise ValueError(f"inputs: uid {uid} ({info.name}) is given twice")
        if info.virtual:
            raise ValueError(f"inputs: uid {uid} ({info.name}) is a virtual tensor (an intermediate), not an input")
        if uid not in needed:
            raise ValueError(f"inputs: uid {uid} ({info.name}) is an output the graph writes, not an input (an "
                             "operation reads an output's prior value only when its beta is not 0)")
        given[uid] = _as_array(value, info)
    missing = []
    for uid in sorted(needed - set(given)):
        info = graph.tensors[uid]
        if info.by_value and info.value is not None:
            given[uid] = np.full(info.dims, float(info.value), dtype=np.float64)
        elif info.virtual:
            missing.append(f"{info.describe()} is virtual and no operation writes it")
        else:
            prior = " (the prior value of an output blended with beta)" if uid in priors else ""
            missing.append(info.describe() + prior)
    if missing:
        raise ValueError("inputs: missing " + "; ".join(missing))
    return given


def _sample(dims, n, rng) -> Request:
    """``n`` distinct random elements of a tensor of ``dims``."""
    keys = rng.choice(math.prod(dims), size=n, replace=False)
    return Request(0, np.sort(np.asarray(keys, dtype=np.int64)))


def evaluate(op_graph, inputs, *, max_elements=DEFAULT_MAX_ELEMENTS, samples=DEFAULT_SAMPLES, seed=0,
             max_work=DEFAULT_MAX_WORK) -> ReferenceResult:
    """The fp64 reference of ``op_graph`` on ``inputs``.

    ``op_graph``: a finalized OperationGraph built with any API, a ``Graph`` or a ``Pattern`` (one not built yet
    is read as it stands: building it here, without the handle its plans will run with, would spoil them).
    ``inputs``: {uid (or tensor descriptor): array-like of the tensor's dims in logical order, any real dtype} for
    every non-virtual tensor the graph reads; by-value scalars default to their recorded values (a
    number suffices for one). Every non-virtual output is evaluated whole when each has at most ``max_elements``
    elements and the graph's estimated work is at most ``max_work`` multiply-adds; otherwise each output larger
    than ``samples`` elements is evaluated exactly at ``samples`` distinct random coordinates (``seed``), pulling
    back only the input blocks those coordinates need, and the others whole. Refuses (ValueError/TypeError naming
    the uid and tensor) a missing, unknown, virtual, output or misshapen input, and (``ReferenceUnsupportedError``)
    a graph with an operation ``unsupported`` names."""
    for name, v in (("max_elements", max_elements), ("max_work", max_work)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not v >= 0:  # (NaN too: it compares false)
            raise ValueError(f"{name}: expected a number >= 0, not {v!r}")
    if isinstance(samples, bool) or not isinstance(samples, numbers.Integral) or samples < 1:
        raise ValueError(f"samples: expected an integer >= 1, not {samples!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
        raise ValueError(f"seed: expected an integer >= 0 or None, not {seed!r}")
    graph = read_graph(op_graph)
    ops, lines = _ops(graph)
    if lines:
        raise ReferenceUnsupportedError("the fp64 reference cannot compute:\n  " + "\n  ".join(lines))
    arrays = _inputs(graph, ops, inputs)
    outputs = graph.outputs
    dims = {u: graph.tensors[u].dims for u in graph.tensors}
    whole = all(math.prod(dims[u]) <= max_elements for u in outputs) and sum(op.work() for op in ops) <= max_work
    rng = np.random.default_rng(seed)
    asked = {}
    for u in outputs:
        n = math.prod(dims[u])
        asked[u] = full(dims[u]) if whole or n <= samples else _sample(dims[u], int(samples), rng)
    store = _run(ops, graph, arrays, asked, dims)
    result = ReferenceResult(names={u: graph.tensors[u].name for u in outputs},
                             dims={u: tuple(dims[u]) for u in outputs})
    for u in outputs:
        have, values = store[u]
        if have.is_full(dims[u]):
            result.outputs[u] = select(dims[u], have, values, full(dims[u])).reshape(dims[u])
        else:
            coords = outer_coords(asked[u].keys, dims[u], 0)
            result.samples[u] = (coords, select(dims[u], have, values, asked[u]).reshape(-1))
    if result.samples:
        result.method = f"sampled fp64 reference ({int(samples)} points)"
    return result


def _has_storage(data_type) -> bool:
    try:
        storage_dtype(data_type)
    except TypeError:
        return False
    return True


_HELD = frozenset(dt for dt in DataType if _has_storage(dt))  # types whose stored values are known here
# rounding to these moves a value less than any check's tolerance: only their range is applied (past it, infinity)
_FINE = frozenset({DataType.CUDNN_DATA_HALF, DataType.CUDNN_DATA_BFLOAT16, DataType.CUDNN_DATA_FLOAT,
                   DataType.CUDNN_DATA_DOUBLE})


def _held(values, data_type) -> np.ndarray:
    """float64 ``values`` as a tensor of ``data_type`` in memory holds them: fp8, integers and booleans rounded and
    saturated (``arrays.as_stored``); the wider floats as computed, but infinite where the type overflows."""
    stored = as_stored(values, data_type)
    if data_type in _FINE:
        return np.where(np.isinf(stored) & ~np.isinf(values), stored, values)
    return stored


# types stored as codes (bfloat16's and fp8's bits): an input array holds their values, never their storage
_CODED = frozenset({DataType.CUDNN_DATA_BFLOAT16, DataType.CUDNN_DATA_FP8_E4M3, DataType.CUDNN_DATA_FP8_E5M2,
                    DataType.CUDNN_DATA_FP8_E8M0})


def _same(values):
    return values


def _input_held(array, data_type):
    """How an input's float64 values become what its tensor holds (``_held``): an array of the type's own numpy
    dtype holds them already; any other (floats for an int8 tensor, 1e9 for fp16) is rounded and saturated as it
    would be stored, so that the reference computes with what cuDNN reads."""
    if data_type not in _HELD or (data_type not in _CODED and array.dtype == storage_dtype(data_type)):
        return _same
    return lambda values: _held(values, data_type)


CONVERT_WHOLE_ELEMENTS = 1 << 22  # an input up to this many elements is converted to float64 whole when asked for


def _take(array, request) -> np.ndarray:
    """The elements of ``request`` from an input, in float64 (a sampled evaluation of a large input converts only
    the elements it needs: converting a whole 25 M-element fp16 tensor took ~0.6 s of each tuning's check)."""
    return np.asarray(take(array, request), dtype=np.float64)


def _run(ops, graph, arrays, asked, dims) -> dict:
    """{uid: (request, values)} of every tensor an operation computed: the requests pulled back from ``asked``
    (outputs last to first), then the values computed forward."""
    requests = {u: [r] for u, r in asked.items()}
    plans = []

    whole = {}  # input uid -> the input in float64, converted once however many operations read it whole

    def input_values(uid, request):
        if uid in whole:
            return _take(whole[uid], request)
        array = arrays[uid]
        held = _input_held(array, graph.tensors[uid].data_type)
        if array.dtype == np.float64 or request.is_full(array.shape):
            whole[uid] = held(np.asarray(array, dtype=np.float64))
            return _take(whole[uid], request)
        return held(_take(array, request))

    def cheap(uid):
        # an input, in float64 already or small enough to convert whole (~10 ms): asking for all of it costs less
        # than gathering the elements; a larger one in another dtype is gathered element by element
        return uid in arrays and (arrays[uid].dtype == np.float64 or arrays[uid].size <= CONVERT_WHOLE_ELEMENTS)

    for op in reversed(ops):
        wanted = {u: merge(dims[u], requests[u]) for u in op.outputs if requests.get(u)}
        wanted = {u: r for u, r in wanted.items() if len(r.keys)}
        if not wanted:
            continue
        needs, finish = op.pull(wanted, cheap)
        for u, r in needs.items():
            if u not in arrays:
                requests.setdefault(u, []).append(r)
        plans.append((op, wanted, needs, finish))
    store = {}
    with np.errstate(all="ignore"):  # IEEE float64 as the GPU computes: inf and NaN are values, not warnings
        for op, wanted, needs, finish in reversed(plans):
            values = {}
            for u, r in needs.items():
                if u in arrays:
                    values[u] = input_values(u, r)
                else:
                    have, v = store[u]
                    values[u] = select(dims[u], have, v, r)
            out = finish(values)
            for u, r in wanted.items():
                v = np.asarray(out[u], dtype=np.float64).reshape(r.shape(dims[u]))
                alpha, beta = op.blend.get(u, (1.0, 0.0))
                if alpha != 1.0:
                    v = alpha * v
                if beta != 0.0:
                    v = v + beta * input_values(u, r)
                spec = graph.tensors[u]
                if not spec.virtual and spec.data_type in _HELD:
                    # a tensor in memory holds what its data type stores (an int8 conv saturates, fp8 rounds): so do
                    # the outputs, and an operation reading it reads that (cuDNN's fused tails read the stored y)
                    v = _held(v, spec.data_type)
                store[u] = (r, v)
    return store
