"""The package's known errata on the GPU, where the fault shows only there (data/known_errata.json): engine 7 of the
composite attention backward (``sdpa_composite_bwd_eng7``), engine 4 of a weight gradient followed by pointwise
operations (``conv_wgrad_pointwise_eng4``) and engine 2 of one followed by GEN_STATS (``conv_wgrad_genstats_eng2``).
Inside a rule's window its engine must still compute wrong (else the rule denies a good engine and can go); outside
it, and every other engine, right. The explorer, honouring the rules, runs no config they deny and finds none
wrong."""
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
from cudnn_backend.tune.catalogue import chain_graph
from cudnn_backend.tune.checking import relative_error, tolerance
from cudnn_backend.tune.inputs import make_buffer_sets

SHAPE = dict(b=1, h=2, s_q=128, s_kv=128, d=64)


def _in_window(rule_id):
    return E.known_errata().rule(rule_id).version_holds(cb.get_version())


def _errors(handle, og, configs):
    """{(engine, knobs, rule denying it or None): the largest relative error of the checked outputs}."""
    (bs,) = make_buffer_sets(og, 1, seed=11)
    try:
        ref = evaluate(og, bs.host)
        checked = [u for u in bs.outputs if not bs.specs[u].tiled]  # (not the attention's tiled dQ accumulator)
        errors = {}
        for c in configs:
            try:
                plan = build_plan(c, handle)
            except cb.CudnnError:  # (a config cuDNN refuses at build: nothing to check)
                continue
            ws = memory.DeviceBuffer(max(int(plan.workspace_size), 1))
            pack = cb.VariantPack(plan, bs.by_uid, ws)
            try:
                bs.poison()
                pack.execute(handle)
                memory.synchronize()
                key = (c.engine_index, tuple(sorted((int(k), v) for k, v in c.knobs.items())),
                       c.denied_by.name if c.denied_by else None)
                errors[key] = max(relative_error(bs.read(u).reshape(-1), np.asarray(ref.outputs[u]).reshape(-1))
                                  for u in checked)
            finally:
                pack.close()
                ws.close()
                plan.close()
        return errors, max(tolerance(bs.specs[u].data_type) for u in checked)
    finally:
        bs.close()


def _check(errors, tol, engine, rule_id):
    print(cb.get_version(), errors)
    assert errors
    for (e, _, denied), err in errors.items():
        if e == engine and _in_window(rule_id):
            assert denied == rule_id and err > 2 * tol, errors  # still wrong: the rule is still needed
        else:
            assert denied is None and err <= tol, errors


@pytest.mark.parametrize("dq_accumulator", [True, False])
def test_engine_7_of_the_attention_backward_is_wrong_exactly_where_the_rule_denies_it(gpu_handle, dq_accumulator):
    og = sdpa_composite_bwd(**SHAPE, dq_accumulator=dq_accumulator, build=False).build(gpu_handle)
    configs = get_configs(og, "A")
    if not any(c.engine_index == 7 for c in configs):
        pytest.skip(f"cuDNN {cb.get_version()} offers no engine 7 for this graph")
    _check(*_errors(gpu_handle, og, configs), 7, "sdpa_composite_bwd_eng7")


@pytest.mark.parametrize(("chain", "tail", "engine", "rule_id"), [
    (["bias", "relu"], None, 4, "conv_wgrad_pointwise_eng4"),
    (["scale", "bias", "relu"], None, 4, "conv_wgrad_pointwise_eng4"),
    ([], "genstats", 2, "conv_wgrad_genstats_eng2")])
def test_the_fused_weight_gradient_engines_are_wrong_where_the_rules_deny_them(gpu_handle, chain, tail, engine,
                                                                               rule_id):
    og = chain_graph(head="conv_wgrad", chain=chain, tail=tail, data_type="fp16", layout="nhwc").build(gpu_handle)
    configs = get_configs(og, "A", raise_if_empty=False) + get_configs(og, "FALLBACK", raise_if_empty=False)
    if not any(c.engine_index == engine for c in configs):
        pytest.skip(f"cuDNN {cb.get_version()} offers no engine {engine} for this graph")
    _check(*_errors(gpu_handle, og, configs), engine, rule_id)


def test_the_explorer_runs_no_denied_config_and_finds_none_wrong():
    ex = cb.explore(sdpa_composite_bwd(**SHAPE, build=False), errata="")  # no file: the known errata still apply
    assert results.WRONG not in {r.status for r in ex.results}, ex.table()
    denied = [r for r in ex.results if r.status == results.DENIED]
    assert all(r.denied_by == "sdpa_composite_bwd_eng7" and r.engine_index == 7 and r.time_us is None
               for r in denied), ex.table()
    assert bool(denied) == (_in_window("sdpa_composite_bwd_eng7") and any(r.engine_index == 7 for r in ex.results))
    assert ex.best is not None and ex.best.correct
