"""GPU test helpers: one cuDNN handle per session, plan building, graph builders, precisions.

Every test here is marked ``gpu`` (skipped without a GPU by tests/conftest.py); they run on a GPU machine. Nothing in this
file imports torch or cuda-bindings at import time, so collecting on a CPU machine is harmless;
the ``gpu_kit`` fixture hands the helpers to the tests (no ``import conftest`` needed).

Op graphs are built WITH the handle (``Graph.build(handle=h)``): on cuDNN 9.19 an operation graph
finalized without CUDNN_ATTR_OPERATIONGRAPH_HANDLE gives plans that fail at execute with
CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH (docs/design.md).
"""
from __future__ import annotations

import json
import os
import pathlib
from dataclasses import dataclass, field

import pytest

import cudnn_backend as cb
from cudnn_backend._bindings.enums import (
    AttributeName,
    AttributeType,
    DataType,
    NormFwdPhase,
    NormMode,
)
from cudnn_backend.graph import Graph
from cudnn_backend.runtime.heuristics import NoWorkingPlanError, build_first_plan
from cudnn_backend.runtime.plans import as_plan

from tests.helpers.env import H200_PROFILE_JSON

A = AttributeName
AT = AttributeType
F16, BF16, F32 = DataType.CUDNN_DATA_HALF, DataType.CUDNN_DATA_BFLOAT16, DataType.CUDNN_DATA_FLOAT
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
# fixtures
# ---------------------------------------------------------------------------------------------
class GpuKit:
    """What the GPU tests share: helpers bound to the session handle."""

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

    def __init__(self, handle):
        import torch

        self.torch = torch
        self.handle = handle
        self.TORCH_DTYPE = {F16: torch.float16, BF16: torch.bfloat16, F32: torch.float32,
                            DataType.CUDNN_DATA_DOUBLE: torch.float64}

    def plan(self, case_or_graph, precision=None, **filters):
        """Build the op graph with the handle, then its first plan (see plan_for)."""
        og = case_or_graph.build(self.handle) if isinstance(case_or_graph, Case) else case_or_graph
        return plan_for(og, self.handle, precision, **filters)

    def alloc(self, tensor, fill=None):
        """A CUDA torch tensor with exactly the cuDNN tensor's dims, strides and data type."""
        torch = self.torch
        dt = self.TORCH_DTYPE[DataType(int(tensor.get_keyword("data_type")))]
        t = torch.empty_strided(tuple(tensor.shape), tuple(tensor.get_keyword("strides")), dtype=dt, device="cuda")
        if fill == "randn":
            t.copy_(torch.randn(tuple(tensor.shape), device="cuda", dtype=torch.float32))
        elif fill == "nan":
            t.fill_(float("nan"))
        elif fill is not None:
            t.fill_(fill)
        return t

    def randn_(self, t, scale=1.0, shift=0.0):
        """Fresh random values into ``t`` in place (its pointer, hence the variant pack, unchanged)."""
        t.copy_(self.torch.randn(tuple(t.shape), device="cuda", dtype=self.torch.float32) * scale + shift)
        return t

    @staticmethod
    def poison_(t):
        t.fill_(float("nan"))
        return t

    def check(self, out, ref, tol, what=""):
        """NaN never passes; then ||out - ref|| / ||ref|| <= tol (computed in fp64)."""
        torch = self.torch
        torch.cuda.synchronize()
        assert bool(torch.isfinite(out).all()), f"{what}: output has NaN/Inf (not written, or bad numerics)"
        out64, ref64 = out.double(), ref.double()
        denom = ref64.norm().item()
        assert denom > 0, f"{what}: the reference is all zeros"
        err = (out64 - ref64).norm().item() / denom
        assert err <= tol, f"{what}: relative error {err:.3e} > {tol:.1e}"
        return err


@pytest.fixture(scope="session")
def gpu_handle():
    with cb.Handle() as h:
        yield h


@pytest.fixture(scope="session")
def gpu_kit(gpu_handle):
    pytest.importorskip("torch")
    import torch

    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    torch.manual_seed(1234)
    gpu_handle.stream = torch.cuda.current_stream()  # cuDNN and torch on one stream: ordered, no races
    return GpuKit(gpu_handle)


@pytest.fixture(scope="session")
def results_file():
    """Where tests may append findings (JSON lines): $OUT/gpu-findings.jsonl when $OUT is set."""
    out = os.environ.get("OUT")
    path = pathlib.Path(out) / "gpu-findings.jsonl" if out else None

    def record(**data):
        if path is not None:
            with path.open("a") as f:
                f.write(json.dumps(data, default=str) + "\n")

    return record
