"""The tune layer given what it should refuse or survive: the user's files and functions, edited caches and
matrices, loose option types."""
import pytest

import cudnn_backend as cb
from cudnn_backend.tune import graphs


def test_a_graph_file_is_imported_once_per_process_until_it_changes(tmp_path):
    count = tmp_path / "count"
    path = tmp_path / "counted.py"
    path.write_text(f"open({str(count)!r}, 'a').write('x')\ndef f():\n    return 1\n")
    first = graphs.load_file_module(path)
    assert graphs.load_file_module(path) is first and graphs.load_builder(f"{path}:f") is first.f
    assert count.read_text() == "x"
    path.write_text(f"open({str(count)!r}, 'a').write('y')\ndef f():\n    return 2\n")  # edited: loaded again
    assert graphs.load_builder(f"{path}:f")() == 2 and count.read_text() == "xy"


@pytest.mark.parametrize("line, expected", [
    ("chain head=bogus", "chain {'head': 'bogus'}: head: 'bogus' is not one of conv_fwd"),
    ("chain stride=abc", "chain {'stride': 'abc'}: stride: expected an integer, not str"),
    ("chain stride=0", "chain {'stride': 0}: stride is 0"),
    ("chain layout=5", "chain {'layout': 5}: layout: a convolution head takes 'nhwc' or 'nchw', not 5"),
    ("chain tail=sum", "chain {'tail': 'sum'}: tail: 'sum' is not None or one of"),
    ("chain data_type=fp99", "chain {'data_type': 'fp99'}: data_type: 'fp99' is not a DataType"),
    ("chain chain=1", "chain {'chain': 1}: chain: expected chain elements as a comma list"),
])
def test_a_typo_in_a_chain_line_is_refused_naming_the_line_and_key(tmp_path, line, expected):
    from cudnn_backend.tune.catalogue import load_catalogue

    path = tmp_path / "mine.txt"
    path.write_text(f"chain head=matmul chain=bias\n{line}\n")
    with pytest.raises(ValueError) as e:
        load_catalogue(path)
    assert f"catalogue: {str(path)!r}: {expected}" in str(e.value)
    path.write_text("chain head=matmul chain=bias,gelu\nchain chain=relu stride=2\n")  # well-formed lines: rows
    assert [x.name for x in load_catalogue(path)] == ["matmul+bias+gelu", "conv_fwd+relu,stride=2"]


@pytest.mark.parametrize("key", ["family", "data_type", "layout", "name"])
@pytest.mark.parametrize("value", ["", ",", " ", "conv_fwd,,matmul", ()])
def test_an_empty_filter_is_refused_naming_it(key, value):
    from cudnn_backend.tune.catalogue import default_catalogue, filter_entries
    from cudnn_backend.tune.options import SupportOptions

    if key == "name" and value in ((), "conv_fwd,,matmul", ","):  # (a text: a comma is a character of it)
        return
    for call in (lambda: SupportOptions(**{key: value}), lambda: filter_entries(default_catalogue(), **{key: value})):
        with pytest.raises((ValueError, TypeError), match=f"^{key}="):
            call()


@pytest.mark.parametrize("cell", ["[]", "null", "{}", '{"supported": "yes", "name": 5}', '{"name": "x", "chosen": "x"}',
                                  "[" * 100000 + "]" * 100000, "not json"])
def test_an_edited_support_cache_row_is_a_miss_with_a_warning(tmp_path, cell):
    import sqlite3

    from cudnn_backend.tune.catalogue import default_catalogue
    from cudnn_backend.tune.support import SupportCache, SupportCacheWarning, support_matrix

    entries = [e for e in default_catalogue() if e.key == "conv_fwd [fp16 nhwc]"]
    cache = SupportCache(tmp_path / "c.sqlite")
    first = support_matrix(entries, "h200", workers=1, cache=cache)
    with sqlite3.connect(cache.path) as con:
        con.execute("UPDATE results SET result = ?", (cell,))
    with pytest.warns(SupportCacheWarning, match="is not a probe result"):
        again = support_matrix(entries, "h200", workers=1, cache=cache)
    assert again.cached == 0 and again[0].status == first[0].status
    assert support_matrix(entries, "h200", workers=1, cache=cache).cached == 1  # stored over


def test_a_support_cache_path_named_needs_its_folder(tmp_path):
    from cudnn_backend.tune.support import SupportCache

    with pytest.raises(ValueError, match="^cache: the folder of .* does not exist"):
        SupportCache(tmp_path / "a" / "typo" / "c.sqlite")
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize("change, expected", [
    ({"version": 99}, "version: 99 is not a version"), ({"cudnn_version": 5}, "cudnn_version: expected str"),
    ({"results": "abc"}, "results: expected list"), ({"device": None}, "device: expected dict"),
    ({"plans": "some"}, "plans: 'some' is not one of"), ({"kernels": "yes"}, "kernels: expected bool"),
])
@pytest.mark.parametrize("row_change, row_expected", [
    ({}, None), ({"configs": [1]}, "results[0]: configs: expected dict"),
    ({"chosen": "x"}, "results[0]: chosen: expected dict or None"), ({"supported": "yes"}, "supported: expected bool"),
    ({"engines_total": True}, "engines_total: expected int or None, not bool"),
])
def test_a_matrix_file_is_checked_field_by_field(change, expected, row_change, row_expected):
    from cudnn_backend.tune.support import SupportMatrix, SupportResult

    good = SupportMatrix([SupportResult("g", supported=True)], {"name": "x"}, "9.28.1").to_dict()
    assert SupportMatrix.from_dict(good).results[0].supported is True
    if row_expected is not None:
        bad = dict(good, results=[dict(good["results"][0], **row_change)])
        with pytest.raises(ValueError, match=row_expected.replace("[", r"\[")):
            SupportMatrix.from_dict(bad)
    with pytest.raises(ValueError, match=f"^{expected}"):
        SupportMatrix.from_dict(dict(good, **change))


def test_real_options_refuse_numpy_bools_as_they_refuse_bools():
    np = pytest.importorskip("numpy")
    from cudnn_backend.tune.options import TuneOptions

    for value in (True, np.bool_(True), np.bool_(False)):
        with pytest.raises(TypeError, match="^race_keep=.*: expected a fraction in \\(0, 1\\], not bool"):
            TuneOptions(race_keep=value)
    assert TuneOptions(race_keep=np.float32(0.5)).race_keep == 0.5


def test_integers_are_read_as_typed_leading_zeros_too():
    from cudnn_backend.tune.options import Count, Gpus

    assert [Count(1).parse(t) for t in ("010", "10", "0x10", " 7 ")] == [10, 10, 16, 7]
    assert Gpus().parse("02") == 2
    for bad in ("abc", "1.5", ""):
        with pytest.raises(ValueError, match="expected an integer"):
            Count(1).parse(bad)


def test_a_deviceprop_descriptor_is_a_device_profile_everywhere():
    import cudnn_backend as cb
    from cudnn_backend.runtime.profiles import DeviceProfile, profile_of

    bundled = DeviceProfile.bundled("h200")
    profile = graphs.device_profile(bundled.descriptor())
    assert isinstance(profile, DeviceProfile) and profile.device_name == bundled.device_name
    assert profile.deviceprop_json == bundled.for_release().deviceprop_json
    g = cb.Graph("relu")
    g.relu(g.tensor([1, 8, 4, 4]), output=True)
    exploration = cb.explore(g, device_profile=bundled.descriptor())
    assert exploration.notes[0].startswith("offline against the device profile given (NVIDIA H200")
    with pytest.raises(ValueError, match=r"^device_profile: the CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR is not finalized"):
        graphs.device_profile(cb.typed.DeviceProp())
    with pytest.raises(TypeError, match=r"^device_profile: expected a CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, not int$"):
        DeviceProfile.from_descriptor(5)
    # a descriptor made elsewhere gets its profile known, so plans built against it name their device
    raw = cb.typed.DeviceProp(json_representation=bundled.for_release().deviceprop_json).finalize()
    assert profile_of(raw) is None
    made = DeviceProfile.from_descriptor(raw)
    assert profile_of(raw) is made and made.device_name == "NVIDIA H200"


@pytest.mark.parametrize("name", [5, b"conv", ["x"]])
def test_a_name_that_is_no_str_is_refused(name):
    with pytest.raises(TypeError, match=r"^name: expected a str, not "):
        cb.explore("conv_bias_relu", device_profile="h200", name=name)


def test_a_builder_that_exits_is_its_graphs_failure_never_the_callers_exit(tmp_path):
    builder = tmp_path / "exits.py"
    builder.write_text("import sys\n\n\ndef exits():\n    sys.exit(3)\n")
    with pytest.raises(ValueError, match=r"exits.py:exits exited: .*exits.py:5: SystemExit: 3"):
        cb.explore(f"{builder}:exits", device_profile="h200")


@pytest.mark.parametrize("task", [("conv_bias_relu", [("n", 1)]), ("label", "conv_bias_relu"),
                                  ("label", "conv_bias_relu", 5), ("conv_bias_relu",)])
def test_a_task_of_another_shape_is_refused_naming_it(task):
    with pytest.raises(TypeError, match=r"^tasks\[1\]: expected a Task, a builder name, \(builder, kwargs\)"):
        cb.sweep(["conv_bias_relu", task], device_profile="h200")


def test_tune_flags_take_only_a_bool_naming_the_parameter():
    from cudnn_backend.runtime.profiles import DeviceProfile
    from cudnn_backend.tune.support import probe_graph

    pattern, dp = cb.patterns.matmul_bias_relu(batch=1, m=16, n=16, k=16), DeviceProfile.bundled("h200")
    for name, call in {"store": lambda v: cb.autotune(pattern, device_profile=dp, store=v),
                       "kernels": lambda v: probe_graph(pattern, dp, kernels=v)}.items():
        for bad in ("no", 0, None):
            with pytest.raises(TypeError, match=f"^{name}: expected True or False, not "):
                call(bad)


@pytest.mark.parametrize("cases, expected", [("execute", ("execute",)),
                                             (["cuda graph replay", "execute"], ("cuda graph replay", "execute")),
                                             ("execute,bind + execute", ("execute", "bind + execute"))])
def test_bench_cases_are_names_a_comma_list_or_a_sequence(cases, expected):
    from cudnn_backend.tune.options import BenchOptions

    assert BenchOptions(cases=cases).cases == expected


@pytest.mark.parametrize("cases, exc, match", [
    ("exec", ValueError, r"^cases='exec': 'exec' is not one of execute, bind \+ execute, cuda graph replay$"),
    ("", ValueError, r"^cases='': .* has an empty name"),
    (5, TypeError, r"^cases=5: expected a name, a comma list of names or a sequence of them, not int$"),
    (["execute", None], TypeError, r"^cases=\['execute', None\]: expected a name"),
])
def test_bench_refuses_unknown_cases_before_asking_for_a_gpu(cases, exc, match):
    pattern = cb.patterns.matmul_bias_relu(batch=1, m=16, n=16, k=16, build=False)
    with pytest.raises(exc, match=match):
        cb.bench(pattern, cases=cases)


def test_a_fusion_report_reads_back_what_it_wrote_and_names_a_bad_field():
    import json

    from cudnn_backend.runtime.execution import KernelNode
    from cudnn_backend.tune.fusion import FusionReport

    kernel = KernelNode("_ZN4cask6kernelEv", (4, 1, 1), (128, 1, 1), 2048)
    report = FusionReport([kernel, kernel], "CUDA graph", 7, {"KERNEL_CFG": 21}, ["conv_fwd"])
    again = FusionReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again == report and again.kernel_count == 2 and not again.fused
    good = report.to_dict()
    for change, match in [
        ({"kernels": None}, r"^kernels: expected list, not NoneType"),
        ({"method": 3}, r"^method: expected str, not int"),
        ({"engine_index": "7"}, r"^engine_index: expected int or None, not str"),
        ({"kernels": [{"name": "k", "grid": [1, 1], "block": [1, 1, 1], "shared_mem_bytes": 0}]},
         r"^kernels\[0\]: grid: expected three integers >= 1"),
        ({"kernels": [{"name": "k", "grid": [1, 1, 1], "block": [0, 1, 1], "shared_mem_bytes": 0}]},
         r"^kernels\[0\]: block: expected three integers >= 1"),
        ({"kernels": [{"name": "k", "grid": [1, 1, 1], "block": [1, 1, 1], "shared_mem_bytes": -1}]},
         r"^kernels\[0\]: shared_mem_bytes: expected an integer >= 0"),
        ({"kernels": [{"grid": [1, 1, 1], "block": [1, 1, 1], "shared_mem_bytes": 0}]},
         r"^kernels\[0\]: name: expected str, not NoneType"),
        ({"kernels": ["k"]}, r"^kernels\[0\]: expected an object, not str"),
    ]:
        with pytest.raises(TypeError, match=match):
            FusionReport.from_dict({**good, **change})
    bad = dict(good)
    del bad["method"]
    with pytest.raises(TypeError, match="^method: missing"):
        FusionReport.from_dict(bad)
