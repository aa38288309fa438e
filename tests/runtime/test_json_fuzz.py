"""Fuzzing of the JSON cuDNN deserializes (plans, kernel caches, device profiles) behind the checker.

``tests.helpers.json_fuzz_worker`` mutates real documents and feeds what ``cudnn_backend.core.json_checks`` accepts
to cuDNN (as the text the checker returns), each batch in a forked child; a crash of cuDNN (by a
signal, also at exit) leaves a standalone reproducer script. It runs in a subprocess, so that nothing
it does can take pytest down, and this test only reads its exit status and summary.

Part of the default run (the CI gate: 0 crashes allowed), on whichever release is loaded (CI runs it on several;
each is checked with its own table). ``CUDNN_BACKEND_JSON_FUZZ_MUTANTS`` (default and
minimum 3000; 20,000 with ``--run-slow``) mutants per run, spread over the three kinds; the release matrix of
.ci/run (``CUDNN_BACKEND_RELEASE_MATRIX=1``: the full suite has fuzzed the newest release) runs a short fuzz of
``SHORT_MUTANTS``, which ``CUDNN_BACKEND_JSON_FUZZ_MUTANTS`` may raise; the
seed is ``CUDNN_BACKEND_FUZZ_SEED`` when set, else fixed in CI (``CI_SEED``), else fresh (printed and
in every failure message). The reproducers go to pytest's tmp dir; a failure message gives their paths.
"""
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.crash import child_env
from tests.helpers.env import ROOT, version_text

WORKER = "tests.helpers.json_fuzz_worker"
MIN_MUTANTS = 3000  # the requirement
SHORT_MUTANTS = 600  # each release of .ci/run's matrix: every kind's refusals and cuDNN calls, in about 20 s
SHORT = os.environ.get("CUDNN_BACKEND_RELEASE_MATRIX") == "1"
MAX_SECONDS = float(os.environ.get("CUDNN_BACKEND_JSON_FUZZ_MAX_SECONDS", "240"))
CI_SEED = 20261122
_seed_env = os.environ.get("CUDNN_BACKEND_FUZZ_SEED", "")
SEED = (int(_seed_env) if _seed_env.isdigit()
        else CI_SEED if os.environ.get("CI") and _seed_env != "random" else random.randrange(2 ** 32))


def _summary(stdout):
    for line in reversed(stdout.splitlines()):
        if line.startswith("JSON-FUZZ-SUMMARY "):
            return json.loads(line[len("JSON-FUZZ-SUMMARY "):])
    return None


def _status(rc):
    if rc < 0:
        return f"killed by {signal.Signals(-rc).name}"
    return {3: "exit 3 (an unexpected exception)", 4: "exit 4 (cuDNN crashed)"}.get(rc, f"exit {rc}")


@pytest.fixture(scope="module")
def fuzz_run(tmp_path_factory, request):
    full = request.config.getoption("--run-slow") or os.environ.get("CUDNN_BACKEND_SLOW_TESTS") == "1"
    least = SHORT_MUTANTS if SHORT and not full else MIN_MUTANTS
    mutants = max(least, int(os.environ.get("CUDNN_BACKEND_JSON_FUZZ_MUTANTS", "20000" if full else str(least))))
    out = tmp_path_factory.mktemp("json_fuzz")
    cmd = [sys.executable, "-m", WORKER, "--mutants", str(mutants), "--seed", str(SEED), "--out", str(out),
           "--max-seconds", str(MAX_SECONDS if not full else 10 * MAX_SECONDS)]
    print(f"\njson fuzz: seed {SEED}, {mutants} mutants, reproducers in {out}")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=(MAX_SECONDS if not full else 10 * MAX_SECONDS) + 300,
                       cwd=str(ROOT), env=child_env())
    return cmd, out, r


def _report(cmd, out, r, reason):
    summary = _summary(r.stdout) or {}
    lines = [f"json fuzz failed: {reason}",
             f"seed {SEED}: rerun with CUDNN_BACKEND_FUZZ_SEED={SEED} python -m pytest tests/runtime/{Path(__file__).name}",
             "or: " + " ".join(cmd)]
    for crash in summary.get("crashes", []):
        lines.append(f"CRASH {crash['signal']} {crash['when']} ({crash['kind']}: {crash['notes']}): reproducer "
                     f"{crash['reproducer']}")
    for item in summary.get("unexpected", []):
        lines.append(f"UNEXPECTED {item['outcome']} ({item['kind']}: {item['detail']}): reproducer {item['reproducer']}")
    reproducers = sorted(out.glob("*.py"))
    if reproducers and not summary:
        lines.append("reproducers: " + ", ".join(map(str, reproducers)))
    lines.append(f"--- worker stdout (tail) ---\n{r.stdout[-3000:]}\n--- worker stderr (tail) ---\n{r.stderr[-3000:]}")
    return "\n".join(lines)


def test_json_fuzz_no_crash(fuzz_run):
    cmd, out, r = fuzz_run
    summary = _summary(r.stdout)
    if r.returncode != 0:
        pytest.fail(_report(cmd, out, r, _status(r.returncode)), pytrace=False)
    if summary is None:
        pytest.fail(_report(cmd, out, r, "no JSON-FUZZ-SUMMARY line"), pytrace=False)
    assert not summary["crashes"] and not summary["unexpected"], _report(cmd, out, r, "crashes or unexpected outcomes")
    per_kind = summary["per_kind"]
    print(f"json fuzz on cuDNN {version_text()}: seed {SEED}, {summary['mutants']} mutants in {summary['seconds']} s: "
          + "; ".join(f"{k}: {dict(v)}" for k, v in per_kind.items()))
    least = SHORT_MUTANTS if SHORT else MIN_MUTANTS
    assert summary["mutants"] >= least, _report(cmd, out, r, f"only {summary['mutants']} mutants")
    for kind, counts in per_kind.items():
        # each kind gets its share, and both sides of the checker are exercised: refusals, and mutants
        # that reach cuDNN
        assert counts["mutants"] >= least // 4, (kind, counts)
        assert counts.get("refused", 0) >= counts["mutants"] // 10, (kind, counts)
        assert counts.get("cudnn-ok", 0) + counts.get("cudnn-error", 0) >= counts["mutants"] // 20, (kind, counts)
