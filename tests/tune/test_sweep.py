"""Offline sweeps: the serial, process and Ray executors give the same results, and a failing task is reported
without stopping the others."""
import multiprocessing
import os
import pickle

import pytest

import cudnn_backend as cb
from cudnn_backend.tune import Task, dispatch_order, tasks_from_file, tasks_from_preset, work_estimate
from cudnn_backend.tune.sweeps import close_pools, cpu_workers, plan_units, shared_pool, task_sizes

pytestmark = pytest.mark.skipif(cb.core.device.gpu_available(), reason="offline sweeps (a GPU times instead)")

TASKS = [
    Task("conv_fwd", dict(n=1, c=8, h=8, w=8, k=8)),
    Task("matmul_bias_relu", dict(batch=2, m=64, n=64, k=64)),
    Task("conv_fwd", dict(n=1, c=6, h=8, w=8, k=8, groups=4), label="broken: groups do not divide c"),
    Task("layer_norm_fwd", dict(tokens=64, hidden=64)),
]


def _summary(result):
    return [(r.task, r.ok, r.error, None if r.exploration is None else
             [(c.engine_index, tuple(sorted(c.knobs.items())), c.status, c.workspace_bytes)
              for c in r.exploration.results]) for r in result]


@pytest.fixture(scope="module")
def serial():
    return cb.sweep(TASKS, job="explore", executor="serial", engines=False)


def test_serial_reports_the_failure_and_runs_the_rest(serial):
    assert [r.ok for r in serial] == [True, True, False, True]
    bad = serial.results[2]
    assert "groups" in bad.error and bad.traceback and bad.exploration is None
    assert all(r.exploration.results for r in serial if r.ok)
    assert serial.offline and len(serial.failures) == 1
    assert "FAILED" in serial.table()


def test_processes_agree_with_serial(serial):
    result = cb.sweep(TASKS, job="explore", executor="processes", workers=2, engines=False)
    assert result.workers == 2
    assert _summary(result) == _summary(serial)  # handed out largest first, reported in the order given
    assert {r.worker for r in result if r.ok} <= {"cpu worker 0", "cpu worker 1"}
    assert all(0 <= r.started <= result.wall_seconds for r in result)
    pids = {w.process.pid for w in shared_pool([None, None]).workers}
    given = cb.sweep(TASKS, job="explore", executor="processes", workers=2, engines=False, order="given")
    assert _summary(given) == _summary(serial)
    assert {w.process.pid for w in shared_pool([None, None]).workers} == pids  # the same workers, kept warm
    assert all(w.start_s == 0.0 for w in given.worker_reports)  # so the second sweep waited for no start
    close_pools()  # the workers exit, nothing left behind
    assert not multiprocessing.active_children()


BUILDERS = """
import cudnn_backend as cb

def one_conv(n, k, build=True):
    g = cb.Graph()
    x = g.tensor((n, 8, 10, 10), name="x")
    w = g.tensor((k, 8, 3, 3), name="w")
    g.conv_fwd(x, w, padding=1, output=True)
    return g

def matmul_then_relu(build=True):
    g = cb.Graph()
    a, b = g.tensor((2, 64, 16)), g.tensor((2, 16, 32))
    g.relu(g.matmul(a, b), output=True)
    return g

def no_build_flag(n):
    return one_conv(n, 4)

def broken(build=True):
    raise RuntimeError("this builder fails")

def exits(build=True):
    raise SystemExit("this builder exits")
"""


def test_work_estimate_counts_multiply_adds(tmp_path):
    path = tmp_path / "builders.py"
    path.write_text(BUILDERS)
    assert work_estimate(f"{path}:one_conv", dict(n=2, k=4)) == 2 * 4 * 10 * 10 * (8 * 3 * 3)
    assert work_estimate(f"{path}:one_conv", dict(n=4, k=4)) == 2 * work_estimate(f"{path}:one_conv", dict(n=2, k=4))
    # matmul: C's elements times K; the ReLU reads and writes C's elements
    assert work_estimate(f"{path}:matmul_then_relu") == 2 * 64 * 32 * 16 + 2 * (2 * 64 * 32)
    assert work_estimate(f"{path}:no_build_flag", dict(n=2)) is None  # not run twice: size unknown
    assert work_estimate(f"{path}:broken") is None
    assert work_estimate("no_such_pattern") is None
    sdpa = work_estimate("sdpa_fwd", dict(b=1, h=2, s_q=128, s_kv=256, d=64))
    assert sdpa == 2 * (1 * 2 * 128 * 64) * 256


def test_dispatch_order_largest_first(tmp_path):
    path = tmp_path / "builders.py"
    path.write_text(BUILDERS)
    conv = dict(c=8, h=8, w=8, k=8)
    tasks = [Task("conv_fwd", dict(conv, n=1)), Task("conv_fwd", dict(conv, n=8)), Task(f"{path}:broken"),
             Task("conv_fwd", dict(conv, n=1), label="same size, later"), Task("conv_fwd", dict(conv, n=2)),
             Task(f"{path}:one_conv", dict(n=8, k=4))]
    # unknown size first (the user's functions are not run here to size them), then largest; ties as given
    assert dispatch_order(tasks) == [2, 5, 1, 4, 0, 3]
    assert dispatch_order(tasks, "given") == [0, 1, 2, 3, 4, 5]
    resnet = tasks_from_preset("resnet50")
    order = dispatch_order(resnet)
    assert sorted(order) == list(range(24)) and all(resnet[i].kwargs["n"] == 32 for i in order[:12])
    with pytest.raises(ValueError, match="order"):
        dispatch_order(tasks, "smallest")
    with pytest.raises(ValueError, match="order"):
        cb.sweep(TASKS[:1], order="random")


def test_ray_agrees_with_serial(serial):
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        result = cb.sweep(TASKS, job="explore", executor="ray", engines=False)
        assert _summary(result) == _summary(serial)
        assert all(r.worker.startswith("ray task") for r in result if r.ok)
    finally:
        ray.shutdown()


def test_tune_offline_sweep_gives_heuristics_picks(tmp_path):
    result = cb.sweep(TASKS[:2], job="tune", executor="serial", cache=tmp_path / "c.sqlite")
    assert all(r.ok for r in result)
    for r in result:  # nothing timed: the winner is the pick (heuristics' first config that builds), not cached
        chosen = r.exploration.chosen
        assert chosen is not None and not r.exploration.timed and r.cached == ""
        assert (r.winner["engine_index"], r.winner["knobs"], r.winner["time_us"]) == (chosen.engine_index,
                                                                                       chosen.knobs, None)
        assert r.row()["winner"] == chosen.config_text()
    assert cb.PlanCache(tmp_path / "c.sqlite").entries() == []


def test_tasks_pickle_and_parse(tmp_path):
    assert pickle.loads(pickle.dumps(TASKS[0])) == TASKS[0]
    listing = tmp_path / "graphs.txt"
    listing.write_text("# graphs\nconv_fwd n=2 c=8 h=8 w=8 k=8\n\nmatmul_bias_relu batch=2  # trailing\n")
    tasks = tasks_from_file(listing)
    assert tasks == [Task("conv_fwd", dict(n=2, c=8, h=8, w=8, k=8)), Task("matmul_bias_relu", dict(batch=2))]
    listing.write_text("conv_fwd n\n")
    with pytest.raises(ValueError, match="key=value"):
        tasks_from_file(listing)
    assert len(tasks_from_preset("resnet50")) == 24 and len(tasks_from_preset("user")) >= 4
    with pytest.raises(ValueError, match="preset"):
        tasks_from_preset("resnet51")


def test_bad_sweeps_refused():
    with pytest.raises(cb.SweepError, match="no tasks"):
        cb.sweep([])
    with pytest.raises(ValueError, match="job"):
        cb.sweep(TASKS[:1], job="train")
    with pytest.raises(ValueError, match="executor"):
        cb.sweep(TASKS[:1], executor="threads")
    with pytest.raises(TypeError, match="tasks"):
        cb.sweep([3.5])


def test_cpu_workers_are_at_most_one_per_graph_and_per_core(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert [cpu_workers(99999, 12), cpu_workers(99999, 2), cpu_workers(3, 12), cpu_workers(None, 12),
            cpu_workers(None, 1), cpu_workers(2, 0), cpu_workers(8, None)] == [4, 2, 3, 4, 1, 1, 4]
    with pytest.raises(ValueError, match="workers"):
        cpu_workers(0, 12)


def test_ray_addresses_are_checked_before_ray_starts(monkeypatch):
    """An address no cluster answers at is a SweepError within the timeout (ray.init would retry it for ever);
    one that answers passes; a malformed one is refused as an option."""
    from cudnn_backend.tune.options import SweepOptions
    from cudnn_backend.tune.sweeps import check_ray_address
    import socket

    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        check_ray_address(f"127.0.0.1:{port}", timeout=5)
        check_ray_address(f"ray://127.0.0.1:{port}", timeout=5)
    with pytest.raises(cb.SweepError, match=f"ray_address: no Ray cluster answers at '127.0.0.1:{port}'") as e:
        check_ray_address(f"127.0.0.1:{port}", timeout=5)
    assert e.value.option == "ray_address"
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    with pytest.raises(cb.SweepError, match=r"\$RAY_ADDRESS: no Ray cluster answers"):
        check_ray_address(None, timeout=5)
    check_ray_address("local")  # a local Ray: nothing to reach
    for bad in ("nowhere", "http://host:1/x", "host:port", "ray://"):
        with pytest.raises(ValueError, match="ray_address=.*not an address Ray takes"):
            SweepOptions(ray_address=bad)


@pytest.mark.parametrize("address, found", [("auto", r"'auto' found no running Ray cluster on this machine, and "
                                                       r"\$RAY_ADDRESS is not set"),
                                              ("ray://127.0.0.1:1", r"Ray could not join a cluster at 'ray://")])
def test_ray_finding_no_cluster_is_said_in_this_option_s_words(monkeypatch, address, found):
    """Ray's own words for it name Ray's --address flag, which this command line does not have."""
    import types

    from cudnn_backend.tune import sweeps

    def init(**kwargs):
        raise ConnectionError("Could not find any running Ray instance. Please specify the one to connect to by "
                              "setting `--address` flag or `RAY_ADDRESS` environment variable.")

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(sweeps, "_ray_module", lambda: types.SimpleNamespace(is_initialized=lambda: False, init=init))
    monkeypatch.setattr(sweeps, "check_ray_address", lambda address: None)
    with pytest.raises(cb.SweepError, match=f"^ray_address: {found}.*; start one .*'local' for a Ray of this "
                                            r"process \(Ray: Could not find") as e:
        sweeps._run_ray([], [], "explore", None, True, address, None, None)
    assert e.value.option == "ray_address"


def test_the_users_graph_functions_are_not_run_to_size_them(tmp_path):
    """Sizing a task for the dispatch order runs no function of the user's in the coordinator (one that crashes
    the process would end the sweep there, not fail its own task in a worker); the package's builders are sized."""
    marker = tmp_path / "ran"
    path = tmp_path / "builders.py"
    path.write_text(BUILDERS + f"\ndef marks(build=True):\n    open({str(marker)!r}, 'a').write('x')\n"
                               "    return one_conv(1, 4, build=build)\n")
    tasks = [Task(f"{path}:marks"), Task("conv_fwd", dict(n=1, c=8, h=8, w=8, k=8))]
    assert task_sizes(tasks)[0] is None and task_sizes(tasks)[1] > 0
    assert dispatch_order(tasks) == [0, 1] and [u.index for u in plan_units(tasks, "largest", workers=2)] == [0, 1]
    assert not marker.exists()


def test_sweep_arguments_it_would_ignore_are_refused():
    with pytest.raises(TypeError, match=r"^tasks: expected Tasks, .* not NoneType$"):
        cb.sweep(None)
    with pytest.raises(ValueError, match=r"^gpus: the serial executor runs every graph here"):
        cb.sweep(["conv_bias_relu"], gpus=2)
    with pytest.raises(ValueError, match=r"^workers: the serial executor runs every graph here"):
        cb.sweep(["conv_bias_relu"], workers=2)
    with pytest.raises(cb.SweepError, match=r"^gpus: this sweep is offline"):
        cb.sweep(["conv_bias_relu"], executor="processes", gpus=2, device_profile="h200")
    with pytest.raises(ValueError, match=r"sm_count_target=2147483648: expected an integer from 1 to 2147483647"):
        cb.TuneOptions(sm_count_target=1 << 31)


@pytest.mark.parametrize("executor", ["serial", "processes"])
def test_a_builder_that_exits_is_one_failed_task_whatever_the_executor(tmp_path, executor):
    path = tmp_path / "builders.py"
    path.write_text(BUILDERS)
    kw = {} if executor == "serial" else {"workers": 1}
    result = cb.sweep([Task(f"{path}:exits"), Task(f"{path}:one_conv", dict(n=1, k=4))], job="explore",
                      executor=executor, engines=False, device_profile="h200", **kw)
    failed, done = result.results
    assert not failed.ok and done.ok
    assert failed.error.endswith("builders.py:24: SystemExit: this builder exits"), failed.error


def test_a_task_value_that_cannot_reach_a_worker_is_named_before_the_sweep():
    import threading

    executor = "processes"
    with pytest.raises(TypeError, match=r"^tasks\[1\] \(conv_fwd .*\): x=lock: the '" + executor + r"' executor sends "
                                        r"each task to another process, and this value does not pickle \(.*\); give "
                                        r"plain values \(numbers, strings, lists\), or executor='serial'$"):
        cb.sweep([Task("conv_fwd", {"n": 1}), Task("conv_fwd", {"n": 1, "x": threading.Lock()})], job="explore",
                 executor=executor, engines=False, device_profile="h200")


def test_a_list_file_s_relative_graph_files_are_the_ones_beside_it(tmp_path, monkeypatch):
    """As a requirements file's paths: ``my_blocks.py:f`` in lists/graphs.txt is lists/my_blocks.py, from any folder;
    a file not beside the list stays as written (from the current folder)."""
    from cudnn_backend.tune.sweeps import tasks_from_file

    lists = tmp_path / "lists"
    lists.mkdir()
    (lists / "my_blocks.py").write_text("def f():\n    return None\n")
    (tmp_path / "here.py").write_text("def g():\n    return None\n")
    listing = lists / "graphs.txt"
    listing.write_text("my_blocks.py:f\nhere.py:g\nconv_fwd n=2\n" + f"{tmp_path / 'here.py'}:g\n")
    monkeypatch.chdir(tmp_path)
    builders = [t.builder for t in tasks_from_file(listing)]
    assert builders == [f"{lists / 'my_blocks.py'}:f", "here.py:g", "conv_fwd", f"{tmp_path / 'here.py'}:g"]
