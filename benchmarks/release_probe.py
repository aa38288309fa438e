"""Fused graphs across cuDNN releases: heuristics' configs per mode, the engines that finalize, cuDNN's reasons
when none does, live (a handle) and offline (each bundled profile, and one captured here now). One process per
release: run it with each release selected (tools/gpu_run.sh --releases ... "python3 benchmarks/release_probe.py").

    python3 benchmarks/release_probe.py [--out FILE.json]
"""
from __future__ import annotations

import argparse
import json
import sys

import cudnn_backend as cb
from cudnn_backend.runtime import engines, heuristics
from cudnn_backend.runtime.profiles import DeviceProfile, bundled_profiles


def conv_bias_add_relu(layout="nchw", data_type="float", n=1, c=3, h=64, w=64, k=3, r=1):
    g = cb.Graph(f"conv_bias_add_relu {data_type} {layout} {n}x{c}x{h}x{w} k{k} {r}x{r}", io_data_type=data_type)
    x = g.tensor([n, c, h, w], layout=layout, name="x")
    wt = g.tensor([k, c, r, r], layout=layout, name="w")
    conv = g.conv_fwd(x, wt, padding=r // 2)
    b = g.tensor([1, k, 1, 1], layout=layout, name="b")
    res = g.tensor(list(conv.shape), layout=layout, name="residual")
    g.relu(g.bias(g.bias(conv, b), res), output=True, name="y")
    return g


def bmm_pair(b=32, h=16, s=512, d=64, intermediate="float"):
    g = cb.Graph(f"bmm pair half {b}x{h}x{s}x{d} S {intermediate}", io_data_type="half")
    q = g.tensor([b * h, s, d], name="q")
    k = g.tensor([b * h, d, s], name="kt")
    v = g.tensor([b * h, s, d], name="v")
    scores = g.matmul(q, k, name="s", output_data_type=None if intermediate == "float" else intermediate)
    g.matmul(scores, v, output=True, name="o")
    return g


GRAPHS = [conv_bias_add_relu(), conv_bias_add_relu("nhwc"), conv_bias_add_relu(data_type="half"),
          conv_bias_add_relu(c=64, k=64, r=3), bmm_pair(), bmm_pair(intermediate="half")]


def probe(graph, handle=None, profile=None):
    row = {}
    try:
        og = graph.build(handle) if handle is not None else graph.build()
    except Exception as e:  # noqa: BLE001 - recorded
        return {"build": f"{type(e).__name__}: {e}"}
    for mode in ("A", "B", "FALLBACK"):
        try:
            configs = heuristics.get_configs(og, mode, device_profile=profile, raise_if_empty=False) if handle is None \
                else heuristics.get_configs(og, mode, raise_if_empty=False)
            row[mode] = len(configs)
            if configs and "first" not in row:
                row["first"] = str(configs[0])
        except Exception as e:  # noqa: BLE001
            row[mode] = f"{type(e).__name__}: {str(e)[:200]}"
    try:
        row["engine_count"] = engines.engine_count(og) if hasattr(engines, "engine_count") else None
    except Exception as e:  # noqa: BLE001
        row["engine_count"] = f"{type(e).__name__}"
    if not any(isinstance(row.get(m), int) and row[m] for m in ("A", "B", "FALLBACK")):
        try:
            row["why"] = heuristics.why_no_engine(og, profile)[:2000]
        except Exception as e:  # noqa: BLE001
            row["why"] = f"{type(e).__name__}: {e}"
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    out = {"cudnn": cb.get_version(), "graphs": {}}
    handle = cb.Handle()
    captured = DeviceProfile.capture(handle)
    out["captured"] = captured.to_dict()
    for g in GRAPHS:
        entry = {"live": probe(g, handle=handle), "captured": probe(g, profile=captured)}
        for name in bundled_profiles():
            try:
                entry[name] = probe(g, profile=DeviceProfile.bundled(name))
            except Exception as e:  # noqa: BLE001
                entry[name] = f"{type(e).__name__}: {e}"
        out["graphs"][g.name] = entry
        print(cb.get_version(), g.name, {k: {m: v.get(m) for m in ("A", "B", "FALLBACK")} if isinstance(v, dict) else v
                                         for k, v in entry.items()}, flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1, default=str)


if __name__ == "__main__":
    sys.exit(main())
