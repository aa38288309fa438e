"""Plans on a GPU (the CPU side: tests/runtime/test_plans.py): plans built offline against the H200 profile, a
runtime-compiled one included, load onto a Hopper GPU's handle; a plan built with a handle holds it."""
import pytest

from cudnn_backend.runtime.heuristics import build_first_plan, get_configs
from cudnn_backend.runtime.plans import build_plan, plan_from_json
from cudnn_backend.runtime.profiles import DeviceProfile

from tests.helpers import generic_graphs as gg
from tests.runtime.test_plans import rtc_plan  # noqa: F401 - a fixture: the runtime-compiled plan built offline


def _is_h200_class(handle) -> bool:
    return DeviceProfile.capture(handle).compute_capability == (9, 0)


def test_cpu_built_plan_loads_onto_a_handle(handle, h200):
    """A plan built against the H200 profile (as on a CPU machine) loads onto a Hopper GPU's handle."""
    if not _is_h200_class(handle):
        pytest.skip("the bundled profile is an H200 (sm_90); this GPU is another architecture")
    graph = gg.notebook_conv_graph()
    offline, _ = build_first_plan(graph, device_profile=h200)
    text = offline.to_json()
    live = plan_from_json(text, handle=handle, operation_graph=graph)
    assert live.handle is handle and live.operation_graph is graph
    assert live.engine_index == offline.engine_index and live.knobs == offline.knobs
    assert live.workspace_size == offline.workspace_size


def test_runtime_compiled_plan_loads_onto_a_handle(handle, rtc_plan):
    if not _is_h200_class(handle):
        pytest.skip("the bundled profile is an H200 (sm_90); this GPU is another architecture")
    live = plan_from_json(rtc_plan.to_json(), handle=handle)
    assert live.handle is handle and live.engine_index == rtc_plan.engine_index


def test_plan_built_with_handle(handle, conv):
    cfg = get_configs(conv, "A")[0]
    p = build_plan(cfg, handle=handle)
    assert p.handle is handle and p.operation_graph is conv and p.workspace_size >= 0
