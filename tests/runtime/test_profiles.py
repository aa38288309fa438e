"""Device profiles: the bundled H200 profile, raw and wrapped files, version refusal, capture (on a GPU:
tests/gpu/runtime/test_profiles_gpu.py)."""
import json

import pytest

import cudnn_backend as cb
from cudnn_backend.core import versions
from cudnn_backend.runtime import profiles
from cudnn_backend.runtime.profiles import DeviceProfile, DeviceProfileError, DeviceProfileVersionError

from tests.helpers.env import H200_PROFILE_JSON, HAVE_GPU
from tests.helpers.generic_graphs import notebook_conv_graph


def _other_minor(version: int) -> int:
    """A cuDNN version with another MINOR than ``version`` (9.19.0 -> 9.28.0)."""
    return version + 900 if version % 10000 // 100 < 90 else version - 900


# -- the bundled profile -------------------------------------------------------------------------
def test_bundled_h200(h200, cudnn_version):
    assert h200.device_name == "NVIDIA H200"
    assert h200.cudnn_version == 91900
    assert h200.cudnn_version_string == "9.19.0"
    assert h200.sm_count == 132
    assert h200.compute_capability == (9, 0)
    assert h200.deviceprop_json == H200_PROFILE_JSON.read_text()
    assert "h200" in profiles.bundled_profiles()
    assert "NVIDIA H200" in repr(h200) and "9.19.0" in repr(h200)


def test_bundled_descriptor_is_finalized_and_cached(h200):
    dp = h200.descriptor()
    assert dp.finalized and dp.descriptor_type == cb.CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR
    assert h200.descriptor() is dp
    fresh = h200.descriptor(fresh=True)
    assert fresh is not dp and fresh.finalized
    assert profiles.profile_of(dp) is h200
    # cuDNN reads the JSON back as it was given
    assert json.loads(dp.get_keyword("json_representation")) == h200.properties


def test_bundled_unknown_name_and_version():
    with pytest.raises(DeviceProfileError, match="no bundled device profile 'no_such_gpu'.*h200"):
        DeviceProfile.bundled("no_such_gpu")
    with pytest.raises(DeviceProfileError, match="no bundled 'h200' profile for cuDNN 9.1.0"):
        DeviceProfile.bundled("h200", cudnn_version="9.1.0")


def test_bundled_profile_drives_heuristics(h200):
    from cudnn_backend.runtime.heuristics import get_configs

    assert len(get_configs(notebook_conv_graph(), "A", h200)) > 0


# -- files -----------------------------------------------------------------------------------------
def test_save_load_round_trip(h200, tmp_path):
    path = h200.save(tmp_path / "h200.json")
    data = json.loads(path.read_text())
    assert data["format"] == profiles.FORMAT
    assert data["device_name"] == "NVIDIA H200"
    assert data["cudnn_version"] == 91900 and data["cudnn_version_string"] == "9.19.0"
    assert data["deviceprop"]["deviceName"] == "NVIDIA H200"
    back = DeviceProfile.load(path)
    assert back.properties == h200.properties
    assert back.cudnn_version == h200.cudnn_version
    assert back.device_name == h200.device_name
    assert back.descriptor().finalized


def test_load_raw_json_version_from_file_name(h200, tmp_path):
    path = tmp_path / "mygpu_deviceprop_cudnn91900.json"
    path.write_text(h200.deviceprop_json)
    p = DeviceProfile.load(path)
    assert p.cudnn_version == 91900 and p.device_name == "NVIDIA H200"
    assert p.source == str(path)
    assert profiles.version_from_filename("a_cudnn92800.json") == 92800
    assert profiles.version_from_filename("profile.json") is None


def test_load_raw_json_needs_a_version(h200, tmp_path):
    path = tmp_path / "profile.json"
    path.write_text(h200.deviceprop_json)
    with pytest.raises(DeviceProfileError, match="cudnn_version="):
        DeviceProfile.load(path)
    p = DeviceProfile.load(path, cudnn_version="9.19.0")
    assert p.cudnn_version == 91900
    # an explicit version wins over the file name
    named = tmp_path / "x_deviceprop_cudnn91900.json"
    named.write_text(h200.deviceprop_json)
    assert DeviceProfile.load(named, cudnn_version=92800).cudnn_version == 92800


def test_load_errors(tmp_path):
    with pytest.raises(DeviceProfileError, match="cannot read device profile"):
        DeviceProfile.load(tmp_path / "missing_cudnn91900.json")
    bad = tmp_path / "bad_cudnn91900.json"
    bad.write_text("{not json")
    with pytest.raises(DeviceProfileError, match="not valid JSON"):
        DeviceProfile.load(bad)
    other = tmp_path / "other_cudnn91900.json"
    other.write_text(json.dumps({"hello": 1}))
    with pytest.raises(DeviceProfileError, match="device profile JSON: hello: unknown member"):
        DeviceProfile.load(other)
    empty = tmp_path / "empty_cudnn91900.json"
    empty.write_text("{}")
    with pytest.raises(DeviceProfileError, match='device profile JSON: missing member "maxGridSize"'):
        DeviceProfile.load(empty)
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({"format": profiles.FORMAT, "format_version": 99, "deviceprop": {}}))
    with pytest.raises(DeviceProfileError, match="format_version 99"):
        DeviceProfile.load(newer)


def test_parse_version():
    assert versions.parse_version(91900) == 91900
    assert versions.parse_version("91900") == 91900
    assert versions.parse_version("9.19.0") == 91900
    assert versions.parse_version("9.28") == 92800
    assert versions.parse_version((9, 19, 1)) == 91901
    assert versions.format_version(92800) == "9.28.0"
    with pytest.raises(ValueError):
        versions.parse_version("nine")
    with pytest.raises(ValueError):
        versions.parse_version(8907)
    with pytest.raises(TypeError):
        versions.parse_version(True)


# -- version refusal -------------------------------------------------------------------------------
def test_version_mismatch_is_refused(h200, cudnn_version):
    other = _other_minor(cudnn_version)
    fake = DeviceProfile(h200.deviceprop_json, cudnn_version=other, source="fake")
    with pytest.raises(DeviceProfileVersionError) as info:
        fake.descriptor()
    msg = str(info.value)
    assert versions.format_version(other) in msg and versions.format_version(cudnn_version) in msg
    assert "allow_version_mismatch=True" in msg and "NVIDIA H200" in msg
    assert info.value.profile_version == other and info.value.loaded_version == cudnn_version


def test_version_mismatch_refused_where_profiles_are_used(h200, cudnn_version):
    from cudnn_backend.runtime.engines import list_engines
    from cudnn_backend.runtime.heuristics import build_first_plan, get_configs

    fake = DeviceProfile(h200.deviceprop_json, cudnn_version=_other_minor(cudnn_version))
    g = notebook_conv_graph()
    with pytest.raises(DeviceProfileVersionError):
        get_configs(g, "A", fake)
    with pytest.raises(DeviceProfileVersionError):
        build_first_plan(g, device_profile=fake)
    with pytest.raises(DeviceProfileVersionError):
        list_engines(g, fake)


def test_version_mismatch_override(h200, cudnn_version):
    from cudnn_backend.runtime.heuristics import get_configs

    other = _other_minor(cudnn_version)
    fake = DeviceProfile(h200.deviceprop_json, cudnn_version=other)
    assert fake.descriptor(allow_version_mismatch=True).finalized
    assert len(get_configs(notebook_conv_graph(), "A", fake, allow_version_mismatch=True)) > 0
    trusting = DeviceProfile(h200.deviceprop_json, cudnn_version=other, allow_version_mismatch=True)
    assert trusting.descriptor().finalized
    loaded = DeviceProfile.load(H200_PROFILE_JSON, cudnn_version=other, allow_version_mismatch=True)
    assert loaded.descriptor().finalized


def test_patch_level_difference_is_accepted(h200, cudnn_version):
    patched = DeviceProfile(h200.deviceprop_json, cudnn_version=cudnn_version // 100 * 100 + 1)
    patched.check_version()
    assert patched.descriptor().finalized


def test_unknown_version_is_refused_unless_allowed(h200):
    p = DeviceProfile(h200.deviceprop_json)
    with pytest.raises(DeviceProfileVersionError, match="does not say which cuDNN version"):
        p.descriptor()
    assert p.descriptor(allow_version_mismatch=True).finalized
    with pytest.raises(DeviceProfileError, match="unknown"):
        p.save("never-written.json")


# -- what device_profile= accepts ----------------------------------------------------------------------
def test_as_deviceprop_accepts_profiles_names_paths_and_descriptors(h200, tmp_path):
    assert profiles.as_deviceprop(None) is None
    assert profiles.as_deviceprop(h200) is h200.descriptor()
    assert profiles.as_deviceprop("h200").finalized
    assert profiles.as_deviceprop(H200_PROFILE_JSON).finalized
    assert profiles.as_deviceprop(str(H200_PROFILE_JSON)).finalized
    dp = h200.descriptor(fresh=True)
    assert profiles.as_deviceprop(dp) is dp
    unfinalized = cb.Descriptor(cb.CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR)
    with pytest.raises(ValueError, match="not finalized"):
        profiles.as_deviceprop(unfinalized)
    with pytest.raises(TypeError, match="CUDNN_BACKEND_TENSOR_DESCRIPTOR"):
        profiles.as_deviceprop(cb.Descriptor(cb.CUDNN_BACKEND_TENSOR_DESCRIPTOR))
    with pytest.raises(TypeError):
        profiles.as_deviceprop(42)


# -- capture (on a GPU: tests/gpu/runtime/test_profiles_gpu.py) ----------------------------------------
@pytest.mark.skipif(HAVE_GPU, reason="checks the message given without a GPU")
def test_capture_without_gpu_says_what_to_do():
    with pytest.raises(DeviceProfileError, match="needs a CUDA GPU.*save\\(\\).*load\\(\\)"):
        DeviceProfile.capture()


def test_capture_rejects_bad_arguments():
    with pytest.raises((TypeError, DeviceProfileError)):
        DeviceProfile.capture("gpu0")
