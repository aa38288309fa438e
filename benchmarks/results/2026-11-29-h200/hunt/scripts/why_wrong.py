"""Why every config of some catalogue graphs was 'wrong' in the hunt: what cuDNN stores against the fp64 reference,
raw and as the output's data type would store it (rounded, saturated), for the first configs of heuristics A."""
import numpy as np

import cudnn_backend as cb
from cudnn_backend.reference.evaluator import evaluate
from cudnn_backend.runtime import memory
from cudnn_backend.runtime.execution import VariantPack
from cudnn_backend.runtime.heuristics import get_configs
from cudnn_backend.runtime.plans import build_plan
from cudnn_backend.tune import inputs as tin
from cudnn_backend.tune.catalogue import chain_graph, default_catalogue
from cudnn_backend.tune.checking import relative_error
from cudnn_backend.typed import arrays

KEYS = ["conv_fwd [int8 nhwc]", "conv_fwd+relu [int8 nhwc]", "conv_fwd+exp [fp8_e4m3 nhwc]",
        "conv_fwd>reduction [fp8_e4m3 nhwc]", "conv_fwd>genstats [fp8_e4m3 nhwc]",
        "conv_wgrad+scale+bias+relu [fp16 nhwc]", "conv_wgrad+bias+residual+relu [fp16 nhwc]",
        "conv_wgrad>genstats [fp16 nhwc]", "conv_wgrad+bias+relu [fp16 nhwc]"]


def stored(values, dt):
    """What a data type stores of fp64 values: floats rounded (fp8 saturated); integers rounded half to even and
    saturated."""
    v = np.asarray(values, dtype=np.float64)
    if arrays.is_float(dt):
        return arrays.decode(arrays.encode(v, dt), dt).astype(np.float64)
    info = np.iinfo(arrays.storage_dtype(dt))
    return np.clip(np.rint(v), info.min, info.max)


def wrapped(values, dt):
    return np.rint(np.asarray(values, dtype=np.float64)).astype(np.int64).astype(arrays.storage_dtype(dt)).astype(
        np.float64)


print("cuDNN", cb.get_version(), flush=True)
handle = cb.Handle()
cat = {e.key: e for e in default_catalogue()}
for key in KEYS:
    g = chain_graph(**cat[key].kwargs)
    og = g.build(handle)
    bs = tin.make_buffer_sets(og, count=1, seed=7)[0]
    ref = evaluate(og, bs.host)
    print(f"\n== {key}: inputs " + ", ".join(f"{bs.specs[u].name} [{np.min(v):.3g}, {np.max(v):.3g}]"
                                              for u, v in bs.host.items() if np.ndim(v)), flush=True)
    for cfg in get_configs(og, "A", raise_if_empty=False)[:3]:
        try:
            plan = build_plan(cfg, handle)
        except Exception as e:  # noqa: BLE001 - a probe: say and go on
            print("  engine", cfg.engine_index, "refused:", str(e).splitlines()[0][:120], flush=True)
            continue
        ws = memory.DeviceBuffer(max(int(plan.workspace_size), 1))
        bs.poison()
        memory.synchronize()
        pack = VariantPack(plan, bs.by_uid, ws)
        pack.execute(handle)
        memory.synchronize()
        print(f"  engine {cfg.engine_index} {dict((k.name.removeprefix('CUDNN_KNOB_TYPE_'), v) for k, v in cfg.knobs.items())}",
              flush=True)
        got_all = {}
        for u in sorted(bs.outputs):
            spec = bs.specs[u]
            dt = spec.data_type
            got = bs.read(u).astype(np.float64)
            got_all[u] = got
            want = np.asarray(ref.outputs[u], dtype=np.float64)
            nan = ~np.isfinite(got)
            line = (f"    {spec.name} {dt.name.removeprefix('CUDNN_DATA_')}: got [{np.nanmin(got) if (~nan).any() else 0:.4g},"
                    f" {np.nanmax(got) if (~nan).any() else 0:.4g}] nonfinite {nan.mean():.3f}; ref [{want.min():.4g}, "
                    f"{want.max():.4g}]; err raw {relative_error(got, want):.3g} stored {relative_error(got, stored(want, dt)):.3g}")
            if not arrays.is_float(dt):
                line += f" wrapped {relative_error(got, wrapped(want, dt)):.3g}"
            if nan.any():
                idx = np.argwhere(nan)
                line += f"; first nonfinite at {idx[0].tolist()}, last {idx[-1].tolist()}, count {len(idx)}"
                fin = ~nan
                line += f"; finite part err {relative_error(got[fin], want[fin]):.3g}"
            print(line, flush=True)
        # a tail reading a real output: from the output as stored, or from the values before they were stored?
        names = {bs.specs[u].name: u for u in bs.outputs}
        y = next((names[n] for n in ("y", "dw") if n in names), None)
        if y is not None and ("sum" in names or "genstats_sum" in names):
            s = names.get("sum", names.get("genstats_sum"))
            axes = tuple(i for i in range(got_all[y].ndim) if i != 1)  # per channel (dims[1])
            from_stored = got_all[y].sum(axis=axes, keepdims=True)
            print(f"    tail from the stored {bs.specs[y].name}: err {relative_error(got_all[s], from_stored):.3g}; from the "
                  f"fp64 one: {relative_error(got_all[s], np.asarray(ref.outputs[s]))}", flush=True)
        pack.close()
        ws.close()
        plan.close()
    bs.close()
