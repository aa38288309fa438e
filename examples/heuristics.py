"""Heuristics A, B, FALLBACK and INSTANT, and the recommended fallback chain.

Runs anywhere: without a GPU the heuristics target the bundled H200 device profile.

    python examples/heuristics.py
"""
import cudnn_backend as cb
from cudnn_backend.typed import EngineHeuristics

from conv_bias_relu import graph_api

PROFILE = cb.DeviceProfile.bundled()        # on a GPU machine: leave it out and build the graph with a handle


# [modes]
def modes(op_graph):
    """What each mode returns for the graph: how many configs, and the first one."""
    out = {}
    for mode in ("A", "B", "FALLBACK", "INSTANT"):
        configs = cb.get_configs(op_graph, mode, PROFILE)          # Configs, best first, in cuDNN's order
        out[mode] = configs
    return out
# [/modes]


# [typed_heuristics]
def typed_heuristics(op_graph):
    """The same query one level down: an EngineHeuristics descriptor and its results."""
    heur = EngineHeuristics(operation_graph=op_graph, mode=cb.CUDNN_HEUR_MODE_A, deviceprop=PROFILE.descriptor())
    heur.finalize()
    return cb.heuristics.heuristics_configs(heur)                   # the EngineConfig results, wrapped
# [/typed_heuristics]


# [chain]
def fallback_chain(op_graph):
    """The guide's recommendation in one call: mode A's configs in order, the first that builds a plan wins;
    when none does, mode FALLBACK's. Here the filter refuses every tensor-core config, so FALLBACK serves."""
    plan, report = cb.build_first_plan(op_graph, device_profile=PROFILE, modes=("A",), fallback=True,
                                       exclude_numerical="TENSOR_CORE")
    return plan, report
# [/chain]


def main():
    op_graph = graph_api().op_graph
    for mode, configs in modes(op_graph).items():
        print(f"{mode:9s} {len(configs):3d} configs; first: {configs[0]}")
    print("typed EngineHeuristics, mode A:", typed_heuristics(op_graph)[:2])
    plan, report = fallback_chain(op_graph)
    print(report.summary())
    print("last attempts:")
    for attempt in report.attempts[-2:]:
        print("  ", attempt.mode, attempt.rank, attempt.engine_index, attempt.ok, attempt.reason)
    print("plan:", plan)


if __name__ == "__main__":
    main()
