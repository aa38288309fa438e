"""Engines and knobs as data: every global engine index, knob spaces, configs from knob values
and back, filters, rows and DataFrames (offline, against the bundled H200 profile)."""
import gc
import itertools

import pytest

import cudnn_backend as cb
from cudnn_backend.runtime import engines
from cudnn_backend.runtime.engines import (
    Config,
    EngineError,
    EngineInfo,
    KnobSpec,
    config_from_index,
    config_knobs,
    engine_count,
    filter_items,
    iter_configs,
    iter_knob_space,
    knob_space,
    knob_space_size,
    list_engines,
    make_config,
    make_engine,
    to_dataframe,
    to_rows,
)
from cudnn_backend.runtime.heuristics import NoDeviceError, get_configs
from cudnn_backend.runtime.plans import build_plan
from cudnn_backend.typed import Engine, EngineConfig

from tests.helpers import generic_graphs as gg
from tests.helpers.env import HAVE_GPU, LOADED, loaded_has

K = cb.KnobType


@pytest.fixture(scope="module")
def infos(conv, h200):
    return list_engines(conv, h200)


@pytest.fixture(scope="module")
def first_a(conv, h200):
    return get_configs(conv, "A", h200)[0]


# cuDNN 9.10 refuses a few engines with INTERNAL_ERROR ("core_engine.getStatus()", "ConvolutionEngine::getStatus()")
# where 9.14 and newer
# say NOT_SUPPORTED (measured); either way the engine is listed unsupported with cuDNN's reason
INTERNAL_ERROR_FOR_UNSUPPORTED_UNTIL = 91400


def refused_as_unsupported(info) -> bool:
    """Whether an engine's finalize failed the way the loaded release says an engine does not support a graph."""
    name = getattr(info.status, "name", "")
    return name.startswith("CUDNN_STATUS_NOT_SUPPORTED") or (
        LOADED < INTERNAL_ERROR_FOR_UNSUPPORTED_UNTIL and name == "CUDNN_STATUS_INTERNAL_ERROR"
        and "getStatus()" in info.reason)


# -- listing -------------------------------------------------------------------------------------------
def test_every_global_index_is_listed(conv, infos):
    n = engine_count(conv)
    assert n > 0
    assert [i.engine_index for i in infos] == list(range(n))
    assert any(i.supported for i in infos) and any(not i.supported for i in infos)


def test_unsupported_engines_carry_cudnn_reason(infos):
    for info in infos:
        if info.supported:
            assert info.reason == "" and info.error is None and isinstance(info.engine, Engine)
            assert info.finalized and info.working_knobs is not None and info.configs_tried >= 1
        elif info.finalized:  # the engine finalizes, but cuDNN accepts none of its configs (tested below)
            assert isinstance(info.error, cb.CudnnError) and info.reason.startswith(info.status.name)
        else:
            assert isinstance(info.error, cb.CudnnError)
            assert info.status == info.error.status
            assert refused_as_unsupported(info), (info.engine_index, info.reason)
            assert info.reason.startswith(info.status.name) and info.error.cudnn_message in info.reason
            assert info.error.descriptor_type == cb.CUDNN_BACKEND_ENGINE_DESCRIPTOR
            assert "CUDNN_BACKEND_ENGINE_DESCRIPTOR" in str(info.error)
            assert info.engine is None and info.knobs == ()
            with pytest.raises(EngineError, match=rf"engine {info.engine_index} is not supported .*; no config"):
                info.config()


def test_notes_and_knobs(infos):
    supported = [i for i in infos if i.supported]
    assert any(cb.CUDNN_NUMERICAL_NOTE_TENSOR_CORE in i.numerical_notes for i in supported)
    rtc = [i for i in supported if i.runtime_compiled]
    assert rtc and all(cb.CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION in i.behavior_notes for i in rtc)
    knobbed = [i for i in supported if i.knobs]
    assert knobbed
    for info in knobbed:
        for spec in info.knobs:
            assert isinstance(spec, KnobSpec) and isinstance(spec.knob_type, cb.KnobType)
            assert spec.minimum <= spec.maximum and spec.stride >= 1
        # the same, read from the descriptor
        assert engines.engine_knobs(info.engine) == info.knobs
        assert engines.engine_numerical_notes(info.engine) == info.numerical_notes
        assert engines.engine_behavior_notes(info.engine) == info.behavior_notes
        assert engines.engine_global_index(info.engine) == info.engine_index


def test_supported_only_and_single_engine(conv, h200, infos):
    supported = list_engines(conv, h200, supported_only=True)
    assert [i.engine_index for i in supported] == [i.engine_index for i in infos if i.supported]
    one = engines.inspect_engine(conv, supported[0].engine_index, h200)
    assert one.supported and one.knobs == supported[0].knobs
    assert engines.inspect_engine_descriptor(supported[0].engine).knobs == supported[0].knobs


def test_engine_index_out_of_range(conv, h200):
    with pytest.raises(EngineError, match="out of range.*ENGINE_GLOBAL_COUNT"):
        make_engine(conv, engine_count(conv), h200)
    with pytest.raises(EngineError):
        make_engine(conv, -1, h200)
    # the generic descriptor, finalized by hand: the same rule (cuDNN itself refuses with no reason)
    count = engine_count(conv)
    for index in (count, 2**40):
        engine = cb.Descriptor("CUDNN_BACKEND_ENGINE_DESCRIPTOR")
        engine.set("CUDNN_ATTR_ENGINE_OPERATION_GRAPH", "CUDNN_TYPE_BACKEND_DESCRIPTOR", conv)
        engine.set("CUDNN_ATTR_ENGINE_GLOBAL_INDEX", "CUDNN_TYPE_INT64", index)
        with pytest.raises(EngineError, match=rf"^global_index: engine {index} is out of range: this graph has "
                                              rf"engines 0\.\.{count - 1} \(CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_"
                                              rf"COUNT = {count}\)$"):
            engine.finalize()


@pytest.mark.skipif(HAVE_GPU, reason="without a GPU every engine needs a device profile")
def test_listing_without_profile_raises_clearly(conv):
    with pytest.raises(NoDeviceError, match="device_profile="):
        list_engines(conv)
    statuses = set()
    for index in range(engine_count(conv)):  # cuDNN's own answer, engine by engine
        try:
            make_engine(conv, index)
        except cb.CudnnError as e:
            statuses.add(e.status)
    assert cb.CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH in statuses


# -- knob specs and spaces ----------------------------------------------------------------------------------
def test_knob_spec_honours_stride():
    spec = KnobSpec(K.CUDNN_KNOB_TYPE_TILE_SIZE, 0, 10, 3)
    assert list(spec.values()) == [0, 3, 6, 9] and len(spec) == 4
    assert 6 in spec and 7 not in spec and 12 not in spec
    assert spec.check(9) == 9
    with pytest.raises(EngineError, match="TILE_SIZE = 7 .* 0..10 in steps of 3"):
        spec.check(7)
    assert spec.to_dict() == {"knob": "TILE_SIZE", "minimum": 0, "maximum": 10, "stride": 3, "count": 4}
    assert len(KnobSpec(K.CUDNN_KNOB_TYPE_STAGES, 5, 4)) == 0


def test_knob_space_enumeration_and_limit():
    specs = (KnobSpec(K.CUDNN_KNOB_TYPE_TILE_SIZE, 0, 4, 2), KnobSpec(K.CUDNN_KNOB_TYPE_STAGES, 1, 3, 1))
    assert knob_space_size(specs) == 9
    every = list(iter_knob_space(specs))
    assert len(every) == 9 and len({tuple(d.items()) for d in every}) == 9
    assert every[0] == {K.CUDNN_KNOB_TYPE_TILE_SIZE: 0, K.CUDNN_KNOB_TYPE_STAGES: 1}
    assert every[1] == {K.CUDNN_KNOB_TYPE_TILE_SIZE: 0, K.CUDNN_KNOB_TYPE_STAGES: 2}
    assert all(d[K.CUDNN_KNOB_TYPE_TILE_SIZE] in (0, 2, 4) for d in every)
    assert list(iter_knob_space(specs, limit=4)) == every[:4]
    assert knob_space(specs) == every
    with pytest.raises(EngineError, match="9 combinations, more than limit=5.*sample="):
        knob_space(specs, limit=5)
    with pytest.raises(ValueError, match="limit: -1 is below the minimum 0"):
        knob_space(specs, limit=-1)
    assert knob_space(specs, limit=None) == every
    huge = [KnobSpec(K.CUDNN_KNOB_TYPE_TILE_SIZE, 0, (1 << 13) - 1)] * 2  # 2**26 combinations: gigabytes as a list
    with pytest.raises(EngineError, match=r"has 67,108,864 combinations, more than a list holds \(16,777,216"):
        knob_space(huge, limit=None)
    assert len(knob_space(huge, limit=None, sample=3)) == 3
    # random access agrees with enumeration
    ranges = [s.values() for s in specs]
    assert [engines._decode(specs, ranges, i) for i in range(9)] == every


def test_knob_space_sampling():
    specs = (KnobSpec(K.CUDNN_KNOB_TYPE_SPLIT_K_SLC, 1, 2048, 1), KnobSpec(K.CUDNN_KNOB_TYPE_KERNEL_CFG, 0, 263, 1),
             KnobSpec(K.CUDNN_KNOB_TYPE_TILE_SIZE, 0, 30, 5), KnobSpec(K.CUDNN_KNOB_TYPE_STAGES, 0, 7, 1))
    assert knob_space_size(specs) == 2048 * 264 * 7 * 8
    sample = list(iter_knob_space(specs, sample=50, seed=7))
    assert len(sample) == 50 and len({tuple(d.items()) for d in sample}) == 50
    for d in sample:
        assert list(d) == [s.knob_type for s in specs]
        assert all(d[s.knob_type] in s for s in specs)  # strides honoured
        assert d[K.CUDNN_KNOB_TYPE_TILE_SIZE] % 5 == 0
    assert sample == list(iter_knob_space(specs, sample=50, seed=7))
    assert sample != list(iter_knob_space(specs, sample=50, seed=8))
    assert len(knob_space(specs, limit=10, sample=100, seed=1)) == 10
    small = (KnobSpec(K.CUDNN_KNOB_TYPE_USE_TEX, 0, 1),)
    assert len(list(iter_knob_space(small, sample=10))) == 2  # never more than the space


def test_engine_knob_space(infos):
    no_knobs = next(i for i in infos if i.supported and not i.knobs)
    assert list(no_knobs.knob_space()) == [{}] and no_knobs.knob_space_size == 1
    big = max((i for i in infos if i.supported), key=lambda i: i.knob_space_size)
    assert big.knob_space_size > 10_000
    sample = list(iter_knob_space(big.engine, sample=20, seed=0))
    assert len(sample) == 20
    assert knob_space_size(big.engine) == big.knob_space_size
    assert list(itertools.islice(big.knob_space(), 5)) == list(big.knob_space(limit=5))


def test_iter_configs_skips_what_cudnn_refuses(infos):
    engine = next(i for i in infos if i.supported and 1 < i.knob_space_size <= 20)
    configs = list(iter_configs(engine))
    assert 0 < len(configs) <= engine.knob_space_size
    for cfg in configs:
        assert isinstance(cfg, Config) and cfg.descriptor.finalized and cfg.engine_index == engine.engine_index


# -- configs: knobs in, knobs out ---------------------------------------------------------------------------------
def test_config_round_trip_from_heuristics_config(conv, h200, first_a):
    index, knobs = first_a.engine_index, first_a.knobs
    assert knobs  # cuDNN's size query says 0 knob choices; the full read finds them
    engine = make_engine(conv, index, h200)
    cfg = make_config(engine, knobs)
    assert isinstance(cfg, Config) and isinstance(cfg.descriptor, EngineConfig) and cfg.descriptor.finalized
    assert engines.engine_global_index(cfg.engine) == index and cfg.engine_index == index
    assert config_knobs(cfg.descriptor) == knobs and cfg.knobs == knobs
    assert list(cfg.knobs) == list(knobs)  # cuDNN's order kept
    assert cfg.operation_graph is conv
    again = config_from_index(conv, index, {k.name: v for k, v in knobs.items()}, h200)
    assert again.knobs == knobs


def test_config_knob_spellings(conv, h200, infos):
    info = next(i for i in infos if i.supported and any(s.knob_type == K.CUDNN_KNOB_TYPE_TILE_SIZE for s in i.knobs))
    for key in (K.CUDNN_KNOB_TYPE_TILE_SIZE, "CUDNN_KNOB_TYPE_TILE_SIZE", "TILE_SIZE", "tile_size",
                int(K.CUDNN_KNOB_TYPE_TILE_SIZE)):
        try:
            cfg = make_config(info.engine, {key: 0})
        except cb.CudnnError:
            continue  # this value is not one cuDNN accepts for this engine; spelling was still understood
        assert cfg.knobs == {K.CUDNN_KNOB_TYPE_TILE_SIZE: 0}
    cfg = make_config(info.engine)  # no knobs: the engine's defaults
    assert cfg.descriptor.finalized and cfg.knobs.keys() <= {s.knob_type for s in info.knobs}


def test_config_checks(conv, h200, infos):
    info = next(i for i in infos if i.supported and i.knobs)
    spec = info.knobs[0]
    absent = next(k for k in K if k not in {s.knob_type for s in info.knobs} and not k.name.endswith("COUNTS"))
    with pytest.raises(EngineError, match=f"has no knob {engines.short_name(absent)}"):
        make_config(info.engine, {absent: 0})
    with pytest.raises(EngineError, match=f"{spec.name} = {spec.maximum + 1} is outside"):
        make_config(info.engine, {spec.knob_type: spec.maximum + 1})
    with pytest.raises(cb.CudnnNotSupportedError) as err:  # unchecked: cuDNN's own refusal
        make_config(info.engine, {spec.knob_type: spec.maximum + 1}, check=False)
    assert err.value.descriptor_type == cb.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR
    with pytest.raises(ValueError, match="not a KnobType"):
        make_config(info.engine, {"NO_SUCH_KNOB": 1})
    with pytest.raises(EngineError, match="given twice"):
        engines.normalize_knobs([("TILE_SIZE", 1), (K.CUDNN_KNOB_TYPE_TILE_SIZE, 2)])
    with pytest.raises(TypeError):
        engines.normalize_knobs({"TILE_SIZE": True})


def test_config_knobs_with_a_lying_length(infos):
    """make_config reads the knobs it is given, never their truth value: a container whose __len__ overflows is a
    TypeError naming knobs (the API fuzz found an OverflowError), and empty pairs are no knobs (the defaults)."""
    class LyingLen:
        def __len__(self):
            return 2 ** 64

        def __iter__(self):
            return iter([1, 2, 3])

    info = next(i for i in infos if i.supported and i.knobs)
    for check in (True, False):
        with pytest.raises(TypeError, match="knobs: expected a mapping"):
            make_config(info.engine, LyingLen(), check=check)
        assert make_config(info, [], check=check).descriptor.finalized


def test_config_keeps_its_graph_alive(h200):
    def configs_only():
        graph = gg.notebook_conv_graph()
        return get_configs(graph, "A", h200)[0], config_from_index(graph, 0, None, h200)

    heur_cfg, own_cfg = configs_only()
    gc.collect()
    for cfg in (heur_cfg, own_cfg):
        graph = cfg.operation_graph
        assert graph is not None and not graph.closed and graph.finalized
        assert engine_count(graph) > 0
        assert build_plan(cfg).workspace_size >= 0


# -- filters ------------------------------------------------------------------------------------------------------
def test_filters_on_engines(infos):
    no_tc = filter_items(infos, exclude_numerical="TENSOR_CORE")
    assert no_tc and all(i.supported and cb.CUDNN_NUMERICAL_NOTE_TENSOR_CORE not in i.numerical_notes for i in no_tc)
    rtc = engines.filter_engines(infos, require_behavior=["CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION"])
    assert rtc and all(i.runtime_compiled for i in rtc)
    no_rtc = filter_items(infos, exclude_behavior=[cb.CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION])
    assert len(no_rtc) + len(rtc) == sum(i.supported for i in infos)
    tc_only = filter_items(infos, require_numerical=["TENSOR_CORE"])
    assert len(tc_only) + len(no_tc) == sum(i.supported for i in infos)
    everything = filter_items(infos, supported_only=False)
    assert len(everything) == len(infos)
    unsupported = next(i for i in infos if not i.supported)
    assert "not supported" in engines.rejection(unsupported)
    with pytest.raises(ValueError, match="NumericalNote"):
        filter_items(infos, exclude_numerical="NO_SUCH_NOTE")


def test_filters_on_configs(conv, h200):
    configs = get_configs(conv, "A", h200)
    zero_ws = engines.filter_configs(configs, max_workspace=0)
    assert zero_ws and all(c.workspace_size == 0 for c in zero_ws)
    assert len(zero_ws) < len(configs)
    assert filter_items(configs, exclude_numerical=cb.CUDNN_NUMERICAL_NOTE_TENSOR_CORE) == []
    reason = engines.rejection(configs[0], exclude_numerical="TENSOR_CORE")
    assert reason == "has excluded numerical note TENSOR_CORE"
    big = next(c for c in configs if c.workspace_size > 0)
    assert "exceeds max_workspace=0" in engines.rejection(big, max_workspace=0)
    with pytest.raises(TypeError, match="cannot filter"):
        filter_items([object()])


# -- rows and DataFrames --------------------------------------------------------------------------------------------
def test_rows(infos, first_a):
    rows = to_rows(infos)
    assert len(rows) == len(infos)
    supported = next(r for r, i in zip(rows, infos) if i.supported and i.knobs)
    assert set(supported) >= {"engine", "supported", "reason", "numerical_notes", "behavior_notes", "knobs",
                              "runtime_compiled", "knob_space_size"}
    assert all(isinstance(v, list) and len(v) == 3 for v in supported["knobs"].values())
    unsupported = [(r, i) for r, i in zip(rows, infos) if not r["supported"]]
    assert unsupported and all(r["reason"] == i.reason and r["status"] == i.status.name for r, i in unsupported)
    assert any(r["status"].startswith("CUDNN_STATUS_NOT_SUPPORTED") for r, _ in unsupported)
    row = to_rows([first_a])[0]
    assert row["engine"] == first_a.engine_index and row["mode"] == "A" and row["rank"] == 0
    assert row["knobs"] == {k.name[len("CUDNN_KNOB_TYPE_"):]: v for k, v in first_a.knobs.items()}
    assert to_rows(infos[first_a.engine_index].knobs)[0]["knob"]
    assert to_rows([infos[0].engine])[0]["engine"] == 0
    assert to_rows([build_plan(first_a)])[0]["engine"] == first_a.engine_index
    with pytest.raises(TypeError):
        to_rows([object()])


def test_dataframe(infos):
    pd = pytest.importorskip("pandas")
    df = to_dataframe(infos)
    assert isinstance(df, pd.DataFrame) and len(df) == len(infos)
    assert df["supported"].sum() == sum(i.supported for i in infos)


def test_dataframe_without_pandas_says_so(infos, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("no pandas here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match="pip install pandas"):
        to_dataframe(infos)


def test_engine_info_row_type(infos):
    assert isinstance(infos[0], EngineInfo)
    assert infos[0].to_dict()["engine"] == 0


# -- "supported": an engine with a config cuDNN accepts; make_config(info, {}) -----------------------------------
@pytest.fixture(scope="module")
def matmul_infos(h200):
    from cudnn_backend.patterns import CATALOGUE

    return list_engines(CATALOGUE["matmul_bias_relu"](build=False).graph, h200)


def test_an_engine_without_a_working_config_is_not_supported(matmul_infos):
    """Engines of a matmul finalize on an H200 although cuDNN accepts none of their configs (the engines
    table said "8 of 11 supported" where one engine runs): they are not supported, and say why."""
    finalized = [i for i in matmul_infos if i.finalized]
    supported = [i for i in matmul_infos if i.supported]
    assert supported and {i.engine_index for i in supported} <= {i.engine_index for i in finalized}
    empty = [i for i in finalized if not i.supported]
    if not empty:
        pytest.skip("every engine that finalizes has a working config with this cuDNN")
    for info in empty:
        assert info.status == cb.CUDNN_STATUS_NOT_SUPPORTED and isinstance(info.engine, Engine)
        assert "finalizes, but cuDNN accepts none of its configs for this graph" in info.reason
        # every config tried: the search limit's worth, or the one an engine without knobs has (9.10.2 has such)
        assert info.configs_tried == min(engines.CONFIG_SEARCH_LIMIT, info.configs_tried) > (0 if not info.knobs else 1)
        assert info.to_dict()["supported"] is False and info.to_dict()["finalized"] is True
        with pytest.raises(cb.CudnnNotSupportedError, match="accepts none of its configs") as err:
            make_config(info)  # {}: nothing cuDNN accepts to fill in
        assert f"engine {info.engine_index}" in err.value.hint and "list_engines reports it unsupported" in \
            err.value.hint
        for knobs in iter_knob_space(info.knobs, sample=20, seed=4):  # the verdict holds for other knob values
            with pytest.raises(cb.CudnnNotSupportedError):
                make_config(info.engine, knobs, check=False)
    graph = next(i.engine for i in finalized).operation_graph
    assert [i.engine_index for i in list_engines(graph, cb.DeviceProfile.bundled("h200"), supported_only=True)] == \
        [i.engine_index for i in supported]


def test_empty_knobs_work_for_every_supported_engine(matmul_infos, infos):
    """``make_config(info, {})`` builds a config for every supported engine: the engine's defaults, or, where cuDNN
    refuses those, the first knob values it accepts ({} raised NOT_SUPPORTED for 7 of 8)."""
    for info in [i for i in matmul_infos + infos if i.supported]:
        cfg = make_config(info, {})
        assert cfg.descriptor.finalized and cfg.engine_index == info.engine_index
        assert cfg.knobs == dict(info.working_knobs) or not info.working_knobs
        again = make_config(info.engine)  # from the engine alone: the same search
        assert again.knobs == cfg.knobs


def test_empty_knobs_filled_where_the_defaults_are_refused(h200):
    """An SDPA engine whose default KERNEL_CFG does not suit the graph: cuDNN refuses {} itself; make_config fills
    in the first value it accepts, and says which in ``Config.knobs``."""
    from cudnn_backend.patterns import CATALOGUE

    filled = []
    if not loaded_has("9.13.0"):
        pytest.skip("the unified SDPA forward graph needs cuDNN 9.13 (test_patterns.py asserts the refusal)")
    for info in list_engines(CATALOGUE["sdpa_fwd"](build=False).graph, h200, supported_only=True):
        with pytest.raises(cb.CudnnError) if info.working_knobs else _nothing():
            engines._engine_config(info.engine, {})  # cuDNN's own answer to the bare defaults
        if info.working_knobs:
            filled.append(info)
            cfg = make_config(info.engine, {})
            assert cfg.knobs == info.working_knobs and len(cfg.knobs) == 1
            knob, value = next(iter(cfg.knobs.items()))
            spec = next(s for s in info.knobs if s.knob_type == knob)
            for earlier in range(spec.minimum, value, spec.stride):  # the first value cuDNN accepts, alone
                with pytest.raises(cb.CudnnError):
                    make_config(info.engine, {knob: earlier})
    if not filled:
        pytest.skip("every SDPA engine's defaults suit this graph with this cuDNN")


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_misspelled_knob_names_this_engines_knobs(infos):
    info = next(i for i in infos if i.supported and any(s.name == "TILE_SIZE" for s in i.knobs))
    names = [s.name for s in info.knobs]
    with pytest.raises(EngineError) as err:
        make_config(info, {"TILESIZE": 2})
    text = str(err.value)
    assert "'TILESIZE' is not a KnobType" in text and f"engine {info.engine_index}'s knobs: {', '.join(names)}" in text
    assert "did you mean TILE_SIZE" in text
    absent = "SPLIT_K_SLC" if "SPLIT_K_SLC" not in names else "LDGA"
    with pytest.raises(EngineError, match=f"engine {info.engine_index} has no knob {absent} \\(engine "
                                          f"{info.engine_index}'s knobs: {', '.join(names)}"):
        make_config(info, {absent: 1})
    with pytest.raises(ValueError, match="did you mean TILE_SIZE"):  # no engine: every knob type is a candidate
        engines.knob_type("TILESIZE")


def test_graphs_and_patterns_are_accepted_where_operation_graphs_are(h200):
    """get_configs / list_engines / build_first_plan take a Graph or a Pattern as explore does."""
    from cudnn_backend.patterns import CATALOGUE
    from cudnn_backend.runtime.heuristics import build_first_plan

    pattern = CATALOGUE["conv_bias_relu"](n=1, c=8, h=8, w=8, k=8, build=False)
    graph = pattern.graph
    assert not graph.built
    from_graph = [c.key for c in get_configs(graph, "A", h200)]
    assert graph.built  # built once, without a handle
    assert from_graph == [c.key for c in get_configs(graph.op_graph, "A", h200)]
    assert from_graph == [c.key for c in get_configs(pattern, "A", h200)]
    assert [i.engine_index for i in list_engines(graph, h200, supported_only=True)] == \
        [i.engine_index for i in list_engines(pattern, h200, supported_only=True)]
    plan, _ = build_first_plan(pattern, device_profile=h200)
    assert plan.engine_index == from_graph[0][0]
    with pytest.raises(TypeError, match="expected a finalized CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR"):
        get_configs("conv_bias_relu", "A", h200)


def test_an_engine_info_copied_says_its_live_engine_stayed_behind():
    import copy
    import pickle

    from cudnn_backend import patterns

    og = patterns.conv_bias_relu().build()
    info = next(i for i in cb.list_engines(og, "h200") if i.supported)
    for other in (copy.copy(info), pickle.loads(pickle.dumps(info))):
        assert other.supported and other.engine is None
        for use in (other.config, lambda: list(engines.iter_configs(other))):
            with pytest.raises(EngineError, match=r"this EngineInfo was copied or unpickled, and its live engine "
                                                  r"stayed behind; inspect_engine\(graph, index\)"):
                use()
    with pytest.raises(TypeError, match="engine: expected a CUDNN_BACKEND_ENGINE_DESCRIPTOR, not NoneType"):
        list(engines.iter_configs(None))
    assert info.config().engine_index == info.engine_index
