"""Turn a pytest-benchmark JSON of benchmarks/test_percall.py into the results table (markdown).

    python benchmarks/summarize.py benchmarks.json [--out benchmarks/results/NAME.md] [--info info.txt]
"""
from __future__ import annotations

import argparse
import datetime
import json
import pathlib

# Targets, as ratios to the C loop in the same run.
TARGETS = {  # (the noise-proof comparison is benchmarks/percall_interleaved.py's; these are its targets too)
    "test_execute_prebuilt_pack": 1.03,
    "test_bind_and_execute": 1.10,
    "test_build_graph_generic": 1.3,
    "test_build_graph_typed": 1.6,  # the Graph builder, graph checks included
}
LABELS = {
    "test_execute_prebuilt_pack": "cudnn-backend execute, prebuilt variant pack",
    "test_bind_and_execute": "cudnn-backend bind new pointers + execute",
    "test_cuda_graph_replay": "CUDA graph replay of the same plan",
    "test_torch_conv2d": "torch.nn.functional.conv2d (channels_last fp16)",
    "test_cudnn_frontend_execute": "cudnn-frontend graph.execute",
    "test_build_graph_generic": "build + finalize conv+bias+ReLU graph (generic API, C names)",
    "test_build_graph_typed": "build + finalize conv+bias+ReLU graph (typed Graph builder, checked)",
    "test_build_graph_pattern": "build + finalize conv+bias+ReLU graph (patterns.conv_bias_relu, no target)",
}


def rows(data):
    out = []
    for b in data["benchmarks"]:
        base = b["name"].split("[")[0]
        extra = b.get("extra_info", {})
        st = b["stats"]
        target = TARGETS.get(base)
        ratio = extra.get("ratio_to_c")
        out.append({
            "case": extra.get("case", ""),
            "what": LABELS.get(base, base),
            "mean_us": st["mean"] * 1e6,
            "median_us": st["median"] * 1e6,
            "stddev_us": st["stddev"] * 1e6,
            "c_metric": extra.get("c_metric", ""),
            "c_us": extra.get("c_us"),
            "ratio": ratio,
            "target": target,
            "met": None if target is None or ratio is None else ratio <= target,
            "notes": ", ".join([f"{k}={v}" for k, v in extra.items()
                                if k in ("engine", "c_engine", "graph", "kernels", "frontend_version")] +
                               ([f"C runs={'/'.join(f'{x:.2f}' for x in extra['c_us_runs'])}"]
                                if extra.get("c_us_runs") else [])),
        })
    order = {k: i for i, k in enumerate(LABELS.values())}
    out.sort(key=lambda r: (r["case"], order.get(r["what"], 99)))
    return out


def markdown(data, info_text=""):
    machine = data.get("machine_info", {})
    lines = [f"# Per-call benchmarks — {datetime.date.today().isoformat()}", ""]
    if info_text:
        lines += ["```", info_text.strip(), "```", ""]
    lines += [f"CPU: {machine.get('cpu', {}).get('brand_raw', '?')}; Python {machine.get('python_version', '?')}", "",
              "Per call (µs): pytest-benchmark over 30 rounds of 1000 calls (graph construction: 300 rounds "
              "of 1); the ratio is our median over the C loop's (benchmarks/c_harness.c, 7 batches after 0.5 s "
              "of warm-up, run 3 times interleaved: the median of the 3 medians; notes give the 3), same machine, "
              "same run.", "",
              "| case | what | mean µs | median µs | C µs | ratio to C | target | met | notes |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in rows(data):
        fmt = lambda v, f="{:.2f}": "" if v is None else f.format(v)  # noqa: E731
        met = "" if r["met"] is None else ("yes" if r["met"] else "**no**")
        lines.append(f"| {r['case']} | {r['what']} | {fmt(r['mean_us'])} | {fmt(r['median_us'])} | {fmt(r['c_us'])} | "
                     f"{fmt(r['ratio'], '{:.3f}')} | {fmt(r['target'], '≤ {:.2f}')} | {met} | {r['notes']} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("benchmark_json")
    ap.add_argument("--out")
    ap.add_argument("--info", help="the output of python -m cudnn_backend info, to head the table")
    args = ap.parse_args(argv)
    data = json.loads(pathlib.Path(args.benchmark_json).read_text())
    info = pathlib.Path(args.info).read_text() if args.info else ""
    text = markdown(data, info)
    if args.out:
        pathlib.Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
