"""The GPU test kit: plans, graph builders, precisions, device tensors, random fills, fp64 references. No torch.

Device memory, copies and fills go through the package's own ``runtime.memory`` (cuda.core and cuda-bindings);
random values come from the package's generator (``memory.host_random``, the same bits the device kernel writes);
references are written out in numpy (float64) from the tests' own formulas, independently of cuDNN and of the graph
as cuDNN reads it, where torch's were before; graph-generic checks use the fp64 reference evaluator
(``cudnn_backend.reference``). ``tests/gpu/conftest.py`` hands a ``GpuKit`` to the tests (the ``gpu_kit``
fixture). Importing this module touches no GPU: collecting on a CPU machine is harmless, and
``tests/test_gpu_kit.py`` checks the numpy references against loops on the CPU.

Op graphs are built WITH the handle (``Graph.build(handle=h)``): on cuDNN 9.19 an operation graph
finalized without CUDNN_ATTR_OPERATIONGRAPH_HANDLE gives plans that fail at execute with
CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH (docs/design.md).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import cudnn_backend as cb
from cudnn_backend._bindings.enums import (
    AttributeName,
    AttributeType,
    DataType,
    NormFwdPhase,
    NormMode,
)
from cudnn_backend.graph import Graph
from cudnn_backend.runtime import memory
from cudnn_backend.runtime._packing import TensorSpec
from cudnn_backend.runtime.heuristics import NoWorkingPlanError, build_first_plan
from cudnn_backend.runtime.plans import as_plan
from cudnn_backend.tune import inputs
from cudnn_backend.typed import arrays

from tests.helpers.env import H200_PROFILE_JSON

A = AttributeName
AT = AttributeType
F16, BF16, F32 = DataType.CUDNN_DATA_HALF, DataType.CUDNN_DATA_BFLOAT16, DataType.CUDNN_DATA_FLOAT
SEED = 1234  # the session's random inputs: kit.randn_ draws the next key of this seed
PROFILE_JSON = H200_PROFILE_JSON

# Numerical notes that change results beyond plain fp32 arithmetic.
_LOSSY_FP32 = ("CUDNN_NUMERICAL_NOTE_TENSOR_CORE", "CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS",
               "CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION", "CUDNN_NUMERICAL_NOTE_FFT",
               "CUDNN_NUMERICAL_NOTE_WINOGRAD", "CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4",
               "CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6", "CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13")


@dataclass(frozen=True)
class Precision:
    """An I/O data type with the relative error (||out - ref|| / ||ref||) allowed against an fp64 reference.

    fp16/bf16: outputs rounded to 11/8 mantissa bits (expected ~3e-4 / ~2e-3), 1e-2 allowed.
    tf32: fp32 I/O on tensor cores, inputs rounded to 10 mantissa bits: expected ~4e-4 norm-wise
    (round-to-nearest; more if the engine truncates), so 2e-3 allowed. fp32: engines without tensor
    cores, FFT, Winograd or down-conversion; 1e-5 allowed.
    """

    name: str
    io: DataType
    tol: float
    require_numerical: tuple = ()
    exclude_numerical: tuple = ()


PRECISIONS = {
    "fp16": Precision("fp16", F16, 1e-2),
    "bf16": Precision("bf16", BF16, 1e-2),
    "fp32": Precision("fp32", F32, 1e-5, exclude_numerical=_LOSSY_FP32),
    "tf32": Precision("tf32", F32, 2e-3, require_numerical=("CUDNN_NUMERICAL_NOTE_TENSOR_CORE",)),
}


class NoPlan(Exception):
    """No engine config of the heuristics (with the filters asked for) built an execution plan."""


# ---------------------------------------------------------------------------------------------
# plans
# ---------------------------------------------------------------------------------------------
def _first(values, default=None):
    return values[0] if values else default


def plan_notes(plan):
    """(numerical note names, behavior note names) of a plan's engine, read through cuDNN."""
    desc = as_plan(plan).descriptor
    cfg = _first(desc.get(A.CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, AT.CUDNN_TYPE_BACKEND_DESCRIPTOR))
    engine = _first(cfg.get(A.CUDNN_ATTR_ENGINECFG_ENGINE, AT.CUDNN_TYPE_BACKEND_DESCRIPTOR))
    num = engine.get(A.CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, AT.CUDNN_TYPE_NUMERICAL_NOTE)
    beh = engine.get(A.CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, AT.CUDNN_TYPE_BEHAVIOR_NOTE)
    return ({getattr(n, "name", str(n)) for n in num}, {getattr(n, "name", str(n)) for n in beh})


def _full(prefix, names):
    return tuple(n if str(n).startswith(prefix) else prefix + str(n) for n in names)


def make_plan(op_graph, handle=None, *, device_profile=None, require_numerical=(), exclude_numerical=(),
              require_behavior=(), exclude_behavior=()):
    """The first Plan (heuristics A, then FALLBACK) whose engine passes the note filters
    (``runtime.heuristics.build_first_plan``). Raises NoPlan when nothing builds."""
    try:
        plan, _report = build_first_plan(op_graph, handle=handle, device_profile=device_profile, modes=("A",),
                                         fallback=True,
                                         require_numerical=_full("CUDNN_NUMERICAL_NOTE_", require_numerical),
                                         exclude_numerical=_full("CUDNN_NUMERICAL_NOTE_", exclude_numerical),
                                         require_behavior=_full("CUDNN_BEHAVIOR_NOTE_", require_behavior),
                                         exclude_behavior=_full("CUDNN_BEHAVIOR_NOTE_", exclude_behavior))
    except NoWorkingPlanError as e:
        raise NoPlan(str(e)) from e
    return plan


def plan_for(op_graph, handle, precision: Precision | None = None, **filters):
    """make_plan with the precision's note filters; skips fp32/tf32 cases no engine supports."""
    if precision is not None:
        filters.setdefault("require_numerical", precision.require_numerical)
        filters.setdefault("exclude_numerical", precision.exclude_numerical)
    try:
        return make_plan(op_graph, handle, **filters)
    except NoPlan as e:
        if precision is not None and precision.name in ("fp32", "tf32"):
            pytest.skip(f"no {precision.name} engine for this graph: {e}")
        raise


# ---------------------------------------------------------------------------------------------
# graphs (torch-free: also built offline against the H200 profile to check the cases exist)
# ---------------------------------------------------------------------------------------------
@dataclass
class Case:
    graph: Graph
    tensors: dict = field(default_factory=dict)  # name -> Tensor
    params: dict = field(default_factory=dict)

    def __getattr__(self, name):
        tensors = self.__dict__.get("tensors", {})
        if name in tensors:
            return tensors[name]
        raise AttributeError(name)

    def build(self, handle=None):
        return self.graph.build(handle=handle)


def _layout(layout):
    return "nhwc" if layout == "nhwc" else None


def conv_fwd_case(io, layout, n=4, c=16, h=12, w=12, k=32):
    g = Graph("conv_fwd", io_data_type=io)
    x = g.tensor([n, c, h, w], layout=_layout(layout), name="x")
    wt = g.tensor([k, c, 3, 3], layout=_layout(layout), name="w")
    y = g.conv_fwd(x, wt, padding=1, output=True, name="y")
    return Case(g, dict(x=x, w=wt, y=y))


def conv_bwd_data_case(io, layout, n=4, c=16, h=12, w=12, k=32):
    g = Graph("conv_bwd_data", io_data_type=io)
    dy = g.tensor([n, k, h, w], layout=_layout(layout), name="dy")
    wt = g.tensor([k, c, 3, 3], layout=_layout(layout), name="w")
    dx = g.conv_bwd_data(dy, wt, [n, c, h, w], padding=1, output=True, name="dx")
    return Case(g, dict(dy=dy, w=wt, dx=dx))


def conv_bwd_filter_case(io, layout, n=4, c=16, h=12, w=12, k=32):
    g = Graph("conv_bwd_filter", io_data_type=io)
    x = g.tensor([n, c, h, w], layout=_layout(layout), name="x")
    dy = g.tensor([n, k, h, w], layout=_layout(layout), name="dy")
    dw = g.conv_bwd_filter(x, dy, [k, c, 3, 3], padding=1, output=True, name="dw")
    return Case(g, dict(x=x, dy=dy, dw=dw))


def conv_bias_relu_case(io, layout, n=4, c=16, h=12, w=12, k=32):
    g = Graph("conv_bias_relu", io_data_type=io)
    x = g.tensor([n, c, h, w], layout=_layout(layout), name="x")
    wt = g.tensor([k, c, 3, 3], layout=_layout(layout), name="w")
    b = g.tensor([1, k, 1, 1], layout=_layout(layout), name="bias")
    conv = g.conv_fwd(x, wt, padding=1, name="conv_out")
    biased = g.pointwise("CUDNN_POINTWISE_ADD", conv, b, name="biased")
    y = g.pointwise("CUDNN_POINTWISE_RELU_FWD", biased, output=True, name="y")
    return Case(g, dict(x=x, w=wt, bias=b, conv_out=conv, biased=biased, y=y))


def conv_scale_shift_case(io=F16, n=4, c=16, h=12, w=12, k=32):
    """y = alpha * conv(x, w) + beta with alpha, beta by-value fp32 scalars."""
    g = Graph("conv_scale_shift", io_data_type=io)
    x = g.tensor([n, c, h, w], layout="nhwc", name="x")
    wt = g.tensor([k, c, 3, 3], layout="nhwc", name="w")
    conv = g.conv_fwd(x, wt, padding=1, name="conv_out")
    alpha = g.tensor([1, 1, 1, 1], [1, 1, 1, 1], F32, by_value=True, name="alpha")
    beta = g.tensor([1, 1, 1, 1], [1, 1, 1, 1], F32, by_value=True, name="beta")
    scaled = g.pointwise("CUDNN_POINTWISE_MUL", conv, alpha, name="scaled")
    y = g.pointwise("CUDNN_POINTWISE_ADD", scaled, beta, output=True, name="y")
    return Case(g, dict(x=x, w=wt, alpha=alpha, beta=beta, y=y))


def matmul_bias_gelu_case(io, batch=2, m=64, n=96, k=48):
    g = Graph("matmul_bias_gelu", io_data_type=io)
    a = g.tensor([batch, m, k], name="a")
    b = g.tensor([batch, k, n], name="b")
    bias = g.tensor([1, 1, n], name="bias")
    c = g.matmul(a, b, name="c")
    biased = g.pointwise("CUDNN_POINTWISE_ADD", c, bias, name="biased")
    y = g.pointwise("CUDNN_POINTWISE_GELU_FWD", biased, output=True, name="y")  # erf GELU
    return Case(g, dict(a=a, b=b, bias=bias, y=y))


def matmul_row_sum_case(io, batch=2, m=64, n=96, k=48):
    """A reduction (sum over N) of a matmul's output, fp32 result: cuDNN fuses reductions after a matmul/conv."""
    g = Graph("matmul_row_sum", io_data_type=io)
    a = g.tensor([batch, m, k], name="a")
    b = g.tensor([batch, k, n], name="b")
    c = g.matmul(a, b, name="c")
    y = g.tensor([batch, m, 1], data_type=F32, name="y")
    g.reduction(c, "CUDNN_REDUCE_TENSOR_ADD", output=y)
    return Case(g, dict(a=a, b=b, y=y))


def layer_norm_case(io, training=True, tokens=256, hidden=128, epsilon=1e-5, source="patterns"):
    """Layer norm forward over ``hidden``: the ``patterns.layer_norm_fwd`` pattern, or NORM_FORWARD by hand
    (``source="typed"``)."""
    if source == "patterns":
        from cudnn_backend import patterns

        p = patterns.layer_norm_fwd(tokens, hidden, training=training, epsilon=epsilon, data_type=io, build=False)
        t = dict(p.tensors)
        return Case(p.graph, dict(x=t["x"], scale=t["scale"], bias=t["bias"], y=t["y"], epsilon=t["epsilon"],
                                  mean=t.get("mean"), inv_variance=t.get("inv_variance")),
                    dict(epsilon=epsilon, training=training, source="patterns"))
    from cudnn_backend.typed import OperationNormForward

    g = Graph("layer_norm_fwd", io_data_type=io)
    xs = [hidden, 1, hidden, hidden]
    x = g.tensor([tokens, hidden, 1, 1], xs, io, name="x")
    scale = g.tensor([1, hidden, 1, 1], xs, F32, name="scale")
    bias = g.tensor([1, hidden, 1, 1], xs, F32, name="bias")
    eps = g.tensor([1, 1, 1, 1], [1, 1, 1, 1], F32, by_value=True, name="epsilon")
    y = g.tensor([tokens, hidden, 1, 1], xs, io, name="y")
    phase = NormFwdPhase.CUDNN_NORM_FWD_TRAINING if training else NormFwdPhase.CUDNN_NORM_FWD_INFERENCE
    kw = dict(mode=NormMode.CUDNN_LAYER_NORM, phase=phase, xdesc=x, scale_desc=scale, bias_desc=bias,
              epsilon_desc=eps, ydesc=y)
    mean = inv = None
    if training:
        mean = g.tensor([tokens, 1, 1, 1], [1, 1, 1, 1], F32, name="mean")
        inv = g.tensor([tokens, 1, 1, 1], [1, 1, 1, 1], F32, name="inv_variance")
        kw.update(mean_desc=mean, inv_variance_desc=inv)
    g.add(OperationNormForward(**kw))
    return Case(g, dict(x=x, scale=scale, bias=bias, y=y, epsilon=eps, mean=mean, inv_variance=inv),
                dict(epsilon=epsilon, training=training, source="typed"))


# ---------------------------------------------------------------------------------------------
# fp64 references in numpy (NCHW logical order; stride 1)
# ---------------------------------------------------------------------------------------------
def conv2d(x, w, padding=1):
    """Cross-correlation of x [n, c, h, w] with w [k, c, r, s], zero padding ``padding``, stride 1."""
    p = int(padding)
    xp = np.pad(np.asarray(x, np.float64), ((0, 0), (0, 0), (p, p), (p, p)))
    windows = sliding_window_view(xp, w.shape[2:], axis=(2, 3))  # n, c, h', w', r, s
    return np.einsum("nchwrs,kcrs->nkhw", windows, np.asarray(w, np.float64), optimize=True)


def conv2d_bwd_data(dy, w, padding=1):
    """The gradient of sum(dy * conv2d(x, w, padding)) with respect to x: dy correlated with the flipped filter,
    its channels swapped."""
    flipped = np.asarray(w, np.float64)[:, :, ::-1, ::-1].transpose(1, 0, 2, 3)
    return conv2d(dy, flipped, w.shape[2] - 1 - int(padding))


def conv2d_bwd_filter(x, dy, filter_hw, padding=1):
    """The gradient of sum(dy * conv2d(x, w, padding)) with respect to w (of spatial size ``filter_hw``)."""
    p = int(padding)
    xp = np.pad(np.asarray(x, np.float64), ((0, 0), (0, 0), (p, p), (p, p)))
    windows = sliding_window_view(xp, tuple(filter_hw), axis=(2, 3))
    return np.einsum("nchwrs,nkhw->kcrs", windows, np.asarray(dy, np.float64), optimize=True)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu(z):
    """The exact (erf) GELU."""
    z = np.asarray(z, np.float64)
    return 0.5 * z * (1.0 + _erf(z / math.sqrt(2.0)))


def relu(z, lower_clip_slope=0.0):
    z = np.asarray(z, np.float64)
    return np.where(z > 0, z, lower_clip_slope * z)


# ---------------------------------------------------------------------------------------------
# device tensors
# ---------------------------------------------------------------------------------------------
class DeviceTensor(memory.DeviceBuffer):
    """One cuDNN tensor's bytes on the device: a ``memory.DeviceBuffer`` (what a VariantPack binds) of the span of
    ``spec`` (dims, strides, data type). ``values``: what the kit last wrote there from the host (float64, logical
    dims), None once poisoned or written by the GPU; ``kit.read`` reads it back."""

    __slots__ = ("spec", "values")

    def __init__(self, spec: TensorSpec):
        nbytes = spec.nbytes
        if nbytes is None:
            raise ValueError(f"the kit cannot allocate {spec.describe()} (no plain element size)")
        super().__init__(max(nbytes, 1))
        self.spec = spec
        self.values = None

    @property
    def shape(self) -> tuple:
        return tuple(self.spec.dims)

    def __repr__(self):
        return f"<DeviceTensor {self.spec.describe()} at 0x{self._ptr:x}>"


class CudaArrayBytes:
    """Plain device memory offered only through ``__cuda_array_interface__`` (a 1-D uint8 array), as other
    libraries' arrays are: a variant pack reads it through its array adapter, not as a DeviceBuffer."""

    def __init__(self, nbytes: int):
        self.buffer = memory.DeviceBuffer(nbytes)

    @property
    def __cuda_array_interface__(self):
        return self.buffer.__cuda_array_interface__


def spec_of(tensor) -> TensorSpec:
    """The TensorSpec of a graph tensor (a Tensor descriptor of the Graph builder or a pattern)."""
    return TensorSpec.from_descriptor(tensor)


class GpuKit:
    """What the GPU tests share: helpers bound to the session handle (on the legacy default stream, as the kit's
    copies and fills: one order for everything)."""

    PRECISIONS = PRECISIONS
    PROFILE_JSON = PROFILE_JSON
    NoPlan = NoPlan
    conv_fwd_case = staticmethod(conv_fwd_case)
    conv_bwd_data_case = staticmethod(conv_bwd_data_case)
    conv_bwd_filter_case = staticmethod(conv_bwd_filter_case)
    conv_bias_relu_case = staticmethod(conv_bias_relu_case)
    conv_scale_shift_case = staticmethod(conv_scale_shift_case)
    matmul_bias_gelu_case = staticmethod(matmul_bias_gelu_case)
    matmul_row_sum_case = staticmethod(matmul_row_sum_case)
    layer_norm_case = staticmethod(layer_norm_case)
    plan_notes = staticmethod(plan_notes)
    make_plan = staticmethod(make_plan)
    conv2d = staticmethod(conv2d)
    conv2d_bwd_data = staticmethod(conv2d_bwd_data)
    conv2d_bwd_filter = staticmethod(conv2d_bwd_filter)
    gelu = staticmethod(gelu)
    relu = staticmethod(relu)
    CudaArrayBytes = CudaArrayBytes

    def __init__(self, handle):
        self.handle = handle
        self._keys = itertools.count()

    @property
    def device_name(self) -> str:
        return memory.device().name

    def plan(self, case_or_graph, precision=None, **filters):
        """Build the op graph with the handle, then its first plan (see plan_for)."""
        og = case_or_graph.build(self.handle) if isinstance(case_or_graph, Case) else case_or_graph
        return plan_for(og, self.handle, precision, **filters)

    # -- memory -------------------------------------------------------------------------------------
    def alloc(self, tensor, fill=None) -> DeviceTensor:
        """Device memory with exactly the cuDNN tensor's dims, strides and data type: ``fill`` "randn" (random
        values, ``randn_``), "nan" (poisoned), a number, or None (left as allocated)."""
        return self._filled(DeviceTensor(spec_of(tensor)), fill)

    def alloc_dims(self, dims, data_type, fill=None) -> DeviceTensor:
        """A packed (row-major) tensor of ``dims`` and ``data_type``, filled as ``alloc``."""
        spec = TensorSpec(0, "t", tuple(dims), tuple(arrays.packed_strides(dims)), DataType(int(data_type)))
        return self._filled(DeviceTensor(spec), fill)

    def buffers(self, case: Case, inputs=("x", "w", "bias"), outputs=("y",)) -> dict:
        """{tensor: DeviceTensor} for a case: the ``inputs`` random, the ``outputs`` poisoned."""
        return {**{getattr(case, n): self.alloc(getattr(case, n), "randn") for n in inputs},
                **{getattr(case, n): self.alloc(getattr(case, n), "nan") for n in outputs}}

    def _filled(self, t, fill):
        if fill == "randn":
            self.randn_(t)
        elif fill == "nan":
            self.poison_(t)
        elif fill is not None:
            self.write(t, np.full(t.shape, float(fill)))
        return t

    def write(self, t: DeviceTensor, values) -> DeviceTensor:
        """``values`` (logical dims) rounded to the tensor's data type, copied to its strided places; ``t.values``
        then holds exactly what the device holds."""
        stored = arrays.encode(np.broadcast_to(np.asarray(values, np.float64), t.shape), t.spec.data_type)
        memory.copy_to_device(t.ptr, inputs.host_layout(stored, t.spec))
        t.values = arrays.decode(stored, t.spec.data_type).astype(np.float64)
        return t

    def randn_(self, t: DeviceTensor, scale=1.0, shift=0.0) -> DeviceTensor:
        """Fresh random values into ``t`` in place (its pointer, hence the variant pack, unchanged): the package's
        generator (mean 0, standard deviation ``scale``), plus ``shift``."""
        key = memory.random_key(SEED, next(self._keys))
        values = memory.host_random(F32, math.prod(t.shape), key, scale).astype(np.float64).reshape(t.shape)
        return self.write(t, values + shift)

    @staticmethod
    def poison_(t: DeviceTensor) -> DeviceTensor:
        """Every byte 0xFF: NaN in every floating-point type."""
        memory.fill_bytes(t.ptr, inputs.POISON_BYTE, t.nbytes)
        memory.synchronize(0)
        t.values = None
        return t

    @staticmethod
    def read(t, spec: TensorSpec | None = None) -> np.ndarray:
        """The tensor's values (float64, logical dims) read back after all work on the device; ``t`` a DeviceTensor,
        or a DeviceBuffer with the ``spec`` it holds."""
        spec = t.spec if spec is None else spec
        memory.synchronize()
        raw = memory.copy_to_host(t.ptr, spec.nbytes)
        return arrays.decode(inputs.stored_view(raw, spec), spec.data_type).astype(np.float64)

    def check(self, out, ref, tol, what=""):
        """NaN never passes; then ||out - ref|| / ||ref|| <= tol (computed in fp64). ``out``: a DeviceTensor (read
        back after all work on the device) or an array."""
        out64 = self.read(out) if isinstance(out, DeviceTensor) else np.asarray(out, np.float64)
        ref64 = np.asarray(ref, np.float64)
        assert out64.shape == ref64.shape, f"{what}: output shape {out64.shape}, reference shape {ref64.shape}"
        assert np.isfinite(out64).all(), f"{what}: output has NaN/Inf (not written, or bad numerics)"
        denom = float(np.linalg.norm(ref64))
        assert denom > 0, f"{what}: the reference is all zeros"
        err = float(np.linalg.norm(out64 - ref64)) / denom
        assert err <= tol, f"{what}: relative error {err:.3e} > {tol:.1e}"
        return err
