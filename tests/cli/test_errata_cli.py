"""The command line's errata: `errata check` (lint, what each rule matches here, exit codes), --errata on explore,
tune and support (a bad file refused naming the option, exit code 2), --errata-out's checks."""
import json

import pytest

import cudnn_backend as cb
from cudnn_backend.tune import graphs
from tests.cli.test_cli import run
from tests.helpers.env import DATA

SAMPLES = DATA / "errata"


def _rule(**ext):
    return {"version": 1, "rules": [{"rule_id": "eng32", "operation": "ConvFwd_ADD_RELU_FWD", "engine": 32,
                                     "cudnn_backend": dict({"reason": "planted"}, **ext)}]}


def test_check_reads_cudnn_frontends_samples_and_says_what_applies_here():
    r = run("errata", "check", str(SAMPLES / "frontend_block_using_errata.json"))
    assert r.returncode == 0, r.stderr
    assert "valid: 2 rule(s) read" in r.stdout and "ConvBwdFilter_eng20" in r.stdout
    assert "SM 9.0" in r.stdout and "applies" in r.stdout
    r = run("errata", "check", str(SAMPLES / "frontend_dp4a_int8.json"), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["valid"] and doc["rules"][0]["rule"] == "ConvFwd_eng0" and not doc["rules"][0]["applies_here"]
    assert "8.0.0 up to 8.3.0" in doc["rules"][0]["not_here"][0] and doc["target"]["sm"] == 90


def test_check_matches_the_device_profiles_sm(tmp_path):
    path = tmp_path / "e.json"
    path.write_text(json.dumps(_rule(sm_start=86, sm_end=87)))
    r = run("errata", "check", str(path), "--device-profile", "h100", "--json")
    assert r.returncode == 0, r.stderr
    row = json.loads(r.stdout)["rules"][0]
    assert not row["applies_here"] and "SM 8.6 only (here: SM 9.0)" in row["not_here"][0]


@pytest.mark.parametrize("text, words", [
    ("{", "not JSON"), ('{"version": 3, "rules": []}', "'version': 3"),
    ('{"version": 1, "rules": [{"rule_id": "a", "operation": "ConvFwd"}]}', "rule 0 ('a'): has no 'engine'"),
])
def test_check_refuses_a_bad_file_with_exit_code_1(tmp_path, text, words):
    path = tmp_path / "bad.json"
    path.write_text(text)
    r = run("errata", "check", str(path))
    assert r.returncode == 1 and words in " ".join((r.stdout + r.stderr).split())
    assert "Traceback" not in r.stderr


def test_explore_and_support_honour_errata_and_refuse_bad_files(tmp_path):
    subject = graphs.resolve("conv_bias_relu", device_profile=cb.runtime.profiles.as_deviceprop("h200"))
    first = cb.get_configs(subject.op_graph, "A", "h200", errata=False)[0]  # heuristics' first pick, this release
    good = tmp_path / "good.json"
    doc = _rule()
    doc["rules"][0]["engine"] = first.engine_index
    good.write_text(json.dumps(doc))
    r = run("explore", "conv_bias_relu", "--device-profile", "h200", "--errata", str(good), "--no-engines", "--top",
            "3")
    assert r.returncode == 0, r.stderr
    assert "denied (rule eng32)" in r.stdout and "never built or run" in r.stdout
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1, "rules": [{"operation": "ConvFwd", "engine": "x"}]}')
    for command in (["explore"], ["tune"], ["support", "--name", "conv_fwd+bias+relu"]):
        r = run(*command, "--device-profile", "h200", "--errata", str(bad))
        assert r.returncode == 2, (command, r.stdout, r.stderr)
        assert "error: argument --errata" in r.stderr and "field 'engine'" in r.stderr
    r = run("explore", "--device-profile", "h200", "--errata", str(bad), env={"CUDNN_ERRATA_JSON_FILE": ""})
    assert r.returncode == 2
    r = run("explore", "--device-profile", "h200", "--no-engines", env={"CUDNN_ERRATA_JSON_FILE": str(bad)})
    assert r.returncode == 1 and "$CUDNN_ERRATA_JSON_FILE" in r.stderr and "Traceback" not in r.stderr
    r = run("explore", "--device-profile", "h200", "--errata-out", str(bad))
    assert r.returncode == 2 and "argument --errata-out" in r.stderr and "never written over" in r.stderr


def test_support_names_the_denied_config_and_its_rule(tmp_path):
    which = ["support", "--name", "conv_fwd+bias+relu", "--family", "conv_fwd", "--dtype", "fp16", "--layout", "nhwc",
             "--device-profile", "h200", "--no-cache", "--errata", ""]
    r = run(*which, "--json", str(tmp_path / "plain.json"))
    assert r.returncode == 0, r.stderr
    first = json.loads((tmp_path / "plain.json").read_text())["results"][0]
    assert first["name"] == "conv_fwd+bias+relu" and first["denied"] == []
    rule = tmp_path / "e.json"
    rule.write_text(json.dumps({"version": 1, "rules": [{"rule_id": "first", "operation": "ConvFwd_ADD_RELU_FWD",
                                                         "engine": first["chosen"]["engine"]}]}))
    r = run(*which[:-1], str(rule), "--json", str(tmp_path / "denied.json"))
    assert r.returncode == 0, r.stderr
    assert "config(s) denied" in r.stdout
    again = json.loads((tmp_path / "denied.json").read_text())["results"][0]
    assert again["denied"] and all(d.endswith("(rule first)") for d in again["denied"])
    assert again["chosen"] is None or again["chosen"]["engine"] != first["chosen"]["engine"]


@pytest.mark.skipif(cb.core.device.gpu_available(), reason="offline: nothing runs, nothing is recorded")
def test_offline_errata_out_note_names_its_own_option(tmp_path):
    r = run("explore", "conv_fwd", "--n", "1", "--errata-out", str(tmp_path / "e.json"))
    assert r.returncode == 0, r.stderr
    assert f"note: --errata-out: offline nothing runs, so nothing can be found wrong; nothing recorded in " \
           f"{tmp_path / 'e.json'}" in " ".join((r.stdout + r.stderr).split()), r.stderr
