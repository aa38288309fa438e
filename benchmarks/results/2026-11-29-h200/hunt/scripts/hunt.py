"""A hunt for configs cuDNN computes wrong: catalogue graphs (attention, norms, heads with a reduction or GEN_STATS
tail, three-operation chains, fp8 and int8 heads), every config heuristics A and FALLBACK give (at most
MAX_CONFIGS) run and checked against the fp64 reference (``strategy="exhaustive"``), within a time budget.

    python3 hunt.py [BUDGET_S]
    HUNT_ORDER=rest python3 hunt.py BUDGET_S EARLIER_OUTPUT...   # the graphs no earlier hunt explored

Prints one line per graph (the statuses) and one per config not ok (wrong result, execute failed, ...)."""
import collections
import os
import sys
import time

import cudnn_backend as cb
from cudnn_backend.tune import results
from cudnn_backend.tune.catalogue import default_catalogue

BUDGET_S = float(sys.argv[1]) if len(sys.argv) > 1 else 200.0
MAX_CONFIGS = 6


def priority(e):
    """The order graphs are explored in (None: left out); ``HUNT_ORDER=again`` puts first those every config of
    which the first hunt called wrong."""
    again = os.environ.get("HUNT_ORDER") == "again"
    if again and e.data_type in ("fp8_e4m3", "int8") and e.layout in ("nhwc", "row"):
        return -2
    if again and e.name.startswith("conv_wgrad") and ("+" in e.name or ">" in e.name) and \
            e.data_type in ("fp16", "bf16") and e.layout == "nhwc":
        return -1
    if e.family in ("sdpa", "sdpa_composite"):
        return 0
    if e.family in ("batch_norm", "layer_norm", "rms_norm"):
        return 1
    if ">" in e.name and e.data_type in ("fp16", "bf16") and e.layout in ("nhwc", "row"):
        return 2
    if e.name.count("+") == 3 and e.data_type == "fp16" and e.layout in ("nhwc", "row"):
        return 3
    if e.data_type in ("fp8_e4m3", "int8") and e.layout in ("nhwc", "row"):
        return 4
    return None


def the_rest(done_files):
    """``HUNT_ORDER=rest``: every catalogue graph no earlier hunt explored (``done_files``: their outputs, one
    ``key: ...`` line per graph), interleaved family by family, data type by data type, so that a budget spent
    early still saw each kind."""
    done = set()
    for f in done_files:
        for line in open(f):
            key, sep, rest = line.partition(": ")
            if sep and ("check=" in rest or "explore raised" in rest):
                done.add(key)
    groups = collections.defaultdict(list)
    for e in default_catalogue():
        if e.key not in done:
            groups[(e.family, e.data_type, e.layout)].append(e)
    order, queues = [], [groups[k] for k in sorted(groups)]
    while any(queues):
        order += [q.pop(0) for q in queues if q]
    return order


if os.environ.get("HUNT_ORDER") == "rest":
    entries = the_rest(sys.argv[2:])
else:
    entries = sorted((e for e in default_catalogue() if priority(e) is not None), key=priority)
print(f"cuDNN {cb.get_version()}: {len(entries)} graphs, budget {BUDGET_S:g} s", flush=True)
start, done, odd = time.monotonic(), 0, 0
for e in entries:
    if time.monotonic() - start > BUDGET_S:
        print(f"budget spent: {done} of {len(entries)} graphs explored", flush=True)
        break
    t0 = time.monotonic()
    try:
        ex = cb.explore(e.builder, kwargs=dict(e.kwargs), name=e.key, strategy="exhaustive", max_configs=MAX_CONFIGS,
                        modes=("A", "FALLBACK"), engines=False, fusion=False, progress=False)
    except Exception as err:  # noqa: BLE001 - a hunt: say and go on
        print(f"{e.key}: explore raised {type(err).__name__}: {str(err).splitlines()[0][:200]}", flush=True)
        done += 1
        continue
    done += 1
    counts = collections.Counter(r.status for r in ex.results)
    print(f"{e.key}: {dict(counts)} check={ex.check} ({time.monotonic() - t0:.1f} s)", flush=True)
    for r in ex.results:
        if r.status in (results.WRONG, results.EXECUTE_FAILED):
            odd += 1
            print(f"    {r.status}: engine {r.engine_index} knobs {r.knobs} rel_err {r.rel_error} {r.reason[:200]}",
                  flush=True)
print(f"done: {done} graphs in {time.monotonic() - start:.0f} s, {odd} configs not ok", flush=True)
