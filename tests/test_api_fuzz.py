"""Crash-resilient fuzzing of the Python API across the layers (``tests.helpers.api_fuzz_worker``): odd values
(zero / huge sizes, NaN, NUL bytes, lone surrogates, lying ``__len__``, raising ``__index__``/``__iter__``, ...) in
one argument of one entry point per case, and threads that close objects other threads use.

Part of the default run (the CI gate: 0 crashes and 0 exceptions other than CudnnBackendError / TypeError /
ValueError allowed). ``CUDNN_BACKEND_API_FUZZ_CASES`` cases per run (default and minimum 3,000; 30,000 with
``--run-slow``); the seed is ``CUDNN_BACKEND_FUZZ_SEED`` when set, else fixed in CI (``CI`` set), else fresh. A crash
leaves a reproducer script in pytest's tmp dir (its path is in the failure message).
"""
import json
import os
import random
import subprocess
import sys

import pytest

from tests.helpers.crash import child_env
from tests.helpers.env import ROOT

MIN_CASES = 3000
CI_SEED = 20261123
_seed_env = os.environ.get("CUDNN_BACKEND_FUZZ_SEED", "")
SEED = (int(_seed_env) if _seed_env.isdigit()
        else CI_SEED if os.environ.get("CI") and _seed_env != "random" else random.randrange(2 ** 32))


@pytest.fixture(scope="module")
def fuzz_run(tmp_path_factory, request):
    full = request.config.getoption("--run-slow") or os.environ.get("CUDNN_BACKEND_SLOW_TESTS") == "1"
    cases = max(MIN_CASES, int(os.environ.get("CUDNN_BACKEND_API_FUZZ_CASES", "30000" if full else "3000")))
    out = tmp_path_factory.mktemp("api_fuzz")
    cmd = [sys.executable, "-m", "tests.helpers.api_fuzz_worker", "--cases", str(cases), "--seed", str(SEED),
           "--out", str(out), "--max-seconds", "1800" if full else "300"]
    print(f"\napi fuzz: seed {SEED}, {cases} cases, reproducers in {out}")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=2400 if full else 600, cwd=str(ROOT),
                       env=child_env())
    return cmd, cases, r


def _summary(stdout):
    for line in reversed(stdout.splitlines()):
        if line.startswith("API-FUZZ-SUMMARY "):
            return json.loads(line[len("API-FUZZ-SUMMARY "):])
    return None


def test_api_fuzz_no_crash_and_only_our_exceptions(fuzz_run):
    cmd, cases, r = fuzz_run
    summary = _summary(r.stdout)
    report = (f"seed {SEED}: rerun with CUDNN_BACKEND_FUZZ_SEED={SEED} python -m pytest tests/test_api_fuzz.py, or "
              f"{' '.join(cmd)}\n--- stdout (tail)\n{r.stdout[-4000:]}\n--- stderr (tail)\n{r.stderr[-3000:]}")
    assert summary is not None, f"no summary (exit status {r.returncode})\n{report}"
    assert not summary["crashes"], f"crashes: {summary['crashes']}\n{report}"
    assert not summary["unexpected"], f"foreign exceptions: {summary['unexpected']}\n{report}"
    assert r.returncode == 0, report
    assert summary["cases"] >= cases and not summary["time_capped"], report
    # both kinds ran, and the calls got past the checks often enough to matter
    assert summary["per_kind"].get("thread", 0) >= cases // 50, summary["per_kind"]
    assert summary["outcomes"].get("ok", 0) >= cases // 20, summary["outcomes"]
    print(f"api fuzz: seed {SEED}, {summary['cases']} cases in {summary['seconds']} s: {summary['outcomes']}")
