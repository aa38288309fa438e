"""Command line: ``python -m cudnn_backend info`` and ``python -m cudnn_backend explore``."""
from __future__ import annotations

import argparse
import json
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="cudnn-backend", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p_info = sub.add_parser("info", help="package and cuDNN versions, cuDNN's path, CUDA runtime, GPUs")
    p_info.add_argument("--json", action="store_true", help="print JSON")
    p_explore = sub.add_parser("explore", help="heuristics, every engine and knob, and (with a GPU) timings of "
                                               "every config for a built-in pattern")
    from cudnn_backend.explore import add_arguments

    add_arguments(p_explore)
    args = parser.parse_args(argv)
    if args.command == "info":
        from cudnn_backend.info import format_info, info

        d = info()
        print(json.dumps(d, indent=2) if args.json else format_info(d))
    elif args.command == "explore":
        from cudnn_backend.explore import main_explore

        return main_explore(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
