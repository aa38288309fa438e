"""Hypothesis fuzzing of the checked ``Descriptor`` API, run in a subprocess by tests/core/test_fuzz.py.

A misuse that crashes the process (segfault, abort) would take pytest down with it, so the fuzzing
runs here and the test only looks at the exit status and the summary line::

    python -m tests.helpers.fuzz_worker random|structured [--calls N] [--examples N] [--seed S] [--log PATH]
                                [--max-seconds S] [--full-log] [--only DESCRIPTOR_TYPE]

Modes:

* ``random``: random descriptor types x attribute names x attribute types x counts x values x
  call orders (create / set / get / element_count / finalize / close / drop / gc / __init__ again /
  is_same_topology / get_execution_plan_workspace_size, repeated), with values of every Python kind
  (ints of all sizes, floats with nan/inf, bools, str, bytes, None, enum members of every enum,
  fractions, numpy scalars and arrays, mixed lists, iterables without len(), descriptors of any type
  and state, never-initialised Descriptor/Handle objects).
* ``structured``: per example a chain of descriptors of the schema's types, each given its own
  attributes with the right attribute types, plausible values and children from a pool of real
  descriptors (often of the wrong type, unfinalized, closed or "finalized empty"), then
  ``finalize()`` (sometimes ``check_required=False`` so cuDNN itself sees incomplete descriptors)
  and ``get`` of every attribute. Finalized results feed later links of the chain (op -> graph ->
  heuristics -> engine config -> plan ...).

Every call is counted, and written *before* it is made (flushed) to ``--log`` as a runnable Python
line; the log holds the pool-building prelude plus the current example, so after a crash it is a
standalone reproducer. Only ``cudnn_backend.CudnnBackendError`` subclasses, ``TypeError`` and
``ValueError`` may come out of a call: anything else is reported with its reproducer and exits 3.

The last line on stdout is ``FUZZ-SUMMARY {json}`` with ``calls`` (every cuDNN-facing API call made,
the prelude's included: Descriptor(), set, get, element_count, finalize, close, is_same_topology,
get_execution_plan_workspace_size), ``cudnn_calls`` (those that got past the Python-side checks:
they returned or raised a CudnnError), ``outcomes`` (count per exception type name, ``ok`` for
success, ``skipped_known_crash``) and, for ``structured``, ``finalized`` (successful finalizes per
descriptor type: how deep the chains got). ``--calls N`` stops after N calls past the prelude.
The seed is ``--seed``, else ``CUDNN_BACKEND_FUZZ_SEED``, else random; it is printed first.

Calls known to crash while their fix is pending are skipped by ``known_crash()``, each entry marked
``# KNOWN CRASH:`` (none at present); ``CUDNN_BACKEND_FUZZ_KNOWN=1`` makes them anyway (to check a
fix) under a 12 GiB address-space limit. Every crash found so far is replayed each run by
``regression_cases()``.
"""
from __future__ import annotations

import argparse
import bisect
import collections
import decimal
import enum
import faulthandler
import fractions
import gc
import itertools
import json
import math
import operator
import os
import random
import re
import sys
import time
import traceback

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import FlakyReplay, FlakyStrategyDefinition
from hypothesis import strategies as st

import cudnn_backend as cb
from cudnn_backend import schema
from cudnn_backend._bindings import _loader
from cudnn_backend._bindings import enums as E
from cudnn_backend.core.versions import parse_version

ALLOWED = (cb.CudnnBackendError, TypeError, ValueError)
KNOWN = os.environ.get("CUDNN_BACKEND_FUZZ_KNOWN") == "1"
DEVICEPROP_JSON = cb.DeviceProfile.bundled("h200").deviceprop_json  # as the loaded cuDNN reads it

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
LOADED = _loader.load_cudnn().version


def available(name: str) -> bool:
    """Whether an enumerant exists in the loaded cuDNN (newer ones raise CudnnVersionError)."""
    since = E.SINCE.get(name)
    return since is None or parse_version(since) <= LOADED


ALL_DTYPES = list(cb.DescriptorType)
ALL_ATTRS = list(cb.AttributeName)
ALL_ATYPES = list(cb.AttributeType)
ALL_ENUM_MEMBERS = [m for cls in E.ENUM_TYPES for m in cls]
AVAILABLE_DTYPES = [d for d in ALL_DTYPES if available(d.name) and d in schema.DESCRIPTORS]

KIND_OF = {t: ("enum" if t.name in E.ATTRIBUTE_TYPE_ENUM else None) for t in ALL_ATYPES}
KIND_OF.update({
    cb.CUDNN_TYPE_HANDLE: "handle", cb.CUDNN_TYPE_BOOLEAN: "bool", cb.CUDNN_TYPE_INT64: "int64",
    cb.CUDNN_TYPE_INT32: "int32", cb.CUDNN_TYPE_FLOAT: "float", cb.CUDNN_TYPE_DOUBLE: "double",
    cb.CUDNN_TYPE_VOID_PTR: "ptr", cb.CUDNN_TYPE_CHAR: "char", cb.CUDNN_TYPE_FRACTION: "fraction",
    cb.CUDNN_TYPE_BACKEND_DESCRIPTOR: "descriptor",
})


def enum_class(atype):
    return getattr(E, E.ATTRIBUTE_TYPE_ENUM[atype.name], None)


class Gen:
    """An iterable without len() (a value kind; the reproducer defines the same class)."""

    def __init__(self, items):
        self.items = list(items)

    def __iter__(self):
        return iter(self.items)


class Done(BaseException):
    """Raised (past hypothesis) when the call target or the time limit is reached."""


class Unexpected(BaseException):
    """Raised (past hypothesis) when a call raised something other than our exceptions."""


# ------------------------------------------------------------------------------------------------
# the recorder: counts calls, logs each as a runnable line before making it
# ------------------------------------------------------------------------------------------------
HEADER = '''\
# cudnn_backend fuzz reproducer: run with `python THIS_FILE` (mode={mode} seed={seed})
import decimal, fractions, gc, sys
import numpy as np
import cudnn_backend as cb

def _c(f):
    """Make one call; our own exceptions are expected, anything else propagates."""
    try:
        return f()
    except (cb.CudnnBackendError, TypeError, ValueError) as e:
        return e

class Gen:
    """An iterable without len()."""
    def __init__(self, items):
        self.items = list(items)
    def __iter__(self):
        return iter(self.items)

_U = cb.Descriptor.__new__(cb.Descriptor)  # never initialised (NULL, type -1)
_H = cb.Handle.__new__(cb.Handle)  # never initialised (closed)
'''


class Recorder:
    def __init__(self, path, mode, seed, full_log=False):
        self.path = path
        self.full_log = full_log  # keep every example in the log (debugging), not only the current one
        self.f = open(path, "w") if path else None
        self.names = {}  # id(obj) -> variable name in the log
        self.keep = []  # strong refs of named objects, so ids are not reused
        self.n = 0
        self.calls = 0
        self.cudnn_calls = 0
        self.outcomes = collections.Counter()
        self.uninit_descriptor = cb.Descriptor.__new__(cb.Descriptor)
        self.uninit_handle = cb.Handle.__new__(cb.Handle)
        self._bind(self.uninit_descriptor, "_U")
        self._bind(self.uninit_handle, "_H")
        self.line(HEADER.format(mode=mode, seed=seed))
        self.prelude_pos = 0
        self.prelude_names = None
        self.prelude_keep = None
        self.example = 0

    # -- log ---------------------------------------------------------------------------------
    def line(self, text):
        if self.f is not None:
            self.f.write(text + "\n")
            self.f.flush()  # reaches the kernel: survives a segfault

    def end_prelude(self):
        self.line("# ---- end of prelude ----")
        if self.f is not None:
            self.prelude_pos = self.f.tell()
        self.prelude_names = dict(self.names)
        self.prelude_keep = list(self.keep)

    def begin_example(self):
        self.example += 1
        if self.f is not None and not self.full_log:
            self.f.seek(self.prelude_pos)
            self.f.truncate()
        self.names = dict(self.prelude_names)
        self.keep = list(self.prelude_keep)
        self.line(f"# ---- example {self.example} ----")

    def comment(self, text):
        self.line("# " + text)

    # -- naming ------------------------------------------------------------------------------
    def _bind(self, obj, name):
        self.names[id(obj)] = name
        self.keep.append(obj)

    def name(self, obj, prefix="d"):
        key = id(obj)
        if key not in self.names:
            self.n += 1
            self._bind(obj, f"{prefix}{self.n}")
        return self.names[key]

    def src(self, v):
        """Python source that rebuilds v (names for descriptors)."""
        if isinstance(v, (cb.Descriptor, cb.Handle)):
            if id(v) in self.names:
                return self.names[id(v)]
            return self.name(v, "x")  # should not happen: every descriptor is named when made
        if isinstance(v, enum.Enum):
            return f"cb.{v.name}"
        if isinstance(v, np.ndarray):
            return f"np.array({self.src(v.tolist())}, dtype={str(v.dtype)!r})"
        if isinstance(v, np.generic):
            return f"np.dtype({str(v.dtype)!r}).type({self.src(v.item())})"
        if isinstance(v, float):
            if math.isnan(v) or math.isinf(v):
                return f"float({str(v)!r})"
            return repr(v)
        if isinstance(v, (bool, int, str, bytes, type(None), complex, range)):
            return repr(v)
        if isinstance(v, fractions.Fraction):
            return f"fractions.Fraction({v.numerator}, {v.denominator})"
        if isinstance(v, decimal.Decimal):
            return f"decimal.Decimal({str(v)!r})"
        if isinstance(v, list):
            return "[" + ", ".join(self.src(x) for x in v) + "]"
        if isinstance(v, tuple):
            return "(" + "".join(self.src(x) + ", " for x in v) + ")"
        if isinstance(v, Gen):
            return f"Gen({self.src(v.items)})"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{self.src(k)}: {self.src(x)}" for k, x in v.items()) + "}"
        if isinstance(v, (set, frozenset)):
            return f"{type(v).__name__}([" + ", ".join(self.src(x) for x in v) + "])"
        if type(v) is object:
            return "object()"
        return repr(v)

    # -- calls -------------------------------------------------------------------------------
    def _run(self, text, fn):
        self.line(f"_r = _c(lambda: {text})")
        self.calls += 1
        try:
            result = fn()
        except ALLOWED as e:
            self.outcomes[type(e).__name__] += 1
            if isinstance(e, cb.CudnnError):
                self.cudnn_calls += 1
            return False, e
        except BaseException as e:
            self._unexpected(text, e)
            raise Unexpected(f"{type(e).__name__}: {e}") from e
        self.outcomes["ok"] += 1
        self.cudnn_calls += 1
        return True, result

    def _unexpected(self, text, e):
        self.line(f"# ^^^ raised {type(e).__name__}: {str(e)[:200]!r}")
        sys.stderr.write(f"FUZZ-UNEXPECTED {type(e).__name__} from `{text}`:\n")
        traceback.print_exc(file=sys.stderr)
        sys.stderr.write(f"reproducer: {self.path}\n")
        sys.stderr.flush()

    def args_src(self, args, kwargs):
        parts = [self.src(a) for a in args] + [f"{k}={self.src(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def new(self, dtype):
        ok, d = self._run(f"cb.Descriptor({self.src(dtype)})", lambda: cb.Descriptor(dtype))
        if ok:
            name = self.name(d)
            self.line(f"{name} = _r")
            return d
        return None

    def call(self, target, method, *args, **kwargs):
        text = f"{self.src(target)}.{method}({self.args_src(args, kwargs)})"
        reason = None if KNOWN else known_crash(target, method, args, kwargs)
        if reason:
            self.line(f"# skipped (KNOWN CRASH: {reason}): {text}")
            self.outcomes["skipped_known_crash"] += 1
            return False, None
        ok, result = self._run(text, lambda: getattr(target, method)(*args, **kwargs))
        if ok and isinstance(result, list):
            for i, x in enumerate(result):
                if isinstance(x, cb.Descriptor):
                    self.line(f"{self.name(x)} = _r[{i}]")
        return ok, result

    def call_function(self, fn, fn_src, *args):
        return self._run(f"{fn_src}({self.args_src(args, {})})", lambda: fn(*args))

    def drop(self, obj):
        """Forget a reference (the log drops the variable too)."""
        name = self.names.get(id(obj))
        if name:
            self.line(f"{name} = None")

    def gc(self):
        self.line("gc.collect()")
        gc.collect()

    def summary(self, **extra):
        out = dict(calls=self.calls, cudnn_calls=self.cudnn_calls, outcomes=dict(self.outcomes.most_common()))
        out.update(extra)
        return out


R: Recorder = None  # set in main


# ------------------------------------------------------------------------------------------------
# calls known to kill the process, skipped until the package refuses them (CUDNN_BACKEND_FUZZ_KNOWN=1
# makes them anyway)
# ------------------------------------------------------------------------------------------------
def _resolve(enum_cls, v):
    """The enum member the package would resolve v to (None where it would refuse v)."""
    try:
        if isinstance(v, str):
            return enum_cls[v]
        if isinstance(v, bool):
            return None
        return enum_cls(operator.index(v))
    except (KeyError, ValueError, TypeError):
        return None


SERIALIZED_GRAPH_ATTRS = (cb.CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, cb.CUDNN_ATTR_KERNEL_CACHE_JSON_REPRESENTATION)
_STOLL = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")


def _stoll_fails(text):
    """Whether C++ std::stoll(text) throws (no leading integer, or one beyond int64)."""
    m = _STOLL.match(text)
    return m is None or not INT64_MIN <= int(m.group(1)) <= INT64_MAX


ENUMERANT_NAMES = frozenset(E.ENUMERANT_NAMES)


def _graph_json_kills_cudnn(value):
    """Whether cuDNN 9.19 aborts or segfaults deserializing this plan / kernel cache JSON (see known_crash)."""
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-8", "replace")
    if not isinstance(value, str):
        return False
    try:
        graph = json.loads(value).get("operationGraph")
    except (ValueError, AttributeError):
        return False
    if not isinstance(graph, dict):
        return False
    tensors, nodes = graph.get("tensors"), graph.get("nodes")
    for v in (tensors, nodes):  # a non-empty string or a non-zero int where an array belongs: SIGSEGV
        if isinstance(v, str) and v or isinstance(v, int) and not isinstance(v, bool) and v:
            return True
    refs = [t.get("name") for t in tensors if isinstance(t, dict)] if isinstance(tensors, list) else []

    def walk(o):  # tensor references in the nodes: every string but the enumerant names (op type, modes)
        if isinstance(o, dict):
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
        elif isinstance(o, str) and o not in ENUMERANT_NAMES:
            refs.append(o)

    walk(nodes if isinstance(nodes, list) else [])
    return any(isinstance(r, str) and _stoll_fails(r) for r in refs)


def known_crash(target, method, args, kwargs):
    """The reason to skip a call that is known to kill the process, or None.

    While the package lacks a guard for a crash the fuzz found, add a test for exactly that call here
    (``target`` is the Descriptor, ``method`` its name, ``args``/``kwargs`` as passed), returning a
    short reason, with a ``# KNOWN CRASH:`` comment (what crashes, in which cuDNN, the reproducer),
    so that the rest of the fuzz keeps running; remove it with the fix. The crashes found and fixed
    so far are replayed by ``regression_cases``.
    """
    # No open exclusion: the last one (serialized graphs cuDNN 9.19 cannot deserialize, see
    # _graph_json_kills_cudnn) is now refused by Descriptor.set itself.
    return None


# ------------------------------------------------------------------------------------------------
# the pool of real descriptors (built once, logged as the reproducer's prelude)
# ------------------------------------------------------------------------------------------------
def packed_strides(dims):
    strides, acc = [], 1
    for d in reversed(dims):
        strides.append(acc)
        acc *= max(int(d), 1)
    return strides[::-1]


class Pool:
    def __init__(self):
        self.items = []  # every descriptor in the pool (any state)
        self.by_type = collections.defaultdict(list)  # finalized ones by type
        self.plan_json = None  # the first plan's serialization
        self.plan_jsons = []  # every plan's

    def add(self, d):
        if d is not None:
            self.items.append(d)
            if d.finalized and not d.closed:
                self.by_type[d.descriptor_type].append(d)
        return d

    def build(self, d, sets, finalize=True, check_required=True):
        """Create a descriptor, set [(attr, type, value)], finalize; all through the recorder."""
        d = R.new(d)
        if d is None:
            return None
        for attr, atype, value in sets:
            R.call(d, "set", attr, atype, value)
        if finalize:
            R.call(d, "finalize", **({} if check_required else {"check_required": False}))
        return self.add(d)

    def tensor(self, uid, dims, data_type=cb.CUDNN_DATA_FLOAT, virtual=False, strides=None):
        return self.build(cb.CUDNN_BACKEND_TENSOR_DESCRIPTOR, [
            (cb.CUDNN_ATTR_TENSOR_DATA_TYPE, cb.CUDNN_TYPE_DATA_TYPE, data_type),
            (cb.CUDNN_ATTR_TENSOR_DIMENSIONS, cb.CUDNN_TYPE_INT64, dims),
            (cb.CUDNN_ATTR_TENSOR_STRIDES, cb.CUDNN_TYPE_INT64, strides or packed_strides(dims)),
            (cb.CUDNN_ATTR_TENSOR_UNIQUE_ID, cb.CUDNN_TYPE_INT64, uid),
            (cb.CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, cb.CUDNN_TYPE_INT64, 16),
            (cb.CUDNN_ATTR_TENSOR_IS_VIRTUAL, cb.CUDNN_TYPE_BOOLEAN, virtual),
        ])

    def pointwise(self, mode):
        return self.build(cb.CUDNN_BACKEND_POINTWISE_DESCRIPTOR, [
            (cb.CUDNN_ATTR_POINTWISE_MODE, cb.CUDNN_TYPE_POINTWISE_MODE, mode),
            (cb.CUDNN_ATTR_POINTWISE_MATH_PREC, cb.CUDNN_TYPE_DATA_TYPE, cb.CUDNN_DATA_FLOAT),
        ])

    def make(self):
        A, T, B = cb, cb.CUDNN_TYPE_INT64, cb.CUDNN_TYPE_BACKEND_DESCRIPTOR
        R.comment("tensors")
        x = self.tensor(1, [1, 8, 4, 4])
        y = self.tensor(2, [1, 8, 4, 4])
        w = self.tensor(3, [8, 8, 3, 3])
        v = self.tensor(4, [1, 8, 4, 4], virtual=True)
        b = self.tensor(5, [1, 8, 1, 1])
        self.tensor(6, [1, 1, 1, 1])
        ma = self.tensor(10, [1, 16, 32])
        mb = self.tensor(11, [1, 32, 8])
        mc = self.tensor(12, [1, 16, 8])
        self.tensor(13, [2, 4, 8, 16], data_type=cb.CUDNN_DATA_HALF)
        self.tensor(14, [1, 8, 4, 4], data_type=cb.CUDNN_DATA_INT32)
        self.tensor(15, [4], data_type=cb.CUDNN_DATA_INT64)
        self.tensor(16, [1, 8, 4, 4], strides=[128, 1, 32, 8])
        R.comment("leaf descriptors")
        conv = self.build(A.CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, [
            (A.CUDNN_ATTR_CONVOLUTION_COMP_TYPE, A.CUDNN_TYPE_DATA_TYPE, A.CUDNN_DATA_FLOAT),
            (A.CUDNN_ATTR_CONVOLUTION_CONV_MODE, A.CUDNN_TYPE_CONVOLUTION_MODE, A.CUDNN_CROSS_CORRELATION),
            (A.CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, T, 2),
            (A.CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, T, [1, 1]),
            (A.CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, T, [1, 1]),
            (A.CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, T, [1, 1]),
            (A.CUDNN_ATTR_CONVOLUTION_DILATIONS, T, [1, 1]),
        ])
        relu = self.pointwise(A.CUDNN_POINTWISE_RELU_FWD)
        add = self.pointwise(A.CUDNN_POINTWISE_ADD)
        self.pointwise(A.CUDNN_POINTWISE_IDENTITY)
        mm = self.build(A.CUDNN_BACKEND_MATMUL_DESCRIPTOR, [
            (A.CUDNN_ATTR_MATMUL_COMP_TYPE, A.CUDNN_TYPE_DATA_TYPE, A.CUDNN_DATA_FLOAT)])
        red = self.build(A.CUDNN_BACKEND_REDUCTION_DESCRIPTOR, [
            (A.CUDNN_ATTR_REDUCTION_OPERATOR, A.CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, A.CUDNN_REDUCE_TENSOR_ADD),
            (A.CUDNN_ATTR_REDUCTION_COMP_TYPE, A.CUDNN_TYPE_DATA_TYPE, A.CUDNN_DATA_FLOAT)])
        self.build(A.CUDNN_BACKEND_RESAMPLE_DESCRIPTOR, [
            (A.CUDNN_ATTR_RESAMPLE_MODE, A.CUDNN_TYPE_RESAMPLE_MODE, A.CUDNN_RESAMPLE_MAXPOOL),
            (A.CUDNN_ATTR_RESAMPLE_COMP_TYPE, A.CUDNN_TYPE_DATA_TYPE, A.CUDNN_DATA_FLOAT),
            (A.CUDNN_ATTR_RESAMPLE_SPATIAL_DIMS, T, 2),
            (A.CUDNN_ATTR_RESAMPLE_WINDOW_DIMS, T, [2, 2]),
            (A.CUDNN_ATTR_RESAMPLE_STRIDES, T, [2, 2]),
            (A.CUDNN_ATTR_RESAMPLE_PRE_PADDINGS, T, [0, 0]),
            (A.CUDNN_ATTR_RESAMPLE_POST_PADDINGS, T, [0, 0]),
        ])
        self.build(A.CUDNN_BACKEND_RNG_DESCRIPTOR, [
            (A.CUDNN_ATTR_RNG_DISTRIBUTION, A.CUDNN_TYPE_RNG_DISTRIBUTION, A.CUDNN_RNG_DISTRIBUTION_BERNOULLI),
            (A.CUDNN_ATTR_RNG_BERNOULLI_DIST_PROBABILITY, A.CUDNN_TYPE_DOUBLE, 0.5)])
        dp = self.build(A.CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, [
            (A.CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, A.CUDNN_TYPE_CHAR, DEVICEPROP_JSON)])
        R.comment("operations")
        conv_op = self.build(A.CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, [
            (A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, B, x),
            (A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, B, w),
            (A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, B, v),
            (A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, B, conv),
            (A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, A.CUDNN_TYPE_FLOAT, 1.0),
            (A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, A.CUDNN_TYPE_FLOAT, 0.0),
        ])
        relu_op = self.build(A.CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, [
            (A.CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, B, relu),
            (A.CUDNN_ATTR_OPERATION_POINTWISE_XDESC, B, v),
            (A.CUDNN_ATTR_OPERATION_POINTWISE_YDESC, B, y),
        ])
        add_op = self.build(A.CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, [
            (A.CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, B, add),
            (A.CUDNN_ATTR_OPERATION_POINTWISE_XDESC, B, x),
            (A.CUDNN_ATTR_OPERATION_POINTWISE_BDESC, B, b),
            (A.CUDNN_ATTR_OPERATION_POINTWISE_YDESC, B, y),
        ])
        mm_op = self.build(A.CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, [
            (A.CUDNN_ATTR_OPERATION_MATMUL_ADESC, B, ma),
            (A.CUDNN_ATTR_OPERATION_MATMUL_BDESC, B, mb),
            (A.CUDNN_ATTR_OPERATION_MATMUL_CDESC, B, mc),
            (A.CUDNN_ATTR_OPERATION_MATMUL_DESC, B, mm),
        ])
        self.build(A.CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, [
            (A.CUDNN_ATTR_OPERATION_REDUCTION_XDESC, B, x),
            (A.CUDNN_ATTR_OPERATION_REDUCTION_YDESC, B, b),
            (A.CUDNN_ATTR_OPERATION_REDUCTION_DESC, B, red),
        ])
        R.comment("the cudnn-frontend notebook's conv (fp16 NHWC): heuristics find engines for it offline")
        nx = self.tensor(101, [8, 64, 56, 56], data_type=cb.CUDNN_DATA_HALF, strides=[200704, 1, 3584, 64])
        nw = self.tensor(102, [32, 64, 3, 3], data_type=cb.CUDNN_DATA_HALF, strides=[576, 1, 192, 64])
        ny = self.tensor(103, [8, 32, 56, 56], data_type=cb.CUDNN_DATA_HALF, strides=[100352, 1, 1792, 32])
        nconv = self.build(A.CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, [
            (A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, B, nx),
            (A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, B, nw),
            (A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, B, ny),
            (A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, B, conv),
            (A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, A.CUDNN_TYPE_FLOAT, 1.0),
            (A.CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, A.CUDNN_TYPE_FLOAT, 0.0),
        ])
        R.comment("graphs, heuristics, engine configs, plans")
        graphs = [
            self.build(A.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, [(A.CUDNN_ATTR_OPERATIONGRAPH_OPS, B, ops)])
            for ops in ([nconv], [conv_op, relu_op], [add_op], [mm_op])
        ]
        for g in graphs:
            heur = self.build(A.CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, [
                (A.CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, B, g),
                (A.CUDNN_ATTR_ENGINEHEUR_MODE, A.CUDNN_TYPE_HEUR_MODE, A.CUDNN_HEUR_MODE_A),
                (A.CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, B, dp),
            ])
            ok, cfgs = R.call(heur, "get", A.CUDNN_ATTR_ENGINEHEUR_RESULTS, B)
            if not ok or not cfgs:
                continue
            for cfg in cfgs[:2]:
                self.add(cfg)
            ok, engines = R.call(cfgs[0], "get", A.CUDNN_ATTR_ENGINECFG_ENGINE, B)
            if ok:
                for e in engines:
                    self.add(e)
                    ok, knobs = R.call(e, "get", A.CUDNN_ATTR_ENGINE_KNOB_INFO, B)
                    if ok:
                        for k in knobs[:2]:
                            self.add(k)
            plan = self.build(A.CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, [
                (A.CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, B, cfgs[0]),
                (A.CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, B, dp),
            ])
            if plan is not None and plan.finalized:
                ok, text = R.call(plan, "get", A.CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, A.CUDNN_TYPE_CHAR)
                if ok:
                    self.plan_jsons.append(text)
                    self.plan_json = self.plan_json or text
        self.build(A.CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, [
            (A.CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, A.CUDNN_TYPE_KNOB_TYPE, A.CUDNN_KNOB_TYPE_SPLIT_K),
            (A.CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, T, 1)])
        R.comment("descriptors in awkward states: unfinalized, closed, finalized while empty")
        for dtype in (A.CUDNN_BACKEND_TENSOR_DESCRIPTOR, A.CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
                      A.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, A.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR):
            self.add(R.new(dtype))  # never finalized
        for dtype in (A.CUDNN_BACKEND_TENSOR_DESCRIPTOR, A.CUDNN_BACKEND_POINTWISE_DESCRIPTOR):
            d = self.add(R.new(dtype))
            if d is not None:
                R.call(d, "close")
        for dtype in AVAILABLE_DTYPES:
            # descriptors that cuDNN lets finalize empty are the nastiest children
            if dtype in (A.CUDNN_BACKEND_POINTWISE_DESCRIPTOR, A.CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
                         A.CUDNN_BACKEND_MATMUL_DESCRIPTOR, A.CUDNN_BACKEND_REDUCTION_DESCRIPTOR,
                         A.CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, A.CUDNN_BACKEND_RESAMPLE_DESCRIPTOR,
                         A.CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, A.CUDNN_BACKEND_LAYOUT_INFO_DESCRIPTOR,
                         A.CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR, A.CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR,
                         A.CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR, A.CUDNN_BACKEND_OPERATION_SIGNAL_DESCRIPTOR,
                         A.CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR, A.CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR):
                self.build(dtype, [], check_required=False)
        self.items = [d for d in self.items if d is not None]
        self.ids = {id(d) for d in self.items}
        R.gc()
        if not self.by_type.get(A.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR) or self.plan_json is None:
            print("FUZZ-WARNING: the pool has no engine config or plan: the structured fuzz will not reach "
                  "plans", file=sys.stderr, flush=True)


POOL: Pool = None


def regression_cases():
    """The crashes and unexpected exceptions the fuzz found (each guarded by the package since), made
    once per run before the fuzz proper: the fuzz reaches some of them only rarely."""
    A, B, I64 = cb, cb.CUDNN_TYPE_BACKEND_DESCRIPTOR, cb.CUDNN_TYPE_INT64
    R.comment("regression cases: calls that crashed cuDNN 9.19 or raised OverflowError/MemoryError before")
    R.comment("ENGINECFG finalized without ENGINE (cuDNN 9.19: SIGSEGV)")
    R.call(R.new(A.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR), "finalize", check_required=False)
    R.comment("get of a finalized concat's INPUT_DESCS (cuDNN 9.19: SIGSEGV)")
    a, b = POOL.tensor(201, [1, 4, 4, 4]), POOL.tensor(202, [1, 4, 4, 4])
    concat = POOL.build(A.CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR, [
        (A.CUDNN_ATTR_OPERATION_CONCAT_AXIS, I64, 1),
        (A.CUDNN_ATTR_OPERATION_CONCAT_INPUT_DESCS, B, [a, b]),
        (A.CUDNN_ATTR_OPERATION_CONCAT_OUTPUT_DESC, B, POOL.tensor(203, [1, 8, 4, 4])),
    ])
    R.call(concat, "get", A.CUDNN_ATTR_OPERATION_CONCAT_INPUT_DESCS, B, count=2)
    R.comment("queries whose element array is an input: with a NULL array (cuDNN 9.19: SIGSEGV)")
    graph = POOL.by_type[A.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR][0]
    R.call(graph, "element_count", A.CUDNN_ATTR_OPERATIONGRAPH_IS_SAME_TOPOLOGY, B)
    R.call(graph, "get", A.CUDNN_ATTR_OPERATIONGRAPH_IS_SAME_TOPOLOGY, B, count=0)
    cache = POOL.build(A.CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR, [(A.CUDNN_ATTR_KERNEL_CACHE_OPERATION_GRAPH, B, graph)],
                       check_required=False)
    R.call(cache, "element_count", A.CUDNN_ATTR_KERNEL_CACHE_IS_ENGINECFG_KERNEL_CACHED, B)
    R.comment("get of a finalized tensor's RAGGED_OFFSET_DESC (cuDNN 9.19: SIGSEGV)")
    R.call(a, "get", A.CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC, B)
    R.comment("VARIANT_PACK_OVERRIDE_SHAPES/STRIDES with a raw pointer (cuDNN 9.19: std::bad_alloc abort or SIGSEGV)")
    pack = R.new(A.CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
    R.call(pack, "set", A.CUDNN_ATTR_VARIANT_PACK_OVERRIDE_SHAPES, A.CUDNN_TYPE_VOID_PTR, 1215)
    R.call(pack, "set", A.CUDNN_ATTR_VARIANT_PACK_OVERRIDE_STRIDES, A.CUDNN_TYPE_VOID_PTR, [1215])
    R.comment("a plan deserialized from JSON with neither handle nor device profile (cuDNN 9.19: SIGSEGV)")
    if POOL.plan_json is not None:
        plan = R.new(A.CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
        R.call(plan, "set", A.CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, A.CUDNN_TYPE_CHAR, POOL.plan_json)
        R.call(plan, "finalize", check_required=False)
    R.comment("ints beyond int64 / float range (OverflowError before)")
    t = R.new(A.CUDNN_BACKEND_TENSOR_DESCRIPTOR)
    R.call(t, "set", A.CUDNN_ATTR_TENSOR_UNIQUE_ID, I64, 2 ** 63)
    R.call(t, "set", A.CUDNN_ATTR_TENSOR_DIMENSIONS, I64, np.array([2 ** 64 - 1], dtype=np.uint64))
    R.call(t, "get", A.CUDNN_ATTR_TENSOR_UNIQUE_ID, I64, count=2 ** 64)
    R.call(R.new(A.CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR), "set", A.CUDNN_ATTR_ENGINEHEUR_SM_COUNT_TARGET,
           A.CUDNN_TYPE_INT32, 2 ** 64)
    R.call(R.new(A.CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR), "set", A.CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
           A.CUDNN_TYPE_VOID_PTR, 2 ** 64)
    R.call(R.new(A.CUDNN_BACKEND_RESAMPLE_DESCRIPTOR), "set", A.CUDNN_ATTR_RESAMPLE_STRIDES, A.CUDNN_TYPE_FRACTION,
           [(2 ** 63, 1)])
    pw = R.new(A.CUDNN_BACKEND_POINTWISE_DESCRIPTOR)
    R.call(pw, "set", A.CUDNN_ATTR_POINTWISE_ELU_ALPHA, A.CUDNN_TYPE_DOUBLE, 10 ** 400)
    R.call(pw, "set", A.CUDNN_ATTR_POINTWISE_ELU_ALPHA, A.CUDNN_TYPE_FLOAT, 10 ** 400)
    R.comment("a never-created Descriptor as a child, an unknown descriptor type for get (AttributeError before)")
    R.call(R.new(A.CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR), "set", A.CUDNN_ATTR_OPERATION_POINTWISE_XDESC, B,
           R.uninit_descriptor)
    R.call(concat, "get", A.CUDNN_ATTR_OPERATION_CONCAT_OUTPUT_DESC, B, descriptor_type=999)
    R.call(R.new(A.CUDNN_BACKEND_REDUCTION_DESCRIPTOR), "set", A.CUDNN_ATTR_REDUCTION_COMP_TYPE, 54, 1)
    R.call(concat, "get", A.CUDNN_ATTR_OPERATION_CONCAT_AXIS, 54)
    R.comment("a RESAMPLE finalized without SPATIAL_DIMS: cuDNN counts -1 paddings (SIGSEGV in the count path before)")
    rs = R.new(A.CUDNN_BACKEND_RESAMPLE_DESCRIPTOR)
    R.call(rs, "finalize", check_required=False)
    R.call(rs, "element_count", A.CUDNN_ATTR_RESAMPLE_PRE_PADDINGS, A.CUDNN_TYPE_FRACTION)
    R.call(rs, "get", A.CUDNN_ATTR_RESAMPLE_PRE_PADDINGS, A.CUDNN_TYPE_FRACTION)
    R.comment("huge counts: a 16 GiB buffer (MemoryError or the OOM killer before), 2**24 children made first")
    R.call(t, "get", A.CUDNN_ATTR_TENSOR_DIMENSIONS, I64, count=2 ** 31)
    R.call(R.new(A.CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR), "get", A.CUDNN_ATTR_OPERATION_POINTWISE_XDESC, B,
           count=2 ** 24)


# ------------------------------------------------------------------------------------------------
# drawing helpers and value strategies (strategies are built once: building them per draw is what
# makes hypothesis slow; choices among per-example lists go through an index draw)
# ------------------------------------------------------------------------------------------------
def pick(data, seq, label="pick"):
    """One element of a (non-empty) sequence."""
    return seq[data.draw(st.integers(0, len(seq) - 1), label=label)]


class Weighted:
    """A weighted choice among values: ``Weighted((3, "a"), (1, "b")).draw(data)``."""

    def __init__(self, *choices):
        self.values = [v for _, v in choices]
        self.bounds = list(itertools.accumulate(w for w, _ in choices))
        self.strategy = st.integers(0, self.bounds[-1] - 1)

    def draw(self, data, label="choice"):
        return self.values[bisect.bisect_right(self.bounds, data.draw(self.strategy, label=label))]


def weighted(data, choices, label):
    """Draw from [(weight, value)] (for choices that vary per call)."""
    return Weighted(*choices).draw(data, label)


SPECIAL_INTS = [0, 1, -1, 2, 3, 7, 8, 16, 64, 255, 256, 1024, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1,
                2 ** 32, 2 ** 53, 2 ** 62, INT64_MAX, INT64_MIN]
# ints beyond int64 (and beyond a double's range): they raised OverflowError before the package checked
OVERFLOW_INTS = [INT64_MAX + 1, INT64_MIN - 1, 2 ** 64, 10 ** 30, -(10 ** 30), 10 ** 400]

INT64 = st.integers(INT64_MIN, INT64_MAX)
INTS = st.one_of(st.integers(-8, 300), st.sampled_from(SPECIAL_INTS), INT64, st.sampled_from(OVERFLOW_INTS),
                st.integers())
INT32 = st.one_of(st.integers(-(2 ** 31), 2 ** 31 - 1), st.integers(-4, 300))
FLOATS = st.one_of(st.floats(), st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 1e-45, 3.5e38, 1e300, math.inf,
                                                 -math.inf, math.nan]))
FRACTIONS = st.one_of(
    st.builds(fractions.Fraction, st.integers(-(2 ** 62), 2 ** 62), st.integers(1, 2 ** 62)),
    st.tuples(st.integers(-100, 100), st.integers(-100, 100)),
    st.tuples(INT64, INT64),
    st.tuples(INTS, INTS),
    st.builds(fractions.Fraction, st.integers(), st.integers(1)),
)
NP_SCALARS = st.one_of(
    st.builds(np.int64, INT64), st.builds(np.int32, st.integers(-(2 ** 31), 2 ** 31 - 1)),
    st.builds(np.uint8, st.integers(0, 255)), st.builds(np.float32, st.floats(width=32)),
    st.builds(np.float64, st.floats()), st.builds(np.bool_, st.booleans()),
)
ODD_OBJECTS = st.sampled_from([object(), 1j, decimal.Decimal("1.5"), range(3), {1: 2}, {1, 2}, frozenset(), (), [],
                               "", b"", bytearray(b"ab")])
NP_ARRAYS = st.one_of(
    st.lists(INT64, max_size=8).map(lambda v: np.array(v, dtype=np.int64)),
    st.lists(st.integers(-(2 ** 31), 2 ** 31 - 1), max_size=8).map(lambda v: np.array(v, dtype=np.int32)),
    st.lists(st.floats(), max_size=8).map(lambda v: np.array(v, dtype=np.float64)),
    st.lists(st.floats(width=32), max_size=8).map(lambda v: np.array(v, dtype=np.float32)),
    st.lists(st.booleans(), max_size=8).map(lambda v: np.array(v, dtype=np.bool_)),
    st.lists(st.integers(1, 8), min_size=4, max_size=4).map(lambda v: np.array(v, dtype=np.int64).reshape(2, 2)),
    INT64.map(lambda v: np.array(v, dtype=np.int64)),  # 0-d
    st.lists(st.integers(0, 255), max_size=8).map(lambda v: np.array(v, dtype=np.uint8)),
    st.lists(st.integers(0, 2 ** 64 - 1), max_size=4).map(lambda v: np.array(v, dtype=np.uint64)),
)
CHARS = st.one_of(st.text(max_size=40), st.binary(max_size=40), st.just(DEVICEPROP_JSON),
                  st.sampled_from(['{}', '[]', '{"a":1}', 'null', '{', '\x00', '']))
PLAIN_SCALARS = st.one_of(INTS, FLOATS, st.booleans(), st.none(), st.text(max_size=12), st.binary(max_size=12),
                          st.sampled_from(ALL_ENUM_MEMBERS), FRACTIONS, NP_SCALARS, ODD_OBJECTS)
SCALAR_HOW = Weighted((85, "plain"), (10, "descriptor"), (5, "uninit"))
VALUE_HOW = Weighted((45, "scalar"), (12, "list"), (10, "descriptors"), (5, "pair"), (12, "numpy"), (6, "long ints"),
                     (5, "object array"), (5, "generator"))
ENUM_ELEMENTS = {}


def draw_scalar(data, descriptors):
    how = SCALAR_HOW.draw(data, "scalar how")
    if how == "plain":
        return data.draw(PLAIN_SCALARS, label="scalar")
    if how == "descriptor":
        return pick(data, descriptors, "descriptor value")
    return pick(data, [R.uninit_descriptor, R.uninit_handle], "uninitialised value")


def draw_any_value(data, descriptors):
    """A value of any Python kind; descriptors come from ``descriptors`` (a non-empty list)."""
    how = VALUE_HOW.draw(data, "value how")
    if how == "scalar":
        return draw_scalar(data, descriptors)
    if how == "list":
        return [draw_scalar(data, descriptors) for _ in range(data.draw(st.integers(0, 8), label="len"))]
    if how == "descriptors":
        return [pick(data, descriptors) for _ in range(data.draw(st.integers(1, 6), label="len"))]
    if how == "pair":
        return (draw_scalar(data, descriptors), draw_scalar(data, descriptors))
    if how == "numpy":
        return data.draw(NP_ARRAYS, label="array")
    if how == "long ints":
        return data.draw(st.lists(INTS, max_size=300), label="long list")
    if how == "generator":  # an iterable without len()
        return Gen([pick(data, descriptors) for _ in range(data.draw(st.integers(0, 3), label="len"))])
    items = [pick(data, descriptors) for _ in range(data.draw(st.integers(0, 4), label="len"))]
    return np.array(items + [None], dtype=object)[:-1]


def draw_typed_value(data, kind, atype, descriptors):
    """A value of the right Python kind for an attribute type (so that more calls reach cuDNN)."""
    if kind == "char":
        return data.draw(CHARS, label="chars")
    if kind in ("int64", "ptr"):
        el = lambda: data.draw(INTS, label="int")  # noqa: E731
    elif kind == "int32":
        el = lambda: data.draw(INT32, label="int32")  # noqa: E731
    elif kind in ("float", "double"):
        el = lambda: data.draw(FLOATS, label="real")  # noqa: E731
    elif kind == "bool":
        el = lambda: pick(data, [True, False, 0, 1, np.bool_(True)], "bool")  # noqa: E731
    elif kind == "enum":
        cls = enum_class(atype)
        if atype not in ENUM_ELEMENTS:
            ENUM_ELEMENTS[atype] = st.one_of(st.sampled_from(list(cls)), st.integers(-2, 200)) if cls else INTS
        el = lambda: data.draw(ENUM_ELEMENTS[atype], label="enum")  # noqa: E731
    elif kind == "fraction":
        el = lambda: data.draw(FRACTIONS, label="fraction")  # noqa: E731
    elif kind == "descriptor":
        el = lambda: pick(data, descriptors, "child")  # noqa: E731
    else:  # handle
        el = lambda: pick(data, [R.uninit_handle, R.uninit_descriptor, 0, 1], "handle")  # noqa: E731
    shape = pick(data, ["one", "one", "list", "short list"], "shape")
    if shape == "one":
        return el()
    n = data.draw(st.integers(0, 8) if shape == "list" else st.integers(1, 2), label="len")
    return [el() for _ in range(n)]


# huge counts: get() used to allocate count * element size bytes (up to 16 GiB) or create that many child
# descriptors before calling cuDNN; beyond int64 they raised OverflowError
BIG_COUNTS = [2 ** 14 + 1, 2 ** 24 + 1, 2 ** 28, 2 ** 31, 2 ** 31 + 1, INT64_MAX, 2 ** 64, 10 ** 30]
COUNTS = st.one_of(
    st.none(), st.none(), st.integers(0, 8), st.integers(0, 8), st.integers(9, 1000), st.integers(-3, -1),
    st.integers(1001, 2 ** 16), st.sampled_from(BIG_COUNTS), st.sampled_from([True, 1.0, "3", None, b"", [1]]),
)


SANE_REALS = st.one_of(st.floats(-10, 10), st.floats(-10, 10), FLOATS, st.sampled_from(OVERFLOW_INTS))
SANE_FRACTIONS = st.one_of(st.tuples(st.integers(1, 4), st.integers(1, 4)), FRACTIONS)
POINTERS = st.one_of(st.none(), st.integers(0, 2 ** 16), INT64, st.sampled_from(OVERFLOW_INTS))


def draw_count(data):
    """``count=`` for get()."""
    return data.draw(COUNTS, label="count")


# ------------------------------------------------------------------------------------------------
# (a) random
# ------------------------------------------------------------------------------------------------
GARBAGE_NAMES = st.one_of(
    st.integers(-5, 2000), st.sampled_from([2 ** 31, -(2 ** 31) - 1, INT64_MAX]), st.text(max_size=10),
    st.sampled_from(["CUDNN_ATTR_TENSOR_UNIQUE_ID ", "cudnn_attr_tensor_unique_id", "CUDNN_TYPE_INT64", None, 1.0,
                     True, b"CUDNN_TYPE_INT64", [3], object()]),
)
DTYPE_HOW = Weighted((85, "member"), (5, "name"), (10, "junk"))
ATTR_HOW = Weighted((55, "any"), (5, "name"), (15, "junk"), (25, "own"))
ATYPE_HOW = Weighted((40, "spec"), (50, "any"), (10, "junk"))
OP_HOW = Weighted((120, "new"), (300, "set"), (250, "get"), (80, "count"), (120, "finalize"), (50, "close"),
                  (30, "drop"), (2, "gc"), (40, "props"), (10, "reinit"), (10, "query"))
TARGET_HOW = Weighted((90, "slot"), (5, "uninit"), (5, "pool"))
CHECK_REQUIRED = [None, True, False, False, 0, 1, "", "yes", None]


def draw_dtype(data):
    how = DTYPE_HOW.draw(data, "dtype how")
    if how == "member":
        return pick(data, ALL_DTYPES, "dtype")
    if how == "name":
        return pick(data, ALL_DTYPES, "dtype").name
    return data.draw(GARBAGE_NAMES, label="dtype junk")


def draw_attr(data, target):
    how = ATTR_HOW.draw(data, "attr how")
    if how == "own":
        spec = None
        if isinstance(target, cb.Descriptor) and not target.closed and target.ptr:
            spec = schema.DESCRIPTORS.get(target.descriptor_type)
        if spec is None or not spec.attributes:
            how = "any"
        else:
            return pick(data, spec.attributes, "attr")
    if how == "any":
        return pick(data, ALL_ATTRS, "attr")
    if how == "name":
        return pick(data, ALL_ATTRS, "attr").name
    return data.draw(GARBAGE_NAMES, label="attr junk")


def draw_atype(data, attr):
    how = ATYPE_HOW.draw(data, "atype how")
    if how == "spec":
        a = _resolve(cb.AttributeName, attr)
        if a is None:
            how = "any"
        else:
            return pick(data, schema.ATTRIBUTES[a].types, "atype")
    if how == "any":
        return pick(data, ALL_ATYPES, "atype")
    return data.draw(GARBAGE_NAMES, label="atype junk")


def draw_values(data, atype, descriptors):
    if isinstance(atype, cb.AttributeType) and KIND_OF[atype] and data.draw(st.booleans(), label="typed value"):
        return draw_typed_value(data, KIND_OF[atype], atype, descriptors)
    return draw_any_value(data, descriptors)


def fuzz_random(data):
    R.begin_example()
    slots = []  # the descriptors this example made (live or closed)
    foreign = POOL.items
    steps = data.draw(st.integers(4, 40), label="steps")
    for _ in range(steps):
        op = OP_HOW.draw(data, "op")
        if op == "new" or not slots:
            d = R.new(draw_dtype(data))
            if d is not None:
                slots.append(d)
            continue
        how = TARGET_HOW.draw(data, "target how")
        target = {"slot": lambda: pick(data, slots, "target"), "uninit": lambda: R.uninit_descriptor,
                  "pool": lambda: pick(data, foreign, "pool target")}[how]()
        if target in foreign and op in ("set", "close", "finalize", "drop", "reinit"):
            op = "get"  # never mutate the shared pool (its state must match the logged prelude)
        descriptors = slots + foreign
        if op == "set":
            attr = draw_attr(data, target)
            atype = draw_atype(data, attr)
            R.call(target, "set", attr, atype, draw_values(data, atype, descriptors))
        elif op in ("get", "count"):
            attr = draw_attr(data, target)
            atype = draw_atype(data, attr)
            if op == "count":
                R.call(target, "element_count", attr, atype)
                continue
            kwargs = {}
            count = draw_count(data)
            if count is not None or data.draw(st.booleans(), label="explicit None"):
                kwargs["count"] = count
            if data.draw(st.integers(0, 3), label="with dtype") == 0:
                kwargs["descriptor_type"] = draw_dtype(data)
            ok, result = R.call(target, "get", attr, atype, **kwargs)
            if ok and isinstance(result, list):
                slots.extend(x for x in result[:4] if isinstance(x, cb.Descriptor))
        elif op == "finalize":
            how = pick(data, CHECK_REQUIRED, "check_required")
            if how is None:
                R.call(target, "finalize")
            else:
                R.call(target, "finalize", check_required=how)
        elif op == "close":
            R.call(target, "close")
        elif op == "query":  # the module-level functions that take descriptors
            other = pick(data, slots + foreign + [None, 0, R.uninit_descriptor], "other")
            if data.draw(st.booleans(), label="which query") and hasattr(cb, "is_same_topology"):
                R.call_function(cb.is_same_topology, "cb.is_same_topology", target, other)
            else:
                R.call_function(cb.get_execution_plan_workspace_size, "cb.get_execution_plan_workspace_size",
                                None, target, other if other != 0 else None)
        elif op == "reinit":  # __init__ again on a live object (the typed subclasses take no arguments)
            R.call_function(cb.Descriptor.__init__, "cb.Descriptor.__init__", target, draw_dtype(data))
        elif op == "drop":
            if target in slots:
                slots.remove(target)
                R.drop(target)
                del target
        elif op == "gc":
            R.gc()
        elif op == "props":  # Python-side only: not counted as calls
            for prop in ("finalized", "closed", "ptr", "children", "set_attributes", "descriptor_type"):
                R.line(f"_r = _c(lambda: {R.src(target)}.{prop})")
                try:
                    getattr(target, prop)
                except ALLOWED:
                    pass
            R.line(f"_r = repr({R.src(target)})")
            repr(target)
    R.line("# example done")


# ------------------------------------------------------------------------------------------------
# (b) structured
# ------------------------------------------------------------------------------------------------
SETTABLE = {d: [a for a in schema.DESCRIPTORS[d].attributes if schema.ATTRIBUTES[a].settable] for d in AVAILABLE_DTYPES}
# descriptor types with an attribute accepting type T: the chain prefers those after making a T
CONSUMERS = collections.defaultdict(set)
for _a, _spec in schema.ATTRIBUTES.items():
    if _spec.accepts and _spec.descriptor in SETTABLE and _spec.settable:
        for _t in _spec.accepts:
            CONSUMERS[_t].add(_spec.descriptor)
CONSUMERS = {k: sorted(v) for k, v in CONSUMERS.items()}
ONLY = []  # --only: restrict the chain's descriptor types (debugging)
FINALIZED = collections.Counter()  # structured: finalize successes per descriptor type (coverage)
BUILDABLE = [d for d in AVAILABLE_DTYPES if SETTABLE[d]]


def json_mutation(data, text):
    how = pick(data, ["same", "truncate", "number", "delete", "flip", "nest", "retype"], "json how")
    if how == "same" or not text:
        return text
    if how == "truncate":
        return text[: data.draw(st.integers(0, len(text)), label="cut")]
    if how == "number":
        nums = list(re.finditer(r"-?\d+", text))
        if not nums:
            return text
        m = nums[data.draw(st.integers(0, len(nums) - 1), label="which number")]
        new = data.draw(st.one_of(st.integers(-5, 70000), st.sampled_from([-(2 ** 31), 2 ** 31, 2 ** 63, 10 ** 20])),
                        label="new number")
        return text[:m.start()] + str(new) + text[m.end():]
    if how == "delete":
        keys = list(re.finditer(r'"[A-Za-z_]+":', text))
        if not keys:
            return text
        m = keys[data.draw(st.integers(0, len(keys) - 1), label="which key")]
        return text[:m.start()] + '"zz' + text[m.start() + 1:]
    if how == "nest":
        return '{"a":' * 20 + "1" + "}" * 20
    if how == "retype":  # an array or object of the document replaced by a scalar (or the other container)
        try:
            doc = json.loads(text)
        except ValueError:
            return text
        containers = []

        def collect(o, path):
            for k, v in (o.items() if isinstance(o, dict) else enumerate(o)):
                if isinstance(v, (dict, list)):
                    containers.append(path + (k,))
                    collect(v, path + (k,))
        if isinstance(doc, (dict, list)):
            collect(doc, ())
        if not containers:
            return text
        path = pick(data, containers, "which container")
        o = doc
        for k in path[:-1]:
            o = o[k]
        o[path[-1]] = pick(data, ["x", "abc", 3, -1, 0, "", 1.5, True, None, [], {}, [1], {"a": 1}], "new value")
        return json.dumps(doc)
    i = data.draw(st.integers(0, len(text) - 1), label="flip at")
    return text[:i] + data.draw(st.sampled_from(['"', "{", "}", "[", "]", ",", ":", "x", "-", "\x00"]), label="c") \
        + text[i + 1:]


SANE_ENUMS = {}
WILD_INT64 = st.one_of(st.integers(-2, 4096), st.sampled_from(
    [0, -1, 2 ** 31, 2 ** 32 + 1, 2 ** 40, 2 ** 62, INT64_MAX, INT64_MIN] + OVERFLOW_INTS))
SANE_INT32 = st.integers(-1, 300)
WILD_INT32 = st.sampled_from([-(2 ** 31), 2 ** 31 - 1, -1, 0] + OVERFLOW_INTS)


def structured_element(data, spec, kind, atype, ctx, candidates, wild=False):
    """One element of a well-typed value; ``wild`` allows extreme ones (negative, 2**62, INT64_MAX ...)."""
    name = spec.name.name
    if kind == "int64":
        if wild:
            return data.draw(WILD_INT64, label="wild int64")
        if "UNIQUE_ID" in name or name.endswith("_ID"):
            return data.draw(st.integers(0, 100), label="uid")
        if "ALIGNMENT" in name:
            return data.draw(st.sampled_from([16, 16, 16, 1, 2, 4, 8, 32]), label="alignment")
        return data.draw(st.integers(1, 64), label="int64")
    if kind == "int32":
        return data.draw(WILD_INT32 if wild else SANE_INT32, label="int32")
    if kind in ("float", "double"):
        return data.draw(SANE_REALS, label="real")
    if kind == "bool":
        return data.draw(st.booleans(), label="bool")
    if kind == "enum":
        cls = enum_class(atype)
        if cls not in SANE_ENUMS:
            members = [m for m in cls if available(m.name)] or list(cls)
            SANE_ENUMS[cls] = st.one_of(st.sampled_from(members), st.sampled_from(members), st.sampled_from(list(cls)),
                                        st.integers(-1, 120))
        return data.draw(SANE_ENUMS[cls], label="enum")
    if kind == "fraction":
        return data.draw(SANE_FRACTIONS, label="frac")
    if kind == "ptr":
        return data.draw(POINTERS, label="ptr")
    if kind == "handle":
        return data.draw(st.sampled_from([R.uninit_handle, 0, None]), label="handle")
    if kind == "descriptor":
        right = [d for t in (spec.accepts or ()) for d in candidates.get(t, ())]
        fresh = [d for d in reversed(candidates["_local"]) if d.finalized and not d.closed
                 and d.descriptor_type in (spec.accepts or ())]
        if ctx["clean"] and right:
            how = "right"
        else:
            how = weighted(data, [(55, "right"), (35, "any"), (10, "junk")] if right else [(85, "any"), (15, "junk")],
                           "child how")
        if how == "right":
            if fresh and data.draw(st.booleans(), label="fresh"):
                return fresh[0]  # the chain's latest result of the right type: builds op -> graph -> heur -> plan
            return pick(data, right, "child")
        if how == "any":
            return pick(data, POOL.items + candidates["_local"], "child (any)")
        return pick(data, [R.uninit_descriptor, None, 0, 1.5, "x"], "child junk")
    raise AssertionError(kind)


def structured_value(data, spec, atype, ctx, candidates):
    kind = KIND_OF[atype]
    name = spec.name.name
    if kind == "char":
        if "DEVICEPROP" in name:
            base = DEVICEPROP_JSON
        else:
            base = pick(data, POOL.plan_jsons, "plan json") if POOL.plan_jsons else DEVICEPROP_JSON
        how = weighted(data, [(40, "real"), (45, "mutated"), (15, "text")], "char how")
        if how == "real":
            return base
        if how == "mutated":
            return json_mutation(data, base)
        return data.draw(st.text(max_size=30), label="text")
    hi = spec.count_max if spec.count_max is not None else spec.count_min + 6
    wild = not ctx["clean"] and data.draw(st.integers(0, 9), label="wild") < 2
    is_dims, is_strides = name.endswith("_DIMENSIONS"), name.endswith("_STRIDES")
    if not ctx["clean"] and data.draw(st.integers(0, 9), label="wrong count") == 0:
        n = data.draw(st.integers(0, 10), label="n")
    elif kind == "int64" and (is_dims or is_strides):
        if "shape" not in ctx:  # one shape per descriptor, shared by its dims and strides
            ctx["shape"] = data.draw(st.lists(st.integers(1, 64), min_size=max(1, spec.count_min),
                                              max_size=max(1, min(hi, 6))), label="shape")
        n = len(ctx["shape"])
        if not wild and data.draw(st.integers(0, 9), label="use shape") < 8:
            shape = ctx["shape"]
            if is_dims:
                return shape
            strides = packed_strides(shape)
            return strides if data.draw(st.integers(0, 3), label="c-order") else strides[::-1]
    else:
        n = data.draw(st.integers(spec.count_min, max(spec.count_min, min(hi, spec.count_min + 8))), label="n")
    values = [structured_element(data, spec, kind, atype, ctx, candidates, wild) for _ in range(n)]
    if n == 1 and data.draw(st.booleans(), label="scalar"):
        return values[0]
    return values


STRUCTURED_COUNTS = st.one_of(st.integers(0, 12), st.integers(0, 12), st.integers(0, 12), st.sampled_from(BIG_COUNTS))


def structured_get(data, d, attrs, candidates=None):
    """get (or element_count) some of a descriptor's attributes with their schema types."""
    for attr in attrs:
        spec = schema.ATTRIBUTES[attr]
        if not available(attr.name) or data.draw(st.integers(0, 9), label="skip get") < 3:
            continue
        atype = pick(data, spec.types, "get type")
        kwargs = {}
        if KIND_OF[atype] == "descriptor" and spec.accepts and len(spec.accepts) > 1:
            kwargs["descriptor_type"] = pick(data, spec.accepts, "get dtype")
        how = weighted(data, [(70, "auto"), (20, "count"), (10, "element_count")], "get how")
        if how == "element_count":
            R.call(d, "element_count", attr, atype)
            continue
        if how == "count":
            kwargs["count"] = data.draw(STRUCTURED_COUNTS, label="count")
        ok, result = R.call(d, "get", attr, atype, **kwargs)
        if ok and isinstance(result, list):
            for child in result[:3]:
                if isinstance(child, cb.Descriptor) and candidates is not None:
                    candidates[child.descriptor_type].append(child)  # e.g. heuristics' engine configs
                    candidates["_local"].append(child)
            for child in result[:2]:
                if isinstance(child, cb.Descriptor) and data.draw(st.booleans(), label="descend"):
                    cspec = schema.DESCRIPTORS.get(child.descriptor_type)
                    if cspec is not None:
                        structured_get(data, child, [a for a in cspec.attributes if available(a.name)][:6],
                                       candidates)


CHECK_HOW = Weighted((75, True), (25, False))


def close_own_child(data, d):
    """Sometimes close() a child that ``d`` holds (one this example made: the pool must stay as logged)."""
    if data.draw(st.integers(0, 9), label="close a child") != 0:
        return
    mine = [c for kids in d.children.values() for c in kids
            if isinstance(c, cb.Descriptor) and not c.closed and id(c) not in POOL.ids]
    if mine:
        R.call(pick(data, mine, "child to close"), "close")


def fuzz_structured(data):
    R.begin_example()
    local = []
    candidates = collections.defaultdict(list)
    for t, items in POOL.by_type.items():
        candidates[t] = list(items)
    candidates["_local"] = []
    links = data.draw(st.integers(1, 4), label="links")
    last = None
    for _ in range(links):
        if last is not None and last in CONSUMERS and data.draw(st.integers(0, 9), label="consume") < 6:
            dtype = pick(data, [t for t in CONSUMERS[last] if t in SETTABLE], "dtype")
        else:
            dtype = pick(data, ONLY or BUILDABLE, "dtype")
        d = R.new(dtype)
        if d is None:
            continue
        candidates["_local"].append(d)
        settable = [a for a in SETTABLE[dtype]]
        required = [a for a in schema.DESCRIPTORS[dtype].required if a in settable]
        # a clean link makes no deliberate mistakes (required attributes first, each optional one with
        # even odds, right counts, sane values, children of the right type) so that chains get deep
        # (op -> graph -> heuristics -> engine config -> plan); the others set random attributes in
        # random order with wrong counts, types, values and children mixed in
        ctx = {"clean": data.draw(st.booleans(), label="clean")}
        optional = [a for a in settable if a not in required]
        if ctx["clean"]:
            chosen = data.draw(st.permutations(required), label="required") + [
                a for a in optional if data.draw(st.booleans(), label=f"set {a.name}")]
            for a in optional:  # offline, heuristics and plans need the device profile
                if schema.ATTRIBUTES[a].accepts == (cb.CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR,) and a not in chosen \
                        and data.draw(st.integers(0, 9), label="deviceprop") < 7:
                    chosen.append(a)
        elif data.draw(st.booleans(), label="required first"):
            chosen = data.draw(st.permutations(required), label="required") + [
                pick(data, optional, "optional") for _ in range(data.draw(st.integers(0, 4) if optional else st.just(0)))]
        else:
            chosen = [pick(data, settable, "attr") for _ in range(data.draw(st.integers(0, len(settable) + 3)))]
        for attr in chosen:
            spec = schema.ATTRIBUTES[attr]
            if not ctx["clean"] and data.draw(st.integers(0, 9), label="wrong type") == 0:
                atype = pick(data, ALL_ATYPES, "atype")
            else:
                atype = pick(data, spec.types, "atype")
            if KIND_OF[atype] is None:
                value = data.draw(st.integers(0, 3), label="value")
            elif atype not in spec.types:
                value = draw_typed_value(data, KIND_OF[atype], atype, POOL.items)
            else:
                value = structured_value(data, spec, atype, ctx, candidates)
            R.call(d, "set", attr, atype, value)
        close_own_child(data, d)  # the parent still holds it: cuDNN must not use it after it is destroyed
        check = CHECK_HOW.draw(data, "check_required")
        ok, _ = R.call(d, "finalize") if check else R.call(d, "finalize", check_required=False)
        if ok:
            FINALIZED[dtype.name.replace("CUDNN_BACKEND_", "").replace("_DESCRIPTOR", "")] += 1
        close_own_child(data, d)
        structured_get(data, d, [a for a in schema.DESCRIPTORS[dtype].attributes if available(a.name)], candidates)
        if ok:
            local.append(d)
            candidates[dtype].append(d)
            last = dtype
    # some gets on pool members, then maybe close what we made (children stay referenced by parents)
    for _ in range(data.draw(st.integers(0, 2), label="pool gets")):
        d = pick(data, POOL.items, "pool item")
        if not d.closed:
            structured_get(data, d, [a for a in schema.DESCRIPTORS[d.descriptor_type].attributes
                                     if available(a.name)][:8])
    for d in local:
        if data.draw(st.integers(0, 4), label="close") == 0:
            R.call(d, "close")
    R.line("# example done")


# ------------------------------------------------------------------------------------------------
# main
# ------------------------------------------------------------------------------------------------
def main(argv=None):
    global R, POOL
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["random", "structured"])
    parser.add_argument("--examples", type=int, default=100000, help="at most this many examples")
    parser.add_argument("--calls", type=int, default=0, help="stop once this many calls were made (past the prelude)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--log", default=None)
    parser.add_argument("--full-log", action="store_true", help="log every example, not only the current one")
    parser.add_argument("--only", action="append", default=[], help="structured: only these descriptor types")
    parser.add_argument("--max-seconds", type=float, default=None, help="stop generating after this long")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else int(os.environ.get("CUDNN_BACKEND_FUZZ_SEED",
                                                                     random.randrange(2 ** 32)))
    print(f"FUZZ-START mode={args.mode} seed={seed} examples={args.examples} calls={args.calls} known={int(KNOWN)}",
          flush=True)
    faulthandler.enable(file=sys.stderr, all_threads=True)
    if args.max_seconds is not None:  # a call that hangs: print where, and exit (the log's last call is it)
        faulthandler.dump_traceback_later(args.max_seconds + 60, exit=True, file=sys.stderr)
    if KNOWN:
        # the known huge-count bug allocates up to 16 GiB: bound the address space so that it shows up as
        # a MemoryError (an unexpected exception, reported) rather than the OOM killer taking the machine
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (12 << 30, 12 << 30))
    R = Recorder(args.log, args.mode, seed, args.full_log)
    POOL = Pool()
    ONLY.extend(cb.DescriptorType[x if x.startswith("CUDNN_") else f"CUDNN_BACKEND_{x}_DESCRIPTOR"] for x in args.only)
    t0 = time.monotonic()
    POOL.make()
    try:
        regression_cases()
    except Unexpected:
        sys.stderr.write("FUZZ-FAILED: an unexpected exception type in the regression cases (see above)\n")
        sys.stderr.flush()
        os._exit(3)
    R.end_prelude()
    prelude_calls = R.calls
    body = fuzz_random if args.mode == "random" else fuzz_structured
    capped, finished = [False], [False]

    def make_run(run_seed, examples):
        @hypothesis_seed(run_seed)
        @settings(max_examples=examples, deadline=None, database=None, derandomize=False,
                  phases=[Phase.generate], suppress_health_check=list(HealthCheck), print_blob=False)
        @given(st.data())
        def run(data):
            if args.max_seconds is not None and time.monotonic() - t0 > args.max_seconds:
                capped[0] = finished[0] = True
                raise Done()
            if args.calls and R.calls - prelude_calls >= args.calls:
                finished[0] = True
                raise Done()
            body(data)
        return run

    # cuDNN is not always deterministic for the same call sequence (state shared through pool objects), so
    # hypothesis may find that replaying a prefix takes another path (FlakyStrategyDefinition); that is not a
    # failure of the code under test: go on with a derived seed until the example budget is spent.
    restarts = 0
    while True:
        try:
            make_run(seed + restarts, max(1, args.examples - R.example))()
            break
        except Done:
            break
        except Unexpected:
            sys.stderr.write("FUZZ-FAILED: an unexpected exception type (see above)\n")
            sys.stderr.flush()
            os._exit(3)
        except (FlakyStrategyDefinition, FlakyReplay) as e:
            if finished[0]:  # hypothesis noticed our Done (raised mid-generation) as a change of behaviour
                break
            restarts += 1
            R.comment(f"hypothesis: {type(e).__name__}; restarting with seed {seed + restarts}")
            if os.environ.get("CUDNN_BACKEND_FUZZ_DEBUG"):
                traceback.print_exception(e, file=sys.stderr)
            if R.example >= args.examples or restarts > 20:
                break
    elapsed = time.monotonic() - t0
    print("FUZZ-SUMMARY " + json.dumps(R.summary(mode=args.mode, seed=seed, examples=R.example,
                                                 prelude_calls=prelude_calls, seconds=round(elapsed, 2),
                                                 time_capped=capped[0], known=KNOWN, restarts=restarts,
                                                 finalized=dict(FINALIZED.most_common()))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
