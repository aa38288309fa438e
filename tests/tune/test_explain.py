"""``why``: graphs as rebuildable data, the stages with cuDNN's reasons, and the minimization — the two known
refusals (fp32 strided dgrad fusion, GEN_STATS with too-small statistics), a supported graph, a raising builder.
Offline against the bundled H100 profile, with the real cuDNN."""
from __future__ import annotations

import pytest

import cudnn_backend as cb
from cudnn_backend.graph import shapes
from cudnn_backend.tune import catalogue as cat
from cudnn_backend.tune.explain import GraphDescription, diff_descriptions, variations, why
from cudnn_backend.typed import OperationGenStats
from cudnn_backend.typed.introspection import graph_fingerprint
from tests.helpers.env import ROOT

H100 = "h100"
DGRAD = f"{ROOT / 'examples' / 'support_matrix.py'}:strided_dgrad_fp32"  # fp32, stride 2, bias epilogue, NCHW
KNOWN = '''
import cudnn_backend as cb
from cudnn_backend.typed import OperationGenStats


def small_genstats():
    g = cb.Graph("small_genstats")
    x = g.tensor([4, 64, 16, 16], layout="nhwc", name="x")
    w = g.tensor([256, 64, 3, 3], layout="nhwc", name="w")
    y = g.conv_fwd(x, w, padding=1, output=True, name="y")
    s = g.tensor([1, 32, 1, 1], layout="nhwc", data_type="float", name="sum")
    sq = g.tensor([1, 32, 1, 1], layout="nhwc", data_type="float", name="sqsum")
    g.add(OperationGenStats(mode=cb.CUDNN_GENSTATS_SUM_SQSUM, math_prec=cb.CUDNN_DATA_FLOAT, xdesc=y, sumdesc=s,
                            sqsumdesc=sq))
    return g


def broken():
    raise ZeroDivisionError("the builder divides by zero")


def nothing():
    return None


def itself():
    return __file__ + ":itself"
'''


@pytest.fixture
def known(tmp_path):
    f = tmp_path / "known.py"
    f.write_text(KNOWN)
    return str(f)


# ---------------------------------------------------------------------------------------------
# graphs as data
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["conv_bias_relu", "conv_bias_add_relu", "bn_gen_stats", "matmul_bias_gelu",
                                  "layer_norm_fwd", "rms_norm_bwd", "batch_norm_fwd", "bn_finalize",
                                  "sdpa_composite_fwd", "sdpa_composite_bwd", "reduction", "pooling", "concat"])
def test_a_description_rebuilds_the_same_graph(name):
    pattern = cb.patterns.CATALOGUE[name](build=False)
    original = pattern.build()
    desc = GraphDescription.of(pattern)
    rebuilt = desc.rebuild()
    assert rebuilt is not pattern.graph and rebuilt.operations[0] is not pattern.graph.operations[0]
    assert graph_fingerprint(rebuilt.build()) == graph_fingerprint(original)
    assert {t.name for t in rebuilt.tensors.values()} == {t.name for t in pattern.graph.tensors.values()}
    assert diff_descriptions(desc, GraphDescription.of(rebuilt)) == []


def test_edits_change_every_occurrence_and_show_in_the_diff():
    g = cat.chain_graph("conv_fwd", ["bias", "relu"], data_type="fp16", layout="nhwc")
    desc = GraphDescription.of(g)
    conv_out = next(uid for uid, t in desc.tensors().items() if t.get("is_virtual"))
    changed = desc.edit_tensor(conv_out, data_type="CUDNN_DATA_HALF")
    assert [d for d in changed.tensors().values() if d["unique_id"] == conv_out][0]["data_type"] == "CUDNN_DATA_HALF"
    assert desc.tensors()[conv_out]["data_type"] == "CUDNN_DATA_FLOAT"  # the original is untouched
    assert diff_descriptions(desc, changed) == [f"~ tensor {desc.name_of(conv_out)}: data_type fp32 → fp16"]
    rebuilt = changed.rebuild()
    assert rebuilt.build().finalized
    assert rebuilt.tensors[conv_out].signature()[3] == cb.CUDNN_DATA_HALF


def test_variations_cover_every_kind_and_rebuild():
    g = cat.chain_graph("conv_dgrad", ["bias", "relu"], data_type="fp32", layout="nchw", stride=2)
    desc = GraphDescription.of(g)
    found = variations(desc)
    kinds = {v.kind for v in found}
    assert kinds == {"compute", "virtual", "data type", "layout", "convolution", "split", "drop"}
    assert [v.cost for v in found] == sorted(v.cost for v in found)
    for v in found:
        for part in v.parts:
            part.rebuild().build()  # every variation is a graph cuDNN finalizes
        assert v.diff(desc)
    stride = next(v for v in found if v.kind == "convolution")
    lines = stride.diff(desc)
    assert any("conv_desc.filter_strides [2, 2] → [1, 1]" in line for line in lines)
    assert any(line.startswith("~ tensor dy") and "dims [4, 64, 8, 8] → [4, 64, 16, 16]" in line for line in lines)
    split = next(v for v in found if v.kind == "split")
    assert len(split.parts) == 2 and "made real" in split.label


def test_alignment_variation():
    g = cb.Graph("aligned_8")
    x = g.tensor([2, 32, 8, 8], layout="nhwc", name="x", alignment=8)
    w = g.tensor([32, 32, 3, 3], layout="nhwc", name="w")
    g.conv_fwd(x, w, padding=1, output=True, name="y")
    desc = GraphDescription.of(g)
    v = next(v for v in variations(desc) if v.kind == "alignment")
    assert v.diff(desc) == ["~ tensor x (uid 1): alignment 8 → 16"] and v.cost == 1


# ---------------------------------------------------------------------------------------------
# the two known refusals
# ---------------------------------------------------------------------------------------------
def test_fp32_strided_dgrad_is_explained_and_minimized():
    ex = why(DGRAD, H100)
    assert not ex.supported and ex.stage == "heuristics"
    stages = {s: (verdict, lines) for s, verdict, lines in ex.stages()}
    verdict, lines = stages["heuristics"]
    assert verdict == "REFUSED" and any(line.startswith("mode A: 0 config(s)") for line in lines)
    text = "\n".join(lines)
    assert "fort_device::SM80 || receive_op_->target == fort_device::SM120" in text  # cuDNN's own words
    assert "getDataType() == CUDNN_DATA_FLOAT" in text and "is_strided_conv" in text
    assert stages["engines"][0] == "ok" and any("GENERIC_CONV_FUSION" in line for line in stages["engines"][1])
    m = ex.minimization
    assert m is not None and m["kind"] == "layout" and m["label"] == "every tensor → NHWC"
    assert any("(NCHW → NHWC)" in line for line in m["diff"]) and m["verified"].startswith("yes")
    assert ex.alternatives and ex.tried >= len(ex.alternatives) + 1
    text = ex.text()
    assert "NOT SUPPORTED (refused at heuristics)" in text and "every tensor → NHWC" in text
    assert ex.to_dict()["stages"][-1]["stage"] == "heuristics"


def test_genstats_with_too_small_statistics_is_refused_by_the_checks(known):
    ex = why(f"{known}:small_genstats", H100)
    assert ex.stage == "checks" and ex.minimization is None
    (stage, verdict, lines), = ex.stages()
    assert (stage, verdict) == ("checks", "REFUSED")
    assert "sumdesc (sum) has dims [1, 32, 1, 1] but must be [1, 256, 1, 1]" in lines[0]
    assert "write out of bounds" in lines[0]
    assert any("no minimization" in n for n in ex.notes)


def test_a_graph_level_check_is_minimized():
    g = cb.Graph("unread")
    x = g.tensor([2, 16, 8, 8], layout="nhwc", name="x")
    w = g.tensor([16, 16, 3, 3], layout="nhwc", name="w")
    y = g.conv_fwd(x, w, padding=1, output=True, name="y")
    g.relu(y, name="nobody_reads_me")
    ex = why(g, H100)
    assert ex.stage == "checks" and "nothing consumes it" in ex.result.reason
    assert ex.minimization is not None and ex.minimization["kind"] in ("virtual", "drop")


# ---------------------------------------------------------------------------------------------
# the rest
# ---------------------------------------------------------------------------------------------
def test_a_supported_graph_needs_no_change():
    ex = why("conv_bias_relu", H100, kwargs=dict(n=2, c=32, h=8, w=8, k=32))
    assert ex.supported and ex.minimization is None and ex.tried == 0
    names = [s for s, _, _ in ex.stages()]
    assert names == ["build, checks, finalize", "engines", "heuristics", "plan"]
    plan_lines = ex.stages()[-1][2]
    assert plan_lines and "built" in plan_lines[0]
    assert "SUPPORTED" in ex.text() and "first working config: engine" in ex.text()


def test_a_raising_builder(known):
    """A pattern refusing its values is the builder stage's answer; an error in the user's own function is that
    error (explore reports it so too), and one returning no graph is named, not taken for cuDNN's refusal."""
    ex = why("conv_bias_relu", H100, kwargs={"n": -1})
    assert ex.stage == "builder" and "n: -1 is below the minimum 1" in ex.result.reason
    (stage, verdict, lines), = ex.stages()
    assert stage == "builder" and any("ValueError" in line for line in lines)
    with pytest.raises(ZeroDivisionError, match="divides by zero"):
        why(f"{known}:broken", H100)
    with pytest.raises(TypeError, match=r"graph: .*:nothing returned NoneType; a graph builder returns a Graph"):
        why(f"{known}:nothing", H100)
    with pytest.raises(TypeError, match=r"graph: .*:itself returned a str \('.*:itself'\), not a graph"):
        why(f"{known}:itself", H100)


def test_no_minimization_when_asked_for_none():
    ex = why(DGRAD, H100, minimize=False)
    assert ex.stage == "heuristics" and ex.minimization is None and ex.tried == 0


def test_budget_stops_the_search():
    ex = why(DGRAD, H100, max_variations=1)
    assert ex.tried <= 1 and any("stopped after" in n or "no variation" in n for n in ex.notes)


def test_an_operation_graph_built_with_the_typed_api():
    g = cb.Graph("typed")
    a = g.tensor([1, 64, 32], name="a")
    b = g.tensor([1, 32, 64], name="b")
    g.matmul(a, b, output=True, name="c")
    og = cb.typed.OperationGraph(ops=list(g.operations))
    og.finalize()
    desc = GraphDescription.of(og)
    assert graph_fingerprint(desc.rebuild().build()) == graph_fingerprint(og)
    assert why(og, H100).supported


def test_description_refuses_what_is_no_graph():
    with pytest.raises(TypeError, match="expected a Graph"):
        GraphDescription.of(42)


def test_genstats_check_happens_in_every_api():
    g = cb.Graph("direct")
    x = g.tensor([4, 64, 8, 8], layout="nhwc", name="x")
    s = g.tensor([1, 32, 1, 1], layout="nhwc", data_type="float", name="sum")
    sq = g.tensor([1, 32, 1, 1], layout="nhwc", data_type="float", name="sqsum")
    with pytest.raises(cb.GraphError, match="must be \\[1, 64, 1, 1\\]"):
        g.add(OperationGenStats(mode=cb.CUDNN_GENSTATS_SUM_SQSUM, math_prec=cb.CUDNN_DATA_FLOAT, xdesc=x,
                                sumdesc=s, sqsumdesc=sq))
    assert shapes.per_channel_dims([4, 64, 8, 8]) == [1, 64, 1, 1]


@pytest.mark.parametrize("graph", [None, 3, b"conv_bias_relu", ["conv_bias_relu"]])
def test_why_of_no_graph_is_a_type_error_naming_graph(graph):
    with pytest.raises(TypeError, match=r"^graph: expected a Graph, a Pattern, .* not (NoneType|int|bytes|list)$"):
        why(graph, H100)


def test_why_of_a_descriptor_that_is_no_graph_or_an_empty_name_is_refused():
    t = cb.typed.Tensor(unique_id=1, dimensions=[1, 2], strides=[2, 1], data_type="CUDNN_DATA_HALF",
                        byte_alignment=16).finalize()
    with pytest.raises(TypeError, match=r"^graph: expected a finalized CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR"):
        why(t, H100)
    with pytest.raises(ValueError, match=r"^graph: an empty name"):
        why(" ", H100)


@pytest.mark.parametrize("call", ["why", "explore", "bench"])
def test_builder_arguments_with_a_graph_made_already_are_refused_not_ignored(call):
    pattern = cb.patterns.conv_bias_relu(n=1, c=8, h=8, w=8, k=8, build=False)
    run = {"why": lambda **kw: why(pattern, H100, **kw),
           "explore": lambda **kw: cb.explore(pattern, device_profile=H100, **kw),
           "bench": lambda **kw: cb.bench(pattern, **kw)}[call]  # (refused before it asks for a GPU)
    with pytest.raises(TypeError, match=r"^kwargs: a graph builder's arguments .*; a Pattern is a graph made already, "
                                        r"which takes none"):
        run(kwargs={"n": 2})
    if call == "bench":
        with pytest.raises(TypeError, match=r"^graph: expected a Graph, a Pattern, .* not NoneType$"):
            cb.bench(None)  # (a mistake of the call, said before the missing GPU)


def test_heuristics_refusing_the_graph_is_explained_not_raised():
    # cuDNN refuses the heuristics descriptor itself (a dimension past int32): a stage of the answer, with its words
    g = cb.Graph("huge_batch")
    x = g.tensor([99999999999, 64, 56, 56], layout="nhwc")
    w = g.tensor([32, 64, 3, 3], layout="nhwc")
    g.conv_fwd(x, w, padding=1, output=True)
    ex = why(g, minimize=False)
    assert ex.result.stage == "heuristics" and not ex.result.supported
    assert ex.result.reason.startswith("cuDNN refused the heuristics query (mode")
    assert "NOT_SUPPORTED" in ex.result.reason
