#!/usr/bin/env python3
"""Writes the support matrices the guide shows (``docs/support/<gpu>_cudnn<version>.json``): the default catalogue
probed offline against the bundled H100 and H200 profiles with every plan built (``plans="all"``: runtime-compiled
kernels compiled too), by the loaded cuDNN (the committed ones: 9.19.0).

    python tools/support_matrices.py [--check] [--plans all|precompiled] [--workers N]

The files hold what the probes found, without timings (so a rerun that finds the same writes the same bytes); a
file is rewritten only when its content changes; ``--check`` fails when one would be. Results are cached
(``$CUDNN_BACKEND_SUPPORT_CACHE`` or the user cache folder), so a second run takes seconds; a cold one, tens of
minutes on two cores (hundreds of NVRTC compilations).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cudnn_backend.core.versions import loaded_version  # noqa: E402
from cudnn_backend.tune.support import support_matrix  # noqa: E402

OUT = ROOT / "docs" / "support"
PROFILES = ("h100", "h200")
_VOLATILE = ("wall_seconds", "cached", "workers")
_VOLATILE_RESULT = ("seconds", "cached", "detail")
_BULK_RESULT = ("fingerprint", "ops", "kernel_error", "kernels")  # left out of the committed files (size)


def matrix_text(matrix) -> str:
    data = matrix.to_dict()
    for key in _VOLATILE:
        data.pop(key, None)
    for r in data["results"]:
        for key in _VOLATILE_RESULT + _BULK_RESULT:
            r.pop(key, None)
    return json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when a committed matrix is stale")
    parser.add_argument("--plans", choices=("all", "precompiled"), default="all")
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args(argv)
    version = loaded_version()
    stale = []
    for name in PROFILES:
        path = OUT / f"{name}_cudnn{version}.json"
        if args.check and not path.exists():
            print(f"{path.relative_to(ROOT)}: none committed for cuDNN {version}; nothing to check")
            continue
        matrix = support_matrix(None, name, plans=args.plans, workers=args.workers)
        text = matrix_text(matrix)
        old = path.read_text() if path.exists() else None
        if old == text:
            print(f"{path.relative_to(ROOT)}: up to date ({len(matrix)} graphs, {len(matrix.supported)} supported)")
            continue
        if args.check:
            stale.append(str(path.relative_to(ROOT)))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"{path.relative_to(ROOT)}: written ({len(matrix)} graphs, {len(matrix.supported)} supported, "
              f"{matrix.wall_seconds:.0f} s)")
    if stale:
        print("stale: " + ", ".join(stale) + " (run python tools/support_matrices.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
