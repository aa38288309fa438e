"""Shape overrides on a GPU: one plan, executed on other shapes, its workspace asked per variant pack
(cudnnGetExecutionPlanWorkspaceSize). cuDNN >= 9.23; on an older release (the GPU machines' 9.19.0) the version gate
refuses before cuDNN sees anything, which is what is checked there."""
import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.errors import CudnnVersionError
from cudnn_backend.graph import Graph
from cudnn_backend.runtime.execution import VariantPack
from cudnn_backend.runtime.heuristics import get_configs
from cudnn_backend.runtime.plans import build_plan

HAS_OVERRIDES = cb.get_version() >= 92300


def _matmul(handle, b=1, m=256, k=128, n=64):
    g = Graph("matmul_overrides", io_data_type="half")
    a, bt = g.tensor([b, m, k], name="a"), g.tensor([b, k, n], name="b")
    c = g.matmul(a, bt, output=True, name="c")
    return g, a, bt, c


def test_one_plan_runs_other_shapes(gpu_kit, gpu_handle):
    kit = gpu_kit
    g, a, b, c = _matmul(gpu_handle)
    if not HAS_OVERRIDES:
        with pytest.raises(CudnnVersionError, match=r"needs cuDNN >= 9\.2[13] \(loaded: "):
            g.build(gpu_handle, override_shapes=True)
        return
    og = g.build(gpu_handle, override_shapes=True)
    plan = None
    for mode in ("FALLBACK", "A"):  # cudnn-frontend recommends FALLBACK for dynamic shapes
        for cfg in get_configs(og, mode, raise_if_empty=False):
            try:
                plan = build_plan(cfg, handle=gpu_handle)
                break
            except cb.CudnnError:
                continue
        if plan is not None:
            break
    assert plan is not None, "no engine config of the override-shape graph builds a plan"
    for batch, m, k, n in ((1, 256, 128, 64), (3, 512, 128, 64), (2, 64, 256, 32)):
        x = kit.alloc_dims([batch, m, k], cb.CUDNN_DATA_HALF, "randn")
        w = kit.alloc_dims([batch, k, n], cb.CUDNN_DATA_HALF, "randn")
        y = kit.alloc_dims([batch, m, n], cb.CUDNN_DATA_HALF, "nan")  # poisoned
        pack = VariantPack(plan, {a: x, b: w, c: y}, overrides={a: list(x.shape), b: list(w.shape),
                                                                c: list(y.shape)}, handle=gpu_handle)
        size = pack.query_workspace(gpu_handle)
        assert isinstance(size, int) and size >= 0 and pack.workspace_size == size
        if size:
            assert pack.workspace_nbytes is None or pack.workspace_nbytes >= size
        pack.execute(gpu_handle)
        err = kit.check(y, np.matmul(x.values, w.values), 1e-2, f"shape {(batch, m, k, n)}")
        assert err < 1e-2, f"shape {(batch, m, k, n)}: relative error {err}"
