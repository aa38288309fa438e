"""Runners for sweep workers in tests (``WorkerPool.run(..., runner=)``): module-level, so spawned workers import
them. Each does what its task's keyword arguments say (sleep, die) instead of searching, and reports which worker
ran which unit, and what a merge was handed."""
import os
import time

from cudnn_backend.tune.results import Exploration
from cudnn_backend.tune.sweeps import TaskResult


def scripted(task, job, options, worker="", part=None, parts=None):
    """Sleeps ``task.kwargs["sleep"]`` seconds (a part: that over the parts), or exits the process when
    ``task.kwargs["die"]`` names this unit ("whole", "part 0", "merge"); a part's Exploration notes say which
    part it was, a merge's which parts it was handed, in order."""
    kind = "merge" if parts is not None else ("whole" if part is None else f"part {part[0]}")
    if task.kwargs.get("die") == kind:
        os._exit(3)
    if parts is None:
        time.sleep(task.kwargs.get("sleep", 0.0) / (1 if part is None else part[1]))
    ex = Exploration(name=task.name, device={}, cudnn_version="", timed=False,
                     notes=[kind] + ([n for p in parts for n in p.notes] if parts is not None else []))
    return TaskResult(task, True, exploration=ex, worker=worker, seconds=0.0)


def thread_pools(task, job, options, worker="", part=None, parts=None):
    """Reports the worker's thread-pool environment (``THREAD_POOL_VARIABLES``) in its Exploration's notes."""
    from cudnn_backend.tune.sweeps import THREAD_POOL_VARIABLES

    ex = Exploration(name=task.name, device={}, cudnn_version="", timed=False,
                     notes=[f"{k}={os.environ.get(k)}" for k in THREAD_POOL_VARIABLES])
    return TaskResult(task, True, exploration=ex, worker=worker, seconds=0.0)
