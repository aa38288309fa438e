"""Engine errata: deny lists of engine configs in cudnn-frontend's format (CUDNN_ERRATA_JSON_FILE), read
unchanged, scoped by GPU and runtime release, honoured where configs are chosen, and written from what explore finds.

Offline (the bundled H200 profile): cudnn-frontend's sample file read and matched on plan tags, a rule scoped to
one GPU, an exploration with a rule denying heuristics' first pick. On a GPU, ``explore --errata-out`` also records
the configs that gave wrong results.

    python examples/errata.py
"""
import json
import pathlib
import sys
import tempfile

import cudnn_backend as cb
from cudnn_backend.runtime import errata

from conv_bias_relu import graph_api

SAMPLE = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "errata" / \
    "frontend_block_using_errata.json"


# [read]
def read_frontend_sample():
    """cudnn-frontend's own sample, read as it is, and matched on plan tags as cudnn-frontend matches them."""
    rules = cb.Errata.load(SAMPLE)
    for rule in rules:
        print(f"{rule.name}: {rule.describe()}")
    version = cb.get_version()
    for tag in ("ConvBwdFilter_eng20_k2=1_k3=0", "ConvBwdData_eng1_k3=0_k2=4", "ConvBwdData_eng1_k2=4"):
        denied = rules.frontend_denies(tag, version)
        print(f"  {tag}: {'denied by ' + denied.name if denied else 'allowed'}")
    return rules
# [/read]


# [tags]
def plan_tags(profile):
    """The tag cudnn-frontend gives each config: the graph's operations, the engine, the knob choices."""
    g = graph_api()
    traits = errata.traits_of(g.op_graph)
    configs = cb.get_configs(g.op_graph, "A", profile, errata=False)
    return traits, [errata.plan_tag(traits.tag, c.engine_index, c.knobs) for c in configs[:3]]
# [/tags]


# [scoped]
def scoped_rule(first_config, folder):
    """A rule for heuristics' first config, for SM 8.6 only (an extension cudnn-frontend ignores): the
    H200 (SM 9.0) keeps the config; the same rule without the scope denies it."""
    operation = errata.traits_of(first_config.operation_graph).operation
    rule = {"rule_id": "eng-on-sm86", "operation": operation, "engine": first_config.engine_index,
            "knob": errata.knob_strings(first_config.knobs),
            "cudnn_backend": {"sm_start": 86, "sm_end": 87, "exact_knobs": True,
                              "reason": "nondeterministic on SM 8.6"}}
    path = pathlib.Path(folder) / "errata.json"
    path.write_text(json.dumps({"version": 1, "rules": [rule]}, indent=1))
    on_h200 = errata.deny(first_config, path)
    del rule["cudnn_backend"]["sm_start"], rule["cudnn_backend"]["sm_end"]
    path.write_text(json.dumps({"version": 1, "rules": [rule]}, indent=1))
    everywhere = errata.deny(first_config, path)
    return path, on_h200, everywhere
# [/scoped]


# [honoured]
def explore_with_errata(path):
    """explore (and tune, sweeps, build_first_plan, support, the plan cache) honour the file: the denied config
    is listed with its rule, never built or run."""
    ex = cb.explore("conv_bias_relu", device_profile="h200", errata=str(path), engines=False)
    denied = [r for r in ex.results if r.status == "denied"]
    return ex, denied
# [/honoured]


def main():
    read_frontend_sample()
    profile = cb.DeviceProfile.bundled("h200")
    traits, tags = plan_tags(profile)
    print("graph tag:", traits.tag, "families:", ", ".join(traits.families), "data types:",
          ", ".join(traits.data_types))
    print("plan tags:", ", ".join(tags))
    first = cb.get_configs(graph_api().op_graph, "A", profile, errata=False)[0]
    with tempfile.TemporaryDirectory() as folder:
        path, on_h200, everywhere = scoped_rule(first, folder)
        print("the SM 8.6 rule on the H200:", "denies" if on_h200 else "allows", "heuristics' first config")
        print("the unscoped rule:", "denies it" if everywhere else "allows it")
        ex, denied = explore_with_errata(path)
        for r in denied:
            print(f"explore: {r.label} engine {r.engine_index} {r.status_text}")
        print("picked instead:", ex.chosen.config_text(), f"({ex.chosen.label})")
    if not cb.core.device.gpu_available():
        print("no GPU: `cudnn-backend explore --errata-out FILE` records wrong results on a GPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
