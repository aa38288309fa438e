"""The command line's device profiles and info, as a user runs them: bundled profiles on the loaded release, profiles
of other releases converted, refusals in one line naming the option and the fix, `profile convert`, `info`."""
import json

import pytest

import cudnn_backend as cb
from cudnn_backend.core.json_checks import TABLE_RELEASES, table_release
from cudnn_backend.core.versions import format_version, versions_compatible
from cudnn_backend.runtime import profiles

from tests.cli.test_cli import OFFLINE, SMALL, run
from tests.helpers.env import LOADED, PACKAGE_DATA

H100_FILE = PACKAGE_DATA / "h100_deviceprop_cudnn91900.json"


def _acme(tmp_path, release="9.19.0"):
    """A profile file of a GPU the facts table does not know (the H100 capture renamed), for ``release``."""
    p = cb.DeviceProfile.bundled("h100", release)
    props = p.properties
    props["deviceName"] = "ACME GPU"
    acme = cb.DeviceProfile(json.dumps(props), cudnn_version=p.cudnn_version, source="acme")
    return acme.save(tmp_path / "acme.json")


def _one_line_error(r, *parts):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    # (a release without a table of its own is said once, before: news of the release, not of the error)
    lines = [line for line in r.stderr.strip().splitlines()
             if not (line.startswith("warning: cuDNN ") and "has no table of its own" in line)]
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    for part in parts:
        assert part in lines[0], (part, lines[0])
    return lines[0]


def test_profile_convert_and_the_mismatch_flag_have_help():
    r = run("profile", "convert", "--help")
    assert r.returncode == 0 and all(o in r.stdout for o in ("--to", "--set", "--out", "MEMBER=VALUE"))
    assert "--allow-version-mismatch" in run("explore", "--help").stdout


def test_info_names_the_release_where_it_was_found_and_the_offline_profiles():
    d = json.loads(run("info", "--json").stdout)
    assert d["cudnn_version"] == format_version(LOADED)
    assert d["cudnn_path"].endswith("libcudnn.so.9") and d["cudnn_found_via"]
    assert d["cudnn_support"].startswith("supported (9.10.2 to ")
    own = LOADED in TABLE_RELEASES
    assert d["json_table"].startswith(f"{format_version(LOADED if own else table_release(LOADED))} (")
    assert d["json_table"].endswith("(its own)") == own
    assert d["offline_profiles"] == profiles.offline_profiles()
    for name in ("h100", "h200"):  # each a capture of the loaded release, else converted (another patch too)
        captures = [v for v in (91900, 92801) if name == "h200" or v == 91900]
        own = [v for v in captures if v == LOADED]
        how = d["offline_profiles"][name]
        assert how.startswith(f"captured with cuDNN {format_version(own[0])}" if own else
                              f"converted for cuDNN {format_version(LOADED)} from a cuDNN "), how
        # a member filled from a published figure is said to be one
        assert ("published figures" in how) == bool(profiles.DeviceProfile.bundled(name).published_members)
    text = run("info").stdout
    assert "offline profiles" in text and "h100: " + d["offline_profiles"]["h100"][:20] in text


@pytest.mark.filterwarnings("ignore::cudnn_backend.errors.JsonTableFallbackWarning")
def test_info_places_a_release_in_the_support_range():
    from cudnn_backend.core.info import json_table, support

    newest = format_version(TABLE_RELEASES[-1])
    assert support(91002) == support(TABLE_RELEASES[-1]) == f"supported (9.10.2 to {newest})"
    assert support(90900) == f"older than the support range (9.10.2 to {newest}): untested"
    assert support(90500).endswith("no device profiles before cuDNN 9.8.0, so no offline work")
    assert support(TABLE_RELEASES[-1] + 100).startswith(f"newer than the newest release tested ({newest})")
    assert json_table(91900) == "9.19.0 (its own)"
    assert json_table(TABLE_RELEASES[-1] + 100) == f"{newest} (the nearest; members unknown to it passed through)"


@pytest.mark.skipif(not OFFLINE, reason="the offline main job")
@pytest.mark.parametrize("name", ["h100", "h200"])
def test_explore_with_each_bundled_profile_on_the_loaded_release(name):
    r = run("explore", *SMALL, "--device-profile", name, "--no-engines", "--top", "2")
    assert r.returncode == 0, r.stderr
    assert "configs built a plan for NVIDIA H" in r.stdout


@pytest.mark.skipif(not OFFLINE, reason="offline")
def test_unknown_gpu_is_refused_with_the_cli_fix_and_the_fix_works(tmp_path):
    path = _acme(tmp_path)
    needs = set(profiles.release_members(LOADED).required) - set(json.loads(path.read_text())["deviceprop"])
    r = run("explore", *SMALL, "--device-profile", str(path), "--no-engines", "--top", "1")
    if not needs:  # the loaded release reads what 9.19 wrote: no fact is needed
        assert r.returncode == 0, r.stderr
        return
    line = _one_line_error(r, "argument --device-profile:", "ACME GPU", "lacks memoryBusWidth",
                           f"cuDNN {format_version(LOADED)} requires", "cudnn-backend profile convert",
                           "--set memoryBusWidth=VALUE", "cudnn-backend profile capture")
    assert "facts=" not in line  # the command line's fix, not the Python one
    out = tmp_path / "acme_now.json"
    r = run("profile", "convert", str(path), "--set", "memoryBusWidth=4096", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["deviceprop"]["memoryBusWidth"] == 4096
    r = run("explore", *SMALL, "--device-profile", str(out), "--no-engines", "--top", "1")
    assert r.returncode == 0, r.stderr


def test_profile_convert_for_another_release_and_back(tmp_path):
    out = tmp_path / "h100_928.json"
    r = run("profile", "convert", "h100", "--to", "9.28.1", "--out", str(out))
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert data["cudnn_version"] == 92801 and data["converted_from"] == 91900
    assert data["deviceprop"]["memoryBusWidth"] == 5120
    back = tmp_path / "h100_919.json"
    assert run("profile", "convert", str(out), "--to", "9.19.0", "--out", str(back)).returncode == 0
    assert json.loads(back.read_text())["deviceprop"] == json.loads(H100_FILE.read_text())["deviceprop"]
    # the file converted for 9.28.1 serves the loaded release too
    r = run("profile", "show", str(out))
    assert r.returncode == 0 and "NVIDIA H100" in r.stdout


@pytest.mark.parametrize("release", ["9.99.0", "9.21.0"])
def test_profile_convert_for_a_release_no_table_describes_says_so(tmp_path, release):
    out = tmp_path / "h200.json"
    r = run("profile", "convert", "h200", "--to", release, "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["cudnn_version"] == int(release.replace(".", "")) * 10
    assert f"note: no table of this package lists the members cuDNN {release} reads (tables: 9.10.2, " in r.stderr
    assert "that release has the last word as it reads the file" in r.stderr


@pytest.mark.parametrize("args, option, part", [
    (["profile", "convert", "h100", "--to", "nine"], "--to", "cannot read a cuDNN version"),
    (["profile", "convert", "h100", "--to", "9.19.0", "--set", "memoryBusWidth=1"], "--set",
     "cuDNN 9.19.0 reads no deviceprop member memoryBusWidth"),
    (["profile", "convert", "h100", "--to", "9.28.1", "--set", "memoryBusWidth=wide"], "--set", "memoryBusWidth"),
    (["profile", "convert", "h100", "--to", "9.5.0"], "--to", "cuDNN 9.5.0 takes no device profile"),
    (["profile", "show", "no_such.json"], "FILE|NAME", "cannot read device profile"),
    (["explore", "--allow-version-mismatch"], "--allow-version-mismatch", "applies to a --device-profile"),
])
def test_profile_mistakes_are_one_line_naming_the_option(args, option, part):
    _one_line_error(run(*args), f"argument {option}", part)


@pytest.mark.skipif(not OFFLINE, reason="offline")
@pytest.mark.skipif(LOADED not in TABLE_RELEASES, reason="the loaded release has no table of its own: what it reads "
                    "is cuDNN's to say, and it may take the file as it is")
def test_allow_version_mismatch_gives_the_file_as_it_is(tmp_path):
    # a profile written for another release whose members differ: converted by default, given as it is on request
    other = "9.19.0" if versions_compatible(LOADED, 92801) else "9.28.1"
    profile = cb.DeviceProfile.bundled("h100", other)
    path = profile.save(tmp_path / "other.json")
    assert run("explore", *SMALL, "--device-profile", str(path), "--no-engines", "--top", "1").returncode == 0
    line = _one_line_error(run("explore", *SMALL, "--device-profile", str(path), "--allow-version-mismatch"),
                           "argument --device-profile:")
    differ = set(profile.properties) ^ set(profiles.release_members(LOADED).known)  # memoryBusWidth, ...
    assert any(member in line for member in differ), line
    # the fix is the conversion the option turned off, in the command line's words
    assert "Leave out --allow-version-mismatch to have it converted" in line and "--set" not in line, line


def test_a_raw_profile_without_its_release_names_the_command_lines_fix(tmp_path):
    """A raw deviceprop JSON whose file name does not say the cuDNN release: the command line has no
    cudnn_version= to pass (the Python API's fix), so the file name and `profile capture` are named."""
    capture = cb.DeviceProfile.bundled("h100", "9.19.0").deviceprop_json  # raw: cuDNN's JSON, no release in it
    raw = tmp_path / "mygpu.json"
    raw.write_text(capture)
    line = _one_line_error(run("explore", "--device-profile", str(raw)), "argument --device-profile:",
                           "does not record which cuDNN release wrote it",
                           "rename it <name>_deviceprop_cudnn<MMmmpp>.json after the release that captured it "
                           "(e.g. mygpu_deviceprop_cudnn91900.json)", "`cudnn-backend profile capture`")
    assert "cudnn_version=" not in line
    with pytest.raises(cb.DeviceProfileError, match="pass cudnn_version=") as e:  # Python keeps its own words
        cb.DeviceProfile.load(raw)
    assert e.value.option == "cudnn_version"
    (tmp_path / "mygpu_deviceprop_cudnn91900.json").write_text(capture)  # the fix works
    r = run("explore", *SMALL, "--device-profile", str(tmp_path / "mygpu_deviceprop_cudnn91900.json"), "--top", "1",
            "--no-engines")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("name, stem", [("", "gpu"), ("/", "gpu"), (".", "gpu"), ("Ünïcode GPU", "n_code_gpu"),
                                        ("X" * 255, "x" * 64)])
def test_profile_convert_names_its_file_from_any_device_name(tmp_path, name, stem):
    # the default file name: the GPU's name in letters and digits, never empty nor too long for the file system
    data = profiles.DeviceProfile.bundled("h200").to_dict()
    data["deviceprop"]["deviceName"] = data["device_name"] = name
    src = tmp_path / "src.json"
    src.write_text(json.dumps(data))
    r = run("profile", "convert", str(src), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    written = [p.name for p in tmp_path.iterdir() if p.name != "src.json"]
    assert written == [f"{stem}_deviceprop_cudnn{LOADED}.json"], written


@pytest.mark.skipif(not OFFLINE or cb.core.device.driver() != "stand-in",
                    reason="a machine without a CUDA driver (offline work on the stand-in)")
def test_keeping_cudnn_off_the_stand_in_is_said_as_the_machine_s_setting_not_a_profile_s_fault():
    env = {"CUDNN_BACKEND_NODEVICE": "0"}
    d = json.loads(run("info", "--json", env=env).stdout)
    shown = run("profile", "show", "h200", env=env)
    if shown.returncode == 0:  # (a release that finalizes a profile without the stand-in: usable, and said so)
        assert not d["offline_profiles"]["h200"].startswith("unusable"), d["offline_profiles"]
        return
    assert all(how.startswith("unusable here: this machine has no CUDA driver, and $CUDNN_BACKEND_NODEVICE=0")
               for how in d["offline_profiles"].values()), d["offline_profiles"]
    for args in (("profile", "show", "h200"), ("explore", "conv_fwd", "--device-profile", "h200")):
        r = run(*args, env=env)
        assert r.returncode != 0
        line = [ln for ln in r.stderr.splitlines() if "error:" in ln]
        assert line and "$CUDNN_BACKEND_NODEVICE=0 keeps cuDNN off" in line[0], r.stderr
        assert "argument" not in line[0], line[0]  # (no option or argument is wrong)
