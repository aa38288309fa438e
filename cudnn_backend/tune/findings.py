"""The configs a search found bad, recorded as errata rules (``explore --errata-out FILE``, ``errata_out=``).

Three findings become rules (``runtime.errata.new_rule``: cudnn-frontend's fields, scoped by the extensions to the
GPU's SM, the loaded cuDNN release, the graph's data types and operation families, with the evidence):

* a config whose outputs were wrong against the fp64 reference (or the majority of configs);
* a config whose plan built and was then refused when it ran ("refused at execute");
* a config that crashed the process (cuDNN aborting, a segfault): caught by an in-flight record. While a search
  records findings, ``InFlight`` keeps ``<FILE>.inflight.<pid>`` naming the configs being built or run at that
  moment (rewritten as each starts and ends, removed at the end); a record left by a process that died is turned
  into a rule by ``harvest``: a sweep's coordinator does so as soon as a worker dies, and every search that records
  to the same file does at its start (a crash of the process itself is recorded by the next run). When several
  configs were in flight (plans built ahead in threads), the culprit is unknown: no rule is written, the note names
  them (``--build-threads 0`` builds one at a time).
"""
from __future__ import annotations

import collections
import contextlib
import glob
import json
import os
import pathlib
import threading
import time

from cudnn_backend._version import __version__
from cudnn_backend.runtime import errata as _errata
from cudnn_backend.runtime.engines import knob_type
from cudnn_backend.tune import results

__all__ = ["KINDS", "CRASHED", "rules_of", "record_exploration", "InFlight", "harvest", "pending", "scope_of"]

#: the statuses recorded, and the words of their rules' reason
KINDS = {results.WRONG: "wrong result", results.EXECUTE_FAILED: "refused at execute"}
CRASHED = "crashed the process"
_SUFFIX = ".inflight."


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _found_by(job: str) -> str:
    return f"cudnn-backend {__version__} {job} --errata-out"


def scope_of(ex) -> tuple:
    """(GraphTraits, Target) an Exploration recorded (``Exploration.errata``); (None, None) when it has none."""
    info = getattr(ex, "errata", None) or {}
    if "traits" not in info or "target" not in info:
        return None, None
    t = info["target"]
    return (_errata.GraphTraits.from_dict(info["traits"]),
            _errata.Target(t.get("sm"), int(t["cudnn_version"]), t.get("device", "")))


def _knobs_by_type(knobs: dict) -> dict:
    """{knob type number: value} of a ConfigResult's {short name: value}, its order kept (cuDNN's)."""
    return {int(knob_type(k)): int(v) for k, v in knobs.items()}


def rules_of(ex, scope="family", job="explore") -> list:
    """The rules (dicts) of an Exploration's wrong and refused-at-execute configs (see the module's notes)."""
    traits, target = scope_of(ex)
    if traits is None or traits.tag is None:
        return []
    out = []
    for r in ex.results:
        kind = KINDS.get(r.status)
        if kind is None:
            continue
        evidence = {"graph": ex.name, "fingerprint": ex.fingerprint, "device": ex.device.get("name", ""),
                    "cudnn_version": ex.cudnn_version, "status": r.status, "reason": r.reason,
                    "checked_by": r.checked_by, "rel_error": r.rel_error, "from": r.label, "when": _now()}
        out.append(_errata.new_rule(traits=traits, target=target, engine_index=r.engine_index,
                                    knobs=_knobs_by_type(r.knobs), kind=kind, reason=r.reason or r.status,
                                    evidence={k: v for k, v in evidence.items() if v not in (None, "")},
                                    scope=scope, found_by=_found_by(job)))
    return out


def record_exploration(path, ex, scope="family", job="explore") -> list:
    """Record an Exploration's findings in the errata file ``path`` (``rules_of``; crashes left by dead processes
    too, ``harvest``); the notes of what was recorded (also added to the exploration's notes)."""
    notes = harvest(path)
    rules = rules_of(ex, scope, job)
    if rules:
        _errata.record(path, rules)
        notes.append(f"errata_out: {results.plural(len(rules), 'rule')} recorded in {path} ("
                     + ", ".join(r["rule_id"] for r in rules[:3]) + (", ..." if len(rules) > 3 else "") + ")")
    else:
        why = "no config gave a wrong result or was refused at execute" if ex.timed else \
            "offline nothing runs, so nothing can be found wrong"
        notes.append(f"errata_out: {why}; nothing recorded in {path}")
    ex.notes.extend(notes)
    return notes


class InFlight:
    """The in-flight record of one search (see the module's notes): ``enter(configs, stage)`` before a config is
    built or run, ``leave(token)`` after; ``close()`` removes the record."""

    def __init__(self, path, graph_name: str, info: dict, fingerprint: str = "", device: str = "",
                 scope: str = "family", job: str = "explore"):
        self.path = os.fspath(path)
        self.file = pathlib.Path(f"{self.path}{_SUFFIX}{os.getpid()}")
        self.head = {"pid": os.getpid(), "graph": graph_name, "errata": info, "fingerprint": fingerprint,
                     "device": device, "scope": scope, "job": job}
        self._lock = threading.Lock()
        self._live: dict = {}  # token -> (engine, [[type, value], ...], stage)
        self._next = 0

    def enter(self, configs, stage: str) -> int:
        """Name ``configs`` in flight at ``stage``; the token ``leave`` takes."""
        entries = []
        for c in configs:
            entries.append((int(c.engine_index), [[int(k), int(v)] for k, v in c.knobs.items()], stage))
        with self._lock:
            self._next += 1
            token = self._next
            self._live[token] = entries
            self._write()
        return token

    def leave(self, token: int):
        """They are out of flight."""
        with self._lock:
            if self._live.pop(token, None) is not None:
                self._write()

    @contextlib.contextmanager
    def attempt(self, configs, stage: str):
        """``enter`` / ``leave`` around a block."""
        token = self.enter(configs, stage)
        try:
            yield
        finally:
            self.leave(token)

    def _write(self):
        configs = [{"engine": e, "knobs": k, "stage": s} for entries in self._live.values() for e, k, s in entries]
        doc = dict(self.head, configs=configs, when=_now())
        tmp = self.file.with_name(self.file.name + ".tmp")
        try:
            tmp.write_text(json.dumps(doc), encoding="utf-8")
            os.replace(tmp, self.file)
        except OSError:  # a record that cannot be written only loses the crash's attribution
            pass

    def close(self):
        """No record is kept any more: the file is removed."""
        with self._lock:
            self._live.clear()
            with contextlib.suppress(OSError):
                self.file.unlink()


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    return True


def pending(path) -> list:
    """The in-flight records beside the errata file ``path`` (dicts, with ``alive``: whether their process is)."""
    out = []
    for name in sorted(glob.glob(glob.escape(os.fspath(path)) + _SUFFIX + "*")):
        tail = name.rsplit(_SUFFIX, 1)[1]
        if not tail.isdigit():
            continue
        try:
            doc = json.loads(pathlib.Path(name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = {}
        out.append({"file": name, "pid": int(tail), "alive": _alive(int(tail)), **(doc if isinstance(doc, dict)
                                                                                  else {})})
    return out


def harvest(path, *, dead=(), exit_codes=None) -> list:
    """Turn the in-flight records of dead processes beside the errata file ``path`` into rules (one config in
    flight: its rule; several: a note naming them); ``dead``: pids known to have died (a sweep's workers),
    ``exit_codes`` {pid: exit code}. Returns the notes, one per record; the records are removed."""
    if not path:
        return []
    exit_codes = dict(exit_codes or {})
    notes, rules = [], []
    if not any(not rec["alive"] or rec["pid"] in dead for rec in pending(path)):
        return notes  # nothing left by a dead process: no lock taken
    with _errata.locked(path):
        for rec in pending(path):
            pid = rec["pid"]
            if rec["alive"] and pid not in dead:
                continue
            with contextlib.suppress(OSError):
                os.unlink(rec["file"])
            configs = rec.get("configs") or []
            distinct = list({(c.get("engine"), json.dumps(c.get("knobs"))): c for c in configs}.values())
            if not distinct:
                continue
            graph = rec.get("graph", "?")
            words = "; ".join(f"engine {c.get('engine')} "
                              + " ".join(f"k{k}={v}" for k, v in (c.get("knobs") or [])) + f" ({c.get('stage')})"
                              for c in distinct[:6])
            code = exit_codes.get(pid)
            how = f"process {pid} died" + (f" (exit code {code})" if code is not None else "")
            if len(distinct) > 1:
                notes.append(f"errata_out: {how} while {len(distinct)} configs of {graph} were in flight ({words}): "
                             "the culprit is unknown, no rule written (--build-threads 0 builds one at a time)")
                continue
            info = rec.get("errata") or {}
            try:
                traits = _errata.GraphTraits.from_dict(info["traits"])
                t = info["target"]
                target = _errata.Target(t.get("sm"), int(t["cudnn_version"]), t.get("device", ""))
            except (KeyError, TypeError, ValueError):
                notes.append(f"errata_out: {how} with {words} in flight; its record is incomplete, no rule written")
                continue
            c = distinct[0]
            knobs = collections.OrderedDict((int(k), int(v)) for k, v in c.get("knobs") or [])
            evidence = {"graph": graph, "fingerprint": rec.get("fingerprint", ""), "device": rec.get("device", ""),
                        "cudnn_version": _errata.version_words(target.version), "stage": c.get("stage", ""),
                        "exit_code": code, "when": rec.get("when", _now())}
            rule = _errata.new_rule(traits=traits, target=target, engine_index=int(c["engine"]), knobs=knobs,
                                    kind=CRASHED, reason=f"{how} during {c.get('stage', '?')} of {graph}",
                                    evidence={k: v for k, v in evidence.items() if v not in (None, "")},
                                    scope=rec.get("scope", "family"), found_by=_found_by(rec.get("job", "explore")))
            rules.append(rule)
            notes.append(f"errata_out: {how} during {c.get('stage')} of engine {c['engine']} ({graph}): rule "
                         f"{rule['rule_id']} recorded in {path}")
        if rules:
            _errata.record(path, rules, lock=False)
    return notes
