"""Two cuDNN releases side by side (tune/releases.py): which library a release names, the graph-by-graph comparison
of two explorations (times, kernels, configs slowed down or vanished, graphs lost), and a whole comparison offline
(the same release twice here; CI's release matrix and the GPU run compare real pairs)."""
import json
import os

import pytest

from cudnn_backend._bindings._loader import release_library
from cudnn_backend.tune.releases import compare_explorations, compare_releases
from cudnn_backend.tune.results import ConfigResult, Exploration
from cudnn_backend.tune.sweeps import Task

from tests.cli.test_cli import run
from tests.helpers.env import LOADED, version_text


def test_a_release_names_a_library(tmp_path, monkeypatch):
    assert release_library("default") is None and release_library("system") is None
    lib = tmp_path / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9"
    lib.parent.mkdir(parents=True)
    lib.write_bytes(b"\x7fELF")  # (the file is read as far as its magic)
    assert release_library(str(lib)) == str(lib.resolve())
    assert release_library(tmp_path) == str(lib.resolve())  # a pip --target folder
    carried = tmp_path / "carried" / "9.30.1" / "lib" / "libcudnn.so.9"
    carried.parent.mkdir(parents=True)
    carried.write_bytes(b"\x7fELF")
    monkeypatch.setenv("CUDNN_CARRY_DEST", str(tmp_path / "carried"))
    assert release_library("9.30.1") == str(carried.resolve())
    with pytest.raises(ValueError, match=r"no libcudnn.so.9 for '9\.30\.2' in .*carried/9\.30\.2.*carry_cudnn\.sh"):
        release_library("9.30.2")
    with pytest.raises(ValueError, match="neither a file, a folder nor a release"):
        release_library("nine")
    with pytest.raises(TypeError, match="expected a libcudnn.so.9 path"):
        release_library(3)
    # a file of another kind is refused here, not left to the child process that would load it
    (tmp_path / "notes.txt").write_text("not a library")
    for spec in (tmp_path / "notes.txt", "/etc/passwd"):
        with pytest.raises(ValueError, match=f"release: {str(spec)!r} is no shared library"):
            release_library(str(spec))
    text_release = tmp_path / "carried" / "9.30.3" / "libcudnn.so.9"
    text_release.parent.mkdir(parents=True)
    text_release.write_text("a text file by that name")
    with pytest.raises(ValueError, match=r"release: '9\.30\.3' is no shared library"):
        release_library("9.30.3")
    # the release this process loaded is found by its number too (the README's `compare --releases 9.19.0 9.28.1`)
    from cudnn_backend._bindings import _loader
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "no-cache"))  # (no carried copy of it found first)
    assert release_library(version_text(LOADED)) == _loader.load_cudnn().path


def _result(engine, time_us, status="ok", kernels=1, **knobs):
    return ConfigResult(engine, dict(knobs), "A", 0, ("A",), status=status, plan_built=True, time_us=time_us,
                        correct=status == "ok", checked_by="fp64 reference" if status == "ok" else "",
                        kernel_count=kernels, winner=False, first_pass_us=time_us,
                        reason="" if status == "ok" else "CUDNN_STATUS_NOT_SUPPORTED")


def _ex(results, version):
    return Exploration(name="g", device={}, cudnn_version=version, timed=True, results=results)


def test_two_explorations_compared_config_by_config():
    a = _ex([_result(7, 10.0, TILE=1), _result(7, 12.0, TILE=2), _result(9, 20.0), _result(3, 30.0)], "9.19.0")
    b = _ex([_result(7, 11.0, kernels=2, TILE=1), _result(7, 18.0, TILE=2),
             _result(9, None, status="plan refused")], "9.28.1")
    row = compare_explorations(a, b)
    assert row["A best us"] == 10.0 and row["B best us"] == 11.0 and row["best B/A"] == 1.1
    assert row["change"] == "same"  # 10% is within the default threshold: not "slower"
    assert row["A kernels"] == 1 and row["B kernels"] == 2
    assert row["slowed"] == "engine 7 TILE=2 1.50x"
    assert "engine 9 (plan refused: CUDNN_STATUS_NOT_SUPPORTED)" in row["vanished"]
    assert "engine 3 (not listed)" in row["vanished"]
    assert compare_explorations(a, b, slower=0.05)["change"] == "slower"
    lost = compare_explorations(a, _ex([_result(7, None, status="plan refused", TILE=1)], "9.28.1"))
    assert lost["change"] == "lost" and "none of the 1 config" in lost["reason"]
    assert compare_explorations(lost and _ex([], "9.19.0"), a)["change"] == "gained"
    refused = compare_explorations(a, None, error_b="CudnnVersionError: needs cuDNN >= 9.30")
    assert refused == {"graph": "g", "change": "lost", "reason": "B: CudnnVersionError: needs cuDNN >= 9.30"}
    assert compare_explorations(None, None, error_a="x", error_b="y")["change"] == "failed"


def test_the_loaded_release_against_itself_offline():
    tasks = [Task("conv_bias_relu", dict(n=2, c=16, h=8, w=8, k=16), "small cbr"), "matmul_bias_gelu"]
    c = compare_releases(["default", os.environ.get("CUDNN_BACKEND_LIBCUDNN") or "default"], tasks,
                         device_profile="h200")
    assert not c.timed and c.a["cudnn_version"] == c.b["cudnn_version"] == version_text(LOADED)
    assert [r["graph"] for r in c.rows] == ["small cbr", "matmul_bias_gelu"]
    assert all(r["change"] == "same" and r["A best"] == r["B best"] != "-" for r in c.rows), c.table()
    assert json.loads(json.dumps(c.to_dict()))["counts"] == {"same": 2}
    with pytest.raises(ValueError, match="two to compare"):
        compare_releases(["default"], tasks)
    with pytest.raises(ValueError, match="share a name"):
        compare_releases(["default", "default"], ["conv_bias_relu", "conv_bias_relu"])


def test_compare_releases_on_the_command_line(tmp_path):
    out = tmp_path / "cmp.json"
    r = run("compare", "--releases", "default", "default", "--graph", "examples/support_matrix.py:strided_dgrad_fp32",
            "--device-profile", "h200", "--all", "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "nothing is timed" in r.stderr and "strided_dgrad_fp32" in r.stdout
    assert json.loads(out.read_text())["format"] == "cudnn-backend release comparison"
    bad = run("compare", "--releases", "9.99.9", "default", "--preset", "user")
    assert bad.returncode == 2 and "argument --releases: no libcudnn.so.9 for '9.99.9'" in bad.stderr
    both = run("compare", "--releases", "default", "default", "--preset", "user", "--catalogue", "x.txt")
    assert both.returncode == 2 and "argument --catalogue" in both.stderr
