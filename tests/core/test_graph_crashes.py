"""Whole graphs a cuDNN release crashes on (core.graph_crashes): refused where heuristics or an engine take them, by
every API; the same graphs one size larger, and the releases that do not crash, go on to cuDNN."""
from __future__ import annotations

import textwrap

import pytest

from cudnn_backend.core import graph_crashes as C
from cudnn_backend.core.versions import loaded_version

from tests.helpers.crash import run_python

CRASHING = C._crashes_in(loaded_version(), C.COMPOSITE_ATTENTION_BACKWARD_CRASHES)
Q_ROW = ("Matmul", "adesc q", (1, 1, 1, 64), False)
K_T = ("Matmul", "bdesc k_t", (1, 1, 64, 64), False)


def test_the_rule_names_the_matmul_and_the_release():
    operands = [Q_ROW] + [("Matmul", "adesc s", (1, 1, 64, 64), True)] * 4
    problem = C.composite_attention_backward_problem(92801, operands, 1, 3)
    assert problem.startswith("Matmul reads adesc q [1, 1, 1, 64]: a single row of queries"), problem
    assert "crashes cuDNN 9.28.1" in problem and "use the SDPA_BWD operation" in problem


@pytest.mark.parametrize("version, operands, reductions, reshapes", [
    (92401, [Q_ROW] * 5, 1, 3),  # a release that does not crash
    (92801, [Q_ROW] * 4, 1, 3),  # four matmuls: no composite backward
    (92801, [Q_ROW] * 5, 0, 3),
    (92801, [Q_ROW] * 5, 1, 1),
    (92801, [("Matmul", "adesc q", (2, 1, 1, 64), False)] * 5, 1, 3),  # two rows
    (92801, [("Matmul", "adesc s", (1, 1, 1, 64), True)] * 5, 1, 3),  # a virtual A: no query row
])
def test_the_rule_holds_back_elsewhere(version, operands, reductions, reshapes):
    assert C.composite_attention_backward_problem(version, operands, reductions, reshapes) is None


CHILD = textwrap.dedent("""
    import sys
    import cudnn_backend as cb
    from cudnn_backend import patterns
    from cudnn_backend.errors import GraphError
    from cudnn_backend.runtime.engines import config_from_index
    from cudnn_backend.runtime.heuristics import heuristics_configs
    from cudnn_backend.typed import EngineHeuristics
    b, s_q, route = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    graph = patterns.sdpa_composite_bwd(b=b, h=1, s_q=s_q, s_kv=64, d=64).op_graph
    try:
        if route == "heuristics":
            print("configs", len(cb.get_configs(graph, "A", "h200")))
        elif route == "engine":
            config_from_index(graph, 7, device_profile="h200")
            print("configs", 1)
        else:  # the typed descriptors, by hand
            heur = EngineHeuristics(operation_graph=graph, mode=cb.CUDNN_HEUR_MODE_INSTANT,
                                    deviceprop=cb.DeviceProfile.bundled("h200").descriptor())
            heur.finalize()
            print("configs", len(heuristics_configs(heur)))
    except GraphError as e:
        print("refused", e)
    except cb.CudnnBackendError as e:  # (an older release: engine 7 absent, or refusing these sizes)
        print("cudnn", type(e).__name__)
""")


@pytest.mark.parametrize("route", ["heuristics", "engine", "typed"])
def test_a_composite_attention_backward_of_one_query_row(route):
    result = run_python(CHILD, args=("1", "1", route), timeout=240)
    assert not result.crashed, result.describe()
    out = result.stdout.strip()
    if CRASHING:
        assert out.startswith("refused Matmul reads adesc q [1, 1, 1, 64]: a single row of queries"), result.describe()
    else:  # (engine 7 may be absent or refuse these sizes on an older release: an error, not a crash)
        assert out.startswith(("configs", "cudnn")), result.describe()


@pytest.mark.parametrize("b, s_q", [(2, 1), (1, 2)])
def test_two_query_rows_go_on_to_cudnn(b, s_q):
    result = run_python(CHILD, args=(b, s_q, "heuristics"), timeout=240)
    assert result.returncode == 0 and result.stdout.startswith("configs"), result.describe()
