"""The README's Python example on a GPU, as written: its offline block, then its GPU block (cuda.core memory through
``cb.memory``, no torch). Then the output is poisoned, computed again by the README's own pack, and compared with
the fp64 reference on the README's inputs (regenerated from its seed)."""
import pathlib
import re

import numpy as np

import cudnn_backend as cb
from cudnn_backend.runtime import memory

README = pathlib.Path(__file__).resolve().parents[3] / "README.md"
TOL = 2e-2  # fp16 output of an fp32-accumulated 576-term dot product


def _blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def _logical(flat, dims):
    """An NHWC buffer's values as the logical [N, C, H, W] array."""
    n, c, h, w = dims
    return np.asarray(flat).reshape(n, h, w, c).transpose(0, 3, 1, 2)


def test_readme_example_runs_on_the_gpu_and_computes_its_graph(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CUDNN_BACKEND_PLAN_CACHE", str(tmp_path / "plans.sqlite"))  # autotune(cache=True)'s file
    offline, gpu = _blocks()[:2]
    ns = {}
    exec(compile(offline, "README.md (offline)", "exec"), ns)  # noqa: S102 - our own README
    exec(compile(gpu, "README.md (GPU)", "exec"), ns)  # noqa: S102
    handle, plan, pack, bufs = ns["handle"], ns["plan"], ns["pack"], ns["bufs"]
    x, w, b, y = ns["x"], ns["w"], ns["b"], ns["y"]
    assert ns["ex"].timed and ns["ex"].best is not None and ns["best_plan"] is not None
    inputs = {t: _logical(np.random.default_rng(0).standard_normal(np.prod(t.shape), np.float32)
                          .astype(np.float16), t.shape) for t in (x, w, b)}  # the README's inputs, its seed
    nbytes = 2 * int(np.prod(y.shape))
    memory.fill_bytes(bufs[y], 0xFF, nbytes)  # NaN: an output left unwritten fails the comparison
    cb.execute(handle, plan, pack)
    memory.synchronize()
    out = _logical(memory.copy_to_host(bufs[y], nbytes).view(np.float16), y.shape)
    ref = cb.evaluate_reference(ns["op_graph"], {t.uid: inputs[t] for t in (x, w, b)})
    got, want = ref.take(y.uid, out), ref.values(y.uid)
    assert np.isfinite(got).all()
    err = np.max(np.abs(got - want) / (1 + np.abs(want)))
    assert err < TOL, f"engine {plan.engine_index}: max relative error {err:.3g} against the fp64 reference"
