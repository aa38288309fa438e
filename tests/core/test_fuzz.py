"""Hypothesis fuzzing of the checked Descriptor API: no crash, and only our exceptions.

A crash (segfault, abort) would take pytest down, so the fuzzing runs in subprocesses
(``python -m tests.helpers.fuzz_worker``, one per mode, both started at once so that they share the machine's cores)
and these tests check their exit status and summaries:

* ``test_fuzz_random``: random descriptor types x attribute names x attribute types x counts x
  values of every Python kind x call orders (create / set / get / element_count / finalize / close /
  drop / gc / __init__ again / is_same_topology / get_execution_plan_workspace_size, repeated).
* ``test_fuzz_structured``: each descriptor type's own attributes with the schema's attribute types,
  plausible values and children from a pool of real descriptors (often of the wrong type,
  unfinalized, closed or finalized while empty), then ``finalize`` (sometimes with
  ``check_required=False``) and ``get`` of every attribute; finalized results feed the next link of a
  chain (op -> graph -> heuristics -> engine config -> plan); serialized plans and device profiles are
  mutated (truncated, numbers changed, keys renamed, characters flipped, arrays retyped).

Both start with the same prelude (a pool of real descriptors) and replay every crash found so far
(``regression_cases`` in the worker) before fuzzing.

Each mode makes at least ``CUDNN_BACKEND_FUZZ_CALLS`` calls per run: 25,000 (at least 10,000) in a slow run
(``--run-slow``), 3,000 in the default run. The seed is
``CUDNN_BACKEND_FUZZ_SEED`` when set, else fixed in CI (``CI_SEED``) and a fresh one per run elsewhere
(printed, and part of every failure message). On a failure the message holds the exit status, the worker's stderr, the command that
replays the run, and the path and tail of a standalone reproducer script (the logged call sequence).
"""
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import cudnn_backend as cb

from tests.helpers.crash import child_env
from tests.helpers.env import ROOT

WORKER = "tests.helpers.fuzz_worker"
SLOW_MIN_CALLS = 10_000  # the requirement of a slow (full) run: at least this many cuDNN-facing calls per mode
DEFAULT_CALLS = 3_000  # the default run's smaller fuzz (a few seconds per mode)
MAX_SECONDS = float(os.environ.get("CUDNN_BACKEND_FUZZ_MAX_SECONDS", "150"))
# CI gates on a fixed seed, so a red run is reproducible and unrelated changes cannot flake on a new one;
# elsewhere every run explores a fresh seed (CUDNN_BACKEND_FUZZ_SEED=random forces that in CI too).
CI_SEED = 20261121
_seed_env = os.environ.get("CUDNN_BACKEND_FUZZ_SEED", "")
SEED = (int(_seed_env) if _seed_env.isdigit()
        else CI_SEED if os.environ.get("CI") and _seed_env != "random" else random.randrange(2 ** 32))
MODES = ("random", "structured")
OUR_EXCEPTIONS = {"TypeError", "ValueError"} | {
    name for name, value in vars(cb.errors).items() if isinstance(value, type) and issubclass(value, cb.CudnnBackendError)
}


class Run:
    def __init__(self, mode, folder, calls):
        self.mode = mode
        self.log = folder / f"fuzz_{mode}_reproducer.py"
        self.out_path = folder / f"fuzz_{mode}.stdout"
        self.err_path = folder / f"fuzz_{mode}.stderr"
        self.calls = calls
        self.cmd = [sys.executable, "-m", WORKER, mode, "--seed", str(SEED), "--calls", str(calls),
                    "--max-seconds", str(MAX_SECONDS), "--log", str(self.log)]
        self.started = time.monotonic()
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.proc = subprocess.Popen(self.cmd, stdout=out, stderr=err, cwd=str(ROOT), env=child_env())
        self.returncode = None
        self.seconds = None

    def wait(self):
        if self.returncode is None:
            try:
                self.returncode = self.proc.wait(timeout=MAX_SECONDS + 120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self.returncode = "timeout (a hang: the reproducer's last call)"
            self.seconds = time.monotonic() - self.started
        return self

    @property
    def stdout(self):
        return self.out_path.read_text(errors="replace")

    @property
    def stderr(self):
        return self.err_path.read_text(errors="replace")

    def summary(self):
        for line in reversed(self.stdout.splitlines()):
            if line.startswith("FUZZ-SUMMARY "):
                return json.loads(line[len("FUZZ-SUMMARY "):])
        return None

    def describe_returncode(self):
        rc = self.returncode
        if isinstance(rc, int) and rc < 0:
            return f"killed by {signal.Signals(-rc).name}"
        if rc in (134, 139):
            return f"exit {rc} ({'SIGABRT' if rc == 134 else 'SIGSEGV'})"
        return f"exit {rc}"

    def replay_reproducer(self):
        """Run the logged call sequence alone: does it crash without hypothesis and the rest of the run?"""
        if not self.log.exists():
            return "no reproducer was written"
        try:
            r = subprocess.run([sys.executable, str(self.log)], capture_output=True, text=True, timeout=120,
                               cwd=str(ROOT), env=child_env())
        except subprocess.TimeoutExpired:
            return "the reproducer hangs on its own"
        if r.returncode == 0:
            return "the reproducer alone does NOT fail (the failure needs earlier state: rerun the seed)"
        return f"the reproducer alone fails too (exit status {r.returncode}): {r.stderr.strip()[-800:]}"

    def failure_report(self, reason):
        lines = [f"fuzz {self.mode} failed: {reason}",
                 f"seed {SEED}: rerun with CUDNN_BACKEND_FUZZ_SEED={SEED} python -m pytest tests/core/{Path(__file__).name}",
                 "or: " + " ".join(self.cmd),
                 f"--- worker stderr (tail) ---\n{self.stderr[-4000:]}"]
        if self.log.exists():
            text = self.log.read_text(errors="replace").splitlines()
            lines.append(f"--- reproducer: {self.log} ({len(text)} lines: a prelude building the pool, then the "
                         f"calls of the failing example; the last call is the culprit) ---")
            lines.append("\n".join(line if len(line) <= 2000 else line[:2000] + " ...(cut)" for line in text[-60:]))
            if not (isinstance(self.returncode, int) and self.returncode in (0, 1, 2, 3)):
                lines.append("--- " + self.replay_reproducer())
        return "\n".join(lines)


@pytest.fixture(scope="module")
def fuzz_runs(tmp_path_factory, request):
    full = request.config.getoption("--run-slow") or os.environ.get("CUDNN_BACKEND_SLOW_TESTS") == "1"
    calls = int(os.environ.get("CUDNN_BACKEND_FUZZ_CALLS", "25000" if full else str(DEFAULT_CALLS)))
    if full:
        calls = max(SLOW_MIN_CALLS, calls)
    folder = tmp_path_factory.mktemp("fuzz")
    print(f"\ncudnn_backend fuzz: CUDNN_BACKEND_FUZZ_SEED={SEED}, {calls} calls per mode, logs in {folder}")
    runs = {mode: Run(mode, folder, calls) for mode in MODES}  # both at once: they share the cores
    yield runs
    for run in runs.values():
        if run.proc.poll() is None:
            run.proc.kill()
            run.proc.wait()


def check(run):
    run.wait()
    if run.returncode != 0:
        pytest.fail(run.failure_report(run.describe_returncode()), pytrace=False)
    summary = run.summary()
    if summary is None:
        pytest.fail(run.failure_report("no FUZZ-SUMMARY line"), pytrace=False)
    print(f"fuzz {run.mode}: seed {SEED}, {summary['calls']} calls ({summary['cudnn_calls']} reached cuDNN) in "
          f"{summary['seconds']:.1f} s, {summary['examples']} examples; outcomes {summary['outcomes']}")
    unexpected = set(summary["outcomes"]) - OUR_EXCEPTIONS - {"ok", "skipped_known_crash"}
    assert not unexpected, run.failure_report(f"unexpected outcomes {unexpected}")
    assert summary["calls"] >= run.calls, run.failure_report(
        f"only {summary['calls']} calls (< {run.calls}){' in the time limit' if summary['time_capped'] else ''}")
    # the fuzz must keep reaching cuDNN, not only the Python-side checks
    assert summary["cudnn_calls"] >= run.calls // 5, run.failure_report(f"only {summary['cudnn_calls']} reached cuDNN")
    return summary


def test_fuzz_random(fuzz_runs):
    summary = check(fuzz_runs["random"])
    for kind in ("TypeError", "ValueError", "ok"):
        assert summary["outcomes"].get(kind, 0) > 0, kind


def test_fuzz_structured(fuzz_runs):
    summary = check(fuzz_runs["structured"])
    # descriptors of several types finalize (4 at the least seen in 60 seeds), and the chains get past the leaves
    # (tensors, pointwise and convolution descriptors): an operation, a graph, heuristics, a config or a plan
    finalized = summary["finalized"]
    assert len(finalized) >= 4, finalized
    assert any(t.startswith("OPERATION") or t in ("ENGINEHEUR", "ENGINECFG", "EXECUTION_PLAN", "VARIANT_PACK")
               for t in finalized), finalized
    assert summary["outcomes"].get("ok", 0) > fuzz_runs["structured"].calls // 10
