"""Ready-made operation graphs (the cuDNN / cudnn-frontend reference patterns) built on ``Graph``.

Every pattern function makes a fresh :class:`~cudnn_backend.graph.Graph`, wires the operations the
way cudnn-frontend does for the same node (layouts and data types its samples use), and returns a
:class:`Pattern`: the ``Graph`` (``pattern.graph``), its important tensors by name
(``pattern.tensors["y"]`` or ``pattern.y``) and, unless ``build=False``, the finalized
``OperationGraph`` (``pattern.op_graph``). A ``Pattern`` unpacks as ``graph, tensors = pattern``.
With ``build=False`` nothing is finalized at graph level, so any descriptor (tensors, operations and
their child descriptors, see :meth:`Pattern.descriptors`) can be inspected or changed before
:meth:`Pattern.build`.

The ``add_*`` functions append one operation (or a small composite) to a ``Graph`` you hold and
return its output tensor(s); the pattern functions are made of them and of ``Graph``'s own builders
(``conv_fwd``, ``pointwise``, ``matmul``, ``reduction``).

Operations newer than the loaded cuDNN raise :class:`~cudnn_backend.CudnnVersionError` before any
descriptor is made (transpose and slice need 9.22, the unified softmax 9.20, RoPE 9.24, ...).
Without a GPU, :func:`bundled_device_prop` gives the H200 profile to run heuristics against, and
:func:`cudnn_messages` / :meth:`Pattern.why_no_engine` recover cuDNN's own reasons when heuristics
return no engine configuration.
"""
from __future__ import annotations

import contextlib
import ctypes
import math
import pathlib
import threading

from cudnn_backend import shapes
from cudnn_backend._descriptor import check_available, get_version
from cudnn_backend._generated.enums import (
    AttributeType,
    BnFinalizeStatsMode,
    DataType,
    GenStatsMode,
    HeurMode,
    NanPropagation,
    NormFwdPhase,
    NormMode,
    PaddingMode,
    PointwiseMode,
    ResampleMode,
    RngDistribution,
    TensorReordering,
)
from cudnn_backend.graph import Graph, GraphError
from cudnn_backend.typed import (
    DeviceProp,
    EngineHeuristics,
    OperationBlockScaleDequantize,
    OperationBlockScaleQuantize,
    OperationBnFinalizeStatistics,
    OperationConcat,
    OperationGenStats,
    OperationNormBackward,
    OperationNormForward,
    OperationResampleFwd,
    OperationReshape,
    OperationRng,
    Resample,
    Rng,
    Tensor,
    TypedDescriptor,
)

__all__ = [
    "Pattern", "bundled_device_prop", "heuristics", "engine_config_counts", "cudnn_messages", "cudnn_reasons",
    "why_no_engine", "require", "available", "loaded_version",
    # shapes
    "resample_output_dims", "norm_stats_dims", "concat_output_dims", "transpose_output_dims", "slice_output_dims",
    "bshd_strides",
    # single operations on a Graph
    "add_scalar", "add_norm_forward", "add_norm_backward", "add_gen_stats", "add_bn_finalize", "add_resample",
    "add_concat", "add_reshape", "add_rng", "add_transpose", "add_slice", "add_softmax", "add_composite_softmax",
    "add_sdpa_fwd", "add_sdpa_bwd", "add_block_scale_quantize", "add_block_scale_dequantize", "add_rope",
    # patterns
    "conv_fwd", "conv_bwd_data", "conv_bwd_filter", "conv_bias_relu", "matmul_bias_gelu", "layer_norm_fwd",
    "rms_norm_fwd", "layer_norm_bwd", "rms_norm_bwd", "bn_gen_stats", "bn_finalize", "reduction", "pooling",
    "resample", "concat", "reshape", "rng", "transpose", "slice", "softmax", "sdpa_fwd", "sdpa_bwd",
    "sdpa_composite_fwd", "sdpa_composite_bwd", "block_scale_quantize", "block_scale_dequantize_matmul", "rope",
]

F32 = DataType.CUDNN_DATA_FLOAT
F16 = DataType.CUDNN_DATA_HALF
BF16 = DataType.CUDNN_DATA_BFLOAT16
I32 = DataType.CUDNN_DATA_INT32
I64 = DataType.CUDNN_DATA_INT64
BOOL = DataType.CUDNN_DATA_BOOLEAN

DATA = pathlib.Path(__file__).resolve().parent / "data"
DEVICE_PROFILES = {"h200": "h200_deviceprop_cudnn91900.json"}


# ---------------------------------------------------------------------------------------------
# versions
# ---------------------------------------------------------------------------------------------
def require(*names: str, what: str = ""):
    """Raise CudnnVersionError unless every enumerant ``names`` (descriptor types, attributes,
    values, by C name) exists in the loaded cuDNN (``_generated.enums.SINCE`` vs ``get_version()``)."""
    for name in names:
        check_available(name, what)


def available(*names: str) -> bool:
    """Whether the loaded cuDNN has every enumerant ``names``."""
    from cudnn_backend._errors import CudnnVersionError

    try:
        require(*names)
    except CudnnVersionError:
        return False
    return True


# ---------------------------------------------------------------------------------------------
# shapes the Graph builder does not compute
# ---------------------------------------------------------------------------------------------
def _int(v) -> int:
    """An int or a (numerator, denominator) fraction as used by the resample descriptor."""
    if isinstance(v, (tuple, list)):
        return int(v[0]) // int(v[1])
    return int(v)


def resample_output_dims(x_dims, window, stride, pre_padding=0, post_padding=None):
    """Y dims of a pooling window over X [N, C, *spatial] (as cudnn-frontend infers them)."""
    n, c, *spatial = x_dims
    nsp = len(spatial)
    window = shapes._pair(window, nsp)
    stride = shapes._pair(stride, nsp)
    pre = shapes._pair(pre_padding, nsp)
    post = shapes._pair(pre if post_padding is None else post_padding, nsp)
    out = []
    for i in range(nsp):
        o = 1 + (spatial[i] + _int(pre[i]) + _int(post[i]) - _int(window[i])) // _int(stride[i])
        if o <= 0:
            raise ValueError(f"spatial dim {i}: input {spatial[i]} too small for window {window[i]}")
        out.append(o)
    return [n, c, *out]


def norm_stats_dims(x_dims, scale_dims):
    """Mean / inverse-variance dims: X's dims, 1 wherever the scale is not 1 (normalized axes)."""
    return [1 if s != 1 else d for d, s in zip(x_dims, scale_dims)]


def concat_output_dims(dims_list, axis):
    """Dims of the concatenation of ``dims_list`` along ``axis`` (all other dims must agree)."""
    first = list(dims_list[0])
    axis %= len(first)
    total = 0
    for dims in dims_list:
        dims = list(dims)
        if len(dims) != len(first) or any(a != b for i, (a, b) in enumerate(zip(dims, first)) if i != axis):
            raise ValueError(f"concat along axis {axis}: {dims} does not match {first}")
        total += dims[axis]
    out = list(first)
    out[axis] = total
    return out


def transpose_output_dims(x_dims, permutation):
    """Y dims of a transpose: ``y[i] = x[permutation[i]]``."""
    if sorted(permutation) != list(range(len(x_dims))):
        raise ValueError(f"{list(permutation)} is not a permutation of {len(x_dims)} axes")
    return [x_dims[p] for p in permutation]


def slice_output_dims(x_dims, start, limit, strides=None):
    """Y dims of a slice ``x[start:limit:stride]`` per axis (limit exclusive)."""
    strides = [1] * len(x_dims) if strides is None else list(strides)
    out = []
    for d, s, e, st in zip(x_dims, start, limit, strides):
        if not (0 <= s <= e <= d) or st <= 0:
            raise ValueError(f"slice [{s}:{e}:{st}] is outside an axis of size {d}")
        out.append(max(0, math.ceil((e - s) / st)))
    return out


def bshd_strides(dims):
    """Strides of a [B, H, S, D] attention tensor stored interleaved as B, S, H, D (cudnn-frontend's default)."""
    b, h, s, d = dims
    return [s * h * d, d, h * d, 1]


# ---------------------------------------------------------------------------------------------
# device profile, heuristics, cuDNN's reasons
# ---------------------------------------------------------------------------------------------
_device_props: dict = {}
_device_props_lock = threading.Lock()


def bundled_device_prop(name: str = "h200") -> DeviceProp:
    """A finalized DeviceProp from a device profile bundled with the package (default: H200)."""
    with _device_props_lock:
        dp = _device_props.get(name)
        if dp is None:
            try:
                text = (DATA / DEVICE_PROFILES[name]).read_text()
            except KeyError:
                raise ValueError(f"no bundled device profile {name!r}; have {sorted(DEVICE_PROFILES)}") from None
            dp = _device_props[name] = DeviceProp(json_representation=text).finalize()
        return dp


def _heur_mode(mode) -> HeurMode:
    if isinstance(mode, str):
        mode = mode.upper()
        return HeurMode[mode if mode.startswith("CUDNN_") else f"CUDNN_HEUR_MODE_{mode}"]
    return HeurMode(mode)


def heuristics(op_graph, mode=HeurMode.CUDNN_HEUR_MODE_A, deviceprop=None) -> list:
    """The engine configurations heuristics ``mode`` proposes for a finalized OperationGraph.

    Without a handle in the graph, pass ``deviceprop`` (e.g. :func:`bundled_device_prop`).
    """
    kwargs = dict(operation_graph=op_graph, mode=_heur_mode(mode))
    if deviceprop is not None:
        kwargs["deviceprop"] = deviceprop
    heur = EngineHeuristics(**kwargs).finalize()
    configs = heur.get("CUDNN_ATTR_ENGINEHEUR_RESULTS", AttributeType.CUDNN_TYPE_BACKEND_DESCRIPTOR)
    return list(configs)


def engine_config_counts(op_graph, deviceprop=None, modes=("A", "FALLBACK")) -> dict:
    """{mode name: number of engine configurations} for each heuristics mode."""
    return {m if isinstance(m, str) else _heur_mode(m).name: len(heuristics(op_graph, m, deviceprop)) for m in modes}


# cuDNN passes its message as lines separated by '\0' and ended by an empty line ('\0\0');
# reading it as one C string keeps only the header. A ctypes callback reads every line.
_CALLBACK_T = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_capture_lock = threading.RLock()
_capture_state = {"lib": None, "sinks": []}


def _split_message(address: int) -> str:
    lines = []
    while True:
        line = ctypes.string_at(address)
        if not line:
            break
        lines.append(line.decode("utf-8", "replace"))
        address += len(line) + 1
    return "\n".join(lines)


@_CALLBACK_T
def _capture_callback(severity, udata, dbg, msg):  # pragma: no cover - called by cuDNN
    try:
        if msg:
            text = _split_message(msg)
            for sink in list(_capture_state["sinks"]):
                sink.append(text)
    except BaseException:
        pass


@_CALLBACK_T
def _silent_callback(severity, udata, dbg, msg):  # pragma: no cover - called by cuDNN
    pass


def _cudnn_lib():
    if _capture_state["lib"] is None:
        from cudnn_backend import loaded_library

        lib = ctypes.CDLL(loaded_library().path)
        lib.cudnnSetCallback.argtypes = [ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]
        lib.cudnnSetCallback.restype = ctypes.c_int
        lib.cudnnGetCallback.argtypes = [ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_void_p),
                                         ctypes.POINTER(ctypes.c_void_p)]
        lib.cudnnGetCallback.restype = ctypes.c_int
        _capture_state["lib"] = lib
    return _capture_state["lib"]


@contextlib.contextmanager
def cudnn_messages(errors=True, warnings=True):
    """Collect cuDNN's own error/warning messages (full text, every line) into the list yielded.

    The previous callback (e.g. ``cudnn_backend.enable_logging``'s) is restored on exit.
    """
    lib = _cudnn_lib()
    sink: list = []
    mask = (2 if errors else 0) | (4 if warnings else 0)  # CUDNN_SEV_ERROR_EN | CUDNN_SEV_WARNING_EN
    with _capture_lock:
        outer = not _capture_state["sinks"]
        if outer:
            old_mask, old_udata, old_fptr = ctypes.c_uint(0), ctypes.c_void_p(), ctypes.c_void_p()
            lib.cudnnGetCallback(ctypes.byref(old_mask), ctypes.byref(old_udata), ctypes.byref(old_fptr))
            _capture_state["saved"] = (old_mask.value, old_udata.value, old_fptr.value)
            lib.cudnnSetCallback(mask, None, ctypes.cast(_capture_callback, ctypes.c_void_p))
        _capture_state["sinks"].append(sink)
    try:
        yield sink
    finally:
        with _capture_lock:
            _capture_state["sinks"].remove(sink)
            if not _capture_state["sinks"]:
                m, u, f = _capture_state.pop("saved")
                if not f:
                    # cuDNN turns (mask 0, no callback) into its default printer of errors to stderr;
                    # keep the library as silent as it was with a callback that drops everything
                    lib.cudnnSetCallback(m, None, ctypes.cast(_silent_callback, ctypes.c_void_p))
                else:
                    lib.cudnnSetCallback(m, u, f)


_NOISE = ("finalize_internal()", "ptr->isSupported()", "CUDNN_STATUS_NOT_INITIALIZED == status", "ptrDesc->finalize()",
          "library configuration is set to AUTO")


def cudnn_reasons(messages, limit=8) -> str:
    """The distinct "Reason:" lines of captured cuDNN messages (see :func:`cudnn_messages`), noise dropped."""
    out = []
    for text in messages:
        for line in text.splitlines():
            line = line.strip()
            if "Reason:" not in line or any(n.lower() in line.lower() for n in _NOISE):
                continue
            if line not in out:
                out.append(line)
    return "\n".join(out[:limit])


def why_no_engine(op_graph, deviceprop=None, modes=("A", "FALLBACK")) -> str:
    """cuDNN's own reasons (its warning log) why heuristics find no viable engine configuration."""
    with cudnn_messages() as messages:
        for mode in modes:
            heuristics(op_graph, mode, deviceprop)
    return cudnn_reasons(messages) or "cuDNN gave no reason"


# ---------------------------------------------------------------------------------------------
# the result object
# ---------------------------------------------------------------------------------------------
class Pattern:
    """A pattern's Graph and its important tensors by name; ``op_graph`` once built.

    ``graph, tensors = pattern`` unpacks it; ``pattern.y`` / ``pattern["y"]`` name tensors;
    ``check`` is what ``build`` passes to ``Graph.build`` (False only where cuDNN's own pattern
    needs a virtual tensor nothing consumes, see :func:`sdpa_composite_fwd`).
    """

    def __init__(self, name: str, graph: Graph, tensors: dict, *, check: bool = True, notes: str = "",
                 params: dict | None = None):
        self.name = name
        self.graph = graph
        self.tensors = {k: v for k, v in tensors.items() if v is not None}
        self.check = check
        self.notes = notes
        self.params = dict(params or {})

    # -- access ----------------------------------------------------------------------------------
    def __iter__(self):
        return iter((self.graph, self.tensors))

    def __getitem__(self, name) -> Tensor:
        return self.tensors[name]

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        tensors = self.__dict__.get("tensors", {})
        if name in tensors:
            return tensors[name]
        raise AttributeError(f"pattern {self.__dict__.get('name')!r} has no tensor {name!r}; "
                             f"it has {', '.join(tensors)}")

    @property
    def op_graph(self):
        return self.graph.op_graph

    @property
    def built(self) -> bool:
        return self.graph.op_graph is not None

    @property
    def operations(self) -> list:
        return list(self.graph.operations)

    def descriptors(self) -> list:
        """Every descriptor this pattern created: operations, their child descriptors (convolution,
        pointwise, resample, rng, ...) and tensors, each once."""
        seen, out = set(), []

        def visit(d):
            if not isinstance(d, TypedDescriptor) or id(d) in seen:
                return
            seen.add(id(d))
            out.append(d)
            for value in d._typed_state["values"].values():
                for v in value if isinstance(value, (list, tuple)) else [value]:
                    visit(v)

        for op in self.graph.operations:
            visit(op)
        for t in self.graph.tensors.values():
            visit(t)
        return out

    # -- finalize and engines ------------------------------------------------------------------------
    def build(self, handle=None):
        """Finalize the OperationGraph (idempotent)."""
        if self.graph.op_graph is None:
            self.graph.build(handle, check=self.check)
        return self.graph.op_graph

    def heuristics(self, mode="A", deviceprop=None) -> list:
        return heuristics(self.build(), mode, deviceprop)

    def engine_config_counts(self, deviceprop=None, modes=("A", "FALLBACK")) -> dict:
        return engine_config_counts(self.build(), deviceprop, modes)

    def why_no_engine(self, deviceprop=None, modes=("A", "FALLBACK")) -> str:
        return why_no_engine(self.build(), deviceprop, modes)

    def table(self) -> str:
        return self.graph.table()

    def to_dot(self) -> str:
        return self.graph.to_dot()

    def __repr__(self):
        state = "built" if self.built else "not built"
        return (f"<Pattern {self.name!r}: {len(self.graph.operations)} operations, tensors "
                f"{', '.join(self.tensors)} ({state})>")


def _finish(name, g, tensors, build, **kwargs) -> Pattern:
    p = Pattern(name, g, tensors, **kwargs)
    if build:
        p.build()
    return p


# ---------------------------------------------------------------------------------------------
# single operations on a Graph
# ---------------------------------------------------------------------------------------------
def _dt(value, default):
    return DataType(default if value is None else (DataType[value] if isinstance(value, str) else value))


def _enum(cls, value, prefix=""):
    if isinstance(value, str):
        key = value.upper()
        if key not in cls.__members__:
            key = prefix + key
        return cls[key]
    return cls(value)


def add_scalar(g: Graph, value, data_type=F32, *, rank=4, name=None) -> Tensor:
    """A by-value scalar tensor of ``rank`` ones (its value is kept as ``t.scalar_value`` for the variant pack)."""
    ones = [1] * rank
    t = g.tensor(ones, ones, data_type, name=name, by_value=True)
    t.__dict__["scalar_value"] = value
    return t


def _as_tensor(g, value, rank, name, data_type=F32):
    if value is None or isinstance(value, Tensor):
        return value
    return add_scalar(g, value, data_type, rank=rank, name=name)


def _out(g: Graph, output, dims, strides, data_type, name) -> Tensor:
    """An output tensor: the one given, a real one (output=True) or a virtual intermediate."""
    if isinstance(output, Tensor):
        if list(output.shape) != list(dims):
            raise GraphError(f"output {output.describe()} should have dims {list(dims)}")
        return output
    if output:
        return g.tensor(dims, strides, data_type, name=name)
    return g.tensor(dims, strides, g.intermediate_data_type, virtual=True, name=name)


def _like(dims, ref: Tensor):
    return shapes.strides_like(dims, ref.get_keyword("strides"))


def add_norm_forward(g: Graph, x: Tensor, scale: Tensor, bias: Tensor | None = None, *, epsilon=1e-5,
                     mode=NormMode.CUDNN_LAYER_NORM, phase=NormFwdPhase.CUDNN_NORM_FWD_TRAINING, stats_data_type=F32,
                     output=True, y_data_type=None, name="norm") -> dict:
    """OPERATION_NORM_FORWARD (layer/RMS/... norm): ``{"y", "mean", "inv_variance", "epsilon"}``.

    Stats (training only; RMS norm has no mean) are X's dims with the normalized axes (where the
    scale is not 1) set to 1, fp32, in X's axis order; epsilon is a by-value fp32 scalar.
    """
    mode = _enum(NormMode, mode, "CUDNN_")
    phase = _enum(NormFwdPhase, phase, "CUDNN_NORM_FWD_")
    rank = len(x.shape)
    eps = _as_tensor(g, epsilon, rank, f"{name}_epsilon")
    y = _out(g, output, x.shape, x.get_keyword("strides"), _dt(y_data_type, x.get_keyword("data_type")), f"{name}_y")
    kwargs = dict(mode=mode, phase=phase, xdesc=x, scale_desc=scale, epsilon_desc=eps, ydesc=y)
    if bias is not None:
        kwargs["bias_desc"] = bias
    mean = inv_var = None
    if phase == NormFwdPhase.CUDNN_NORM_FWD_TRAINING:
        sdims = norm_stats_dims(x.shape, scale.shape)
        sstrides = _like(sdims, x)
        inv_var = g.tensor(sdims, sstrides, stats_data_type, name=f"{name}_inv_variance")
        kwargs["inv_variance_desc"] = inv_var
        if mode != NormMode.CUDNN_RMS_NORM:
            mean = g.tensor(sdims, sstrides, stats_data_type, name=f"{name}_mean")
            kwargs["mean_desc"] = mean
    op = OperationNormForward(**kwargs)
    # the schema lists bias as required; RMS norm (and norms without bias) leave it out, as the frontend does
    op.finalize(check_required=bias is not None)
    g.add(op)
    return {"y": y, "mean": mean, "inv_variance": inv_var, "epsilon": eps}


def add_norm_backward(g: Graph, dy: Tensor, x: Tensor, scale: Tensor, mean: Tensor | None, inv_variance: Tensor, *,
                      mode=NormMode.CUDNN_LAYER_NORM, dbias=True, epsilon=None, grad_data_type=F32,
                      name="norm_bwd") -> dict:
    """OPERATION_NORM_BACKWARD: ``{"dx", "dscale", "dbias"}`` (dscale/dbias shaped like the scale, fp32)."""
    mode = _enum(NormMode, mode, "CUDNN_")
    dx = g.tensor(x.shape, x.get_keyword("strides"), x.get_keyword("data_type"), name=f"{name}_dx")
    dscale = g.tensor(scale.shape, scale.get_keyword("strides"), grad_data_type, name=f"{name}_dscale")
    kwargs = dict(mode=mode, xdesc=x, dydesc=dy, scale_desc=scale, inv_variance_desc=inv_variance, dscale_desc=dscale,
                  dxdesc=dx)
    if mean is not None:
        kwargs["mean_desc"] = mean
    db = None
    if dbias:
        db = g.tensor(scale.shape, scale.get_keyword("strides"), grad_data_type, name=f"{name}_dbias")
        kwargs["dbias_desc"] = db
    eps = _as_tensor(g, epsilon, len(x.shape), f"{name}_epsilon")
    if eps is not None:
        kwargs["epsilon_desc"] = eps
    op = OperationNormBackward(**kwargs)
    op.finalize(check_required=db is not None)  # RMS norm backward has no dbias
    g.add(op)
    return {"dx": dx, "dscale": dscale, "dbias": db}


def _per_channel(g, x: Tensor, data_type, name):
    dims = [1, x.shape[1], *([1] * (len(x.shape) - 2))]
    return g.tensor(dims, _like(dims, x), data_type, name=name)


def add_gen_stats(g: Graph, x: Tensor, *, math_prec=F32, stats_data_type=F32, name="genstats") -> dict:
    """OPERATION_GEN_STATS (per-channel sum and sum of squares, [1, C, 1, 1] fp32): ``{"sum", "sqsum"}``."""
    s = _per_channel(g, x, stats_data_type, f"{name}_sum")
    sq = _per_channel(g, x, stats_data_type, f"{name}_sqsum")
    g.add(OperationGenStats(mode=GenStatsMode.CUDNN_GENSTATS_SUM_SQSUM, math_prec=math_prec, xdesc=x, sumdesc=s,
                            sqsumdesc=sq))
    return {"sum": s, "sqsum": sq}


def add_bn_finalize(g: Graph, sum_: Tensor, sqsum: Tensor, scale: Tensor, bias: Tensor, *, accum_count,
                    epsilon=1e-5, momentum=0.1, prev_running_mean: Tensor | None = None,
                    prev_running_var: Tensor | None = None, math_prec=F32, name="bn_finalize") -> dict:
    """OPERATION_BN_FINALIZE_STATISTICS (training): equivalent scale/bias, saved mean / inverse std
    and, with previous running stats, the updated running stats. ``accum_count`` (N*H*W) is a
    by-value int64 scalar, epsilon and momentum by-value fp32 scalars."""
    rank = len(sum_.shape)

    def like(nm):
        return g.tensor(sum_.shape, sum_.get_keyword("strides"), F32, name=f"{name}_{nm}")

    out = {n: like(n) for n in ("eq_scale", "eq_bias", "saved_mean", "saved_inv_std")}
    out["accum_count"] = _as_tensor(g, accum_count, rank, f"{name}_accum_count", I64)
    out["epsilon"] = _as_tensor(g, epsilon, rank, f"{name}_epsilon")
    out["momentum"] = _as_tensor(g, momentum, rank, f"{name}_momentum")
    kwargs = dict(stats_mode=BnFinalizeStatsMode.CUDNN_BN_FINALIZE_STATISTICS_TRAINING, math_prec=math_prec,
                  y_sum_desc=sum_, y_sq_sum_desc=sqsum, scale_desc=scale, bias_desc=bias,
                  saved_mean_desc=out["saved_mean"], saved_inv_std_desc=out["saved_inv_std"],
                  eq_scale_desc=out["eq_scale"], eq_bias_desc=out["eq_bias"], accum_count_desc=out["accum_count"],
                  epsilon_desc=out["epsilon"], exp_averate_factor_desc=out["momentum"])
    if prev_running_mean is not None:
        out["next_running_mean"] = like("next_running_mean")
        out["next_running_var"] = like("next_running_var")
        kwargs.update(prev_running_mean_desc=prev_running_mean, prev_running_var_desc=prev_running_var,
                      updated_running_mean_desc=out["next_running_mean"],
                      updated_running_var_desc=out["next_running_var"])
    g.add(OperationBnFinalizeStatistics(**kwargs))
    return out


def add_resample(g: Graph, x: Tensor, *, mode=ResampleMode.CUDNN_RESAMPLE_MAXPOOL, window=2, stride=2,
                 pre_padding=0, post_padding=None, padding_mode=None, index=False,
                 index_data_type=DataType.CUDNN_DATA_INT8, compute=F32, output=True, name="resample") -> dict:
    """RESAMPLE descriptor + OPERATION_RESAMPLE_FWD (pooling): ``{"y", "index"}`` (index: max pooling only)."""
    mode = _enum(ResampleMode, mode, "CUDNN_RESAMPLE_")
    if padding_mode is None:
        padding_mode = PaddingMode.CUDNN_NEG_INF_PAD if mode == ResampleMode.CUDNN_RESAMPLE_MAXPOOL else \
            PaddingMode.CUDNN_ZERO_PAD
    padding_mode = _enum(PaddingMode, padding_mode, "CUDNN_")
    nsp = len(x.shape) - 2
    pre = shapes._pair(pre_padding, nsp)
    post = shapes._pair(pre if post_padding is None else post_padding, nsp)
    desc = Resample(mode=mode, comp_type=compute, nan_propagation=NanPropagation.CUDNN_PROPAGATE_NAN,
                    padding_mode=padding_mode, spatial_dims=nsp, window_dims=shapes._pair(window, nsp),
                    strides=shapes._pair(stride, nsp), pre_paddings=pre, post_paddings=post).finalize()
    dims = resample_output_dims(x.shape, window, stride, pre, post)
    y = _out(g, output, dims, _like(dims, x), x.get_keyword("data_type"), f"{name}_y")
    kwargs = dict(xdesc=x, ydesc=y, desc=desc, alpha=1.0, beta=0.0)
    idx = None
    if index:
        if mode != ResampleMode.CUDNN_RESAMPLE_MAXPOOL:
            raise ValueError("an index tensor is produced by max pooling only")
        idx = g.tensor(dims, _like(dims, x), index_data_type, name=f"{name}_index")
        kwargs["idxdesc"] = idx
    g.add(OperationResampleFwd(**kwargs))
    return {"y": y, "index": idx}


def add_concat(g: Graph, inputs, axis: int, *, inplace_index=None, output=True, name="concat") -> Tensor:
    """OPERATION_CONCAT along ``axis``; ``inplace_index`` lets cuDNN reuse that input's buffer."""
    inputs = list(inputs)
    dims = concat_output_dims([t.shape for t in inputs], axis)
    ref = next((t for t in inputs if not t.virtual), inputs[0])
    y = _out(g, output, dims, _like(dims, ref), ref.get_keyword("data_type"), f"{name}_y")
    kwargs = dict(axis=axis % len(dims), input_descs=inputs, output_desc=y)
    if inplace_index is not None:
        kwargs["inplace_index"] = int(inplace_index)
    g.add(OperationConcat(**kwargs))
    return y


def add_reshape(g: Graph, x: Tensor, dims, *, strides=None, data_type=None, output=True, name="reshape") -> Tensor:
    """OPERATION_RESHAPE to ``dims`` (same element count; packed row-major unless ``strides``).

    With ``strides`` it is also how cuDNN 9 graphs read a tensor transposed (the attention
    backward's P^T, dS^T and K from K^T); ``data_type`` defaults to X's for a real output and to
    the graph's intermediate type for a virtual one.
    """
    dims = [int(d) for d in dims]
    if math.prod(dims) != math.prod(x.shape):
        raise ValueError(f"reshape {list(x.shape)} -> {dims} changes the element count")
    strides = list(strides) if strides is not None else shapes.packed_strides(dims)
    if isinstance(output, Tensor):
        y = output
    elif output:
        y = g.tensor(dims, strides, _dt(data_type, x.get_keyword("data_type")), name=f"{name}_y")
    else:
        y = g.tensor(dims, strides, _dt(data_type, g.intermediate_data_type), virtual=True, name=f"{name}_y")
    g.add(OperationReshape(xdesc=x, ydesc=y))
    return y


def add_rng(g: Graph, dims, *, probability=0.5, seed=None, offset=None, data_type=F32, strides=None, output=True,
            name="rng") -> dict:
    """RNG descriptor (Bernoulli) + OPERATION_RNG: ``{"y", "seed", "offset"}``; seed and offset are
    int64 [1,...] tensors (made here unless given) or, for the seed, an int set on the operation."""
    rank = len(dims)
    ones = [1] * rank
    rng = Rng(distribution=RngDistribution.CUDNN_RNG_DISTRIBUTION_BERNOULLI,
              bernoulli_dist_probability=float(probability)).finalize()
    if seed is None:
        seed = g.tensor(ones, ones, I64, name=f"{name}_seed")
    if offset is None:
        offset = g.tensor(ones, ones, I64, name=f"{name}_offset")
    strides = strides or shapes.packed_strides(dims)
    if isinstance(output, Tensor):
        y = output
    elif output:
        y = g.tensor(dims, strides, data_type, name=f"{name}_y")
    else:
        y = g.tensor(dims, strides, data_type, virtual=True, name=f"{name}_y")
    g.add(OperationRng(ydesc=y, desc=rng, seed=seed, offset_desc=offset))
    return {"y": y, "seed": seed, "offset": offset}


def add_transpose(g: Graph, x: Tensor, permutation, *, output=True, name="transpose") -> Tensor:
    """OPERATION_TRANSPOSE (cuDNN 9.22): ``y[i] = x[permutation[i]]``, packed output."""
    require("CUDNN_BACKEND_OPERATION_TRANSPOSE_DESCRIPTOR", what="transpose")
    from cudnn_backend.typed import OperationTranspose

    dims = transpose_output_dims(x.shape, permutation)
    y = _out(g, output, dims, shapes.packed_strides(dims), x.get_keyword("data_type"), f"{name}_y")
    g.add(OperationTranspose(xdesc=x, ydesc=y, permutation=[int(p) for p in permutation]))
    return y


def add_slice(g: Graph, x: Tensor, start, limit, strides=None, *, output=True, name="slice") -> Tensor:
    """OPERATION_SLICE (cuDNN 9.22): ``x[start:limit:strides]`` per axis."""
    require("CUDNN_BACKEND_OPERATION_SLICE_DESCRIPTOR", what="slice")
    from cudnn_backend.typed import OperationSlice

    dims = slice_output_dims(x.shape, start, limit, strides)
    y = _out(g, output, dims, shapes.packed_strides(dims), x.get_keyword("data_type"), f"{name}_y")
    kwargs = dict(xdesc=x, ydesc=y, start_indices=list(start), limit_indices=list(limit))
    if strides is not None:
        kwargs["strides"] = list(strides)
    g.add(OperationSlice(**kwargs))
    return y


def add_softmax(g: Graph, x: Tensor, *, stats=False, output=True, name="softmax") -> dict:
    """The unified OPERATION_SOFTMAX (cuDNN 9.20) over the last axis: ``{"y", "stats"}``."""
    require("CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR", what="unified softmax")
    from cudnn_backend.typed import OperationSoftmax

    y = _out(g, output, x.shape, x.get_keyword("strides"), x.get_keyword("data_type"), f"{name}_y")
    kwargs = dict(xdesc=x, ydesc=y)
    st = None
    if stats:
        sdims = [*x.shape[:-1], 1]
        st = g.tensor(sdims, shapes.packed_strides(sdims), F32, name=f"{name}_stats")
        kwargs["stats_desc"] = st
    g.add(OperationSoftmax(**kwargs))
    return {"y": y, "stats": st}


def add_composite_softmax(g: Graph, s: Tensor, *, stats=True, p_data_type=None, name="softmax") -> dict:
    """Softmax over the last axis as cudnn-frontend's composite (cuDNN < 9.21): max, sub, exp, sum,
    div; with ``stats`` also log(sum) + max, a real fp32 output when ``stats`` is True and a virtual
    tensor nothing reads when it is ``"virtual"`` (the fused attention engines expect it even in
    inference). Returns ``{"p", "stats", "max", "sum_exp"}``."""
    axis = len(s.shape) - 1
    mx = g.reduction(s, "CUDNN_REDUCE_TENSOR_MAX", axes=[axis], name=f"{name}_max")
    sub = g.pointwise("CUDNN_POINTWISE_SUB", s, mx, name=f"{name}_sub")
    e = g.pointwise("CUDNN_POINTWISE_EXP", sub, name=f"{name}_exp")
    sm = g.reduction(e, "CUDNN_REDUCE_TENSOR_ADD", axes=[axis], name=f"{name}_sum_exp")
    st = None
    if stats:
        lg = g.pointwise("CUDNN_POINTWISE_LOG", sm, name=f"{name}_log")
        if stats == "virtual":
            st = g.pointwise("CUDNN_POINTWISE_ADD", mx, lg, name=f"{name}_stats")
        else:
            st = g.pointwise("CUDNN_POINTWISE_ADD", mx, lg,
                             output=g.tensor(mx.shape, mx.get_keyword("strides"), F32, name=f"{name}_stats"))
    p_out = g.tensor(e.shape, e.get_keyword("strides"), _dt(p_data_type, g.intermediate_data_type), virtual=True,
                     name=f"{name}_p")
    p = g.pointwise("CUDNN_POINTWISE_DIV", e, sm, output=p_out)
    return {"p": p, "stats": st, "max": mx, "sum_exp": sm}


def add_sdpa_fwd(g: Graph, q: Tensor, k: Tensor, v: Tensor, *, attn_scale=None, stats=True, name="sdpa") -> dict:
    """The unified OPERATION_SDPA_FWD (cuDNN 9.13): ``{"o", "stats", "attn_scale"}``."""
    require("CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR", what="unified SDPA forward")
    from cudnn_backend.typed import OperationSdpaFwd

    b, h, s_q, d = q.shape
    dv = v.shape[3]
    odims = [b, h, s_q, dv]
    o = g.tensor(odims, shapes.strides_like(odims, q.get_keyword("strides")), q.get_keyword("data_type"),
                 name=f"{name}_o")
    scale = _as_tensor(g, 1.0 / math.sqrt(d) if attn_scale is None else attn_scale, 4, f"{name}_attn_scale")
    kwargs = dict(qdesc=q, kdesc=k, vdesc=v, odesc=o, scaledesc=scale)
    st = None
    if stats:
        st = g.tensor([b, h, s_q, 1], shapes.packed_strides([b, h, s_q, 1]), F32, name=f"{name}_stats")
        kwargs["statsdesc"] = st
    g.add(OperationSdpaFwd(**kwargs))
    return {"o": o, "stats": st, "attn_scale": scale}


def add_sdpa_bwd(g: Graph, q: Tensor, k: Tensor, v: Tensor, o: Tensor, do: Tensor, stats: Tensor, *, attn_scale=None,
                 name="sdpa_bwd") -> dict:
    """The unified OPERATION_SDPA_BWD (cuDNN 9.17): ``{"dq", "dk", "dv", "attn_scale"}``."""
    require("CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR", what="unified SDPA backward")
    from cudnn_backend.typed import OperationSdpaBwd

    def grad(t, nm):
        return g.tensor(t.shape, t.get_keyword("strides"), t.get_keyword("data_type"), name=f"{name}_{nm}")

    dq, dk, dv = grad(q, "dq"), grad(k, "dk"), grad(v, "dv")
    scale = _as_tensor(g, 1.0 / math.sqrt(q.shape[3]) if attn_scale is None else attn_scale, 4, f"{name}_attn_scale")
    g.add(OperationSdpaBwd(qdesc=q, kdesc=k, vdesc=v, odesc=o, doddesc=do, statsdesc=stats, scaledesc=scale,
                           dqdesc=dq, dkdesc=dk, dvdesc=dv))
    return {"dq": dq, "dk": dk, "dv": dv, "attn_scale": scale}


def add_block_scale_quantize(g: Graph, x: Tensor, *, block_size=32, y_data_type=DataType.CUDNN_DATA_FP8_E4M3,
                             scale_data_type=DataType.CUDNN_DATA_FP8_E8M0, axis=-1, reordering=None, math_prec=F32,
                             name="quantize") -> dict:
    """OPERATION_BLOCK_SCALE_QUANTIZE (cuDNN 9.7; MXFP8 by default: E4M3 values, one E8M0 scale per
    32 elements of ``axis``, scales in the F8_128x4 layout): ``{"y", "scale"}``."""
    require("CUDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR", what="block-scale quantize")
    axis %= len(x.shape)
    y = g.tensor(x.shape, x.get_keyword("strides"), y_data_type, name=f"{name}_y")
    sdims = list(x.shape)
    if sdims[axis] % block_size:
        raise ValueError(f"axis {axis} of {list(x.shape)} is not a multiple of the block size {block_size}")
    sdims[axis] //= block_size
    reordering = TensorReordering.CUDNN_TENSOR_REORDERING_F8_128x4 if reordering is None else reordering
    sc = g.tensor(sdims, _like(sdims, x), scale_data_type, name=f"{name}_scale", reordering_mode=reordering)
    g.add(OperationBlockScaleQuantize(xdesc=x, ydesc=y, scale_desc=sc, math_prec=math_prec, block_size=block_size))
    return {"y": y, "scale": sc}


def add_block_scale_dequantize(g: Graph, x: Tensor, scale: Tensor, *, block_size, output=False, math_prec=F32,
                               name="dequantize") -> Tensor:
    """OPERATION_BLOCK_SCALE_DEQUANTIZE (cuDNN 9.7); ``block_size`` is one int or one per matrix axis."""
    require("CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR", what="block-scale dequantize")
    sizes = [int(block_size)] if isinstance(block_size, int) else [int(b) for b in block_size]
    y = _out(g, output, x.shape, x.get_keyword("strides"), g.io_data_type, f"{name}_y")
    g.add(OperationBlockScaleDequantize(xdesc=x, scale_desc=scale, ydesc=y, math_prec=math_prec, block_size=sizes))
    return y


def add_rope(g: Graph, x: Tensor, freqs: Tensor, *, rope_dim=None, output_scale=None, output=True,
             name="rope") -> Tensor:
    """OPERATION_ROPE_FWD (cuDNN 9.24): rotary embedding of X [B, H, S, D] with freqs [S, 1, 1, rope_dim] fp32."""
    require("CUDNN_BACKEND_OPERATION_ROPE_FWD_DESCRIPTOR", what="RoPE")
    from cudnn_backend.typed import OperationRopeFwd

    y = _out(g, output, x.shape, x.get_keyword("strides"), x.get_keyword("data_type"), f"{name}_y")
    kwargs = dict(xdesc=x, ydesc=y, freqsdesc=freqs)
    if rope_dim is not None:
        kwargs["rope_dim"] = int(rope_dim)
    if output_scale is not None:
        kwargs["output_scale"] = float(output_scale)
    g.add(OperationRopeFwd(**kwargs))
    return y


# ---------------------------------------------------------------------------------------------
# patterns: convolutions
# ---------------------------------------------------------------------------------------------
def _conv_tensors(g, n, c, h, w, k, r, s, layout):
    x = g.tensor([n, c, h, w], layout=layout, name="x")
    wt = g.tensor([k, c, r, s], layout=layout, name="w")
    return x, wt


def conv_fwd(n=8, c=64, h=56, w=56, k=32, r=3, s=3, *, padding=1, stride=1, dilation=1, data_type=F16,
             layout="nhwc", build=True) -> Pattern:
    """Convolution forward alone: X [n,c,h,w] * W [k,c,r,s] -> Y, fp16 NHWC, fp32 compute."""
    g = Graph("conv_fwd", io_data_type=data_type)
    x, wt = _conv_tensors(g, n, c, h, w, k, r, s, layout)
    y = g.conv_fwd(x, wt, padding=padding, stride=stride, dilation=dilation, output=True, name="y")
    return _finish("conv_fwd", g, {"x": x, "w": wt, "y": y}, build)


def conv_bwd_data(n=8, c=64, h=56, w=56, k=32, r=3, s=3, *, padding=1, stride=1, dilation=1, data_type=F16,
                  layout="nhwc", build=True) -> Pattern:
    """Convolution backward data: dY and W -> dX (the forward conv of :func:`conv_fwd`, transposed)."""
    g = Graph("conv_bwd_data", io_data_type=data_type)
    ydims = shapes.conv_output_dims([n, c, h, w], [k, c, r, s], padding, stride, dilation)
    dy = g.tensor(ydims, layout=layout, name="dy")
    wt = g.tensor([k, c, r, s], layout=layout, name="w")
    dx = g.conv_bwd_data(dy, wt, [n, c, h, w], padding=padding, stride=stride, dilation=dilation, output=True,
                         name="dx")
    return _finish("conv_bwd_data", g, {"dy": dy, "w": wt, "dx": dx}, build)


def conv_bwd_filter(n=8, c=64, h=56, w=56, k=32, r=3, s=3, *, padding=1, stride=1, dilation=1, data_type=F16,
                    layout="nhwc", build=True) -> Pattern:
    """Convolution backward filter: X and dY -> dW."""
    g = Graph("conv_bwd_filter", io_data_type=data_type)
    ydims = shapes.conv_output_dims([n, c, h, w], [k, c, r, s], padding, stride, dilation)
    x = g.tensor([n, c, h, w], layout=layout, name="x")
    dy = g.tensor(ydims, layout=layout, name="dy")
    dw = g.conv_bwd_filter(x, dy, [k, c, r, s], padding=padding, stride=stride, dilation=dilation, output=True,
                           name="dw")
    return _finish("conv_bwd_filter", g, {"x": x, "dy": dy, "dw": dw}, build)


def conv_bias_relu(n=8, c=64, h=56, w=56, k=32, r=3, s=3, *, padding=1, stride=1, dilation=1, data_type=F16,
                   layout="nhwc", build=True) -> Pattern:
    """The cuDNN guide's fusion: conv -> +bias [1,k,1,1] -> ReLU, the two intermediates virtual (fp32)."""
    g = Graph("conv_bias_relu", io_data_type=data_type)
    x, wt = _conv_tensors(g, n, c, h, w, k, r, s, layout)
    conv_out = g.conv_fwd(x, wt, padding=padding, stride=stride, dilation=dilation, name="conv_out")
    b = g.tensor([1, k, 1, 1], layout=layout, name="bias")
    biased = g.pointwise("CUDNN_POINTWISE_ADD", conv_out, b, name="biased")
    y = g.pointwise("CUDNN_POINTWISE_RELU_FWD", biased, output=True, name="y")
    return _finish("conv_bias_relu", g, {"x": x, "w": wt, "bias": b, "conv_out": conv_out, "biased": biased, "y": y},
                   build)


# ---------------------------------------------------------------------------------------------
# patterns: matmul
# ---------------------------------------------------------------------------------------------
_GELU = {"erf": PointwiseMode.CUDNN_POINTWISE_GELU_FWD, "exact": PointwiseMode.CUDNN_POINTWISE_GELU_FWD,
         "tanh": PointwiseMode.CUDNN_POINTWISE_GELU_APPROX_TANH_FWD}


def matmul_bias_gelu(batch=16, m=128, n=256, k=64, *, gelu="tanh", data_type=F16, build=True) -> Pattern:
    """A [b,m,k] @ B [b,k,n] + bias [1,1,n] -> GELU (``gelu``: "erf"/"tanh" or a PointwiseMode);
    the runtime-fusion engine's pattern, intermediates virtual fp32."""
    mode = _GELU[gelu] if isinstance(gelu, str) and gelu in _GELU else _enum(PointwiseMode, gelu, "CUDNN_POINTWISE_")
    g = Graph("matmul_bias_gelu", io_data_type=data_type)
    a = g.tensor([batch, m, k], name="a")
    b = g.tensor([batch, k, n], name="b")
    bias = g.tensor([1, 1, n], name="bias")
    c = g.matmul(a, b, name="c")
    biased = g.pointwise("CUDNN_POINTWISE_ADD", c, bias, name="biased")
    y = g.pointwise(mode, biased, output=True, name="y")
    return _finish("matmul_bias_gelu", g, {"a": a, "b": b, "bias": bias, "c": c, "biased": biased, "y": y}, build,
                   params={"gelu": mode})


# ---------------------------------------------------------------------------------------------
# patterns: normalization
# ---------------------------------------------------------------------------------------------
def _norm_inputs(g, tokens, hidden, data_type):
    """cudnn-frontend's norm layout: X [tokens, hidden, 1, 1] (hidden innermost), scale/bias [1, hidden, 1, 1] fp32."""
    xs = [hidden, 1, hidden, hidden]
    x = g.tensor([tokens, hidden, 1, 1], xs, data_type, name="x")
    return x, xs


def layer_norm_fwd(tokens=4 * 1024, hidden=128, *, training=True, epsilon=1e-5, data_type=F16,
                   build=True) -> Pattern:
    """Layer norm forward over ``hidden``: training gives Y, mean and inv_variance (fp32), inference Y only."""
    g = Graph("layer_norm_fwd", io_data_type=data_type)
    x, xs = _norm_inputs(g, tokens, hidden, data_type)
    scale = g.tensor([1, hidden, 1, 1], xs, F32, name="scale")
    bias = g.tensor([1, hidden, 1, 1], xs, F32, name="bias")
    phase = NormFwdPhase.CUDNN_NORM_FWD_TRAINING if training else NormFwdPhase.CUDNN_NORM_FWD_INFERENCE
    out = add_norm_forward(g, x, scale, bias, epsilon=epsilon, mode=NormMode.CUDNN_LAYER_NORM, phase=phase, name="ln")
    return _finish("layer_norm_fwd", g, {"x": x, "scale": scale, "bias": bias, **out}, build,
                   params={"training": training})


def rms_norm_fwd(tokens=4 * 1024, hidden=128, *, training=True, bias=False, epsilon=1e-5, data_type=F32,
                 build=True) -> Pattern:
    """RMS norm forward: training gives Y and inv_variance (fp32); ``bias`` adds the optional bias."""
    g = Graph("rms_norm_fwd", io_data_type=data_type)
    x, xs = _norm_inputs(g, tokens, hidden, data_type)
    scale = g.tensor([1, hidden, 1, 1], xs, F32, name="scale")
    b = g.tensor([1, hidden, 1, 1], xs, F32, name="bias") if bias else None
    phase = NormFwdPhase.CUDNN_NORM_FWD_TRAINING if training else NormFwdPhase.CUDNN_NORM_FWD_INFERENCE
    out = add_norm_forward(g, x, scale, b, epsilon=epsilon, mode=NormMode.CUDNN_RMS_NORM, phase=phase, name="rms")
    return _finish("rms_norm_fwd", g, {"x": x, "scale": scale, "bias": b, **out}, build, params={"training": training})


def layer_norm_bwd(tokens=4 * 1024, hidden=128, *, data_type=F16, build=True) -> Pattern:
    """Layer norm backward: dY, X, scale, saved mean and inv_variance -> dX, dscale, dbias."""
    g = Graph("layer_norm_bwd", io_data_type=data_type)
    x, xs = _norm_inputs(g, tokens, hidden, data_type)
    dy = g.tensor([tokens, hidden, 1, 1], xs, data_type, name="dy")
    scale = g.tensor([1, hidden, 1, 1], xs, F32, name="scale")
    mean = g.tensor([tokens, 1, 1, 1], [1, 1, 1, 1], F32, name="mean")
    inv_var = g.tensor([tokens, 1, 1, 1], [1, 1, 1, 1], F32, name="inv_variance")
    out = add_norm_backward(g, dy, x, scale, mean, inv_var, mode=NormMode.CUDNN_LAYER_NORM, name="ln_bwd")
    return _finish("layer_norm_bwd", g, {"x": x, "dy": dy, "scale": scale, "mean": mean, "inv_variance": inv_var,
                                         **out}, build)


def rms_norm_bwd(tokens=4 * 1024, hidden=128, *, data_type=F32, build=True) -> Pattern:
    """RMS norm backward: dY, X, scale, saved inv_variance -> dX, dscale (no dbias)."""
    g = Graph("rms_norm_bwd", io_data_type=data_type)
    x, xs = _norm_inputs(g, tokens, hidden, data_type)
    dy = g.tensor([tokens, hidden, 1, 1], xs, data_type, name="dy")
    scale = g.tensor([1, hidden, 1, 1], xs, F32, name="scale")
    inv_var = g.tensor([tokens, 1, 1, 1], [1, 1, 1, 1], F32, name="inv_variance")
    out = add_norm_backward(g, dy, x, scale, None, inv_var, mode=NormMode.CUDNN_RMS_NORM, dbias=False,
                            name="rms_bwd")
    return _finish("rms_norm_bwd", g, {"x": x, "dy": dy, "scale": scale, "inv_variance": inv_var, **out}, build)


def bn_gen_stats(n=4, c=64, h=16, w=16, k=32, r=3, s=3, *, conv=True, data_type=F16, build=True) -> Pattern:
    """Batch-norm statistics (GEN_STATS: per-channel sum and sum of squares, fp32).

    ``conv=True`` (default) computes them on a convolution's output, the ConvBNfprop stage cuDNN
    fuses; ``conv=False`` is GEN_STATS alone on X [n,c,h,w] (no engine runs that alone on cuDNN 9.19).
    """
    g = Graph("bn_gen_stats", io_data_type=data_type)
    if conv:
        x, wt = _conv_tensors(g, n, c, h, w, k, r, s, "nhwc")
        y = g.conv_fwd(x, wt, padding=(r - 1) // 2, output=True, name="y")
        stats = add_gen_stats(g, y)
        tensors = {"x": x, "w": wt, "y": y, **stats}
    else:
        x = g.tensor([n, c, h, w], layout="nhwc", name="x")
        tensors = {"x": x, **add_gen_stats(g, x)}
    return _finish("bn_gen_stats", g, tensors, build, params={"conv": conv})


def bn_finalize(c=32, *, accum_count=64, epsilon=1e-3, momentum=1e-3, running_stats=True, build=True) -> Pattern:
    """BN_FINALIZE_STATISTICS (fp32, [1,c,1,1] per-channel tensors), as cudnn-frontend's BN finalize sample."""
    g = Graph("bn_finalize", io_data_type=F32)
    dims, strides = [1, c, 1, 1], [c, 1, c, c]

    def pc(name):
        return g.tensor(dims, strides, F32, name=name)

    sum_, sqsum, scale, bias = pc("sum"), pc("sqsum"), pc("scale"), pc("bias")
    prm = pc("prev_running_mean") if running_stats else None
    prv = pc("prev_running_var") if running_stats else None
    out = add_bn_finalize(g, sum_, sqsum, scale, bias, accum_count=accum_count, epsilon=epsilon, momentum=momentum,
                          prev_running_mean=prm, prev_running_var=prv)
    return _finish("bn_finalize", g, {"sum": sum_, "sqsum": sqsum, "scale": scale, "bias": bias,
                                      "prev_running_mean": prm, "prev_running_var": prv, **out}, build)


# ---------------------------------------------------------------------------------------------
# patterns: reduction, resample, concat, reshape, rng
# ---------------------------------------------------------------------------------------------
def reduction(dims=(8, 64, 56, 56), axes=(0, 2, 3), *, op="CUDNN_REDUCE_TENSOR_ADD", layout="nhwc", data_type=F16,
              output_data_type=F32, build=True) -> Pattern:
    """Reduce X over ``axes`` (kept as size-1 dims), e.g. the per-channel sum of an NHWC activation (fp32 out)."""
    g = Graph("reduction", io_data_type=data_type)
    x = g.tensor(list(dims), layout=layout if len(dims) >= 4 else None, name="x")
    ydims = shapes.reduction_output_dims(x.shape, list(axes))
    y = g.tensor(ydims, _like(ydims, x), output_data_type, name="y")
    g.reduction(x, op, axes=list(axes), output=y)
    return _finish("reduction", g, {"x": x, "y": y}, build, params={"op": op, "axes": tuple(axes)})


def pooling(n=8, c=8, h=56, w=56, *, mode="MAXPOOL", window=(2, 3), stride=(4, 5), pre_padding=(2, 3),
            post_padding=(4, 5), index=False, data_type=F16, build=True) -> Pattern:
    """Pooling via RESAMPLE + OPERATION_RESAMPLE_FWD on NHWC X (cudnn-frontend's resample sample);
    ``index=True`` (max pooling, training) also writes the int8 index tensor."""
    g = Graph("pooling", io_data_type=data_type)
    x = g.tensor([n, c, h, w], layout="nhwc", name="x")
    out = add_resample(g, x, mode=mode, window=window, stride=stride, pre_padding=pre_padding,
                       post_padding=post_padding, index=index)
    return _finish("pooling", g, {"x": x, **out}, build, params={"mode": mode})


resample = pooling


def concat(n=16, c=128, h=64, w=64, k=256, *, conv=True, inplace_index=1, data_type=F16, build=True) -> Pattern:
    """Concatenation along channels. ``conv=True`` (default): cudnn-frontend's conv + concat fusion
    (a 1x1 conv's virtual output [n,k,h,w] and a real [n,k,h,w] input -> [n,2k,h,w]); ``conv=False``:
    OPERATION_CONCAT alone on two real inputs."""
    g = Graph("concat", io_data_type=data_type)
    if conv:
        x, wt = _conv_tensors(g, n, c, h, w, k, 1, 1, "nhwc")
        y = g.tensor([n, k, h, w], layout="nhwc", virtual=True, data_type=data_type, name="conv_y")
        g.conv_fwd(x, wt, output=y)
        other = g.tensor([n, k, h, w], layout="nhwc", name="other")
        out = add_concat(g, [y, other], 1, inplace_index=inplace_index)
        tensors = {"x": x, "w": wt, "conv_y": y, "other": other, "y": out}
    else:
        a = g.tensor([n, c, h, w], layout="nhwc", name="a")
        b = g.tensor([n, k, h, w], layout="nhwc", name="b")
        tensors = {"a": a, "b": b, "y": add_concat(g, [a, b], 1, inplace_index=inplace_index)}
    return _finish("concat", g, tensors, build, params={"conv": conv})


def reshape(x_dims=(4, 16, 8, 8), y_dims=(4, 16, 64), *, matmul=False, data_type=F16, build=True) -> Pattern:
    """OPERATION_RESHAPE alone (``matmul=False``), or reshaping a batched matmul's virtual output
    [b,m,n] to [1,b*m,n] (``matmul=True``, x_dims is then (b, m, k, n))."""
    g = Graph("reshape", io_data_type=data_type)
    if matmul:
        b_, m, k, n = x_dims
        a = g.tensor([b_, m, k], name="a")
        bm = g.tensor([b_, k, n], name="b")
        c = g.matmul(a, bm, name="c")
        y = add_reshape(g, c, [1, b_ * m, n])
        tensors = {"a": a, "b": bm, "c": c, "y": y}
    else:
        x = g.tensor(list(x_dims), name="x")
        tensors = {"x": x, "y": add_reshape(g, x, y_dims)}
    return _finish("reshape", g, tensors, build, params={"matmul": matmul})


def rng(dims=(4, 16, 8, 8), *, probability=0.5, data_type=F32, build=True) -> Pattern:
    """RNG (Bernoulli) alone writing a real mask; for RNG fused where cuDNN 9.19 runs it, see
    :func:`sdpa_composite_fwd` with ``dropout``."""
    g = Graph("rng", io_data_type=data_type)
    out = add_rng(g, list(dims), probability=probability, data_type=data_type)
    return _finish("rng", g, out, build)


def transpose(dims=(4, 16, 8, 8), permutation=(0, 2, 3, 1), *, data_type=F16, build=True) -> Pattern:
    """OPERATION_TRANSPOSE alone (cuDNN 9.22+)."""
    require("CUDNN_BACKEND_OPERATION_TRANSPOSE_DESCRIPTOR", what="transpose")
    g = Graph("transpose", io_data_type=data_type)
    x = g.tensor(list(dims), name="x")
    return _finish("transpose", g, {"x": x, "y": add_transpose(g, x, permutation)}, build)


def slice(dims=(4, 16, 8, 8), start=(0, 4, 0, 0), limit=(4, 12, 8, 8), strides=None, *, data_type=F16,  # noqa: A001
          build=True) -> Pattern:
    """OPERATION_SLICE alone (cuDNN 9.22+)."""
    require("CUDNN_BACKEND_OPERATION_SLICE_DESCRIPTOR", what="slice")
    g = Graph("slice", io_data_type=data_type)
    x = g.tensor(list(dims), name="x")
    return _finish("slice", g, {"x": x, "y": add_slice(g, x, start, limit, strides)}, build)


def softmax(dims=(2, 4, 128, 128), *, stats=True, data_type=F16, build=True) -> Pattern:
    """The unified OPERATION_SOFTMAX (cuDNN 9.20+) over the last axis; on older cuDNN use
    :func:`add_composite_softmax` (as :func:`sdpa_composite_fwd` does)."""
    require("CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR", what="unified softmax")
    g = Graph("softmax", io_data_type=data_type)
    x = g.tensor(list(dims), name="x")
    out = add_softmax(g, x, stats=stats)
    return _finish("softmax", g, {"x": x, **out}, build)


# ---------------------------------------------------------------------------------------------
# patterns: attention, block scaling, RoPE
# ---------------------------------------------------------------------------------------------
def _qkv(g, b, h, s_q, s_kv, d, d_v=None):
    d_v = d if d_v is None else d_v
    q = g.tensor([b, h, s_q, d], bshd_strides([b, h, s_q, d]), name="q")
    k = g.tensor([b, h, s_kv, d], bshd_strides([b, h, s_kv, d]), name="k")
    v = g.tensor([b, h, s_kv, d_v], bshd_strides([b, h, s_kv, d_v]), name="v")
    return q, k, v


def sdpa_fwd(b=2, h=4, s_q=128, s_kv=128, d=64, *, training=True, attn_scale=None, data_type=F16,
             build=True) -> Pattern:
    """Scaled dot-product attention forward through the unified OPERATION_SDPA_FWD (cuDNN 9.13+);
    Q/K/V/O [b,h,s,d] fp16 stored BSHD, stats [b,h,s_q,1] fp32 when ``training``."""
    require("CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR", what="unified SDPA forward")
    g = Graph("sdpa_fwd", io_data_type=data_type)
    q, k, v = _qkv(g, b, h, s_q, s_kv, d)
    out = add_sdpa_fwd(g, q, k, v, attn_scale=attn_scale, stats=training)
    return _finish("sdpa_fwd", g, {"q": q, "k": k, "v": v, **out}, build, params={"training": training})


def sdpa_bwd(b=2, h=4, s_q=128, s_kv=128, d=64, *, attn_scale=None, data_type=F16, build=True) -> Pattern:
    """Scaled dot-product attention backward through the unified OPERATION_SDPA_BWD (cuDNN 9.17+)."""
    require("CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR", what="unified SDPA backward")
    g = Graph("sdpa_bwd", io_data_type=data_type)
    q, k, v = _qkv(g, b, h, s_q, s_kv, d)
    o = g.tensor([b, h, s_q, d], bshd_strides([b, h, s_q, d]), name="o")
    do = g.tensor([b, h, s_q, d], bshd_strides([b, h, s_q, d]), name="do")
    stats = g.tensor([b, h, s_q, 1], shapes.packed_strides([b, h, s_q, 1]), F32, name="stats")
    out = add_sdpa_bwd(g, q, k, v, o, do, stats, attn_scale=attn_scale)
    return _finish("sdpa_bwd", g, {"q": q, "k": k, "v": v, "o": o, "do": do, "stats": stats, **out}, build)


def sdpa_composite_fwd(b=2, h=4, s_q=128, s_kv=128, d=64, *, training=True, causal=False, dropout=0.0,
                       attn_scale=None, data_type=F16, build=True) -> Pattern:
    """The classic fused-attention graph cuDNN 9.x runs (cudnn-frontend's composite SDPA):

    S = Q @ K^T (K read transposed through its strides) * attn_scale; optional causal mask
    (GEN_INDEX row >= col, BINARY_SELECT with -inf); softmax as max/sub/exp/sum/div with
    stats = max + log(sum) (a real fp32 output when ``training``; in inference cuDNN still expects
    it, as a virtual tensor nothing reads, so this pattern builds with ``check=False``); optional
    dropout (RNG Bernoulli(1-p) mask, * 1/(1-p)); O = P (fp16, as V) @ V.
    """
    g = Graph("sdpa_composite_fwd", io_data_type=data_type)
    q = g.tensor([b, h, s_q, d], bshd_strides([b, h, s_q, d]), name="q")
    # K [b,h,s_kv,d] (BSHD memory) is read as K^T [b,h,d,s_kv]: the same memory, last two axes swapped by strides
    ks = bshd_strides([b, h, s_kv, d])
    kt = g.tensor([b, h, d, s_kv], [ks[0], ks[1], ks[3], ks[2]], name="k_t")
    v = g.tensor([b, h, s_kv, d], bshd_strides([b, h, s_kv, d]), name="v")
    tensors = {"q": q, "k_t": kt, "v": v}
    s = g.matmul(q, kt, name="s")
    scale = add_scalar(g, 1.0 / math.sqrt(d) if attn_scale is None else attn_scale, name="attn_scale")
    s = g.pointwise("CUDNN_POINTWISE_MUL", s, scale, name="s_scaled")
    tensors["attn_scale"] = scale
    if causal:
        s = _causal_mask(g, s, tensors)
    p_type = data_type if not dropout else None
    sm = add_composite_softmax(g, s, stats=True if training else "virtual", p_data_type=p_type)
    p = sm["p"]
    tensors["stats"] = sm["stats"]
    if dropout:
        r = add_rng(g, list(p.shape), probability=1.0 - dropout, output=False, name="dropout")
        masked = g.pointwise("CUDNN_POINTWISE_MUL", p, r["y"], name="p_dropped")
        dscale = add_scalar(g, 1.0 / (1.0 - dropout), name="dropout_scale")
        p = g.pointwise("CUDNN_POINTWISE_MUL", masked, dscale,
                        output=g.tensor(p.shape, p.get_keyword("strides"), data_type, virtual=True, name="p_scaled"))
        tensors.update(dropout_seed=r["seed"], dropout_offset=r["offset"], dropout_mask=r["y"],
                       dropout_scale=dscale)
    tensors["p"] = p
    o = g.matmul(p, v, output=g.tensor([b, h, s_q, d], bshd_strides([b, h, s_q, d]), data_type, name="o"))
    tensors["o"] = o
    if not training:
        tensors["stats"] = sm["stats"]  # virtual, for inspection
    return _finish("sdpa_composite_fwd", g, tensors, build, check=training,
                   notes="" if training else "inference keeps cuDNN's virtual softmax stats: built with check=False",
                   params={"training": training, "causal": causal, "dropout": dropout})


def _transposed_strides(strides):
    return [strides[0], strides[1], strides[3], strides[2]]


def _causal_mask(g, s, tensors):
    st = s.get_keyword("strides")
    row = g.pointwise("CUDNN_POINTWISE_GEN_INDEX", s, axis=2,
                      output=g.tensor(s.shape, st, I32, virtual=True, name="row"))
    col = g.pointwise("CUDNN_POINTWISE_GEN_INDEX", s, axis=3,
                      output=g.tensor(s.shape, st, I32, virtual=True, name="col"))
    keep = g.pointwise("CUDNN_POINTWISE_CMP_GE", row, col, output=g.tensor(s.shape, st, BOOL, virtual=True,
                                                                          name="causal"))
    neg = add_scalar(g, -3.4e38, name="neg_inf")
    tensors["neg_inf"] = neg
    return g.pointwise("CUDNN_POINTWISE_BINARY_SELECT", s, neg, keep, name="s_masked")


def sdpa_composite_bwd(b=2, h=4, s_q=128, s_kv=128, d=64, *, causal=False, dropout=0.0, attn_scale=None,
                       dq_accumulator=True, data_type=F16, build=True) -> Pattern:
    """The classic fused-attention backward graph (cudnn-frontend's composite SDPA backward):

    softmax_sum = sum_d(dO * O); P = exp(Q @ K^T * scale [masked] - stats) [* dropout mask / (1-p)];
    dV = P^T @ dO; dS = (dO @ V^T [* mask] - softmax_sum) * P_exp [/ (1-p)] * scale; dK = dS^T @ Q;
    dQ = dS @ K. The transposes P^T, dS^T and K (from the K^T input) are RESHAPE operations with
    swapped strides. With ``dq_accumulator`` (the frontend's default on cuDNN 9) dQ goes through a
    real fp32 accumulator (F16x16 reordering, bound to workspace memory) and an IDENTITY to dQ.
    """
    g = Graph("sdpa_composite_bwd", io_data_type=data_type)
    q = g.tensor([b, h, s_q, d], bshd_strides([b, h, s_q, d]), name="q")
    kvs = bshd_strides([b, h, s_kv, d])
    kt = g.tensor([b, h, d, s_kv], _transposed_strides(kvs), name="k_t")
    vt = g.tensor([b, h, d, s_kv], _transposed_strides(kvs), name="v_t")
    o = g.tensor([b, h, s_q, d], bshd_strides([b, h, s_q, d]), name="o")
    do = g.tensor([b, h, s_q, d], bshd_strides([b, h, s_q, d]), name="do")
    stats = g.tensor([b, h, s_q, 1], shapes.packed_strides([b, h, s_q, 1]), F32, name="stats")
    scale = add_scalar(g, 1.0 / math.sqrt(d) if attn_scale is None else attn_scale, name="attn_scale")
    tensors = {"q": q, "k_t": kt, "v_t": vt, "o": o, "do": do, "stats": stats, "attn_scale": scale}
    mask = None
    if dropout:
        r = add_rng(g, [b, h, s_q, s_kv], probability=1.0 - dropout, output=False, name="dropout")
        mask = r["y"]
        tensors.update(dropout_seed=r["seed"], dropout_offset=r["offset"], dropout_mask=mask)
        drop_scale = add_scalar(g, 1.0 / (1.0 - dropout), name="dropout_scale")
        drop_scale_inv = add_scalar(g, 1.0 - dropout, name="dropout_scale_inv")
        tensors.update(dropout_scale=drop_scale, dropout_scale_inv=drop_scale_inv)
    else:
        one = drop_scale_inv = add_scalar(g, 1.0, name="one")
        tensors["one"] = one
    # softmax_sum = rowsum(dO * O) (* (1 - p))
    doo = g.pointwise("CUDNN_POINTWISE_MUL", do, o, name="do_o")
    softmax_sum = g.pointwise("CUDNN_POINTWISE_MUL", g.reduction(doo, axes=[3], name="do_o_sum"), drop_scale_inv,
                              name="softmax_sum")
    # P = exp(S - stats)
    s = g.pointwise("CUDNN_POINTWISE_MUL", g.matmul(q, kt, name="s"), scale, name="s_scaled")
    if causal:
        s = _causal_mask(g, s, tensors)
    exp_s = g.pointwise("CUDNN_POINTWISE_EXP", g.pointwise("CUDNN_POINTWISE_SUB", s, stats, name="s_minus_stats"),
                        name="exp_s")
    p = exp_s
    if mask is not None:
        p = g.pointwise("CUDNN_POINTWISE_MUL", g.pointwise("CUDNN_POINTWISE_MUL", p, mask, name="p_dropped"),
                        drop_scale, name="p_scaled")
    t_strides = [h * s_q * s_kv, s_q * s_kv, 1, s_kv]
    p_t = add_reshape(g, p, [b, h, s_kv, s_q], strides=t_strides, data_type=data_type, output=False, name="p_t")
    dv = g.matmul(p_t, do, output=g.tensor([b, h, s_kv, d], kvs, data_type, name="dv"))
    # dS = (dP [* mask] - softmax_sum) * exp_s [* 1/(1-p)] * scale
    dp = g.matmul(do, vt, name="dp")
    dp = g.pointwise("CUDNN_POINTWISE_MUL", dp, mask if mask is not None else tensors["one"], name="dp_masked")
    ds = g.pointwise("CUDNN_POINTWISE_SUB", dp, softmax_sum, name="dp_minus_sum")
    ds = g.pointwise("CUDNN_POINTWISE_MUL", ds, exp_s, name="ds_unscaled")
    if mask is not None:
        ds = g.pointwise("CUDNN_POINTWISE_MUL", ds, drop_scale, name="ds_dropout")
    ds = g.pointwise("CUDNN_POINTWISE_MUL", ds, scale, name="ds")
    ds_t = add_reshape(g, ds, [b, h, s_kv, s_q], strides=t_strides, data_type=data_type, output=False, name="ds_t")
    dk = g.matmul(ds_t, q, output=g.tensor([b, h, s_kv, d], kvs, data_type, name="dk"))
    k = add_reshape(g, kt, [b, h, s_kv, d], strides=kvs, data_type=data_type, output=False, name="k")
    dq_dims = [b, h, s_q, d]
    if dq_accumulator:
        acc = g.tensor(dq_dims, shapes.packed_strides(dq_dims), F32, name="dq_accum",
                       reordering_mode=TensorReordering.CUDNN_TENSOR_REORDERING_F16x16)
        g.matmul(ds, k, output=acc)
        dq = g.pointwise("CUDNN_POINTWISE_IDENTITY", acc,
                         output=g.tensor(dq_dims, bshd_strides(dq_dims), data_type, name="dq"))
        tensors["dq_accum"] = acc
    else:
        dq = g.matmul(ds, k, output=g.tensor(dq_dims, bshd_strides(dq_dims), data_type, name="dq"))
    tensors.update(softmax_sum=softmax_sum, exp_s=exp_s, p_t=p_t, ds=ds, ds_t=ds_t, k=k, dq=dq, dk=dk, dv=dv)
    return _finish("sdpa_composite_bwd", g, tensors, build,
                   params={"causal": causal, "dropout": dropout, "dq_accumulator": dq_accumulator})


def block_scale_quantize(m=256, n=256, *, block_size=32, matmul=False, k=128, data_type=BF16,
                         build=True) -> Pattern:
    """MXFP8 block-scale quantize (cuDNN 9.7+): X [1,m,n] -> Y fp8 E4M3 and E8M0 scales [1,m,n/32]
    (F8_128x4 layout, which cuDNN requires for 3-d tensors). ``matmul=True`` quantizes a matmul's
    output (A [1,m,k] @ B [1,k,n], the epilogue form). cuDNN's quantize engines target sm100/sm120."""
    require("CUDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR", what="block-scale quantize")
    g = Graph("block_scale_quantize", io_data_type=data_type)
    tensors = {}
    if matmul:
        a = g.tensor([1, m, k], name="a")
        b = g.tensor([1, k, n], name="b")
        x = g.matmul(a, b, name="c")
        tensors.update(a=a, b=b, c=x)
    else:
        x = tensors["x"] = g.tensor([1, m, n], name="x")
    out = add_block_scale_quantize(g, x, block_size=block_size)
    return _finish("block_scale_quantize", g, {**tensors, **out}, build, params={"matmul": matmul})


def block_scale_dequantize_matmul(m=256, n=256, k=256, *, block_size=32, reordering=None, data_type=BF16,
                                  build=True) -> Pattern:
    """MXFP8 matmul (cuDNN 9.7+): A [1,m,k] and B [1,k,n] fp8 E4M3 with E8M0 block scales along k,
    each BLOCK_SCALE_DEQUANTIZE'd (virtual fp32) into a matmul -> C [1,m,n].

    ``reordering`` of the scales: none (row-major, default; what the sm80/sm90 engines take) or
    ``TensorReordering.CUDNN_TENSOR_REORDERING_F8_128x4`` (the Blackwell swizzle).
    """
    require("CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR", what="block-scale dequantize")
    g = Graph("block_scale_dequantize_matmul", io_data_type=data_type)
    e4m3, e8m0 = DataType.CUDNN_DATA_FP8_E4M3, DataType.CUDNN_DATA_FP8_E8M0
    reordering = TensorReordering.CUDNN_TENSOR_REORDERING_NONE if reordering is None else reordering
    kb = k // block_size
    a = g.tensor([1, m, k], data_type=e4m3, name="a")
    sa = g.tensor([1, m, kb], data_type=e8m0, reordering_mode=reordering, name="a_scale")
    b = g.tensor([1, k, n], [k * n, 1, k], e4m3, name="b")  # column-major: k innermost, the block axis
    sb = g.tensor([1, kb, n], [kb * n, 1, kb], e8m0, reordering_mode=reordering, name="b_scale")
    da = add_block_scale_dequantize(g, a, sa, block_size=[1, block_size], name="a_dq")
    db = add_block_scale_dequantize(g, b, sb, block_size=[block_size, 1], name="b_dq")
    c = g.matmul(da, db, output=True, name="c")
    return _finish("block_scale_dequantize_matmul", g, {"a": a, "a_scale": sa, "b": b, "b_scale": sb, "a_dq": da,
                                                        "b_dq": db, "c": c}, build, params={"reordering": reordering})


def rope(b=2, h=4, s=128, d=64, *, rope_dim=None, data_type=BF16, build=True) -> Pattern:
    """Rotary position embedding (cuDNN 9.24+): X [b,h,s,d] BHSD, freqs [s,1,1,rope_dim] fp32."""
    require("CUDNN_BACKEND_OPERATION_ROPE_FWD_DESCRIPTOR", what="RoPE")
    g = Graph("rope", io_data_type=data_type)
    x = g.tensor([b, h, s, d], name="x")
    r = d if rope_dim is None else rope_dim
    freqs = g.tensor([s, 1, 1, r], [r, r, r, 1], F32, name="freqs")
    y = add_rope(g, x, freqs, rope_dim=rope_dim)
    return _finish("rope", g, {"x": x, "freqs": freqs, "y": y}, build)


def loaded_version() -> int:
    """The loaded cuDNN's version number (e.g. 91900)."""
    return get_version()
