"""The support matrix: the catalogue, one probe per stage, the matrix against graphs built directly, the cache,
odd catalogues, outputs and comparisons. Offline with the bundled H100/H200 profiles and the real cuDNN; small
catalogue filters keep it fast."""
from __future__ import annotations

import json
import sqlite3

import pytest

import cudnn_backend as cb
from cudnn_backend.core.versions import format_version, loaded_version
from cudnn_backend.graph import shapes
from cudnn_backend.runtime import engines as _engines
from cudnn_backend.runtime.heuristics import build_first_plan, get_configs
from cudnn_backend.tune import catalogue as cat
from cudnn_backend.tune import support
from cudnn_backend.tune.support import SupportCache, SupportCacheWarning, SupportMatrix, SupportResult, probe_graph, support_matrix
from tests.helpers.env import needs_sdpa_bwd

H100 = "h100"
USER_FILE = '''
import cudnn_backend as cb


def conv_relu():
    """conv + ReLU, fp16 NHWC"""
    g = cb.Graph("conv_relu")
    x = g.tensor([2, 32, 8, 8], layout="nhwc", name="x")
    w = g.tensor([32, 32, 3, 3], layout="nhwc", name="w")
    g.relu(g.conv_fwd(x, w, padding=1), output=True, name="y")
    return g


def raises():
    raise RuntimeError("this builder is broken on purpose")


def takes_an_argument(size):
    return None


def _private():
    return None
'''


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    """Every test gets its own support cache (the user's is never touched)."""
    monkeypatch.setenv("CUDNN_BACKEND_SUPPORT_CACHE", str(tmp_path / "support.sqlite"))


def _entries(*keys):
    by_key = {e.key: e for e in cat.default_catalogue()}
    return [by_key[k] for k in keys]


# ---------------------------------------------------------------------------------------------
# the catalogue
# ---------------------------------------------------------------------------------------------
def test_default_catalogue_is_systematic():
    entries = cat.default_catalogue()
    assert len(entries) == len({e.key for e in entries}) > 500
    families = {e.family for e in entries}
    assert families == set(cat.FAMILIES)
    for head in cat.HEADS:
        chains = {tuple(e.kwargs["chain"]) for e in entries if e.family == head and not e.kwargs["tail"]}
        assert chains == set(cat.CHAINS)
        assert {len(c) for c in chains} == {0, 1, 2, 3}
    covered = {cat.CHAIN_ELEMENTS[el][0] for c in cat.CHAINS for el in c}
    assert covered == {family for family, _ in cat.CHAIN_ELEMENTS.values()}
    labels = {(e.family, e.data_type, e.layout) for e in entries}
    assert ("conv_fwd", "fp8_e4m3", "nhwc") in labels and ("conv_fwd", "int8", "nhwc") in labels
    assert ("conv_dgrad", "fp32", "nchw") in labels and ("matmul", "int8", "row") in labels
    assert ("batch_norm", "fp16", "nchw") in labels and ("sdpa", "bf16", "bshd") in labels
    tails = {e.kwargs["tail"] for e in entries if e.family == "conv_fwd"}
    assert tails == {None, "reduction", "genstats"}


def test_every_default_entry_builds_through_graph():
    for e in cat.filter_entries(cat.default_catalogue(), name="+cmp_select"):
        g, og, stage, error = support.materialize(e.builder, e.kwargs)
        assert isinstance(g, cb.Graph) and og is not None, (e.key, error)
        modes = [op.pw_descriptor.mode.name for op in g.operations if hasattr(op, "pw_descriptor")]
        assert "CUDNN_POINTWISE_CMP_GT" in modes and "CUDNN_POINTWISE_BINARY_SELECT" in modes


def test_filters():
    entries = cat.default_catalogue()
    some = cat.filter_entries(entries, family="conv_dgrad,matmul", data_type="fp32", layout=["nchw", "row"])
    assert some and {(e.family, e.data_type, e.layout) for e in some} == {("conv_dgrad", "fp32", "nchw"),
                                                                        ("matmul", "fp32", "row")}
    assert all("relu" in e.name for e in cat.filter_entries(entries, name="relu"))
    # any name of a data type, printed one way: half is fp16, float is fp32 (the labels are the printed names)
    assert cat.filter_entries(entries, data_type="half,float") == cat.filter_entries(entries, data_type="fp16,fp32")
    assert {e.data_type for e in cat.filter_entries(entries, data_type=["fp8", "float16"])} == {"fp8_e4m3", "fp16"}
    assert cat.filter_entries(entries, data_type="fp64") == []  # a data type no default graph has
    with pytest.raises(ValueError, match="data_type: 'fp17' is not a DataType"):
        cat.filter_entries(entries, data_type="fp17")
    with pytest.raises(ValueError, match="layout: 'nwhc'"):
        cat.filter_entries(entries, layout="nwhc")


def test_chain_graph_refuses_what_it_cannot_build():
    with pytest.raises(ValueError, match="head: 'conv3d'"):
        cat.chain_graph("conv3d")
    with pytest.raises(ValueError, match="chain: 'swish' is not a chain element"):
        cat.chain_graph("matmul", "bias,swish")
    with pytest.raises(ValueError, match="at most 3"):
        cat.chain_graph("matmul", ["bias", "relu", "exp", "gelu"])
    with pytest.raises(cb.GraphError, match="genstats"):
        cat.chain_graph("matmul", tail="genstats", layout="row")
    with pytest.raises(ValueError, match="layout"):
        cat.chain_graph("conv_fwd", layout="row")


# ---------------------------------------------------------------------------------------------
# probing one graph: every stage
# ---------------------------------------------------------------------------------------------
def test_supported_with_a_plan_built():
    r = probe_graph("conv_bias_relu", H100, kwargs=dict(n=2, c=32, h=8, w=8, k=32))
    assert r.supported and r.status == "yes" and r.verified == "plan" and r.stage is None
    assert r.engines_total and 0 < r.engines_supported <= r.engines_total
    assert r.configs["A"] > 0 and sum(r.kinds.values()) >= 1 and set(r.kinds) <= set(support.KINDS)
    assert r.chosen["kind"] in support.KINDS and r.kernel_count is None and r.kernels == []
    assert (r.data_type, r.layout) == ("fp16", "nhwc") and r.operations == 3
    assert r.ops == "ConvolutionForward → Pointwise ADD → Pointwise RELU_FWD"


def test_runtime_compiled_configs_are_not_compiled_unless_asked():
    kw = dict(batch=1, m=64, n=64, k=64)
    quick = probe_graph("matmul_bias_relu", H100, kwargs=kw)
    assert quick.supported and quick.status == "yes*" and quick.verified == "config"
    assert quick.chosen["kind"] == "runtime-compiled" and "runtime-compiled" in quick.kinds
    none = probe_graph("matmul_bias_relu", H100, kwargs=kw, plans="none")
    assert none.status == "yes*"
    with pytest.raises(ValueError, match="plans='some'"):
        probe_graph("matmul_bias_relu", H100, kwargs=kw, plans="some")


def test_engine_kinds_from_notes():
    rc = (cb.CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION,)
    assert support.engine_kind(rc, 1) == "runtime-compiled"
    assert support.engine_kind((), 3) == "specialized"
    assert support.engine_kind((), 1) == "precompiled"


def test_refused_at_heuristics_with_cudnns_reason():
    e, = _entries("conv_dgrad+bias [fp32 nchw]")
    r = probe_graph(e.builder, H100, kwargs=e.kwargs, entry=e)
    assert not r.supported and r.stage == "heuristics" and r.status == "no: heuristics"
    assert r.configs == {"A": 0, "FALLBACK": 0} and r.kinds == {} and r.chosen is None
    assert "fort_device::SM80 || receive_op_->target == fort_device::SM120" in r.reason
    _, og, _, _ = support.materialize(e.builder, e.kwargs)
    assert r.engines_total == _engines.engine_count(og) and r.engines_supported > 0  # engines finalize; heuristics
    # still find none


@needs_sdpa_bwd
def test_refused_at_finalize():
    r = probe_graph("sdpa_bwd", H100, kwargs=dict(b=1, h=2, s_q=64, s_kv=64, d=64))
    # refused at finalize by 9.19.0 (``outputGraph.buildDAG()``); 9.22 to 9.26 finalize it, and their heuristics
    # offer Blackwell engines only; 9.28 supports it
    if r.supported:
        assert loaded_version() > 91900
        pytest.skip(f"cuDNN {format_version(loaded_version())} finalizes this SDPA_BWD graph")
    if loaded_version() > 91900 and r.stage == "heuristics":
        assert "NOT_SUPPORTED_ARCH_MISMATCH" in r.reason and r.configs == {"A": 0, "FALLBACK": 0}, r.reason
        pytest.skip(f"cuDNN {format_version(loaded_version())} finalizes this SDPA_BWD graph; its heuristics offer no "
                    "Hopper engine")
    assert r.stage == "finalize" and "CUDNN_STATUS_BAD_PARAM" in r.reason and r.engines_total is None


def test_refused_by_the_package_checks(tmp_path):
    f = tmp_path / "graphs.py"
    f.write_text("import cudnn_backend as cb\n"
                 "def virtual_unread():\n"
                 "    g = cb.Graph('v')\n"
                 "    x = g.tensor([1, 8, 4, 4], layout='nhwc', name='x')\n"
                 "    g.relu(x, name='nobody_reads_me')\n"
                 "    return g\n")
    r = probe_graph(f"{f}:virtual_unread", H100)
    assert r.stage == "checks" and "nothing consumes it" in r.reason and r.operations == 1


def test_unavailable_in_this_release(cudnn_version):
    if cudnn_version >= 92000:
        pytest.skip("softmax is in this cuDNN")
    r = probe_graph("softmax", H100)
    assert r.stage == "unavailable" and "needs cuDNN" in r.reason and "9.20" in r.reason


def test_a_builder_that_raises_is_a_result(tmp_path):
    f = tmp_path / "user.py"
    f.write_text(USER_FILE)
    r = probe_graph(f"{f}:raises", H100)
    assert r.stage == "builder" and "broken on purpose" in r.reason
    r = probe_graph(f"{f}:takes_an_argument", H100)
    assert r.stage == "builder" and "size" in r.reason
    r = probe_graph(lambda: 42, H100)
    assert r.stage == "builder" and "returned a int" in r.reason


def test_detail_keeps_each_stage():
    e, = _entries("conv_dgrad+bias [fp32 nchw]")
    r = probe_graph(e.builder, H100, kwargs=e.kwargs, detail=True)
    assert set(r.detail) == {"engines", "heuristics"}
    assert len(r.detail["engines"]) == r.engines_total
    refused = [x for x in r.detail["engines"] if not x["supported"]]
    assert refused and all(x["cudnn"] or x["reason"] for x in refused)
    assert set(r.detail["heuristics"]) == {"A", "B", "FALLBACK"}
    assert any("SM120" in line for line in r.detail["heuristics"]["A"]["reasons"])


# ---------------------------------------------------------------------------------------------
# the matrix agrees with graphs it does not contain, built directly
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_matrix(tmp_path_factory):
    keys = ("conv_fwd+bias+relu [fp16 nhwc]", "conv_dgrad [fp16 nhwc]", "conv_dgrad+bias [fp32 nchw]",
            "conv_wgrad [fp32 nchw]", "conv_fwd>genstats [fp16 nhwc]", "conv_fwd+bias+relu [fp16 nchw]")
    return support_matrix(_entries(*keys), H100, workers=1, cache=tmp_path_factory.mktemp("c") / "s.sqlite")


def _direct(graph):
    """Supported, by the plain workflow: heuristics A and FALLBACK, then the first config that builds a plan."""
    og = graph.build()
    profile = cb.DeviceProfile.bundled(H100)
    if not any(get_configs(og, m, profile, raise_if_empty=False) for m in ("A", "FALLBACK")):
        return False
    try:
        plan, _ = build_first_plan(og, device_profile=profile)
    except cb.NoWorkingPlanError:
        return False
    plan.close()
    return True


def _conv_block(layout, data_type="half"):
    g = cb.Graph("direct_conv_bias_relu", io_data_type=data_type)
    x = g.tensor([8, 16, 12, 12], layout=layout, name="x")
    w = g.tensor([16, 16, 3, 3], layout=layout, name="w")
    b = g.tensor([1, 16, 1, 1], layout=layout, name="b")
    g.relu(g.bias(g.conv_fwd(x, w, padding=1), b), output=True, name="y")
    return g


def _dgrad_bias_fp32_nchw():
    g = cb.Graph("direct_dgrad_bias", io_data_type="float")
    dy = g.tensor(shapes.conv_output_dims([2, 32, 10, 10], [16, 32, 3, 3], 1, 2, 1), layout="nchw", name="dy")
    w = g.tensor([16, 32, 3, 3], layout="nchw", name="w")
    dx = g.conv_bwd_data(dy, w, [2, 32, 10, 10], padding=1, stride=2)
    g.bias(dx, g.tensor([1, 32, 1, 1], layout="nchw", name="b"), output=True)
    return g


def _wgrad_fp32_nchw():
    g = cb.Graph("direct_wgrad", io_data_type="float")
    x = g.tensor([2, 16, 8, 8], layout="nchw", name="x")
    dy = g.tensor([2, 32, 8, 8], layout="nchw", name="dy")
    g.conv_bwd_filter(x, dy, [32, 16, 3, 3], padding=1, output=True)
    return g


@pytest.mark.parametrize("key, build", [
    ("conv_fwd+bias+relu [fp16 nhwc]", lambda: _conv_block("nhwc")),
    ("conv_fwd+bias+relu [fp16 nchw]", lambda: _conv_block("nchw")),
    ("conv_dgrad [fp16 nhwc]", lambda: cb.patterns.conv_bwd_data(n=2, c=32, h=10, w=10, k=16, build=False).graph),
    ("conv_dgrad+bias [fp32 nchw]", _dgrad_bias_fp32_nchw),
    ("conv_wgrad [fp32 nchw]", _wgrad_fp32_nchw),
    ("conv_fwd>genstats [fp16 nhwc]", lambda: cb.patterns.bn_gen_stats(n=2, c=16, h=8, w=8, k=16, build=False).graph),
], ids=lambda v: v if isinstance(v, str) else "")
def test_matrix_agrees_with_direct_builds(small_matrix, key, build):
    row = small_matrix[key]
    assert row.supported == _direct(build()), (key, row.status, row.reason)


def test_matrix_rows_and_summary(small_matrix):
    assert len(small_matrix) == 6 and small_matrix.cached == 0
    summary = small_matrix.summary()
    assert summary["conv_dgrad"]["fp32"] == (0, 1)
    assert set(small_matrix.stage_counts()) <= {"supported", *support.STAGES}
    row = small_matrix["conv_dgrad+bias [fp32 nchw]"].row()
    r = small_matrix["conv_dgrad+bias [fp32 nchw]"]
    assert row["status"] == "no: heuristics" and row["engines"] == f"{r.engines_supported}/{r.engines_total}"
    assert r.engines_total > r.engines_supported > 0 and row["kernels"] == ""
    with pytest.raises(KeyError, match="no entry"):
        small_matrix["nothing [fp16 nhwc]"]


# ---------------------------------------------------------------------------------------------
# the cache
# ---------------------------------------------------------------------------------------------
def test_second_run_comes_from_the_cache(tmp_path):
    entries = _entries("conv_fwd [fp16 nhwc]", "conv_dgrad+bias [fp32 nchw]")
    cache = SupportCache(tmp_path / "c.sqlite")
    first = support_matrix(entries, H100, workers=1, cache=cache)
    second = support_matrix(entries, H100, workers=1, cache=cache)
    assert first.cached == 0 and second.cached == 2 and all(r.cached for r in second)
    assert [r.status for r in first] == [r.status for r in second]
    assert [r.reason for r in first] == [r.reason for r in second]
    other = support_matrix(entries, "h200", workers=1, cache=cache)  # another device: not these results
    assert other.cached == 0
    assert cache.clear() == 4 and support_matrix(entries, H100, workers=1, cache=cache).cached == 0


def test_default_cache_is_in_the_package_cache_folder(monkeypatch):
    monkeypatch.delenv("CUDNN_BACKEND_SUPPORT_CACHE")
    from cudnn_backend.tune.cache import cache_dir, default_cache_path

    assert support.default_support_cache_path() == cache_dir() / "support.sqlite"
    assert default_cache_path().parent == cache_dir()


def test_the_environment_s_cache_path_is_taken_as_given_naming_the_variable(tmp_path, monkeypatch):
    """As a path given to --cache: a missing folder is a typo, never a tree of folders made; blanks name no file."""
    monkeypatch.setenv("CUDNN_BACKEND_SUPPORT_CACHE", str(tmp_path / "typo" / "deep" / "support.sqlite"))
    with pytest.raises(ValueError, match=r"^\$CUDNN_BACKEND_SUPPORT_CACHE: the folder of .* does not exist"):
        support.SupportCache()
    assert not (tmp_path / "typo").exists()
    monkeypatch.setenv("CUDNN_BACKEND_SUPPORT_CACHE", "  ")
    with pytest.raises(ValueError, match=r"^\$CUDNN_BACKEND_SUPPORT_CACHE is blank; name a file, or unset it"):
        support.SupportCache()
    monkeypatch.setenv("CUDNN_BACKEND_SUPPORT_CACHE", str(tmp_path))  # a folder: no cache, said naming the variable
    with pytest.warns(support.SupportCacheWarning, match=r"\(\$CUDNN_BACKEND_SUPPORT_CACHE\) is not usable"):
        assert support.SupportCache().get_many(["k"]) == {}


def test_a_corrupt_cache_is_no_cache(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is no sqlite database" * 100)
    entries = _entries("conv_fwd [fp16 nhwc]")
    with pytest.warns(SupportCacheWarning, match="not usable"):
        m = support_matrix(entries, H100, workers=1, cache=bad)
    assert m.cached == 0 and m[0].supported
    assert bad.read_bytes().startswith(b"this is no sqlite")


def test_a_cache_that_cannot_be_cleared_says_so_in_one_line(tmp_path):
    """A results table edited into a view (or a lock held past the timeout): an OSError naming the file and why,
    which the command line prints as one line, never a traceback."""
    import contextlib
    import os
    import subprocess
    import sys

    path = tmp_path / "view.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as con:
        con.execute("CREATE TABLE stored (key TEXT PRIMARY KEY, cudnn_version INTEGER NOT NULL, device TEXT NOT NULL, "
                    "result TEXT NOT NULL, stored_at REAL NOT NULL)")
        con.execute("CREATE VIEW results AS SELECT * FROM stored")
        con.commit()
    with pytest.raises(OSError, match=r"support cache .*view.sqlite': could not clear it \(cannot modify results "
                                      r"because it is a view\)"):
        SupportCache(path).clear()
    out = subprocess.run([sys.executable, "-m", "cudnn_backend", "support", "--clear-cache", "--cache", str(path)],
                         capture_output=True, text=True, timeout=120, env=dict(os.environ, COLUMNS="200"))
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    assert "error: support cache" in out.stderr and "could not clear it" in out.stderr, out.stderr


# ---------------------------------------------------------------------------------------------
# odd catalogues
# ---------------------------------------------------------------------------------------------
def test_empty_catalogues_are_refused(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing here\n\n")
    with pytest.raises(ValueError, match="lists no graphs"):
        cat.load_catalogue(empty)
    py = tmp_path / "empty.py"
    py.write_text("X = 1\n")
    with pytest.raises(ValueError, match="no public function"):
        cat.load_catalogue(py)
    with pytest.raises(ValueError, match="no catalogue entry to probe"):
        support_matrix([], H100)
    with pytest.raises(ValueError, match="none passes the filters"):
        support_matrix(None, H100, family="matmul", layout="nchw")
    with pytest.raises(ValueError, match="is not a file"):
        cat.load_catalogue(tmp_path / "missing.txt")
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(ValueError, match="not UTF-8"):
        cat.load_catalogue(binary)


def test_huge_catalogues_are_refused_clearly(tmp_path, monkeypatch):
    monkeypatch.setattr(cat, "MAX_ENTRIES", 5)
    f = tmp_path / "huge.txt"
    f.write_text("conv_fwd n=1\n" * 50)
    with pytest.raises(ValueError, match="more than 5 graphs"):
        cat.load_catalogue(f)
    endless = tmp_path / "endless.py"  # read one past the limit, never to its end
    endless.write_text("import itertools\ndef g():\n    pass\nCATALOGUE = itertools.repeat(('g', g))\n")
    with pytest.raises(ValueError, match="more than 5 graphs"):
        cat.load_catalogue(endless)


def test_a_text_catalogue_with_duplicates_and_a_raising_builder(tmp_path):
    user = tmp_path / "user.py"
    user.write_text(USER_FILE)
    f = tmp_path / "mine.txt"
    f.write_text(f"# my graphs\nchain head=matmul chain=bias,gelu data_type=bf16\n"
                 f"chain head=matmul chain=bias,gelu data_type=bf16   # the same again\n"
                 f"{user}:raises\n{user}:conv_relu\nconv_bias_relu n=2 c=16 h=8 w=8 k=16\n")
    entries = cat.load_catalogue(f)
    assert [e.name for e in entries] == ["matmul+bias+gelu", "matmul+bias+gelu", "raises", "conv_relu",
                                         "conv_bias_relu n=2 c=16 h=8 w=8 k=16"]
    m = support_matrix(f, H100, workers=1, cache=False)
    assert len(m) == 4 and any("1 duplicate entry" in n for n in m.notes)
    assert m["raises [- -]"].stage == "builder"
    assert m["conv_relu [fp16 nhwc]"].supported and m["matmul+bias+gelu [bf16 row]"].supported
    with pytest.raises(ValueError, match="chain .*swish"):
        bad = tmp_path / "bad.txt"
        bad.write_text("chain head=matmul chain=swish\n")
        cat.load_catalogue(bad)


def test_a_python_catalogue(tmp_path):
    f = tmp_path / "user.py"
    f.write_text(USER_FILE)
    entries = cat.load_catalogue(f)
    assert [e.name for e in entries] == ["conv_relu", "raises"]  # takes_an_argument and _private are no entries
    assert entries[0].ops == "conv + ReLU, fp16 NHWC"
    listed = tmp_path / "listed.py"
    listed.write_text(USER_FILE + "\nCATALOGUE = [('first', conv_relu), ('again', conv_relu, {})]\n")
    assert [e.name for e in cat.load_catalogue(listed)] == ["first", "again"]
    wrong = tmp_path / "wrong.py"
    wrong.write_text("CATALOGUE = [('x', print, {})]\n")
    with pytest.raises(ValueError, match="top level of that file"):
        cat.load_catalogue(wrong)
    broken = tmp_path / "broken.py"
    broken.write_text("raise ImportError('no')\n")
    with pytest.raises(ValueError, match=r"importing .* failed: .*broken\.py:1: ImportError: no"):
        cat.load_catalogue(broken)


def test_filters_on_labels_known_once_built(tmp_path):
    f = tmp_path / "user.py"
    f.write_text(USER_FILE)
    m = support_matrix(f, H100, workers=1, cache=False, data_type="bf16")
    assert len(m) == 1 and m[0].stage == "builder"  # the raising one has no labels; conv_relu is fp16
    assert any("did not pass the filters" in n for n in m.notes)


def test_worker_processes_and_the_serial_path_agree(tmp_path):
    entries = cat.filter_entries(cat.default_catalogue(), family="conv_fwd", data_type="fp16", layout="nhwc",
                                 name="+relu")
    parallel = support_matrix(entries, H100, workers=2, cache=False)
    serial = support_matrix(entries, H100, workers=1, cache=False)
    assert parallel.workers == 2 and len(parallel) == len(entries) > 2
    assert [(r.key, r.status, r.configs) for r in parallel] == [(r.key, r.status, r.configs) for r in serial]


# ---------------------------------------------------------------------------------------------
# outputs
# ---------------------------------------------------------------------------------------------
def test_json_csv_and_heatmap(small_matrix, tmp_path):
    back = SupportMatrix.load(small_matrix.write_json(tmp_path / "m.json"))
    assert [r.to_dict() for r in back] == [r.to_dict() for r in small_matrix]
    assert back.device == small_matrix.device and back.cudnn_version == small_matrix.cudnn_version
    data = json.loads((tmp_path / "m.json").read_text())
    assert any(line.startswith("kernels: measured only on a GPU") for line in data["legend"])
    rows = (tmp_path / "m.csv")
    small_matrix.write_csv(rows)
    lines = rows.read_text().splitlines()
    assert lines[0].startswith("family,graph,data_type,layout,status") and len(lines) == 7
    pytest.importorskip("matplotlib")
    png = support.plot_support_heatmap(small_matrix, tmp_path / "m.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="not a support matrix"):
        SupportMatrix.from_dict({"results": []})


@pytest.mark.parametrize("edit, problem", [
    (lambda d: d["results"][0].__setitem__("name", "\x1b[2Jevil"), r"results\[0\]: name: control character '\\x1b'"),
    (lambda d: d["results"][0].__setitem__("stage", "bogus"), r"results\[0\]: stage: 'bogus' is not one of builder"),
    (lambda d: d["results"][0].__setitem__("kinds", {"a": "b"}), r"results\[0\]: kinds.a: expected an int, not str"),
    (lambda d: d["results"][0].__setitem__("engines_finalized", ["a"]), r"engines_finalized\[0\]: expected an int"),
    (lambda d: d["device"].__setitem__("sm", [9, 0]), r"device.sm: expected int or None, not list"),
    (lambda d: d["device"].__setitem__("name", "GPU\rspoofed"), r"device.name: control character '\\r'"),
])
def test_a_matrix_edited_by_hand_is_refused_naming_the_field(small_matrix, tmp_path, edit, problem):
    """A matrix file is read back to be compared and shown: what it says is checked as the probes write it (results
    from the support cache too), and no escape sequence reaches a terminal; a reason of several lines passes."""
    data = small_matrix.to_dict()
    edit(data)
    with pytest.raises(ValueError, match=problem):
        SupportMatrix.from_dict(data)
    data = small_matrix.to_dict()
    data["results"][0]["reason"] = "cuDNN said:\n\tline two"
    assert SupportMatrix.from_dict(data).results[0].reason == "cuDNN said:\n\tline two"


# ---------------------------------------------------------------------------------------------
# comparisons
# ---------------------------------------------------------------------------------------------
def _result(name, supported, engines=(5, 10), configs=None, stage=None):
    return SupportResult(name, "conv_fwd", "fp16", "nhwc", supported=supported, stage=None if supported else stage,
                         engines_supported=engines[0], engines_total=engines[1],
                         configs=configs or {"A": 3, "FALLBACK": 1}, verified="plan" if supported else "")


def test_compare_matrices_classifies_every_change():
    dev = {"name": "x"}
    a = SupportMatrix([_result("kept", True), _result("lost", True), _result("gained", False, stage="heuristics"),
                       _result("moved", True), _result("only_a", True)], dev, "9.19.0")
    b = SupportMatrix([_result("kept", True), _result("lost", False, stage="plan"), _result("gained", True),
                       _result("moved", True, configs={"A": 9, "FALLBACK": 1}), _result("only_b", False,
                                                                                      stage="finalize")],
                      dev, "9.22.0")
    c = support.compare_matrices(a, b, "old", "new")
    change = {r["graph"]: r["change"] for r in c.rows}
    assert change == {"kept": "same", "lost": "lost", "gained": "gained", "moved": "counts", "only_a": "only in A",
                      "only_b": "only in B"}
    assert [r["graph"] for r in c.gained] == ["gained"] and [r["graph"] for r in c.lost] == ["lost"]
    assert c.counts()["same"] == 1 and "kept" not in c.table()
    assert json.loads(json.dumps(c.to_dict()))["counts"]["lost"] == 1


def test_compare_matrices_counts_kernels_where_both_ran_on_a_gpu():
    dev = {"name": "x"}
    gpu = [_result(n, True) for n in ("fused", "split", "offline")]
    gpu[0].kernel_count = gpu[1].kernel_count = 1
    b = [_result(n, True) for n in ("fused", "split", "offline")]
    b[0].kernel_count, b[1].kernel_count = 1, 3  # the fusion lost under B: three kernels where one ran
    c = support.compare_matrices(SupportMatrix(gpu, dev, "9.19.0"), SupportMatrix(b, dev, "9.28.1"))
    rows = {r["graph"]: r for r in c.rows}
    assert {g: r["change"] for g, r in rows.items()} == {"fused": "same", "split": "counts", "offline": "same"}
    assert (rows["split"]["A kernels"], rows["split"]["B kernels"]) == (1, 3)
    assert rows["offline"]["A kernels"] is None  # offline, or probed without running: no count, no change
    from rich.console import Console

    from cudnn_backend.cli import render
    console = Console(record=True, width=220)
    console.print(render.support_comparison(c))
    text = console.export_text()
    assert "kernels A/B" in text and "1/3" in text and "kernels launched" in text


def test_compare_two_profiles():
    c = support.compare_support(profiles=(H100, "h200"), family="conv_fwd", data_type="fp16", layout="nhwc",
                                name="+bias+relu", workers=1)
    assert c.label_a == "h100" and len(c.rows) >= 2
    assert {r["change"] for r in c.rows} <= {"same", "counts", "gained", "lost"}
    assert c.a.device["name"].startswith("NVIDIA H100") and c.b.device["name"].startswith("NVIDIA H200")
    with pytest.raises(ValueError, match="profiles=.* or releases="):
        support.compare_support()
    with pytest.raises(ValueError, match="two items"):
        support.compare_support(profiles=(H100,))


def test_compare_two_releases_each_in_its_own_process(tmp_path):
    # the loaded release twice, each probed by a child process; a cache file given is the children's (--cache)
    from cudnn_backend._bindings import _loader
    profile = tmp_path / "h100.json"
    cb.DeviceProfile.bundled(H100).save(profile)
    cache = tmp_path / "children.sqlite"
    c = support.compare_support(releases=(None, _loader.load_cudnn().path), device_profile=profile,
                                family="conv_fwd", data_type="fp16", layout="nhwc", name="conv_fwd+bias+relu",
                                workers=1, cache=cache)
    version = cb.runtime.profiles.format_version(cb.get_version())
    assert c.a.cudnn_version == c.b.cudnn_version == version
    assert [r["graph"] for r in c.rows] == ["conv_fwd+bias+relu", "conv_fwd+bias+relu>reduction",
                                            "conv_fwd+bias+relu>genstats"]
    assert {r["change"] for r in c.rows} == {"same"}
    with sqlite3.connect(cache) as con:  # the first child stored the three graphs, the second found them there
        assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 3
    with pytest.raises(ValueError, match="neither a file, a folder nor a release"):
        support.compare_support(releases=(None, tmp_path / "nope.so"), device_profile=profile)
    (tmp_path / "text.so").write_text("not a library")
    with pytest.raises(ValueError, match="is no shared library"):
        support.compare_support(releases=(None, tmp_path / "text.so"), device_profile=profile)


def test_engine_counts_agree_with_list_engines():
    r = probe_graph("conv_fwd", H100, kwargs=dict(n=2, c=16, h=8, w=8, k=16))
    g, og, _, _ = support.materialize("conv_fwd", dict(n=2, c=16, h=8, w=8, k=16))
    infos = _engines.list_engines(og, cb.DeviceProfile.bundled(H100), probe_configs=False)  # those that finalize
    assert (r.engines_supported, r.engines_total) == (sum(i.finalized for i in infos), len(infos))


def test_the_sqlite_file_holds_plain_json(tmp_path):
    cache = SupportCache(tmp_path / "plain.sqlite")
    support_matrix(_entries("conv_fwd [fp16 nhwc]"), H100, workers=1, cache=cache)
    with sqlite3.connect(tmp_path / "plain.sqlite") as con:
        (text,), = con.execute("SELECT result FROM results").fetchall()
    assert json.loads(text)["status"] == "yes"
