"""Graph construction on the CPU (no GPU: cuDNN finalizes graphs offline): C, the generic API and the Graph
builder, interleaved in one run (see graph_build_ratios.py, which this wraps for pytest / pytest-benchmark).

    pytest benchmarks/test_graph_build.py                 # the C-relative ratios; JSON in pytest's tmp dir
    GRAPH_BUILD_JSON=out.json pytest benchmarks/...       # ... written there
    GRAPH_BUILD_ENFORCE=1 pytest benchmarks/...           # fail when a target (generic 1.5x, Graph 2x C) is missed

The ratio test skips cleanly when no C compiler is found. The per-builder tests are plain pytest-benchmark
timings of one graph (they need the ``benchmark`` fixture of pytest-benchmark).
"""
import json
import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import graph_build_ratios as gbr  # noqa: E402

pytestmark = pytest.mark.cpu_benchmark


@pytest.fixture(scope="module")
def c_batch(tmp_path_factory):
    if gbr.c_compiler() is None:
        pytest.skip("no C compiler: the C baseline cannot be built")
    return gbr.load_c_batch(gbr.build_c_library(tmp_path_factory.mktemp("graph_build_c")))


def test_graph_build_ratios(c_batch, tmp_path):
    """C, generic and Graph interleaved, median of 7 batches each; results JSON written."""
    result = gbr.summarize(gbr.measure(c_batch))
    result["machine"] = gbr.machine_info()
    out = pathlib.Path(os.environ.get("GRAPH_BUILD_JSON") or tmp_path / "graph_build.json")
    out.write_text(json.dumps(result, indent=2) + "\n")
    print("\n" + gbr.table(result) + f"\n(results: {out})")
    med = result["median_us"]
    assert all(v > 0 for v in med.values())
    if os.environ.get("GRAPH_BUILD_ENFORCE") == "1":
        assert result["met"]["generic"], f"generic API {result['ratio_to_c']['generic']:.2f}x C (target <= 1.5x)"
        assert result["met"]["graph"], f"Graph builder {result['ratio_to_c']['graph']:.2f}x C (target <= 2x)"


def test_c_one_graph(benchmark, c_batch):
    benchmark(c_batch, 1)


def test_generic_one_graph(benchmark):
    g = benchmark(gbr.build_generic)
    assert g.finalized


def test_graph_builder_one_graph(benchmark):
    g = benchmark(gbr.build_graph)
    assert g.finalized
