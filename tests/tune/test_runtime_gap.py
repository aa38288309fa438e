"""What offline cannot see of cuDNN's statically linked CUDA runtime, and of the cluster layout cuDNN 9.28 assumes:
the labels ``cuda_runtime`` and ``offline_layout`` (``tune.offline_gaps``) in support, explore and their outputs.

The runtime starts only on a real driver. Offline the stand-in refuses its entry points and counts the requests; the
runtime asks once per process and never again, so the labels are measured in a fresh process (a subprocess here:
the test process has run cuDNN long before). The engines and modes are pinned per release measured (this file is in
tests/release_matrix.txt); on another release the labels must still be consistent with what finalized."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from cudnn_backend.core import device as _device
from cudnn_backend.core.versions import format_version, loaded_version
from cudnn_backend.tune import offline_gaps
from cudnn_backend.tune.results import Exploration
from cudnn_backend.tune.support import SupportMatrix, SupportResult

pytestmark = pytest.mark.skipif(_device.driver() != "stand-in", reason="the no-device stand-in's labels")

CONV = "conv_fwd [fp16 nhwc]"
MATMUL = "matmul [fp16 row]"
NORM = "layer_norm_bwd [fp16 row]"
FUSED = "conv_fwd+relu [fp16 nhwc]"
PLAIN = "batch_norm_fwd [fp16 nhwc]"
RUNTIME_ENGINES = [3, 4, 6, 58]  # conv_fwd's engines that finalize only through the runtime (9.10.2 to 9.28.1)
# the heuristics modes that consult the runtime, per release measured
RUNTIME_MODES = {
    91002: {CONV: ["A", "B"], MATMUL: ["A", "B", "FALLBACK"], NORM: ["A", "B", "FALLBACK"]},
    91900: {CONV: [], MATMUL: ["A", "B", "FALLBACK"], NORM: []},
    92801: {CONV: [], MATMUL: ["A", "B", "FALLBACK"], NORM: []},
}

FRESH = textwrap.dedent("""
    import json, sys
    from cudnn_backend.core import device
    from cudnn_backend.runtime import engines
    from cudnn_backend.tune import catalogue, explorer, support
    out = {"requests at start": device.runtime_requests()}
    entries = {e.key: e for e in catalogue.default_catalogue()}
    for key in sys.argv[1:]:
        e = entries[key]
        out[key] = support.probe_graph(e.builder, "h200", kwargs=e.kwargs, entry=e, modes=support.MODES).to_dict()
    out["requests after the probes"] = device.runtime_requests()  # each graph probed in a forked copy
    e = entries[sys.argv[1]]
    out["explore"] = explorer.explore(e.builder, device_profile="h200", kwargs=e.kwargs).to_dict()
    # in a process whose runtime already asked, whether a step needs it cannot be seen: said so, nothing recorded
    g, og, _, _ = support.materialize(e.builder, e.kwargs, None)
    engines.inspect_engine(og, 3, support.as_deviceprop(support.graphs.device_profile("h200"), None))
    out["requests after engine 3 here"] = device.runtime_requests()
    out["unobserved"] = support.probe_graph(e.builder, "h200", kwargs=e.kwargs, entry=e).to_dict()
    m = support.support_matrix(None, "h200", cache=False, workers=1, plans="none", name="conv_fwd", data_type="fp16",
                               layout="nhwc")
    out["unobserved matrix notes"] = m.notes
    out["unobserved matrix"] = len(m)
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def fresh():
    done = subprocess.run([sys.executable, "-c", FRESH, CONV, MATMUL, NORM, FUSED, PLAIN], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_stand_in_refuses_the_runtimes_entry_points_and_counts_each_request():
    code = textwrap.dedent("""
        import ctypes
        from cudnn_backend.core import device
        from cudnn_backend._bindings import _loader
        assert device.driver() == "stand-in"
        lib = _loader._driver_lib
        fn, status, table = ctypes.c_void_p(1), ctypes.c_int(0), ctypes.c_void_p(1)
        start = device.runtime_requests()
        print(start, lib.cuInit(0),
              lib.cuGetProcAddress_v2(b"cuInit", ctypes.byref(fn), 12000, 0, ctypes.byref(status)), fn.value,
              status.value, lib.cuGetProcAddress(b"cuInit", ctypes.byref(fn), 12000, 0),
              lib.cuGetExportTable(ctypes.byref(table), None), table.value, device.runtime_requests())
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    # no device (100), not found (500) with no function and status "symbol not found" (1), and four requests counted
    assert done.stdout.split() == ["0", "100", "500", "None", "1", "500", "500", "None", "4"]


def test_support_names_the_engines_that_need_the_cuda_runtime(fresh):
    assert fresh["requests at start"] == 0 and fresh["requests after the probes"] == 0
    r = fresh[CONV]
    assert r["status"] == "yes" and "cuda_runtime" in r["offline_gaps"]
    assert r["cuda_runtime"]["engines"] == RUNTIME_ENGINES
    assert not set(RUNTIME_ENGINES) & set(r["engines_finalized"])
    assert "engines 3, 4, 6, 58 need a live GPU to finalize: unknown offline" in r["caveat"]
    assert r["caveat"].startswith("heuristics' lists and the engines that finalize may differ on the GPU: cuDNN ")
    # heuristics that consult the runtime: labelled with the modes, on a supported graph a caveat only
    modes = RUNTIME_MODES.get(loaded_version())
    for key in (CONV, MATMUL, NORM):
        got = fresh[key]["cuda_runtime"].get("heuristics", [])
        if modes is not None:
            assert got == modes[key], (key, got)
        if got:
            said = f"heuristics {', '.join(got)} consulted it: their lists may differ on the GPU"
            assert said in fresh[key]["caveat"]
            assert fresh[key]["status"] in ("yes", "yes*")
    assert not fresh[PLAIN]["cuda_runtime"] and "cuda_runtime" not in fresh[PLAIN]["offline_gaps"]


def test_lists_chosen_against_the_offline_cluster_layout_get_a_caveat(fresh):
    # the persistent norm kernels on every release (9.19.0, 9.28.1: the GPU lists 8-17 configs, offline 1); the
    # runtime-compiled GEMM / convolution engines' configs where the release assumes a layout (from 9.28)
    assumes = loaded_version() >= offline_gaps.ASSUMES_LAYOUT_FROM
    norm = loaded_version() in (91900, 92801) or None  # measured there; 9.10.2's mode A lists FALLBACK's engines
    for key, labelled in ((NORM, norm), (FUSED, assumes), (MATMUL, assumes)):
        r = fresh[key]
        said = "offline_layout" in r["offline_gaps"]
        if labelled is not None:
            assert said == labelled, (key, r["offline_gaps"])
        assert ("against the layout it has offline instead" in r["caveat"]) == said
        assert r["status"] in ("yes", "yes*")  # a caveat, never a verdict
    assert "offline_layout" not in fresh[PLAIN]["offline_gaps"]  # no runtime-compiled GEMM config, no persistent norm


def test_explore_records_the_engines_that_need_the_cuda_runtime(fresh):
    ex = Exploration.from_dict(fresh["explore"])
    assert ex.cuda_runtime["engines"] == RUNTIME_ENGINES and "cuda_runtime" in ex.offline_gaps
    assert any("engines 3, 4, 6, 58 need a live GPU to finalize: unknown offline" in n for n in ex.notes)
    assert ex.chosen is not None and not ex.unknown_offline


def test_a_process_whose_runtime_already_asked_says_it_cannot_see(fresh):
    assert fresh["requests after engine 3 here"] > 0
    r = fresh["unobserved"]  # recorded on the result, said once by a matrix (a fact of the process, not the graph)
    assert r["cuda_runtime"] == {"observed": False} and "cuda_runtime" not in r["offline_gaps"]
    assert offline_gaps.RUNTIME_UNOBSERVED not in r["caveat"] and "need a live GPU" not in r["caveat"]
    n = fresh["unobserved matrix"]
    assert n >= 1 and f"{n} graph(s) probed here: {offline_gaps.RUNTIME_UNOBSERVED}" in fresh["unobserved matrix notes"]


def test_a_graph_refused_for_engines_that_need_the_runtime_is_unknown_offline():
    runtime = {"engines": [3, 58], "heuristics": []}
    caveat = offline_gaps.gap_caveat(["cuda_runtime"], "9.28.1", refused=True, runtime=runtime)
    assert caveat == ("the GPU may run this graph: cuDNN 9.28.1 lacks the CUDA runtime (it starts only on a real "
                      "driver) offline: engines 3, 58 need a live GPU to finalize: unknown offline; probe it on the "
                      "GPU")
    r = SupportResult("g", "conv_fwd", "fp16", "nhwc", stage="heuristics", offline_gaps=["cuda_runtime"],
                      cuda_runtime=runtime, caveat=caveat)
    assert r.unknown and r.verdict == r.status == "unknown offline"
    matrix = SupportMatrix([r], device={"name": "NVIDIA H200", "offline": True}, cudnn_version="9.28.1")
    assert matrix.rows()[0]["caveat"] == caveat and "engines 3, 58 need a live GPU" in matrix.table()
    assert matrix.to_dict()["results"][0]["cuda_runtime"] == runtime
    back = SupportResult.from_dict(r.to_dict())
    assert back.cuda_runtime == runtime and back.unknown
    # one engine, and heuristics alone
    assert "engine 3 needs a live GPU to finalize" in offline_gaps.describe_gaps(["cuda_runtime"], None,
                                                                                 {"engines": [3], "heuristics": []})
    assert offline_gaps.gap_caveat(["cuda_runtime"], refused=False, runtime={"engines": [], "heuristics": ["A"]}) == (
        "heuristics' lists may differ on the GPU: cuDNN lacks the CUDA runtime (it starts only on a real driver) "
        "offline: heuristics A consulted it: their lists may differ on the GPU")


def test_the_offline_layout_rule():
    gemm = {"A": [(4, {"KERNEL_CFG": 3}), (7, {"KERNEL_CFG": 21})], "FALLBACK": [(4, {"KERNEL_CFG": 0})]}
    plain = {"A": [(62, {"TILE_SIZE": 4, "TILE_CGA_M": 5})], "FALLBACK": [(1, {})]}
    norm_left_out = {"A": [(1, {})], "FALLBACK": [(1, {}), (0, {}), (5, {})]}
    norm_same = {"A": [(1, {})], "FALLBACK": [(1, {})]}
    rule = offline_gaps.layout_dependent
    assert rule("9.28.1", gemm, ["Matmul"]) and not rule("9.19.0", gemm, ["Matmul"]) and not rule(None, gemm, [])
    assert not rule(format_version(91002), gemm, ["Matmul"])
    assert not rule("9.28.1", plain, ["ConvolutionForward"])
    assert rule("9.28.1", norm_left_out, ["NormBackward"]) and rule("9.19.0", norm_left_out, ["NormForward"])
    assert not rule("9.28.1", norm_same, ["NormForward"])
    assert not rule("9.28.1", norm_left_out, ["ConvolutionForward"])  # left out, but no persistent norm kernel
