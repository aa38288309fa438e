"""Device buffers for any graph: random inputs by data type, by-value scalars from their recorded values,
outputs poisoned (NaN where the type has one), several sets to rotate through while timing.

Everything here needs a GPU and torch (an optional dependency, imported when first used)."""
from __future__ import annotations

from dataclasses import dataclass, field

from cudnn_backend._bindings.enums import DataType
from cudnn_backend.runtime._packing import TensorSpec, tensor_specs
from cudnn_backend.tune.graphs import operations_of
from cudnn_backend.typed.introspection import signature_of, tensor_slots

__all__ = ["BufferSet", "make_buffer_sets", "torch_dtype", "io_uids", "warm_up"]

D = DataType
_FLOATS = {D.CUDNN_DATA_HALF, D.CUDNN_DATA_BFLOAT16, D.CUDNN_DATA_FLOAT, D.CUDNN_DATA_DOUBLE}
_FP8 = {D.CUDNN_DATA_FP8_E4M3, D.CUDNN_DATA_FP8_E5M2}


def torch_dtype(data_type):
    """The torch dtype of a cuDNN data type (ValueError for types torch lacks)."""
    import torch  # optional dependency

    table = {D.CUDNN_DATA_HALF: torch.float16, D.CUDNN_DATA_BFLOAT16: torch.bfloat16, D.CUDNN_DATA_FLOAT: torch.float32,
             D.CUDNN_DATA_DOUBLE: torch.float64, D.CUDNN_DATA_INT32: torch.int32, D.CUDNN_DATA_INT64: torch.int64,
             D.CUDNN_DATA_INT8: torch.int8, D.CUDNN_DATA_UINT8: torch.uint8, D.CUDNN_DATA_BOOLEAN: torch.bool}
    if hasattr(torch, "float8_e4m3fn"):
        table[D.CUDNN_DATA_FP8_E4M3] = torch.float8_e4m3fn
        table[D.CUDNN_DATA_FP8_E5M2] = torch.float8_e5m2
    if hasattr(torch, "float8_e8m0fnu") and "CUDNN_DATA_FP8_E8M0" in D.__members__:
        table[D.CUDNN_DATA_FP8_E8M0] = torch.float8_e8m0fnu
    try:
        return table[D(int(data_type))]
    except (KeyError, ValueError):
        raise ValueError(f"no torch dtype for cuDNN data type {data_type!r}") from None


def warm_up():
    """Import torch and make its CUDA context. A sweep worker runs this in a thread as it starts, so the seconds
    torch's import takes overlap cuDNN's work on the first graph. Failures are left for that graph to meet
    (and report) when it imports torch itself."""
    try:
        import torch  # optional dependency

        torch.zeros(1, device="cuda")  # the CUDA context and torch's allocator, not only its bookkeeping
    except Exception:  # noqa: BLE001, S110 - best effort; the task's own import reports what is wrong
        pass


def io_uids(op_graph) -> tuple[set, set]:
    """(UIDs read and never written, UIDs written and kept) among the real tensors of the graph."""
    read, written = set(), set()
    for op in operations_of(op_graph):
        for _, t, out in tensor_slots(op):
            sig = signature_of(t)
            if sig[4]:
                continue
            (written if out else read).add(sig[0])
    return read - written, written


@dataclass
class BufferSet:
    """One set of device buffers: ``by_uid`` ({uid: torch tensor or scalar}) is what a VariantPack binds."""

    by_uid: dict
    outputs: set
    specs: dict = field(repr=False, default_factory=dict)
    outputs_known: bool = True

    def poison(self):
        """Outputs to NaN (floats) or their type's maximum, so a kernel that writes nothing is caught."""
        import torch

        for uid in self.outputs:
            t = self.by_uid[uid]
            if t.dtype.is_floating_point and t.dtype.itemsize > 1:
                t.fill_(float("nan"))
            elif t.dtype == torch.bool:
                t.fill_(True)
            elif t.dtype.is_floating_point:
                t.view(torch.uint8).fill_(0x7F)
            else:
                t.fill_(torch.iinfo(t.dtype).max)

    def output(self, uid):
        return self.by_uid[uid]


def _random(spec: TensorSpec, gen, scale=0.5):
    import torch

    dt = torch_dtype(spec.data_type)
    t = torch.empty_strided(spec.dims, spec.strides, dtype=dt, device="cuda")
    if spec.data_type in _FLOATS or spec.data_type in _FP8:
        src = torch.randn(spec.dims, generator=gen, device="cuda", dtype=torch.float32) * scale
        t.copy_(src.to(dt))
    elif dt == torch.bool:
        t.copy_(torch.rand(spec.dims, generator=gen, device="cuda") < 0.5)
    elif dt.is_floating_point:  # scale types (E8M0): ones
        t.copy_(torch.ones(spec.dims, device="cuda", dtype=torch.float32).to(dt))
    else:
        t.copy_(torch.randint(0, 8, spec.dims, generator=gen, device="cuda", dtype=torch.int64).to(dt))
    return t


def make_buffer_sets(op_graph, count=4, *, seed=0, user=None, plan=None) -> list[BufferSet]:
    """``count`` sets of buffers for the graph's real tensors: inputs random (floats standard normal * 0.5,
    integers in [0, 8), booleans fair), by-value scalars from their recorded values (1 when none), outputs
    poisoned. ``user`` ({uid or tensor: buffer}) replaces the generated buffers of those tensors in every set.

    With ``op_graph`` None the tensors come from ``plan``'s JSON; which of them are outputs is then unknown
    (``BufferSet.outputs`` is empty and ``outputs_known`` False): every tensor gets random data."""
    import torch

    if op_graph is not None:
        specs = tensor_specs(operation_graph=op_graph)
        _, outputs = io_uids(op_graph)
        known = True
    else:
        specs = tensor_specs(plan=plan)
        if not specs:
            raise ValueError("the plan's tensors are unknown: its JSON lists none; pass buffers=")
        outputs, known = set(), False
    given = {}
    for key, value in (user or {}).items():
        uid = key if isinstance(key, int) else signature_of(key)[0]
        given[uid] = value
    sets = []
    for i in range(count):
        gen = torch.Generator(device="cuda").manual_seed(seed + i)
        by_uid = {}
        for uid, spec in specs.items():
            if spec.virtual:
                continue
            if uid in given:
                by_uid[uid] = given[uid]
            elif spec.by_value:
                by_uid[uid] = 1.0 if spec.value is None else spec.value
            else:
                by_uid[uid] = _random(spec, gen)
        bs = BufferSet(by_uid, {u for u in outputs if u not in given}, specs, known)
        bs.poison()
        sets.append(bs)
    return sets
