"""Run code that might crash the interpreter (cuDNN segfaults, aborts, divides by zero) in a child process, and
report how it ended: exit status, the signal that killed it (by name), its output.

The child imports the same ``cudnn_backend`` as the tests (this checkout's root first on ``PYTHONPATH``) and
``tests.helpers``; ``faulthandler`` is on, so a crash leaves a Python traceback in ``stderr``.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from dataclasses import dataclass

from tests.helpers.env import ROOT


@dataclass
class ChildResult:
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False

    @property
    def signal(self) -> str | None:
        """The name of the signal that killed the child (SIGSEGV, SIGFPE, SIGABRT, ...), or None."""
        if self.returncode < 0:
            try:
                return signal.Signals(-self.returncode).name
            except ValueError:
                return f"signal {-self.returncode}"
        return None

    @property
    def crashed(self) -> bool:
        return self.returncode < 0 or self.timed_out

    def describe(self) -> str:
        how = "timed out" if self.timed_out else (f"was killed by {self.signal}" if self.signal else
                                                   f"exited with {self.returncode}")
        return f"the child {how}\n--- stdout (tail)\n{self.stdout[-1500:]}\n--- stderr (tail)\n{self.stderr[-3000:]}"


def child_env(**extra) -> dict:
    env = dict(os.environ)
    path = [str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(path)
    env.setdefault("PYTHONFAULTHANDLER", "1")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_python(code: str, *, timeout: float = 300, args=(), env: dict | None = None, input_text: str | None = None,
               dedent: bool = True) -> ChildResult:
    """Run ``code`` (a script) with this interpreter in a child process."""
    script = textwrap.dedent(code) if dedent else code
    try:
        out = subprocess.run([sys.executable, "-X", "faulthandler", "-c", script, *map(str, args)], cwd=str(ROOT),
                             capture_output=True, text=True, timeout=timeout, env=child_env(**(env or {})),
                             input=input_text)
    except subprocess.TimeoutExpired as e:
        return ChildResult(-9, _text(e.stdout), _text(e.stderr), timed_out=True)
    return ChildResult(out.returncode, out.stdout, out.stderr)


def run_module(module: str, *args, timeout: float = 300, env: dict | None = None) -> ChildResult:
    """``python -m module args`` in a child process (e.g. a fuzz worker)."""
    try:
        out = subprocess.run([sys.executable, "-X", "faulthandler", "-m", module, *map(str, args)], cwd=str(ROOT),
                             capture_output=True, text=True, timeout=timeout, env=child_env(**(env or {})))
    except subprocess.TimeoutExpired as e:
        return ChildResult(-9, _text(e.stdout), _text(e.stderr), timed_out=True)
    return ChildResult(out.returncode, out.stdout, out.stderr)


def _text(v) -> str:
    if v is None:
        return ""
    return v.decode(errors="replace") if isinstance(v, bytes) else v


def assert_survives(code: str, expect_stdout: str | None = None, **kwargs) -> ChildResult:
    """Run ``code`` in a child; fail (with the signal named) unless it exits 0 (and prints ``expect_stdout``)."""
    result = run_python(code, **kwargs)
    assert not result.crashed and result.returncode == 0, result.describe()
    if expect_stdout is not None:
        assert result.stdout.strip() == expect_stdout.strip(), result.describe()
    return result
