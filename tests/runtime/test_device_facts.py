"""Device facts: what cuDNN reads only from the live GPU, kept beside cuDNN's JSON in our profile format (the GPU
side: tests/gpu/runtime/test_device_facts_gpu.py). cuDNN's JSON stays exactly as it was, and cuDNN takes the profile
as before."""
from __future__ import annotations

import copy
import json
import pickle

import pytest

from cudnn_backend.errors import DeviceProfileError
from cudnn_backend.runtime import device_facts
from cudnn_backend.runtime.heuristics import get_configs
from cudnn_backend.runtime.profiles import DeviceProfile

from tests.helpers.generic_graphs import notebook_conv_graph

# what an H200 could report (the shape of a capture; the values are the lead's to capture on the GPU)
FACTS = {"cluster_occupancy": {"value": [132, 66, 44, 32, 24, 22, 14, 16, 9, 8, 7, 6, 6, 6, 6, 7],
                               "source": "captured on CUDA device 0 (2026-11-28): ..."},
         "max_cluster_size": {"value": {"portable": 8, "non_portable": 16}, "source": "captured on CUDA device 0"}}


def test_facts_are_checked_naming_the_member():
    assert device_facts.check(None) == {} and device_facts.check(FACTS) == FACTS
    assert device_facts.check({"future_fact": {"value": [1, 2], "source": ""}})["future_fact"]["value"] == [1, 2]
    cases = [
        ([1, 2], "device_facts: expected an object of facts, not list"),
        ({"cluster_occupancy": [132, 66]}, r"device_facts.cluster_occupancy: expected \{\"value\""),
        ({"cluster_occupancy": {"value": [132, -1]}}, r"device_facts.cluster_occupancy.value\[1\]: expected an int "
                                                      ">= 0, not -1"),
        ({"cluster_occupancy": {"value": []}}, "expected a list of cluster counts"),
        ({"cluster_occupancy": {"value": [132, True]}}, r"value\[1\]: expected an int >= 0, not True"),
        ({"max_cluster_size": {"value": {"portable": 8}}}, r"expected \{\"portable\": N, \"non_portable\": M\}"),
        ({"max_cluster_size": {"value": {"portable": 0, "non_portable": 16}}}, "value.portable: expected an int >= 1"),
        ({"max_cluster_size": {"value": None, "source": 3}}, "device_facts.max_cluster_size.source: expected text"),
    ]
    for data, message in cases:
        with pytest.raises(DeviceProfileError, match=message):
            device_facts.check(data)
    # a fact that was not measured keeps its reason
    assert device_facts.check({"cluster_occupancy": {"value": None, "source": "not captured: x"}}) == \
        {"cluster_occupancy": {"value": None, "source": "not captured: x"}}


def test_describe_says_where_each_fact_comes_from():
    rows = {name: (value, source) for name, value, source in device_facts.describe(None, 900)}
    assert rows["cluster_occupancy"] == ("-", "not captured (`cudnn-backend profile capture` on the GPU records it)")
    assert rows["max_cluster_size"][0] == "portable 8, non_portable 16"
    assert rows["max_cluster_size"][1].startswith("published: CUDA C++ Programming Guide")
    captured = {n: (v, s) for n, v, s in device_facts.describe(FACTS, 900)}
    assert captured["cluster_occupancy"][0].startswith("132, 66, 44") and \
        captured["cluster_occupancy"][1].startswith("captured on CUDA device 0")
    old_gpu = {n: v for n, v, _ in device_facts.describe(None, 800)}
    assert old_gpu == {"cluster_occupancy": "-", "max_cluster_size": "-"}  # no clusters before SM 9.0
    failed = {"cluster_occupancy": {"value": None, "source": "not captured: DeviceProfileError: cuModuleLoadData"}}
    assert dict((n, s) for n, _, s in device_facts.describe(failed, 900))["cluster_occupancy"].startswith(
        "not captured: DeviceProfileError: cuModuleLoadData")


def test_a_capture_without_a_gpu_records_why_not():
    got = device_facts.capture(0)
    assert set(got) == set(device_facts.FACTS)
    assert all(f["value"] is None and f["source"].startswith("not captured: ") for f in got.values())


def test_profiles_carry_the_facts_beside_cudnns_json(tmp_path):
    bundled = DeviceProfile.bundled("h200")
    assert bundled.device_facts is None and "device_facts" not in bundled.to_dict()
    p = DeviceProfile(bundled.deviceprop_json, bundled.cudnn_version, "test", device_facts=FACTS)
    assert p.deviceprop_json == bundled.deviceprop_json  # cuDNN's JSON untouched
    assert p.to_dict()["device_facts"] == FACTS and "cluster_occupancy" not in p.to_dict()["deviceprop"]
    back = DeviceProfile.load(p.save(tmp_path / "h200_deviceprop_cudnn91900.json"))
    assert back.device_facts == FACTS and back.deviceprop_json == p.deviceprop_json
    assert pickle.loads(pickle.dumps(p)).device_facts == FACTS and copy.deepcopy(p).device_facts == FACTS
    other = p.for_release("9.28.1")
    assert other.device_facts == FACTS and "cluster_occupancy" not in other.properties
    # cuDNN takes the profile as before: heuristics answer the same with and without the facts
    assert len(get_configs(notebook_conv_graph(), "A", p)) == len(get_configs(notebook_conv_graph(), "A", bundled))
    data = json.loads((tmp_path / "h200_deviceprop_cudnn91900.json").read_text())
    data["device_facts"] = {"cluster_occupancy": {"value": "many"}}
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(DeviceProfileError, match="device_facts.cluster_occupancy.value: expected a list"):
        DeviceProfile.load(tmp_path / "bad.json")
