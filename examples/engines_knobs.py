"""Engines, knobs, notes and workspace; engine configs made by hand.

Every engine cuDNN has for a graph (engine_index 0 .. ENGINE_GLOBAL_COUNT-1) is built and asked whether
it supports the graph (and cuDNN's reason when not), its numerical and behavior notes and its knobs.
Runs anywhere (offline against the bundled H200 profile).

    python examples/engines_knobs.py
"""
import cudnn_backend as cb
from cudnn_backend.runtime import engines

from conv_bias_relu import graph_api

PROFILE = cb.DeviceProfile.bundled()


# [list]
def list_all(op_graph):
    """One EngineInfo per engine: supported or not (and why), notes, knobs (KnobSpec: minimum, maximum, stride)."""
    return cb.list_engines(op_graph, PROFILE)
# [/list]


# [config]
def hand_made_config(op_graph):
    """Engine 10 with two knobs chosen; the others keep the engine's defaults. Knob names are checked
    against the engine's KNOB_INFO first (cuDNN itself would only say NOT_SUPPORTED)."""
    engine = engines.make_engine(op_graph, 10, PROFILE)          # a finalized Engine descriptor
    config = cb.make_config(engine, {"TILE_SIZE": 16, "STAGES": 3})
    return config
# [/config]


# [refused]
def refused_knobs(op_graph):
    """Mistakes caught before cuDNN: an unknown knob, a value out of range."""
    engine = engines.make_engine(op_graph, 10, PROFILE)
    messages = []
    for knobs in ({"WORKSPACE": 1}, {"TILE_SIZE": 1000}):
        try:
            cb.make_config(engine, knobs)
        except cb.EngineError as e:
            messages.append(str(e))
    return messages
# [/refused]


# [workspace]
def workspace_and_notes(op_graph):
    """Heuristics' configs with what they need: workspace (bytes) and notes, e.g. to filter on."""
    rows = []
    for config in cb.get_configs(op_graph, "A", PROFILE)[:8]:
        rows.append((config.rank, config.engine_index, config.workspace_size,
                     [engines.short_name(n) for n in config.numerical_notes],
                     [engines.short_name(n) for n in config.behavior_notes]))
    no_workspace = engines.filter_configs(cb.get_configs(op_graph, "A", PROFILE), max_workspace=0)
    return rows, no_workspace
# [/workspace]


def main():
    op_graph = graph_api().op_graph
    infos = list_all(op_graph)
    supported = [i for i in infos if i.supported]
    print(f"{len(infos)} engines, {len(supported)} support this graph")
    for info in supported[:4]:
        knobs = ", ".join(f"{k.name} {k.minimum}..{k.maximum}" for k in info.knobs) or "no knobs"
        print(f"  engine {info.to_dict()['engine']:3d}: {knobs}; {info.knob_space_size} combinations")
    refused = next(i for i in infos if not i.supported)
    print(f"  engine {refused.to_dict()['engine']} refused: {refused.reason}")
    config = hand_made_config(op_graph)
    print("hand-made:", config, "workspace", config.workspace_size)
    print("plan:", cb.build_plan(config, device_profile=PROFILE))
    for message in refused_knobs(op_graph):
        print("refused:", message)
    rows, no_workspace = workspace_and_notes(op_graph)
    for row in rows:
        print("  rank %d engine %d workspace %s numerical %s behavior %s" % row)
    print(f"{len(no_workspace)} of mode A's configs need no workspace")


if __name__ == "__main__":
    main()
