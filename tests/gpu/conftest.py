"""Fixtures of the GPU tests (every test under tests/gpu needs a GPU: tests/conftest.py marks them ``gpu``).

``gpu_handle``: one cuDNN handle per session; ``gpu_kit``: the kit (``tests/gpu/kit.py``: plans, graph builders,
device tensors, random fills, numpy references) bound to it; ``results_file``: findings appended as JSON lines to
$OUT/gpu-findings.jsonl. Nothing here needs torch; tests whose point is torch interop import it themselves and skip
without it (tests/gpu/runtime/test_torch_gpu.py).
"""
import json
import os
import pathlib

import pytest

import cudnn_backend as cb

from tests.gpu.kit import GpuKit


@pytest.fixture(scope="session")
def gpu_handle():
    with cb.Handle() as h:
        yield h


@pytest.fixture(scope="session")
def gpu_kit(gpu_handle):
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
