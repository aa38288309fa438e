"""Plans built ahead of time: in a child process with the no-device stand-in (as on a machine without a GPU),
against each bundled device profile for the loaded cuDNN, then loaded onto this GPU's handle and run, the output
checked against the fp64 reference on fresh random inputs (outputs poisoned first). The profile of this GPU must
give plans that load; another GPU's plans either load and run correctly, or are refused with a message naming
both GPUs and the members that differ. tools/gpu_run.sh --releases runs this on every release carried there."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.runtime import memory
from cudnn_backend.runtime.execution import VariantPack, execute
from cudnn_backend.runtime.plans import plan_from_json
from cudnn_backend.runtime.profiles import DeviceProfile, bundled_profiles
from cudnn_backend.tune import checking

from tests.helpers.env import ROOT

#: graph builders the child and this process both call (the same UIDs on both sides): precompiled engines (conv +
#: bias + ReLU) and runtime-compiled ones (matmul + ReLU, NVRTC)
BUILDERS = textwrap.dedent('''
    import cudnn_backend as cb

    def conv_bias_relu():
        g = cb.Graph("aot_conv_bias_relu")
        x = g.tensor([4, 16, 12, 12], layout="nhwc", name="x")
        w = g.tensor([32, 16, 3, 3], layout="nhwc", name="w")
        b = g.tensor([1, 32, 1, 1], layout="nhwc", name="b")
        y = g.relu(g.bias(g.conv_fwd(x, w, padding=1), b), output=True, name="y")
        return g, {"x": x, "w": w, "b": b}, y

    def matmul_relu():
        g = cb.Graph("aot_matmul_relu")
        a = g.tensor([2, 64, 128], name="a")
        b = g.tensor([2, 128, 64], name="b")
        y = g.relu(g.matmul(a, b), output=True, name="y")
        return g, {"a": a, "b": b}, y
''')
namespace: dict = {}
exec(BUILDERS, namespace)  # noqa: S102 - the builders above, shared verbatim with the child
GRAPHS = {"conv_bias_relu": namespace["conv_bias_relu"], "matmul_relu": namespace["matmul_relu"]}

CHILD = BUILDERS + textwrap.dedent('''
    import json, sys, warnings
    from cudnn_backend.core import device
    from cudnn_backend.runtime.heuristics import build_first_plan
    from cudnn_backend.runtime.profiles import DeviceProfile
    assert not device.gpu_available(), "the child must run as on a machine without a GPU"
    warnings.simplefilter("ignore")  # a DeviceProfileIdentityWarning is what the parent checks against
    out = {}
    for profile_name in sys.argv[1:]:
        profile = DeviceProfile.bundled(profile_name)
        for graph_name, build in (("conv_bias_relu", conv_bias_relu), ("matmul_relu", matmul_relu)):
            try:
                plan, _ = build_first_plan(build()[0], device_profile=profile)
                out[f"{profile_name} {graph_name}"] = {"plan": plan.to_json(), "origin": profile.origin,
                                                       "risk": profile.plan_risk(), "device": profile.device_name}
            except Exception as e:
                out[f"{profile_name} {graph_name}"] = {"error": f"{type(e).__name__}: {e}"}
    print(json.dumps(out))
''')


@pytest.fixture(scope="module")
def offline_plans():
    """{"<profile> <graph>": {"plan": JSON, "origin", "risk", "device"} or {"error"}}, built in a child process."""
    env = dict(os.environ, CUDNN_BACKEND_NODEVICE="1", PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    r = subprocess.run([sys.executable, "-c", CHILD, *bundled_profiles()], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("graph_name", sorted(GRAPHS))
@pytest.mark.parametrize("profile_name", bundled_profiles())
def test_offline_plans_load_and_run_here(gpu_kit, offline_plans, results_file, profile_name, graph_name):
    kit = gpu_kit
    built = offline_plans[f"{profile_name} {graph_name}"]
    assert "error" not in built, f"the {profile_name} profile built no plan for {graph_name}: {built.get('error')}"
    here = DeviceProfile.capture(kit.handle).device_name
    graph, inputs, y = GRAPHS[graph_name]()
    og = graph.build(kit.handle)
    record = dict(test="aot", cudnn=cb.get_version(), profile=profile_name, origin=built["origin"],
                  risk=built["risk"], graph=graph_name, device=here)
    try:
        plan = plan_from_json(built["plan"], handle=kit.handle, operation_graph=og)
    except cb.CudnnNotSupportedError as e:
        results_file(**record, outcome="refused", error=str(e))
        assert built["device"] != here, f"a plan built with the {profile_name} profile ({built['origin']}) is " \
                                        f"refused by this {here}: {e}"
        assert "ARCH_MISMATCH" in str(e) and f"built for {built['device']}" in str(e) and here in str(e), str(e)
        return
    bufs = {t: kit.alloc(t, "randn") for t in inputs.values()}
    bufs[y] = kit.alloc(y, "nan")
    pack = VariantPack(plan, bufs, operation_graph=og)
    execute(kit.handle, plan, pack)
    memory.synchronize()
    ref = cb.reference.evaluate(og, {t.uid: bufs[t].values for t in inputs.values()}, max_elements=1 << 30,
                                max_work=1 << 40)
    assert ref.method == "fp64 reference", ref.method
    err = kit.check(bufs[y], np.asarray(ref.outputs[y.uid]), checking.tolerance(y.data_type),
                    f"{profile_name} plan of {graph_name} on {here}")
    results_file(**record, outcome="ran", rel_error=err, engine=plan.engine_index)
    pack.close()
    plan.close()
