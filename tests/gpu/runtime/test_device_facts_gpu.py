"""Device facts measured on the GPU (the CPU side: tests/runtime/test_device_facts.py): the cluster occupancy cuDNN
measures live, and the largest cluster sizes, captured with the profile."""
from cudnn_backend.runtime import device_facts
from cudnn_backend.runtime.profiles import DeviceProfile


def test_cluster_facts_are_measured(handle):
    p = DeviceProfile.capture(handle)
    facts = p.device_facts
    assert facts is not None and set(facts) >= set(device_facts.FACTS), facts
    for name, fact in facts.items():
        assert fact["value"] is not None, (name, fact["source"])
        assert fact["source"].startswith("captured on CUDA device ")
    sizes = facts["max_cluster_size"]["value"]
    occupancy = facts["cluster_occupancy"]["value"]
    assert len(occupancy) == len(device_facts.CLUSTER_SIZES)
    if (p.compute_capability or (0, 0)) >= (9, 0):
        assert sizes == {"portable": 8, "non_portable": 16}  # published for SM 9.0 and later
        # one block fills an SM: as many clusters of one block as SMs, fewer blocks in clusters than SMs, and no
        # more clusters of a size than of a smaller one
        assert occupancy[0] == p.sm_count, occupancy
        assert all(size * n <= p.sm_count for size, n in zip(device_facts.CLUSTER_SIZES, occupancy)), occupancy
        assert all(a >= b for a, b in zip(occupancy, occupancy[1:])) and occupancy[15] > 0, occupancy
    rows = {name: source for name, _, source in device_facts.describe(facts, p.properties.get("deviceVer"))}
    assert rows["cluster_occupancy"].startswith("captured on CUDA device")
