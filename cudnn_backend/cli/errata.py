"""The command line's errata: ``cudnn-backend errata check FILE`` (lint a file, and say what each rule matches on
this machine: the loaded cuDNN release, the GPU's or ``--device-profile``'s SM) and the ``--errata FILE`` option of
the commands that choose configs outside a search (bench, fusion, support; explore and tune take it from
``TuneOptions``). The parsers are ``cli.args``'s."""
from __future__ import annotations

import json

from rich.text import Text

from cudnn_backend.cli import render
from cudnn_backend.cli.args import UsageError
from cudnn_backend.core import device as _device
from cudnn_backend.runtime import errata as _errata
from cudnn_backend.runtime.profiles import DeviceProfile, as_deviceprop
from cudnn_backend.tune import findings, graphs

__all__ = ["errata_arg", "cmd_errata"]

def errata_arg(args):
    """The errata of --errata (None: $CUDNN_ERRATA_JSON_FILE); a file that is no valid errata file is a usage error
    naming the option (the environment variable's, an error naming the variable)."""
    value = getattr(args, "errata", None)
    try:
        return _errata.resolve(value, "argument --errata") if value is not None else _errata.resolve(None)
    except _errata.ErrataError as e:
        if value is not None:
            raise UsageError(str(e)) from None
        raise


def _target(args):
    """(Target, where the SM came from)."""
    if args.device_profile:
        try:
            profile = graphs.device_profile(args.device_profile).for_release()
            dp = as_deviceprop(profile)
        except (ValueError, TypeError, OSError) as e:
            raise UsageError(f"argument --device-profile: {e}") from None
        return _errata.target_of(None, dp), f"the device profile {args.device_profile}"
    if _device.gpu_available():
        return _errata.target_of(), "this GPU"
    profile = DeviceProfile.bundled("h200").for_release()
    return _errata.target_of(None, as_deviceprop(profile)), "the bundled h200 profile (no GPU here)"


def cmd_errata(args) -> int:
    path = args.file
    try:
        rules, errors, warnings = _errata.check_file(path)
    except _errata.ErrataError as e:
        if args.json:
            print(json.dumps({"file": path, "valid": False, "errors": [str(e)], "warnings": []}, indent=1))
        else:
            render.error_console.print(Text("invalid: ", style="bold red").append(str(e)))
        return 1
    target, where = _target(args)
    rows = []
    for r in rules:
        misses = r.scope_misses(target)
        rows.append({"rule": r.name, "denies": r.describe(), "applies_here": not misses, "not_here": misses,
                     "reason": r.reason, "found_by": r.found_by})
    crashed = [p for p in findings.pending(path) if not p["alive"]]
    if args.json:
        print(json.dumps({"file": path, "valid": not errors, "errors": errors, "warnings": warnings,
                          "target": dict(target.to_dict(), source=where), "rules": rows,
                          "crashes_not_recorded": len(crashed)}, indent=1))
        return 1 if errors else 0
    status = Text("invalid", style="bold red") if errors else Text("valid", style="bold green")
    render.console.print(Text(f"{path}: ").append(status).append(
        f": {len(rules)} rule(s) read" + (f", {len(errors)} problem(s) refuse the file: nothing of it is used"
                                          if errors else "; cudnn-frontend and PyTorch read it too")))
    sm = _errata.rule_sm_words(target.sm, "unknown")
    render.console.print(f"here: cuDNN {_errata.version_words(target.version)} loaded, SM {sm} "
                         f"({target.device or 'unknown GPU'}, from {where})")
    for e in errors:
        render.error_console.print(Text("error: ", style="bold red").append(e))
    for w in warnings:
        render.error_console.print(Text("warning: ", style="yellow").append(w))
    if rows:
        t = render.table(f"rules of {path}", caption="applies here: the release and SM match; whether a config is "
                         "denied then depends on its plan tag (operation, engine, knobs) and the graph's shapes, data "
                         "types and families")
        for col in ("rule", "denies", "here", "reason"):
            t.add_column(col, overflow="fold")
        for row in rows:
            here = Text("applies", style="bold") if row["applies_here"] else \
                Text("not here: " + "; ".join(row["not_here"]), style="dim")
            t.add_row(row["rule"], row["denies"], here, row["reason"] or "-")
        render.console.print(t)
    for p in crashed:
        render.error_console.print(Text("note: ", style="yellow").append(
            f"process {p['pid']} died with configs of {p.get('graph', '?')} in flight ({p['file']}): the next "
            f"`explore --errata-out {path}` records it"))
    return 1 if errors else 0
