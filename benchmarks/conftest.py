"""Per-call benchmarks on a GPU, side by side with the same loop in C (benchmarks/c_harness.c),
torch.nn.functional.conv2d and cudnn-frontend, in one pytest-benchmark run.

The C harness is built by tools/gpu_run.sh and named by $C_HARNESS; it is run once per case at
session start and each benchmark records ``c_us`` and ``ratio_to_c`` in its extra_info, which
benchmarks/summarize.py turns into the results table.
"""
import json
import os
import statistics
import subprocess

import pytest

from cudnn_backend.core.device import gpu_available

from percall_support import C_ITERS, C_RUNS, CASES, ConvCase

def pytest_configure(config):
    config.addinivalue_line("markers", "cpu_benchmark: a benchmark that needs no GPU (graph construction)")


def pytest_collection_modifyitems(config, items):
    if not gpu_available():
        skip = pytest.mark.skip(reason="per-call benchmarks need a GPU")
        for item in items:
            if "cpu_benchmark" not in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def c_results():
    """{case: the C harness's JSON} (plain conv, and conv + bias + ReLU for graph construction)."""
    exe = os.environ.get("C_HARNESS")
    if not exe or not os.path.exists(exe):
        pytest.skip("C_HARNESS is not built (tools/gpu_run.sh bench builds it)")
    # C_RUNS runs of each case, interleaved, and the median of their medians per metric: one run of the C loop
    # drifted by up to 30% between sessions on the H200 (5.6 vs 7.4 us launch-bound), more than the Python side
    runs = {}
    for _ in range(C_RUNS):
        for name, c in CASES.items():
            for fused in (0, 1):
                args = [exe, *(str(c[k]) for k in ("n", "c", "h", "w", "k", "r", "s", "padding")), str(C_ITERS),
                        str(fused)]
                res = subprocess.run(args, capture_output=True, text=True, timeout=300)
                if res.returncode != 0:
                    raise RuntimeError(f"C harness failed: {res.stderr[-2000:]}")
                runs.setdefault((name, fused), []).append(json.loads(res.stdout.strip().splitlines()[-1]))
    out = {}
    for key, rs in runs.items():
        merged = dict(rs[-1])
        for metric in ("execute_us", "bind_execute_us", "build_graph_us"):
            merged[metric] = statistics.median(r[metric] for r in rs)
            merged[metric + "_runs"] = [r[metric] for r in rs]
        out[key] = merged
    return out


@pytest.fixture(scope="session")
def torch_mod():
    return pytest.importorskip("torch")


@pytest.fixture(scope="session")
def stream(torch_mod):
    """A non-blocking stream (as the C harness uses), current for torch too."""
    s = torch_mod.cuda.Stream()
    with torch_mod.cuda.stream(s):
        yield s


@pytest.fixture(scope="session")
def handle(torch_mod, stream):
    import cudnn_backend as cb

    h = cb.Handle()
    h.stream = stream
    yield h
    h.close()


@pytest.fixture(scope="session", params=list(CASES))
def conv_case(request, handle, torch_mod):
    return ConvCase(request.param, handle, torch_mod)
