"""The files a user names: their paths checked, and read with a bound.

One rule for every reader of a user's file (device profiles, saved plans, errata, support matrices, the command
line's inputs): a path the file system cannot take is refused naming the parameter, and no read goes past a bound,
so that a device file such as /dev/zero, or a file far larger than the kind ever is, is refused rather than read
until memory runs out.
"""
from __future__ import annotations

import contextlib
import csv
import io
import errno
import os
import pathlib
import secrets
import select
import stat

__all__ = ["file_path", "environment_path", "read_limited", "read_bounded",
           "read_bounded_text", "json_text", "write_whole", "write_csv"]


def file_path(path, what="path") -> pathlib.Path:
    """A file path from a str, bytes or os.PathLike: TypeError/ValueError naming ``what`` for anything the file
    system cannot take (a lone surrogate, a NUL character), rather than UnicodeEncodeError from deep inside open()."""
    try:
        raw = os.fspath(path)
    except TypeError:
        raise TypeError(f"{what}: expected a file path (str, bytes or os.PathLike), not {type(path).__name__}") from None
    if isinstance(raw, bytes):
        raw = os.fsdecode(raw)
    try:
        os.fsencode(raw)
    except UnicodeEncodeError as e:
        raise ValueError(f"{what}: {raw!r} is no file name this system can encode ({e.reason})") from None
    if "\0" in raw:
        raise ValueError(f"{what}: a file path cannot hold a NUL character")
    if not raw:  # pathlib would read it as the current folder
        raise ValueError(f"{what}: an empty path; name a file")
    return pathlib.Path(raw)


def environment_path(name) -> pathlib.Path | None:
    """The file the environment variable ``name`` names (None where it is unset or empty); one of blanks alone is
    refused naming it (a file named by spaces is never meant), as is any path ``file_path`` refuses."""
    value = os.environ.get(name)
    if not value:
        return None
    if not value.strip():
        raise ValueError(f"${name} is blank; name a file, or unset it")
    return file_path(value, f"${name}")


PIPE_WAIT_SECONDS = 30.0  # how long a named pipe may stay without data (no writer yet) before it is refused


def _wait_for_pipe(fd: int, path) -> None:
    """For a named pipe opened without waiting: wait (bounded) until a writer has written or come and gone; a pipe
    still silent after PIPE_WAIT_SECONDS raises TimeoutError (an OSError) rather than hang or read as empty."""
    if not hasattr(select, "poll") or not stat.S_ISFIFO(os.fstat(fd).st_mode):
        return
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    if not poller.poll(int(PIPE_WAIT_SECONDS * 1000)):  # (Linux: no POLLHUP before a first writer has come)
        raise TimeoutError(errno.ETIMEDOUT, f"no writer wrote to the named pipe within {PIPE_WAIT_SECONDS:g} s")


def read_limited(path: pathlib.Path, limit: int) -> bytes | None:
    """The bytes of ``path``, or None where it holds more than ``limit`` (read up to one past it: a device file such
    as /dev/zero, whose size says 0, never ends). A named pipe is opened without blocking (a plain open waits for a
    writer, for ever if none comes), then read once a writer has written, refused after ``PIPE_WAIT_SECONDS`` without
    one. OSError as open and read raise it."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        _wait_for_pipe(fd, path)
        os.set_blocking(fd, True)  # reads wait for a writer's data to its end
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        raw = f.read(limit + 1)
    return None if len(raw) > limit else raw


def read_bounded(path, limit: int, what: str = "path", usual: str = "") -> bytes:
    """The bytes of the file ``path``: ValueError naming ``what`` where it cannot be read, or holds more than
    ``limit`` bytes (``usual``: what a file of its kind holds, said then)."""
    p = file_path(path, what)
    try:
        raw = read_limited(p, limit)
    except OSError as e:
        raise ValueError(f"{what}: cannot read {str(p)!r}: {e.strerror or e}") from None
    if raw is None:
        raise ValueError(f"{what}: {str(p)!r} holds more than {limit:,} bytes" + (f"; {usual}" if usual else ""))
    return raw


def read_bounded_text(path, limit: int, what: str = "path", usual: str = "") -> str:
    """``read_bounded``'s bytes as UTF-8 text (a byte-order mark dropped); ValueError naming ``what`` for other
    bytes."""
    raw = read_bounded(path, limit, what, usual)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"{what}: {str(path)!r} is not UTF-8 text (byte {e.start}: {e.reason})") from None


def json_text(value, what: str, document: str) -> str:
    """JSON text given as ``str`` or bytes (``document``: what it holds, for messages) as ``str``, a byte-order mark
    (as some editors save) dropped: ValueError naming ``what`` for bytes that are not UTF-8, TypeError for other
    types."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        try:
            return bytes(value).decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise ValueError(f"{what}: the {document} is not UTF-8 text ({e.reason} at byte {e.start})") from None
    if not isinstance(value, str):
        raise TypeError(f"{what}: expected the {document} (str or bytes), not {type(value).__name__}")
    return value.removeprefix("\ufeff")


@contextlib.contextmanager
def _output_open(path):
    """Around writing the output ``path``: an output that opening for writing would wait on for ever (a named pipe
    no process reads: a plain open blocks until one does) is refused (OSError naming the path). For a named pipe
    with a reader (a shell's pipe), this holds a writing end open meanwhile, so that the reader does not take its
    closing for the end of the output before the writer opens it. Anything else is the write's to report on."""
    fd = None
    try:
        is_pipe = stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        is_pipe = False  # no file yet (or none reachable): the write says so
    if is_pipe:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            if e.errno == errno.ENXIO:
                raise OSError(errno.ENXIO, "it is a named pipe that no process reads (writing would wait for ever)",
                              str(path)) from None
            raise
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)


_STREAM_FOLDERS = ("/dev/", "/proc/")  # /dev/stdout, /dev/fd/N, /proc/self/fd/N: a process's own streams


def _replaced_file(p: pathlib.Path) -> pathlib.Path | None:
    """The regular file ``write_whole`` replaces for the path ``p`` (a link's target; ``p`` itself when it does not
    exist yet), or None where it writes through ``p`` instead: a device file, a pipe, a process's stream
    (/dev/stdout is a link to /proc/self/fd/1: replacing the file it leads to would cut the shell's stream off), or a
    file whose folder this user may not write (nothing can be put beside it) but the file itself is writable."""
    try:
        st = os.stat(p)  # (follows links)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        return None
    absolute = os.path.abspath(p)
    if absolute.startswith(_STREAM_FOLDERS) or (p.is_symlink() and os.path.join(
            os.path.dirname(absolute), os.readlink(p)).startswith(_STREAM_FOLDERS)):
        return None
    target = pathlib.Path(os.path.realpath(p))
    if st is not None and not os.access(target.parent, os.W_OK | os.X_OK) and os.access(target, os.W_OK):
        return None
    return target


def write_whole(path, text: str, what: str = "path") -> pathlib.Path:
    """Write ``text`` as UTF-8 to the file ``path``, whole or not at all; returns the path. A regular file (or a new
    one) is written beside it, synced and moved into place (keeping an existing file's mode, and a link as a link),
    so that a write that fails, a full disk or an interrupt, leaves what was there and no partial file; a file this
    user may not write is refused as open() refuses it. A device file, a pipe or a process's stream (/dev/null,
    /dev/stdout, a shell's pipe) is written directly (``_replaced_file``). An OSError names the path."""
    p = file_path(path, what)
    target = None
    try:
        target = _replaced_file(p)
        with _output_open(p):
            if target is None:
                with open(p, "w", encoding="utf-8") as f:
                    f.write(text)
                return p
            mode = None
            if target.exists():
                if not os.access(target, os.W_OK):
                    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(p))
                mode = stat.S_IMODE(target.stat().st_mode)
            tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask's mode, as open() gives
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(text)
                    f.flush()
                    os.fsync(f.fileno())
                if mode is not None:
                    os.chmod(tmp, mode)
                os.replace(tmp, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
    except OSError as e:
        if e.filename != str(p):  # (the temporary file's, or the link target's, name: the user named p)
            raise type(e)(e.errno, e.strerror or str(e), str(p)) from None
        raise
    return p


def write_csv(path, rows, what: str = "path", empty_header=("graph",)) -> pathlib.Path:
    """``rows`` (dicts) as CSV, written whole (``write_whole``): a header of every key in the order the rows first
    give it (``empty_header`` where there are no rows), then a line per row."""
    rows = list(rows)
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=list(dict.fromkeys(k for r in rows for k in r)) or list(empty_header))
    writer.writeheader()
    writer.writerows(rows)
    return write_whole(path, out.getvalue(), what)
