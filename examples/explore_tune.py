"""The main job on your own graph: explore every engine config, autotune to the fastest correct one, keep it in
the persistent plan cache, microbenchmark it, and see which kernels it launches.

Offline (no GPU) it explores for the bundled H100 profile: heuristics, engines, knobs and plans, no timings. On a
GPU it also times, checks, tunes, caches, benchmarks and reads the kernels.

    python examples/explore_tune.py
"""
import pathlib
import tempfile

import cudnn_backend as cb
from cudnn_backend.core.device import gpu_available


# [graph]
def my_block(n=8, c=64, hw=56, k=64):
    """Your graph, built with Graph methods: conv -> + bias -> + residual -> ReLU (a ResNet block's tail)."""
    g = cb.Graph("conv_bias_add_relu")
    x = g.tensor([n, c, hw, hw], layout="nhwc", name="x")
    w = g.tensor([k, c, 3, 3], layout="nhwc", name="w")
    bias = g.tensor([1, k, 1, 1], layout="nhwc", name="bias")
    residual = g.tensor([n, k, hw, hw], layout="nhwc", name="residual")
    summed = g.bias(g.bias(g.conv_fwd(x, w, padding=1), bias), residual)
    g.relu(summed, output=True, name="y")
    return g
# [/graph]


def offline():
    # [offline]
    ex = cb.explore(my_block(), device_profile="h100", engines=False)
    print(ex)                      # <Exploration 'conv_bias_add_relu' on NVIDIA H100 80GB HBM3: ... plans built>
    print(ex.table(limit=5))       # where each config came from, engine, knobs, status, workspace
    pick = ex.heuristics_pick      # heuristics A's first config
    print("heuristics pick:", pick.engine_index, pick.knobs)
    # [/offline]


def on_the_gpu(folder: pathlib.Path):
    # [tune]
    cache = cb.PlanCache(folder / "plans.sqlite")
    plan, ex = cb.autotune(my_block(), cache=cache, sweep=True)   # explore on this GPU, keep the fastest correct
    print(ex.table(limit=8))
    print(f"best {ex.best.time_us:.2f} us vs heuristics' pick {ex.heuristics_pick.time_us:.2f} us "
          f"(headroom {ex.headroom:.3f}x)")
    again, nothing = cb.autotune(my_block(), plan.handle, cache=cache)   # a cache hit: no search at all
    assert nothing is None and again.engine_index == plan.engine_index
    # [/tune]
    # [bench]
    report = cb.bench(plan, plan.handle, iterations=200, repeats=7)
    print(report.table())          # execute, bind + execute, CUDA-graph replay: host and GPU us per call
    fusion = cb.fusion_report(plan)
    print(fusion.table())          # the kernels one execute launches: names, grids, blocks
    # [/bench]


def main():
    offline()
    if not gpu_available():
        print("no GPU here: skipped autotune, the plan cache, bench and the fusion report (they run the plans)")
        return
    with tempfile.TemporaryDirectory() as d:
        on_the_gpu(pathlib.Path(d))


if __name__ == "__main__":
    main()
