"""The composite SDPA backward in other shapes and options: each config heuristics A and FALLBACK give, every checked
output's relative error against the fp64 reference (outputs poisoned first)."""
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
VARIANTS = [dict(b=2, h=4, s_q=256, s_kv=256, d=128), dict(b=1, h=2, s_q=128, s_kv=128, d=64, causal=True),
            dict(b=1, h=2, s_q=128, s_kv=256, d=64), dict(b=1, h=1, s_q=64, s_kv=64, d=32, dq_accumulator=False),
            dict(b=1, h=2, s_q=128, s_kv=128, d=64, dropout=0.1)]
for kw in VARIANTS:
    try:
        p = sdpa_composite_bwd(**kw, build=False)
        g = p.build(handle)
    except Exception as e:  # noqa: BLE001 - a probe: say and go on
        print(kw, "not built:", str(e).splitlines()[0][:160], flush=True)
        continue
    names = {t.uid: n for n, t in p.tensors.items() if hasattr(t, "uid")}
    bs = tin.make_buffer_sets(g, count=1, seed=5)[0]
    try:
        ref = evaluate(g, bs.host)
    except Exception as e:  # noqa: BLE001
        print(kw, "no reference:", str(e).splitlines()[0][:160], flush=True)
        bs.close()
        continue
    outs = sorted(u for u in bs.outputs if not bs.specs[u].tiled)
    seen = set()
    for mode in ("A", "FALLBACK"):
        for cfg in get_configs(g, mode, raise_if_empty=False):
            key = (cfg.engine_index, tuple(sorted((int(k), v) for k, v in cfg.knobs.items())))
            if key in seen:
                continue
            seen.add(key)
            try:
                plan = build_plan(cfg, handle)
            except Exception as e:  # noqa: BLE001
                print(kw, "engine", cfg.engine_index, "refused:", str(e).splitlines()[0][:100], flush=True)
                continue
            ws = memory.DeviceBuffer(max(int(plan.workspace_size), 1))
            bs.poison()
            memory.synchronize()
            pack = VariantPack(plan, bs.by_uid, ws)
            pack.execute(handle)
            memory.synchronize()
            errs = {names.get(u, u): relative_error(bs.read(u).reshape(-1), np.asarray(ref.outputs[u]).reshape(-1))
                    for u in outs}
            print(kw, mode, "engine", cfg.engine_index, dict(key[1]), " ".join(f"{k} {v:.1e}" for k, v in errs.items()),
                  flush=True)
            pack.close()
            ws.close()
            plan.close()
    bs.close()
