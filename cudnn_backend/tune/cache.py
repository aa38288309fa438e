"""``PlanCache``: tuned plans kept on disk, shared by processes, keyed by graph, device and cuDNN version.

Storage is one sqlite3 file in WAL mode (several processes read and write it safely; a sweep's workers write
to it concurrently), by default ``plans.sqlite`` in the user's cache directory (platformdirs), or the file
named by ``CUDNN_BACKEND_PLAN_CACHE``.

The key is a canonical fingerprint of the operation graph (operations, their attributes, and the tensors'
dims, strides, data types, UIDs, virtual and by-value flags; however the graph was built), the device (name,
SM version, SM count; from a handle's GPU or a device profile) and the loaded cuDNN version. The value is
the plan's JSON, its engine and knobs, timing and when it was stored.

A corrupt or foreign file, or an entry cuDNN no longer accepts, is a miss with a warning, never a crash. So is an
entry whose config an errata rule now denies (``errata=``, default ``$CUDNN_ERRATA_JSON_FILE``): the note names
the rule, and the search that follows stores a config the rules allow in its place.

Security: a cached plan carries compiled kernels, i.e. code that runs on the GPU. The cache file is created
0600 (its -wal and -shm siblings take the file's mode) and a folder the package creates 0700; a cache file,
sibling or folder owned by another user, or writable by group or others, is refused (``PlanCacheError``, with
the path, the owner and the fix) on POSIX systems, wherever the path came from.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pathlib
import sqlite3
import threading
import time
import warnings
from dataclasses import asdict, dataclass

from cudnn_backend.core._handle import Handle
from cudnn_backend.core._library import get_version
from cudnn_backend.core.plain import PlainData
from cudnn_backend.core.versions import format_version
from cudnn_backend.errors import CudnnBackendError, PlanCacheError
from cudnn_backend.runtime import errata as _errata
from cudnn_backend.runtime import plans as _plans
from cudnn_backend.runtime.engines import check_graph, knob_type, short_name
from cudnn_backend.runtime.profiles import as_deviceprop
from cudnn_backend.typed.introspection import graph_fingerprint

__all__ = ["PlanCache", "CacheEntry", "PlanCacheWarning", "default_cache_path", "cache_dir", "FORMAT"]

FORMAT = "cudnn-backend plan cache"
SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS plans (
    key TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    device_name TEXT NOT NULL,
    sm_version INTEGER NOT NULL,
    sm_count INTEGER NOT NULL,
    cudnn_version INTEGER NOT NULL,
    engine_index INTEGER,
    knobs TEXT NOT NULL,
    time_us REAL,
    plan_json TEXT NOT NULL,
    info TEXT NOT NULL,
    stored_at REAL NOT NULL
);
"""


class PlanCacheWarning(UserWarning):
    """A cache file or entry that could not be used (it counts as a miss)."""


_PRIVATE_FILE = 0o600
_PRIVATE_FOLDER = 0o700
DEFAULT_FILE_NAME = "plans.sqlite"  # in the package's cache folder


def _owner_name(uid: int) -> str:
    try:
        import pwd  # POSIX only, like the checks that call this
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _check_private(path: pathlib.Path, what: str) -> None:
    """Refuse a cache ``what`` ("file", "folder") at ``path`` that another user owns or may write: cached plans
    carry compiled GPU kernels, so whoever can write the cache can run code in this process's GPU context."""
    if os.name != "posix":
        return
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise PlanCacheError(f"plan cache {what} {str(path)!r}: cannot check it ({e})") from e
    me = os.geteuid()
    where = "CUDNN_BACKEND_PLAN_CACHE" if os.environ.get("CUDNN_BACKEND_PLAN_CACHE") else "PlanCache(path=...)"
    if st.st_uid != me:
        raise PlanCacheError(
            f"plan cache {what} {str(path)!r} is owned by {_owner_name(st.st_uid)}, not by you ({_owner_name(me)}): "
            "cached plans carry compiled GPU kernels (code), so only a cache you own is used. Fix: remove it, or "
            f"chown {me} {str(path)!r} if you trust its contents, or point {where} at a file of your own")
    if st.st_mode & 0o022:
        private = _PRIVATE_FOLDER if what == "folder" else _PRIVATE_FILE
        raise PlanCacheError(
            f"plan cache {what} {str(path)!r} is writable by {'group' if st.st_mode & 0o020 else 'others'} "
            f"(mode {st.st_mode & 0o7777:04o}): cached plans carry compiled GPU kernels (code), so a cache others "
            f"may write is not used. Fix: chmod {private:o} {str(path)!r} if you trust its contents, or point {where} "
            "at a file in a folder only you can write")


def _make_private(path: pathlib.Path) -> None:
    """The cache's folder (0700 when the package creates it) and file (0600 when it creates it: sqlite gives the
    -wal and -shm files the file's mode), after refusing existing ones others own or may write."""
    if path.is_dir():  # else the folder above it would be checked, and named, in its place
        raise PlanCacheError(f"plan cache {str(path)!r} is a folder; name a file in it, such as "
                             f"{str(path / DEFAULT_FILE_NAME)!r}")
    folder = path.parent
    if not folder.is_dir():
        try:
            folder.mkdir(mode=_PRIVATE_FOLDER, parents=True, exist_ok=True)
        except OSError as e:
            raise PlanCacheError(f"plan cache {str(path)!r}: cannot create its folder: {e}") from e
    _check_private(folder, "folder")
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        _check_private(p, "file")
    try:  # an empty file is an empty sqlite database: created here with the mode, sqlite fills it in
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), _PRIVATE_FILE))
    except FileExistsError:
        pass
    except OSError:
        pass  # sqlite reports what is wrong with the path (a miss with a warning)


def cache_dir() -> pathlib.Path:
    """The package's cache folder: the user's cache directory (platformdirs) for ``cudnn-backend``."""
    try:
        import platformdirs
    except ImportError:  # a declared dependency, but keep working from a bare source tree
        return pathlib.Path.home() / ".cache" / "cudnn-backend"
    return pathlib.Path(platformdirs.user_cache_dir("cudnn-backend", appauthor=False))


def default_cache_path() -> pathlib.Path:
    """``$CUDNN_BACKEND_PLAN_CACHE``, else ``plans.sqlite`` in the package's cache folder (``cache_dir``)."""
    env = os.environ.get("CUDNN_BACKEND_PLAN_CACHE")
    if env:
        return pathlib.Path(env)
    return cache_dir() / DEFAULT_FILE_NAME


@dataclass
class CacheEntry(PlainData):
    """One stored plan, without its JSON: key, graph fingerprint, device, cuDNN version, engine and knobs,
    timing, extra info and when it was stored (seconds since the epoch)."""

    key: str
    fingerprint: str
    device_name: str
    sm_version: int
    sm_count: int
    cudnn_version: int
    engine_index: int | None
    knobs: dict
    time_us: float | None
    info: dict
    stored_at: float
    plan_bytes: int

    def to_dict(self) -> dict:
        d = asdict(self)
        d["cudnn_version"] = format_version(self.cudnn_version)
        return d



class PlanCache:
    """A persistent plan cache (see the module's notes). ``get(graph, handle=None, device_profile=None)`` -> a
    rebuilt ``Plan`` or None; ``put(graph, plan, **info)`` -> the key; ``entries()``, ``entry(key)``,
    ``remove(key)``, ``clear()``."""

    def __init__(self, path=None, *, timeout=30.0):
        self.path = pathlib.Path(default_cache_path() if path is None else os.fspath(path))
        self.timeout = float(timeout)
        self._usable = None  # None: not opened yet; False: corrupt or foreign (every get misses)
        self._lock = threading.Lock()

    def __repr__(self):
        return f"<PlanCache {str(self.path)!r}>"

    def __reduce__(self):  # plain data: a path
        return (type(self), (str(self.path),), {"timeout": self.timeout})

    def __setstate__(self, state):
        self.timeout = state.get("timeout", 30.0)

    @contextlib.contextmanager
    def _connect(self, write=False):
        if self._usable is None:
            with self._lock:
                if self._usable is None:
                    self._usable = self._open()
        if not self._usable:
            yield None
            return
        conn = sqlite3.connect(str(self.path), timeout=self.timeout, isolation_level=None)
        try:
            if write:
                conn.execute("BEGIN IMMEDIATE")
            yield conn
            if write:
                conn.execute("COMMIT")
        except BaseException:
            if write and conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            conn.close()

    def _open(self) -> bool:
        _make_private(self.path)
        try:
            conn = sqlite3.connect(str(self.path), timeout=self.timeout, isolation_level=None)
        except sqlite3.Error as e:
            self._warn(f"cannot open it ({e}); caching is off for this cache object")
            return False
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (FORMAT,))
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            meta = dict(conn.execute("SELECT name, value FROM meta").fetchall())
            columns = {row[1] for row in conn.execute("PRAGMA table_info(plans)")}
        except sqlite3.Error as e:
            self._warn(f"not a usable plan cache ({e}); every lookup misses")
            return False
        finally:
            conn.close()
        if meta.get("format") != FORMAT or meta.get("schema_version") != str(SCHEMA_VERSION) or \
                not {"key", "plan_json", "fingerprint"} <= columns:
            self._warn(f"a foreign or other-version sqlite file (format {meta.get('format')!r}, schema "
                       f"{meta.get('schema_version')!r}); every lookup misses")
            return False
        return True

    def _warn(self, text):
        warnings.warn(f"plan cache {str(self.path)!r}: {text}", PlanCacheWarning, stacklevel=4)

    @staticmethod
    def _graph(graph) -> tuple:
        """(finalized operation graph, fingerprint) of a graph (any API), a Graph, a Pattern or a tune Subject."""
        fingerprint = getattr(graph, "fingerprint", None)
        op_graph = getattr(graph, "op_graph", graph)  # a Graph, Pattern or Subject: its finalized operation graph
        if op_graph is None:
            raise ValueError("graph: build it first (Graph.build())")
        check_graph(op_graph, "graph")
        if not isinstance(fingerprint, str):
            fingerprint = graph_fingerprint(op_graph)
        return op_graph, fingerprint

    @staticmethod
    def _device(handle, device_profile, plan=None):
        if handle is not None:
            if not isinstance(handle, Handle):
                raise TypeError(f"handle: expected a cudnn_backend.Handle, not {type(handle).__name__}")
            return _plans.device_key(handle=handle)
        dp = as_deviceprop(device_profile)
        if dp is None and plan is not None:
            dp = plan.deviceprop
            if dp is None and plan.handle is not None:
                return _plans.device_key(handle=plan.handle)
        if dp is None:
            raise ValueError("the plan cache keys plans by device: pass handle= or device_profile=")
        return _plans.device_key(deviceprop=dp)

    def key(self, graph, handle=None, device_profile=None) -> str:
        """The cache key of a graph on a device with the loaded cuDNN (hex SHA-256)."""
        _, fp = self._graph(graph)
        return self._key(fp, self._device(handle, device_profile), get_version())

    @staticmethod
    def _key(fingerprint, device, version) -> str:
        text = json.dumps([fingerprint, list(device), int(version)], separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, graph, handle=None, device_profile=None, *, errata=None):
        """The stored plan for ``graph`` on this device, rebuilt from its JSON (a ``Plan``), or None. An entry whose
        config a rule of ``errata`` denies (``runtime.errata.resolve``: None is ``$CUDNN_ERRATA_JSON_FILE``) is a miss
        with a warning naming the rule."""
        plan, note = self.lookup(graph, handle, device_profile, errata=errata)
        if note:
            self._warn(note)
        return plan

    def lookup(self, graph, handle=None, device_profile=None, *, errata=None) -> tuple:
        """(plan or None, note): ``get``, with the note of an entry an errata rule denies returned instead of
        warned ("" otherwise; other misses still warn)."""
        op_graph, fp = self._graph(graph)
        device = self._device(handle, device_profile)
        key = self._key(fp, device, get_version())
        try:
            with self._connect() as conn:
                if conn is None:
                    return None, ""
                row = conn.execute("SELECT plan_json, engine_index, knobs FROM plans WHERE key = ?",
                                   (key,)).fetchone()
        except sqlite3.Error as e:
            self._warn(f"lookup failed ({e}); a miss")
            return None, ""
        if row is None:
            return None, ""
        rules = _errata.resolve(errata)
        rule = self._denied(rules, op_graph, row[1], row[2], handle, device_profile)
        if rule is not None:
            return None, (f"entry {key[:12]} (engine {row[1]}) is denied by errata rule {rule.name} "
                          f"({rules.origin(rule)}); a miss")
        try:
            return _plans.plan_from_json(row[0], handle=handle, device_profile=device_profile,
                                         operation_graph=op_graph), ""
        except (CudnnBackendError, ValueError, TypeError) as e:
            self._warn(f"entry {key[:12]} could not be loaded ({type(e).__name__}: {str(e)[:200]}); a miss")
            return None, ""

    @staticmethod
    def _denied(rules, op_graph, engine_index, knobs_text, handle, device_profile):
        """The rule that denies a stored entry's config (its engine and knobs, in cuDNN's order), or None."""
        try:
            knobs = {int(knob_type(k)): int(v) for k, v in json.loads(knobs_text).items()}
        except (TypeError, ValueError, AttributeError):
            knobs = None
        if engine_index is None or knobs is None:
            return None
        traits = _errata.traits_of(op_graph)
        if traits.tag is None:
            return None
        target = _errata.target_of(handle, as_deviceprop(device_profile), op_graph)
        return rules.deny(_errata.plan_tag(traits.tag, engine_index, knobs), traits, target)

    def previous(self, graph, handle=None, device_profile=None) -> CacheEntry | None:
        """The winner another cuDNN release stored for ``graph`` on this device (the newest release older than the
        loaded one first, else the newest other), or None: what a search on a new release tries against its own
        (its engine's global index and knobs; the plan itself does not load on another release)."""
        _, fp = self._graph(graph)
        device = self._device(handle, device_profile)
        loaded = get_version()
        try:
            with self._connect() as conn:
                if conn is None:
                    return None
                rows = conn.execute(f"SELECT {self._COLUMNS} FROM plans WHERE fingerprint = ? AND device_name = ? "
                                    "AND sm_version = ? AND sm_count = ? AND cudnn_version != ? AND engine_index IS "
                                    "NOT NULL", (fp, device[0], int(device[1]), int(device[2]), int(loaded))).fetchall()
        except sqlite3.Error as e:
            self._warn(f"lookup of another release's winner failed ({e})")
            return None
        entries = [self._entry(r) for r in rows]
        return max(entries, key=lambda e: (e.cudnn_version < loaded, e.cudnn_version), default=None)

    def put(self, graph, plan, *, handle=None, device_profile=None, time_us=None, **info) -> str:
        """Store ``plan`` (a ``Plan``) for ``graph``; ``time_us`` and any JSON-able ``info`` go with it. Returns
        the key (or "" when the cache file is unusable: a warning was given)."""
        op_graph, fp = self._graph(graph)
        plan = _plans.as_plan(plan)
        device = self._device(handle if handle is not None else plan.handle,
                              device_profile if device_profile is not None else plan.deviceprop, plan)
        version = get_version()
        key = self._key(fp, device, version)
        knobs = {short_name(k): int(v) for k, v in plan.knobs.items()}
        try:
            info_text = json.dumps(info, default=str, allow_nan=False)
        except ValueError as e:
            raise ValueError(f"info: not storable as JSON ({e})") from None
        if time_us is not None:
            time_us = float(time_us)
        row = (key, fp, device[0], int(device[1]), int(device[2]), int(version), plan.engine_index,
               json.dumps(knobs), time_us, plan.to_json(), info_text, time.time())
        try:
            with self._connect(write=True) as conn:
                if conn is None:
                    return ""
                conn.execute("INSERT OR REPLACE INTO plans VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", row)
        except sqlite3.Error as e:
            self._warn(f"could not store the plan ({e})")
            return ""
        return key

    # -- listing --------------------------------------------------------------------------------------------
    _COLUMNS = ("key, fingerprint, device_name, sm_version, sm_count, cudnn_version, engine_index, knobs, time_us, "
                "info, stored_at, length(plan_json)")

    @staticmethod
    def _entry(row) -> CacheEntry:
        def loads(text, default):
            try:
                v = json.loads(text)
                return v if isinstance(v, dict) else default
            except (TypeError, ValueError):
                return default

        return CacheEntry(row[0], row[1], row[2], row[3], row[4], row[5], row[6], loads(row[7], {}), row[8],
                          loads(row[9], {}), row[10], row[11])

    def entries(self) -> list[CacheEntry]:
        """Every stored entry, newest first (empty for an unusable file)."""
        try:
            with self._connect() as conn:
                if conn is None:
                    return []
                rows = conn.execute(f"SELECT {self._COLUMNS} FROM plans ORDER BY stored_at DESC").fetchall()
        except sqlite3.Error as e:
            self._warn(f"listing failed ({e})")
            return []
        return [self._entry(r) for r in rows]

    def entry(self, key: str) -> CacheEntry | None:
        """The entry whose key is ``key`` or starts with it (unique prefix), or None."""
        if not isinstance(key, str) or not key:
            raise ValueError("key: expected a non-empty key or key prefix")
        with self._connect() as conn:
            if conn is None:
                return None
            rows = conn.execute(f"SELECT {self._COLUMNS} FROM plans WHERE key LIKE ? LIMIT 2",
                                (key.replace("%", "").replace("_", "") + "%",)).fetchall()
        if len(rows) > 1:
            raise ValueError(f"key: {key!r} matches several entries; give more characters")
        return self._entry(rows[0]) if rows else None

    def plan_json(self, key: str) -> str | None:
        """The stored plan's JSON of the entry ``key`` (or a unique prefix of it), or None."""
        e = self.entry(key)
        if e is None:
            return None
        with self._connect() as conn:
            row = conn.execute("SELECT plan_json FROM plans WHERE key = ?", (e.key,)).fetchone()
        return None if row is None else row[0]

    def remove(self, key: str) -> bool:
        """Remove the entry ``key`` (or a unique prefix of it); whether there was one."""
        e = self.entry(key)
        if e is None:
            return False
        with self._connect(write=True) as conn:
            conn.execute("DELETE FROM plans WHERE key = ?", (e.key,))
        return True

    def clear(self) -> int:
        """Remove every entry; returns how many there were."""
        with self._connect(write=True) as conn:
            if conn is None:
                return 0
            n = conn.execute("SELECT count(*) FROM plans").fetchone()[0]
            conn.execute("DELETE FROM plans")
        return int(n)

    def __len__(self):
        with self._connect() as conn:
            if conn is None:
                return 0
            return int(conn.execute("SELECT count(*) FROM plans").fetchone()[0])
