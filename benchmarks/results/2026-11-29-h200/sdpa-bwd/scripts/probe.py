"""Which output of the composite SDPA backward each engine config gets wrong, and whether zeroed memory changes it.

For each config heuristics A gives (with and without the F16x16 dQ accumulator): every checked output's relative
error against the fp64 reference, with the outputs poisoned (0xFF) or zeroed first and the workspace zeroed or
0xFF first; then a second run without refilling (does the engine accumulate into what it finds?)."""
import sys

import numpy as np

import cudnn_backend as cb
from cudnn_backend.patterns import sdpa_composite_bwd
from cudnn_backend.reference.evaluator import evaluate
from cudnn_backend.runtime import memory
from cudnn_backend.runtime.execution import VariantPack
from cudnn_backend.runtime.heuristics import get_configs
from cudnn_backend.runtime.plans import build_plan
from cudnn_backend.tune import inputs as tin
from cudnn_backend.tune.checking import relative_error

print("cuDNN", cb.get_version(), flush=True)
handle = cb.Handle()
shape = dict(b=1, h=2, s_q=128, s_kv=128, d=64)
if len(sys.argv) > 1:
    shape = dict(b=2, h=4, s_q=256, s_kv=256, d=128)
for acc in (True, False):
    p = sdpa_composite_bwd(**shape, dq_accumulator=acc, build=False)
    g = p.build(handle)
    names = {t.uid: n for n, t in p.tensors.items() if hasattr(t, "uid")}
    bs = tin.make_buffer_sets(g, count=1, seed=3)[0]
    ref = evaluate(g, bs.host)
    outs = sorted(u for u in bs.outputs if not bs.specs[u].tiled)
    print(f"\n== dq_accumulator={acc}; outputs", {u: names.get(u) for u in outs}, flush=True)
    for cfg in get_configs(g, "A"):
        try:
            plan = build_plan(cfg, handle)
        except Exception as e:  # noqa: BLE001 - a probe: say and go on
            print("  engine", cfg.engine_index, "refused:", str(e).splitlines()[0][:150])
            continue
        ws_size = max(int(plan.workspace_size), 1)
        for ws_byte in (0x00, 0xFF):
            for out_byte in (0xFF, 0x00):
                ws = memory.DeviceBuffer(ws_size)
                ws.fill(ws_byte)
                for u in bs.outputs:
                    memory.fill_bytes(bs.ptrs[u], out_byte, bs.specs[u].nbytes)
                memory.synchronize()
                pack = VariantPack(plan, bs.by_uid, ws)
                errs = []
                for run in (1, 2):
                    pack.execute(handle)
                    memory.synchronize()
                    e = {}
                    for u in outs:
                        got = bs.read(u).reshape(-1)
                        want = np.asarray(ref.outputs[u]).reshape(-1)
                        bad = ~np.isfinite(got)
                        e[names.get(u, u)] = (f"{relative_error(got, want):.2e}"
                                              + (f" nonfinite {bad.mean():.2f}" if bad.any() else "")
                                              + f" |got| {np.abs(got[~bad]).mean() if (~bad).any() else 0:.3g}"
                                              + f" |ref| {np.abs(want).mean():.3g}")
                    errs.append(e)
                print(f"  engine {cfg.engine_index} knobs {getattr(cfg, 'knobs', '')} ws={ws_byte:#04x} "
                      f"out={out_byte:#04x} workspace {plan.workspace_size}:", flush=True)
                for run, e in enumerate(errs, 1):
                    print(f"     run {run}: " + "; ".join(f"{k} {v}" for k, v in e.items()), flush=True)
                pack.close()
                ws.close()
        plan.close()
    bs.close()
