"""Device profiles captured on a GPU (the CPU side: tests/runtime/test_profiles.py): from a handle and from a device
ordinal, usable for heuristics, saved and loaded back."""
from cudnn_backend.runtime.heuristics import get_configs
from cudnn_backend.runtime.profiles import DeviceProfile

from tests.helpers.generic_graphs import notebook_conv_graph


def test_capture_from_handle_and_device(handle, cudnn_version, tmp_path):
    p = DeviceProfile.capture(handle)
    assert p.cudnn_version == cudnn_version
    assert p.device_name and p.device_name != "unknown device"
    assert p.sm_count and p.sm_count > 0
    assert p.descriptor().finalized
    assert len(get_configs(notebook_conv_graph(), "A", p)) > 0
    by_ordinal = DeviceProfile.capture(handle.device or 0)
    assert by_ordinal.device_name == p.device_name
    back = DeviceProfile.load(p.save(tmp_path / "captured.json"))
    assert back.properties == p.properties and back.cudnn_version == cudnn_version
