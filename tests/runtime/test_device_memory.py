"""A graph whose tensors need more memory than the target GPU has gets a DeviceMemoryWarning when its plan is built
(a 274 GB input built a plan for a 141 GB H200 without a word); once per graph and device."""
import json
import warnings

import pytest

import cudnn_backend as cb
from cudnn_backend.patterns import CATALOGUE
from cudnn_backend.runtime import plans
from cudnn_backend.runtime.heuristics import build_first_plan, get_configs


def _conv(n, c=256, hw=256, k=256):
    return CATALOGUE["conv_fwd"](n=n, c=c, h=hw, w=hw, k=k, build=False).graph.build()


def test_tensor_bytes_and_device_memory(h200):
    og = _conv(2, c=8, hw=8, k=8)
    # x [2,8,8,8] and y [2,8,8,8] in half, w [8,8,3,3] in half
    assert plans.tensor_bytes(og) == (2 * 8 * 8 * 8 + 2 * 8 * 8 * 8 + 8 * 8 * 3 * 3) * 2
    memory = json.loads(h200.deviceprop_json)["totalGlobalMem"]
    assert plans.device_memory(deviceprop=cb.runtime.profiles.as_deviceprop(h200)) == memory


def test_a_plan_for_a_graph_too_large_for_the_gpu_warns_once(h200):
    og = _conv(4096)  # x and y 128 GiB each in half: 256 GiB, an H200 has 140
    with pytest.warns(cb.DeviceMemoryWarning, match=r"the graph's tensors need 256\.0 GiB, more than the 139\.8 GiB "
                                                    r"of the NVIDIA H200: the plan builds, but it cannot run there"):
        plan, _ = build_first_plan(og, device_profile=h200)
    assert plan.workspace_size >= 0  # built all the same
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second plan of the same graph for the same GPU: said already
        plans.build_plan(get_configs(og, "A", h200)[1], device_profile=h200)
    with pytest.warns(cb.DeviceMemoryWarning, match="NVIDIA H100"):  # another GPU: said again
        build_first_plan(og, device_profile=cb.DeviceProfile.bundled("h100"))


def test_a_graph_that_fits_builds_quietly(h200):
    og = _conv(8)  # 4 GiB of tensors
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build_first_plan(og, device_profile=h200)
