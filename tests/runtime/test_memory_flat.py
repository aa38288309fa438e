"""Resident memory stays flat over 2,000 offline pipelines: Graph -> heuristics -> execution plan -> JSON round trip
-> variant pack (fake device addresses: cuDNN does not read them before execute), each closed after use.

Measured in a child process (a clean interpreter: nothing else of the test session grows its heap), after a
warm-up of 300 pipelines (allocator pools, caches, cuDNN's lazily loaded kernels): the total growth over the
2,000 must stay under 2 MiB, and under 1 MiB for each 1,000.
"""
import json

import pytest

import cudnn_backend as cb

from tests.helpers.crash import run_python

WARM_UP = 300


@pytest.mark.parametrize("pipelines", [2000, pytest.param(20000, marks=pytest.mark.slow)])
def test_rss_is_flat_over_offline_pipelines(pipelines):
    """2,000 pipelines in the default run; 20,000 with --run-slow (same bounds per 1,000)."""
    out = run_python(f"""
        import gc, json
        from cudnn_backend.graph import Graph
        from cudnn_backend.runtime.execution import VariantPack
        from cudnn_backend.runtime.heuristics import get_configs
        from cudnn_backend.runtime.plans import build_plan, plan_from_json
        from cudnn_backend.runtime.profiles import DeviceProfile

        profile = DeviceProfile.bundled()

        def rss_kib():
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])

        def pipeline(check=False):
            g = Graph("pipeline")
            x = g.tensor([2, 16, 8, 8], layout="nhwc", name="x")
            w = g.tensor([16, 16, 3, 3], layout="nhwc", name="w")
            y = g.conv_fwd(x, w, padding=1, output=True, name="y")
            og = g.build()
            config = get_configs(og, "A", profile)[0]
            plan = build_plan(config, device_profile=profile)
            text = plan.to_json()
            back = plan_from_json(text, device_profile=profile, operation_graph=og)
            workspace = 0x40000 if back.workspace_size else None
            pack = VariantPack(back, {{x: 0x10000, w: 0x20000, y: 0x30000}}, workspace=workspace)
            if check:
                assert (back.engine_index, back.knobs, back.workspace_size) == \\
                    (plan.engine_index, plan.knobs, plan.workspace_size)
                assert back.to_json() == text and set(pack.uids) == {{x.uid, w.uid, y.uid}}
            pack.close()
            back.close()
            plan.close()

        pipeline(check=True)
        for _ in range({WARM_UP}):
            pipeline()
        gc.collect()
        start = rss_kib()
        marks = []
        for i in range({pipelines}):
            pipeline(check=(i % 500 == 0))
            if (i + 1) % 500 == 0:
                gc.collect()
                marks.append(rss_kib() - start)
        print(json.dumps(marks))
        """, timeout=600 if pipelines <= 2000 else 3000)
    assert out.returncode == 0, out.describe()
    marks = json.loads(out.stdout.strip().splitlines()[-1])  # growth (KiB) after every 500 pipelines
    assert len(marks) == pipelines // 500
    assert marks[3] < 2048, f"resident memory grew by {marks[3]} KiB over 2,000 pipelines: {marks}"
    per_thousand = [marks[1]] + [marks[i + 2] - marks[i] for i in range(1, len(marks) - 2, 2)]
    assert max(per_thousand) < 1024, f"more than 1 MiB per 1,000 pipelines: {per_thousand} (marks {marks})"


def test_an_exploration_leaves_no_descriptor_to_the_cyclic_collector():
    # the refusals an exploration keeps held their tracebacks, whose frames held the engines and configs refused
    import gc

    from cudnn_backend.core._descriptor import Descriptor

    def live():
        return sum(1 for o in gc.get_objects() if isinstance(o, Descriptor))

    def conv():
        return cb.patterns.conv_fwd(n=2, c=16, h=8, w=8, k=16, r=3, s=3, padding=1, build=False)

    cb.explore(conv(), device_profile="h200")
    gc.collect()
    gc.disable()
    try:
        before = live()
        for _ in range(2):
            cb.explore(conv(), device_profile="h200")
        assert live() - before == 0
    finally:
        gc.enable()
