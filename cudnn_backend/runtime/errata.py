"""Engine errata: deny lists of engine configs in cudnn-frontend's format, read unchanged, honoured wherever a config
is chosen, and written from what the explorer finds.

The format is cudnn-frontend's (``include/cudnn_frontend_Errata.h``; PyTorch reads the same file through
``CUDNN_ERRATA_JSON_FILE``)::

    {"version": 1, "rules": [{"rule_id": "...", "operation": "ConvBwdData", "engine": 1, "knob": ["k2=4", "k3=0"],
      "cudnn_version_start": 8000, "cudnn_version_end": -1,
      "shape_format": "NCHW", "input_shape": [1, 32, 128, 128], "filter_shape": [32, 32, 3, 3]}]}

A rule denies a plan whose *tag* starts with ``<operation>_eng<engine>_`` and contains every ``knob`` string, for a
cuDNN version in ``[cudnn_version_start, cudnn_version_end)`` (-1: no end). The tag is the one cudnn-frontend
builds: each operation's tag followed by ``_`` (``ConvFwd``, ``ConvBwdData``, ``ConvBwdFilter``, ``Matmul``,
``Reduction``, a pointwise operation's mode such as ``ADD`` or ``RELU_FWD``, ...; nothing for an operation
cudnn-frontend gives no tag), then ``eng<engine index>``, then ``_k<knob type number>=<value>`` per knob choice in
cuDNN's order: ``ConvFwd_ADD_RELU_FWD_eng7_k2=4_k3=0``. ``plan_tag`` makes it for the package's configs, so a rule
denies exactly the configs cudnn-frontend's matching would. The shape filters apply to a graph whose tag names one
convolution (``ConvFwd``, ``ConvBwdData``, ``ConvBwdFilter``), ``-1`` matching any size: ``input_shape`` is the
convolution's input (dgrad: its output dx) in ``shape_format`` order, ``filter_shape`` its filter, always
``[K, C, R, S]``.

What differs from cudnn-frontend, by design:

* the version window is compared with the **loaded** cuDNN (cudnn-frontend compares its compile-time
  ``CUDNN_VERSION``; the package has no other);
* the shapes are read from the tensors' dimensions in cuDNN's order (cudnn-frontend reads them one place off).

Extensions, under the key ``"cudnn_backend"`` of a rule (a cudnn-frontend reader ignores them); every one given
must hold for the rule to deny:

================== ====================================================================================
``sm_start``       the GPU's SM version (major * 10 + minor: 86, 90, 100) at least this ...
``sm_end``         ... and below this (-1: no end)
``runtime_version_start`` / ``runtime_version_end``  the loaded cuDNN's version window (``91900``; -1: no end)
``data_types``     every listed data type (any name: ``fp16``/``half``, ``bf16``, ``fp32``, ``int8``, ...) is one of the graph's
                   real (not virtual, not by-value) tensors'
``families``       every listed operation family (``conv``, ``matmul``, ``norm``, ...) has an operation in the graph
``only_families``  every operation of the graph is of a listed family
``gapped_strides`` true: a real tensor's strides leave gaps between its elements (``has_gaps``)
``channels_first`` true: a real tensor of 4 or 5 dimensions keeps its channels off the fastest axis (NCHW;
                   ``is_channels_first``)
``graph_fingerprint``  the graph is this one (``typed.introspection.graph_fingerprint``)
``shapes``         ``[{"operation": "MATMUL", "tensor": "a", "dims": [-1, 128, 64]}]``: an operation of that type has
                   that tensor with those dimensions (cuDNN's order, -1 any), for any family
``exact_knobs``    true: each ``knob`` string must be a whole knob of the tag (``k2=4`` then does not match
                   ``k2=40``, which cudnn-frontend's substring matching would)
``reason``, ``found_by``, ``evidence``  what the rule is for and how it was found (not matched)
================== ====================================================================================

Files are refused whole (``ErrataError``, naming the rule and the field): not JSON, a key written twice in one
object, larger than ``MAX_FILE_BYTES``, nested deeper than ``MAX_DEPTH``, an unknown ``version``, more than
``MAX_RULES`` rules, a rule without ``operation`` or ``engine``, a field of the wrong type or out of range (an
engine past int64). Nothing of a refused file denies anything. What matches no graph (an ``operation`` not made of
operation tags, a ``shapes`` tensor the operation lacks) is a warning.

Where the errata come from (``resolve``): ``errata=`` given (an ``Errata``, a path; ``""`` or False: none), else
``$CUDNN_ERRATA_JSON_FILE`` (as cudnn-frontend reads it; empty: none). Beside them the package's known errata
(``known_errata``: ``data/known_errata.json``, configs cuDNN releases compute wrong) always apply; their rules may
name the operation ``ANY_OPERATION`` ("*": every graph's tag, the engine still matched).
"""
from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import json
import os
import pathlib
import re
import threading
import warnings
import weakref
from dataclasses import dataclass, field

from cudnn_backend._bindings.enums import AttributeName, KnobType, PointwiseMode
from cudnn_backend.core import schema
from cudnn_backend.core._descriptor import Descriptor, Handle
from cudnn_backend.core.families import FAMILIES, FAMILY_OF
from cudnn_backend.core.families._build import channels_last, flags_checked
from cudnn_backend.core.files import read_limited, write_whole
from cudnn_backend.core.json_checks import CONTROL_CHARACTERS, duplicate_key_words, json_error_words
from cudnn_backend.core.names import DATA_TYPE_ALIASES, read_data_type
from cudnn_backend.core.versions import format_version, loaded_version, sm_words
from cudnn_backend.errors import CudnnBackendError, ErrataError, GraphError, did_you_mean
from cudnn_backend.runtime import plans as _plans
from cudnn_backend.typed.introspection import graph_fingerprint, keyword_of, operations_of, tensor_slots
from cudnn_backend.typed.tensors import data_type_name, signature_of

__all__ = [
    "ENV_VAR", "FORMAT_VERSION", "EXTENSION", "MAX_FILE_BYTES", "MAX_RULES", "MAX_DEPTH", "Errata", "Rule",
    "GraphTraits", "Target", "ErrataError", "resolve", "deny", "mark", "traits_of", "target_of", "plan_tag",
    "operation_tag", "knob_strings", "new_rule", "record", "locked", "check_file", "version_words", "rule_sm_words",
    "known_errata", "has_gaps", "is_channels_first", "ANY_OPERATION",
]

ENV_VAR = "CUDNN_ERRATA_JSON_FILE"
FORMAT_VERSION = 1
EXTENSION = "cudnn_backend"  # the key of a rule's extensions
MAX_FILE_BYTES = 8 << 20
MAX_RULES = 10_000
MAX_DEPTH = 16
MAX_TEXT = 4096  # characters of one string field
MAX_CUDNN_VERSION = 99_99_99  # MAJOR*10000 + MINOR*100 + PATCH: the largest a version window may name
MAX_EVIDENCE = 20  # evidence entries kept per rule
_INT64_MAX = (1 << 63) - 1

# cudnn-frontend's operation tags (Operation_v8's operationTag); a pointwise operation's tag is its mode's name
_OPERATION_TAGS = {
    "CONVOLUTION_FORWARD": "ConvFwd", "CONVOLUTION_BACKWARD_DATA": "ConvBwdData",
    "CONVOLUTION_BACKWARD_FILTER": "ConvBwdFilter", "MATMUL": "Matmul", "REDUCTION": "Reduction",
    "GEN_STATS": "GenStats", "BN_FINALIZE_STATISTICS": "BNFinalize", "BN_BWD_WEIGHTS": "Dgrad_Drelu_BN_Bwd",
    "NORM_FORWARD": "Norm_Fwd", "NORM_BACKWARD": "Norm_Bwd", "RESAMPLE_FWD": "Resample_fwd",
    "RESAMPLE_BWD": "Resample_bwd", "RNG": "Rng", "RESHAPE": "Reshape",
}


@functools.lru_cache(maxsize=1)
def _graph_tag_pattern():
    """What a rule's ``operation`` must be to match a graph: operation tags (``_OPERATION_TAGS``, a pointwise mode's
    name; "" for an operation without one: SDPA, concatenation) joined by ``_``, as ``GraphTraits.operation``
    writes a graph's (longest tags tried first: RELU_FWD)."""
    tags = {*_OPERATION_TAGS.values(), *(m.name.removeprefix("CUDNN_POINTWISE_") for m in PointwiseMode)}
    one = "|".join(re.escape(t) for t in sorted(tags, key=len, reverse=True))
    return re.compile(f"(?:{one})?(?:_(?:{one})?)*"), sorted(tags)


@functools.lru_cache(maxsize=None)
def _tensor_keywords(short_type) -> tuple:
    """The tensor keywords of an operation type (``CONVOLUTION_FORWARD`` -> x, w, y): what a ``shapes`` entry's
    ``tensor`` names (the schema's input and output attributes, as ``tensor_slots`` names them)."""
    spec = schema.descriptor(f"{_OPERATION_PREFIX}{short_type}_DESCRIPTOR")
    return tuple(keyword_of(a) for a in spec.attributes if schema.ATTRIBUTES[a].io)


# the convolution tags whose rules may filter by shape: (input tensor, filter tensor) of the operation
_CONV_SHAPES = {"ConvFwd": ("x", "w"), "ConvBwdData": ("dx", "w"), "ConvBwdFilter": ("x", "dw")}
_SHAPE_FORMATS = {"NCHW": False, "NCDHW": False, "NHWC": True, "NDHWC": True}  # format -> channels last
_RULE_KEYS = ("rule_id", "operation", "engine", "knob", "cudnn_version_start", "cudnn_version_end", "shape_format",
              "input_shape", "filter_shape", EXTENSION)
_EXTENSION_KEYS = ("sm_start", "sm_end", "runtime_version_start", "runtime_version_end", "data_types", "families",
                   "only_families", "gapped_strides", "channels_first", "graph_fingerprint", "shapes", "exact_knobs",
                   "reason", "found_by", "evidence")
ANY_OPERATION = "*"  # a rule's operation matching every graph (this package's; cudnn-frontend matches it nowhere)
# the package's own rules: cuDNN releases measured to compute wrong results (data/known_errata.json)
KNOWN_ERRATA_FILE = pathlib.Path(__file__).resolve().parent.parent / "data" / "known_errata.json"
_FAMILY_NAMES = tuple(f.name for f in FAMILIES)
_OPERATION_PREFIX = "CUDNN_BACKEND_OPERATION_"


# ---------------------------------------------------------------------------------------------
# words
# ---------------------------------------------------------------------------------------------
def version_words(version) -> str:
    """A version of a window as text: 92801 -> "9.28.1", cuDNN 8's 8300 -> "8.3.0", None -> "no end"."""
    if version is None:
        return "no end"
    v = int(version)
    if v >= 10000:
        return format_version(v)
    return f"{v // 1000}.{v % 1000 // 100}.{v % 100}"


def rule_sm_words(sm, unknown: str = "?") -> str:
    """An SM version as rules and ``Target`` count it (CUDA's major * 10 + minor: 90, 100, 120), in words."""
    return sm_words(sm, unknown, per_major=10)


def _window_words(start, end, words) -> str:
    if end is not None and end == start + 1:
        return f"{words(start)} only"
    if end is None:
        return f"{words(start)} and later" if start else "every release"
    return f"{words(start)} up to {words(end)} (not included)"


# ---------------------------------------------------------------------------------------------
# what a rule is matched against: the plan tag, the graph, the GPU and the release
# ---------------------------------------------------------------------------------------------
def _short_type(op) -> str:
    name = op.descriptor_type.name
    return name[len(_OPERATION_PREFIX):-len("_DESCRIPTOR")] if name.startswith(_OPERATION_PREFIX) else name


def operation_tag(op) -> str:
    """cudnn-frontend's tag of one operation descriptor: ``ConvFwd``, ``Matmul``, a pointwise mode's name (``ADD``,
    ``RELU_FWD``), ...; "" for an operation cudnn-frontend gives no tag (SDPA, concatenation, ...)."""
    short = _short_type(op)
    if short == "POINTWISE":
        pw = op.values.get(AttributeName.CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR)
        mode = pw.values.get(AttributeName.CUDNN_ATTR_POINTWISE_MODE) if isinstance(pw, Descriptor) else None
        try:
            return PointwiseMode(int(mode)).name.removeprefix("CUDNN_POINTWISE_")
        except (TypeError, ValueError):
            return ""
    return _OPERATION_TAGS.get(short, "")


def knob_strings(knobs) -> list:
    """``["k2=4", "k3=0"]``: the knob choices (``{KnobType or its number: value}``, in cuDNN's order) as cudnn-frontend
    writes them into a plan tag."""
    return [f"k{int(k)}={int(v)}" for k, v in knobs.items()]


def plan_tag(graph_tag: str, engine_index: int, knobs) -> str:
    """cudnn-frontend's plan tag: the graph's tag (``GraphTraits.tag``: each operation's tag and ``_``), ``eng`` and
    the engine index, ``_k<type>=<value>`` per knob choice: ``ConvFwd_ADD_RELU_FWD_eng7_k2=4_k3=0``."""
    return f"{graph_tag}eng{int(engine_index)}" + "".join("_" + k for k in knob_strings(knobs))


@dataclass(frozen=True)
class GraphTraits:
    """What rules are matched against in a graph: ``tag`` (cudnn-frontend's operation-graph tag, each operation's tag
    followed by ``_``; None when the graph's operations are unknown here, e.g. read back from a plan), ``families``
    and ``data_types`` (of its real tensors), ``fingerprint``, and ``operations``: (type short name, {tensor keyword:
    dims}) per operation, in the graph's order."""

    tag: str | None
    families: tuple = ()
    data_types: tuple = ()
    fingerprint: str = ""
    operations: tuple = ()
    gapped: bool = False  # a real tensor's strides leave gaps between its elements
    channels_first: bool = False  # a real tensor of 4 or 5 dimensions whose channels (axis 1) are not the fastest
    other_families: bool = False  # an operation of no known family

    @property
    def operation(self) -> str | None:
        """The graph tag as a rule's ``operation`` names it (without the last ``_``)."""
        return None if self.tag is None else self.tag[:-1]

    def to_dict(self) -> dict:
        """The traits as plain data (``from_dict`` reads them back)."""
        return {"tag": self.tag, "families": list(self.families), "data_types": list(self.data_types),
                "fingerprint": self.fingerprint,
                "operations": [[name, {k: list(d) for k, d in dims.items()}] for name, dims in self.operations],
                "gapped": self.gapped, "other_families": self.other_families,
                "channels_first": self.channels_first}

    @classmethod
    def from_dict(cls, d: dict) -> "GraphTraits":
        """The traits ``to_dict`` wrote."""
        return cls(d.get("tag"), tuple(d.get("families", ())), tuple(d.get("data_types", ())),
                   d.get("fingerprint", ""), tuple((name, {k: tuple(v) for k, v in dims.items()})
                                                  for name, dims in d.get("operations", ())),
                   gapped=bool(d.get("gapped", False)), channels_first=bool(d.get("channels_first", False)),
                   other_families=bool(d.get("other_families", False)))


def has_gaps(dims, strides) -> bool:
    """Whether a tensor of ``dims`` laid out with ``strides`` leaves gaps between its elements: its axes (size-1 and
    broadcast ones aside), fastest first, do not each step over exactly the elements of the faster ones."""
    if dims is None or strides is None or len(dims) != len(strides):
        return False
    axes = sorted((int(st), int(d)) for d, st in zip(dims, strides) if int(d) > 1 and int(st) != 0)
    dense = 1
    for stride, dim in axes:
        if stride != dense:
            return True
        dense *= dim
    return False


def is_channels_first(dims, strides) -> bool:
    """Whether a tensor of 4 or 5 dimensions with more than one channel keeps its channels (axis 1) off the fastest
    place: NCHW and NCDHW, not NHWC and NDHWC (``channels_last``)."""
    if dims is None or strides is None or len(dims) not in (4, 5) or len(strides) != len(dims) or int(dims[1]) < 2:
        return False
    return not channels_last(dims, strides)


_TRAITS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_TRAITS_LOCK = threading.Lock()


def traits_of(operation_graph) -> GraphTraits:
    """The ``GraphTraits`` of a finalized operation graph (kept on it: it cannot change)."""
    try:
        return _TRAITS[operation_graph]
    except (KeyError, TypeError):
        pass
    ops = operations_of(operation_graph)
    if not ops:
        return GraphTraits(None)
    families, types, operations = set(), set(), []
    gapped = other = channels_first = False
    for op in ops:
        short = _short_type(op)
        fam = FAMILY_OF.get(op.descriptor_type.name)
        if fam is not None:
            families.add(fam)
        else:
            other = True
        dims = {}
        for keyword, t, _ in tensor_slots(op):
            _, tdims, tstrides, dt, virtual, by_value = signature_of(t)
            dims.setdefault(keyword, tuple(int(d) for d in tdims))
            if not virtual and not by_value:
                if dt is not None:
                    types.add(data_type_name(dt))
                gapped = gapped or has_gaps(tdims, tstrides)
                channels_first = channels_first or is_channels_first(tdims, tstrides)
        operations.append((short, dims))
    try:
        fingerprint = graph_fingerprint(operation_graph)
    except (GraphError, CudnnBackendError, AttributeError, TypeError):
        fingerprint = ""
    traits = GraphTraits("".join(operation_tag(op) + "_" for op in ops), tuple(sorted(families)),
                         tuple(sorted(types)), fingerprint, tuple(operations), gapped=gapped,
                         channels_first=channels_first, other_families=other)
    with _TRAITS_LOCK:
        with contextlib.suppress(TypeError):
            _TRAITS[operation_graph] = traits
    return traits


@dataclass(frozen=True)
class Target:
    """Where configs are chosen: ``sm`` (the GPU's SM version, major * 10 + minor; None when unknown) and ``version``
    (the loaded cuDNN, 92801), with the GPU's ``device`` name."""

    sm: int | None
    version: int
    device: str = ""

    def to_dict(self) -> dict:
        """The target as plain data."""
        return {"sm": self.sm, "cudnn_version": self.version, "device": self.device}


_GPU_TARGET: dict = {}


def target_of(handle=None, deviceprop=None, operation_graph=None) -> Target:
    """The ``Target`` of a device profile (a DEVICEPROP descriptor), a handle's GPU, the handle an operation graph
    was finalized with, or (none of them) this process's current GPU; SM None without any."""
    if deviceprop is None and handle is None and operation_graph is not None:
        candidate = operation_graph.values.get(AttributeName.CUDNN_ATTR_OPERATIONGRAPH_HANDLE)
        handle = candidate if isinstance(candidate, Handle) else None
    version = loaded_version()
    if deviceprop is None and handle is None:
        target = _GPU_TARGET.get(version)
        if target is not None:
            return target
        from_gpu = None
        with contextlib.suppress(CudnnBackendError, OSError):
            from_gpu = Handle()
        if from_gpu is None:
            return Target(None, version)
        try:
            name, ver, _ = _plans.device_key(handle=from_gpu)
        finally:
            from_gpu.close()
        target = _GPU_TARGET[version] = Target(int(ver) // 10 if ver else None, version, name)
        return target
    name, ver, _ = _plans.device_key(handle, deviceprop)
    return Target(int(ver) // 10 if ver else None, version, name)


# ---------------------------------------------------------------------------------------------
# rules
# ---------------------------------------------------------------------------------------------
def _shape_matches(dims, wanted, channels_last) -> bool:
    if len(dims) != len(wanted):
        return False
    ordered = (dims[0],) + tuple(dims[2:]) + (dims[1],) if channels_last else tuple(dims)
    return all(w == -1 or w == d for d, w in zip(ordered, wanted))


def _dims_match(dims, wanted) -> bool:
    return len(dims) == len(wanted) and all(w == -1 or w == d for d, w in zip(dims, wanted))


@dataclass(frozen=True)
class Rule:
    """One rule of an errata file: cudnn-frontend's fields, the extensions (see the module's notes), its position
    ``index`` in the file and its ``data`` as written (kept, unknown keys included, when the file is written
    again)."""

    index: int
    operation: str
    engine: int
    rule_id: str = ""
    knobs: tuple = ()
    version_start: int = 0
    version_end: int | None = None
    shape_format: str | None = None
    input_shape: tuple | None = None
    filter_shape: tuple | None = None
    sm_start: int | None = None
    sm_end: int | None = None
    runtime_start: int | None = None
    runtime_end: int | None = None
    data_types: tuple = ()
    families: tuple = ()
    only_families: tuple = ()
    gapped_strides: bool = False
    channels_first: bool = False
    fingerprint: str = ""
    shapes: tuple = ()  # ((operation short name, tensor keyword, dims), ...)
    exact_knobs: bool = False
    reason: str = ""
    found_by: str = ""
    data: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def name(self) -> str:
        """``rule_id``, or ``#<index>`` for a rule without one."""
        return self.rule_id or f"#{self.index}"

    @property
    def prefix(self) -> str:
        return f"{self.operation}_eng{self.engine}_"

    # -- the parts of a match ---------------------------------------------------------------------------------
    def matches_tag(self, tag: str) -> bool:
        """The tag and knob part of cudnn-frontend's match (``exact_knobs``: whole knobs); the operation
        ``ANY_OPERATION`` matches every graph's tag, the engine still."""
        if self.operation == ANY_OPERATION:
            if f"_eng{self.engine}_" not in "_" + tag + "_":
                return False
        elif not (tag + "_").startswith(self.prefix):
            return False
        if self.exact_knobs:
            tokens = set(tag.split("_"))
            return all(k in tokens for k in self.knobs)
        return all(k in tag for k in self.knobs)

    def version_holds(self, version: int) -> bool:
        """cudnn-frontend's version window (``cudnn_version_start``/``_end``) at ``version``."""
        return version >= self.version_start and (self.version_end is None or version < self.version_end)

    def scope_misses(self, target: Target) -> list:
        """Why the rule does not apply at ``target`` (release and GPU), in words; [] when it does."""
        out = []
        if not self.version_holds(target.version):
            out.append(f"cuDNN {_window_words(self.version_start, self.version_end, version_words)} "
                       f"(loaded: {version_words(target.version)})")
        if self.runtime_start is not None or self.runtime_end is not None:
            start = self.runtime_start or 0
            if target.version < start or (self.runtime_end is not None and target.version >= self.runtime_end):
                out.append(f"loaded cuDNN {_window_words(start, self.runtime_end, version_words)} (loaded: "
                           f"{version_words(target.version)})")
        if self.sm_start is not None or self.sm_end is not None:
            start = self.sm_start or 0
            if target.sm is None:
                out.append(f"SM {_window_words(start, self.sm_end, rule_sm_words)} (this GPU's SM is unknown)")
            elif target.sm < start or (self.sm_end is not None and target.sm >= self.sm_end):
                out.append(f"SM {_window_words(start, self.sm_end, rule_sm_words)} (here: SM "
                           f"{rule_sm_words(target.sm)})")
        return out

    def graph_misses(self, traits: GraphTraits) -> list:
        """Why the rule does not apply to this graph (its shapes, data types, families, fingerprint); [] when it
        does (the tag is matched separately)."""
        out = []
        inputs = _CONV_SHAPES.get(self.operation)
        if inputs is not None and (self.input_shape is not None or self.filter_shape is not None):
            first = traits.operations[0][1] if traits.operations else {}
            if self.input_shape is not None:
                dims = first.get(inputs[0])
                if dims is None or not _shape_matches(dims, self.input_shape, _SHAPE_FORMATS[self.shape_format]):
                    out.append(f"input shape {list(self.input_shape)} ({self.shape_format})")
            if self.filter_shape is not None:
                dims = first.get(inputs[1])
                if dims is None or not _shape_matches(dims, self.filter_shape, False):
                    out.append(f"filter shape {list(self.filter_shape)}")
        for op_name, keyword, wanted in self.shapes:
            if not any(name == op_name and _dims_match(dims.get(keyword, ()), wanted)
                       for name, dims in traits.operations):
                out.append(f"{op_name} tensor {keyword} of dims {list(wanted)}")
        missing = [t for t in self.data_types if t not in traits.data_types]
        if missing:
            out.append(f"data types {', '.join(self.data_types)}")
        missing = [f for f in self.families if f not in traits.families]
        if missing:
            out.append(f"families {', '.join(self.families)}")
        if self.only_families and (traits.other_families or any(f not in self.only_families
                                                                 for f in traits.families)):
            out.append(f"only operations of the families {', '.join(self.only_families)}")
        if self.gapped_strides and not traits.gapped:
            out.append("a tensor whose strides leave gaps")
        if self.channels_first and not traits.channels_first:
            out.append("a tensor with its channels not the fastest axis (NCHW)")
        if self.fingerprint and self.fingerprint != traits.fingerprint:
            out.append(f"graph {self.fingerprint[:12]}")
        return out

    def denies(self, tag: str, traits: GraphTraits, target: Target) -> bool:
        """Whether the rule denies the plan ``tag`` of a graph with ``traits`` at ``target``."""
        return (self.matches_tag(tag) and not self.scope_misses(target) and not self.graph_misses(traits))

    def describe(self) -> str:
        """What the rule denies, in one line."""
        what = f"{self.operation} engine {self.engine}"
        if self.knobs:
            what += " " + " ".join(self.knobs)
        parts = [what]
        if self.version_start or self.version_end is not None:
            parts.append(f"cuDNN {_window_words(self.version_start, self.version_end, version_words)}")
        if self.runtime_start is not None or self.runtime_end is not None:
            parts.append(f"loaded cuDNN {_window_words(self.runtime_start or 0, self.runtime_end, version_words)}")
        if self.sm_start is not None or self.sm_end is not None:
            parts.append(f"SM {_window_words(self.sm_start or 0, self.sm_end, rule_sm_words)}")
        if self.data_types:
            parts.append("data types " + ",".join(self.data_types))
        if self.families:
            parts.append("families " + ",".join(self.families))
        ignored = "" if self.operation in _CONV_SHAPES else " (ignored: shape filters apply to a lone convolution)"
        if self.input_shape is not None:
            parts.append(f"input {list(self.input_shape)} {self.shape_format}{ignored}")
        if self.filter_shape is not None:
            parts.append(f"filter {list(self.filter_shape)}{ignored}")
        for op_name, keyword, wanted in self.shapes:
            parts.append(f"{op_name}.{keyword} {list(wanted)}")
        if self.fingerprint:
            parts.append(f"graph {self.fingerprint[:12]}")
        return "; ".join(parts)

    def to_dict(self) -> dict:
        """The rule as written in the file."""
        return copy.deepcopy(self.data)


# ---------------------------------------------------------------------------------------------
# reading and checking a file
# ---------------------------------------------------------------------------------------------
def _type_name(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    return {int: "an integer", float: "a number", str: "a string", list: "a list", dict: "an object"}.get(
        type(v), type(v).__name__)


def _depth(data) -> int:
    """How deeply ``data`` (parsed JSON) nests, without recursion."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, (list, dict)):
            deepest = max(deepest, d)
            stack.extend((child, d + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def _item(where: str, i: int) -> str:
    """``where`` of a list's item: ``field 'knob'`` -> ``field 'knob[1]'``."""
    return where[:-1] + f"[{i}]'" if where.endswith("'") else f"{where}[{i}]"


class _Checker:
    """Collects every problem of a document, each naming the rule and the field."""

    def __init__(self, source):
        self.source = source
        self.errors: list = []
        self.warnings: list = []

    def where(self, index, rule_id, key=None) -> str:
        rid = f" ({rule_id!r})" if isinstance(rule_id, str) and rule_id else ""
        return f"rule {index}{rid}" + (f": field {key!r}" if key else "")

    def error(self, text):
        self.errors.append(text)

    def warn(self, text):
        self.warnings.append(text)

    def integer(self, value, where, minimum=None, allow_none_end=False, maximum=None):
        """An int (not a bool) from minimum to maximum; with ``allow_none_end`` -1 means "no end" (returned as
        None)."""
        if not isinstance(value, int) or isinstance(value, bool):
            self.error(f"{where}: expected an integer, not {_type_name(value)}")
            return False, None
        if allow_none_end and value == -1:
            return True, None
        extra = " (-1: no end)" if allow_none_end else ""
        if minimum is not None and value < minimum:
            self.error(f"{where}: expected an integer >= {minimum}{extra}, not {value}")
            return False, None
        if maximum is not None and value > maximum:
            self.error(f"{where}: expected an integer <= {maximum}{extra}, not {str(value)[:40]}")
            return False, None
        return True, value

    def text(self, value, where, required=False):
        if not isinstance(value, str):
            self.error(f"{where}: expected a string, not {_type_name(value)}")
            return None
        if len(value) > MAX_TEXT:
            self.error(f"{where}: longer than {MAX_TEXT} characters")
            return None
        control = CONTROL_CHARACTERS.search(value)
        if control:  # (an escape sequence would reach the terminal that prints the rule; a NUL, cuDNN's C strings)
            self.error(f"{where}: control character {control.group()!r} in {value[:80]!r}")
            return None
        if required and not value:
            self.error(f"{where}: expected a non-empty string")
            return None
        return value

    def strings(self, value, where):
        if not isinstance(value, list):
            self.error(f"{where}: expected a list of strings, not {_type_name(value)}")
            return None
        out = []
        for i, v in enumerate(value):
            s = self.text(v, _item(where, i))
            if s is None:
                return None
            out.append(s)
        return tuple(out)

    def dims(self, value, where, lengths=None):
        if not isinstance(value, list) or not value:
            self.error(f"{where}: expected a list of sizes (-1: any), not {_type_name(value)}")
            return None
        if lengths is not None and len(value) not in lengths:
            self.error(f"{where}: expected {' or '.join(map(str, lengths))} sizes, not {len(value)}")
            return None
        for i, v in enumerate(value):
            if not isinstance(v, int) or isinstance(v, bool) or (v < 1 and v != -1):
                self.error(f"{_item(where, i)}: expected a size >= 1 or -1 (any), not {v!r}")
                return None
        return tuple(value)

    def window(self, rule, start_key, end_key, where_of, minimum=0, maximum=MAX_CUDNN_VERSION):
        start, end = 0, None
        ok = True
        if start_key in rule:
            ok, start = self.integer(rule[start_key], where_of(start_key), minimum, maximum=maximum)
        if end_key in rule:
            ok2, end = self.integer(rule[end_key], where_of(end_key), minimum, allow_none_end=True, maximum=maximum)
            ok = ok and ok2
        if ok and end is not None and start is not None and end <= start:
            self.error(f"{where_of(end_key)}: {end} is not after {start_key} {start}: the window is empty")
            ok = False
        return ok, (start or 0), end


def _check_rule(ck: _Checker, i, rule) -> Rule | None:
    if not isinstance(rule, dict):
        ck.error(f"rule {i}: expected an object, not {_type_name(rule)}")
        return None
    rid = rule.get("rule_id")
    where = lambda key: ck.where(i, rid, key)  # noqa: E731 - the message prefix of this rule's fields
    n_errors = len(ck.errors)
    rule_id = ""
    if "rule_id" in rule:
        rule_id = ck.text(rule["rule_id"], where("rule_id")) or ""
    else:
        ck.warn(f"rule {i}: has no rule_id; it is named #{i} here")
    for key in rule:
        if key not in _RULE_KEYS:
            ck.warn(f"{where(key)}: not a field cudnn-frontend or this package reads (ignored)"
                    f"{did_you_mean(key, _RULE_KEYS, listing=False)}")
    operation = None
    if "operation" not in rule:
        ck.error(f"{ck.where(i, rid)}: has no 'operation' (cudnn-frontend requires it: ConvFwd, ConvBwdData, "
                 "ConvBwdFilter, Matmul, ...)")
    else:
        operation = ck.text(rule["operation"], where("operation"), required=True)
        pattern, tags = _graph_tag_pattern()
        if operation and operation != ANY_OPERATION and not pattern.fullmatch(operation):
            first = operation.split("_")[0]
            ck.warn(f"{where('operation')}: {operation!r} matches no graph: a graph's tag is its operations' tags "
                    f"joined by '_' (ConvFwd, ConvFwd_ADD_RELU_FWD, Matmul_ADD, ...; an operation without one, as "
                    f"SDPA, leaves its place empty)"
                    f"{did_you_mean(first, tags, listing=False) if first not in tags else ''}")
    engine = None
    if "engine" not in rule:
        ck.error(f"{ck.where(i, rid)}: has no 'engine' (cudnn-frontend requires the engine's global index)")
    else:
        ok, engine = ck.integer(rule["engine"], where("engine"), 0, maximum=_INT64_MAX)  # (cuDNN's: an int64)
    knobs = ()
    if "knob" in rule:
        knobs = ck.strings(rule["knob"], where("knob"))
        for k in knobs or ():
            head, sep, value = k.partition("=")
            if not (sep and head.startswith("k") and head[1:].isdigit() and value.lstrip("-").isdigit()):
                ck.warn(f"{where('knob')}: {k!r} is not of the form k<knob type>=<value> (it is matched as a "
                        "substring of the plan tag all the same)")
            elif int(head[1:]) not in set(map(int, KnobType)):
                ck.warn(f"{where('knob')}: {k!r}: knob type {head[1:]} is unknown to the loaded cuDNN")
    _, vstart, vend = ck.window(rule, "cudnn_version_start", "cudnn_version_end", where)
    shape_format = None
    if "shape_format" in rule:
        shape_format = ck.text(rule["shape_format"], where("shape_format"))
        if shape_format is not None and shape_format not in _SHAPE_FORMATS:
            ck.error(f"{where('shape_format')}: expected one of {', '.join(_SHAPE_FORMATS)}, not {shape_format!r}")
            shape_format = None
    input_shape = filter_shape = None
    if "input_shape" in rule:
        input_shape = ck.dims(rule["input_shape"], where("input_shape"), (4, 5))
        if "shape_format" not in rule:
            ck.error(f"{where('input_shape')}: needs a shape_format (NCHW or NHWC), as cudnn-frontend does")
    if "filter_shape" in rule:
        filter_shape = ck.dims(rule["filter_shape"], where("filter_shape"), (4, 5))
    if (input_shape is not None or filter_shape is not None) and operation is not None \
            and operation not in _CONV_SHAPES:
        ck.warn(f"{ck.where(i, rid)}: shape filters apply to the operations {', '.join(_CONV_SHAPES)} only; "
                f"cudnn-frontend ignores them for {operation!r}, so the rule denies every shape")
    ext = {}
    if EXTENSION in rule:
        ext = _check_extension(ck, rule[EXTENSION], lambda key: where(f"{EXTENSION}.{key}"),
                               where(EXTENSION))
    if len(ck.errors) > n_errors:
        return None
    return Rule(index=i, operation=operation, engine=engine, rule_id=rule_id, knobs=tuple(knobs or ()),
                version_start=vstart, version_end=vend, shape_format=shape_format, input_shape=input_shape,
                filter_shape=filter_shape, data=copy.deepcopy(rule), **ext)


def _data_type_short(name) -> str | None:
    """The one printed name of a data type a rule names by any of its names (``half``, ``fp16``, C names)."""
    member = read_data_type(name)
    return None if member is None else data_type_name(member)


def _check_extension(ck: _Checker, ext, where, where_self) -> dict:
    if not isinstance(ext, dict):
        ck.error(f"{where_self}: expected an object, not {_type_name(ext)}")
        return {}
    out = {}
    for key in ext:
        if key not in _EXTENSION_KEYS:
            ck.error(f"{where(key)}: not an extension this package knows{did_you_mean(key, _EXTENSION_KEYS)}")
    ok, sm_start, sm_end = ck.window(ext, "sm_start", "sm_end", where, minimum=0, maximum=None)
    if ok and ("sm_start" in ext or "sm_end" in ext):
        out["sm_start"], out["sm_end"] = sm_start, sm_end
    ok, rt_start, rt_end = ck.window(ext, "runtime_version_start", "runtime_version_end", where)
    if ok and ("runtime_version_start" in ext or "runtime_version_end" in ext):
        out["runtime_start"], out["runtime_end"] = rt_start, rt_end
    if "data_types" in ext:
        names = ck.strings(ext["data_types"], where("data_types"))
        if names is not None:
            shorts = []
            for n in names:
                s = _data_type_short(n)
                if s is None:
                    known = list(DATA_TYPE_ALIASES)
                    ck.error(f"{where('data_types')}: {n!r} is no cuDNN data type{did_you_mean(n.lower(), known)}")
                else:
                    shorts.append(s)
            out["data_types"] = tuple(shorts)
    for key in ("families", "only_families"):
        if key in ext:
            names = ck.strings(ext[key], where(key))
            if names is not None:
                for n in names:
                    if n not in _FAMILY_NAMES:
                        ck.error(f"{where(key)}: {n!r} is no operation family{did_you_mean(n, _FAMILY_NAMES)}")
                out[key] = names
    if "graph_fingerprint" in ext:
        fp = ck.text(ext["graph_fingerprint"], where("graph_fingerprint"), required=True)
        if fp is not None:
            if len(fp) != 64 or any(c not in "0123456789abcdef" for c in fp):
                ck.error(f"{where('graph_fingerprint')}: expected 64 lower-case hex digits (a SHA-256, as "
                         f"graph_fingerprint gives), not {fp[:80]!r}")
            out["fingerprint"] = fp
    if "shapes" in ext:
        out["shapes"] = _check_shapes(ck, ext["shapes"], where("shapes"))
    for key in ("exact_knobs", "gapped_strides", "channels_first"):
        if key in ext:
            if not isinstance(ext[key], bool):
                ck.error(f"{where(key)}: expected true or false, not {_type_name(ext[key])}")
            else:
                out[key] = ext[key]
    for key in ("reason", "found_by"):
        if key in ext:
            out[key] = ck.text(ext[key], where(key)) or ""
    if "evidence" in ext and not isinstance(ext["evidence"], (list, dict)):
        ck.error(f"{where('evidence')}: expected a list or an object, not {_type_name(ext['evidence'])}")
    return out


def _check_shapes(ck: _Checker, value, where) -> tuple:
    if not isinstance(value, list):
        ck.error(f"{where}: expected a list of {{operation, tensor, dims}}, not {_type_name(value)}")
        return ()
    out = []
    known_ops = {op for f in FAMILIES for op in f.operations}
    for j, item in enumerate(value):
        w = _item(where, j)
        if not isinstance(item, dict) or set(item) != {"operation", "tensor", "dims"}:
            ck.error(f"{w}: expected an object with exactly operation, tensor and dims")
            continue
        sub = lambda name: w[:-1] + f".{name}'" if w.endswith("'") else f"{w}.{name}"  # noqa: E731
        op = ck.text(item["operation"], sub("operation"), required=True)
        keyword = ck.text(item["tensor"], sub("tensor"), required=True)
        dims = ck.dims(item["dims"], sub("dims"))
        if op is not None:
            op = op.upper().removeprefix(_OPERATION_PREFIX).removesuffix("_DESCRIPTOR")
            if op not in known_ops:
                ck.error(f"{sub('operation')}: {item['operation']!r} is no operation"
                         f"{did_you_mean(op, sorted(known_ops))}")
                continue
        if op is not None and keyword is not None and keyword.lower() not in _tensor_keywords(op):
            ck.warn(f"{sub('tensor')}: {item['tensor']!r} is no tensor of {op} (it has "
                    f"{', '.join(_tensor_keywords(op))}): the entry matches no graph")
        if op is not None and keyword is not None and dims is not None:
            out.append((op, keyword.lower(), dims))
    return tuple(out)


def _parse_document(data, ck: _Checker) -> list:
    if not isinstance(data, dict):
        ck.error(f"expected a JSON object with version and rules, not {_type_name(data)}")
        return []
    if "version" not in data:
        ck.warn(f"has no 'version' (cudnn-frontend's files say \"version\": {FORMAT_VERSION})")
    else:
        v = data["version"]
        if not isinstance(v, int) or isinstance(v, bool) or v != FORMAT_VERSION:
            ck.error(f"field 'version': {v!r} is not a version this package reads (it reads version "
                     f"{FORMAT_VERSION}, cudnn-frontend's)")
            return []
    for key in data:
        if key not in ("version", "rules"):
            ck.warn(f"field {key!r}: not read (an errata file has version and rules)")
    if "rules" not in data:
        ck.error("has no 'rules' (a list of rules)")
        return []
    rules = data["rules"]
    if not isinstance(rules, list):
        ck.error(f"field 'rules': expected a list of rules, not {_type_name(rules)}")
        return []
    if len(rules) > MAX_RULES:
        ck.error(f"field 'rules': {len(rules)} rules, more than {MAX_RULES}; split the file")
        return []
    out = []
    seen = {}
    for i, rule in enumerate(rules):
        r = _check_rule(ck, i, rule)
        if r is None:
            continue
        if r.rule_id:
            if r.rule_id in seen:
                ck.warn(f"rule {i} ({r.rule_id!r}): the same rule_id as rule {seen[r.rule_id]}")
            seen.setdefault(r.rule_id, i)
        out.append(r)
    return out


def _load_text(text: str, source: str):
    if len(text) > MAX_FILE_BYTES:
        raise ErrataError(f"errata {source}: {len(text):,} characters, more than {MAX_FILE_BYTES:,}: refused "
                          "(an errata file is a short list of rules)", source)
    try:
        data = json.loads(text)
    except RecursionError:
        raise ErrataError(f"errata {source}: nested deeper than {MAX_DEPTH} levels: refused", source) from None
    except ValueError as e:
        raise ErrataError(f"errata {source}: not JSON ({json_error_words(e)})", source) from None
    if _depth(data) > MAX_DEPTH:
        raise ErrataError(f"errata {source}: nested deeper than {MAX_DEPTH} levels: refused", source)
    duplicate = duplicate_key_words(text)
    if duplicate is not None:  # (cudnn-frontend's reader may keep another of the two: what the rule says is unclear)
        raise ErrataError(f"errata {source}: {duplicate}: refused", source)
    return data


def _read_file(path) -> str:
    p = pathlib.Path(os.fspath(path))
    source = str(p)
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        raise ErrataError(f"errata {source}: no such file", source) from None
    except OSError as e:
        raise ErrataError(f"errata {source}: cannot read it ({e})", source) from None
    if not p.is_file():
        raise ErrataError(f"errata {source}: not a file", source)
    if size > MAX_FILE_BYTES:
        raise ErrataError(f"errata {source}: {size:,} bytes, more than {MAX_FILE_BYTES:,}: refused (an errata file "
                          "is a short list of rules)", source)
    try:
        raw = read_limited(p, MAX_FILE_BYTES)
    except OSError as e:
        raise ErrataError(f"errata {source}: cannot read it ({e})", source) from None
    if raw is None:
        raise ErrataError(f"errata {source}: more than {MAX_FILE_BYTES:,} bytes: refused", source)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ErrataError(f"errata {source}: not UTF-8 text ({e})", source) from None


def check_file(path=None, *, text=None, source=None) -> tuple:
    """(rules, errors, warnings) of an errata file (or ``text``): every problem found, each naming the rule and the
    field; a file that cannot be read or parsed at all raises ``ErrataError``."""
    if text is None:
        source = source or str(path)
        text = _read_file(path)
    source = source or "text"
    ck = _Checker(source)
    rules = _parse_document(_load_text(text, source), ck)
    return rules, ck.errors, ck.warnings


# ---------------------------------------------------------------------------------------------
# Errata: a checked file
# ---------------------------------------------------------------------------------------------
class Errata:
    """The rules of one errata file, checked (``load``, ``from_json``, ``from_dict``; ``resolve`` finds the file).
    ``deny(tag, traits, target)`` gives the first rule that denies a plan (cudnn-frontend also stops at the first),
    ``frontend_denies(tag, version)`` is cudnn-frontend's own match of a tag alone (what PyTorch asks);
    ``to_dict``/``write`` give the file back (rules read keep every key they had). Plain data: it pickles."""

    def __init__(self, rules=(), *, source="", warnings=()):
        self.rules = tuple(rules)
        self.source = source
        self.warnings = tuple(warnings)

    @classmethod
    def load(cls, path) -> "Errata":
        """The errata of a file; ``ErrataError`` (every problem, each naming the rule and the field) when it is not a
        valid errata file: nothing of it is used then."""
        return cls.from_json(_read_file(path), source=str(path))

    @classmethod
    def from_json(cls, text: str, source: str = "text") -> "Errata":
        """The errata of a JSON text (``source`` names it in messages)."""
        if not isinstance(text, str):
            raise TypeError(f"text: expected the errata file's JSON text, not {type(text).__name__}")
        return cls._checked(_load_text(text, source), source)

    @classmethod
    def from_dict(cls, data, source: str = "data") -> "Errata":
        """The errata of parsed JSON (``{"version": 1, "rules": [...]}``)."""
        if _depth(data) > MAX_DEPTH:
            raise ErrataError(f"errata {source}: nested deeper than {MAX_DEPTH} levels: refused", source)
        return cls._checked(data, source)

    @classmethod
    def _checked(cls, data, source) -> "Errata":
        ck = _Checker(source)
        rules = _parse_document(data, ck)
        if ck.errors:
            shown = "; ".join(ck.errors[:5]) + (f"; and {len(ck.errors) - 5} more" if len(ck.errors) > 5 else "")
            raise ErrataError(f"errata {source}: refused, nothing of it is used: {shown}", source, ck.errors)
        return cls(rules, source=source, warnings=ck.warnings)

    def __len__(self):
        return len(self.rules)

    def __bool__(self):  # the package's known errata apply beside an empty file's (no) rules
        return True

    def __iter__(self):
        return iter(self.rules)

    def __repr__(self):
        return f"<Errata {len(self.rules)} rule(s) from {self.source or 'nowhere'}>"

    def __str__(self):
        return f"errata {self.source} ({len(self.rules)} rule(s))" if self.source else \
            f"errata ({len(self.rules)} rule(s))"

    def __eq__(self, other):
        return isinstance(other, Errata) and self.digest == other.digest

    def __hash__(self):
        return hash(self.digest)

    @property
    def digest(self) -> str:
        """SHA-256 of the rules honoured, as written: these, then the package's known errata (what caches of results
        key on)."""
        known = known_errata()
        rules = self.rules + (() if self is known else known.rules)
        text = json.dumps([r.data for r in rules], sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    def origin(self, rule) -> str:
        """Where a rule this errata honours comes from (a Rule or its name): this file (its source, "given" for one
        in memory), or the package's known errata."""
        name = rule.name if isinstance(rule, Rule) else rule
        if any(r.name == name for r in self.rules):
            return self.source or "given"
        return "the package's known errata"

    def rule(self, name) -> Rule:
        """The rule whose ``rule_id`` (or ``#index``) is ``name``."""
        for r in self.rules:
            if r.name == name:
                return r
        raise KeyError(f"no rule {name!r} in {self}")

    def deny(self, tag, traits: GraphTraits, target: Target) -> Rule | None:
        """The first rule that denies the plan ``tag`` (``plan_tag``) of a graph with ``traits`` at ``target``: this
        file's rules, then the package's known errata (``known_errata``)."""
        if tag is None:
            return None
        known = known_errata()
        for r in self.rules + (() if self is known else known.rules):
            if r.denies(tag, traits, target):
                return r
        return None

    def frontend_denies(self, tag: str, version: int) -> Rule | None:
        """cudnn-frontend's match of a plan tag alone (``check_errata`` without an operation graph, what PyTorch's
        ``plan_errata_exception`` asks): the tag, the knobs and the version window; shapes and extensions not
        read."""
        for r in self.rules:
            if r.operation != ANY_OPERATION and (tag + "_").startswith(r.prefix) and r.version_holds(int(version)) \
                    and all(k in tag for k in r.knobs):
                return r
        return None

    def to_dict(self) -> dict:
        """The file: ``{"version": 1, "rules": [...]}``."""
        return {"version": FORMAT_VERSION, "rules": [r.to_dict() for r in self.rules]}

    def to_json(self) -> str:
        """``to_dict()`` as the file's JSON text."""
        return json.dumps(self.to_dict(), indent=1, default=str) + "\n"

    def write(self, path) -> pathlib.Path:
        """Write the file (whole, through a temporary file beside it)."""
        return write_whole(path, self.to_json())

    def merged(self, rules) -> "Errata":
        """These rules and ``rules`` (rule dicts or Rules): a rule whose ``rule_id`` is here already adds its
        evidence to the one here (the latest ``MAX_EVIDENCE`` kept)."""
        data = [r.to_dict() for r in self.rules]
        by_id = {d.get("rule_id"): d for d in data if d.get("rule_id")}
        for new in rules:
            new = new.to_dict() if isinstance(new, Rule) else copy.deepcopy(new)
            old = by_id.get(new.get("rule_id"))
            if old is None:
                data.append(new)
                if new.get("rule_id"):
                    by_id[new["rule_id"]] = new
                continue
            old_ext = old.setdefault(EXTENSION, {})
            evidence = old_ext.get("evidence")
            evidence = list(evidence) if isinstance(evidence, list) else ([evidence] if evidence else [])
            evidence += new.get(EXTENSION, {}).get("evidence", [])
            old_ext["evidence"] = evidence[-MAX_EVIDENCE:]
        return Errata.from_dict({"version": FORMAT_VERSION, "rules": data}, self.source or "merged")


# ---------------------------------------------------------------------------------------------
# where the errata come from, and the verdict on a config
# ---------------------------------------------------------------------------------------------
_LOADED: dict = {}  # path -> ((mtime_ns, size), Errata)
_LOADED_LOCK = threading.Lock()


def _load_cached(path, what) -> Errata:
    p = pathlib.Path(os.fspath(path))
    try:
        st = p.stat()
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = None
    key = str(p)
    with _LOADED_LOCK:
        hit = _LOADED.get(key)
        if hit is not None and stamp is not None and hit[0] == stamp:
            return hit[1]
    try:
        errata = Errata.load(p)
    except ErrataError as e:  # (its message names the file as "errata FILE": the default ``what`` adds nothing)
        raise ErrataError(str(e) if what == "errata" else f"{what}: {e}", e.source, e.problems) from None
    for text in errata.warnings:  # rules that act otherwise than they read (`errata check` lists them), once a file
        warnings.warn(f"{what} {str(p)!r}: {text}", UserWarning, stacklevel=3)
    with _LOADED_LOCK:
        _LOADED[key] = (stamp, errata)
    return errata


def resolve(errata=None, what="errata") -> Errata:
    """The errata to honour: an ``Errata`` as it is; a path: that file; ``""`` or False: no file; None: the file
    ``$CUDNN_ERRATA_JSON_FILE`` names (no file when it is unset or empty). Without a file, an ``Errata`` of no rules
    of its own: the package's known errata (``known_errata``) apply always. A file that is not a valid errata file
    is refused (``ErrataError``), never half used."""
    if isinstance(errata, Errata):
        return errata
    if errata is False or errata == "":
        return Errata()
    if errata is None:
        env = os.environ.get(ENV_VAR, "")
        if not env:
            return Errata()
        return _load_cached(env, f"${ENV_VAR}")
    if isinstance(errata, (str, os.PathLike)):
        return _load_cached(errata, what)
    raise TypeError(f"{what}: expected an Errata, a file path, None ($CUDNN_ERRATA_JSON_FILE) or False (none), not "
                    f"{type(errata).__name__}")


_KNOWN: list = []  # the package's known errata, read once


def known_errata() -> Errata:
    """The package's own rules (``data/known_errata.json``): configs cuDNN releases were measured to compute wrong,
    denied wherever errata are honoured, beside any file's rules."""
    if not _KNOWN:
        errata = Errata.load(KNOWN_ERRATA_FILE)
        with _LOADED_LOCK:
            if not _KNOWN:
                _KNOWN.append(errata)
    return _KNOWN[0]


def deny(config, errata=None, *, target=None, traits=None) -> Rule | None:
    """The rule of ``errata`` (see ``resolve``; None: ``$CUDNN_ERRATA_JSON_FILE``) that denies ``config`` (a
    ``Config``), or None. ``target``/``traits``: where and for which graph (default: the config's device profile or
    GPU, and its operation graph)."""
    errata = resolve(errata)
    graph = config.operation_graph
    if traits is None:
        if graph is None:
            return None
        traits = traits_of(graph)
    if target is None:
        target = target_of(None, config.deviceprop, graph)
    if traits.tag is None:
        return None
    return errata.deny(plan_tag(traits.tag, config.engine_index, config.knobs), traits, target)


def mark(configs, errata=None, *, target=None) -> list:
    """``configs`` with ``denied_by`` set on each (the denying Rule, or None); the list returned as given."""
    errata = resolve(errata)
    for c in configs:
        c.denied_by = deny(c, errata, target=target)
    return configs


# ---------------------------------------------------------------------------------------------
# writing rules from findings
# ---------------------------------------------------------------------------------------------
def new_rule(*, traits: GraphTraits, target: Target, engine_index: int, knobs, kind: str, reason: str,
             evidence: dict, scope: str = "family", found_by: str = "") -> dict:
    """A rule (as written in the file) denying one config found bad: cudnn-frontend's fields (the graph's tag, the
    engine, every knob, the loaded release as the version window) and the extensions scoping it to this GPU's SM,
    the loaded release, the graph's data types and families (``scope="graph"``: this graph alone, by fingerprint),
    with ``reason``, ``found_by`` and the ``evidence``. ``kind``: "wrong result", "crashed", "refused at execute"."""
    if traits.tag is None:
        raise ValueError("new_rule: the graph's operations are unknown here, so it has no plan tag to deny")
    if scope not in ("family", "graph"):
        raise ValueError(f"scope: expected 'family' or 'graph', not {scope!r}")
    strings = knob_strings(knobs)
    version = int(target.version)
    scoped = [plan_tag(traits.tag, engine_index, knobs), target.sm, version, list(traits.data_types),
              list(traits.families), traits.fingerprint if scope == "graph" else ""]
    digest = hashlib.sha256(json.dumps(scoped).encode()).hexdigest()[:8]
    rule_id = f"{traits.operation}_eng{int(engine_index)}_{digest}"  # short; the fields say the rest
    ext = {"runtime_version_start": version, "runtime_version_end": version + 1}
    if target.sm is not None:
        ext.update(sm_start=target.sm, sm_end=target.sm + 1)
    if traits.data_types:
        ext["data_types"] = list(traits.data_types)
    if traits.families:
        ext["families"] = list(traits.families)
    if scope == "graph" and traits.fingerprint:
        ext["graph_fingerprint"] = traits.fingerprint
    ext.update(exact_knobs=True, reason=" ".join(CONTROL_CHARACTERS.sub(" ", f"{kind}: {reason}").split())[:MAX_TEXT],
               found_by=found_by or "cudnn-backend explore --errata-out", evidence=[evidence])
    return {"rule_id": rule_id, "operation": traits.operation, "engine": int(engine_index), "knob": strings,
            "cudnn_version_start": version, "cudnn_version_end": version + 1, EXTENSION: ext}


@contextlib.contextmanager
def locked(path):
    """An exclusive lock on the errata file ``path``'s sidecar lock file (``<path>.lock``): processes writing one
    errata file take turns."""
    path = pathlib.Path(os.fspath(path))
    lock = path.with_name(path.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            import fcntl  # POSIX; elsewhere writers do not take turns
        except ImportError:
            fcntl = None
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@flags_checked
def record(path, rules, *, lock=True) -> Errata:
    """Add ``rules`` (rule dicts, ``new_rule``'s) to the errata file ``path`` (created when missing; a rule already
    there by ``rule_id`` gains the new evidence), under ``locked(path)`` (``lock=False``: the caller holds it),
    written whole. A file there that is no valid errata file is refused (``ErrataError``), never overwritten.
    Returns the errata written."""
    p = pathlib.Path(os.fspath(path))
    rules = list(rules)
    with (locked(p) if lock else contextlib.nullcontext()):
        base = Errata.load(p) if p.exists() else Errata(source=str(p))
        out = base.merged(rules)
        out.source = str(p)
        if rules or not p.exists():
            out.write(p)
    return out
