"""Device profiles: the bundled captures for every release (converted, and back byte for byte), the table of GPU
facts, raw and wrapped files, conversion between releases and its refusals (captures on a GPU:
tests/gpu/runtime/test_profiles_gpu.py).

Runs on every release of the matrix (the loaded one, ``CUDNN_BACKEND_LIBCUDNN``); conversions *to* other releases
are pure Python and are checked for all of them on any.
"""
import copy
import gc
import json
import re
import pickle
import warnings

import pytest

import cudnn_backend as cb
from cudnn_backend.core import versions
from cudnn_backend.core.json_checks import TABLE_RELEASES
from cudnn_backend.runtime import profiles
from cudnn_backend.runtime.profiles import DeviceProfile, DeviceProfileError, DeviceProfileVersionError

from tests.helpers.env import H200_PROFILE_JSON, HAVE_GPU, PACKAGE_DATA
from tests.helpers.generic_graphs import notebook_conv_graph

CAPTURED = 91900  # the release the bundled H100 and H200 captures were taken with
NEWER_CAPTURE = 92801  # the H200 is also captured with cuDNN 9.28.1 (memoryBusWidth 6016, not the published 6144)
NEWER = "9.28.1"  # a release that requires memoryBusWidth, which 9.19 never wrote
OLDEST = "9.10.2"  # a release that never wrote maxThreadsPerBlock, which 9.14 and later require
NO_TABLE = pytest.mark.filterwarnings("ignore::cudnn_backend.errors.JsonTableFallbackWarning")


def _capture_text(name) -> str:
    """The deviceprop JSON of a bundled capture as cuDNN wrote it: the raw H200 file byte for byte; the H100 file
    wraps it (our format), so its compact form (how cuDNN writes it, the H200 file shows)."""
    path = PACKAGE_DATA / f"{name}_deviceprop_cudnn{CAPTURED}.json"
    data = json.loads(path.read_text())
    if data.get("format") == profiles.FORMAT:
        return json.dumps(data["deviceprop"], separators=(",", ":"))
    return path.read_text()


def _renamed(profile, name, release=CAPTURED) -> DeviceProfile:
    """The profile's JSON under another deviceName: a GPU the table of facts does not know."""
    props = profile.for_release(release).properties
    props["deviceName"] = name
    return DeviceProfile(json.dumps(props, separators=(",", ":")), cudnn_version=release, source=f"{name}.json")


def _newer_capture() -> DeviceProfile:
    """The H100 as cuDNN 9.28.1 writes it on the GPU: 9.19's members, memoryBusWidth where 9.28 writes it, and the
    two members 9.28 reads when present (smCountOrigin, oversizedSharedMemoryPerBlock)."""
    props = json.loads(_capture_text("h100"))
    out = {}
    for k, v in props.items():
        out[k] = v
        if k == "multiProcessorCount":
            out["smCountOrigin"] = 0
        if k == "maxSharedMemoryPerBlockOptin":
            out["oversizedSharedMemoryPerBlock"] = 0
        if k == "memClockRateKHz":
            out["memoryBusWidth"] = 5120
    return DeviceProfile(json.dumps(out, separators=(",", ":")), cudnn_version=NEWER, source="captured on 9.28.1")


# -- the bundled captures, for the loaded release ---------------------------------------------------------------
def _captures(name) -> dict:
    """{release: DeviceProfile} of the bundled captures of ``name``, each as it is."""
    return {v: DeviceProfile.load(path, v) for v, path in profiles._bundled_captures()[name].items()}


def test_bundled_h200(h200, cudnn_version):
    assert h200.device_name == "NVIDIA H200"
    assert versions.versions_compatible(h200.cudnn_version, cudnn_version)
    assert h200.sm_count == 132
    assert h200.compute_capability == (9, 0)
    assert "h200" in profiles.bundled_profiles() and "h100" in profiles.bundled_profiles()
    assert "NVIDIA H200" in repr(h200) and versions.format_version(h200.cudnn_version) in repr(h200)
    captures = _captures("h200")
    assert set(captures) == {CAPTURED, NEWER_CAPTURE}
    own = [v for v in captures if versions.versions_compatible(v, cudnn_version)]
    if own:  # the capture of the loaded release, as cuDNN wrote it
        assert h200.for_release(own[0]).deviceprop_json == captures[own[0]].deviceprop_json
        assert h200.origin.startswith("captured with") or h200.converted_from == own[0]
    else:
        assert h200.converted_from in captures
        assert h200.origin.startswith(f"converted for cuDNN {h200.cudnn_version_string} from a cuDNN ")
    # every member the H200 profile holds for any release is what that GPU reported: nothing published
    assert h200.published_members == () and h200.plan_risk() is None


def test_bundled_descriptor_is_finalized_and_cached(h200):
    dp = h200.descriptor()
    assert dp.finalized and dp.descriptor_type == cb.CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR
    assert h200.descriptor() is dp
    fresh = h200.descriptor(fresh=True)
    assert fresh is not dp and fresh.finalized
    assert profiles.profile_of(dp) is h200
    # cuDNN reads the JSON back as it was given
    assert json.loads(dp.get_keyword("json_representation")) == h200.properties


def test_bundled_unknown_name_and_release():
    with pytest.raises(DeviceProfileError, match="no bundled device profile 'no_such_gpu'.*h200"):
        DeviceProfile.bundled("no_such_gpu")
    with pytest.raises(DeviceProfileVersionError, match="cuDNN 9.1.0 takes no device profile.*9.8.0"):
        DeviceProfile.bundled("h200", cudnn_version="9.1.0")


def test_bundled_profile_drives_heuristics(h200):
    from cudnn_backend.runtime.heuristics import get_configs

    assert len(get_configs(notebook_conv_graph(), "A", h200)) > 0


@pytest.mark.parametrize("name", ["h100", "h200"])
def test_every_bundled_profile_finalizes_on_the_loaded_release(name, cudnn_version):
    p = DeviceProfile.bundled(name)
    assert versions.versions_compatible(p.cudnn_version, cudnn_version)
    assert p.descriptor().finalized
    assert profiles.offline_profiles()[name] == p.origin


# -- the transform: captures + facts -> every release's JSON, and back byte for byte --------------------------------
@pytest.mark.parametrize("release", TABLE_RELEASES)
@pytest.mark.parametrize("name", ["h100", "h200"])
def test_conversion_reproduces_the_captures_byte_for_byte(name, release):
    converted = DeviceProfile.bundled(name, release)
    assert versions.versions_compatible(converted.cudnn_version, release)
    for version, capture in _captures(name).items():
        back = capture.for_release(release).for_release(version)
        assert back.deviceprop_json == capture.deviceprop_json
        assert back.cudnn_version == version
    assert converted.for_release(CAPTURED).deviceprop_json == _capture_text(name)


@NO_TABLE
def test_the_capture_for_its_own_release_is_the_file_itself():
    assert DeviceProfile.bundled("h200", CAPTURED).deviceprop_json == H200_PROFILE_JSON.read_text()
    h100 = DeviceProfile.bundled("h100", "9.19.0")
    assert h100.for_release("9.19.0") is h100
    patch = h100.for_release("9.19.1")  # a patch release reads the same: relabelled, the JSON unchanged
    assert patch.cudnn_version == 91901 and patch.converted_from == CAPTURED
    assert patch.deviceprop_json == h100.deviceprop_json


def test_a_release_requiring_the_bus_width_gets_it_from_a_capture_before_published_figures():
    # the H200: its 9.19 capture converted for 9.28 takes the bus width the GPU reported to 9.28.1, not NVIDIA's 6144
    h200 = DeviceProfile.bundled("h200", CAPTURED).for_release(NEWER)
    props = h200.properties
    assert props["memoryBusWidth"] == 6016 and props["smCountOrigin"] == 0
    assert props["oversizedSharedMemoryPerBlock"] == 0  # read by 9.28 when present: the capture has it too
    keys = list(props)
    assert keys[keys.index("memClockRateKHz") + 1] == "memoryBusWidth"  # where cuDNN 9.28 writes it
    assert props == _captures("h200")[NEWER_CAPTURE].properties
    assert set(h200.filled) == {"memoryBusWidth", "smCountOrigin", "oversizedSharedMemoryPerBlock"}
    assert all("cuDNN 9.28.1 capture of NVIDIA H200" in where for where in h200.filled.values())
    assert h200.origin.startswith("converted for cuDNN 9.28.1 from a cuDNN 9.19.0 capture; memoryBusWidth, "
                                  "smCountOrigin, oversizedSharedMemoryPerBlock from the cuDNN 9.28.1 capture of "
                                  "NVIDIA H200 (")
    assert h200.plan_risk() is None
    # the H100, captured with 9.19 only: the published figure, said to be one, with the risk it brings
    h100 = DeviceProfile.bundled("h100", NEWER)
    assert h100.properties["memoryBusWidth"] == 5120 and "smCountOrigin" not in h100.properties
    assert h100.filled == {"memoryBusWidth": h100.filled["memoryBusWidth"]}
    assert h100.filled["memoryBusWidth"].startswith("published: NVIDIA H100")
    assert h100.origin.endswith("memoryBusWidth from published figures, not a capture")
    risk = h100.plan_risk()
    assert "memoryBusWidth 5120" in risk and "ARCH_MISMATCH" in risk and "profile capture" in risk
    assert DeviceProfile.bundled("h100", "9.22.0").plan_risk() is None  # 9.22 reads no bus width


@NO_TABLE
def test_saving_a_plan_built_with_a_published_figure_cudnn_compares_warns(tmp_path):
    from cudnn_backend.runtime.heuristics import build_first_plan
    from cudnn_backend.runtime.plans import save_plan

    for name in ("h100", "h200"):
        loaded = DeviceProfile.bundled(name)  # for the loaded release: a warning where it compares the bus width
        plan, _ = build_first_plan(notebook_conv_graph(), device_profile=loaded)
        if loaded.plan_risk() is None:
            with warnings.catch_warnings():
                warnings.simplefilter("error", cb.DeviceProfileIdentityWarning)
                save_plan(plan, tmp_path / f"{name}.json")
        else:
            with pytest.warns(cb.DeviceProfileIdentityWarning, match=f"{name}.json: .*memoryBusWidth 5120"):
                save_plan(plan, tmp_path / f"{name}.json")


@NO_TABLE
def test_the_chosen_capture_needs_no_published_figure_cudnn_compares():
    # for a 9.28 release the H200's 9.28.1 capture serves whole, the nearer 9.19 one would need a conversion
    assert DeviceProfile.bundled("h200", "9.28.0").converted_from == NEWER_CAPTURE
    assert DeviceProfile.bundled("h200", "9.24.0").plan_risk() is None  # whichever capture serves it


def test_captured_facts_name_their_capture():
    facts = profiles.captured_facts("NVIDIA H200")
    assert facts["memoryBusWidth"][0] == 6016 and "9.28.1 capture" in facts["memoryBusWidth"][1]
    assert facts["multiProcessorCount"][0] == 132
    assert profiles.captured_facts("ACME GPU") == {}
    assert profiles.bundled_profile_of("NVIDIA H200") == "h200" and profiles.bundled_profile_of("ACME") is None


def test_an_oldest_release_profile_gets_what_newer_ones_require_from_the_compute_capability():
    old = _renamed(DeviceProfile.bundled("h100", CAPTURED), "ACME GPU").for_release(OLDEST)
    assert "maxThreadsPerBlock" not in old.properties  # 9.10.2 neither reads nor writes it
    up = old.for_release(CAPTURED)  # every GPU since compute capability 2.0: 1024 (deviceVer 900 here)
    assert up.properties == _renamed(DeviceProfile.bundled("h100", CAPTURED), "ACME GPU").properties
    assert profiles.gpu_facts("ACME GPU", 900) == {"maxThreadsPerBlock": 1024}
    assert profiles.gpu_facts("NVIDIA H100 80GB HBM3", 900) == {"maxThreadsPerBlock": 1024, "memoryBusWidth": 5120}
    assert profiles.gpu_facts("NVIDIA H200", 900) == {"maxThreadsPerBlock": 1024}  # its capture gives the rest
    props = old.properties
    props["deviceVer"] = 130  # compute capability 1.3: no published fact, and no GPU cuDNN 9 runs on
    with pytest.raises(DeviceProfileError, match="deviceVer: 130 is no SM version cuDNN 9 runs on"):
        DeviceProfile(json.dumps(props), cudnn_version=OLDEST, source="ancient.json")


@pytest.mark.parametrize("name", ["h100", "h200"])
def test_gpu_facts_agree_with_the_captures(name):
    # the bus width (captured, else published) and the capture's memory clock give the published bandwidth (HBM: 2
    # transfers per clock)
    props = json.loads(_capture_text(name))
    table = json.loads(profiles.GPU_FACTS.read_text())["gpus"][props["deviceName"]]
    captured = profiles.captured_facts(props["deviceName"]).get("memoryBusWidth")
    bits = captured[0] if captured else profiles.gpu_facts(props["deviceName"])["memoryBusWidth"]
    gbs = props["memClockRateKHz"] * 1e3 * 2 * bits / 8 / 1e9
    assert gbs == pytest.approx(table["memoryBandwidthGBs"], rel=0.03)
    assert profiles.gpu_facts("ACME GPU") == {}


def test_a_newer_release_capture_loads_and_converts_for_older_ones(tmp_path, cudnn_version):
    newer = _newer_capture()
    # every member 9.19 does not read is dropped: the 9.19 capture again
    assert newer.for_release(CAPTURED).deviceprop_json == _capture_text("h100")
    assert newer.for_release(CAPTURED).converted_from == 92801
    # saved and loaded, it keeps what it is; on the loaded release it finalizes
    back = DeviceProfile.load(newer.save(tmp_path / "h100_deviceprop_cudnn92801.json"))
    assert back.cudnn_version == 92801 and back.properties == newer.properties
    assert back.descriptor().finalized
    assert versions.versions_compatible(back.for_release().cudnn_version, cudnn_version)


@NO_TABLE
def test_conversion_for_a_release_without_a_table_keeps_every_member():
    far = "9.99.0"  # newer than every table: what it reads is unknown, cuDNN decides (descriptor() names a refusal)
    p = DeviceProfile.bundled("h100", far)
    assert p.cudnn_version == 99900 and p.properties["memoryBusWidth"] == 5120
    newer = _newer_capture().for_release(far)
    assert newer.properties == _newer_capture().properties
    unknown = _renamed(DeviceProfile.bundled("h100", CAPTURED), "ACME GPU")
    assert "memoryBusWidth" not in unknown.for_release(far).properties  # no fact, no refusal: cuDNN's say


# -- refusals: a GPU the facts do not know, a release without profiles, no release -----------------------------------
def test_unknown_gpu_is_refused_with_the_fix():
    acme = _renamed(DeviceProfile.bundled("h100", CAPTURED), "ACME GPU")
    with pytest.raises(DeviceProfileVersionError) as info:
        acme.for_release(NEWER)
    msg = str(info.value)
    for part in ("ACME GPU", "ACME GPU.json", "captured with cuDNN 9.19.0", "lacks memoryBusWidth", "cuDNN 9.28.1 requires",
                 "facts={'memoryBusWidth': ...}", "DeviceProfile.capture"):
        assert part in msg, part
    assert info.value.missing == ("memoryBusWidth",)
    assert info.value.profile_version == CAPTURED and info.value.loaded_version == 92801
    given = acme.for_release(NEWER, facts={"memoryBusWidth": 4096})
    assert given.properties["memoryBusWidth"] == 4096 and given.device_name == "ACME GPU"
    # the same GPU converts for every release that does not need the member
    assert acme.for_release("9.22.0").properties == acme.properties


def test_json_of_another_release_than_it_says_names_the_release_and_the_fix(tmp_path):
    newer = _newer_capture().deviceprop_json  # what 9.28.1 writes, in a file that says 9.19.0
    path = tmp_path / "h100_deviceprop_cudnn91900.json"
    path.write_text(newer)
    with pytest.raises(DeviceProfileError, match=r"smCountOrigin: unknown member .*as cuDNN 9\.19\.0 writes it.*"
                                                 r"cudnn_version=.*_cudnn<MMmmpp>\.json"):
        DeviceProfile.load(path)
    assert DeviceProfile.load(path, cudnn_version="9.28.1").properties == json.loads(newer)
    older = json.loads(_capture_text("h100"))  # what 9.19.0 writes, said to be 9.28.1's
    with pytest.raises(DeviceProfileError, match=r'missing member "memoryBusWidth".*as cuDNN 9\.28\.1 writes it'):
        DeviceProfile(json.dumps(older), cudnn_version="9.28.1")


def test_facts_are_checked():
    h100 = DeviceProfile.bundled("h100", CAPTURED)
    with pytest.raises(TypeError, match="facts: expected a dict"):
        h100.for_release(NEWER, facts=[("memoryBusWidth", 5120)])
    with pytest.raises(DeviceProfileError, match="facts: cuDNN 9.19.0 reads no deviceprop member memoryBusWidth"):
        h100.for_release(CAPTURED, facts={"memoryBusWidth": 5120})
    with pytest.raises(DeviceProfileError, match="memoryBusWidth"):
        h100.for_release(NEWER, facts={"memoryBusWidth": "wide"})
    assert h100.for_release(NEWER, facts={"memoryBusWidth": 4000}).properties["memoryBusWidth"] == 4000


def test_unknown_release_of_the_profile_is_refused_unless_allowed(h200):
    p = DeviceProfile(h200.deviceprop_json)  # the loaded release's JSON, but no release recorded
    with pytest.raises(DeviceProfileVersionError, match="does not say which cuDNN release wrote it.*cudnn_version"):
        p.descriptor()
    assert p.descriptor(allow_version_mismatch=True).finalized
    with pytest.raises(DeviceProfileError, match="unknown"):
        p.save("never-written.json")


def test_cudnn_refusal_names_the_member_and_the_fix(h200):
    # what cuDNN 9.28.1 logs for a profile without memoryBusWidth (its log, verbatim), as descriptor() reads it
    log = ['CuDNN (v92801 4) function cudnnBackendFinalize() called:\n'
           '        Error: CUDNN_STATUS_BAD_PARAM; Reason: !json_object.HasMember(key)\n'
           '        Error: CUDNN_STATUS_BAD_PARAM; Reason: convert_child_from_json(json_object, "memoryBusWidth", '
           'deviceProp.memoryBusWidth)\n        Error: CUDNN_STATUS_BAD_PARAM; Reason: from_json(d)\n']
    error = cb.errors.make_error(2000, "cudnnBackendFinalize", cudnn_message="!json_object.HasMember(key)")
    refusal = h200._refusal(error, log)
    assert isinstance(refusal, DeviceProfileVersionError) and refusal.missing == ("memoryBusWidth",)
    assert "refused the profile" in str(refusal) and "lacks memoryBusWidth" in str(refusal)
    assert "facts={'memoryBusWidth': ...}" in str(refusal)
    typed = h200._refusal(error, [log[0].replace("!json_object.HasMember(key)", "!json_object.Is<T>()")])
    assert type(typed) is DeviceProfileError and "cannot read member 'memoryBusWidth'" in str(typed)
    assert h200._refusal(error, ["Reason: something else"]) is None


# -- profiles of another release where profiles are used ------------------------------------------------------------
def test_another_releases_profile_is_converted_for_the_loaded_one(h200, cudnn_version):
    other = _newer_capture() if not versions.versions_compatible(cudnn_version, 92801) else \
        DeviceProfile.bundled("h100", CAPTURED)
    dp = other.descriptor()
    assert dp.finalized
    assert json.loads(dp.get_keyword("json_representation")) == other.for_release().properties


def test_unconvertible_profiles_are_refused_where_profiles_are_used(h200, cudnn_version):
    from cudnn_backend.runtime.engines import list_engines
    from cudnn_backend.runtime.heuristics import build_first_plan, get_configs

    g = notebook_conv_graph()
    unknown_release = DeviceProfile(h200.deviceprop_json)
    acme = _renamed(DeviceProfile.bundled("h100", CAPTURED), "ACME GPU")
    needs = set(profiles.release_members(cudnn_version).required) - set(acme.properties)
    cases = [unknown_release] + ([acme] if needs else [])
    for p in cases:
        with pytest.raises(DeviceProfileVersionError):
            get_configs(g, "A", p)
        with pytest.raises(DeviceProfileVersionError):
            build_first_plan(g, device_profile=p)
        with pytest.raises(DeviceProfileVersionError):
            list_engines(g, p)
    if not needs:  # the loaded release reads what 9.19 wrote: the unknown GPU works as it is
        assert len(get_configs(g, "A", acme)) > 0


def test_allow_version_mismatch_hands_the_json_over_as_it_is(cudnn_version):
    from cudnn_backend.runtime.heuristics import get_configs

    # a profile whose members differ from the loaded release's: converted by default, refused as it is
    other = CAPTURED if versions.versions_compatible(cudnn_version, 92801) else 92801
    p = DeviceProfile.bundled("h100", other)
    loaded = profiles.release_members(cudnn_version)
    if loaded.known is None:
        pytest.skip(f"cuDNN {versions.format_version(cudnn_version)} has no table: which members it reads is its own "
                    "to say")
    differ = "|".join(sorted(set(p.properties) ^ set(loaded.known)))  # memoryBusWidth, maxThreadsPerBlock...
    assert differ
    assert p.descriptor().finalized
    with pytest.raises(ValueError, match=differ):  # the cached converted descriptor is not handed out
        p.descriptor(allow_version_mismatch=True)
    assert DeviceProfile.bundled("h100", other, allow_version_mismatch=True).deviceprop_json == _capture_text("h100")
    # labelled another release that reads the same members: handed over unconverted, and accepted
    alike = [r for r in TABLE_RELEASES if not versions.versions_compatible(r, cudnn_version)
             and profiles.release_members(r).known == loaded.known]
    if not alike:
        pytest.skip(f"no release of the matrix reads exactly the members cuDNN {versions.format_version(cudnn_version)} "
                    "reads")
    json_text = DeviceProfile.bundled("h200").deviceprop_json
    labelled = DeviceProfile(json_text, cudnn_version=alike[0])
    assert labelled.descriptor(allow_version_mismatch=True).get_keyword("json_representation") == json_text
    assert len(get_configs(notebook_conv_graph(), "A", labelled, allow_version_mismatch=True)) > 0
    trusting = DeviceProfile(json_text, cudnn_version=alike[0], allow_version_mismatch=True)
    assert trusting.descriptor().get_keyword("json_representation") == json_text


@NO_TABLE  # (a patch level without a table of its own)
def test_patch_level_difference_is_accepted(h200, cudnn_version):
    other = cudnn_version + 1 if cudnn_version % 100 < 99 else cudnn_version - 1  # another patch of this release
    assert other // 100 == cudnn_version // 100 and other != cudnn_version
    patched = DeviceProfile(h200.deviceprop_json, cudnn_version=other)
    patched.check_version()
    assert patched.for_release().deviceprop_json == patched.deviceprop_json
    assert patched.descriptor().finalized


def test_release_older_than_device_profiles_is_refused(h200):
    with pytest.raises(DeviceProfileVersionError, match="cuDNN 9.7.0 takes no device profile.*newer cuDNN"):
        h200.for_release("9.7.0")
    assert profiles.offline_profiles("9.7.0")["h200"].startswith("unavailable: cuDNN 9.7.0")


def test_converted_profiles_pickle_copy_and_save(tmp_path):
    p = DeviceProfile.bundled("h100", NEWER)
    for q in (pickle.loads(pickle.dumps(p)), copy.copy(p), copy.deepcopy(p)):
        assert q == p and q.converted_from == CAPTURED and q.filled == p.filled
    back = DeviceProfile.load(p.save(tmp_path / "h100_928.json"))
    assert back == p and back.origin == p.origin and back.plan_risk() == p.plan_risk()
    data = json.loads((tmp_path / "h100_928.json").read_text())
    data["filled"] = ["memoryBusWidth"]
    (tmp_path / "bad_928.json").write_text(json.dumps(data))
    with pytest.raises(DeviceProfileError, match="'filled' must be an object"):
        DeviceProfile.load(tmp_path / "bad_928.json")


# -- files -----------------------------------------------------------------------------------------
def test_save_load_round_trip(h200, tmp_path):
    path = h200.save(tmp_path / "h200.json")
    data = json.loads(path.read_text())
    assert data["format"] == profiles.FORMAT
    assert data["device_name"] == "NVIDIA H200"
    assert data["cudnn_version"] == h200.cudnn_version
    assert data["cudnn_version_string"] == h200.cudnn_version_string
    assert data["deviceprop"]["deviceName"] == "NVIDIA H200"
    back = DeviceProfile.load(path)
    assert back.properties == h200.properties
    assert back.cudnn_version == h200.cudnn_version
    assert back.device_name == h200.device_name
    assert back.descriptor().finalized
    # our file records the release that wrote it: the same one given is fine, another is refused, not taken
    assert DeviceProfile.load(path, cudnn_version=h200.cudnn_version_string).cudnn_version == h200.cudnn_version
    other = 91000 if h200.cudnn_version != 91000 else 91900
    with pytest.raises(DeviceProfileError, match=r"cudnn_version=.* contradicts .*h200\.json, which records cuDNN"):
        DeviceProfile.load(path, cudnn_version=other)
    with pytest.raises(DeviceProfileError, match="contradicts"):
        DeviceProfile.from_json(path.read_text(), other)


def test_load_raw_json_version_from_file_name(tmp_path):
    path = tmp_path / "mygpu_deviceprop_cudnn91900.json"
    path.write_text(H200_PROFILE_JSON.read_text())
    p = DeviceProfile.load(path)
    assert p.cudnn_version == 91900 and p.device_name == "NVIDIA H200"
    assert p.source == str(path)
    assert profiles.version_from_filename("a_cudnn92800.json") == 92800
    assert profiles.version_from_filename("profile.json") is None


def test_load_raw_json_needs_a_version(tmp_path):
    path = tmp_path / "profile.json"
    path.write_text(H200_PROFILE_JSON.read_text())
    with pytest.raises(DeviceProfileError, match="cudnn_version="):
        DeviceProfile.load(path)
    p = DeviceProfile.load(path, cudnn_version="9.19.0")
    assert p.cudnn_version == 91900
    # an explicit version wins over the file name
    named = tmp_path / "x_deviceprop_cudnn91900.json"
    named.write_text(H200_PROFILE_JSON.read_text())
    assert DeviceProfile.load(named, cudnn_version=92200).cudnn_version == 92200


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


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a":' * 100_000, "[" * 100_000 + "]" * 100_000])
def test_load_deeply_nested_file_is_a_clear_error(tmp_path, text):
    # json.loads recurses: a deep file must be refused as a profile, never a RecursionError
    path = tmp_path / "deep_deviceprop_cudnn91900.json"
    path.write_text(text)
    with pytest.raises(DeviceProfileError, match="nested too deeply"):
        DeviceProfile.load(path)


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


def test_a_profile_named_or_loaded_per_call_leaves_nothing_behind():
    # each call makes a profile and its descriptor; the map from descriptors to profiles must not keep them alive
    gc.collect()
    before = len(profiles._PROFILE_OF)
    for _ in range(20):
        profiles.as_deviceprop("h200")
        profiles.as_deviceprop(H200_PROFILE_JSON)
    gc.collect()
    assert len(profiles._PROFILE_OF) == before
    # a profile still caches the descriptor someone holds, and knows it as its own
    profile = DeviceProfile.bundled("h200")
    held = profile.descriptor()
    assert profile.descriptor() is held and profiles.profile_of(held) is profile


@pytest.mark.parametrize("member, value, message", [
    ("deviceVer", 0, r"0 is no SM version"), ("deviceVer", 12345, r"12345 is no SM version"),
    ("deviceVer", 905, r"905 is no SM version"), ("deviceVer", 300, r"300 is no SM version cuDNN 9 runs on"),
    ("warpSize", 33, r"33; every CUDA GPU.s is 32")])
def test_a_profile_whose_identity_no_gpu_has_is_refused_naming_the_member(member, value, message):
    # cuDNN answers deviceVer 0 with ARCH_MISMATCH naming nothing, and takes 12345 or a warp of 33
    h200 = DeviceProfile.bundled("h200")
    props = dict(json.loads(h200.deviceprop_json), **{member: value})
    with pytest.raises(DeviceProfileError, match=rf"^deviceprop_json: device profile JSON: {member}: {message}"):
        DeviceProfile(json.dumps(props), cudnn_version=h200.cudnn_version)


def test_an_l2_cache_cudnns_norm_heuristics_abort_on_is_refused_naming_it(h200):
    # within 640 KiB of 2^31 cuDNN 9.19 and 9.28 abort the process ("Timing model abort") in a norm's heuristics
    members = json.loads(h200.for_release().deviceprop_json)
    members["l2CacheSize"] = 2 ** 31 - 1
    with pytest.raises(DeviceProfileError, match=r"l2CacheSize: expected an integer in \[0, 1073741824\], got "
                                                 r"2147483647"):
        DeviceProfile(deviceprop_json=json.dumps(members), cudnn_version=cb.get_version()).descriptor()
    members["l2CacheSize"] = 2 ** 30
    DeviceProfile(deviceprop_json=json.dumps(members), cudnn_version=cb.get_version()).descriptor()


def test_a_misspelt_member_of_our_file_is_named_not_ignored():
    data = DeviceProfile.bundled("h200").to_dict()
    data["cudnn_verison"] = data.pop("cudnn_version")
    with pytest.raises(DeviceProfileError, match=r"unknown member 'cudnn_verison'; did you mean cudnn_version"):
        DeviceProfile.from_json(json.dumps(data))


def test_a_profile_saved_with_a_byte_order_mark_loads(tmp_path):
    profile = DeviceProfile.bundled("h200")
    f = tmp_path / "bom_profile.json"
    f.write_text(json.dumps(profile.to_dict()), encoding="utf-8-sig")  # as some editors save
    assert DeviceProfile.load(f).deviceprop_json == profile.deviceprop_json
    assert DeviceProfile.from_json("\ufeff" + json.dumps(profile.to_dict())).deviceprop_json == profile.deviceprop_json


def test_save_writes_whole_or_names_the_path(tmp_path):
    profile = DeviceProfile.bundled("h200")
    assert DeviceProfile.load(profile.save(tmp_path / "p.json")).deviceprop_json == profile.deviceprop_json
    with pytest.raises(FileNotFoundError, match=r"No such file or directory: '.*nowhere/p.json'$"):
        profile.save(tmp_path / "nowhere" / "p.json")


@pytest.mark.parametrize("change, message", [
    ({"device_name": 5}, r"device_name must be a str, not int"),
    ({"source": [1, 2]}, r"source must be a str, not list"),
    ({"cudnn_version_string": "9.19.0"}, r"cudnn_version_string '9.19.0' contradicts cudnn_version"),
    ({"format": "something"}, r"format 'something' is not this package's device profile format"),
])
def test_the_members_of_our_file_are_checked(change, message):
    data = DeviceProfile.bundled("h200", NEWER).to_dict()
    data.update(change)
    with pytest.raises(DeviceProfileError, match=message):
        DeviceProfile.from_json(json.dumps(data))


def test_a_wrapped_profile_contradicting_itself_is_refused(tmp_path, h200):
    wrapped = json.loads(json.dumps(h200.to_dict()))
    path = tmp_path / "wrapped.json"
    path.write_text(json.dumps({**wrapped, "device_name": "NVIDIA H100"}))
    with pytest.raises(DeviceProfileError, match=r"device_name 'NVIDIA H100' contradicts the deviceprop's deviceName "
                                                 r"'NVIDIA H200'; edit one$"):
        DeviceProfile.load(path)
    for version in (0, -1, -2 ** 63):
        path.write_text(json.dumps({**wrapped, "format_version": version}))
        with pytest.raises(DeviceProfileError, match=rf"format_version {version} is no version"):
            DeviceProfile.load(path)


def test_a_profile_filled_on_the_way_never_says_captured():
    # a 9.28.1 capture converted for 9.19 (which drops the members it does not read) and back: those members come
    # from the bundled capture now, not from this GPU's, and its origin says so; members set by hand are a risk
    capture = DeviceProfile.bundled("h200", NEWER_CAPTURE)
    edited = DeviceProfile.from_json(json.dumps(dict(capture.properties, memoryBusWidth=5120)),
                                     cudnn_version=NEWER_CAPTURE)
    back = edited.for_release(CAPTURED).for_release(NEWER_CAPTURE)
    assert back.properties["memoryBusWidth"] == 6016 and "memoryBusWidth" in back.filled
    assert back.converted_from == NEWER_CAPTURE
    assert back.origin.startswith(f"converted for cuDNN {NEWER} from a cuDNN {NEWER} capture; ")
    assert "memoryBusWidth" in back.origin
    assert capture.for_release(NEWER_CAPTURE) is capture  # nothing filled: the capture itself
    by_hand = capture.for_release(NEWER_CAPTURE, facts={"multiProcessorCount": 100})
    assert by_hand.given_members == ("multiProcessorCount",)
    assert by_hand.origin.endswith("multiProcessorCount given by hand")
    assert "multiProcessorCount 100 was set by hand, not from a capture" in by_hand.plan_risk()


def test_a_bundled_name_wins_over_what_the_current_folder_holds(tmp_path, monkeypatch):
    """A folder (or file) named h200 in the current folder does not hide the bundled profile; ./h200 names it."""
    from cudnn_backend.runtime.profiles import as_deviceprop, profile_source
    from cudnn_backend.tune.graphs import device_profile

    (tmp_path / "h200").mkdir()
    monkeypatch.chdir(tmp_path)
    assert profile_source("h200") == ("bundled", "h200") and profile_source("H200") == ("bundled", "h200")
    assert profile_source("./h200")[0] == "file" and profile_source("mine.json")[0] == "file"
    assert as_deviceprop("h200").finalized and device_profile("h200").device_name == "NVIDIA H200"
    with pytest.raises(DeviceProfileError, match=r"cannot read device profile"):
        as_deviceprop("./h200")


def test_facts_equal_to_the_profiles_are_checked_and_recorded():
    """for_release(facts=) returned the profile itself where a given value equalled its own (5120.0 == 5120,
    False == 0): a float or a bool went unchecked, and the fact was not recorded as given."""
    h100 = DeviceProfile.bundled("h100")  # (members every release reads)
    sms = h100.properties["multiProcessorCount"]
    with pytest.raises(DeviceProfileError, match=rf"multiProcessorCount: expected an integer .* got {float(sms)}"):
        h100.for_release(h100.cudnn_version, facts={"multiProcessorCount": float(sms)})
    assert h100.properties["isTccDriver"] == 0
    with pytest.raises(DeviceProfileError, match=r"isTccDriver: expected an integer .* got false"):
        h100.for_release(h100.cudnn_version, facts={"isTccDriver": False})
    given = h100.for_release(h100.cudnn_version, facts={"multiProcessorCount": sms})
    assert given.filled["multiProcessorCount"] == "given" and given.properties == h100.properties


@pytest.mark.parametrize("text, kind", [("PLAN", "a plan"), ("[1, 2]", "a JSON list"),
                                        ('{"hello": 1}', "an object without them")])
def test_json_that_is_no_device_profile_is_named_so(text, kind):
    """It was asked for the cuDNN version that wrote it, as if it were a raw deviceprop JSON."""
    from tests.helpers import offline

    text = offline.plan_json() if text == "PLAN" else text
    with pytest.raises(DeviceProfileError, match=rf"^the JSON is not a device profile: .*; this is {kind}$"):
        DeviceProfile.from_json(text)


@pytest.mark.parametrize("member, value, where", [
    ("source", "evil\x1b[2J\x1b]0;pwned\x07", "source"), ("filled", {"memoryBusWidth": "given\x1b[31m"},
                                                          "filled.memoryBusWidth"),
    ("device_facts", {"max_cluster_size": {"source": "\x1b[5m"}}, "device_facts.max_cluster_size.source")])
def test_a_profiles_text_holds_no_control_characters(member, value, where):
    """`profile show` prints these: a terminal would run the escape sequences."""
    data = dict(DeviceProfile.bundled("h200").to_dict(), **{member: value})
    with pytest.raises(DeviceProfileError, match=rf"^the device profile: {re.escape(where)}: control character "):
        DeviceProfile.from_json(json.dumps(data))


@pytest.mark.parametrize("capture", ["h200_deviceprop_cudnn91900.json", "h200_deviceprop_cudnn92801.json"])
def test_a_profile_handed_over_unconverted_that_the_loaded_release_cannot_read_says_to_convert_it(capture):
    from cudnn_backend.core import json_checks

    profile = DeviceProfile.load(PACKAGE_DATA / capture, allow_version_mismatch=True)
    loaded = versions.loaded_version()
    if profile.cudnn_version == loaded:
        pytest.skip("the loaded release wrote this capture")
    try:
        json_checks.check_deviceprop_json(profile.deviceprop_json, release=loaded)
    except ValueError as e:
        refusal = str(e)
    else:
        assert profile.descriptor().finalized  # its members are the loaded release's too: handed over as it is
        return
    with pytest.raises(DeviceProfileVersionError) as e:
        profile.descriptor()
    assert str(e.value).startswith(f"the loaded cuDNN ({versions.format_version(loaded)}) does not read this cuDNN "
                                   f"{versions.format_version(profile.cudnn_version)} profile for NVIDIA H200 as it is: "
                                   f"{refusal}. Leave out allow_version_mismatch= to have it converted"), str(e.value)
    assert profile.descriptor(allow_version_mismatch=False).finalized  # converted: read


@pytest.mark.skipif(cb.get_version() < 92302, reason="smCountOrigin is read from cuDNN 9.23.2 on")
@pytest.mark.parametrize("origin", [2, 7, 255])
def test_a_value_cudnn_refuses_past_the_package_s_checks_names_the_member(tmp_path, origin):
    """cuDNN's range for a member can be narrower than the package's table (smCountOrigin: 0 or 1 in 9.28): its
    BAD_PARAM is the profile's refusal, naming the file and the member, as the package's own checks do."""
    base = DeviceProfile.bundled("h200")
    doc = json.loads(base.deviceprop_json)
    if "smCountOrigin" not in doc:
        pytest.skip("this profile has no smCountOrigin")
    doc["smCountOrigin"] = origin
    path = tmp_path / f"odd_deviceprop_cudnn{base.cudnn_version}.json"
    path.write_text(json.dumps(doc))
    try:
        profile = DeviceProfile.load(path)
    except DeviceProfileError as e:  # (a release whose table knows the range refuses it at load)
        assert "smCountOrigin" in str(e)
        return
    with pytest.raises(DeviceProfileError, match=rf"refused the device profile for .* \({re.escape(str(path))}; .*\): "
                                                 r"member 'smCountOrigin' is out of its range \(CUDNN_STATUS_BAD_PARAM"):
        profile.descriptor()
