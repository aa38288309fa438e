"""A correct answer before a fast one: every config's outputs are compared, against a reference where the graph
is one the package knows (a ``Pattern``), otherwise against the majority of the configs that ran.

Majority voting groups configs whose outputs agree within a tight tolerance ("answer groups"); the largest
group is taken as right. That catches an engine that ignores part of a descriptor (a leaky-ReLU slope, say)
even where a loose tolerance against a reference would not. Needs torch (outputs are torch tensors).
"""
from __future__ import annotations

import math

from cudnn_backend._bindings.enums import DataType

__all__ = ["tolerance", "agreement_tolerance", "relative_error", "AnswerGroups"]

D = DataType
# relative L2 error allowed against an fp32 reference, by output data type
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
    """Relative L2 error allowed against an fp32 reference for outputs of ``data_type`` (0 for integers)."""
    return _REFERENCE_TOL.get(_data_type(data_type), 0.0)


def agreement_tolerance(data_type) -> float:
    """Relative L2 difference allowed between two configs' outputs of ``data_type`` (0 for integers)."""
    return _AGREE_TOL.get(_data_type(data_type), 0.0)


def relative_error(out, ref) -> float:
    """||out - ref|| / ||ref|| in fp64 (inf where ``out`` holds a NaN or Inf that ``ref`` does not, or the shapes
    differ); for integer and boolean outputs, the fraction of elements that differ."""
    import torch

    if tuple(out.shape) != tuple(ref.shape):
        return math.inf
    if not out.dtype.is_floating_point or not ref.dtype.is_floating_point:
        if out.numel() == 0:
            return 0.0
        return float((out.to(torch.int64) != ref.to(torch.int64)).sum().item()) / out.numel()
    a, b = out.double(), ref.double()
    finite = torch.isfinite(b)
    if not bool(torch.isfinite(a[finite]).all()):
        return math.inf
    diff = torch.linalg.vector_norm((a - b)[finite])
    scale = torch.linalg.vector_norm(b[finite])
    if float(scale) == 0.0:
        return float(diff)
    return float(diff / scale)


class AnswerGroups:
    """Outputs grouped by agreement. ``add(key, outputs)`` files a config's outputs ({uid: tensor}) into the
    first group they agree with (or a new one) and returns the group's index; ``majority()`` is the largest
    group; ``error(key)`` a config's relative error against the majority's first member."""

    def __init__(self, tolerances: dict, max_groups=8):
        self.tolerances = dict(tolerances)  # uid -> agreement tolerance
        self.groups: list[dict] = []  # {"outputs": {uid: tensor}, "members": [key, ...]}
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
        self.groups.append({"outputs": {u: t.clone() for u, t in outputs.items()}, "members": [key]})
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
