"""Explorations as a newcomer reads them: the config chosen (offline too) and why none was, explorations
read back from explore --json (several graphs too), plots whose labels and colours say what they are, plurals."""
import json

import pytest

from cudnn_backend.tune import plots
from cudnn_backend.tune.results import ConfigResult, Exploration, config_words, knob_words, plural
from cudnn_backend.tune.sweeps import Task, TaskResult, _winner_of

from tests.tune.test_explore import _fake_timed

DEVICE = {"name": "NVIDIA H200", "sm_version": 900, "sm_count": 132, "source": "profile"}


def _offline(*built):
    results = [ConfigResult(e, {"TILE_SIZE": i}, "A", i, ("A",), status="plan built" if ok else "plan refused",
                            plan_built=ok, reason="" if ok else "CUDNN_STATUS_NOT_SUPPORTED: refused")
               for i, (e, ok) in enumerate(built)]
    return Exploration("g", DEVICE, "9.19.0", False, results=results,
                       heuristics={"A": [(r.engine_index, r.knobs) for r in results]})


def test_chosen_offline_is_heuristics_first_config_that_built():
    ex = _offline((3, False), (7, True), (9, True))
    assert ex.chosen is ex.results[1] and ex.best is None and ex.failure() is None
    timed = _fake_timed()
    assert timed.chosen is timed.best


def test_failure_says_why_nothing_was_found():
    refused = _offline((3, False), (4, False))
    assert refused.chosen is None
    assert refused.failure() == ("none of the 2 configs of g built a plan (2 plan refused); "
                                 "CUDNN_STATUS_NOT_SUPPORTED: refused")
    empty = Exploration("g", DEVICE, "9.19.0", False, heuristics={"A": [], "B": []},
                        notes=["no engine config from heuristics A, B: Warning: NOT_SUPPORTED\nWarning: ARCH"])
    assert empty.failure() == "heuristics A, B proposed no engine config for g: Warning: NOT_SUPPORTED; Warning: ARCH"


def test_from_json_reads_one_graph_or_several():
    one = _fake_timed()
    assert Exploration.from_json(one.to_json()).results == one.results
    many = Exploration.from_json("[" + one.to_json() + "," + _offline((7, True)).to_json() + "]")
    assert [ex.name for ex in many] == ["fake", "g"] and many[1].chosen.engine_index == 7
    with pytest.raises(ValueError, match="the JSON is not an exploration"):
        Exploration.from_json('{"a": 1}')


def test_plot_labels_and_colours_say_what_they_are(tmp_path):
    pytest.importorskip("matplotlib")
    ex = _fake_timed()
    bars = plots.bars(ex)
    assert [b["time_us"] for b in bars] == sorted(b["time_us"] for b in bars)
    assert bars[0] == {"label": "engine 7 · TILE_SIZE=3 STAGES=3 · sweep", "time_us": 9.5, "kind": "best"}
    assert {b["kind"] for b in bars} == {"best", "pick", "sweep", "other"} <= set(plots.COLOURS)
    assert next(b for b in bars if b["kind"] == "pick")["label"].endswith("· A#0")
    heat = plots.heatmap_grid(ex)
    assert heat["knobs"] == ("TILE_SIZE", "STAGES") and (heat["filled"], heat["cells"]) == (5, 6)
    assert heat["note"].startswith("5 of 6 cells timed") and "an empty cell was not timed" in heat["note"]
    assert heat["grid"][0][2] is None and heat["grid"][1][2] == 9.5
    for draw in (plots.plot_exploration, plots.plot_knob_heatmap):
        png = draw(ex, tmp_path / f"{draw.__name__}.png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plural():
    assert [plural(n, "config") for n in (0, 1, 2, 1234)] == ["0 configs", "1 config", "2 configs", "1,234 configs"]
    assert plural(1, "entry", "entries") == "1 entry" and plural(3, "entry", "entries") == "3 entries"


def test_a_config_without_knobs_reads_engine_alone():
    """An engine without knobs is "engine 11", not "engine 11 -" (the "-" is for an empty knobs cell only)."""
    ex = _offline((11, True))
    ex.results[0].knobs = {}
    r = ex.results[0]
    assert r.knobs_text() == "-" and r.config_text() == "engine 11" and config_words(11, {}) == "engine 11"
    assert config_words(7, {"KERNEL_CFG": 21, "SPLIT_K": 2}) == "engine 7 KERNEL_CFG=21 SPLIT_K=2"
    assert knob_words({}) == "" and knob_words({"A": 1}) == "A=1"
    assert _winner_of(ex)["knobs_text"] == ""
    row = TaskResult(Task("g"), ok=True, exploration=ex, winner=_winner_of(ex)).row()
    assert row["winner"] == "engine 11"


def test_counted_words_are_plural_words():
    """Notes say "1 thread", "2 threads", never "thread(s)"."""
    import inspect
    import re

    from cudnn_backend.cli import render
    from cudnn_backend.tune import explorer
    from cudnn_backend.tune.strategies import racing

    for module in (explorer, racing, render):
        assert not re.findall(r"[a-z]\(s\)[\s\"']", inspect.getsource(module)), module.__name__


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(results=None), r"the JSON: results: expected list, not NoneType"),
    (lambda d: d.update(results=[1]), r"the JSON: results\[0\]: expected an object, not int"),
    (lambda d: d["results"][0].pop("engine_index"), r"the JSON: results\[0\]: engine_index: missing"),
    (lambda d: d["results"][0].update(knobs=[1]), r"the JSON: results\[0\]: knobs: expected dict, not list"),
    (lambda d: d.update(device=None), r"the JSON: device: expected dict, not NoneType"),
    (lambda d: d.update(timed="yes"), r"the JSON: timed: expected bool, not str"),
    # an optional field takes its type or null, nothing else
    (lambda d: d["results"][0].update(time_us="5"), r"the JSON: results\[0\]: time_us: expected float or None, not str"),
    (lambda d: d["results"][0].update(rank="0"), r"the JSON: results\[0\]: rank: expected int or None, not str"),
])
def test_from_json_names_the_field_of_another_type(change, message):
    data = json.loads(_offline((3, True)).to_json())
    change(data)
    with pytest.raises(ValueError, match=r"^exploration JSON: " + message):
        Exploration.from_json(json.dumps(data))
    with pytest.raises(ValueError, match=r"^exploration JSON: not valid JSON"):
        Exploration.from_json(_offline((3, True)).to_json()[:50])


def test_table_limit_is_a_count_of_rows():
    ex = _offline((1, True), (2, True), (3, False))
    assert ex.table(limit=2).count("plan built") == 2 and "plan refused" not in ex.table(limit=2)
    assert "plan" not in ex.table(limit=0)
    for bad, error, match in ((2.5, TypeError, r"^limit: expected an integer"), (True, TypeError, r"^limit: "),
                              (-1, ValueError, r"^limit: -1 is below the minimum 0")):
        with pytest.raises(error, match=match):
            ex.table(limit=bad)


def test_a_result_holding_infinity_or_nan_is_saved_as_null():
    """A config whose output holds a NaN has an infinite relative error (``checking.relative_error``): the
    exploration still saves, as standard JSON, and loads back."""
    import math

    r = ConfigResult(3, {}, "A", status="wrong result", rel_error=math.inf, correct=False, time_us=math.nan)
    text = Exploration("g", {"name": "x"}, "9.28.1", True, results=[r]).to_json()
    assert "Infinity" not in text and "NaN" not in text
    back = Exploration.from_json(text).results[0]
    assert back.rel_error is None and back.time_us is None and back.status == "wrong result"


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(offline_gaps=["x"]), r"the JSON: offline_gaps\[0\]: 'x' is no offline gap \(known: "),
    (lambda d: d.update(heuristics={"A": [[1]]}), r"the JSON: heuristics: expected \{mode: \[\[engine index, "),
])
def test_an_exploration_edited_by_hand_is_refused_as_it_is_read(change, message):
    data = json.loads(_offline((3, True)).to_json())
    change(data)
    with pytest.raises(ValueError, match=r"^exploration JSON: " + message):
        Exploration.from_json(json.dumps(data))
