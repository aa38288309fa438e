"""The TMA knobs of cuDNN 9.22+ (CUDNN_KNOB_TYPE_INPUT_TMA_ENABLE, CUDNN_KNOB_TYPE_OUTPUT_TMA_ENABLE): behind the
version gate when knobs are given, read like any knob from the engines that expose them (the knob search then tries
them: tests/tune/test_knob_search.py), offline against the H100 and H200 profiles.

Measured on cuDNN 9.28.1: no engine of the catalogue's graphs (every pattern, slice_matmul, the softmax and
band-mask attention included) exposes either knob for an H100 or an H200; the inventory test keeps that measurement
honest on whatever release runs it (an engine that starts exposing them is read and checked, not assumed away).
"""
import re

import pytest

from cudnn_backend import patterns as P
from cudnn_backend._bindings.enums import KnobType
from cudnn_backend.errors import CudnnVersionError, EngineError
from cudnn_backend.runtime import engines
from cudnn_backend.runtime.heuristics import get_configs
from tests.helpers.env import LOADED, loaded_has
from tests.helpers.releases import profile

TMA = (KnobType.CUDNN_KNOB_TYPE_INPUT_TMA_ENABLE, KnobType.CUDNN_KNOB_TYPE_OUTPUT_TMA_ENABLE)
HAS_TMA = loaded_has("9.22.0")


@pytest.mark.parametrize("knob", ["INPUT_TMA_ENABLE", "CUDNN_KNOB_TYPE_OUTPUT_TMA_ENABLE", 44])
def test_tma_knobs_behind_the_gate(knob):
    kt = engines.knob_type(knob)
    assert kt in TMA
    if not HAS_TMA:
        loaded = f"{LOADED // 10000}.{LOADED % 10000 // 100}"
        with pytest.raises(CudnnVersionError, match="^" + re.escape(f"{kt.name} (knob) needs cuDNN >= 9.22 (loaded: "
                                                                    f"{loaded})") + "$"):
            engines.normalize_knobs({knob: 1})
        return
    assert engines.normalize_knobs({knob: 1}) == {kt: 1}


@pytest.mark.skipif(not HAS_TMA, reason="needs the TMA knobs (cuDNN 9.22)")
def test_an_engine_without_them_says_which_knobs_it_has():
    og = P.conv_fwd().op_graph
    cfg = get_configs(og, "A", profile("h200"))[0]
    specs = engines.engine_knobs(cfg.engine)
    if any(s.knob_type in TMA for s in specs):
        pytest.skip("this engine has a TMA knob")
    with pytest.raises(EngineError, match=rf"engine {cfg.engine_index} has no knob INPUT_TMA_ENABLE \(engine {cfg.engine_index}'s knobs: "):
        engines.make_config(cfg.engine, {"INPUT_TMA_ENABLE": 1})


@pytest.mark.skipif(not HAS_TMA, reason="needs the TMA knobs (cuDNN 9.22)")
@pytest.mark.parametrize("gpu", ["h100", "h200"])
def test_inventory_of_engines_exposing_tma_knobs(gpu):
    dp = profile(gpu)
    exposing, engines_seen = [], 0
    for name in ("conv_fwd", "conv_bias_relu", "matmul_bias_relu", "layer_norm_fwd", "reduction", "slice_matmul",
                 "sdpa_softmax_fwd", "sdpa_composite_fwd"):
        og = P.CATALOGUE[name]().op_graph
        for gi in range(engines.engine_count(og)):
            try:
                engine = engines.make_engine(og, gi, dp)
            except Exception:  # noqa: BLE001 - an engine that does not support the graph on this GPU
                continue
            engines_seen += 1
            for spec in engines.engine_knobs(engine):
                if spec.knob_type in TMA:
                    # a switch: 0 and 1 (what the knob search tries), and a config with each value finalizes
                    assert set(spec.values()) <= {-1, 0, 1} and len(spec) >= 2, spec.to_dict()
                    for value in (0, 1):
                        assert engines.make_config(engine, {spec.knob_type: value}).descriptor.finalized
                    exposing.append((name, gi, spec.name))
    assert engines_seen > 10
    print(f"{gpu}: {len(exposing)} engine knobs of {engines_seen} engines are TMA switches: {exposing}")
