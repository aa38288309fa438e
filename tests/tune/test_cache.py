"""The persistent plan cache: round trip across processes, misses for another graph or device, corrupt and
foreign files (a miss with a warning, never a crash), concurrent writers."""
import json
import os
import re
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading

import pytest

import cudnn_backend as cb
from cudnn_backend.errors import PlanCacheError
from cudnn_backend.tune import PlanCache, PlanCacheWarning
from cudnn_backend.tune.explorer import _as_cache
from tests.tune import three_ways

H200 = cb.DeviceProfile.bundled("h200")


def _other_device() -> cb.DeviceProfile:
    """The H200 profile with another SM count: another device as far as keys go (cuDNN accepts it)."""
    props = json.loads(H200.deviceprop_json)
    props["multiProcessorCount"] = 100
    return cb.DeviceProfile.from_json(json.dumps(props), H200.cudnn_version)


def _plan(op_graph, profile=H200):
    return cb.build_plan(cb.get_configs(op_graph, "A", profile)[0], device_profile=profile)


def test_put_then_get_in_another_process(tmp_path):
    path = tmp_path / "plans.sqlite"
    og = three_ways.graph_builder().build()
    plan = _plan(og)
    cache = PlanCache(path)
    key = cache.put(og, plan, device_profile=H200, time_us=12.5, name="cbr")
    assert len(key) == 64 and len(cache) == 1
    code = textwrap.dedent(f"""
        import json, cudnn_backend as cb
        from cudnn_backend.tune import PlanCache
        from tests.tune import three_ways
        og = three_ways.generic()   # the same computation, built through another API
        hit = PlanCache({str(path)!r}).get(og, device_profile=cb.DeviceProfile.bundled("h200"))
        print(json.dumps({{"engine": hit.engine_index, "knobs": {{str(k): v for k, v in hit.knobs.items()}},
                           "ws": hit.workspace_size}}))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["engine"] == plan.engine_index
    assert got["knobs"] == {str(k): v for k, v in plan.knobs.items()}
    assert got["ws"] == plan.workspace_size
    entry = cache.entry(key[:10])
    assert entry.time_us == 12.5 and entry.info["name"] == "cbr" and entry.device_name == "NVIDIA H200"
    assert entry.cudnn_version == cb.get_version() and entry.plan_bytes > 100


def test_misses_for_another_graph_or_device(tmp_path):
    cache = PlanCache(tmp_path / "c.sqlite")
    og = three_ways.graph_builder().build()
    cache.put(og, _plan(og), device_profile=H200)
    assert cache.get(og, device_profile=H200) is not None
    other_graph = three_ways.graph_builder(k=16).build()
    assert cache.get(other_graph, device_profile=H200) is None
    assert cache.get(og, device_profile=_other_device()) is None
    assert cache.key(og, device_profile=H200) != cache.key(og, device_profile=_other_device())


@pytest.mark.parametrize("content", [b"this is not sqlite at all" * 100, b"SQLite format 3\x00" + b"\xff" * 4000])
def test_corrupt_file_is_a_miss_with_a_warning(tmp_path, content):
    path = tmp_path / "bad.sqlite"
    path.write_bytes(content)
    cache = PlanCache(path)
    og = three_ways.graph_builder().build()
    with pytest.warns(PlanCacheWarning):
        assert cache.get(og, device_profile=H200) is None
    assert cache.entries() == [] and len(cache) == 0
    assert cache.put(og, _plan(og), device_profile=H200) == ""  # not stored, not crashed


def test_foreign_sqlite_file_is_a_miss(tmp_path):
    path = tmp_path / "foreign.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE plans (x INTEGER)")
    with pytest.warns(PlanCacheWarning, match="foreign"):
        assert PlanCache(path).get(three_ways.graph_builder().build(), device_profile=H200) is None


def test_entry_that_no_longer_loads_is_a_miss(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = PlanCache(path)
    og = three_ways.graph_builder().build()
    key = cache.put(og, _plan(og), device_profile=H200)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE plans SET plan_json = ? WHERE key = ?", ('{"engine": {"engineId": "x"}}', key))
    with pytest.warns(PlanCacheWarning, match="could not be loaded"):
        assert PlanCache(path).get(og, device_profile=H200) is None


def test_concurrent_writers_and_listing(tmp_path):
    path = tmp_path / "c.sqlite"
    graphs = [three_ways.graph_builder(k=k).build() for k in (8, 16, 24, 32)]
    plans = [_plan(g) for g in graphs]
    errors = []

    def writer(i):
        try:
            for _ in range(5):
                PlanCache(path).put(graphs[i], plans[i], device_profile=H200, time_us=float(i))
        except Exception as e:  # noqa: BLE001 - collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    cache = PlanCache(path)
    assert len(cache.entries()) == 4
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert cache.remove(cache.entries()[0].key) and len(cache) == 3
    assert cache.clear() == 3 and cache.entries() == []


def test_bad_arguments_name_themselves(tmp_path):
    cache = PlanCache(tmp_path / "c.sqlite")
    og = three_ways.graph_builder().build()
    with pytest.raises(ValueError, match="handle= or device_profile="):
        cache.get(og)
    with pytest.raises(TypeError, match="handle"):
        cache.get(og, handle="gpu")
    with pytest.raises(ValueError, match="info"):
        cache.put(og, _plan(og), device_profile=H200, score=float("nan"))
    with pytest.raises(ValueError, match="key"):
        cache.entry("")


def test_default_location_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDNN_BACKEND_PLAN_CACHE", str(tmp_path / "env.sqlite"))
    assert PlanCache().path == tmp_path / "env.sqlite"
    monkeypatch.delenv("CUDNN_BACKEND_PLAN_CACHE")
    assert PlanCache().path.name == "plans.sqlite"


# ---------------------------------------------------------------------------------------------
# a cache holds code (compiled GPU kernels): private files, and no cache others own or may write
# ---------------------------------------------------------------------------------------------
posix_only = pytest.mark.skipif(os.name != "posix", reason="file owners and modes are POSIX")
OTHER_UID = 54321


@pytest.fixture
def umask_022():
    old = os.umask(0o022)  # the common default: files would be 0644 unless made private
    yield
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@posix_only
def test_cache_file_its_siblings_and_a_created_folder_are_private(tmp_path, umask_022):
    path = tmp_path / "made" / "here" / "plans.sqlite"
    cache = PlanCache(path)
    og = three_ways.graph_builder().build()
    cache.put(og, _plan(og), device_profile=H200)
    assert _mode(path.parent) == 0o700 and _mode(path) == 0o600
    with sqlite3.connect(path) as reader:  # the -wal and -shm files exist while a connection is open
        assert reader.execute("SELECT count(*) FROM plans").fetchone()[0] == 1
        for suffix in ("-wal", "-shm"):
            sibling = path.with_name(path.name + suffix)
            assert _mode(sibling) == 0o600, f"{sibling.name}: {_mode(sibling):o}"
        assert cache.get(og, device_profile=H200) is not None
    reader.close()


@posix_only
@pytest.mark.parametrize("mode", [0o664, 0o646, 0o666], ids=oct)
def test_a_cache_file_others_may_write_is_refused(tmp_path, mode):
    path = tmp_path / "plans.sqlite"
    assert len(PlanCache(path)) == 0
    os.chmod(path, mode)
    with pytest.raises(PlanCacheError) as e:
        len(PlanCache(path))
    text = str(e.value)
    assert str(path) in text and f"{mode:04o}" in text and "chmod 600" in text and "compiled GPU kernels" in text


@posix_only
@pytest.mark.parametrize("suffix", ["-wal", "-shm"])
def test_a_sibling_others_may_write_is_refused(tmp_path, suffix):
    path = tmp_path / "plans.sqlite"
    sibling = tmp_path / ("plans.sqlite" + suffix)
    sibling.write_bytes(b"")
    os.chmod(sibling, 0o666)
    with pytest.raises(PlanCacheError, match=re.escape(str(sibling))):
        len(PlanCache(path))


@posix_only
@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o770], ids=oct)
def test_a_folder_others_may_write_is_refused(tmp_path, mode):
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, mode)
    with pytest.raises(PlanCacheError) as e:
        len(PlanCache(folder / "plans.sqlite"))
    assert f"folder {str(folder)!r}" in str(e.value) and "chmod 700" in str(e.value)
    assert not (folder / "plans.sqlite").exists()  # refused before anything was written there


@posix_only
@pytest.mark.parametrize("owned", ["file", "folder"])
def test_a_cache_another_user_owns_is_refused(tmp_path, owned):
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    path = folder / "plans.sqlite"
    assert len(PlanCache(path)) == 0
    try:
        os.chown(path if owned == "file" else folder, OTHER_UID, -1)
    except PermissionError:
        pytest.skip("changing a file's owner needs privileges (root) here")
    with pytest.raises(PlanCacheError) as e:
        len(PlanCache(path))
    text = str(e.value)
    assert f"uid {OTHER_UID}" in text and f"uid {os.geteuid()}" in text and "chown" in text
    assert str(path if owned == "file" else folder) in text


@posix_only
def test_the_environment_and_the_default_location_are_checked_alike(tmp_path, monkeypatch, umask_022):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("CUDNN_BACKEND_PLAN_CACHE", str(shared / "env.sqlite"))
    with pytest.raises(PlanCacheError, match="CUDNN_BACKEND_PLAN_CACHE"):
        len(PlanCache())
    monkeypatch.delenv("CUDNN_BACKEND_PLAN_CACHE")
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    cache = PlanCache()
    assert home in cache.path.parents
    assert len(cache) == 0
    assert _mode(cache.path.parent) == 0o700 and _mode(cache.path) == 0o600
    os.chmod(cache.path.parent, 0o775)
    with pytest.raises(PlanCacheError, match="writable by group"):
        len(PlanCache())


def test_an_empty_cache_is_still_the_cache_a_search_stores_into(tmp_path):
    """An empty PlanCache has len 0 (falsy): a search given one must still store its winner there (a sweep over
    graphs with a fresh cache stored nothing when ``cache or None`` dropped it)."""
    empty = PlanCache(tmp_path / "empty.sqlite")
    assert len(empty) == 0 and _as_cache(empty) is empty
    by_path = _as_cache(tmp_path / "by_path.sqlite")
    assert isinstance(by_path, PlanCache) and by_path.path == tmp_path / "by_path.sqlite"
    assert _as_cache(None) is None and _as_cache(False) is None


def test_another_releases_winner_for_the_same_graph_and_device(tmp_path, monkeypatch):
    """What a search after an upgrade tries first: the entry of the same graph and device stored by another release
    (the newest release older than the loaded one first), never one of this release or of another graph or GPU."""
    from cudnn_backend.tune import cache as cache_module

    path = tmp_path / "plans.sqlite"
    og = three_ways.graph_builder().build()
    cache = PlanCache(path)
    loaded = cb.get_version()
    plan = _plan(og)
    for version, time_us in ((loaded - 900, 20.0), (loaded - 300, 11.0), (loaded + 100, 9.0)):
        monkeypatch.setattr(cache_module, "get_version", lambda v=version: v)
        cache.put(og, plan, device_profile=H200, time_us=time_us)
    monkeypatch.setattr(cache_module, "get_version", lambda: loaded)
    cache.put(og, plan, device_profile=H200, time_us=1.0)  # this release's own: a hit, never "previous"
    cache.put(og, plan, device_profile=_other_device(), time_us=2.0)
    prev = cache.previous(og, device_profile=H200)
    assert prev.cudnn_version == loaded - 300 and prev.time_us == 11.0
    assert prev.engine_index == plan.engine_index and prev.knobs == {cb.runtime.engines.short_name(k): v
                                                                     for k, v in plan.knobs.items()}
    assert cache.previous(three_ways.graph_builder(n=2).build(), device_profile=H200) is None
    assert PlanCache(tmp_path / "empty.sqlite").previous(og, device_profile=H200) is None


def test_a_folder_given_as_the_cache_file_is_named(tmp_path):
    folder = tmp_path / "caches"
    folder.mkdir(mode=0o700)
    with pytest.raises(PlanCacheError, match=re.escape(f"plan cache {str(folder)!r} is a folder; name a file in it, "
                                                       f"such as {str(folder / 'plans.sqlite')!r}")):
        PlanCache(folder).entries()
