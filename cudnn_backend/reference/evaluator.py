"""``evaluate`` and ``unsupported``: the graph read from its descriptors, whole or sampled evaluation."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["ReferenceResult", "evaluate", "unsupported", "DEFAULT_MAX_ELEMENTS", "DEFAULT_SAMPLES"]

DEFAULT_MAX_ELEMENTS = 1 << 18
DEFAULT_SAMPLES = 1024


@dataclass
class ReferenceResult:
    """What ``evaluate`` computed, in float64.

    ``outputs``: {uid: array of the tensor's dims} of every non-virtual output evaluated whole;
    ``samples``: {uid: (coords int64 (N, rank), values float64 (N,))} of the outputs evaluated at N random
    coordinates; ``method``: "fp64 reference" or "sampled fp64 reference (N points)"; ``names``: {uid: name}.
    """

    outputs: dict = field(default_factory=dict)
    samples: dict = field(default_factory=dict)
    method: str = "fp64 reference"
    names: dict = field(default_factory=dict)

    def values(self, uid) -> np.ndarray:
        """The reference's values of output ``uid``: the whole array, or the sampled values."""
        raise NotImplementedError

    def take(self, uid, actual) -> np.ndarray:
        """The elements of ``actual`` (an array of output ``uid``'s dims) that ``values(uid)`` holds, as float64."""
        raise NotImplementedError


def unsupported(op_graph) -> list:
    """One line per operation of ``op_graph`` the evaluator cannot compute, naming it and why; [] when every
    operation is computable (``evaluate`` raises ``ReferenceUnsupportedError`` with these lines otherwise).
    ``op_graph``: a finalized OperationGraph (any API), a ``Graph`` or a ``Pattern`` (built here if it is not)."""
    raise NotImplementedError


def evaluate(op_graph, inputs, *, max_elements=DEFAULT_MAX_ELEMENTS, samples=DEFAULT_SAMPLES, seed=0,
             max_work=None) -> ReferenceResult:
    """The fp64 reference of ``op_graph`` on ``inputs``.

    ``op_graph``: a finalized OperationGraph built with any API, a ``Graph`` or a ``Pattern`` (built here if it is
    not). ``inputs``: {uid (or tensor descriptor): array-like of the tensor's dims in logical order, any dtype} for
    every non-virtual tensor the graph reads; by-value scalars default to their recorded values. Every non-virtual
    output is evaluated whole when each has at most ``max_elements`` elements (and the graph's estimated work is
    at most ``max_work`` multiply-adds); otherwise outputs larger than ``samples`` elements are evaluated exactly at
    ``samples`` random coordinates (``seed``), pulling back only the input elements those coordinates need.
    Refuses (ValueError/TypeError naming the uid and tensor) a missing, unknown or misshapen input, and
    (``ReferenceUnsupportedError``) a graph with an operation ``unsupported`` names."""
    raise NotImplementedError
