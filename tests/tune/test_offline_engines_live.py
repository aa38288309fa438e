"""The engines that finalize offline against those that finalized on the GPU, per release measured there.

The reference is the live support matrix the GPU run committed (``benchmarks/results/*/**/support_live_cudnn*.json.gz``:
the default catalogue probed on an H200 with a handle). Offline, the bundled h200 profile must finalize the same
engines for the graphs below: matmul chains and fused convolutions, the graphs whose engine sets the stand-in's
answers decide (cuDNN 9.28's TensorIR GEMM engine asks the driver for the current context while it finalizes). A
release without a committed live record is skipped. Single convolutions are left out: a few of their engines finalize
through cuDNN's static CUDA runtime, which starts only on a real driver (benchmarks/results/2026-11-28-cpu/
offline_vs_live2)."""
from __future__ import annotations

import gzip
import json
import pathlib
import re

import pytest

from cudnn_backend.core.versions import format_version, loaded_version
from cudnn_backend.tune.support import support_matrix

ROOT = pathlib.Path(__file__).resolve().parents[2]
# the graphs compared: every fp16 matmul chain, and the fused convolutions with a scale or a residual add
SELECTIONS = ({"family": "matmul", "data_type": "fp16"}, {"name": "+scale", "data_type": "fp16"},
              {"name": "+residual", "data_type": "fp16"})


def _live_record():
    release = loaded_version()
    # the newest run's record: runs compared by their numbers (run10 after run9)
    found = sorted(ROOT.glob(f"benchmarks/results/*/**/support_live_cudnn{release}.json.gz"),
                   key=lambda p: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(p))])
    if not found:
        pytest.skip(f"no live support matrix of cuDNN {format_version(release)} committed from a GPU run")
    data = json.loads(gzip.decompress(found[-1].read_bytes()))
    assert data["device"]["name"] == "NVIDIA H200", data["device"]
    return {(r["name"], r["data_type"], r["layout"]): r for r in data["results"]}


@pytest.mark.parametrize("selection", SELECTIONS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
def test_offline_finalizes_the_engines_the_gpu_did(selection):
    live = _live_record()
    offline = support_matrix(None, "h200", cache=False, workers=1, plans="none", **selection)
    assert len(offline) >= 4, selection
    differ = {}
    for r in offline:
        seen = live[(r.name, r.data_type, r.layout)]
        if sorted(r.engines_finalized) != sorted(seen["engines_finalized"]):
            differ[r.key] = {"live only": sorted(set(seen["engines_finalized"]) - set(r.engines_finalized)),
                             "offline only": sorted(set(r.engines_finalized) - set(seen["engines_finalized"]))}
    assert not differ, differ
