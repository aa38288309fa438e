"""Offline sweeps: the serial, process and Ray executors give the same results, and a failing task is reported
without stopping the others."""
import pickle

import pytest

import cudnn_backend as cb
from cudnn_backend.tune import Task, tasks_from_file, tasks_from_preset

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
    assert _summary(result) == _summary(serial)
    assert {r.worker for r in result if r.ok} <= {"cpu worker 0", "cpu worker 1"}


def test_ray_agrees_with_serial(serial):
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        result = cb.sweep(TASKS, job="explore", executor="ray", engines=False)
        assert _summary(result) == _summary(serial)
        assert all(r.worker.startswith("ray task") for r in result if r.ok)
    finally:
        ray.shutdown()


def test_tune_offline_sweep_gives_heuristics_picks():
    result = cb.sweep(TASKS[:2], job="tune", executor="serial")
    assert all(r.ok for r in result)
    for r in result:
        assert r.exploration is not None and r.winner is None  # nothing timed: no winner, nothing cached


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
