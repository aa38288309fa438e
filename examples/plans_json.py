"""Execution plans, and their JSON serialization.

A plan is an engine config finalized for a device (a handle on a GPU, or a device profile offline). Its
JSON carries the graph, the device, the engine, the knobs and (for runtime-compiled engines) the compiled
kernel: build plans once, save them, load them in the process that runs them. Runs anywhere.

    python examples/plans_json.py
"""
import pathlib
import tempfile

import cudnn_backend as cb
from cudnn_backend.runtime import plans

from conv_bias_relu import graph_api

PROFILE = cb.DeviceProfile.bundled()


# [build]
def build(op_graph):
    """Heuristics' first config as a plan: engine, knobs, workspace, notes."""
    config = cb.get_configs(op_graph, "A", PROFILE)[0]
    plan = cb.build_plan(config, device_profile=PROFILE)     # on a GPU: cb.build_plan(config, handle=handle)
    return plan
# [/build]


# [json]
def round_trip(plan, folder):
    """to_json / save, then load: the JSON is checked field by field before cuDNN reads it."""
    text = plan.to_json()
    info = plans.plan_json_info(text)                          # what it says about itself, without cuDNN
    path = plan.save(pathlib.Path(folder) / "conv_bias_relu.plan.json")
    loaded = cb.load_plan(path, device_profile=PROFILE)        # on a GPU: cb.load_plan(path, handle=handle)
    return text, info, loaded
# [/json]


def main():
    op_graph = graph_api().op_graph
    plan = build(op_graph)
    print(plan)
    print(plan.to_dict())
    with tempfile.TemporaryDirectory() as folder:
        text, info, loaded = round_trip(plan, folder)
    print(f"JSON: {len(text)} characters; it says {info}")
    print("loaded:", loaded, "same engine and knobs:", (loaded.engine_index, loaded.knobs) == (plan.engine_index,
                                                                                            plan.knobs))


if __name__ == "__main__":
    main()
