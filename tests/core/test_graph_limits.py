"""What cuDNN's graph finalize cannot take (core.graph_limits), refused before cuDNN sees it: through descriptors
(the Graph builder, the generic API) and through plan JSON; and a plan's norm nodes checked as their descriptors
are (statistics that fit, a phase that fits the finalize mode)."""
from __future__ import annotations

import copy
import json
import math
import textwrap

import pytest

import cudnn_backend as cb
from cudnn_backend import patterns
from cudnn_backend.core.graph_limits import (MAX_ENTRANCE_OPERATIONS, MAX_FINALIZE_COST, TILE_COUNT_WRAP, WIDEST_TILE,
                                             finalize_cost, graph_problem, graph_shape, tile_count_problem)
from cudnn_backend.core.json_checks import graph_parts
from cudnn_backend.errors import CudnnUnsafeCallError, JsonCheckError
from cudnn_backend.graph import Graph
from cudnn_backend.runtime.heuristics import build_first_plan
from cudnn_backend.runtime.plans import plan_from_json
from cudnn_backend.typed import OperationGraph
from cudnn_backend.typed.introspection import io_uids

from tests.helpers import json_corpus
from tests.helpers.crash import run_python
from tests.helpers.env import needs_sdpa_bwd, needs_sdpa_fwd


def _fan(n):  # one entrance, then n operations side by side
    return [({"x"}, {"y"})] + [({"y"}, {f"z{i}"}) for i in range(n)]


def _entrances(n):  # n operations, each reading a graph input
    return [({f"x{i}"}, {f"y{i}"}) for i in range(n)]


@pytest.mark.parametrize("operations,shape", [
    (_fan(20), (1, 20)),
    (_entrances(15), (15, 15)),
    ([({f"t{i}"}, {f"t{i + 1}"}) for i in range(60)], (1, 1)),  # a chain
    ([({"x"}, {"a"}), ({"a", "x"}, {"b"}), ({"b"}, {"c"}), ({"a"}, {"d"})], (1, 2)),  # depth: the longest chain
    ([({"a"}, {"b"}), ({"b"}, {"a"})], None),  # a cycle: cuDNN refuses it itself
])
def test_graph_shape(operations, shape):
    assert graph_shape(operations) == shape


def test_the_limit_follows_the_measured_growth():
    assert finalize_cost(MAX_ENTRANCE_OPERATIONS, MAX_ENTRANCE_OPERATIONS) == MAX_FINALIZE_COST
    assert graph_problem(_entrances(MAX_ENTRANCE_OPERATIONS)) is None
    assert "15 operations, of which 15 read no tensor another one writes" in graph_problem(_entrances(15))
    assert graph_problem(_fan(21)) is None  # 3 * 2**20: ~4 s offline
    assert "23 operations, of which 1 reads no tensor another one writes and 22 run side by side" in \
        graph_problem(_fan(22))
    assert graph_problem([({f"t{i}"}, {f"t{i + 1}"}) for i in range(200)]) is None


def _parallel_relus(n, fan_out):
    g = Graph("wide")
    x = g.tensor([1, 8, 4, 4])
    source = g.relu(x) if fan_out else x
    for _ in range(n):
        g.relu(source, output=True)
    return g


@pytest.mark.parametrize("n,fan_out,match", [
    (15, False, r"15 operations, of which 15 read no tensor another one writes"),
    (40, False, r"40 operations"),  # cuDNN aborts the process on 31 to 63
    (22, True, r"23 operations, of which 1 reads no tensor another one writes and 22 run side by side"),
    (63, True, r"64 operations"),  # std::bad_alloc in cuDNN
])
def test_graphs_cudnn_cannot_finalize_are_refused_before_it(n, fan_out, match):
    with pytest.raises(CudnnUnsafeCallError, match=r"^CUDNN_ATTR_OPERATIONGRAPH_OPS: " + match):
        _parallel_relus(n, fan_out).build()


def test_graphs_within_the_limit_finalize():
    _parallel_relus(8, False).build()  # 0.02 s
    _parallel_relus(14, True).build()  # 0.03 s


def test_the_generic_api_is_refused_alike():
    ops = [op for op in _parallel_relus(16, False).operations]
    graph = cb.Descriptor(cb.DescriptorType.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    graph.set(cb.AttributeName.CUDNN_ATTR_OPERATIONGRAPH_OPS, cb.AttributeType.CUDNN_TYPE_BACKEND_DESCRIPTOR, ops)
    with pytest.raises(CudnnUnsafeCallError, match="16 operations, of which 16 read no tensor"):
        graph.finalize()


@pytest.fixture(scope="module")
def conv_plan_json():
    p = patterns.conv_bias_relu(n=1, c=8, h=8, w=8, k=8, build=False)
    plan, _ = build_first_plan(p.build(), device_profile="h200")
    return json.loads(plan.to_json())


def test_a_plan_whose_graph_cudnn_cannot_finalize_is_refused(conv_plan_json):
    d = copy.deepcopy(conv_plan_json)
    graph = d["operationGraph"]
    relu, x = graph["nodes"][-1], graph["nodes"][0]["X"]
    y = next(t for t in graph["tensors"] if t["name"] == relu["Y"])
    for i in range(20):  # 20 more ReLUs of the conv's input: 21 entrances
        graph["tensors"].append(dict(copy.deepcopy(y), name=str(1000 + i)))
        graph["nodes"].append(dict(copy.deepcopy(relu), X=x, Y=str(1000 + i)))
    with pytest.raises(JsonCheckError, match=r"operationGraph\.nodes: 23 operations, of which 21 read no tensor"):
        plan_from_json(json.dumps(d), device_profile="h200")


def _norm_plan_json(**norm):
    g = Graph("norm")
    x = g.tensor([4, 32, 8, 8], layout="nhwc")
    s = g.tensor([1, 32, 1, 1], data_type="float", layout="nhwc")
    b = g.tensor([1, 32, 1, 1], data_type="float", layout="nhwc")
    g.batch_norm(x, s, b, **norm)
    plan, _ = build_first_plan(g.build(), device_profile="h200")
    return json.loads(plan.to_json())


@pytest.mark.parametrize("members, refused, harm", [
    (("Mean", "InvVariance"), "mean_desc", "write out of bounds"),
    (("Scale", "Bias"), "scale_desc", "read out of bounds"),
    (("Scale", "Bias", "Mean", "InvVariance"), "scale_desc", "read out of bounds")])
def test_a_plan_with_too_small_statistics_is_refused_as_its_descriptors_are(members, refused, harm):
    d = _norm_plan_json()
    node = d["operationGraph"]["nodes"][0]
    shrunk = {node[m] for m in members}
    for t in d["operationGraph"]["tensors"]:
        if t["name"] in shrunk:  # 16 channels for a 32-channel x
            assert t["dim"] == [1, 32, 1, 1]
            t["dim"], t["stride"] = [1, 16, 1, 1], [16, 1, 16, 16]
    with pytest.raises(JsonCheckError, match=r"operationGraph\.nodes\[0\]: CUDNN_BACKEND_OPERATION_NORM_FORWARD_"
                                             rf"DESCRIPTOR: {refused} \(tensor \d+\) has dims \[1, 16, 1, 1\] but must "
                                             rf"be \[1, 32, 1, 1\] .*{harm}"):
        plan_from_json(json.dumps(d), device_profile="h200")
    plan_from_json(json.dumps(_norm_plan_json()), device_profile="h200")  # untouched: loads


def test_a_norm_node_whose_phase_the_finalize_mode_does_not_run_is_refused_without_a_crash():
    # cuDNN segfaults loading a NORM_FWD_TRAIN plan over an inference node: in a child process
    code = textwrap.dedent("""
        import json
        import cudnn_backend as cb
        from cudnn_backend.errors import JsonCheckError
        g = cb.Graph(); x = g.tensor([4, 128, 1, 1])
        s = g.tensor([1, 128, 1, 1], data_type="float"); b = g.tensor([1, 128, 1, 1], data_type="float")
        g.layer_norm(x, s, b, output=True)
        plan, _ = cb.build_first_plan(g.build(), device_profile="h200")
        d = json.loads(plan.to_json())
        assert d["operationGraph"]["finalizeMode"] == "NORM_FWD_TRAIN"
        d["operationGraph"]["nodes"][0]["fmode"] = "CUDNN_NORM_FWD_INFERENCE"
        try:
            cb.plan_from_json(json.dumps(d), device_profile="h200")
        except JsonCheckError as e:
            print(e)
    """)
    r = run_python(code, timeout=120)
    assert r.returncode == 0 and "operationGraph.nodes[0].fmode: fmode CUDNN_NORM_FWD_INFERENCE does not fit " \
        "finalizeMode NORM_FWD_TRAIN" in r.stdout, r.describe()


def test_a_plan_is_loaded_with_its_own_graph_only(conv_plan_json):
    p = patterns.conv_bias_relu(n=1, c=8, h=8, w=8, k=8, build=False)
    og = p.build()
    plan, _ = build_first_plan(og, device_profile="h200")
    assert plan_from_json(plan.to_json(), device_profile="h200", operation_graph=og).operation_graph is og
    other = Graph("other")
    other.relu(other.tensor([1, 1, 1, 1]), output=True)
    with pytest.raises(ValueError, match=r"^operation_graph: not this plan's graph: its tensors have UIDs"):
        plan_from_json(plan.to_json(), device_profile="h200", operation_graph=other.build())
    wider = patterns.conv_bias_relu(n=1, c=8, h=8, w=16, k=8, build=False).build()  # same UIDs, other dims
    with pytest.raises(ValueError, match=r"^operation_graph: not this plan's graph: its tensor .* is .* in the plan"):
        plan_from_json(plan.to_json(), device_profile="h200", operation_graph=wider)


def _bias_then_relu(relu_first):
    g = Graph("conv_bias_relu")
    x, w = g.tensor([1, 8, 8, 8], layout="nhwc", name="x"), g.tensor([8, 8, 3, 3], layout="nhwc", name="w")
    b = g.tensor([1, 8, 1, 1], layout="nhwc", name="b")  # UIDs 1, 2, 3
    c = g.conv_fwd(x, w, padding=1)  # UID 4
    if relu_first:  # the same six tensors (t: UID 5, y: UID 6) wired the other way
        g.bias(g.relu(c, name="t"), b, output=True, name="y")
    else:
        g.relu(g.bias(c, b, name="t"), output=True, name="y")
    return g.build()


def test_a_plan_is_not_loaded_with_the_same_tensors_wired_otherwise():
    plan, _ = build_first_plan(_bias_then_relu(False), device_profile="h200")
    assert plan_from_json(plan.to_json(), device_profile="h200", operation_graph=_bias_then_relu(False))
    with pytest.raises(ValueError, match=r"^operation_graph: not this plan's graph: its operations differ; the graph "
                                         r"has POINTWISE over UIDs 3, 5, 6; POINTWISE over UIDs 4, 5, the plan "
                                         r"POINTWISE over UIDs 3, 4, 5; POINTWISE over UIDs 5, 6$"):
        plan_from_json(plan.to_json(), device_profile="h200", operation_graph=_bias_then_relu(True))


def _edited(plan, node_index, **members):
    d = json.loads(plan.to_json())
    d["operationGraph"]["nodes"][node_index].update(members)
    return json.dumps(d)


def _conv_graph(mode="cross_correlation", padding=1):
    g = Graph("conv")
    x, w = g.tensor([1, 16, 8, 8], layout="nhwc"), g.tensor([16, 16, 3, 3], layout="nhwc")
    g.conv_fwd(x, w, padding=padding, mode=mode, output=True)
    return g.build()


def test_a_plan_is_not_loaded_with_the_same_operations_set_otherwise():
    # the same tensors wired alike, another setting: a ReLU scaled by 0.5, a dilation of 2, a convolution for a
    # cross-correlation; cuDNN's own JSON of the graph (through an empty kernel cache) is what the plan's is compared
    # with, whatever the operation
    graph = _bias_then_relu(False)
    plan, _ = build_first_plan(graph, device_profile="h200")
    relu = next(i for i, n in enumerate(json.loads(plan.to_json())["operationGraph"]["nodes"])
                if n.get("pointwiseMode") == "CUDNN_POINTWISE_RELU_FWD")
    with pytest.raises(ValueError, match=r"^operation_graph: not this plan's graph: its POINTWISE over UIDs 5, 6: "
                                         r"alpha1 is 1\.0, the plan's 0\.5$"):
        plan_from_json(_edited(plan, relu, alpha1=0.5), device_profile="h200", operation_graph=graph)
    conv = _conv_graph()
    conv_plan, _ = build_first_plan(conv, device_profile="h200")
    with pytest.raises(ValueError, match=r"^operation_graph: not this plan's graph: its CONVOLUTION_FORWARD over "
                                         r"UIDs 1, 2, 3: dilation is \[1, 1\], the plan's \[2, 2\]"):
        plan_from_json(_edited(conv_plan, 0, pad=[2, 2], dilation=[2, 2]), device_profile="h200", operation_graph=conv)
    other_mode, _ = build_first_plan(_conv_graph("convolution"), device_profile="h200")
    loaded = plan_from_json(other_mode.to_json(), device_profile="h200")
    with pytest.raises(ValueError, match=r"^operation_graph: not this plan's graph: its CONVOLUTION_FORWARD over UIDs "
                                         r"1, 2, 3: mode is 'CUDNN_CROSS_CORRELATION', the plan's 'CUDNN_CONVOLUTION'"):
        loaded.operation_graph = conv
    with pytest.raises(ValueError, match=r"^operation_graph: not this plan's graph: .*mode is"):
        cb.VariantPack(loaded, {1: 0x10000, 2: 0x20000, 3: 0x30000}, operation_graph=conv, workspace=0x40000)
    # its own graph, built again (another object, the operations added in the same order): loaded
    assert plan_from_json(conv_plan.to_json(), device_profile="h200", operation_graph=_conv_graph()).operation_graph


def test_every_norm_family_check_runs_on_a_plans_nodes():
    plan, _ = build_first_plan(patterns.bn_finalize(build=False).build(), device_profile="h200")
    d = json.loads(plan.to_json())
    node = next(n for n in d["operationGraph"]["nodes"] if n["operation"].endswith("BN_FINALIZE_STATISTICS_DESCRIPTOR"))
    eq_scale = next(t for t in d["operationGraph"]["tensors"] if t["name"] == node["bnEqScale"])
    eq_scale["dim"], eq_scale["stride"] = [1, 1, 1, 1], [1, 1, 1, 1]
    with pytest.raises(JsonCheckError, match=r"BN_FINALIZE_STATISTICS_DESCRIPTOR: eq_scale_desc \(tensor \d+\) has "
                                             r"dims \[1, 1, 1, 1\] but must be"):
        plan_from_json(json.dumps(d), device_profile="h200")


def test_a_plan_is_loaded_with_its_own_graph_whose_operations_have_sub_graphs():
    # the plan lists the tensors of an SDPA's softmax-sink sub-graph too, which no node names at its top level
    try:
        og = OperationGraph(ops=list(json_corpus.extra_graphs()["sdpa_fwd softmax sink"]())).finalize()
        plan, _ = build_first_plan(og, device_profile="h200")
    except (cb.CudnnBackendError, ValueError, TypeError) as e:  # (softmax came in 9.20)
        pytest.skip(f"cuDNN {cb.get_version()} builds no plan of an SDPA with a softmax sink offline: {e}")
    assert plan_from_json(plan.to_json(), device_profile="h200", operation_graph=og).operation_graph is og
    # the sub-operation's real tensors are the graph's: its statistics written, its sink read, both bound in a pack
    read, written = io_uids(og)
    assert {108, 109} <= read | written and 108 in written and 109 in read
    real = [t for t in json.loads(plan.to_json())["operationGraph"]["tensors"] if not t.get("isVirtual")]
    buffers = {int(t["name"]): 0x10000 * (i + 1) for i, t in enumerate(real) if not t.get("isByValue")}
    buffers.update({int(t["name"]): 0.125 for t in real if t.get("isByValue")})  # (a tensor's name is its UID)
    assert 108 in buffers and 109 in buffers
    pack = cb.VariantPack(plan, buffers, workspace=0x7000000 if plan.workspace_size else None)
    pack.close()
    with pytest.raises(ValueError, match=r"missing buffers for UID\(s\) 109"):
        cb.VariantPack(plan, {u: b for u, b in buffers.items() if u != 109}, workspace=0x7000000)


def _score_modifier_plan():
    """(graph, plan) of an SDPA with a score modifier whose bias (108) is a real tensor; skipped where the loaded
    cuDNN builds none offline."""
    try:
        og = OperationGraph(ops=list(json_corpus.extra_graphs()["sdpa_fwd score modifier"]())).finalize()
        plan, _ = build_first_plan(og, device_profile="h200")
    except (cb.CudnnBackendError, ValueError, TypeError) as e:
        pytest.skip(f"cuDNN {cb.get_version()} builds no plan of an SDPA with a score modifier offline: {e}")
    return og, plan


def test_a_plan_whose_node_keeps_its_sub_graphs_tensors_is_loaded_with_its_own_graph():
    # a score modifier's tensors (a real bias among them) are the graph's, and the plan keeps them in its SDPA node
    og, plan = _score_modifier_plan()
    listed = {int(t["name"]) for t in json.loads(plan.to_json())["operationGraph"]["tensors"]}
    assert 108 not in listed and 108 in set().union(*io_uids(og))  # (the modifier's bias)
    assert plan_from_json(plan.to_json(), device_profile="h200", operation_graph=og).operation_graph is og


def test_a_plan_loaded_from_its_json_alone_binds_the_tensors_its_nodes_keep():
    # the score modifier's bias (108) is listed only in the SDPA node's sub-graph: a pack must bind it all the same
    og, plan = _score_modifier_plan()
    loaded = plan_from_json(plan.to_json(), device_profile="h200")
    assert loaded.operation_graph is None
    read, written = io_uids(og)
    buffers = {u: 0x7000000 + 0x100000 * i for i, u in enumerate(sorted(read | written))}
    with cb.VariantPack(loaded, buffers, workspace=0x9000000):
        pass
    with pytest.raises(ValueError, match=r"missing buffers for UID\(s\) 108"):
        cb.VariantPack(loaded, {u: b for u, b in buffers.items() if u != 108}, workspace=0x9000000)


def test_graph_parts_walks_the_sub_graphs_nodes_keep():
    inner = {"tensors": [{"name": "3"}], "nodes": []}
    middle = {"tensors": [{"name": "2"}], "nodes": [{"operation": "B", "subgraph": inner}]}
    outer = {"tensors": [{"name": "1"}], "nodes": [{"operation": "A", "subgraph": middle, "other": {"x": 1}}, "junk"]}
    assert graph_parts(outer) == [outer, middle, inner]
    assert graph_parts({"nodes": "not a list"}) == [{"nodes": "not a list"}]


# ---------------------------------------------------------------------------------------------
# GEMM extents that wrap cuDNN's 32-bit tile counts (SIGFPE in engine config finalize, offline too)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, refused", [
    (TILE_COUNT_WRAP, True), (TILE_COUNT_WRAP - 64, True), (TILE_COUNT_WRAP - WIDEST_TILE + 1, True),
    (TILE_COUNT_WRAP - WIDEST_TILE, False), (TILE_COUNT_WRAP + 64, False), (16 * TILE_COUNT_WRAP, True),
    (16 * TILE_COUNT_WRAP - 320, True), (16 * TILE_COUNT_WRAP + 1, False), (3_200_000_000, False), (2 ** 31, False)])
def test_tile_count_problem_is_the_band_below_each_multiple_of_two_to_the_32(value, refused):
    problem = tile_count_problem([("M", value)])
    assert (problem is not None) == refused
    if refused:
        assert problem.startswith(f"M is {value}, within {WIDEST_TILE} of a multiple of 2^32")


@pytest.mark.parametrize("build, message", [
    (lambda: cb.patterns.conv_fwd(n=2 ** 26, c=8, h=8, w=8, k=8, build=False),
     r"CONVOLUTION_FORWARD_DESCRIPTOR: the positions of xdesc \[67108864, 8, 8, 8\] \(N times its spatial dims\) "
     r"is 4294967296"),
    (lambda: cb.patterns.conv_fwd(n=2 ** 30 - 1, c=8, h=8, w=8, k=8, build=False), r"is 68719476672, within 1024"),
    (lambda: cb.patterns.conv_bwd_data(n=2 ** 26, c=8, h=8, w=8, k=8, build=False),
     r"CONVOLUTION_BACKWARD_DATA_DESCRIPTOR: the positions of dxdesc"),
    (lambda: cb.patterns.conv_bwd_filter(n=2 ** 26, c=8, h=8, w=8, k=8, build=False),
     r"CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR: the positions of xdesc"),
])
def test_a_convolution_whose_gemm_wraps_the_tile_counts_is_refused_before_cudnn_divides_by_zero(build, message):
    with pytest.raises(cb.GraphError, match=message):
        build().graph.build()


def test_a_matmul_whose_gemm_wraps_the_tile_counts_is_refused_and_a_batch_that_splits_it_is_not():
    for dims, message in (([1, 2 ** 32, 8], r"M of adesc \[1, 4294967296, 8\] is 4294967296"),
                          ([1, 2 ** 32 - 64, 8], r"M of adesc .* is 4294967232")):
        g = Graph("mm")
        with pytest.raises(cb.GraphError, match=message):
            g.matmul(g.tensor(dims), g.tensor([1, 8, 8]), output=True)
            g.build()
    g = Graph("mm")  # 2^32 rows in all, 2^26 a batch: each GEMM's extents are far from 2^32
    g.matmul(g.tensor([64, 2 ** 26, 8]), g.tensor([64, 8, 8]), output=True)
    g.build()
    # just past the band: cuDNN builds every config (the SIGFPE needs the count to wrap to no tile)
    cb.patterns.conv_fwd(n=2 ** 26 + 1, c=8, h=8, w=8, k=8).op_graph


def test_a_plan_whose_convolution_was_edited_to_wrap_the_tile_counts_is_refused():
    plan, _ = build_first_plan(cb.patterns.conv_fwd(n=2, c=8, h=8, w=8, k=8).op_graph, device_profile="h200")
    d = json.loads(plan.to_json())
    for t in d["operationGraph"]["tensors"]:
        if t["dim"][0] == 2:  # x and y: a batch of 2^26
            t["dim"][0] = 2 ** 26
    with pytest.raises(JsonCheckError, match=r"operationGraph\.nodes\[0\]: CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_"
                                             r"DESCRIPTOR: the positions of xdesc .* is 4294967296"):
        plan_from_json(json.dumps(d), device_profile="h200")


@pytest.mark.parametrize("batch", [2 ** 31 + 2, 16, 1])
@pytest.mark.parametrize("which", [0, 1])
def test_a_plan_whose_virtual_tensor_was_edited_is_refused_by_its_nodes_shape_rules(which, batch):
    # the pointwise and reduction checks run on a plan's nodes as on descriptors: a virtual tensor's dims too
    plan, _ = build_first_plan(cb.patterns.conv_bias_relu(n=2, c=32, h=8, w=8, k=32).op_graph, device_profile="h200")
    d = json.loads(plan.to_json())
    virtual = [t for t in d["operationGraph"]["tensors"] if t.get("isVirtual")]
    assert len(virtual) == 2
    virtual[which]["dim"][0] = batch
    with pytest.raises(JsonCheckError, match=r"operationGraph\.nodes\[\d\]: CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: "
                                             r"ydesc \(tensor \d+\) has dims .* but must be .*the broadcast shape"):
        plan_from_json(json.dumps(d), device_profile="h200")


@pytest.mark.parametrize("x_dims, refused", [
    ([1, 8, 2 ** 32 + 1, 2], r"the output positions of one image of ydesc \[1, 8, 2147483648, 1\] is 2147483648"),
    ([1, 8, 2 ** 31 - 1, 4], r"the output positions of one image of ydesc \[1, 8, 1073741823, 2\] is 2147483646"),
    ([1, 8, 2 ** 17, 2 ** 17], r"the output positions of one image of ydesc \[1, 8, 65536, 65536\] is 4294967296"),
    ([1, 8, 2 ** 16, 2 ** 16], r"the output positions of one image of ydesc \[1, 8, 32768, 32768\] is 1073741824"),
    ([1, 2 ** 31, 2, 2], r"the channels of ydesc \[1, 2147483648, 1, 1\] is 2147483648"),
    ([2 ** 32, 8, 2, 2], None),  # batches are not counted
    ([1, 8, 2 ** 15, 2 ** 15], None),  # 2^30 input positions, 2^28 outputs
    ([1, 8, 2 ** 31 - 2, 2], None),  # 2^30 - 1 outputs
])
def test_a_pooling_whose_extents_wrap_cudnns_counts_is_refused_before_it_divides_by_zero(x_dims, refused):
    def build():
        g = Graph("pool")
        g.pool(g.tensor(x_dims, layout="nhwc"), window=2, stride=2)
        return g.build()

    if refused is None:
        build()
        return
    with pytest.raises(cb.GraphError, match=r"RESAMPLE_FWD_DESCRIPTOR: " + refused + r", 2\^30 or more: cuDNN's "
                                            r"resampling \(pooling\) engine configs count it in 32 bits and then "
                                            r"divide by zero"):
        build()


@needs_sdpa_fwd
@pytest.mark.parametrize("q_dims, refused", [
    ([1, 1, 2 ** 32, 64], r"dim 2 of qdesc \[1, 1, 4294967296, 64\] is 4294967296, within 1024"),
    ([1, 2 ** 32, 128, 64], r"dim 1 of qdesc \[1, 4294967296, 128, 64\] is 4294967296"),
    ([1, 1, 2 ** 32 + 64, 64], None),  # past the band
    ([1, 1, 2 ** 31, 64], None),
])
def test_an_attention_whose_extents_wrap_the_tile_counts_is_refused(q_dims, refused):
    def build():
        g = Graph("sdpa")
        g.sdpa_fwd(g.tensor(q_dims), g.tensor([1, 1, 128, 64]), g.tensor([1, 1, 128, 64]))
        return g.build()

    if refused is None:
        build()
        return
    with pytest.raises(cb.GraphError, match=r"SDPA_FWD_DESCRIPTOR: " + refused):
        build()


@needs_sdpa_bwd
def test_an_attention_backward_whose_extents_wrap_the_tile_counts_is_refused():
    g = Graph("sdpa_bwd")
    q, k, v = g.tensor([1, 1, 128, 64]), g.tensor([1, 1, 2 ** 32, 64]), g.tensor([1, 1, 2 ** 32, 64])
    with pytest.raises(cb.GraphError, match=r"SDPA_BWD_DESCRIPTOR: dim 2 of kdesc \[1, 1, 4294967296, 64\] is "
                                            r"4294967296, within 1024"):
        g.sdpa_bwd(q, k, v, g.tensor([1, 1, 128, 64]), g.tensor([1, 1, 128, 64]),
                   g.tensor([1, 1, 128, 1], data_type="float"))
        g.build()


def test_a_plan_whose_pooling_was_edited_to_wrap_the_counts_is_refused():
    g = Graph("pool")
    g.pool(g.tensor([1, 8, 4, 2], layout="nhwc"), window=2, stride=2)
    plan, _ = build_first_plan(g.build(), device_profile="h200")
    d = json.loads(plan.to_json())
    for t in d["operationGraph"]["tensors"]:
        t["dim"] = [1, 8, 2 ** 32 + 1, 2] if t["dim"][2] == 4 else [1, 8, 2 ** 31, 1]
        t["stride"] = [8 * t["dim"][2] * t["dim"][3], 1, 8 * t["dim"][3], 8]
    with pytest.raises(JsonCheckError, match=r"operationGraph\.nodes\[0\]: CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_"
                                             r"DESCRIPTOR: the output positions of one image of ydesc .* is 2147483648"):
        plan_from_json(json.dumps(d), device_profile="h200")


@needs_sdpa_fwd
def test_the_poolings_and_attentions_that_crashed_cudnn_are_refused_in_a_process_that_lives():
    code = textwrap.dedent("""
        import cudnn_backend as cb
        refused = 0
        for build in (lambda g: g.pool(g.tensor([1, 8, 2**32 + 1, 2], layout="nhwc")),
                      lambda g: g.pool(g.tensor([1, 2**32, 2, 2], layout="nhwc")),
                      lambda g: g.sdpa_fwd(g.tensor([1, 1, 2**32, 64]), g.tensor([1, 1, 128, 64]),
                                           g.tensor([1, 1, 128, 64]))):
            g = cb.Graph()
            try:
                build(g)
                cb.list_engines(g.build(), "h200")
            except cb.GraphError:
                refused += 1
        print("refused", refused)
    """)
    r = run_python(code, timeout=300)
    assert r.returncode == 0 and "refused 3" in r.stdout, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])


def test_a_chain_longer_than_cudnn_finalizes_in_seconds_is_refused():
    from cudnn_backend.core.graph_limits import MAX_OPERATIONS
    chain = [({f"t{i}"}, {f"t{i + 1}"}) for i in range(MAX_OPERATIONS + 1)]
    assert graph_problem(chain).startswith(f"{MAX_OPERATIONS + 1} operations, more than {MAX_OPERATIONS}: cuDNN's "
                                           "graph finalize takes time quadratic")
    assert graph_problem(chain[:MAX_OPERATIONS]) is None
    g = Graph("chain")
    y = g.tensor([1, 8, 2, 2])
    for i in range(MAX_OPERATIONS + 1):
        y = g.relu(y, output=i == MAX_OPERATIONS)
    with pytest.raises(CudnnUnsafeCallError, match=rf"CUDNN_ATTR_OPERATIONGRAPH_OPS: {MAX_OPERATIONS + 1} operations, "
                                                   rf"more than {MAX_OPERATIONS}"):
        g.build()
