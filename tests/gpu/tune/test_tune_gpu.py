"""The main job on a GPU: explore times and checks every config (against the fp64 reference, or the majority
with the reason), autotune + the plan cache across processes, bench, and fusion reports with kernel names.
No torch anywhere (independent references in numpy, the fp64 reference evaluator); and
``test_the_main_job_without_torch`` runs the whole job (CLI included) where torch cannot be imported."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import cudnn_backend as cb
from cudnn_backend.tune import PlanCache, WorkerPool

from tests.gpu.kit import conv2d, relu
from tests.tune import three_ways


def test_explore_times_and_checks_every_config():
    ex = cb.explore("conv_bias_relu", sweep=True, sweep_budget_s=3.0)
    assert ex.timed and ex.device["source"] == "gpu"
    ok = [r for r in ex.results if r.status == "ok"]
    assert len(ok) >= 5
    assert all(r.time_us > 0 and r.correct and r.rel_error < 5e-3 for r in ok)
    assert ex.check == "fp64 reference" or ex.check.startswith("sampled fp64 reference (")
    assert all(r.checked_by == ex.check for r in ok)
    assert ex.best is not None and ex.best.time_us <= ex.heuristics_pick.time_us
    assert ex.headroom >= 1.0
    assert ex.best.kernels and all(isinstance(k, str) and k for k in ex.best.kernels)
    assert any("reference" in n for n in ex.notes)
    assert any(r.source == "sweep" for r in ex.results)
    assert ex.wall_seconds < 60


def test_final_round_picks_the_winner_head_to_head():
    ex = cb.explore("conv_fwd", kwargs=dict(n=1, c=64, h=28, w=28, k=64), engines=False, finalists=3, final_rounds=3)
    finalists = [r for r in ex.results if r.first_pass_us is not None]
    pick = ex.heuristics_pick
    # the 3 fastest, those timed within the racing margin of the 3rd (at most 2 more: Search.near's cap), and
    # heuristics' pick when it was not among them
    assert 3 <= len(finalists) <= 3 + 2 + 1, ex.table()
    assert pick.status != "ok" or pick.first_pass_us is not None  # the headroom compares like with like
    assert ex.best in finalists and ex.best.time_us == min(r.time_us for r in finalists)
    assert ex.results[:len(finalists)] == sorted(finalists, key=lambda r: r.time_us)
    assert all(r.time_us > 0 and r.min_us <= r.time_us <= r.max_us for r in finalists)
    assert any(n.startswith("final round") for n in ex.notes)
    plain = cb.explore("conv_fwd", kwargs=dict(n=1, c=64, h=28, w=28, k=64), engines=False, finalists=0)
    assert all(r.first_pass_us is None for r in plain.results)
    assert not any(n.startswith("final round") for n in plain.notes)


@pytest.mark.parametrize("how", ["generic", "typed_classes", "graph_builder"])
def test_explore_graphs_built_any_way_on_the_gpu(how):
    graph = getattr(three_ways, how)(n=4, c=32, h=16, w=16, k=32)
    ex = cb.explore(graph, engines=False, max_configs=12)
    ok = [r for r in ex.results if r.status == "ok"]
    assert ok, ex.table()
    # no pattern needed: the evaluator reads the graph itself, whatever API built it
    assert ex.check == "fp64 reference" and all(r.checked_by == "fp64 reference" for r in ok)
    assert all(r.correct and r.rel_error < 5e-3 for r in ok)


def test_explore_falls_back_to_the_majority_visibly(monkeypatch):
    """Where the evaluator cannot compute an operation, every result says majority and why."""
    from cudnn_backend.tune import checking

    line = "operation 0 (ConvolutionForward): refused for this test"
    monkeypatch.setattr(checking, "unsupported", lambda og: [line])
    ex = cb.explore("conv_fwd", kwargs=dict(n=4, c=32, h=16, w=16, k=32), engines=False, max_configs=8)
    ok = [r for r in ex.results if r.status == "ok"]
    assert ok and ex.check == f"majority (the fp64 reference cannot compute {line})"
    assert all(r.checked_by == ex.check and r.check_method == "majority" for r in ok)
    assert any(n.startswith("outputs (UID") and "majority" in n and line in n for n in ex.notes)
    assert "majority" in ex.table() and json.loads(ex.to_json())["check"] == ex.check


def test_leaky_relu_majority_and_reference(gpu_kit):
    """conv + bias + leaky ReLU (slope 0.01): every config that ran must honour the slope."""
    kit = gpu_kit
    g = cb.Graph("conv_bias_leaky_relu")
    x = g.tensor([4, 32, 16, 16], layout="nhwc", name="x")
    w = g.tensor([32, 32, 3, 3], layout="nhwc", name="w")
    b = g.tensor([1, 32, 1, 1], layout="nhwc", name="b")
    y = g.relu(g.bias(g.conv_fwd(x, w, padding=1), b), relu_lower_clip_slope=0.01, output=True, name="y")
    ex = cb.explore(g, engines=False)
    ok = [r for r in ex.results if r.status == "ok"]
    assert ok
    # against an fp64 leaky reference written out here (the slope by hand), on fresh inputs, through the best plan
    plan, _ = cb.autotune(g)
    xs, ws, bs, ys = kit.alloc(x, "randn"), kit.alloc(w, "randn"), kit.alloc(b, "randn"), kit.alloc(y, "nan")
    pack = cb.VariantPack(plan, {x: xs, w: ws, b: bs, y: ys})
    cb.execute(plan.handle, plan, pack)
    ref = relu(conv2d(xs.values, ws.values, padding=1) + bs.values, lower_clip_slope=0.01)
    err = kit.check(ys, ref, 5e-3, "conv + bias + leaky ReLU through the autotuned plan")
    assert err < 5e-3, err


def test_autotune_then_cache_hit_in_another_process(tmp_path):
    cache_path = tmp_path / "plans.sqlite"
    plan, ex = cb.autotune("conv_bias_relu", cache=cache_path, kwargs=dict(n=8, c=64, h=28, w=28, k=64))
    assert ex is not None and plan.engine_index == ex.best.engine_index
    entry = PlanCache(cache_path).entries()[0]
    assert entry.engine_index == plan.engine_index and entry.time_us == pytest.approx(ex.best.time_us)
    code = textwrap.dedent(f"""
        import json, time, numpy as np, cudnn_backend as cb
        from cudnn_backend.tune import PlanCache, inputs
        p = cb.patterns.conv_bias_relu(n=8, c=64, h=28, w=28, k=64, build=False)
        h = cb.Handle()
        og = p.build(h)
        cache = PlanCache({str(cache_path)!r})
        t0 = time.perf_counter(); plan = cache.get(og, handle=h); hit_ms = (time.perf_counter() - t0) * 1e3
        plan2, ex = cb.autotune(p, h, cache=cache)
        assert ex is None, "a hit explores nothing"
        bufs = inputs.make_buffer_sets(og, 1, seed=7)[0]  # fresh random inputs (std 0.5), the output poisoned
        pack = cb.VariantPack(plan, bufs.by_uid)
        cb.execute(h, plan, pack)
        out = bufs.read(p.y.uid)
        result = cb.reference.evaluate(og, bufs.host)  # fp64, from the graph: independent of cuDNN's engines
        ref = result.values(p.y.uid)
        err = float(np.linalg.norm(result.take(p.y.uid, out) - ref) / np.linalg.norm(ref))
        print(json.dumps({{"engine": plan.engine_index, "knobs": {{str(k): v for k, v in plan.knobs.items()}},
                           "err": err, "hit_ms": hit_ms, "check": result.method}}))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         cwd=os.getcwd())
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["engine"] == plan.engine_index
    assert got["knobs"] == {str(k): v for k, v in plan.knobs.items()}
    assert got["err"] < 5e-3


def test_bench_a_plan():
    p = cb.patterns.conv_fwd(n=1, c=8, h=8, w=8, k=8, build=False)
    h = cb.Handle()
    plan, _ = cb.build_first_plan(p.build(h), handle=h)
    report = cb.bench(plan, h, iterations=50, repeats=3, warmup=5)
    assert [c.name for c in report.cases] == ["execute", "bind + execute", "cuda graph replay"]
    for c in report.cases:
        assert 0 < c.host_us["min"] <= c.host_us["median"] <= c.host_us["max"]
        assert 0 < c.gpu_us["min"] <= c.gpu_us["median"] <= c.gpu_us["max"]
    assert json.loads(json.dumps(report.to_dict()))["engine_index"] == plan.engine_index


def test_fusion_report_names_the_single_kernel_of_conv_bias_relu():
    p = cb.patterns.conv_bias_relu(n=8, c=64, h=56, w=56, k=32, build=False)
    h = cb.Handle()
    plan, _ = cb.build_first_plan(p.build(h), handle=h)
    report = cb.fusion_report(plan, h)
    assert report.fused and report.kernel_count == 1, report.table()
    k = report.kernels[0]
    assert k.name and k.name != "<unnamed kernel>" and all(v >= 1 for v in k.grid + k.block)


def test_fusion_report_of_a_graph_not_fused_fully():
    """A grouped bf16 NCHW convolution: cuDNN launches several kernels (4 when measured on an H200)."""
    p = cb.patterns.conv_fwd(n=8, c=64, h=28, w=28, k=64, groups=4, layout="nchw",
                             data_type=cb.CUDNN_DATA_BFLOAT16, build=False)
    h = cb.Handle()
    plan, _ = cb.build_first_plan(p.build(h), handle=h)
    report = cb.fusion_report(plan, h)
    assert report.kernel_count > 1, report.table()
    assert len({k.name for k in report.kernels}) >= 1 and not report.fused


def test_processes_sweep_on_the_gpus_here(tmp_path):
    tasks = [cb.Task("conv_fwd", dict(n=4, c=32, h=16, w=16, k=32)), cb.Task("conv_fwd", dict(n=4, c=5, k=8, groups=2))]
    result = cb.sweep(tasks, job="tune", executor="processes", gpus=1, cache=tmp_path / "c.sqlite", max_configs=8)
    assert result.results[0].ok and result.results[0].winner["time_us"] > 0
    assert not result.results[1].ok and "groups" in result.results[1].error
    assert len(PlanCache(tmp_path / "c.sqlite").entries()) == 1



def test_a_split_search_on_the_gpu(tmp_path):
    """One graph's search split over two workers (both on the first GPU: a one-GPU machine runs it too): the parts
    race their shares, one worker re-times their fastest head to head; the winner is checked, timed, stored."""
    task = cb.Task("conv_bias_relu", {}, "conv_bias_relu")
    with WorkerPool([os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]] * 2) as pool:
        result = cb.sweep([task], job="tune", executor="processes", pool=pool, split=True, sweep=True,
                          sweep_budget_s=1.0, cache=tmp_path / "c.sqlite")
    r = result.results[0]
    assert r.ok, r.error
    assert result.split == {"conv_bias_relu": 2} and [p["unit"] for p in r.pieces][-1] == "task 0 (merge of 2)"
    assert r.winner["time_us"] > 0 and r.cached == "stored"
    best = r.exploration.best
    assert best.correct and best.checked_by and best.first_pass_us is not None  # it won the merge's final round
    assert any("2 parts merged" in n for n in r.exploration.notes)
    assert any(n.startswith("final round:") for n in r.exploration.notes)


NO_TORCH = """
import json, sys
sys.modules["torch"] = None  # import torch fails from here on, as on a machine without it
import cudnn_backend as cb
from cudnn_backend.cli import main

ex = cb.explore("conv_bias_relu", sweep=True, sweep_budget_s=2.0)
ok = [r for r in ex.results if r.status == "ok"]
plan, tuned = cb.autotune("conv_bias_relu", cache=sys.argv[1], max_configs=6)
hit, again = cb.autotune("conv_bias_relu", cache=sys.argv[1])
report = cb.bench(plan, iterations=20, repeats=3, warmup=3)
fusion = cb.fusion_report(plan)
cli = [main(["explore", "conv_bias_relu", "--sweep", "--quiet", "--max-configs", "6", "--json", sys.argv[2]]),
       main(["bench", "conv_bias_relu", "--iterations", "20", "--repeats", "2", "--warmup", "2",
             "--cache", sys.argv[1]]),
       main(["fusion", "conv_bias_relu", "--cache", sys.argv[1]]),
       main(["tune", "conv_bias_relu", "--quiet", "--cache", sys.argv[1]])]
print(json.dumps({"ok": len(ok), "timed": ex.timed, "checked": sorted({r.checked_by for r in ok}),
                  "tuned": tuned is not None, "hit": again is None, "bench": [c.name for c in report.cases],
                  "kernels": fusion.kernel_count, "cli": cli, "torch": sys.modules.get("torch") is not None}))
"""


def test_the_main_job_without_torch(tmp_path):
    """explore (timed, with the knob search), autotune and its cache, bench, fusion and the CLI's explore / bench /
    fusion / tune, in a process where torch cannot be imported."""
    out = subprocess.run([sys.executable, "-c", NO_TORCH, str(tmp_path / "plans.sqlite"), str(tmp_path / "ex.json")],
                         capture_output=True, text=True, timeout=600, cwd=os.getcwd())
    assert out.returncode == 0, out.stderr[-4000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["timed"] and got["ok"] >= 3 and got["tuned"] and got["hit"] and got["kernels"] >= 1, got
    assert got["checked"] and all(c.startswith(("fp64 reference", "sampled fp64 reference")) for c in got["checked"])
    assert got["bench"] == ["execute", "bind + execute", "cuda graph replay"] and got["cli"] == [0, 0, 0, 0], got
    assert not got["torch"]
    saved = json.loads((tmp_path / "ex.json").read_text())
    assert saved["timed"] and saved["check"] and all("checked_by" in r for r in saved["results"])


def test_sweep_workers_start_without_torch(tmp_path):
    """A processes sweep whose workers cannot import torch (a stand-in that raises on import, first on their
    path): every task tunes and is checked."""
    blocker = tmp_path / "notorch" / "torch"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ModuleNotFoundError('torch is blocked in this test', name='torch')\n")
    code = textwrap.dedent(f"""
        import json, cudnn_backend as cb
        tasks = [cb.Task("conv_fwd", dict(n=4, c=32, h=16, w=16, k=32)), cb.Task("conv_bias_relu", dict(n=2))]
        if __name__ == "__main__":
            result = cb.sweep(tasks, job="tune", executor="processes", gpus=1, cache={str(tmp_path / "c.sqlite")!r},
                              max_configs=6)
            print(json.dumps([[r.ok, r.error, r.exploration.check if r.exploration else ""] for r in result]))
    """)
    script = tmp_path / "sweep_no_torch.py"
    script.write_text(code)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "notorch"), os.getcwd(),
                                                      os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, cwd=os.getcwd(),
                         env=env)
    assert out.returncode == 0, out.stderr[-4000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert all(ok for ok, _, _ in got), got
    assert all(check.startswith(("fp64 reference", "sampled fp64 reference")) for _, _, check in got), got


def test_a_winner_stored_by_another_release_is_tried_after_an_upgrade(tmp_path, monkeypatch):
    """The cache's entry of another release (the same graph and GPU) is a miss on this one; the search tries that
    winner's engine and knobs, times it head to head with the finalists and says how it compares."""
    from cudnn_backend.tune import cache as cache_module

    cache_path = tmp_path / "plans.sqlite"
    kwargs = dict(n=8, c=64, h=28, w=28, k=64)
    loaded = cb.get_version()
    monkeypatch.setattr(cache_module, "get_version", lambda: loaded - 100)  # stored by "the previous release"
    first, ex = cb.autotune("conv_bias_relu", cache=cache_path, kwargs=kwargs)
    monkeypatch.undo()
    second, ex2 = cb.autotune("conv_bias_relu", cache=cache_path, kwargs=kwargs)
    assert ex2 is not None, "another release's entry must not be a hit"
    p = ex2.previous
    assert p is not None and p["engine_index"] == first.engine_index and p["status"] == "ok", p
    assert p["time_us"] > 0 and p["ratio_to_winner"] >= 1.0 and p["time_us_then"] == pytest.approx(ex.best.time_us)
    old = next(r for r in ex2.results if r.engine_index == first.engine_index and r.knobs == ex.best.knobs)
    assert old.correct and old.first_pass_us is not None  # checked, and re-timed head to head
    assert any(n.startswith(f"the cuDNN {p['cudnn_version']} winner") for n in ex2.notes), ex2.notes
    assert len(PlanCache(cache_path).entries()) == 2  # one per release
