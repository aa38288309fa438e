"""Execution on the GPU: prebuilt packs, bind_and_execute, rebinding, by-value scalars, workspaces,
streams, device buffers, cuDNN's native CUDA graph API (populate, update, replay, kernel count)
and a plan built offline against the H200 profile, loaded onto the GPU from its JSON. No torch: the kit's device
tensors, references in numpy (torch interop: test_torch_gpu.py)."""
import array
import gc
import weakref

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.runtime import memory
from cudnn_backend.runtime import execution as ex
from cudnn_backend._bindings.enums import AttributeName, AttributeType, HeurMode
from cudnn_backend.runtime.execution import CudaGraph, VariantPack, execute
from cudnn_backend.runtime.plans import plan_from_json

from tests.gpu.kit import conv2d, relu

TOL = 1e-2  # fp16


def _conv_ref(x, w):
    return conv2d(x.values, w.values, padding=1)


def _cbr_ref(x, w, b):
    return relu(conv2d(x.values, w.values, padding=1) + b.values)


class ConvSetup:
    """fp16 conv forward (NHWC unless asked): case, plan, and ``buffers()``: fresh device tensors."""

    def __init__(self, kit, layout="nhwc", build_plan=True):
        self.kit = kit
        self.case = kit.conv_fwd_case(kit.PRECISIONS["fp16"].io, layout)
        self.og = self.case.build(kit.handle)
        self.plan = kit.make_plan(self.og, kit.handle) if build_plan else None

    def buffers(self):
        k, c = self.kit, self.case
        return {c.x: k.alloc(c.x, "randn"), c.w: k.alloc(c.w, "randn"), c.y: k.alloc(c.y, "nan")}

    def check(self, bufs, what):
        c = self.case
        return self.kit.check(bufs[c.y], _conv_ref(bufs[c.x], bufs[c.w]), TOL, what)


@pytest.fixture
def conv(gpu_kit):
    return ConvSetup(gpu_kit)


# ---------------------------------------------------------------------------------------------
# execute
# ---------------------------------------------------------------------------------------------
def test_execute_with_a_prebuilt_pack(gpu_kit, conv):
    bufs = conv.buffers()
    pack = VariantPack(conv.plan, bufs)
    c = conv.case
    for r, run in enumerate((lambda: execute(gpu_kit.handle, conv.plan, pack),
                             lambda: pack.execute(gpu_kit.handle, conv.plan),
                             lambda: pack.execute(),  # the pack's plan, and that plan's handle
                             lambda: execute(None, conv.plan, pack))):
        gpu_kit.randn_(bufs[c.x]), gpu_kit.randn_(bufs[c.w]), gpu_kit.poison_(bufs[c.y])
        run()
        conv.check(bufs, f"execute form {r}")


def test_execute_with_a_mapping(gpu_kit, conv):
    bufs = conv.buffers()
    execute(gpu_kit.handle, conv.plan, bufs)
    conv.check(bufs, "execute(handle, plan, {uid: tensor})")


def test_bind_and_execute_moves_between_buffer_sets(gpu_kit, conv):
    c = conv.case
    sets = [conv.buffers() for _ in range(3)]
    pack = VariantPack(conv.plan, sets[0])
    order = pack.pointer_uids
    assert set(order) == {c.x.uid, c.w.uid, c.y.uid}

    def pointers(bufs):
        by_uid = {t.uid: v for t, v in bufs.items()}
        return tuple(by_uid[u].ptr for u in order)

    forms = [pointers(sets[1]),                                   # tuple of ints
             array.array("q", pointers(sets[2])),                 # int64 buffer
             np.array(pointers(sets[0]), dtype=np.int64),         # numpy int64
             list(pointers(sets[1]))]                             # list of ints
    targets = [1, 2, 0, 1]
    for form, target in zip(forms, targets):
        for s in sets:
            gpu_kit.poison_(s[c.y])
        gpu_kit.randn_(sets[target][c.x]), gpu_kit.randn_(sets[target][c.w])
        pack.bind_and_execute(gpu_kit.handle, conv.plan, form)
        conv.check(sets[target], f"bind_and_execute into set {target} ({type(form).__name__})")
        for i, s in enumerate(sets):
            if i != target:
                assert np.isnan(gpu_kit.read(s[c.y])).all(), f"set {i} was written, the pack should point at set {target}"


def test_bind_and_execute_with_tensors_keeps_them(gpu_kit, conv):
    c = conv.case
    a, b = conv.buffers(), conv.buffers()
    pack = VariantPack(conv.plan, a)
    by_uid = {t.uid: v for t, v in b.items()}
    pack.bind_and_execute(gpu_kit.handle, conv.plan, tuple(by_uid[u] for u in pack.pointer_uids))
    conv.check(b, "bind_and_execute with buffer objects")
    wy = weakref.ref(b[c.y])
    y_ptr = b[c.y].ptr
    del b, by_uid
    gc.collect()
    assert wy() is not None and pack.pointers[c.y.uid] == y_ptr  # the pack holds the new output


def test_rebind_mapping_then_execute(gpu_kit, conv):
    c = conv.case
    bufs = conv.buffers()
    pack = VariantPack(conv.plan, bufs)
    old_y = bufs[c.y]
    w_old = weakref.ref(old_y)
    new_y = gpu_kit.alloc(c.y, "nan")
    pack.rebind({c.y: new_y})
    del old_y, bufs[c.y]
    gc.collect()
    assert w_old() is None  # released by the pack once rebound
    bufs[c.y] = new_y
    execute(gpu_kit.handle, conv.plan, pack)
    conv.check(bufs, "after rebind({y: new})")


def test_by_value_scalars(gpu_kit):
    """y = alpha * conv(x, w) + beta with alpha, beta passed by value from the pack's host buffer."""
    kit = gpu_kit
    case = kit.conv_scale_shift_case()
    plan = kit.plan(case)
    x, w, y = kit.alloc(case.x, "randn"), kit.alloc(case.w, "randn"), kit.alloc(case.y, "nan")
    pack = VariantPack(plan, {case.x: x, case.w: w, case.y: y, case.alpha: 0.5, case.beta: -1.0})
    assert set(pack.scalar_uids) == {case.alpha.uid, case.beta.uid}
    execute(kit.handle, plan, pack)
    kit.check(y, 0.5 * _conv_ref(x, w) - 1.0, TOL, "alpha=0.5, beta=-1")
    pack.set_scalar(case.alpha, 2.0)
    pack.rebind({case.beta: 3.0})
    kit.poison_(y)
    execute(kit.handle, plan, pack)
    kit.check(y, 2.0 * _conv_ref(x, w) + 3.0, TOL, "alpha=2, beta=3")


def _plan_with_workspace(kit, og):
    from cudnn_backend.typed import EngineHeuristics, ExecutionPlan

    for mode in (HeurMode.CUDNN_HEUR_MODE_A, HeurMode.CUDNN_HEUR_MODE_FALLBACK):
        configs = EngineHeuristics(operation_graph=og, mode=mode).finalize().get(
            AttributeName.CUDNN_ATTR_ENGINEHEUR_RESULTS, AttributeType.CUDNN_TYPE_BACKEND_DESCRIPTOR)
        for cfg in configs:
            try:
                plan = ExecutionPlan(engine_config=cfg, handle=kit.handle).finalize()
            except cb.CudnnError:
                continue
            if plan.workspace_size > 0:
                return plan
    return None


def test_pack_allocates_and_frees_the_workspace(gpu_kit):
    kit = gpu_kit
    setup = ConvSetup(kit, layout="nchw", build_plan=False)
    plan = _plan_with_workspace(kit, setup.og)
    if plan is None:
        pytest.skip("no engine config of this conv needs a workspace on this GPU")
    setup.plan = plan
    bufs = setup.buffers()
    pack = VariantPack(plan, bufs)
    assert pack.owns_workspace and isinstance(pack.workspace_buffer, memory.DeviceBuffer)
    assert pack.workspace_nbytes >= plan.workspace_size and pack.workspace != 0
    execute(kit.handle, plan, pack)
    setup.check(bufs, f"with a {plan.workspace_size}-byte workspace")
    wws = weakref.ref(pack.workspace_buffer)
    memory.synchronize()
    pack.close()
    gc.collect()
    assert wws() is None


def test_given_workspace_device_buffer(gpu_kit):
    kit = gpu_kit
    setup = ConvSetup(kit, layout="nchw", build_plan=False)
    plan = _plan_with_workspace(kit, setup.og)
    if plan is None:
        pytest.skip("no engine config of this conv needs a workspace on this GPU")
    setup.plan = plan
    with memory.DeviceBuffer(plan.workspace_size) as ws:
        bufs = setup.buffers()
        pack = VariantPack(plan, bufs, workspace=ws)
        assert not pack.owns_workspace and pack.workspace == ws.ptr
        execute(kit.handle, plan, pack)
        setup.check(bufs, "with a given DeviceBuffer workspace")
        memory.synchronize()
        pack.close()
    too_small = kit.CudaArrayBytes(plan.workspace_size - 1)  # an array of another library, read by the adapter
    with pytest.raises(ValueError, match="workspace holds"):
        VariantPack(plan, setup.buffers(), workspace=too_small)


def test_device_buffer(gpu_kit, conv):
    data = np.arange(256, dtype=np.uint8)
    with memory.DeviceBuffer(256) as buf:
        assert buf.ptr != 0 and buf.nbytes == 256 and int(buf) == buf.ptr
        buf.copy_from_host(data)
        assert buf.copy_to_host() == data.tobytes()
        buf.fill(7)
        assert buf.copy_to_host(16) == bytes([7] * 16)
        cai = buf.__cuda_array_interface__
        assert cai["shape"] == (256,) and cai["typestr"] == "|u1" and cai["data"] == (buf.ptr, False)
    assert buf.closed
    buf.close()  # idempotent

    # a DeviceBuffer as the output of a conv
    c = conv.case
    bufs = conv.buffers()
    y_spec = bufs[c.y].spec
    with memory.DeviceBuffer(y_spec.nbytes) as out:
        out.fill(0xFF)  # NaN
        bufs[c.y] = out
        pack = VariantPack(conv.plan, bufs)
        execute(gpu_kit.handle, conv.plan, pack)
        gpu_kit.check(gpu_kit.read(out, y_spec), _conv_ref(bufs[c.x], bufs[c.w]), TOL, "into a DeviceBuffer")
        pack.close()


def test_execute_on_a_side_stream(gpu_kit, conv):
    handle = gpu_kit.handle
    side = memory.device().create_stream()  # a cuda.core stream (torch's: test_torch_gpu.py)
    bufs = conv.buffers()
    pack = VariantPack(conv.plan, bufs)
    memory.synchronize()
    try:
        handle.stream = side
        assert handle.stream == int(side.handle)
        execute(handle, conv.plan, pack)
        side.sync()
    finally:
        handle.stream = 0
    conv.check(bufs, "on a side stream")


def test_two_plans_share_a_pack(gpu_kit, conv):
    """A pack checked for one plan runs another plan of the same graph (checked once, then cached)."""
    from cudnn_backend.typed import EngineHeuristics, ExecutionPlan

    bufs = conv.buffers()
    pack = VariantPack(conv.plan, bufs)
    others = []
    configs = EngineHeuristics(operation_graph=conv.og, mode=HeurMode.CUDNN_HEUR_MODE_A).finalize().get(
        AttributeName.CUDNN_ATTR_ENGINEHEUR_RESULTS, AttributeType.CUDNN_TYPE_BACKEND_DESCRIPTOR)
    for cfg in configs[:3]:  # heuristics' top choices: the best-tested engines
        try:
            others.append(ExecutionPlan(engine_config=cfg, handle=gpu_kit.handle).finalize())
        except cb.CudnnError:
            pass
    if not others:
        pytest.skip("no second plan builds for this conv")
    c = conv.case
    for i, other in enumerate(others + [conv.plan]):
        gpu_kit.randn_(bufs[c.x]), gpu_kit.poison_(bufs[c.y])
        execute(gpu_kit.handle, other, pack)
        conv.check(bufs, f"plan {i}")
        assert pack.plan is other


def test_closed_handle_is_refused(gpu_kit, conv):
    pack = VariantPack(conv.plan, conv.buffers())
    h = cb.Handle()
    h.close()
    with pytest.raises(ValueError, match="closed"):
        execute(h, conv.plan, pack)


# ---------------------------------------------------------------------------------------------
# cuDNN's native CUDA graph API
# ---------------------------------------------------------------------------------------------
class CbrSetup:
    """fp16 NHWC conv + bias + ReLU with an engine that supports the native CUDA graph API."""

    def __init__(self, kit):
        self.kit = kit
        self.case = kit.conv_bias_relu_case(kit.PRECISIONS["fp16"].io, "nhwc")
        og = self.case.build(kit.handle)
        try:
            self.plan = kit.make_plan(og, kit.handle, require_behavior=("SUPPORTS_CUDA_GRAPH_NATIVE_API",))
        except kit.NoPlan as e:
            pytest.skip(f"no engine for conv+bias+ReLU supports the native CUDA graph API here: {e}")

    def buffers(self):
        return self.kit.buffers(self.case)

    def check(self, bufs, what):
        c = self.case
        return self.kit.check(bufs[c.y], _cbr_ref(bufs[c.x], bufs[c.w], bufs[c.bias]), TOL, what)


@pytest.fixture
def cbr(gpu_kit):
    return CbrSetup(gpu_kit)


def test_cuda_graph_populate_update_replay(gpu_kit, cbr):
    kit, c = gpu_kit, cbr.case
    first, second = cbr.buffers(), cbr.buffers()
    pack1 = VariantPack(cbr.plan, first)
    with CudaGraph(kit.handle, cbr.plan, pack1) as graph:
        graph.launch()
        cbr.check(first, "graph replay, first buffers")

        pack2 = VariantPack(cbr.plan, second)
        graph.update(pack2)
        kit.poison_(first[c.y]), kit.poison_(second[c.y])
        graph.launch()
        cbr.check(second, "graph replay after update(), second buffers")
        assert np.isnan(kit.read(first[c.y])).all(), "the updated graph still wrote the first pack's output"

        # replays read the buffers' current contents
        kit.randn_(second[c.x]), kit.poison_(second[c.y])
        graph.launch()
        cbr.check(second, "graph replay with new input values")
        assert graph.pack is pack2
    assert graph.closed


def test_cuda_graph_kernel_count_of_conv_bias_relu(gpu_kit, cbr, record_property, results_file):
    """How many kernels cuDNN records for conv + bias + ReLU: 1 means everything fused into one."""
    pack = VariantPack(cbr.plan, cbr.buffers())
    with CudaGraph(gpu_kit.handle, cbr.plan, pack) as graph:
        n = graph.kernel_count()
        types = dict(graph.node_types())
    num, beh = gpu_kit.plan_notes(cbr.plan)
    record_property("conv_bias_relu_kernel_count", n)
    record_property("conv_bias_relu_node_types", types)
    results_file(test="conv_bias_relu_kernel_count", kernel_count=n, node_types=types,
                 behavior_notes=sorted(beh), device=gpu_kit.device_name)
    print(f"\nconv+bias+ReLU: {n} kernel node(s) recorded; node types {types}")
    assert n >= 1


def test_populate_into_a_given_graph_and_child_graphs(gpu_kit, cbr):
    rt = memory.cudart()
    bufs = cbr.buffers()
    pack = VariantPack(cbr.plan, bufs)
    graph = memory.check(rt.cudaGraphCreate(0), "cudaGraphCreate")
    parent = memory.check(rt.cudaGraphCreate(0), "cudaGraphCreate")
    raw = memory.check(rt.cudaGraphCreate(0), "cudaGraphCreate")
    exec_ = None
    try:
        assert ex.populate_cuda_graph(gpu_kit.handle, cbr.plan, pack, graph) is graph
        n = ex.count_kernel_nodes(graph)
        assert n >= 1
        assert ex.populate_cuda_graph(gpu_kit.handle, cbr.plan, pack, int(raw)) == int(raw)  # a raw address
        assert ex.count_kernel_nodes(raw) == n
        memory.check(rt.cudaGraphAddChildGraphNode(parent, None, 0, graph), "cudaGraphAddChildGraphNode")
        assert ex.count_kernel_nodes(parent) == n  # counted through the child-graph node
        assert ex.graph_node_types(parent).get("cudaGraphNodeTypeKernel") == n
        exec_ = memory.check(rt.cudaGraphInstantiate(parent, 0), "cudaGraphInstantiate")
        memory.check(rt.cudaGraphLaunch(exec_, gpu_kit.handle.stream), "cudaGraphLaunch")
        cbr.check(bufs, "parent graph with cuDNN's graph as a child")
    finally:
        if exec_ is not None:
            rt.cudaGraphExecDestroy(exec_)
        for g in (graph, parent, raw):
            rt.cudaGraphDestroy(g)


def test_populate_with_an_engine_without_native_graph_support(gpu_kit):
    kit = gpu_kit
    case = kit.conv_bias_relu_case(kit.PRECISIONS["fp16"].io, "nhwc")
    og = case.build(kit.handle)
    try:
        plan = kit.make_plan(og, kit.handle, exclude_behavior=("SUPPORTS_CUDA_GRAPH_NATIVE_API",))
    except kit.NoPlan:
        pytest.skip("every engine here supports the native CUDA graph API")
    pack = VariantPack(plan, kit.buffers(case))
    with pytest.raises(ex.NativeCudaGraphNotSupportedError) as e:
        CudaGraph(kit.handle, plan, pack)
    assert "stream" in str(e.value) and "SUPPORTS_CUDA_GRAPH_NATIVE_API" in str(e.value)
    assert isinstance(e.value, cb.CudnnNotSupportedError)


# ---------------------------------------------------------------------------------------------
# a plan built offline (CPU-style, against the H200 profile) runs on the GPU
# ---------------------------------------------------------------------------------------------
def test_plan_built_against_the_h200_profile_runs_here(gpu_kit, results_file):
    kit = gpu_kit
    case = kit.conv_bias_relu_case(kit.PRECISIONS["fp16"].io, "nhwc")
    og = case.build(None)  # as on a machine without a GPU: no handle anywhere
    offline = kit.make_plan(og, None, device_profile=kit.PROFILE_JSON, exclude_behavior=("RUNTIME_COMPILATION",))
    text = offline.to_json()
    assert '"operationGraph"' in text and offline.handle is None
    device = kit.device_name
    try:
        plan = plan_from_json(text, handle=kit.handle, operation_graph=og)
        bufs = kit.buffers(case)
        pack = VariantPack(plan, bufs, operation_graph=og)
        execute(kit.handle, plan, pack)
        memory.synchronize()
    except cb.CudnnError as e:
        results_file(test="h200_profile_plan", device=device, error=str(e))
        if "H200" not in device:
            pytest.skip(f"the H200-profile plan does not load/run on {device}: {e}")
        raise
    kit.check(bufs[case.y], _cbr_ref(bufs[case.x], bufs[case.w], bufs[case.bias]), TOL,
              f"H200-profile plan on {device}")
    results_file(test="h200_profile_plan", device=device, ok=True)
