"""The persistent plan cache: round trip across processes, misses for another graph or device, corrupt and
foreign files (a miss with a warning, never a crash), concurrent writers."""
import contextlib
import json
import os
import pathlib
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import traceback
import warnings

import pytest

import cudnn_backend as cb
from cudnn_backend.errors import PlanCacheError
from cudnn_backend.runtime import errata as E
from cudnn_backend.tune import PlanCache, PlanCacheWarning
from cudnn_backend.tune import cache as cache_module
from cudnn_backend.typed.introspection import graph_fingerprint
from tests.helpers.env import loaded_has
from tests.tune import three_ways

H200 = cb.DeviceProfile.bundled("h200")


def _other_device() -> cb.DeviceProfile:
    """The H200 profile with another SM count: another device as far as keys go (cuDNN accepts it)."""
    props = json.loads(H200.deviceprop_json)
    props["multiProcessorCount"] = 100
    return cb.DeviceProfile.from_json(json.dumps(props), H200.cudnn_version)


def _plan(op_graph, profile=H200):
    return cb.build_plan(cb.get_configs(op_graph, "A", profile)[0], device_profile=profile)


def _made(path) -> PlanCache:
    """A plan cache at ``path`` made by its first write (an entry of one plan)."""
    cache = PlanCache(path)
    og = three_ways.graph_builder().build()
    assert cache.put(og, _plan(og), device_profile=H200)
    return cache


def _edit(path, key, restamp=False, **columns):
    """Set ``columns`` of the entry ``key`` in the file, as a hand or a tool would; ``restamp``: and its checksum
    again (what a writer that knows the format does: the fields must then be checked on their own)."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        for column, value in columns.items():
            conn.execute(f"UPDATE plans SET {column} = ? WHERE key = ?", (value, key))
        if restamp:
            row = conn.execute(f"SELECT {', '.join(cache_module._CHECKED)} FROM plans WHERE key = ?", (key,)).fetchone()
            conn.execute("UPDATE plans SET checksum = ? WHERE key = ?", (cache_module._checksum(row) or "", key))
        conn.commit()


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


@pytest.mark.parametrize("content", [b"this is not sqlite at all" * 100, b"SQLite format 3\x00" + b"\xff" * 4000,
                                     b"x", b"notes\n"])  # (SQLite reads a file shorter than its header as empty)
def test_corrupt_file_is_a_miss_with_a_warning(tmp_path, content):
    path = tmp_path / "bad.sqlite"
    path.write_bytes(content)
    os.chmod(path, 0o600)
    cache = PlanCache(path)
    og = three_ways.graph_builder().build()
    with pytest.warns(PlanCacheWarning):
        assert cache.get(og, device_profile=H200) is None
    assert cache.entries() == [] and len(cache) == 0
    assert cache.put(og, _plan(og), device_profile=H200) == ""  # not stored, not crashed
    assert path.read_bytes() == content  # never overwritten


@pytest.mark.parametrize("tables", [["CREATE TABLE users (id INTEGER, name TEXT)", "INSERT INTO users VALUES (1, 'a')"],
                                    ["CREATE TABLE plans (x INTEGER)"]], ids=["users", "plans"])
def test_an_unrelated_sqlite_database_is_refused_and_never_written(tmp_path, tables):
    path = tmp_path / "app.db"
    with contextlib.closing(sqlite3.connect(path)) as conn:
        for statement in tables:
            conn.execute(statement)
        conn.commit()
    os.chmod(path, 0o600)
    before = path.read_bytes()
    cache = PlanCache(path)
    og = three_ways.graph_builder().build()
    with pytest.warns(PlanCacheWarning, match=r"not a plan cache: it holds other tables \((users|plans)\); every "
                                              "lookup misses, and nothing is written to it"):
        assert cache.get(og, device_profile=H200) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused once, then quietly a miss
        assert cache.put(og, _plan(og), device_profile=H200) == "" and len(cache) == 0
        with pytest.raises(PlanCacheError, match=r"cannot clear it: not a plan cache: .* the file is left as it is"):
            cache.clear()
    assert path.read_bytes() == before  # no tables added, journal mode untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]  # no -wal, no -shm


def test_entry_that_no_longer_loads_is_a_miss(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = PlanCache(path)
    og = three_ways.graph_builder().build()
    key = cache.put(og, _plan(og), device_profile=H200)
    _edit(path, key, restamp=True, plan_json='{"engine": {"engineId": "x"}}')  # as if a new cuDNN refused it
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
    assert _made(path).clear() == 1 and path.exists()  # made by the first write
    os.chmod(path, mode)
    with pytest.raises(PlanCacheError) as e:
        len(PlanCache(path))
    text = str(e.value)
    assert str(path) in text and f"{mode:04o}" in text and "chmod 600" in text and "compiled GPU kernels" in text
    assert f"writable by {'others' if mode & 0o002 else 'group'}" in text


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
@pytest.mark.parametrize("mode, who", [(0o777, "others"), (0o1777, "others"), (0o770, "group")],
                         ids=["0o777", "0o1777", "0o770"])
def test_a_folder_others_may_write_is_refused(tmp_path, mode, who):
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, mode)
    with pytest.raises(PlanCacheError) as e:
        len(PlanCache(folder / "plans.sqlite"))
    text = str(e.value)
    assert f"folder {str(folder)!r} is writable by {who} (mode {mode:04o})" in text
    if mode & stat.S_ISVTX:  # sticky, like /tmp: a folder for everyone, so the fix is another folder
        assert "chmod" not in text and "mkdir -m 700" in text
    else:
        assert "chmod 700" in text
    assert not (folder / "plans.sqlite").exists()  # refused before anything was written there


@posix_only
def test_a_private_folder_inside_one_every_user_may_write_is_refused(tmp_path):
    # not sticky: anyone may rename the private folder and put their own in its place after the checks
    shared = tmp_path / "shared"
    (shared / "mine").mkdir(parents=True, mode=0o700)
    os.chmod(shared, 0o777)
    with pytest.raises(PlanCacheError, match=rf"^plan cache folder {re.escape(repr(str(shared / 'mine')))} lies in "
                                             rf"{re.escape(repr(str(shared)))}, which every user may write \(mode 0777, "
                                             r"not sticky\)"):
        len(PlanCache(shared / "mine" / "plans.sqlite"))
    assert not (shared / "mine" / "plans.sqlite").exists()
    os.chmod(shared, 0o1777)  # sticky, like /tmp: only their owner may move what is in it
    assert _made(shared / "mine" / "plans.sqlite").clear() == 1


@posix_only
@pytest.mark.parametrize("owned", ["file", "folder"])
def test_a_cache_another_user_owns_is_refused(tmp_path, owned):
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    path = folder / "plans.sqlite"
    assert _made(path).clear() == 1 and path.exists()
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
    assert len(cache) == 0 and not cache.path.parent.exists()  # reading creates nothing
    assert cache.clear() == 0 and not cache.path.parent.exists()  # nor does clearing what is not there
    _made(cache.path)
    assert _mode(cache.path.parent) == 0o700 and _mode(cache.path) == 0o600
    os.chmod(cache.path.parent, 0o775)
    with pytest.raises(PlanCacheError, match="writable by group"):
        len(PlanCache())


def test_an_empty_cache_is_still_the_cache_a_search_stores_into(tmp_path):
    """An empty PlanCache has len 0 (falsy): a search given one must still store its winner there (a sweep over
    graphs with a fresh cache stored nothing when ``cache or None`` dropped it)."""
    empty = PlanCache(tmp_path / "empty.sqlite")
    assert len(empty) == 0 and PlanCache.of(empty) is empty
    by_path = PlanCache.of(tmp_path / "by_path.sqlite")
    assert isinstance(by_path, PlanCache) and by_path.path == tmp_path / "by_path.sqlite"
    assert PlanCache.of(None) is None and PlanCache.of(False) is None


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
    cache.put(og, _plan(og, _other_device()), device_profile=_other_device(), time_us=2.0)
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


# ---------------------------------------------------------------------------------------------
# never another graph's plan: put checks the plan's graph, each entry carries a checksum
# ---------------------------------------------------------------------------------------------
def _two_graphs():
    """Two graphs on the same tensors that compute different things (cross-correlation, convolution): a plan of
    one loads against the other's tensors, so only the fingerprint tells them apart."""
    sizes = dict(n=1, c=16, h=8, w=8, k=16)
    return cb.patterns.conv_fwd(**sizes).op_graph, cb.patterns.conv_fwd(mode="convolution", **sizes).op_graph


def test_put_refuses_a_plan_built_for_another_graph(tmp_path):
    cache = PlanCache(tmp_path / "c.sqlite")
    g1, g2 = _two_graphs()
    with pytest.raises(ValueError, match=r"^plan: built for another graph \(fingerprint [0-9a-f]{12}\) than the one it "
                                         r"would be stored for \(fingerprint [0-9a-f]{12}\)"):
        cache.put(g1, _plan(g2), device_profile=H200)
    assert len(cache) == 0
    assert cache.put(g2, _plan(g2), device_profile=H200)  # its own graph: stored


def test_put_checks_a_plan_read_from_json_against_the_graph(tmp_path):
    # a loaded plan knows no graph of its own: its JSON's tensors and wiring are what it is checked by
    cache = PlanCache(tmp_path / "c.sqlite")
    small = cb.patterns.conv_fwd(n=1, c=16, h=8, w=8, k=16).op_graph
    large = cb.patterns.conv_fwd(n=4, c=16, h=8, w=8, k=16).op_graph
    loaded = cb.plan_from_json(_plan(large).to_json(), device_profile=H200)
    assert loaded.operation_graph is None
    with pytest.raises(ValueError, match=r"^graph: not this plan's graph: its tensor .*\[1, 16, 8, 8\].* is .*"
                                         r"\[4, 16, 8, 8\].* in the plan"):
        cache.put(small, loaded, device_profile=H200)
    assert len(cache) == 0
    assert cache.put(large, loaded, device_profile=H200)  # its own graph: stored
    assert cache.get(large, device_profile=H200) is not None
    # the same tensors, another computation: the settings as cuDNN writes them tell
    g1, g2 = _two_graphs()
    with pytest.raises(ValueError, match=r"^graph: not this plan's graph: its CONVOLUTION_FORWARD over UIDs .*: mode "
                                         r"is 'CUDNN_CROSS_CORRELATION', the plan's 'CUDNN_CONVOLUTION'"):
        cache.put(g1, cb.plan_from_json(_plan(g2).to_json(), device_profile=H200), device_profile=H200)


def test_a_plan_whose_json_lists_knobs_its_config_left_out_is_a_hit(tmp_path):
    # cuDNN's JSON of a matmul plan lists SPLIT_K_SLC and STREAM_K (-1) beside the config's KERNEL_CFG: what the
    # entry records must be what the plan loaded back reports, else every lookup is a miss
    g = cb.Graph("matmul", io_data_type="half")
    g.matmul(g.tensor([1, 256, 128]), g.tensor([1, 128, 64]), output=True)
    og = g.build()
    plans = [cb.build_plan(c, device_profile=H200) for mode in ("A", "FALLBACK")
             for c in cb.get_configs(og, mode, H200, raise_if_empty=False)[:3]]
    assert plans
    for i, plan in enumerate(plans):
        cache = PlanCache(tmp_path / f"c{i}.sqlite")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            key = cache.put(og, plan, device_profile=H200)
            hit = cache.get(og, device_profile=H200)
        assert hit is not None and hit.engine_index == plan.engine_index
        assert {cache_module.short_name(k): v for k, v in hit.knobs.items()} == cache.entry(key).knobs


def test_put_refuses_a_plan_built_for_another_device(tmp_path):
    cache = PlanCache(tmp_path / "c.sqlite")
    og = three_ways.graph_builder().build()
    other = _other_device()
    with pytest.raises(ValueError, match=r"^device_profile: the plan was built for .* \(SM 9\.0, 132 SMs\), not for "
                                         r".* \(SM 9\.0, 100 SMs\) it would be stored for"):
        cache.put(og, _plan(og), device_profile=other)
    assert len(cache) == 0
    assert cache.put(og, _plan(og, other), device_profile=other)  # built for it: stored
    assert cache.put(og, _plan(og))  # the plan's own device when none is named
    assert len(cache) == 2


@pytest.mark.parametrize("edit", ["swap plans", "engine_index", "knobs", "plan engine", "cudnn_version"])
def test_an_entry_edited_or_swapped_in_the_file_is_a_miss_with_a_warning(tmp_path, edit):
    path = tmp_path / "c.sqlite"
    cache = PlanCache(path)
    g1, g2 = _two_graphs()
    p1, p2 = _plan(g1), _plan(g2)
    k1, k2 = cache.put(g1, p1, device_profile=H200), cache.put(g2, p2, device_profile=H200)
    if edit == "swap plans":  # g2's plan under g1's key: it loads against g1's tensors, and would run g2's math
        _edit(path, k1, plan_json=p2.to_json())
    elif edit == "engine_index":
        _edit(path, k1, engine_index=p1.engine_index + 1)
    elif edit == "knobs":
        _edit(path, k1, knobs="{}")
    elif edit == "plan engine":
        doc = json.loads(p1.to_json())
        doc["engine"]["engineId"] = p2.engine_index
        _edit(path, k1, plan_json=json.dumps(doc))
    else:
        _edit(path, k1, cudnn_version=cb.get_version() - 1)
    with pytest.warns(PlanCacheWarning, match=f"entry {k1[:12]} does not match its checksum \\(edited or swapped in "
                                              "the file\\); a miss"):
        assert cache.get(g1, device_profile=H200) is None
    with pytest.warns(PlanCacheWarning, match=f"entry {k1[:12]} does not match its checksum"):
        assert cache.plan_json(k1) is None
    hit = cache.get(g2, device_profile=H200)  # the untouched entry is still a hit
    assert hit is not None and hit.to_json() == p2.to_json()
    assert cache.key(g2, device_profile=H200) == k2


def test_the_plan_returned_is_the_one_the_errata_rules_were_checked_against(tmp_path):
    """An entry whose columns name another engine than its plan (its checksum made again, as a writer knowing the
    format would): the rules saw the columns' engine, so the plan, which a rule denies, is not handed out."""
    path = tmp_path / "c.sqlite"
    og = three_ways.graph_builder().build()
    configs = cb.get_configs(og, "A", H200, errata=False)
    plan = cb.build_plan(configs[0], device_profile=H200)
    other = next(c for c in configs if c.engine_index != plan.engine_index)
    cache = PlanCache(path)
    key = cache.put(og, plan, device_profile=H200)
    _edit(path, key, restamp=True, engine_index=other.engine_index)
    deny_the_plan = E.Errata.from_dict({"version": 1, "rules": [{"rule_id": "planted",
                                                                 "operation": E.traits_of(og).operation,
                                                                 "engine": plan.engine_index}]})
    with pytest.warns(PlanCacheWarning, match=f"entry {key[:12]}: its plan is engine {plan.engine_index} .*, its "
                                              f"columns say engine {other.engine_index} .*; a miss"):
        hit, note = cache.lookup(og, device_profile=H200, errata=deny_the_plan)
    assert hit is None and note == ""


def _schema_1(path):
    """The file as the release before the checksums wrote it."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("ALTER TABLE plans DROP COLUMN checksum")
        conn.execute("UPDATE meta SET value = '1' WHERE name = 'schema_version'")
        conn.commit()


def test_a_plan_swapped_in_a_schema_1_file_is_a_miss_after_the_upgrade(tmp_path):
    # the upgrade computes the checksums of the rows as they stand: the plan's own graph is what still tells
    path = tmp_path / "c.sqlite"
    g1, g2 = _two_graphs()
    cache = PlanCache(path)
    k1, k2 = cache.put(g1, _plan(g1), device_profile=H200), cache.put(g2, _plan(g2), device_profile=H200)
    _schema_1(path)
    with contextlib.closing(sqlite3.connect(path)) as conn:
        other = conn.execute("SELECT plan_json FROM plans WHERE key = ?", (k2,)).fetchone()[0]
        conn.execute("UPDATE plans SET plan_json = ? WHERE key = ?", (other, k1))
        conn.commit()
    with pytest.warns(PlanCacheWarning, match=rf"entry {k1[:12]} could not be loaded \(ValueError: operation_graph: "
                                              r"not this plan's graph: .*mode is 'CUDNN_CROSS_CORRELATION', the "
                                              r"plan's 'CUDNN_CONVOLUTION'\); a miss"):
        assert PlanCache(path).get(g1, device_profile=H200) is None
    assert PlanCache(path).get(g2, device_profile=H200) is not None


def test_a_schema_1_file_is_upgraded_in_place_and_another_schema_is_refused_untouched(tmp_path):
    path = tmp_path / "c.sqlite"
    og = three_ways.graph_builder().build()
    key = PlanCache(path).put(og, _plan(og), device_profile=H200, time_us=4.0)
    _schema_1(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cache = PlanCache(path)
        assert cache.get(og, device_profile=H200) is not None and cache.entry(key).time_us == 4.0
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone() == ("2",)
        assert len(conn.execute("SELECT checksum FROM plans").fetchone()[0]) == 64
        conn.execute("UPDATE meta SET value = '3' WHERE name = 'schema_version'")  # a later release's file
        conn.commit()
    before = path.read_bytes()
    with pytest.warns(PlanCacheWarning, match=r"a plan cache of another cudnn-backend release \(schema '3'; this one "
                                              r"reads schema 2\); every lookup misses, and nothing is written to it"):
        assert PlanCache(path).get(og, device_profile=H200) is None
    assert path.read_bytes() == before


@pytest.mark.parametrize("alter, words", [("ALTER TABLE plans DROP COLUMN knobs", "lacks the column(s) knobs"),
                                          ("DROP TABLE plans", "is missing")])
def test_a_plan_cache_altered_since_it_was_written_says_so(tmp_path, alter, words):
    path = tmp_path / "c.sqlite"
    og = three_ways.graph_builder().build()
    PlanCache(path).put(og, _plan(og), device_profile=H200)
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute(alter)
        conn.commit()
    with pytest.warns(PlanCacheWarning, match=rf"a plan cache of schema 2 whose plans table {re.escape(words)} "
                                              r"\(altered since it was written\); every lookup misses"):
        assert PlanCache(path).get(og, device_profile=H200) is None


def test_put_stores_json_info_only(tmp_path):
    cache = PlanCache(tmp_path / "c.sqlite")
    og = three_ways.graph_builder().build()
    deep = {}
    for _ in range(100000):  # past the recursion limits of every Python (3.12's C encoder takes 5000)
        deep = {"d": deep}
    for info, words in (({"foo": object()}, "a object is not JSON"), ({"foo": {1, 2}}, "a set is not JSON"),
                        ({"foo": deep}, "RecursionError")):
        with pytest.raises(ValueError, match=rf"^info: not storable as JSON \(.*{words}"):
            cache.put(og, _plan(og), device_profile=H200, **info)
    assert len(cache) == 0
    import numpy as np
    key = cache.put(og, _plan(og), device_profile=H200, mode=cb.CUDNN_HEUR_MODE_A, ratio=np.float32(0.5))
    assert json.loads(sqlite3.connect(cache.path).execute("SELECT info FROM plans WHERE key = ?", (key,))
                      .fetchone()[0]) == {"mode": int(cb.CUDNN_HEUR_MODE_A), "ratio": 0.5}  # (an IntEnum is an int)


# ---------------------------------------------------------------------------------------------
# busy and read-only files
# ---------------------------------------------------------------------------------------------
def test_a_file_busy_at_first_use_is_tried_again_at_the_next_call(tmp_path):
    path = tmp_path / "c.sqlite"
    og = three_ways.graph_builder().build()
    PlanCache(path).put(og, _plan(og), device_profile=H200)
    cache = PlanCache(path, timeout=0.1)
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as other:
        other.execute("PRAGMA locking_mode=EXCLUSIVE")  # holds readers off too, even in WAL mode
        other.execute("BEGIN EXCLUSIVE")
        other.execute("DELETE FROM meta WHERE name = 'nothing'")
        with pytest.warns(PlanCacheWarning, match="busy in another process .*; a miss, tried again at the next call"):
            assert cache.get(og, device_profile=H200) is None
        other.execute("COMMIT")
    assert len(cache) == 1 and cache.get(og, device_profile=H200) is not None


def test_clear_and_remove_under_another_writers_lock_raise_naming_the_cache(tmp_path):
    path = tmp_path / "c.sqlite"
    og = three_ways.graph_builder().build()
    plan = _plan(og)
    cache = PlanCache(path, timeout=0.2)
    key = cache.put(og, plan, device_profile=H200)
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")
        for call in (cache.clear, lambda: cache.remove(key[:8])):
            with pytest.raises(PlanCacheError, match=re.escape(f"plan cache {str(path)!r}: could not ") +
                               r".*database is locked.*another process held its write lock for more than 0.2 s"):
                call()
        with pytest.warns(PlanCacheWarning, match="could not store the plan .*write lock"):
            assert cache.put(og, plan, device_profile=H200) == ""
        assert cache.get(og, device_profile=H200) is not None  # readers are not held off in WAL mode
        other.execute("ROLLBACK")
    assert cache.remove(key[:8]) and len(cache) == 0


OTHER_UID = 54321


def _as_a_user_who_cannot_write(folder, scenario):
    """``scenario()`` (JSON-able result) where files it makes read-only cannot be written: here when this process is
    not root, else in a forked child running as OTHER_UID (root writes any file), ``folder`` given to that user."""
    if os.geteuid() != 0:
        return scenario()
    os.chown(folder, OTHER_UID, OTHER_UID)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        try:
            os.close(read_end)
            os.setgid(OTHER_UID)
            os.setuid(OTHER_UID)
            result = {"value": scenario()}
        except BaseException:  # noqa: BLE001 - reported to the parent
            result = {"error": traceback.format_exc()}
        try:
            with os.fdopen(write_end, "w") as f:
                json.dump(result, f)
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as f:
        text = f.read()
    os.waitpid(pid, 0)
    result = json.loads(text)
    if "error" in result:
        pytest.fail(result["error"])
    return result["value"]


@posix_only
@pytest.mark.parametrize("read_only", ["file", "folder"])
def test_a_read_only_cache_is_served_read_only(read_only):
    og = three_ways.graph_builder().build()
    plan = _plan(og)
    folder = pathlib.Path(tempfile.mkdtemp())  # (the tests' own tmp_path is not reachable by another user)
    try:
        def scenario():
            path = folder / "cache" / "plans.sqlite"
            key = PlanCache(path).put(og, plan, device_profile=H200)
            os.chmod(path if read_only == "file" else path.parent, 0o400 if read_only == "file" else 0o500)
            before = sorted(p.name for p in path.parent.iterdir())
            cache = PlanCache(path)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                hit = cache.get(og, device_profile=H200)
                listed = [len(cache), [e.key for e in cache.entries()]]
                stored = [cache.put(og, plan, device_profile=H200), cache.put(og, plan, device_profile=H200)]
                try:
                    cache.clear()
                    cleared = "cleared"
                except PlanCacheError as e:
                    cleared = str(e)
            after = sorted(p.name for p in path.parent.iterdir())
            os.chmod(path.parent, 0o700)
            return dict(key=key, hit=hit is not None and hit.engine_index == plan.engine_index, listed=listed,
                        stored=stored, cleared=cleared, warnings=[str(w.message) for w in caught],
                        files_made=sorted(set(after) - set(before)))

        got = _as_a_user_who_cannot_write(folder, scenario)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert got["hit"] and got["listed"] == [1, [got["key"]]] and got["stored"] == ["", ""]
    assert len(got["warnings"]) == 1, got["warnings"]  # puts: warned once
    assert "read-only here (the file or its folder is not writable); lookups are served, nothing is stored" in \
        got["warnings"][0]
    assert "cannot clear it: it is read-only here" in got["cleared"]
    assert got["files_made"] == ([] if read_only == "folder" else got["files_made"])  # none in a read-only folder


def test_a_cache_whose_folder_cannot_be_made_warns_as_a_read_only_one(tmp_path, monkeypatch):
    # (root may make folders anywhere: the refusal a user without the right to gets, made here)
    made = pathlib.Path.mkdir

    def refused(self, *args, **kwargs):
        if self.name == "below":
            raise PermissionError(13, "Permission denied", str(self))
        return made(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "mkdir", refused)
    cache = PlanCache(tmp_path / "below" / "c.sqlite")
    og = three_ways.graph_builder().build()
    with pytest.warns(PlanCacheWarning, match=r"cannot create its folder \(.*Permission denied.*\); nothing is looked "
                                              r"up or stored"):
        assert cache.put(og, _plan(og), device_profile=H200) == ""
    assert cache.lookup(og, device_profile=H200) == (None, "")  # a miss, nothing made
    assert not (tmp_path / "below").exists()
    # a file where a folder of the path would be: the path is wrong, refused as before
    (tmp_path / "a_file").write_text("")
    with pytest.raises(PlanCacheError, match=r"a_file/sub/c.sqlite'.*cannot create its folder"):
        PlanCache(tmp_path / "a_file" / "sub" / "c.sqlite").put(og, _plan(og), device_profile=H200)


@posix_only
def test_a_cache_file_removed_under_an_open_object_is_made_again_privately(tmp_path, umask_022):
    path = tmp_path / "c.sqlite"
    og = three_ways.graph_builder().build()
    cache = PlanCache(path)
    key = cache.put(og, _plan(og), device_profile=H200)
    for p in tmp_path.iterdir():
        p.unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(cache) == 0 and cache.entry(key[:8]) is None and cache.clear() == 0
        assert cache.put(og, _plan(og), device_profile=H200) == key
    assert _mode(path) == 0o600 and len(cache) == 1


# ---------------------------------------------------------------------------------------------
# entries whose fields were edited: a miss or left out, with a note naming the entry and the field
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("column, value", [("engine_index", "abc"), ("cudnn_version", "abc"), ("sm_count", "many"),
                                           ("knobs", "{not json"), ("stored_at", 1e300), ("stored_at", "yesterday"),
                                           ("time_us", "fast"), ("info", "[1, 2]"),
                                           ("knobs", "[" * 100000 + "]" * 100000),
                                           ("info", "[" * 100000 + "]" * 100000),
                                           # listings print these to terminals: an escape sequence edited in
                                           ("device_name", "NVIDIA \x1b[2JH200"), ("info", '{"name": "a\\u001b[31m"}')])
def test_an_entry_with_a_field_that_does_not_read_never_raises(tmp_path, monkeypatch, column, value):
    path = tmp_path / "c.sqlite"
    og = three_ways.graph_builder().build()
    plan = _plan(og)
    cache = PlanCache(path)
    loaded = cb.get_version()
    monkeypatch.setattr(cache_module, "get_version", lambda: loaded - 100)  # another release's: what previous() reads
    key = cache.put(og, plan, device_profile=H200)
    monkeypatch.setattr(cache_module, "get_version", lambda: loaded)
    cache.put(og, plan, device_profile=H200)
    _edit(path, key, restamp=True, **{column: value})  # its checksum made again: the fields are checked on their own
    note = f"entry {key[:12]}: {column} {value!r}"[:40]
    with pytest.warns(PlanCacheWarning, match=re.escape(note) + ".* is not .*; left out of the listing"):
        assert [e.key for e in cache.entries()] != [] and all(e.key != key for e in cache.entries())
    if column not in ("sm_count", "device_name"):  # (no longer this device's: previous() does not select it)
        with pytest.warns(PlanCacheWarning, match=re.escape(note) + ".*; not tried"):
            assert cache.previous(og, device_profile=H200) is None
    with pytest.warns(PlanCacheWarning, match=re.escape(note) + ".*; not shown"):
        assert cache.entry(key) is None
    assert cache.remove(key) and len(cache) == 1  # a bad entry can still be removed


def test_info_with_a_control_character_is_refused_at_put(tmp_path):
    og = three_ways.graph_builder().build()
    cache = PlanCache(tmp_path / "c.sqlite")
    with pytest.raises(ValueError, match=re.escape("info.name: control character '\\x1b'; a plan cache's text holds none")):
        cache.put(og, _plan(og), device_profile=H200, name="conv\x1b[2J")
    with pytest.raises(ValueError, match=re.escape("info.tags[1]: control character '\\n'")):
        cache.put(og, _plan(og), device_profile=H200, tags=["a", "b\nc"])
    assert len(cache) == 0 and cache.put(og, _plan(og), device_profile=H200, name="conv é")


def test_a_device_of_an_empty_name_is_stored_and_found(tmp_path):
    props = json.loads(H200.deviceprop_json)
    props["deviceName"] = ""
    nameless = cb.DeviceProfile.from_json(json.dumps(props), H200.cudnn_version)
    og = three_ways.graph_builder().build()
    cache = PlanCache(tmp_path / "c.sqlite")
    key = cache.put(og, _plan(og, nameless), device_profile=nameless)
    assert key and cache.get(og, device_profile=nameless) is not None
    assert [e.device_name for e in cache.entries()] == [""]


def test_an_entry_of_bytes_that_are_no_utf8_leaves_out_that_entry_only(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = PlanCache(path)
    graphs = [three_ways.graph_builder(k=k).build() for k in (8, 16, 24)]
    keys = [cache.put(g, _plan(g), device_profile=H200) for g in graphs]
    with contextlib.closing(sqlite3.connect(path)) as conn:  # (sqlite stores the bytes as TEXT, as they are)
        conn.execute("UPDATE plans SET info = CAST(x'7b22a2ff' AS TEXT) WHERE key = ?", (keys[0],))
        conn.commit()
    with pytest.warns(PlanCacheWarning, match=re.escape(f"entry {keys[0][:12]}: info b'{{\"\\xa2\\xff' is not") +
                      ".*; left out of the listing"):
        assert sorted(e.key for e in cache.entries()) == sorted(keys[1:])
    assert len(cache) == 3 and cache.entry(keys[1]) is not None


def test_cache_list_shows_a_bad_entry_as_a_warning_line_never_a_traceback(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = PlanCache(path)
    graphs = [three_ways.graph_builder(k=k).build() for k in (8, 16, 24)]
    keys = [cache.put(g, _plan(g), device_profile=H200, time_us=1.5) for g in graphs]
    _edit(path, keys[0], stored_at=1e300)
    _edit(path, keys[1], time_us="fast")
    out = subprocess.run([sys.executable, "-m", "cudnn_backend", "cache", "list", "--cache", str(path)],
                         capture_output=True, text=True, timeout=300, env=dict(os.environ, COLUMNS="200"))
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert f"entry {keys[0][:12]}: stored_at 1e+300 is not a time" in out.stderr
    assert f"entry {keys[1][:12]}: time_us 'fast' is not a time in microseconds" in out.stderr
    assert keys[2][:12] in out.stdout and keys[0][:12] not in out.stdout and "1 entry" in out.stdout


# ---------------------------------------------------------------------------------------------
# paths and permissions
# ---------------------------------------------------------------------------------------------
@posix_only
@pytest.mark.parametrize("target", ["missing", "existing"])
def test_a_symlink_into_a_folder_others_may_write_is_refused(tmp_path, target):
    private, shared = tmp_path / "private", tmp_path / "shared"
    private.mkdir(mode=0o700)
    shared.mkdir()
    os.chmod(shared, 0o777)
    if target == "existing":
        (shared / "plans.sqlite").write_bytes(b"")
        os.chmod(shared / "plans.sqlite", 0o600)
    os.symlink(shared / "plans.sqlite", private / "plans.sqlite")
    with pytest.raises(PlanCacheError, match=re.escape(f"plan cache folder {str(shared)!r} is writable by others")):
        len(PlanCache(private / "plans.sqlite"))
    assert sorted(p.name for p in shared.iterdir()) == ([] if target == "missing" else ["plans.sqlite"])


@posix_only
def test_a_shared_system_folder_is_never_given_chmod_advice():
    shared = pathlib.Path(tempfile.gettempdir())
    if not os.stat(shared).st_mode & 0o002:
        pytest.skip(f"{shared} is not writable by everyone here")
    path = shared / f"plans-{os.getpid()}-never-made.sqlite"
    with pytest.raises(PlanCacheError) as e:
        len(PlanCache(path))
    text = str(e.value)
    assert f"folder {str(shared)!r}" in text and "chmod" not in text and "chown" not in text
    assert "mkdir -m 700" in text and str(cache_module.cache_dir()) in text
    assert os.geteuid() != os.stat(shared).st_uid or "is writable by others" in text
    assert not path.exists()


@posix_only
def test_a_device_file_is_named_as_not_a_regular_file(tmp_path):
    os.symlink("/dev/zero", tmp_path / "plans.sqlite")
    with pytest.raises(PlanCacheError, match=re.escape("plan cache file '/dev/zero' is a character device, not a "
                                                       "regular file")):
        PlanCache(tmp_path / "plans.sqlite").get(three_ways.graph_builder().build(), device_profile=H200)
    # named by the variable, the example another path (the variable may name this very one)
    monkeypatch = pytest.MonkeyPatch()
    with monkeypatch.context() as m:
        m.setenv("CUDNN_BACKEND_PLAN_CACHE", "/dev/zero")
        with pytest.raises(PlanCacheError, match=r"^plan cache file '/dev/zero' \(CUDNN_BACKEND_PLAN_CACHE\) is a "
                                                 r"character device, not a regular file: name a cache file \(such as "
                                                 r"'(?!/dev/zero).*plans\.sqlite'\)"):
            PlanCache().get(three_ways.graph_builder().build(), device_profile=H200)


# ---------------------------------------------------------------------------------------------
# arguments name themselves
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path, error, text", [
    ("a\0b.sqlite", ValueError, "path: a file path cannot hold a NUL character"),
    ("a\ud800b.sqlite", ValueError, "path: 'a\\ud800b.sqlite' is no file name this system can encode"),
    (42, TypeError, "path: expected a file path (str, bytes or os.PathLike), not int"),
    ("", ValueError, "path: an empty path; name a cache file"),
])
def test_a_bad_path_is_refused_naming_it(path, error, text):
    with pytest.raises(error, match=re.escape(text)):
        PlanCache(path)


def test_a_path_as_bytes_is_taken(tmp_path):
    assert PlanCache(os.fsencode(tmp_path / "c.sqlite")).path == tmp_path / "c.sqlite"


@pytest.mark.parametrize("timeout, error", [("x", TypeError), (None, TypeError), (True, TypeError),
                                            (float("nan"), ValueError), (float("inf"), ValueError),
                                            (-1, ValueError), (1e300, ValueError)])
def test_a_bad_timeout_is_refused_naming_it_and_the_range(tmp_path, timeout, error):
    with pytest.raises(error, match=r"^timeout: .*0 to 3600"):
        PlanCache(tmp_path / "c.sqlite", timeout=timeout)


@pytest.mark.parametrize("time_us, error", [("x", TypeError), (float("nan"), ValueError), (-1.0, ValueError)])
def test_a_bad_time_us_is_refused_naming_it(tmp_path, time_us, error):
    cache = PlanCache(tmp_path / "c.sqlite")
    og = three_ways.graph_builder().build()
    with pytest.raises(error, match=r"^time_us: "):
        cache.put(og, _plan(og), device_profile=H200, time_us=time_us)
    assert len(cache) == 0


def test_key_text_is_matched_literally_as_a_prefix(tmp_path):
    cache = PlanCache(tmp_path / "c.sqlite")
    keys = []
    for k in (8, 16):
        og = three_ways.graph_builder(k=k).build()
        keys.append(cache.put(og, _plan(og), device_profile=H200))
    for wildcard in ("%", "_", keys[0][:4] + "%", "_" + keys[0][1:]):
        assert cache.entry(wildcard) is None and cache.plan_json(wildcard) is None
        assert cache.remove(wildcard) is False
    assert len(cache) == 2
    assert cache.entry(keys[0][:10]).key == keys[0] and cache.entry(keys[1][:10].upper()).key == keys[1]
    assert cache.remove(keys[0][:10]) and [e.key for e in cache.entries()] == [keys[1]]


def test_the_cache_argument_of_a_search_names_itself(tmp_path):
    with pytest.raises(ValueError, match=r"^cache: a file path cannot hold a NUL character"):
        PlanCache.of("a\0b")
    with pytest.raises(TypeError, match=r"^cache: expected a PlanCache, a cache file path, True \(the default cache\) "
                                        r"or None, not int"):
        PlanCache.of(42)
    with pytest.raises(ValueError, match=r"^--cache: an empty path"):
        PlanCache.of("", "--cache")
    cache = PlanCache(tmp_path / "c.sqlite")
    assert PlanCache.of(cache) is cache and PlanCache.of(None) is None and PlanCache.of(False) is None
    assert PlanCache.of(tmp_path / "d.sqlite").path == tmp_path / "d.sqlite"


@pytest.mark.parametrize("cache, error", [("a\0b", ValueError), (42, TypeError)])
def test_autotune_names_a_bad_cache_argument(cache, error):
    with pytest.raises(error, match=r"^cache: "):
        cb.autotune("conv_fwd", kwargs=dict(n=1, c=8, h=8, w=8, k=8), device_profile="h200", cache=cache)


def test_reading_a_cache_that_does_not_exist_creates_nothing(tmp_path):
    path = tmp_path / "a" / "b" / "plans.sqlite"
    cache = PlanCache(path)
    og = three_ways.graph_builder().build()
    assert len(cache) == 0 and cache.entries() == [] and cache.get(og, device_profile=H200) is None
    assert not (tmp_path / "a").exists()
    assert cache.put(og, _plan(og)) and path.exists()  # the first write makes it


def test_a_cache_path_the_file_system_cannot_reach_is_a_plan_cache_error_naming_it(tmp_path):
    # pathlib's is_dir() lets other errors than "not found" through (a name too long, a folder not searchable)
    cache = PlanCache(tmp_path / ("x" * 300) / "plans.sqlite")
    with pytest.raises(PlanCacheError, match=r"^plan cache '.*/x{300}/plans.sqlite': cannot reach it \(File name "
                                             r"too long\)$"):
        len(cache)


@pytest.mark.skipif(not loaded_has("9.23.0"), reason="needs override shapes (cuDNN 9.23)")
def test_a_graph_built_with_override_shapes_has_a_key_of_its_own(tmp_path):
    # its plans are refused for the same graph built without (and back): one key for both made them thrash
    def matmul():
        g = cb.Graph("m")
        g.matmul(g.tensor([2, 16, 16]), g.tensor([2, 16, 16]), output=True)
        return g

    plain, override = matmul().build(), matmul().build(override_shapes=True)
    assert graph_fingerprint(plain) != graph_fingerprint(override)
    assert graph_fingerprint(plain) == graph_fingerprint(matmul().build())


def test_a_blank_plan_cache_variable_names_no_file(monkeypatch):
    monkeypatch.setenv("CUDNN_BACKEND_PLAN_CACHE", " \t")
    with pytest.raises(ValueError, match=r"^\$CUDNN_BACKEND_PLAN_CACHE is blank; name a file, or unset it"):
        PlanCache()
