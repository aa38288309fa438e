"""The package's known errata on the GPU, where the fault shows only there: engine 7 of the composite attention
backward (data/known_errata.json, ``sdpa_composite_bwd_eng7``). Inside the rule's window the engine must still
compute dK and dQ wrong (else the rule denies a good engine and can go); outside it, where offered, right. The
explorer, honouring the rule, runs no config it denies and finds none wrong."""
import numpy as np
import pytest

import cudnn_backend as cb
from cudnn_backend.patterns import sdpa_composite_bwd
from cudnn_backend.reference.evaluator import evaluate
from cudnn_backend.runtime import errata as E
from cudnn_backend.runtime import memory
from cudnn_backend.runtime.heuristics import get_configs
from cudnn_backend.runtime.plans import build_plan
from cudnn_backend.tune import results
from cudnn_backend.tune.checking import relative_error, tolerance
from cudnn_backend.tune.inputs import make_buffer_sets

RULE = "sdpa_composite_bwd_eng7"
SHAPE = dict(b=1, h=2, s_q=128, s_kv=128, d=64)


def _in_window():
    rule = E.known_errata().rule(RULE)
    end = rule.version_end if rule.version_end is not None and rule.version_end >= 0 else 1 << 30
    return rule.version_start <= cb.get_version() < end


@pytest.mark.parametrize("dq_accumulator", [True, False])
def test_engine_7_of_the_attention_backward_is_wrong_exactly_where_the_rule_denies_it(gpu_handle, dq_accumulator):
    p = sdpa_composite_bwd(**SHAPE, dq_accumulator=dq_accumulator, build=False)
    og = p.build(gpu_handle)
    configs = get_configs(og, "A")
    if not any(c.engine_index == 7 for c in configs):
        pytest.skip(f"cuDNN {cb.get_version()} offers no engine 7 for this graph")
    (bs,) = make_buffer_sets(og, 1, seed=11)
    try:
        ref = evaluate(og, bs.host)
        checked = [u for u in bs.outputs if not bs.specs[u].tiled]  # dQ, dK, dV (not the tiled dQ accumulator)
        tol = tolerance(bs.specs[checked[0]].data_type)
        errors = {}
        for c in configs:
            plan = build_plan(c, gpu_handle)
            ws = memory.DeviceBuffer(max(int(plan.workspace_size), 1))
            pack = cb.VariantPack(plan, bs.by_uid, ws)
            try:
                bs.poison()
                pack.execute(gpu_handle)
                memory.synchronize()
                errors[(c.engine_index, c.denied_by.name if c.denied_by else None)] = max(
                    relative_error(bs.read(u).reshape(-1), np.asarray(ref.outputs[u]).reshape(-1)) for u in checked)
            finally:
                pack.close()
                ws.close()
                plan.close()
    finally:
        bs.close()
    print(cb.get_version(), errors)
    for (engine, denied), err in errors.items():
        if engine == 7 and _in_window():
            assert denied == RULE and err > 0.5, errors  # still wrong: the rule is still needed
        else:
            assert denied is None and err < tol, errors


def test_the_explorer_runs_no_denied_config_and_finds_none_wrong():
    ex = cb.explore(sdpa_composite_bwd(**SHAPE, build=False), errata="")  # no file: the known errata still apply
    statuses = {r.status for r in ex.results}
    assert results.WRONG not in statuses, ex.table()
    denied = [r for r in ex.results if r.status == results.DENIED]
    assert all(r.denied_by == RULE and r.engine_index == 7 and r.time_us is None for r in denied), ex.table()
    assert bool(denied) == (_in_window() and any(r.engine_index == 7 for r in ex.results))
    assert ex.best is not None and ex.best.correct
