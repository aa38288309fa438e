"""Device profiles captured on a GPU (the CPU side: tests/runtime/test_profiles.py): from a handle and from a device
ordinal, usable for heuristics, saved and loaded back."""
from cudnn_backend.runtime.heuristics import get_configs
from cudnn_backend.runtime.profiles import DeviceProfile

from tests.helpers.generic_graphs import notebook_conv_graph


def test_capture_from_handle_and_device(handle, cudnn_version, tmp_path):
    p = DeviceProfile.capture(handle)
    assert p.cudnn_version == cudnn_version and p.converted_from is None
    assert p.device_name and p.device_name != "unknown device"
    assert p.sm_count and p.sm_count > 0
    assert p.descriptor().finalized
    assert len(get_configs(notebook_conv_graph(), "A", p)) > 0
    by_ordinal = DeviceProfile.capture(handle.device or 0)
    assert by_ordinal.device_name == p.device_name
    back = DeviceProfile.load(p.save(tmp_path / "captured.json"))
    assert back.properties == p.properties and back.cudnn_version == cudnn_version


def test_captures_agree_with_the_bundled_profile_of_their_gpu(handle):
    # on a bundled GPU (H100 SXM, H200), a capture equals the bundled profile converted for the loaded release,
    # apart from what differs between two machines of one kind (driver, device ordinal, clocks)
    import pytest

    p = DeviceProfile.capture(handle)
    name = {"NVIDIA H100 80GB HBM3": "h100", "NVIDIA H200": "h200"}.get(p.device_name)
    if name is None:
        pytest.skip(f"no bundled profile of {p.device_name}")
    bundled = DeviceProfile.bundled(name).properties
    captured = p.properties
    assert list(captured) == list(bundled)
    same = {k for k in captured if k not in ("driverVer", "cudaDeviceId", "pciDeviceId", "smClockRateKHz",
                                             "memClockRateKHz", "totalGlobalMem")}
    assert {k: captured[k] for k in same} == {k: bundled[k] for k in same}
