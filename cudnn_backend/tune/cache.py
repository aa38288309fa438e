"""``PlanCache``: tuned plans kept on disk, shared by processes, keyed by graph, device and cuDNN version.

Storage is one sqlite3 file in WAL mode (several processes read and write it safely; a sweep's workers write
to it concurrently), by default ``plans.sqlite`` in the user's cache directory (platformdirs), or the file
named by ``CUDNN_BACKEND_PLAN_CACHE``.

The key is a canonical fingerprint of the operation graph (operations, their attributes, and the tensors'
dims, strides, data types, UIDs, virtual and by-value flags; however the graph was built), the device (name,
SM version, SM count; from a handle's GPU or a device profile) and the loaded cuDNN version. The value is
the plan's JSON, its engine and knobs, timing and when it was stored, and a checksum (SHA-256) over the key, the
fingerprint, device and version columns, the engine, the knobs and the plan's JSON: an entry edited or swapped in the
file is a miss with a warning, never another graph's plan. ``put`` refuses a plan built for another graph.

A corrupt file, an entry cuDNN no longer accepts or whose fields do not read, or an entry whose config an errata rule
now denies (``errata=``, default ``$CUDNN_ERRATA_JSON_FILE``; the note names the rule, and the search that follows
stores a config the rules allow in its place) is a miss with a warning, never a crash. A file that is not a plan
cache (an unrelated sqlite database, or another release's schema) is refused with a warning and never written to. A
cache file busy in another process is a miss with a warning, and tried again at the next call. A cache that cannot be
written here (a read-only file or folder) is served read-only: lookups work, a ``put`` warns once and stores nothing.
A file written by the release before the checksums (schema 1) is upgraded in place on first use where it can be
written, and refused with a warning where it cannot.

Security: a cached plan carries compiled kernels, i.e. code that runs on the GPU. The cache file is created
0600 (its -wal and -shm siblings take the file's mode) and a folder the package creates 0700; a cache file,
sibling or folder owned by another user, or writable by group or others, is refused (``PlanCacheError``, with
the path, the owner and the fix) on POSIX systems, wherever the path came from. Where the path is a symbolic
link, the folder of its target is checked too; a path that is no regular file (a device, a pipe) is refused.
"""
from __future__ import annotations

import contextlib
import datetime
import enum
import errno
import hashlib
import json
import math
import numbers
import os
import pathlib
import sqlite3
import stat
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import asdict, dataclass

import numpy as np

from cudnn_backend.core._handle import Handle
from cudnn_backend.core._library import get_version
from cudnn_backend.core.files import environment_path, file_path
from cudnn_backend.core.json_checks import control_character_at
from cudnn_backend.core.plain import PlainData
from cudnn_backend.core.versions import device_words, format_version
from cudnn_backend.errors import CudnnBackendError, PlanCacheError
from cudnn_backend.runtime import errata as _errata
from cudnn_backend.runtime import plans as _plans
from cudnn_backend.runtime._packing import check_plans_graph
from cudnn_backend.runtime.engines import check_graph, knob_type, short_name
from cudnn_backend.runtime.profiles import as_deviceprop
from cudnn_backend.typed.introspection import graph_fingerprint

__all__ = ["PlanCache", "CacheEntry", "PlanCacheWarning", "default_cache_path", "cache_dir", "FORMAT"]

FORMAT = "cudnn-backend plan cache"
SCHEMA_VERSION = 2  # 2: a checksum per entry (schema 1 files are upgraded in place)
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS plans (
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
    stored_at REAL NOT NULL,
    checksum TEXT NOT NULL DEFAULT ''
)""",
)
# what the checksum covers: what picks an entry (key, and previous()'s columns) and what a lookup hands out
_CHECKED = ("key", "fingerprint", "device_name", "sm_version", "sm_count", "cudnn_version", "engine_index", "knobs",
            "plan_json")
_LISTED = ("key", "fingerprint", "device_name", "sm_version", "sm_count", "cudnn_version", "engine_index", "knobs",
           "time_us", "info", "stored_at")
_COLUMNS = set(_LISTED) | set(_CHECKED) | {"checksum"}
_LIST_COLUMNS = f"{', '.join(_LISTED)}, length(plan_json)"  # an entry (CacheEntry)
_CHECK_COLUMNS = f"{_LIST_COLUMNS}, {', '.join(_CHECKED)}, checksum"  # an entry, what its checksum covers, the checksum
MAX_TIMEOUT = 3600.0  # seconds: a longer wait for another process's lock is a hang, not a wait


def _empty_or_sqlite(path) -> bool:
    """Whether ``path`` is empty or starts as an SQLite database does."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:
        return True  # (unreadable: sqlite's own error says so)
    return head in (b"", b"SQLite format 3\x00")


class PlanCacheWarning(UserWarning):
    """A cache file or entry that could not be used (it counts as a miss)."""


_PRIVATE_FILE = 0o600
_PRIVATE_FOLDER = 0o700
DEFAULT_FILE_NAME = "plans.sqlite"  # in the package's cache folder
_SHARED_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")  # beside tempfile.gettempdir(): folders every user writes


def _owner_name(uid: int) -> str:
    try:
        import pwd  # POSIX only, like the checks that call this
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _kind_of(mode: int) -> str:
    for test, name in ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def _is_shared_folder(path: pathlib.Path, st) -> bool:
    """A folder meant for every user (sticky, like /tmp): the fix is another folder, never a chmod of this one."""
    if st.st_mode & stat.S_ISVTX:
        return True
    shared = {os.path.realpath(p) for p in (*_SHARED_FOLDERS, tempfile.gettempdir())}
    return os.path.realpath(path) in shared


def _check_private(path: pathlib.Path, what: str, from_env=False) -> None:
    """Refuse a cache ``what`` ("file", "folder") at ``path`` that another user owns or may write, or that is not a
    file (folder): cached plans carry compiled GPU kernels, so whoever can write the cache can run code in this
    process's GPU context."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise PlanCacheError(f"plan cache {what} {str(path)!r}: cannot check it ({e})") from e
    if what == "file" and not stat.S_ISREG(st.st_mode):
        # (the package's own default as the example: the variable may name this very path)
        raise PlanCacheError(f"plan cache file {str(path)!r}" + (" (CUDNN_BACKEND_PLAN_CACHE)" if from_env else "")
                             + f" is {_kind_of(st.st_mode)}, not a regular file: name a cache file (such as "
                             f"{str(cache_dir() / DEFAULT_FILE_NAME)!r})")
    if what == "folder" and not stat.S_ISDIR(st.st_mode):
        raise PlanCacheError(f"plan cache folder {str(path)!r} is {_kind_of(st.st_mode)}, not a folder")
    if os.name != "posix":
        return
    me = os.geteuid()
    where = ("CUDNN_BACKEND_PLAN_CACHE" if from_env else
             "CUDNN_BACKEND_PLAN_CACHE, the command line's --cache or PlanCache(path=...)")
    if st.st_uid != me:
        problem = f"is owned by {_owner_name(st.st_uid)}, not by you ({_owner_name(me)})"
        why = "only a cache you own is used"
        fix = (f"remove it, or chown {me} {str(path)!r} if you trust its contents, or point {where} at a file of your "
               "own")
    elif st.st_mode & 0o022:
        problem = (f"is writable by {'others' if st.st_mode & 0o002 else 'group'} "
                   f"(mode {stat.S_IMODE(st.st_mode):04o})")
        why = "a cache others may write is not used"
        private = _PRIVATE_FOLDER if what == "folder" else _PRIVATE_FILE
        fix = (f"chmod {private:o} {str(path)!r} if you trust its contents, or point {where} at a file in a folder "
               "only you can write")
    else:
        return
    if what == "folder" and _is_shared_folder(path, st):
        default = cache_dir()
        refused = os.path.realpath(path)
        # the default location is no advice where it is this folder, or lies in it (XDG_CACHE_HOME in /tmp)
        usable_default = refused != os.path.realpath(default) and \
            refused not in {os.path.realpath(p) for p in default.parents}
        such_as = (f"the default location {str(default)!r} (leave {where} unset) or " if usable_default else "")
        fix = (f"keep the cache in a folder only you can write, such as {such_as}one made with `mkdir -m 700 DIR`, "
               f"and point {where} at a file there")
    raise PlanCacheError(f"plan cache {what} {str(path)!r} {problem}: cached plans carry compiled GPU kernels (code), "
                         f"so {why}. Fix: {fix}")


def _check_ancestors(folder: pathlib.Path) -> None:
    """Refuse a cache folder inside one that every user may write and that is not sticky: anyone could rename the
    folders below it and put a folder of their own in its place, between the checks and sqlite's open. (A sticky
    one, like /tmp, lets only their owner move them.)"""
    if os.name != "posix":
        return
    for above in folder.parents:
        try:
            st = os.stat(above)
        except OSError:
            continue
        if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
            raise PlanCacheError(f"plan cache folder {str(folder)!r} lies in {str(above)!r}, which every user may "
                                 f"write (mode {stat.S_IMODE(st.st_mode):04o}, not sticky): anyone could move the "
                                 "folders below it aside and put their own in their place. Fix: keep the cache "
                                 "under folders only you can write (or make that folder sticky: chmod +t)")


class _FolderNotMade(PlanCacheError):
    """The cache's folder may not be made here (no permission, a read-only file system): a cache that cannot store
    now, as one whose folder is not writable, not a path refused."""


def _make_private(path: pathlib.Path, create=True, from_env=False) -> pathlib.Path:
    """``_private_file``, with an OSError of the checks themselves (a folder on the way this user may not search, a
    name too long for the file system) a PlanCacheError naming the cache, as every other refusal of its path."""
    try:
        return _private_file(path, create, from_env)
    except OSError as e:
        raise PlanCacheError(f"plan cache {str(path)!r}"
                             + (" (CUDNN_BACKEND_PLAN_CACHE)" if from_env else "")
                             + f": cannot reach it ({e.strerror or e})") from e


def _private_file(path: pathlib.Path, create=True, from_env=False) -> pathlib.Path:
    """The file sqlite will open (``path`` with symbolic links resolved), after refusing a folder or file others own
    or may write (the folder named and, for a link, its target's folder) and creating a missing folder 0700 and a
    missing file 0600 (sqlite gives the -wal and -shm files the file's mode). The file is not created where its
    folder cannot be written; the caller says so. ``create=False`` (a read): the checks only, nothing created.
    ``from_env``: the path is CUDNN_BACKEND_PLAN_CACHE's, which the messages name."""
    if path.is_dir():  # else the folder above it would be checked, and named, in its place
        raise PlanCacheError(f"plan cache {str(path)!r} is a folder; name a file in it, such as "
                             f"{str(path / DEFAULT_FILE_NAME)!r}")
    folder = path.parent
    if not folder.is_dir():
        if not create:
            return path
        try:
            folder.mkdir(mode=_PRIVATE_FOLDER, parents=True, exist_ok=True)
        except OSError as e:  # not allowed here: a cache that cannot store now; else (a file on the way) a bad path
            unmade = _FolderNotMade if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS) else PlanCacheError
            raise unmade(f"plan cache {str(path)!r}: cannot create its folder: {e}") from e
    try:
        real = path.resolve()  # a symlink's target: that is the file sqlite writes, and where its -wal/-shm go
    except (OSError, RuntimeError) as e:  # a loop of links
        raise PlanCacheError(f"plan cache {str(path)!r}: cannot follow its symbolic links ({e})") from e
    files = (real, real.with_name(real.name + "-wal"), real.with_name(real.name + "-shm"))
    _check_private(real, "file", from_env)  # first: a device file is named as one, not by its folder's owner
    _check_private(folder, "folder", from_env)
    if real.parent != folder.resolve():
        if not real.parent.is_dir():
            raise PlanCacheError(f"plan cache {str(path)!r} links to {str(real)!r}, whose folder does not exist")
        _check_private(real.parent, "folder", from_env)
    _check_ancestors(real.parent)
    for p in files[1:]:
        _check_private(p, "file", from_env)
    if not create:
        return real
    try:  # an empty file is an empty sqlite database: created here with the mode, sqlite fills it in
        os.close(os.open(real, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), _PRIVATE_FILE))
    except OSError:
        pass  # it exists, or the folder is read-only (the caller says what that means)
    return real


def cache_dir() -> pathlib.Path:
    """The package's cache folder: the user's cache directory (platformdirs) for ``cudnn-backend``."""
    try:
        import platformdirs
    except ImportError:  # a declared dependency, but keep working from a bare source tree
        return pathlib.Path.home() / ".cache" / "cudnn-backend"
    return pathlib.Path(platformdirs.user_cache_dir("cudnn-backend", appauthor=False))


def default_cache_path() -> pathlib.Path:
    """``$CUDNN_BACKEND_PLAN_CACHE``, else ``plans.sqlite`` in the package's cache folder (``cache_dir``)."""
    return environment_path("CUDNN_BACKEND_PLAN_CACHE") or cache_dir() / DEFAULT_FILE_NAME


def _cache_path(path, what: str) -> pathlib.Path:
    if isinstance(path, (str, bytes)) and not path:  # pathlib would read "" as the current folder
        raise ValueError(f"{what}: an empty path; name a cache file, such as {str(default_cache_path())!r}")
    return file_path(path, what)


def _check_timeout(timeout) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
        raise TypeError(f"timeout: expected the seconds to wait for another process's lock on the cache, a number "
                        f"from 0 to {MAX_TIMEOUT:g}, not {type(timeout).__name__}")
    value = float(timeout)
    if not 0 <= value <= MAX_TIMEOUT:  # also refuses nan
        raise ValueError(f"timeout: {timeout!r} is not in the accepted range, 0 to {MAX_TIMEOUT:g} seconds (how long "
                         "to wait for another process's lock on the cache)")
    return value


def _check_time_us(time_us) -> float | None:
    if time_us is None:
        return None
    if isinstance(time_us, bool) or not isinstance(time_us, numbers.Real):
        raise TypeError(f"time_us: expected the plan's time in microseconds (a number) or None, not "
                        f"{type(time_us).__name__}")
    value = float(time_us)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"time_us: {time_us!r} is not a time in microseconds (a finite number, 0 or more)")
    return value


def _info_value(value):
    """What JSON does not write itself among a stored plan's ``info``: enumerants by name, numpy scalars as
    numbers; anything else is refused (its repr would not read back)."""
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"a {type(value).__name__} is not JSON (give numbers, strings, lists, dicts)")


def _checksum(values) -> str | None:
    """SHA-256 over an entry's ``_CHECKED`` values (as stored), or None for values no entry can hold. Not a
    signature (whoever may write the file can recompute it; the file's privacy guards against them): it catches an
    entry whose plan was swapped or edited, by hand or by a tool, so that it never comes back for another graph."""
    try:
        text = json.dumps(list(values), separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(text.encode()).hexdigest()


def is_busy(error: sqlite3.Error) -> bool:
    """Another connection holds a lock (SQLITE_BUSY, SQLITE_LOCKED): worth trying again later."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (5, 6)
    return "locked" in str(error) or "busy" in str(error)


class _Undecodable(bytes):
    """A TEXT value that is no UTF-8 (the file edited or damaged): read as it is, and refused as text by the entry's
    checks (it is no str), so that it leaves out its own entry only."""


def _text_or_undecodable(data: bytes):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return _Undecodable(data)


class _BadField(ValueError):
    """A stored entry whose field does not read as its kind (edited in the file)."""

    def __init__(self, key, field, value, expected):
        self.key = key if isinstance(key, str) and control_character_at(key) is None else repr(key)
        text = repr(value)
        super().__init__(f"entry {self.key[:12]}: {field} {text if len(text) <= 40 else text[:37] + '...'} is not "
                         f"{expected}")


def _json_object(key, field, text, values=None) -> dict:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):  # (edited in the file: nested past what json reads)
        value = None
    if not isinstance(value, dict) or (values is not None and not all(isinstance(v, values) for v in value.values())):
        raise _BadField(key, field, text, "a JSON object" + (" of numbers" if values is not None else ""))
    if control_character_at(value) is not None:
        raise _BadField(key, field, text, "a JSON object without control characters")
    return value


def _whole(key, field, value, optional=False):
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _BadField(key, field, value, "a whole number" + (" or empty" if optional else ""))
    return value


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


def _entry_of(row) -> CacheEntry:
    """An entry from the ``_LISTED`` columns and the plan's length: ``_BadField`` naming the entry and the field
    that does not read as its kind (the file was edited), so that no caller meets a raw TypeError later."""
    key, fingerprint, device_name, sm_version, sm_count, version, engine_index, knobs, time_us, info, stored_at, \
        plan_bytes = row
    for field, value in (("key", key), ("fingerprint", fingerprint), ("device_name", device_name)):
        # (a device's name may be empty: a profile may say so, and put stores what it says)
        if not isinstance(value, str) or not (value or field == "device_name") or control_character_at(value):
            raise _BadField(key, field, value, "text without control characters")
    try:
        format_version(_whole(key, "cudnn_version", version))
    except (TypeError, ValueError):
        raise _BadField(key, "cudnn_version", version, "a cuDNN version") from None
    if time_us is not None and (isinstance(time_us, bool) or not isinstance(time_us, (int, float)) or
                                not math.isfinite(time_us) or time_us < 0):
        raise _BadField(key, "time_us", time_us, "a time in microseconds")
    try:
        datetime.datetime.fromtimestamp(stored_at)  # what a listing shows
    except (TypeError, ValueError, OverflowError, OSError):
        raise _BadField(key, "stored_at", stored_at, "a time (seconds since 1970)") from None
    return CacheEntry(key, fingerprint, device_name, _whole(key, "sm_version", sm_version),
                      _whole(key, "sm_count", sm_count), version, _whole(key, "engine_index", engine_index, True),
                      _json_object(key, "knobs", knobs, int), float(time_us) if time_us is not None else None,
                      _json_object(key, "info", info), float(stored_at),
                      _whole(key, "plan_bytes", plan_bytes, True) or 0)


_READ_WRITE, _READ_ONLY, _REFUSED = "read-write", "read-only", "refused"


class PlanCache:
    """A persistent plan cache (see the module's notes). ``get(graph, handle=None, device_profile=None)`` -> a
    rebuilt ``Plan`` or None; ``put(graph, plan, **info)`` -> the key; ``entries()``, ``entry(key)``,
    ``remove(key)``, ``clear()``. ``timeout``: seconds to wait for another process's lock (0 to 3600)."""

    def __init__(self, path=None, *, timeout=30.0):
        self.path = default_cache_path() if path is None else _cache_path(path, "path")
        self._from_env = path is None and bool(os.environ.get("CUDNN_BACKEND_PLAN_CACHE"))  # (named in messages)
        self.timeout = _check_timeout(timeout)
        # _mode: None until opened, and again after a busy file or once the file was replaced or removed (it is then
        # looked at afresh); _REFUSED sticks: a file that is not a cache stays one
        self._mode = None
        self._real = None  # the file sqlite opens (symbolic links resolved)
        self._file_id = None  # (device, inode) of the file opened: a removed or replaced file is opened again
        self._why_unavailable = ""
        self._why_refused = ""
        self._said_read_only = False
        self._lock = threading.Lock()

    @classmethod
    def of(cls, cache, what: str = "cache") -> PlanCache | None:
        """``cache`` as a search takes it: a PlanCache (as it is: an empty one has len 0, so ``cache or None`` would
        drop it), a path, True (the default cache), None or False (no cache); a TypeError or ValueError naming
        ``what`` for anything else."""
        if cache is True:
            return cls()
        if cache is None or cache is False:
            return None
        if isinstance(cache, PlanCache):
            return cache
        try:
            path = _cache_path(cache, what)
        except TypeError:
            raise TypeError(f"{what}: expected a PlanCache, a cache file path, True (the default cache) or None, not "
                            f"{type(cache).__name__}") from None
        return cls(path)

    def __repr__(self):
        return f"<PlanCache {str(self.path)!r}>"

    def __reduce__(self):  # plain data: a path and a timeout
        return (type(self), (str(self.path),), {"timeout": self.timeout})

    def __setstate__(self, state):
        self.timeout = _check_timeout(state.get("timeout", 30.0))

    # -- opening ----------------------------------------------------------------------------------------------
    def _state(self) -> str | None:
        """The mode this cache is used in now (opened on first use), or None: not usable at the moment (warned)."""
        with self._lock:
            if self._mode is not None and self._file_id != _file_id(self._real):
                self._mode = None  # removed or replaced under this object
            if self._mode is None:
                self._mode = self._open()
                self._file_id = _file_id(self._real) if self._mode is not None else None
            return self._mode

    def _sqlite(self, read_only: bool) -> sqlite3.Connection:
        """A connection that never creates the file (only ``_make_private`` does, privately)."""
        uri = self._real.as_uri()
        if read_only:
            wal_less = not os.path.exists(str(self._real) + "-shm")
            # a read-only folder: sqlite cannot make the -shm file a WAL reader needs; nobody can write the file then
            immutable = wal_less and not os.access(self._real.parent, os.W_OK)
            uri += "?mode=ro" + ("&immutable=1" if immutable else "")
        else:
            uri += "?mode=rw"
        conn = sqlite3.connect(uri, uri=True, timeout=self.timeout, isolation_level=None)
        conn.text_factory = _text_or_undecodable  # (one entry's bad bytes must not fail the whole listing)
        return conn

    def _unavailable(self, why: str) -> None:
        self._why_unavailable = why
        self._warn(why)

    def _refuse(self, why: str) -> str:
        self._why_refused = why
        self._warn(why)
        return _REFUSED

    def _open(self) -> str | None:
        try:
            self._real = _make_private(self.path, from_env=self._from_env)
        except _FolderNotMade as e:
            return self._unavailable(f"cannot create its folder ({e.__cause__}); nothing is looked up or stored")
        if not self._real.exists():
            return self._unavailable(f"cannot create it (its folder {str(self._real.parent)!r} is not writable here); "
                                     "nothing is looked up or stored")
        writable = os.access(self._real, os.W_OK) and os.access(self._real.parent, os.W_OK | os.X_OK)
        for attempt in range(2):  # look; make or upgrade it where needed; look again
            try:
                with contextlib.closing(self._sqlite(read_only=True)) as conn:  # looking writes nothing
                    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                    try:
                        meta = dict(conn.execute("SELECT name, value FROM meta").fetchall()) if "meta" in tables \
                            else None
                    except sqlite3.OperationalError as e:
                        if is_busy(e):
                            raise
                        meta = {}  # a "meta" table of another layout
                    columns = {r[1] for r in conn.execute("PRAGMA table_info(plans)")}
            except sqlite3.Error as e:
                if is_busy(e):
                    return self._unavailable(f"busy in another process ({e}); a miss, tried again at the next call")
                if isinstance(e, sqlite3.OperationalError):  # e.g. unreadable here
                    return self._unavailable(f"cannot read it ({e}); a miss, tried again at the next call")
                return self._refuse(f"not a usable plan cache ({e}); every lookup misses")
            if not tables:
                if not _empty_or_sqlite(self._real):  # (SQLite reads a file shorter than its header as empty)
                    return self._refuse("not a plan cache: it holds bytes that are no SQLite database; every lookup "
                                        "misses, and nothing is written to it")
                if not writable:
                    return self._unavailable("empty and not writable here: nothing is looked up or stored")
                if attempt == 0 and self._setup("set it up", self._create):
                    continue
                return None if attempt == 0 else self._unavailable("emptied while it was set up; tried again at the "
                                                                   "next call")
            if meta is None:
                return self._refuse(f"not a plan cache: it holds other tables ({', '.join(sorted(tables)[:8])}); "
                                    "every lookup misses, and nothing is written to it")
            if meta.get("format") != FORMAT:
                return self._refuse(f"a foreign sqlite file (format {meta.get('format')!r}, not {FORMAT!r}); every "
                                    "lookup misses, and nothing is written to it")
            version = meta.get("schema_version")
            if version == "1" and attempt == 0:
                if not writable:
                    return self._unavailable("written by an older cudnn-backend (schema 1, without checksums), and "
                                             "not writable here, so it cannot be upgraded; every lookup misses")
                if self._setup("upgrade it to schema 2", self._upgrade):
                    continue
                return None
            if version != str(SCHEMA_VERSION):
                return self._refuse(f"a plan cache of another cudnn-backend release (schema {version!r}; this one "
                                    f"reads schema {SCHEMA_VERSION}); every lookup misses, and nothing is written to "
                                    "it")
            if not _COLUMNS <= columns:  # its own schema, altered: by hand, or by a tool
                missing = sorted(_COLUMNS - columns)
                return self._refuse(f"a plan cache of schema {version} whose plans table "
                                    f"{'is missing' if not columns else 'lacks the column(s) ' + ', '.join(missing)} "
                                    "(altered since it was written); every lookup misses, and nothing is written to "
                                    "it")
            return _READ_WRITE if writable else _READ_ONLY
        return None  # (not reached: the second look returns)

    def _setup(self, doing: str, step) -> bool:
        """Run ``step(conn)`` in a write transaction; False when it could not (warned, tried again later)."""
        try:
            with contextlib.closing(self._sqlite(read_only=False)) as conn:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("BEGIN IMMEDIATE")
                try:
                    step(conn)
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
        except sqlite3.Error as e:
            self._unavailable(f"could not {doing} ({e}); a miss, tried again at the next call")
            return False
        return True

    @staticmethod
    def _create(conn):
        for statement in _SCHEMA:  # another process may have made it meanwhile: IF NOT EXISTS, OR IGNORE
            conn.execute(statement)
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (FORMAT,))
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))

    @staticmethod
    def _upgrade(conn):
        """Schema 1 -> 2: a checksum for each entry as it stands (the trust the older release gave it)."""
        if conn.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone() != ("1",):
            return  # another process upgraded it meanwhile
        if "checksum" not in {r[1] for r in conn.execute("PRAGMA table_info(plans)")}:
            conn.execute("ALTER TABLE plans ADD COLUMN checksum TEXT NOT NULL DEFAULT ''")
        rows = conn.execute(f"SELECT {', '.join(_CHECKED)} FROM plans").fetchall()
        conn.executemany("UPDATE plans SET checksum = ? WHERE key = ?",
                         [(_checksum(r) or "", r[0]) for r in rows])
        conn.execute("UPDATE meta SET value = ? WHERE name = 'schema_version'", (str(SCHEMA_VERSION),))

    def _warn(self, text):
        level, frame = 2, sys._getframe(1)  # stacklevel 1 is this function, 2 its caller
        while frame is not None and frame.f_globals.get("__name__") in (__name__, "contextlib"):
            level, frame = level + 1, frame.f_back  # point at the caller's line
        warnings.warn(f"plan cache {str(self.path)!r}: {text}", PlanCacheWarning, stacklevel=level)

    # -- reading and writing -------------------------------------------------------------------------------------
    def _read(self, doing: str, query, default):
        """``query(conn)`` on a read-only connection, or ``default`` for a cache not usable now or a failed read
        (warned: a miss), and for one that does not exist (reading creates neither the file nor its folder)."""
        if not os.path.lexists(self.path):
            _make_private(self.path, create=False, from_env=self._from_env)  # (said all the same)
            return default
        mode = self._state()
        if mode not in (_READ_WRITE, _READ_ONLY):
            return default
        try:
            with contextlib.closing(self._sqlite(read_only=True)) as conn:
                return query(conn)
        except sqlite3.Error as e:
            self._warn(f"{doing} failed ({e}); a miss" + ("" if not is_busy(e) else ", tried again at the next call"))
            return default

    def _write(self, doing: str, change, strict: bool):
        """``change(conn)`` in a write transaction (waiting up to ``timeout`` for another process's lock): its value,
        or None where the cache cannot be written. ``strict`` (clear, remove: the caller asked for the change): a
        PlanCacheError naming the cache; else a warning (put: storing is a service, not the caller's aim)."""
        mode = self._state()
        if mode != _READ_WRITE:
            if mode == _READ_ONLY:
                why = ("read-only here (the file or its folder is not writable); lookups are served, nothing is "
                       "stored")
                if strict:
                    raise PlanCacheError(f"plan cache {str(self.path)!r}: cannot {doing}: it is {why}")
                if not self._said_read_only:
                    self._said_read_only = True
                    self._warn(why)
            elif strict and mode is None:
                raise PlanCacheError(f"plan cache {str(self.path)!r}: cannot {doing}: {self._why_unavailable}")
            elif strict:  # refused: a file this package cannot use, never written (it may be another program's)
                raise PlanCacheError(f"plan cache {str(self.path)!r}: cannot {doing}: {self._why_refused}; the file is "
                                     "left as it is: name another cache, or remove this file if it is a plan cache "
                                     "gone bad")
            return None
        try:
            with contextlib.closing(self._sqlite(read_only=False)) as conn:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    value = change(conn)
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                return value
        except sqlite3.Error as e:
            why = f"could not {doing} ({e})"
            if is_busy(e):
                why += f": another process held its write lock for more than {self.timeout:g} s (timeout); try again"
            if strict:
                raise PlanCacheError(f"plan cache {str(self.path)!r}: {why}") from None
            self._warn(why)
            return None

    def _checked(self, row, consequence: str):
        """(entry, plan JSON) of a row of the ``_LISTED`` columns, the plan's length, the ``_CHECKED`` columns and the
        checksum; None (warned: ``consequence``) for an entry whose checksum or fields do not hold."""
        listed, checked, checksum = row[:len(_LISTED) + 1], row[len(_LISTED) + 1:-1], row[-1]
        key = str(checked[0])[:12]
        if _checksum(checked) != checksum:
            self._warn(f"entry {key} does not match its checksum (edited or swapped in the file); {consequence}")
            return None
        try:
            return _entry_of(listed), checked[-1]
        except _BadField as e:
            self._warn(f"{e}; {consequence}")
            return None

    # -- keys ---------------------------------------------------------------------------------------------------
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

    # -- lookups ------------------------------------------------------------------------------------------------
    _SELECT = f"SELECT {_CHECK_COLUMNS} FROM plans"

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
        row = self._read("lookup", lambda conn: conn.execute(f"{self._SELECT} WHERE key = ?", (key,)).fetchone(),
                         None)
        checked = self._checked(row, "a miss") if row is not None else None
        if checked is None:
            return None, ""
        entry, plan_json = checked
        rules = _errata.resolve(errata)
        rule = self._denied(rules, op_graph, entry.engine_index, entry.knobs, handle, device_profile)
        if rule is not None:
            return None, (f"entry {key[:12]} (engine {entry.engine_index}) is denied by errata rule {rule.name} "
                          f"({rules.origin(rule)}); a miss")
        try:
            plan = _plans.plan_from_json(plan_json, handle=handle, device_profile=device_profile,
                                         operation_graph=op_graph)
        except (CudnnBackendError, ValueError, TypeError) as e:
            self._warn(f"entry {key[:12]} could not be loaded ({type(e).__name__}: {str(e)[:200]}); a miss")
            return None, ""
        # what comes back is what the errata were checked against (the checksum ties the columns to the JSON at put)
        loaded = (plan.engine_index, {short_name(k): int(v) for k, v in plan.knobs.items()})
        if loaded != (entry.engine_index, entry.knobs):
            plan.close()
            self._warn(f"entry {key[:12]}: its plan is engine {loaded[0]} {loaded[1]}, its columns say engine "
                       f"{entry.engine_index} {entry.knobs}; a miss")
            return None, ""
        return plan, ""

    @staticmethod
    def _denied(rules, op_graph, engine_index, knobs, handle, device_profile):
        """The rule that denies a stored entry's config (its engine and knobs, in cuDNN's order), or None."""
        if engine_index is None:
            return None
        try:
            knob_types = {int(knob_type(k)): int(v) for k, v in knobs.items()}
        except (TypeError, ValueError, AttributeError):  # a knob this cuDNN does not know: no rule names it
            return None
        traits = _errata.traits_of(op_graph)
        if traits.tag is None:
            return None
        target = _errata.target_of(handle, as_deviceprop(device_profile), op_graph)
        return rules.deny(_errata.plan_tag(traits.tag, engine_index, knob_types), traits, target)

    def previous(self, graph, handle=None, device_profile=None) -> CacheEntry | None:
        """The winner another cuDNN release stored for ``graph`` on this device (the newest release older than the
        loaded one first, else the newest other), or None: what a search on a new release tries against its own
        (its engine's global index and knobs; the plan itself does not load on another release)."""
        _, fp = self._graph(graph)
        device = self._device(handle, device_profile)
        loaded = get_version()
        rows = self._read("lookup of another release's winner",
                          lambda conn: conn.execute(f"{self._SELECT} WHERE fingerprint = ? AND device_name = ? AND "
                                                    "sm_version = ? AND sm_count = ? AND cudnn_version != ? AND "
                                                    "engine_index IS NOT NULL",
                                                    (fp, device[0], int(device[1]), int(device[2]),
                                                     int(loaded))).fetchall(), [])
        entries = [c[0] for c in (self._checked(r, "not tried") for r in rows) if c is not None]
        return max(entries, key=lambda e: (e.cudnn_version < loaded, e.cudnn_version), default=None)

    def put(self, graph, plan, *, handle=None, device_profile=None, time_us=None, **info) -> str:
        """Store ``plan`` (a ``Plan``, built for ``graph``) for ``graph``; ``time_us`` and any JSON-able ``info`` go
        with it. Returns the key (or "" when the cache cannot store it now: a warning was given)."""
        op_graph, fp = self._graph(graph)
        plan = _plans.as_plan(plan)
        self._check_plan_graph(op_graph, plan)
        time_us = _check_time_us(time_us)
        device = self._device(handle if handle is not None else plan.handle,
                              device_profile if device_profile is not None else plan.deviceprop, plan)
        self._check_plan_device(plan, device, "handle" if handle is not None else "device_profile")
        version = get_version()
        key = self._key(fp, device, version)
        plan_json = plan.to_json()
        # the knobs as the stored plan gives them back: cuDNN's JSON lists knobs the config left out too (a matmul's
        # SPLIT_K_SLC and STREAM_K at -1), which a plan loaded from it reports
        knobs = json.dumps(_plans.plan_json_info(plan_json)["knobs"])  # (short names already)
        try:
            info_text = json.dumps(info, default=_info_value, allow_nan=False)
        except (ValueError, TypeError, RecursionError) as e:
            raise ValueError(f"info: not storable as JSON ({type(e).__name__}: {e})") from None
        control = control_character_at(json.loads(info_text), "info")
        if control is not None:  # (listings print the info to terminals: the cache holds none)
            raise ValueError(f"{control[0]}: control character {control[1]!r}; a plan cache's text holds none")
        checked = (key, fp, device[0], int(device[1]), int(device[2]), int(version), plan.engine_index, knobs,
                   plan_json)
        values = dict(zip(_CHECKED, checked), time_us=time_us, info=info_text, stored_at=time.time(),
                      checksum=_checksum(checked))
        stored = self._write("store the plan", lambda conn: conn.execute(
            f"INSERT OR REPLACE INTO plans ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
            tuple(values.values())), strict=False)
        return key if stored is not None else ""

    @classmethod
    def _check_plan_device(cls, plan, device, what) -> None:
        """Refuse a plan built for another device than the one it would be stored for (where the plan knows its
        own): it would come back for a GPU it was not made for, and cuDNN would refuse it there, or worse."""
        if plan.handle is None and plan.deviceprop is None:
            return
        own = cls._device(plan.handle, plan.deviceprop, plan)
        if own != device:
            raise ValueError(f"{what}: the plan was built for {device_words(*own)}, not for {device_words(*device)} "
                             "it would be stored for; store each plan for the device it was built for")

    @staticmethod
    def _check_plan_graph(op_graph, plan) -> None:
        """Refuse a plan built for another graph than ``op_graph`` (where the plan knows its graph): stored under
        this graph's key, it would come back for this graph."""
        own = plan.operation_graph
        if own is None:  # a plan read from JSON: its JSON lists its graph's tensors and how they are wired
            check_plans_graph(plan, op_graph, "graph")
            return
        if own is op_graph:
            return
        try:
            theirs, ours = graph_fingerprint(own), graph_fingerprint(op_graph)
        except (CudnnBackendError, ValueError, TypeError, KeyError):  # a graph read back from cuDNN: not comparable
            return
        if theirs != ours:
            raise ValueError(f"plan: built for another graph (fingerprint {theirs[:12]}) than the one it would be "
                             f"stored for (fingerprint {ours[:12]}); store each plan under the graph it was built for")

    # -- listing --------------------------------------------------------------------------------------------
    _LIST = f"SELECT {_LIST_COLUMNS} FROM plans"

    def _listed(self, rows, consequence: str) -> list[CacheEntry]:
        entries = []
        for row in rows:
            try:
                entries.append(_entry_of(row))
            except _BadField as e:
                self._warn(f"{e}; {consequence}")
        return entries

    def entries(self) -> list[CacheEntry]:
        """Every stored entry, newest first (empty for a file not usable now). An entry whose fields do not read
        (edited in the file) is left out with a warning naming it and the field."""
        rows = self._read("listing", lambda conn: conn.execute(f"{self._LIST} ORDER BY stored_at DESC").fetchall(), [])
        return self._listed(rows, "left out of the listing")

    @staticmethod
    def _prefix(key) -> str:
        if not isinstance(key, str) or not key:
            raise ValueError("key: expected a non-empty key or key prefix")
        return key.lower()  # keys are lowercase hex; the text is matched literally (no wildcards)

    def _matching(self, conn, key, columns: str) -> tuple | None:
        """The row (``columns``) of the one entry whose key starts with ``key``, or None; ValueError for several."""
        prefix = self._prefix(key)
        rows = conn.execute(f"SELECT {columns} FROM plans WHERE substr(key, 1, ?) = ? LIMIT 2",
                            (len(prefix), prefix)).fetchall()
        if len(rows) > 1:
            raise ValueError(f"key: {key!r} matches several entries; give more characters")
        return rows[0] if rows else None

    def entry(self, key: str) -> CacheEntry | None:
        """The entry whose key is ``key`` or starts with it (unique prefix), or None (also, with a warning, for an
        entry whose fields do not read)."""
        self._prefix(key)
        row = self._read("lookup", lambda conn: self._matching(conn, key, _LIST_COLUMNS), None)
        found = self._listed([row] if row is not None else [], "not shown")
        return found[0] if found else None

    def plan_json(self, key: str) -> str | None:
        """The stored plan's JSON of the entry ``key`` (or a unique prefix of it), or None (also, with a warning,
        for an entry that does not match its checksum)."""
        self._prefix(key)
        row = self._read("lookup", lambda conn: self._matching(conn, key, _CHECK_COLUMNS), None)
        checked = self._checked(row, "its plan is not handed out") if row is not None else None
        return checked[1] if checked is not None else None

    def remove(self, key: str) -> bool:
        """Remove the entry ``key`` (or a unique prefix of it); whether there was one. PlanCacheError naming the cache
        where it cannot be written (read-only, or locked by another process for longer than ``timeout``)."""
        self._prefix(key)

        def remove(conn):
            row = self._matching(conn, key, "key")
            if row is not None:
                conn.execute("DELETE FROM plans WHERE key = ?", row)
            return row is not None

        return bool(self._write("remove an entry", remove, strict=True))

    def clear(self) -> int:
        """Remove every entry; returns how many there were. PlanCacheError naming the cache where it cannot be written
        (read-only, locked by another process for longer than ``timeout``, or a file that is no usable plan cache,
        which is never written)."""
        def clear(conn):
            n = conn.execute("SELECT count(*) FROM plans").fetchone()[0]
            conn.execute("DELETE FROM plans")
            return int(n)

        if not os.path.lexists(self.path):  # nothing to clear: neither the file nor its folder is made
            _make_private(self.path, create=False, from_env=self._from_env)  # (its path's problems said all the same)
            return 0
        return self._write("clear it", clear, strict=True) or 0

    def __len__(self):
        return int(self._read("counting", lambda conn: conn.execute("SELECT count(*) FROM plans").fetchone()[0], 0))


def _file_id(path) -> tuple | None:
    try:
        st = os.stat(path)
    except (OSError, TypeError):
        return None
    return st.st_dev, st.st_ino
