"""The files a user names are read with a bound: a device file that never ends, a file far larger than its kind,
bytes that are no UTF-8 text and paths the file system cannot take are refused in one line naming the parameter."""
import os
import pathlib
import subprocess
import sys
import threading
import time

import pytest

from cudnn_backend.core import files
from cudnn_backend.core.files import file_path, read_bounded, read_bounded_text, read_limited
from cudnn_backend.tune import support, sweeps

from tests.helpers.env import ROOT


def test_read_limited_stops_one_past_the_bound(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"x" * 10)
    assert read_limited(f, 10) == b"x" * 10
    assert read_limited(f, 9) is None
    if pathlib.Path("/dev/zero").exists():
        assert read_limited(pathlib.Path("/dev/zero"), 1000) is None


def test_refusals_name_the_parameter(tmp_path):
    f = tmp_path / "big"
    f.write_bytes(b"{}" * 100)
    with pytest.raises(ValueError, match=r"^matrix: '.*big' holds more than 100 bytes; a matrix is small$"):
        read_bounded(f, 100, "matrix", "a matrix is small")
    with pytest.raises(ValueError, match=r"^plan: cannot read '.*missing': No such file or directory$"):
        read_bounded(tmp_path / "missing", 100, "plan")
    with pytest.raises(ValueError, match=r"^plan: cannot read '.*': Is a directory$"):
        read_bounded(tmp_path, 100, "plan")
    f.write_bytes(b"\xef\xbb\xbf{\"a\": 1}")  # a byte-order mark is dropped
    assert read_bounded_text(f, 100, "plan") == '{"a": 1}'
    f.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ValueError, match=r"^plan: '.*big' is not UTF-8 text \(byte 7: invalid start byte\)$"):
        read_bounded_text(f, 100, "plan")
    with pytest.raises(ValueError, match="^plan: a file path cannot hold a NUL character$"):
        read_bounded("a\0b", 100, "plan")
    with pytest.raises(TypeError, match="^plan: expected a file path"):
        file_path(3, "plan")


def test_support_matrices_and_task_files_are_read_with_their_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(support, "MAX_MATRIX_FILE_BYTES", 64)
    monkeypatch.setattr(sweeps, "MAX_TASKS_FILE_BYTES", 64)
    big = tmp_path / "big"
    big.write_text("#" * 65)
    with pytest.raises(ValueError, match=r"^matrix: '.*big' holds more than 64 bytes"):
        support.SupportMatrix.load(big)
    with pytest.raises(ValueError, match=r"^tasks: '.*big' holds more than 64 bytes"):
        sweeps.tasks_from_file(big)
    if pathlib.Path("/dev/zero").exists():
        with pytest.raises(ValueError, match="holds more than 64 bytes"):
            support.SupportMatrix.load("/dev/zero")
    small = tmp_path / "tasks.txt"
    small.write_text("conv_fwd n=1 c=8\n# a comment\n\nmatmul m=4\n")
    assert [(t.builder, t.kwargs) for t in sweeps.tasks_from_file(small)] == [("conv_fwd", {"n": 1, "c": 8}),
                                                                                ("matmul", {"m": 4})]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_without_a_writer_is_refused_after_a_bounded_wait(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "PIPE_WAIT_SECONDS", 0.2)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"^matrix: cannot read '.*pipe': no writer wrote to the named pipe within "
                                         r"0.2 s$"):
        support.SupportMatrix.load(fifo)  # a plain open() would wait for a writer, for ever
    assert time.monotonic() - start < 5


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_whose_writer_comes_late_is_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "PIPE_WAIT_SECONDS", 20.0)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def write(data, delay):
        time.sleep(delay)
        with open(fifo, "wb") as w:  # (blocks until the reader has opened the pipe)
            for i in range(0, len(data), 7):
                w.write(data[i:i + 7])
                w.flush()

    for data in (b'{"a": [1, 2, 3]}' * 20, b""):  # some bytes; a writer that comes and goes: empty
        writer = threading.Thread(target=write, args=(data, 0.3))
        writer.start()
        try:
            assert read_limited(fifo, 10_000) == data
        finally:
            writer.join()


def test_write_whole_replaces_a_file_whole_and_names_the_path_it_could_not_write(tmp_path):
    f = tmp_path / "out.json"
    assert files.write_whole(f, "first\n") == f
    os.chmod(f, 0o640)
    files.write_whole(f, "second\n")
    assert f.read_text() == "second\n"
    assert f.stat().st_mode & 0o777 == 0o640  # an existing file's mode is kept
    link = tmp_path / "link.json"
    link.symlink_to(f)
    files.write_whole(link, "third\n")
    assert link.is_symlink() and f.read_text() == "third\n"  # the file a link names is written, the link kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "out.json"]  # no temporary file left
    with pytest.raises(FileNotFoundError, match=r"No such file or directory: '.*missing/x.json'$"):
        files.write_whole(tmp_path / "missing" / "x.json", "x")
    if pathlib.Path("/dev/full").exists():
        with pytest.raises(OSError, match=r"No space left on device: '/dev/full'$"):
            files.write_whole("/dev/full", "x" * 100000)
    with pytest.raises(ValueError, match="^json: a file path cannot hold a NUL character$"):
        files.write_whole("a\0b", "x", "json")


def test_a_write_that_fails_leaves_the_file_that_was_there(tmp_path, monkeypatch):
    f = tmp_path / "plan.json"
    f.write_text("old")
    real_fdopen = os.fdopen

    def failing_fdopen(fd, *args, **kwargs):
        handle = real_fdopen(fd, *args, **kwargs)
        handle.write = lambda text: (_ for _ in ()).throw(OSError(28, "No space left on device"))
        return handle

    monkeypatch.setattr(files.os, "fdopen", failing_fdopen)
    with pytest.raises(OSError, match=r"No space left on device: '.*plan.json'$"):
        files.write_whole(f, "new")
    assert f.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["plan.json"]


def test_write_csv_heads_every_key_in_first_order(tmp_path):
    f = files.write_csv(tmp_path / "rows.csv", [{"a": 1}, {"b": 2, "a": 3}])
    assert f.read_text().splitlines() == ["a,b", "1,", "3,2"]
    assert files.write_csv(tmp_path / "none.csv", []).read_text().splitlines() == ["graph"]


def test_write_whole_writes_a_process_stream_through_it(tmp_path):
    # /dev/stdout leads to the shell's pipe or file: replacing what it leads to would cut the stream off
    code = ("import sys; from cudnn_backend.core.files import write_whole; print('before', flush=True); "
            "write_whole('/dev/stdout', 'through\\n'); print('after', flush=True)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["before", "through", "after"]
