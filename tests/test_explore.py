"""The main job, offline (no GPU): heuristics rankings, engines and plans against the H200 profile."""
import csv
import json

import pytest

from cudnn_backend.__main__ import main
from cudnn_backend import explore as ex_mod

from cudnn_backend.info import gpu_available

HAVE_GPU = gpu_available()

pytestmark = pytest.mark.skipif(HAVE_GPU, reason="offline behaviour (a GPU machine times instead)")


def test_explore_default_offline(capsys, tmp_path):
    out_json, out_csv = tmp_path / "x.json", tmp_path / "x.csv"
    assert main(["explore", "--quiet", "--json", str(out_json), "--csv", str(out_csv)]) == 0
    text = capsys.readouterr().out
    assert "pattern conv_bias_relu" in text and "no GPU: offline against the NVIDIA H200 profile" in text
    assert "heuristics A:" in text and "heuristics B:" in text
    assert "engines:" in text and "supported:" in text
    built, total = text.split("plans built offline: ")[1].split()[0].split("/")
    assert int(built) == int(total) > 0
    data = json.loads(out_json.read_text())
    assert data[0]["pattern"] == "conv_bias_relu" and data[0]["timed"] is False
    assert len(data[0]["heuristics"]["A"]) >= 1 and data[0]["engines"]
    rows = list(csv.DictReader(out_csv.open()))
    assert len(rows) == int(total) and all(r["status"] == "plan ok" for r in rows)


def test_explore_matmul_runtime_compiled_offline():
    ex = ex_mod.explore("matmul_bias_gelu", batch=4, m=64, n=128, k=32, quiet=True)
    assert not ex.timed and ex.results
    assert any("RUNTIME_COMPILATION" in r.behavior_notes for r in ex.results)
    assert all(r.status in ("plan ok", "plan failed") for r in ex.results)
    assert ex.headroom() is None  # nothing timed offline


@pytest.mark.parametrize("pattern", ["conv", "conv_dgrad", "conv_wgrad", "layernorm"])
def test_explore_other_patterns_offline(pattern):
    sizes = dict(tokens=256, hidden=64) if pattern == "layernorm" else dict(n=2, c=16, h=8, w=8, k=16)
    ex = ex_mod.explore(pattern, modes=("A",), quiet=True, **sizes)
    assert ex.heuristics["A"], ex.notes
    report = ex_mod.report(ex)
    assert f"pattern {pattern}" in report


def test_unknown_pattern():
    with pytest.raises(ValueError, match="unknown pattern"):
        ex_mod.make_pattern("nope")
