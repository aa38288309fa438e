"""The array matrix's result table (markdown) from the GPU tests' findings (tests/gpu/runtime/test_array_matrix_gpu.py
and test_fp8_gpu.py append JSON lines to $OUT/gpu-findings.jsonl).

    python benchmarks/array_matrix_table.py OUT/gpu-findings.jsonl [--info OUT/info.txt] [--out array_matrix.md]

One table per layout: a row per data type, a column per library; each cell gives the default-stream and the
own-stream result: ran (checked against the fp64 reference), refused (one line, listed below), lacks (the
library has no such array), no engine (cuDNN has no plan for the cell's graph), skipped (the library is not
importable: torch in the notorch stage, a library not installed), wrong (ran, failed the check).
"""
from __future__ import annotations

import argparse
import datetime
import json
import pathlib

MARK = {"ran": "ran", "refused": "refused", "lacks": "lacks", "no engine": "no engine", "skipped": "skipped",
        "wrong": "**WRONG**"}
LIBRARIES = ("torch", "cupy", "jax", "numba", "cuda.core", "numpy")
DTYPES = ("float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "int8", "uint8", "int32", "int64", "bool",
          "boolean")


def load(path):
    rows = []
    for line in pathlib.Path(path).read_text().splitlines():
        line = line.strip()
        if line:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows


def cell_text(found):
    if not found:
        return ""
    parts = []
    for stream in ("default", "own"):
        r = found.get(stream)
        if r is not None:
            parts.append(MARK.get(r["status"], r["status"]))
    return " / ".join(parts) if len(set(parts)) > 1 else (parts[0] if parts else "")


def markdown(rows, info_text=""):
    matrix = [r for r in rows if r.get("test") == "array_matrix"]
    fp8 = [r for r in rows if str(r.get("test", "")).startswith("fp8_")]
    lines = [f"# Arrays of every library in every cuDNN data type — {datetime.date.today().isoformat()}", ""]
    if info_text:
        lines += ["```", info_text.strip(), "```", ""]
    lines += ["Each cell: the default (legacy) stream / the library's own stream (one word when both agree). "
              "ran = bound, executed and checked against the fp64 reference; refused = one line (below); lacks = "
              "the library has no such array; no engine = cuDNN has no plan for the cell's graph (the array was "
              "still described); skipped = the library is not importable.", ""]
    by = {}
    for r in matrix:
        by.setdefault((r["layout"], r["dtype"], r["library"]), {})[r["stream"]] = r
    libraries = [lib for lib in LIBRARIES if any(k[2] == lib for k in by)] or list(LIBRARIES)
    for layout in ("nhwc", "nchw", "strided"):
        if not any(k[0] == layout for k in by):
            continue
        lines += [f"## {layout}", "", "| dtype | " + " | ".join(libraries) + " |",
                  "| --- | " + " | ".join("---" for _ in libraries) + " |"]
        for dtype in DTYPES:
            cells = [cell_text(by.get((layout, dtype, lib), {})) for lib in libraries]
            if any(cells):
                lines.append(f"| {dtype} | " + " | ".join(cells) + " |")
        lines.append("")
    counts = {}
    for r in matrix:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    lines += ["Cells: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), ""]
    notes = sorted({(r["status"], r["library"], r["detail"]) for r in matrix
                    if r["status"] in ("refused", "lacks", "skipped", "no engine", "wrong")})
    if notes:
        lines += ["### Why (each distinct line once)", ""]
        seen = set()
        for status, lib, detail in notes:
            key = (status, lib, detail[:160])
            if key not in seen:
                seen.add(key)
                lines.append(f"- {status}, {lib}: {detail}")
        lines.append("")
    if fp8:
        lines += ["## fp8 graphs over torch fp8 tensors", "", "| graph | dtype | status | y error (fp64 ref, y as fp8 "
                  "stores it) | amax | engine |", "| --- | --- | --- | ---: | ---: | ---: |"]
        for r in fp8:
            fmt = lambda v: "" if v is None else (f"{v:.2e}" if isinstance(v, float) else str(v))  # noqa: E731
            lines.append(f"| {r['test']} | {r.get('dtype', '')} | {r.get('status', 'ran')} | {fmt(r.get('y_err'))} | "
                         f"{fmt(r.get('amax'))} | {fmt(r.get('engine'))} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("findings")
    ap.add_argument("--info", help="python -m cudnn_backend info's output, to head the table")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    info = pathlib.Path(args.info).read_text() if args.info and pathlib.Path(args.info).exists() else ""
    text = markdown(load(args.findings), info)
    if args.out:
        pathlib.Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
