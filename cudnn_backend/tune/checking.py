"""A correct answer before a fast one: how every config's outputs are checked, and what each check says it was.

``reference_check`` asks the fp64 reference evaluator (``cudnn_backend.reference``) for the graph's outputs on
the first buffer set's inputs: whole ("fp64 reference"), or at random coordinates when an output is too large to
evaluate whole ("sampled fp64 reference (N points)"). Where the evaluator cannot compute the graph (an operation
it does not know, a graph known only from a saved plan) the check falls back, visibly, to the majority of the
configs that ran ("majority", with the reason: which operation and why). ``Check.label`` is what results,
JSON and the command line show.

Majority voting groups configs whose outputs agree within a tight tolerance ("answer groups"); the largest
group is taken as right. Every config is also filed into the groups when a reference exists, which catches an
engine that ignores part of a descriptor (a leaky-ReLU slope, say) even where a loose tolerance would not.
Outputs are read back from the GPU and compared on the host (numpy), at the same coordinates the reference
evaluated.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from cudnn_backend.reference import evaluate, unsupported
from cudnn_backend.reference.evaluator import DEFAULT_MAX_ELEMENTS, DEFAULT_SAMPLES
from cudnn_backend._bindings.enums import DataType
from cudnn_backend.errors import ReferenceUnsupportedError
from cudnn_backend.typed import arrays

__all__ = ["tolerance", "agreement_tolerance", "relative_error", "AnswerGroups", "Check", "reference_check",
           "majority_check", "FP64", "MAJORITY", "MAX_ELEMENTS", "SAMPLES"]

D = DataType
FP64 = "fp64 reference"
MAJORITY = "majority"
MAX_ELEMENTS = DEFAULT_MAX_ELEMENTS  # the evaluator's: outputs up to this many elements are checked whole,
SAMPLES = DEFAULT_SAMPLES  # larger ones at this many random coordinates

# relative L2 error allowed against the fp64 reference, by output data type
_REFERENCE_TOL = {D.CUDNN_DATA_HALF: 5e-3, D.CUDNN_DATA_BFLOAT16: 2e-2, D.CUDNN_DATA_FLOAT: 5e-3,
                  D.CUDNN_DATA_DOUBLE: 1e-6, D.CUDNN_DATA_FP8_E4M3: 0.1, D.CUDNN_DATA_FP8_E5M2: 0.2}
# between two configs of the same graph (accumulation order, TF32 and the like; tighter than a reference)
_AGREE_TOL = {D.CUDNN_DATA_HALF: 2e-3, D.CUDNN_DATA_BFLOAT16: 1e-2, D.CUDNN_DATA_FLOAT: 2e-3,
              D.CUDNN_DATA_DOUBLE: 1e-9, D.CUDNN_DATA_FP8_E4M3: 0.1, D.CUDNN_DATA_FP8_E5M2: 0.2}


def _data_type(dt):
    try:
        return D(int(dt))
    except (TypeError, ValueError):
        return None


def tolerance(data_type) -> float:
    """Relative L2 error allowed against the fp64 reference for outputs of ``data_type`` (0 for integers)."""
    return _REFERENCE_TOL.get(_data_type(data_type), 0.0)


def agreement_tolerance(data_type) -> float:
    """Relative L2 difference allowed between two configs' outputs of ``data_type`` (0 for integers)."""
    return _AGREE_TOL.get(_data_type(data_type), 0.0)


def relative_error(out, ref) -> float:
    """||out - ref|| / ||ref|| in float64 over the elements where ``ref`` is finite (inf where ``out`` holds a NaN
    or Inf there, or the shapes differ); for integer and boolean values, the fraction of elements that differ."""
    out, ref = np.asarray(out), np.asarray(ref)
    if out.shape != ref.shape:
        return math.inf
    if out.size == 0:
        return 0.0
    if not np.issubdtype(out.dtype, np.floating) or not np.issubdtype(ref.dtype, np.floating):
        return float(np.count_nonzero(out.astype(np.int64) != ref.astype(np.int64))) / out.size
    a, b = out.astype(np.float64), ref.astype(np.float64)
    finite = np.isfinite(b)
    if not np.isfinite(a[finite]).all():
        return math.inf
    diff = float(np.linalg.norm((a - b)[finite]))
    scale = float(np.linalg.norm(b[finite]))
    return diff if scale == 0.0 else diff / scale


@dataclass
class Check:
    """How a graph's configs are checked. ``method``: "fp64 reference", "sampled fp64 reference (N points)" or
    "majority"; ``reason``: why the majority (empty otherwise); ``expected``: {uid: the reference's values at
    ``coords``} (empty for the majority); ``coords``: {uid: (N, rank) int64 coordinates, or None for every
    element} where outputs are read."""

    method: str
    reason: str = ""
    expected: dict = field(default_factory=dict, repr=False)
    coords: dict = field(default_factory=dict, repr=False)

    @property
    def by_reference(self) -> bool:
        return self.method != MAJORITY

    @property
    def label(self) -> str:
        """The method, and for the majority its reason: what a result's ``checked_by`` says."""
        return f"{self.method} ({self.reason})" if self.reason else self.method

    def values(self, buffer_set, uid, stream=0) -> np.ndarray:
        """Output ``uid`` of ``buffer_set`` (just written on ``stream``) at this check's coordinates, decoded
        (float64, int64 or bool), flattened."""
        stored = buffer_set.stored(uid, stream)
        coords = self.coords.get(uid)
        picked = stored.reshape(-1) if coords is None else stored[tuple(coords.T)]
        return arrays.decode(picked, buffer_set.specs[uid].data_type)


def _sample_coords(dims, n, rng) -> np.ndarray:
    return np.stack([rng.integers(0, d, n) for d in dims], axis=1).astype(np.int64) if dims else \
        np.zeros((n, 0), np.int64)


def majority_check(reason, specs, output_uids, *, max_elements=MAX_ELEMENTS, samples=SAMPLES, seed=0) -> Check:
    """A majority check (``reason`` says why no reference): outputs larger than ``max_elements`` are compared at
    ``samples`` random coordinates (the same for every config), smaller ones whole."""
    rng = np.random.default_rng(seed)
    coords = {}
    for uid in output_uids:
        dims = tuple(specs[uid].dims)
        coords[uid] = _sample_coords(dims, samples, rng) if math.prod(dims) > max_elements else None
    return Check(MAJORITY, reason, {}, coords)


def reference_check(op_graph, host_inputs, specs, output_uids, *, max_elements=MAX_ELEMENTS, samples=SAMPLES,
                    seed=0) -> Check:
    """The fp64 reference of ``op_graph`` on ``host_inputs`` ({uid: values of the tensor's dims}) as a Check of
    ``output_uids``; the majority, with the reason, where the evaluator cannot compute the graph."""
    def majority(reason):
        return majority_check(reason, specs, output_uids, max_elements=max_elements, samples=samples, seed=seed)

    if not output_uids:
        return Check(MAJORITY, "the graph writes no real tensor to check")
    if op_graph is None:
        return majority("the graph is known only from a saved plan, whose operations cannot be read")
    try:
        lines = unsupported(op_graph)
    except (NotImplementedError, ValueError, TypeError) as e:
        return majority(f"the fp64 reference cannot read the graph: {type(e).__name__}: {e}")
    if lines:
        return majority("the fp64 reference cannot compute " + "; ".join(lines))
    try:
        result = evaluate(op_graph, host_inputs, max_elements=max_elements, samples=samples, seed=seed)
    except ReferenceUnsupportedError as e:
        return majority(f"the fp64 reference cannot compute {e}")
    except (NotImplementedError, ValueError, TypeError, MemoryError, ArithmeticError) as e:
        return majority(f"the fp64 reference failed: {type(e).__name__}: {e}")
    expected, coords = {}, {}
    for uid in output_uids:
        if uid in result.outputs:
            expected[uid] = np.asarray(result.outputs[uid]).reshape(-1)
            coords[uid] = None
        elif uid in result.samples:
            where, values = result.samples[uid]
            coords[uid] = np.asarray(where, dtype=np.int64).reshape(len(values), -1)
            expected[uid] = np.asarray(values)
        else:
            return majority(f"the fp64 reference returned no value for output UID {uid}")
    return Check(result.method, "", expected, coords)


class AnswerGroups:
    """Outputs grouped by agreement. ``add(key, outputs)`` files a config's outputs ({uid: values}) into the
    first group they agree with (or a new one) and returns the group's index; ``majority()`` is the largest
    group; ``error(key)`` a config's relative error against the majority's first member."""

    def __init__(self, tolerances: dict, max_groups=8):
        self.tolerances = dict(tolerances)  # uid -> agreement tolerance
        self.groups: list[dict] = []  # {"outputs": {uid: values}, "members": [key, ...]}
        self.member_of: dict = {}
        self.errors: dict = {}  # key -> error against its group's first member (at filing time)
        self.max_groups = max_groups

    def _distance(self, outputs, representative) -> tuple[float, bool]:
        worst, agree = 0.0, True
        for uid, ref in representative.items():
            e = relative_error(outputs[uid], ref)
            worst = max(worst, e)
            if not e <= self.tolerances.get(uid, 0.0):
                agree = False
        return worst, agree

    def add(self, key, outputs: dict) -> int:
        for i, g in enumerate(self.groups):
            e, agree = self._distance(outputs, g["outputs"])
            if agree:
                g["members"].append(key)
                self.member_of[key] = i
                self.errors[key] = e
                return i
        if len(self.groups) >= self.max_groups:  # too many disagreeing answers: keep no copy, never a majority
            self.member_of[key] = -1
            self.errors[key] = math.inf
            return -1
        self.groups.append({"outputs": {u: np.array(v, copy=True) for u, v in outputs.items()}, "members": [key]})
        self.member_of[key] = len(self.groups) - 1
        self.errors[key] = 0.0
        return len(self.groups) - 1

    def majority(self) -> int | None:
        """Index of the largest group (the earliest on a tie: heuristics order), None when empty."""
        if not self.groups:
            return None
        return max(range(len(self.groups)), key=lambda i: (len(self.groups[i]["members"]), -i))

    def is_majority(self, key) -> bool:
        m = self.majority()
        return m is not None and self.member_of.get(key) == m

    def error(self, key) -> float:
        """The config's relative error against the majority group's first member (for a member of another
        group: that group's first member against the majority's)."""
        m = self.majority()
        g = self.member_of.get(key, -1)
        if m is None or g < 0:
            return math.inf
        if g == m:
            return self.errors.get(key, 0.0)
        return self._distance(self.groups[g]["outputs"], self.groups[m]["outputs"])[0]

    def summary(self) -> str:
        sizes = sorted((len(g["members"]) for g in self.groups), reverse=True)
        return f"{len(self.groups)} answer group(s) of sizes {sizes}"
