"""The support matrix's catalogue: which operation graphs ``support`` probes, built through the ``Graph`` builder.

The default catalogue is systematic. Four *heads* — convolution forward, backward data (dgrad), backward filter
(wgrad) and matmul — are each followed by a *chain* of 0 to 3 pointwise operations, with and without a *tail*
(a reduction, or GEN_STATS) that reads the chain's real output; then the norms (layer, RMS, batch; forward and
backward) and attention (the unified SDPA operations and the composite graphs). Each in fp16, bf16, fp32, and
fp8 (E4M3) and int8 where a head takes them (convolution forward and matmul), NHWC and NCHW for convolutions.

The pointwise modes are grouped by family and each family is sampled by representatives, not permuted:

==================  =========================================================================================
family              representatives (the chain element names)
==================  =========================================================================================
arithmetic          ``bias`` (ADD of a per-channel tensor), ``scale`` (MUL by a per-channel tensor),
                    ``residual`` (ADD of a full-size tensor)
min/max             ``max`` (MAX with a per-channel tensor)
activations         ``relu``, ``gelu`` (erf), ``sigmoid``
activation grads    ``relu_bwd`` (RELU_BWD of the head's output against a saved full-size input)
math                ``exp``
compare and select  ``cmp_select`` (CMP_GT against a per-channel tensor, then BINARY_SELECT by it: two operations)
==================  =========================================================================================

Chains (``CHAINS``): none; every representative alone; ``bias`` followed by each activation; ``scale`` then
``bias``; ``bias`` then ``cmp_select``; and three chains of three taken from common networks: ``scale, bias,
relu`` (batch norm folded into inference), ``bias, residual, relu`` (a residual block's tail), ``bias, gelu,
scale``. Tails (``reduction``: ADD over every axis but the channel; ``genstats``: per-channel sum and sum of
squares) follow the empty chain and ``bias, relu``.

The norms (``norm_graph``): layer and RMS norm forward (training and inference) and backward, batch norm
forward (training) and backward, in fp16, bf16 and fp32 (batch norm NHWC and NCHW). Attention: SDPA_FWD,
SDPA_BWD and the composite forward (plain and causal) and backward graphs of ``patterns``, in fp16 and bf16.

Every entry is plain data (``CatalogueEntry``: a builder reference and its keyword arguments), so it pickles to
worker processes and names a graph that can be built again anywhere. Your own catalogue (``load_catalogue``):

* a Python file: every public function of it that can be called without arguments is one entry (it returns a
  ``Graph``, a ``Pattern`` or a finalized operation graph); a module-level ``CATALOGUE`` list of
  ``(name, function, {keyword: value})`` entries replaces that rule;
* any other file: one entry per line, ``BUILDER [key=value ...]`` (as ``--tasks`` reads), where BUILDER is a
  built-in pattern, ``FILE.py:FUNC``, ``module:FUNC``, or ``chain`` with ``head=``, ``chain=``, ``tail=``,
  ``data_type=`` and ``layout=`` keywords (``chain head=matmul chain=bias,gelu data_type=bf16``).
"""
from __future__ import annotations

import ast
import inspect
import itertools
import os
import pathlib
from dataclasses import dataclass, field

from cudnn_backend._bindings.enums import DataType
from cudnn_backend.core.plain import PlainData
from cudnn_backend.errors import CudnnBackendError, GraphError, did_you_mean
from cudnn_backend.graph import Graph, shapes
from cudnn_backend.core.families._build import as_data_type
from cudnn_backend.core.files import file_path
from cudnn_backend.tune import graphs
from cudnn_backend.tune.options import SupportOptions
from cudnn_backend.tune.sweeps import Task, tasks_from_file
from cudnn_backend.typed.tensors import data_type_name

__all__ = ["CatalogueEntry", "default_catalogue", "chain_graph", "norm_graph", "load_catalogue", "filter_entries",
           "label_matches", "HEADS", "NORMS", "CHAIN_ELEMENTS", "CHAINS", "TAILS", "FAMILIES", "DATA_TYPES", "LAYOUTS",
           "MAX_ENTRIES", "CHAIN_BUILDER", "NORM_BUILDER"]

#: The builder reference of the systematic head + chain + tail graphs.
CHAIN_BUILDER = "cudnn_backend.tune.catalogue:chain_graph"
#: A catalogue larger than this is refused (``load_catalogue`` and ``support`` say so; split it or raise the cap).
MAX_ENTRIES = 5000

HEADS = ("conv_fwd", "conv_dgrad", "conv_wgrad", "matmul")
#: chain element -> (pointwise family, what it does)
CHAIN_ELEMENTS = {
    "bias": ("arithmetic", "ADD a per-channel tensor"),
    "scale": ("arithmetic", "MUL by a per-channel tensor"),
    "residual": ("arithmetic", "ADD a full-size tensor"),
    "max": ("min/max", "MAX with a per-channel tensor"),
    "relu": ("activations", "RELU_FWD"),
    "gelu": ("activations", "GELU_FWD (erf)"),
    "sigmoid": ("activations", "SIGMOID_FWD"),
    "relu_bwd": ("activation grads", "RELU_BWD against a saved full-size input"),
    "exp": ("math", "EXP"),
    "cmp_select": ("compare and select", "CMP_GT with a per-channel tensor, then BINARY_SELECT by it"),
}
CHAINS = (
    (),
    *((name,) for name in CHAIN_ELEMENTS),
    ("bias", "relu"), ("bias", "gelu"), ("bias", "sigmoid"), ("scale", "bias"), ("bias", "cmp_select"),
    ("scale", "bias", "relu"), ("bias", "residual", "relu"), ("bias", "gelu", "scale"),
)
TAILS = ("reduction", "genstats")
_TAILED_CHAINS = ((), ("bias", "relu"))
#: the families of the matrix's rows (heatmap rows), in order
FAMILIES = (*HEADS, "layer_norm", "rms_norm", "batch_norm", "sdpa", "sdpa_composite")
#: the data types of the catalogue's graphs' inputs, by label (their printed name, ``core.names``)
DATA_TYPES = {data_type_name(dt): dt for dt in (DataType.CUDNN_DATA_HALF, DataType.CUDNN_DATA_BFLOAT16,
                                                DataType.CUDNN_DATA_FLOAT, DataType.CUDNN_DATA_FP8_E4M3,
                                                DataType.CUDNN_DATA_INT8)}
_FP16, _BF16, _FP32, _FP8, _INT8 = DATA_TYPES
LAYOUTS = ("nhwc", "nchw", "row", "bshd")  # "row": row-major (matmul; norms: hidden innermost); "bshd": attention

# the small sizes of every head: big enough for tensor cores, small enough to build fast
_N, _C, _K, _HW, _RS = 4, 64, 64, 16, 3
_BATCH, _M, _MM_N, _MM_K = 4, 128, 128, 64


@dataclass(frozen=True)
class CatalogueEntry(PlainData):
    """One graph of a catalogue: ``name``, its ``family`` (a heatmap row), ``data_type`` and ``layout`` labels
    ("-" when unknown until built), and how to build it: ``builder`` (a pattern name, ``module:FUNC`` or
    ``FILE.py:FUNC``) called with ``kwargs``. ``ops`` is a short description of its operations."""

    name: str
    family: str = "user"
    data_type: str = "-"
    layout: str = "-"
    builder: str = ""
    kwargs: dict = field(default_factory=dict)
    ops: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"catalogue entry: name must be a non-empty str, not {self.name!r}")
        if not isinstance(self.builder, str) or not self.builder:
            raise ValueError(f"catalogue entry {self.name!r}: builder must be a pattern name or 'module:FUNC'")
        if not isinstance(self.kwargs, dict):
            raise TypeError(f"catalogue entry {self.name!r}: kwargs must be a dict, not {type(self.kwargs).__name__}")
        for label in ("family", "data_type", "layout", "ops"):  # (they label the matrix's rows and filters)
            if not isinstance(getattr(self, label), str):
                raise TypeError(f"catalogue entry {self.name!r}: {label} must be a str, not "
                                f"{type(getattr(self, label)).__name__}")

    @property
    def key(self) -> str:
        """What tells entries apart: name, data type and layout."""
        return f"{self.name} [{self.data_type} {self.layout}]"

    @property
    def task(self) -> Task:
        """The entry as a sweep ``Task`` (builder, keyword arguments, label)."""
        return Task(self.builder, dict(self.kwargs), self.key)

    def to_dict(self) -> dict:
        """The entry as JSON-able data (``from_dict`` reads it back)."""
        return {"name": self.name, "family": self.family, "data_type": self.data_type, "layout": self.layout,
                "builder": self.builder, "kwargs": {k: _plain(v) for k, v in self.kwargs.items()}, "ops": self.ops}

    @classmethod
    def from_dict(cls, d: dict) -> "CatalogueEntry":
        """An entry from ``to_dict`` output (ValueError/TypeError naming what is missing or of another type)."""
        if not isinstance(d, dict):
            raise TypeError(f"catalogue entry: expected an object with name and builder, not {type(d).__name__}")
        if "name" not in d:
            raise ValueError(f"catalogue entry: no name (it has {', '.join(map(str, d)) or 'nothing'})")
        return cls(d["name"], d.get("family", "user"), d.get("data_type", "-"), d.get("layout", "-"),
                   d.get("builder", ""), d.get("kwargs", {}), d.get("ops", ""))


def _plain(value):
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------
# the systematic graphs
# ---------------------------------------------------------------------------------------------
def _label_of(data_type) -> str:
    """The label of any data type name, member or value: its printed name (``half`` and ``fp16`` -> ``fp16``)."""
    return data_type_name(as_data_type(data_type, "data_type"))


def _chain_names(chain) -> tuple:
    if chain is None or chain == "" or chain == ():
        return ()
    if not isinstance(chain, (str, list, tuple)):
        raise TypeError(f"chain: expected chain elements as a comma list or a sequence ({', '.join(CHAIN_ELEMENTS)}), "
                        f"not {type(chain).__name__}")
    items = chain.split(",") if isinstance(chain, str) else list(chain)
    out = []
    for item in items:
        name = str(item).strip().lower()
        if name not in CHAIN_ELEMENTS:
            raise ValueError(f"chain: {item!r} is not a chain element ({', '.join(CHAIN_ELEMENTS)})")
        out.append(name)
    if len(out) > 3:
        raise ValueError(f"chain: at most 3 elements, not {len(out)} ({', '.join(out)})")
    return tuple(out)


def chain_graph(head="conv_fwd", chain=(), tail=None, data_type=_FP16, layout="nhwc", *, stride=1,
                build=False) -> Graph:
    """The catalogue's head + chain + tail graph (see the module's notes), not finalized unless ``build``.

    ``head``: conv_fwd, conv_dgrad, conv_wgrad or matmul; ``chain``: up to 3 chain elements (names or a comma list);
    ``tail``: None, "reduction" or "genstats"; ``data_type``: fp16, bf16, fp32, fp8_e4m3, int8 (any data type name):
    the head's inputs, the chain's other operands (fp32 beside fp8 and int8) and the graph's final output;
    intermediates are virtual fp32, a reduction's output fp32; compute is fp32 (int32 for an int8 head);
    ``layout``: nhwc or nchw (convolutions; matmul is row-major); ``stride`` of the convolution."""
    if head not in HEADS:
        raise ValueError(f"head: {head!r} is not one of {', '.join(HEADS)}")
    chain = _chain_names(chain)
    if tail not in (None, *TAILS):
        raise ValueError(f"tail: {tail!r} is not None or one of {', '.join(TAILS)}")
    dt = as_data_type(data_type, "data_type")
    is_int = dt == DataType.CUDNN_DATA_INT8
    compute = DataType.CUDNN_DATA_INT32 if is_int else DataType.CUDNN_DATA_FLOAT
    g = Graph(_graph_name(head, chain, tail), io_data_type=dt)
    conv = head != "matmul"
    if conv:
        if layout not in ("nhwc", "nchw"):
            raise ValueError(f"layout: a convolution head takes 'nhwc' or 'nchw', not {layout!r}")
        x_dims, w_dims = [_N, _C, _HW, _HW], [_K, _C, _RS, _RS]
        y_dims = shapes.conv_output_dims(x_dims, w_dims, 1, stride, 1)
        kw = dict(padding=1, stride=stride, compute=compute)
        if head == "conv_fwd":
            x, w = g.tensor(x_dims, layout=layout, name="x"), g.tensor(w_dims, layout=layout, name="w")
            y = g.conv_fwd(x, w, **kw, output=not chain, name="y" if not chain else "conv")
        elif head == "conv_dgrad":
            dy, w = g.tensor(y_dims, layout=layout, name="dy"), g.tensor(w_dims, layout=layout, name="w")
            y = g.conv_bwd_data(dy, w, x_dims, **kw, output=not chain, name="dx" if not chain else "dgrad")
        else:
            x, dy = g.tensor(x_dims, layout=layout, name="x"), g.tensor(y_dims, layout=layout, name="dy")
            y = g.conv_bwd_filter(x, dy, w_dims, **kw, output=not chain, name="dw" if not chain else "wgrad")
        channel_dims = shapes.per_channel_dims(list(y.shape))
    else:
        if layout not in ("row", "-", None):
            raise ValueError(f"layout: a matmul head is row-major ('row'), not {layout!r}")
        a = g.tensor([_BATCH, _M, _MM_K], name="a")
        b = g.tensor([_BATCH, _MM_K, _MM_N], name="b")
        y = g.matmul(a, b, compute=compute, output=not chain, name="c")
        channel_dims = [1, 1, _MM_N]
    full_dims = list(y.shape)

    narrow = is_int or dt in (DataType.CUDNN_DATA_FP8_E4M3, DataType.CUDNN_DATA_FP8_E5M2)

    def operand(dims, name):  # bias, scale, residual, saved input: fp32 beside an fp8 or int8 head
        return g.tensor(dims, layout=layout if conv else None, data_type=DataType.CUDNN_DATA_FLOAT if narrow
                        else None, name=name)

    for i, element in enumerate(chain):
        last = i == len(chain) - 1
        out = dict(output=last, name="y" if last else f"{element}{i}")
        if element in ("bias", "scale", "max"):
            mode = {"bias": "ADD", "scale": "MUL", "max": "MAX"}[element]
            y = g.pointwise(mode, y, operand(channel_dims, f"{element}{i}_b"), **out)
        elif element == "residual":
            y = g.pointwise("ADD", y, operand(full_dims, f"residual{i}"), **out)
        elif element in ("relu", "gelu", "sigmoid", "exp"):
            y = g.pointwise({"relu": "RELU_FWD", "gelu": "GELU_FWD", "sigmoid": "SIGMOID_FWD", "exp": "EXP"}[element],
                            y, **out)
        elif element == "relu_bwd":
            y = g.pointwise("RELU_BWD", operand(full_dims, f"saved_x{i}"), dy=y, **out)
        else:  # cmp_select: y = y > b ? y : b
            b = operand(channel_dims, f"threshold{i}")
            mask = g.pointwise("CMP_GT", y, b, name=f"mask{i}")
            y = g.pointwise("BINARY_SELECT", y, b, mask, **out)
    if tail == "reduction":
        axes = [0, 2, 3] if conv else [0, 1]
        g.reduction(y, "ADD", axes=axes, output=True, output_data_type=DataType.CUDNN_DATA_FLOAT, name="sum")
    elif tail == "genstats":
        if not conv:
            raise GraphError("tail: genstats summarizes per channel of an NCHW-ranked tensor; a matmul head has none "
                             "(use tail='reduction')")
        g.gen_stats(y)
    if build:
        g.build()
    return g


def _graph_name(head, chain, tail) -> str:
    return head + "".join(f"+{c}" for c in chain) + (f">{tail}" if tail else "")


def _chain_entry(head, chain, tail, label, layout) -> CatalogueEntry:
    ops = " → ".join([head, *chain, *((tail,) if tail else ())])
    return CatalogueEntry(_graph_name(head, chain, tail), head, label, layout, CHAIN_BUILDER,
                          {"head": head, "chain": list(chain), "tail": tail, "data_type": label, "layout": layout},
                          ops)


def _head_variants(head) -> list:
    """(data type label, layout) pairs a head is probed in."""
    if head == "matmul":
        return [(label, "row") for label in DATA_TYPES]
    out = [(label, layout) for label in (_FP16, _BF16, _FP32) for layout in ("nhwc", "nchw")]
    if head == "conv_fwd":
        out += [(_FP8, "nhwc"), (_INT8, "nhwc")]
    return out


NORMS = ("layer_norm", "rms_norm", "batch_norm")
_NORM_VARIANTS = (("fwd", True), ("fwd", False), ("bwd", True))  # (direction, training)


def norm_graph(norm="layer_norm", direction="fwd", training=True, data_type=_FP16, layout="row", *,
               build=False) -> Graph:
    """A normalization graph of the catalogue: ``norm`` layer_norm, rms_norm or batch_norm; ``direction`` fwd or
    bwd; forward ``training`` (statistics written) or inference. Layer / RMS norm: X [256, 128, 1, 1] with the
    hidden axis innermost (``layout`` "row", as cudnn-frontend lays them out), per-feature fp32 scale (and bias);
    batch norm: X [4, 64, 16, 16] in ``layout`` nhwc or nchw, per-channel fp32 scale, bias and statistics (its
    forward has training only: cuDNN 9 has no batch-norm inference operation)."""
    if norm not in NORMS:
        raise ValueError(f"norm: {norm!r} is not one of {', '.join(NORMS)}")
    if direction not in ("fwd", "bwd"):
        raise ValueError(f"direction: {direction!r} is not 'fwd' or 'bwd'")
    dt = as_data_type(data_type, "data_type")
    f32 = DataType.CUDNN_DATA_FLOAT
    g = Graph(f"{norm}_{direction}" + ("" if training or direction == "bwd" else "_inference"), io_data_type=dt)
    if norm == "batch_norm":
        if layout not in ("nhwc", "nchw"):
            raise ValueError(f"layout: batch norm takes 'nhwc' or 'nchw', not {layout!r}")
        x_dims, pc_dims = [_N, _C, _HW, _HW], [1, _C, 1, 1]
        x = g.tensor(x_dims, layout=layout, name="x")

        def per(name, dims=pc_dims):
            return g.tensor(dims, layout=layout, data_type=f32, name=name)
    else:
        if layout not in ("row", "-", None):
            raise ValueError(f"layout: {norm} lays the hidden axis innermost ('row'), not {layout!r}")
        tokens, hidden = 256, 128
        xs = [hidden, 1, hidden, hidden]
        x = g.tensor([tokens, hidden, 1, 1], xs, name="x")
        pc_dims = [1, hidden, 1, 1]

        def per(name, dims=pc_dims):
            return g.tensor(dims, xs if dims == pc_dims else [1, 1, 1, 1], f32, name=name)
    if direction == "fwd":
        scale = per("scale")
        bias = None if norm == "rms_norm" else per("bias")
        if norm == "batch_norm":
            if not training:
                raise GraphError("batch norm forward inference is no NORM_FORWARD in cuDNN 9: fold the statistics "
                                 "into a scale and bias (the chain scale, bias)")
            g.batch_norm(x, scale, bias, name="bn")
        else:
            getattr(g, norm)(x, scale, bias, training=training, name=norm)
    else:
        dy = g.tensor(list(x.shape), list(x.strides), name="dy")
        scale = per("scale")
        stats_dims = pc_dims if norm == "batch_norm" else [list(x.shape)[0], 1, 1, 1]
        inv = per("inv_variance", stats_dims)
        if norm == "rms_norm":
            g.rms_norm_bwd(dy, x, scale, inv, name="rms_bwd")
        else:
            mean = per("mean", stats_dims)
            getattr(g, f"{norm}_bwd")(dy, x, scale, mean, inv, name=f"{norm}_bwd")
    if build:
        g.build()
    return g


#: the builder reference of the norm graphs
NORM_BUILDER = "cudnn_backend.tune.catalogue:norm_graph"
#: (family, pattern, {keywords}, description) of the attention entries (fp16 and bf16 each)
_ATTENTION_ENTRIES = (
    ("sdpa", "sdpa_fwd", {"b": 2, "h": 4, "s_q": 128, "s_kv": 128, "d": 64}, "SDPA_FWD (training)"),
    ("sdpa", "sdpa_bwd", {"b": 2, "h": 4, "s_q": 128, "s_kv": 128, "d": 64}, "SDPA_BWD"),
    ("sdpa_composite", "sdpa_composite_fwd", {"b": 2, "h": 4, "s_q": 128, "s_kv": 128, "d": 64},
     "composite attention forward (training)"),
    ("sdpa_composite", "sdpa_composite_fwd", {"b": 2, "h": 4, "s_q": 128, "s_kv": 128, "d": 64, "causal": True},
     "composite attention forward, causal mask"),
    ("sdpa_composite", "sdpa_composite_bwd", {"b": 2, "h": 4, "s_q": 128, "s_kv": 128, "d": 64},
     "composite attention backward"),
)


def _norm_entries() -> list:
    out = []
    for norm in NORMS:
        layouts = ("nhwc", "nchw") if norm == "batch_norm" else ("row",)
        for direction, training in _NORM_VARIANTS:
            if norm == "batch_norm" and not training:
                continue
            name = f"{norm}_{direction}" + ("" if training or direction == "bwd" else "_inference")
            for label in (_FP16, _BF16, _FP32):
                for layout in layouts:
                    out.append(CatalogueEntry(name, norm, label, layout, NORM_BUILDER,
                                              {"norm": norm, "direction": direction, "training": training,
                                               "data_type": label, "layout": layout},
                                              f"{norm.replace('_', ' ')} {'forward' if direction == 'fwd' else 'backward'}"
                                              f"{'' if training or direction == 'bwd' else ' (inference)'}"))
    return out


def _attention_entries() -> list:
    out = []
    for family, pattern, kwargs, what in _ATTENTION_ENTRIES:
        variant = "".join(f",{k}={v}" for k, v in kwargs.items() if k == "causal")
        for label in (_FP16, _BF16):
            out.append(CatalogueEntry(pattern + variant, family, label, "bshd", pattern,
                                      dict(kwargs, data_type=label), what))
    return out


def default_catalogue() -> list:
    """Every entry of the default catalogue (see the module's notes), in a fixed order."""
    out = []
    for head in HEADS:
        for label, layout in _head_variants(head):
            for chain in CHAINS:
                out.append(_chain_entry(head, chain, None, label, layout))
            for chain in _TAILED_CHAINS:
                for tail in TAILS:
                    if tail == "genstats" and head == "matmul":
                        continue
                    out.append(_chain_entry(head, chain, tail, label, layout))
    out.extend(_norm_entries())
    out.extend(_attention_entries())
    return out


# ---------------------------------------------------------------------------------------------
# filters
# ---------------------------------------------------------------------------------------------
def _wanted(values, what, known):
    if values is None:
        return None
    items = [values] if isinstance(values, str) else list(values)
    out = set()
    for item in items:
        for part in str(item).split(","):
            part = part.strip().lower()
            if not part:
                continue
            if known is not None and part not in known:
                raise ValueError(f"{what}: {part!r} is not one of {', '.join(known)}"
                                 f"{did_you_mean(part, known, listing=False)}")
            out.add(part)
    return out or None


def _wanted_data_types(values):
    """The labels of the data types named (any name ``core.names`` reads: ``half`` and ``fp16`` alike), "-"
    kept; None for None."""
    wanted = _wanted(values, "data_type", None)
    return None if wanted is None else {w if w == "-" else _label_of(w) for w in wanted}


def filter_entries(entries, *, family=None, data_type=None, layout=None, name=None) -> list:
    """The entries whose family, data type label and layout are among those given (each a name, a comma list or
    a list; None: any); ``name`` keeps entries whose name contains that text. An entry whose label is "-"
    (unknown until built: a user's entry) passes the data type and layout filters; ``support`` applies them to
    its built graph."""
    for key, value in (("family", family), ("data_type", data_type), ("layout", layout), ("name", name)):
        SupportOptions.check(key, value)  # (an empty filter, which would keep everything, refused)
    fam = _wanted(family, "family", (*FAMILIES, "user"))
    dts = _wanted_data_types(data_type)
    lays = _wanted(layout, "layout", (*LAYOUTS, "-"))
    out = []
    for e in entries:
        if fam is not None and e.family not in fam:
            continue
        if dts is not None and e.data_type != "-" and e.data_type not in dts:
            continue
        if lays is not None and e.layout != "-" and e.layout not in lays:
            continue
        if name is not None and str(name) not in e.name:
            continue
        out.append(e)
    return out


def label_matches(data_type, layout, *, data_types=None, layouts=None) -> bool:
    """Whether built labels pass the data type / layout filters (as ``filter_entries`` takes them); "-" (a graph
    that was never built) passes."""
    dts = _wanted_data_types(data_types)
    lays = _wanted(layouts, "layout", (*LAYOUTS, "-"))
    return (dts is None or data_type in dts or data_type == "-") and (lays is None or layout in lays or layout == "-")


# ---------------------------------------------------------------------------------------------
# the user's catalogue
# ---------------------------------------------------------------------------------------------
def load_catalogue(path) -> list:
    """A user's catalogue from a Python file or a text file (see the module's notes); ValueError naming the file
    and line for anything it cannot read, an empty catalogue, or one past ``MAX_ENTRIES`` entries."""
    p = file_path(path, "catalogue")
    if not p.is_file():
        raise ValueError(f"catalogue: {str(p)!r} is not a file")
    entries = _python_catalogue(p) if p.suffix == ".py" else _text_catalogue(p)
    if not entries:  # (a text file listing none is refused as it is read: tasks_from_file)
        raise ValueError(f"catalogue: {str(p)!r} lists no graphs (no public function callable without arguments, and "
                         "no CATALOGUE list)")
    if len(entries) > MAX_ENTRIES:
        raise ValueError(f"catalogue: {str(p)!r} lists more than {MAX_ENTRIES} graphs (reading stopped there); split "
                         "it into several files")
    return entries


def _text_catalogue(p: pathlib.Path) -> list:
    try:
        size = p.stat().st_size
    except OSError as e:
        raise ValueError(f"catalogue: {e}") from None
    if size > 16 << 20:
        raise ValueError(f"catalogue: {str(p)!r} is {size} bytes; a text catalogue is one short line per graph "
                         "(at most 16 MiB)")
    try:
        tasks = tasks_from_file(p, "catalogue")
    except UnicodeDecodeError as e:
        raise ValueError(f"catalogue: {str(p)!r} is not UTF-8 text ({e.reason})") from None
    except OSError as e:
        raise ValueError(f"catalogue: {e}") from None
    out = []
    for t in tasks:
        if len(out) > MAX_ENTRIES:
            break
        if t.builder == "chain":
            kw = dict(t.kwargs)
            try:
                head = kw.get("head", "conv_fwd")
                chain = _chain_names(kw.get("chain", ()))
                tail = kw.get("tail")
                label = _label_of(kw.get("data_type", _FP16))
                layout = kw.get("layout", "row" if head == "matmul" else "nhwc")
                unknown = set(kw) - {"head", "chain", "tail", "data_type", "layout", "stride"}
                if unknown:
                    raise ValueError(f"unknown keyword(s) {', '.join(sorted(unknown))}")
                try:  # its values checked where they are used (a typo is the line's mistake, not a matrix row)
                    chain_graph(head, chain, tail, kw.get("data_type", _FP16), layout, stride=kw.get("stride", 1))
                except CudnnBackendError:
                    pass  # a well-formed graph the package refuses: the probe's answer, a row of the matrix
            except (TypeError, ValueError) as e:
                raise ValueError(f"catalogue: {str(p)!r}: chain {t.kwargs}: {e}") from None
            entry = _chain_entry(head, chain, tail, label, layout)
            if "stride" in kw:
                entry = CatalogueEntry(entry.name + f",stride={kw['stride']}", entry.family, entry.data_type,
                                       entry.layout, entry.builder, dict(entry.kwargs, stride=kw["stride"]), entry.ops)
            out.append(entry)
            continue
        name = t.builder.rpartition(":")[2] if ":" in t.builder else t.builder
        if t.kwargs:
            name += " " + " ".join(f"{k}={v}" for k, v in t.kwargs.items())
        label = _label_of(t.kwargs["data_type"]) if "data_type" in t.kwargs else "-"
        out.append(CatalogueEntry(name, "user", label, str(t.kwargs.get("layout", "-")), t.builder, dict(t.kwargs)))
    return out


def _python_catalogue(p: pathlib.Path) -> list:
    module = graphs.load_file_module(p, "catalogue")
    ref = os.fspath(p)
    listed = getattr(module, "CATALOGUE", None)
    if listed is not None:
        return _listed_entries(listed, module, ref, p)
    out = []
    for attr, fn in vars(module).items():
        if attr.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != module.__name__:
            continue
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            continue
        if any(q.default is q.empty and q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD, q.KEYWORD_ONLY)
               for q in params):
            continue
        out.append(CatalogueEntry(attr, "user", "-", "-", f"{ref}:{attr}", {}, (fn.__doc__ or "").strip()
                                  .split("\n")[0][:80]))
    return out


def _listed_entries(listed, module, ref, p) -> list:
    try:  # one past the limit is enough to refuse it (an endless iterator would never end)
        items = list(itertools.islice(iter(listed), MAX_ENTRIES + 1))
    except TypeError:
        raise ValueError(f"catalogue: {str(p)!r}: CATALOGUE must be a list of (name, function, {{keywords}}), not "
                         f"{type(listed).__name__}") from None
    out = []
    for i, item in enumerate(items):
        if len(out) > MAX_ENTRIES:
            break
        try:
            name, fn, *rest = item
            kwargs = dict(rest[0]) if rest else {}
        except (TypeError, ValueError):
            raise ValueError(f"catalogue: {str(p)!r}: CATALOGUE[{i}] is not (name, function[, {{keywords}}]): "
                             f"{item!r}"[:300]) from None
        if not callable(fn) or getattr(module, getattr(fn, "__name__", ""), None) is not fn:
            raise ValueError(f"catalogue: {str(p)!r}: CATALOGUE[{i}] ({name!r}): the function must be defined at the "
                             "top level of that file (workers import it by name)")
        try:
            ast.literal_eval(repr(kwargs))
        except (ValueError, SyntaxError):
            raise ValueError(f"catalogue: {str(p)!r}: CATALOGUE[{i}] ({name!r}): keywords must be plain values "
                             "(numbers, strings, lists, ...)") from None
        label = _label_of(kwargs["data_type"]) if "data_type" in kwargs else "-"
        out.append(CatalogueEntry(str(name), "user", label, str(kwargs.get("layout", "-")),
                                  f"{ref}:{fn.__name__}", kwargs))
    return out
