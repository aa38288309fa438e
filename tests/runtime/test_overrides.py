"""Shape overrides: one plan reused across shapes (cuDNN >= 9.23), offline with the real cuDNN.

A matmul graph is built with ``override_shapes=True``, a plan for the H200 profile, and variant packs bound to fake
aligned device addresses (cuDNN finalizes them without a GPU) with other shapes per pack. What cuDNN reads is
checked here first: cuDNN 9.28.1 finalizes packs and answers workspace queries for any ranks, UIDs or sizes (only
the three arrays' lengths are compared). The per-pack workspace query itself needs a cuDNN handle (cuDNN answers
BAD_PARAM without one): it runs in tests/gpu/runtime/test_overrides_gpu.py. On an older release the gate refuses.
"""
import json
import math
import re
import warnings

import pytest

import cudnn_backend as cb
from cudnn_backend.core import get_execution_plan_workspace_size
from cudnn_backend.errors import CudnnVersionError
from cudnn_backend.graph import Graph
from cudnn_backend.runtime.execution import VariantPack, execute
from cudnn_backend.runtime.heuristics import get_configs, why_no_engine
from cudnn_backend.runtime.plans import build_plan
from cudnn_backend.tune import PlanCache
from tests.helpers.env import LOADED, loaded_has
from tests.helpers.releases import profile

HAS_OVERRIDES = loaded_has("9.23.0")
M, K, N = 256, 128, 64


class DeviceArray:
    """Device memory at a fake aligned address, sized for an fp16 ``shape``: it looks like a cuda.core Buffer
    (``.handle``, ``.size``), which the pack reads without asking the CUDA driver (an array's
    ``__cuda_array_interface__`` is read through cuda.core, which asks the driver where the pointer lives: a fake
    address is refused on a GPU)."""

    __module__ = "cuda.core._memory._buffer"

    def __init__(self, ptr, shape):
        self.handle, self.size, self.is_device_accessible = ptr, 2 * math.prod(shape), True


def _graph(override_shapes=True):
    g = Graph("matmul", io_data_type="half")
    a = g.tensor([1, M, K], name="a")
    b = g.tensor([1, K, N], name="b")
    c = g.matmul(a, b, output=True, name="c")
    relu_in = g.tensor([1, 1, 1], data_type="float", by_value=True, name="alpha")  # a by-value scalar
    g.pointwise("MUL", c, relu_in, output=True, name="scaled")
    og = g.build(override_shapes=True) if override_shapes else g.build()
    return g, og


def _first_plan(og):
    dp = profile("h200")
    configs = get_configs(og, "A", dp, raise_if_empty=False) or get_configs(og, "FALLBACK", dp, raise_if_empty=False)
    if not configs:
        pytest.skip(f"cuDNN {cb.get_version()}: no engine for the matmul on the H200 profile:\n"
                    f"{why_no_engine(og, dp.descriptor())[:1000]}")
    return build_plan(configs[0], device_profile=dp)


@pytest.fixture(scope="module")
def setup():
    g, og = _graph(override_shapes=HAS_OVERRIDES)
    t = {t.name: t for t in g.tensors.values()}
    return g, _first_plan(og), t


def _buffers(t, scale=1):
    addr = {"a": 0x100000, "b": 0x200000, "c": 0x300000, "scaled": 0x400000}
    return {t[n]: addr[n] * scale for n in addr} | {t["alpha"]: 2.0}


@pytest.mark.skipif(HAS_OVERRIDES, reason="the loaded cuDNN has override shapes")
def test_overrides_are_gated():
    g, og = _graph(override_shapes=False)
    t = {t.name: t for t in g.tensors.values()}
    loaded = f"{LOADED // 10000}.{LOADED % 10000 // 100}"
    message = re.escape(f"cudnnGetExecutionPlanWorkspaceSize (VariantPack(overrides=...)) needs cuDNN >= 9.23 "
                        f"(loaded: {loaded})")
    with pytest.raises(CudnnVersionError, match=f"^{message}$"):  # before the graph or the buffers are looked at
        VariantPack(None, _buffers(t), operation_graph=og, overrides={t["a"]: [2, M, K]})
    plan = _first_plan(og)
    with pytest.raises(CudnnVersionError, match=f"^{message}$"):
        VariantPack(plan, _buffers(t), overrides={t["a"]: [2, M, K]})
    with pytest.raises(CudnnVersionError, match=r"needs cuDNN >= 9\.23"):
        execute(None, plan, _buffers(t), overrides={t["a"]: [2, M, K]})
    pack = VariantPack(plan, _buffers(t))  # without overrides nothing changes
    assert pack.overrides == {} and pack.workspace_size == plan.workspace_size
    with pytest.raises(CudnnVersionError, match=r"VariantPack.query_workspace\) needs cuDNN >= 9\.23"):
        pack.query_workspace()
    with pytest.raises(CudnnVersionError, match=r"needs cuDNN >= 9\.23"):
        pack.rebind(overrides={t["a"]: [2, M, K]})


needs_overrides = pytest.mark.skipif(not HAS_OVERRIDES, reason="needs override shapes (cuDNN 9.23)")


@needs_overrides
def test_one_plan_packs_of_other_shapes(setup):
    g, plan, t = setup
    a, b, c, s = t["a"], t["b"], t["c"], t["scaled"]
    overrides = {a: [4, 2 * M, K], b.uid: ([4, K, N], [K * N, N, 1]), c: [4, 2 * M, N], s: [4, 2 * M, N]}
    pack = VariantPack(plan, _buffers(t), overrides=overrides)
    # what cuDNN is given, read back through the std::vector objects it reads
    assert pack.overrides == {
        a.uid: ((4, 2 * M, K), (2 * M * K, K, 1)), b.uid: ((4, K, N), (K * N, N, 1)),
        c.uid: ((4, 2 * M, N), (2 * M * N, N, 1)), s.uid: ((4, 2 * M, N), (2 * M * N, N, 1))}
    assert pack.tensors[a.uid].dims == (4, 2 * M, K) and pack.tensors[t["alpha"].uid].dims == (1, 1, 1)
    assert pack.workspace_size is None  # asked once a handle is known: cuDNN refuses the query without one
    with pytest.raises(ValueError, match="no cuDNN handle"):
        pack.query_workspace()
    with pytest.raises(ValueError, match="no cuDNN handle"):
        pack.execute()
    # another pack, other shapes, the same plan; and back to the graph's shapes
    small = VariantPack(plan, _buffers(t, 2), overrides={a: [1, 64, K], c: [1, 64, N], s: [1, 64, N]})
    assert small.overrides[a.uid] == ((1, 64, K), (64 * K, K, 1)) and b.uid not in small.overrides
    pack.rebind(overrides={a: [2, M, K], c: ([2, M, N], [M * N, N, 1]), s: [2, M, N]})  # (b broadcasts)
    assert pack.overrides[c.uid] == ((2, M, N), (M * N, N, 1)) and pack.tensors[b.uid].dims == (1, K, N)
    pack.rebind(overrides=None)
    assert pack.overrides == {} and pack.workspace_size == plan.workspace_size
    assert pack.tensors[c.uid].dims == (1, M, N)


@needs_overrides
def test_a_plan_of_override_shapes_is_saved_loaded_and_cached(setup, tmp_path):
    # cuDNN writes isOverrideShapeEnabled in the plan's graph: the JSON checks take it, so the plan loads back (with
    # its flag: packs of other shapes) and a plan cache serves it
    g, plan, t = setup
    text = plan.to_json()
    assert json.loads(text)["operationGraph"]["isOverrideShapeEnabled"] in (True, 1)
    assert plan.json_info["engine"] == plan.engine_index
    loaded = cb.plan_from_json(text, device_profile=profile("h200"), operation_graph=plan.operation_graph)
    overrides = {t["a"]: [4, 2 * M, K], t["c"]: [4, 2 * M, N], t["scaled"]: [4, 2 * M, N]}
    assert VariantPack(loaded, _buffers(t), overrides=overrides).overrides[t["a"].uid][0] == (4, 2 * M, K)
    cache = PlanCache(tmp_path / "c.sqlite")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an entry that would not load back is a warned miss
        assert cache.put(plan.operation_graph, plan, device_profile=profile("h200"))
        assert cache.get(plan.operation_graph, device_profile=profile("h200")).engine_index == plan.engine_index


@needs_overrides
def test_strides_default_to_the_tensors_own_axis_order(setup):
    g, plan, t = setup
    gt = Graph("nhwc", io_data_type="half")
    x = gt.tensor([2, 8, 4, 4], layout="nhwc", name="x")
    y = gt.relu(x, output=True, name="y")
    og = gt.build(override_shapes=True)  # no plan needed to check a pack against a graph
    pack = VariantPack(None, {x: 0x1000, y: 0x2000}, operation_graph=og, overrides={x: [4, 8, 6, 6], y: [4, 8, 6, 6]})
    assert pack.overrides[x.uid] == ((4, 8, 6, 6), (288, 1, 48, 8))  # NHWC stays NHWC


@needs_overrides
def test_overridden_shapes_past_the_tensor_span_are_refused_naming_the_uid():
    gt = Graph("relu", io_data_type="half")
    x = gt.tensor([1, 4, 4], name="x")
    y = gt.relu(x, output=True, name="y")
    og = gt.build(override_shapes=True)
    huge = [1, 2 ** 31, 2 ** 31]  # 2**62 elements: past graph_limits.MAX_TENSOR_ELEMENTS
    refusal = (r"^overrides\[1\]: dims: \[1, 2147483648, 2147483648\] spans 4611686018427387904 elements; a cuDNN "
               r"tensor spans at most 72057594037927936$")
    with pytest.raises(ValueError, match=refusal):
        VariantPack(None, {x: 0x1000, y: 0x2000}, operation_graph=og, overrides={x: huge, y: huge})
    pack = VariantPack(None, {x: 0x1000, y: 0x2000}, operation_graph=og)
    with pytest.raises(ValueError, match=refusal):
        pack.rebind(overrides={x: huge, y: huge})
    assert pack.overrides == {}  # unchanged


@needs_overrides
@pytest.mark.parametrize("overrides, error, message", [
    (lambda t: {t["a"]: [M, K]}, ValueError, r"overrides\[1\] dims: 2 entries for a \(uid 1\) .* of rank 3"),
    (lambda t: {t["a"]: ([2, M, K], [K, 1])}, ValueError, r"overrides\[1\] strides: 2 entries .* rank 3"),
    (lambda t: {t["a"]: [0, M, K]}, ValueError, r"overrides\[1\] dims\[0\]: 0 is below the minimum 1"),
    (lambda t: {t["a"]: [1, -M, K]}, ValueError, r"dims\[1\]: -256 is below the minimum 1"),
    (lambda t: {t["a"]: [1.0, M, K]}, TypeError, r"dims\[0\]"),
    (lambda t: {t["a"]: "1x256x128"}, TypeError, r"overrides\[1\]: expected dims .* not str"),
    (lambda t: {t["a"]: 7}, TypeError, r"overrides\[1\]: expected dims .* not int"),
    (lambda t: {99: [1, 2, 3]}, ValueError, r"overrides\[99\]: UID 99 is no tensor of the plan's graph"),
    (lambda t: {t["alpha"]: [1, 1, 1]}, ValueError, r"is a by-value scalar; only the graph's tensors in device"),
    (lambda t: {t["a"]: [2, M, K], t["a"].uid: [2, M, K]}, ValueError, r"UID 1 is overridden twice"),
    (lambda t: [(t["a"], [2, M, K])], TypeError, r"overrides: expected a mapping"),
    (lambda t: {t["a"]: [1 << 40, 1 << 40, K]}, ValueError, r"overrides\[1\]: dims: .* a cuDNN tensor spans at most"),
    (lambda t: {t["a"]: ([1 << 40, 1 << 40, K], [1 << 40, 1, 1])}, ValueError, r"span more than"),
])
def test_overrides_are_checked_before_cudnn(setup, overrides, error, message):
    g, plan, t = setup
    with pytest.raises(error, match=message):
        VariantPack(plan, _buffers(t), overrides=overrides(t))


@needs_overrides
def test_virtual_tensors_and_graphs_without_the_flag_are_refused(setup):
    g, plan, t = setup
    gv = Graph("virtual", io_data_type="half")
    a, b = gv.tensor([1, M, K]), gv.tensor([1, K, N])
    mid = gv.matmul(a, b)  # virtual
    out = gv.relu(mid, output=True)
    p = _first_plan(gv.build(override_shapes=True))
    with pytest.raises(ValueError, match=rf"overrides\[{mid.uid}\]: .* is virtual"):
        VariantPack(p, {a: 0x1000, b: 0x2000, out: 0x3000}, overrides={mid: [2, M, N]})
    plain = _first_plan(_graph(override_shapes=False)[1])
    ta = {x.name: x for x in plain.operation_graph.values[cb.CUDNN_ATTR_OPERATIONGRAPH_OPS][0].values.values()
          if hasattr(x, "name") and x.name}
    with pytest.raises(ValueError, match=r"finalized without override shapes: build it with "
                                         r"Graph\.build\(override_shapes=True\)"):
        VariantPack(plain, {u: 0x1000 * (i + 1) for i, u in enumerate(sorted(_real_uids(plain)))} | _scalar(plain),
                    overrides={ta["a"]: [2, M, K]})


def _real_uids(plan):
    from cudnn_backend.runtime._packing import tensor_specs

    return [u for u, s in tensor_specs(plan).items() if not s.virtual and not s.by_value]


def _scalar(plan):
    from cudnn_backend.runtime._packing import tensor_specs

    return {u: 1.0 for u, s in tensor_specs(plan).items() if s.by_value}


@needs_overrides
def test_buffers_are_checked_against_the_overridden_shapes(setup):
    g, plan, t = setup
    a, b, c, s = t["a"], t["b"], t["c"], t["scaled"]
    bufs = {a: DeviceArray(0x100000, [1, M, K]), b: DeviceArray(0x200000, [1, K, N]),
            c: DeviceArray(0x300000, [1, M, N]), s: DeviceArray(0x400000, [1, M, N]), t["alpha"]: 1.0}
    VariantPack(plan, bufs)  # the graph's shapes fit
    twice = {a: [2, M, K], c: [2, M, N], s: [2, M, N]}  # a batch of 2 (b broadcasts over it)
    with pytest.raises(ValueError, match=r"UID 1 \(a\): the buffer holds 65536 bytes but the tensor a \(uid 1\) "
                                         r"\[2, 256, 128\] .* spans 131072 bytes"):
        VariantPack(plan, bufs, overrides=twice)
    pack = VariantPack(plan, bufs, overrides={a: [1, M // 2, K], c: [1, M // 2, N], s: [1, M // 2, N]})
    before = pack.overrides
    with pytest.raises(ValueError, match=r"UID \d: the bound buffer holds (65536|32768) bytes but the tensor "
                                         r"(a|c|scaled) .* spans (131072|65536) bytes: rebind it with the overrides"):
        pack.rebind(overrides=twice)
    assert pack.overrides == before  # nothing changed
    bigger = {a: DeviceArray(0x500000, [2, M, K]), c: DeviceArray(0x600000, [2, M, N]),
              s: DeviceArray(0x700000, [2, M, N])}
    pack.rebind(bigger, overrides=twice)  # big enough buffers with them
    assert pack.overrides[c.uid] == ((2, M, N), (M * N, N, 1))
    after = pack.overrides
    with pytest.raises(ValueError, match=r"UID 1 \(a\): the buffer holds 65536 bytes"):  # a too small new buffer
        pack.rebind({a: DeviceArray(0x800000, [1, M, K])}, overrides=twice)
    assert pack.overrides == after  # the shapes before the call again


@needs_overrides
def test_the_workspace_query_needs_a_handle(setup):
    g, plan, t = setup
    pack = VariantPack(plan, _buffers(t), overrides={t["a"]: [2, M, K], t["c"]: [2, M, N], t["scaled"]: [2, M, N]})
    raw = cb.Descriptor(cb.CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
    with pytest.raises(ValueError, match="handle: cudnnGetExecutionPlanWorkspaceSize needs a cuDNN Handle"):
        get_execution_plan_workspace_size(None, plan.descriptor, raw)
    assert pack.workspace_size is None


@needs_overrides
@pytest.mark.parametrize("given, message", [
    # cuDNN checks none of these: it would write C past its end, or read A past its
    (lambda t: {t["a"]: [2, M, K]}, r"overrides \(1: \[2, 256, 128\]\): the shapes disagree: "
                                    r"CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR: cdesc \(c\) has dims \[1, 256, 64\] but "
                                    r"must be \[2, 256, 64\] \(adesc \[2, 256, 128\] x bdesc \[1, 128, 64\]\)"),
    (lambda t: {t["a"]: [1, M // 2, K]}, r"cdesc \(c\) has dims \[1, 256, 64\] but must be \[1, 128, 64\]"),
    (lambda t: {t["a"]: [2, M, K], t["c"]: [2, M, N]},  # the pointwise after the matmul
     r"CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: ydesc \(scaled\) has dims \[1, 256, 64\] but must be "
     r"\[2, 256, 64\]"),
])
def test_overridden_shapes_must_agree_with_the_others(setup, given, message):
    g, plan, t = setup
    with pytest.raises(ValueError, match=message):
        VariantPack(plan, _buffers(t), overrides=given(t))
    pack = VariantPack(plan, _buffers(t))
    with pytest.raises(ValueError, match=message):
        pack.rebind(overrides=given(t))
    assert pack.overrides == {}


@needs_overrides
def test_a_convolutions_overridden_output_must_be_its_inputs_convolution():
    g = Graph("conv", io_data_type="half")
    x, w = g.tensor([2, 8, 8, 8], layout="nhwc", name="x"), g.tensor([8, 8, 3, 3], layout="nhwc", name="w")
    y = g.conv_fwd(x, w, padding=1, output=True, name="y")
    og = g.build(override_shapes=True)
    bufs = {x: 0x1000000, w: 0x2000000, y: 0x3000000}
    with pytest.raises(ValueError, match=r"CONVOLUTION_FORWARD_DESCRIPTOR: ydesc \(y\) has dims \[2, 8, 8, 8\] but must "
                                         r"be \[2, 8, 16, 16\] \(the convolution of xdesc \[2, 8, 16, 16\] by wdesc"):
        VariantPack(None, bufs, operation_graph=og, overrides={x: [2, 8, 16, 16]})
    VariantPack(None, bufs, operation_graph=og, overrides={x: [2, 8, 16, 16], y: [2, 8, 16, 16]}).close()


@needs_overrides
def test_a_kept_pointer_must_leave_room_for_its_tensors_new_span(setup):
    """A raw pointer bound for the graph's shape passes the end of the address space once an override widens its
    tensor: refused, naming the UID, and the pack keeps its shapes."""
    g, plan, t = setup
    pack = VariantPack(plan, _buffers(t))
    end = (1 << 64) - 2 * M * K  # the half tensor a [1, M, K] ends exactly at 2**64
    pack.rebind_pointers([end if u == t["a"].uid else 0x200000 * (i + 1) for i, u in enumerate(pack.pointer_uids)])
    with pytest.raises(ValueError, match=rf"^UID {t['a'].uid}: pointer 0x{end:x} plus the {4 * 2 * M * K} bytes the "
                                         r"tensor spans passes the end of the 64-bit address space: rebind it with "
                                         r"the overrides$"):
        pack.rebind(overrides={t["a"]: [4, M, K], t["c"]: [4, M, N], t["scaled"]: [4, M, N]})
    assert pack.overrides == {}
