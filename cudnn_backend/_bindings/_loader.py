"""Finds and loads libcudnn.so.9 once, on first use (never unloaded).

Order of search: the path in ``CUDNN_BACKEND_LIBCUDNN`` if set, else cuda-pathfinder's
``load_nvidia_dynamic_lib("cudnn")`` (pip wheels nvidia-cudnn-cu12/-cu13, conda, system installs).

cuDNN's engine sub-libraries link the CUDA driver (``libcuda.so.1``). When no driver can be
loaded, the package's no-device stand-in (``cudnn_backend/_nodevice``) is loaded first, globally,
so cuDNN can still build and finalize descriptors, run heuristics and build plans against a
device profile on a machine without a GPU. ``CUDNN_BACKEND_NODEVICE=1`` forces the stand-in,
``=0`` forbids it.
"""
from __future__ import annotations

import ctypes
import os
import pathlib
import stat
import threading
from dataclasses import dataclass

from cudnn_backend.errors import CudnnLibraryNotFoundError

try:
    from cuda.pathfinder import load_nvidia_dynamic_lib
except ImportError as _e:  # pragma: no cover - a dependency of the package
    load_nvidia_dynamic_lib = None
    _PATHFINDER_ERROR = str(_e)

LOCK = threading.RLock()
ENV_LIBCUDNN = "CUDNN_BACKEND_LIBCUDNN"
ENV_NODEVICE = "CUDNN_BACKEND_NODEVICE"
NODEVICE_DIR = pathlib.Path(__file__).resolve().parent.parent / "_nodevice"
# dlopen names under which cuDNN (and its NVRTC-based engines) open the driver.
DRIVER_SONAMES = ("libcuda.so.1", "libcuda.so")
# where the cuDNN wheels' RUNPATH finds the CUDA libraries it dlopens, relative to libcudnn's folder (cu12 wheels:
# one package per library; cu13: nvidia/cu13/lib)
_WHEEL_NEIGHBOURS = {"cublasLt": ("../../cublas/lib", "../../cu13/lib"),
                     "nvrtc": ("../../cuda_nvrtc/lib", "../../cu13/lib")}


@dataclass(frozen=True)
class LoadedCudnn:
    path: str
    handle: int
    found_via: str
    version: int
    driver: str  # "cuda" (a real driver), "stand-in" (no device) or "none"
    nvrtc: str | None

    @property
    def version_string(self) -> str:
        """The version as "MAJOR.MINOR.PATCH"."""
        return format_version(self.version)


_loaded: LoadedCudnn | None = None
_driver: str | None = None
_driver_lib: ctypes.CDLL | None = None  # the driver (or stand-in) loaded, for the few entry points the package calls


def format_version(v: int) -> str:
    """cudnnGetVersion's MAJOR*10000 + MINOR*100 + PATCH as 'MAJOR.MINOR.PATCH' (the one formatter;
    ``core.versions`` parses); cuDNN 8 and older counted MAJOR*1000 + MINOR*100 + PATCH (8907 is 8.9.7)."""
    if v < 10000:
        return f"{v // 1000}.{v % 1000 // 100}.{v % 100}"
    return f"{v // 10000}.{v % 10000 // 100}.{v % 100}"


def _stand_in_paths() -> list[pathlib.Path]:
    return [NODEVICE_DIR / name for name in DRIVER_SONAMES]


def ensure_driver() -> str:
    """Load the real CUDA driver globally, or else the no-device stand-in. Returns which."""
    global _driver, _driver_lib
    with LOCK:
        if _driver is not None:
            return _driver
        mode = os.environ.get(ENV_NODEVICE, "")
        if mode not in ("", "0", "1"):
            raise ValueError(f"${ENV_NODEVICE}={mode!r}: expected 1 (cuDNN on the package's no-device stand-in, GPU "
                             "or not), 0 (never on it) or nothing (on it where no CUDA driver is)")
        if mode != "1":
            try:
                _driver_lib = ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
                _driver = "cuda"
                return _driver
            except OSError:
                if mode == "0":
                    _driver = "none"
                    return _driver
        missing = [str(p) for p in _stand_in_paths() if not p.exists()]
        if missing:
            _driver = "none"  # not built (e.g. a source checkout without build_ext); cuDNN will say why
            return _driver
        for p in _stand_in_paths():
            lib = ctypes.CDLL(str(p), mode=ctypes.RTLD_GLOBAL)
            _driver_lib = _driver_lib or lib
        _driver = "stand-in"
        return _driver


def driver_symbol(name: str) -> int:
    """The address of the loaded driver's (or its stand-in's) entry point ``name``, 0 when there is none (no
    driver, or a driver without it): for the few driver calls the package makes itself, resolved once by the
    caller (``Handle``'s context)."""
    ensure_driver()
    if _driver_lib is None:
        return 0
    try:
        return ctypes.cast(getattr(_driver_lib, name), ctypes.c_void_p).value or 0
    except AttributeError:
        return 0


def _preload(libname: str) -> str | None:
    """Load a CUDA library cuDNN opens by name (found through its RUNPATH only in the wheel layout): cuda-pathfinder's
    pick, whatever CUDA major it is.

    NVRTC: without it runtime-compiled engines vanish. cublasLt: a cuDNN outside the wheel layout
    that cannot find it aborts the process at the first heuristics query.
    """
    if load_nvidia_dynamic_lib is None:
        return None
    try:
        return load_nvidia_dynamic_lib(libname).abs_path
    except Exception:  # absent, cuDNN reports what it misses itself
        return None


def _cuda_major(lib) -> int | None:
    """The CUDA major a cuDNN was built for (cudnnGetCudartVersion: 12090 -> 12)."""
    try:
        get = lib.cudnnGetCudartVersion
    except AttributeError:  # pragma: no cover - every cuDNN 9 has it
        return None
    get.restype = ctypes.c_size_t
    return int(get()) // 1000 or None


def _load_for_major(libname: str, major: int, cudnn_dir: str, picked: str | None) -> str | None:
    """Load lib<libname>.so.<major>, the one cuDNN dlopens by that name: from the wheel layout next to cuDNN
    (where its RUNPATH looks), cuda-pathfinder's pick if it is that major, or the library search path."""
    soname = f"lib{libname}.so.{major}"
    candidates = [os.path.join(cudnn_dir, rel, soname) for rel in _WHEEL_NEIGHBOURS[libname]]
    if picked and os.path.basename(picked) == soname:
        candidates.append(picked)
    for candidate in candidates + [soname]:
        if os.sep in candidate and not os.path.exists(candidate):
            continue
        try:
            ctypes.CDLL(candidate, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            continue
        return os.path.realpath(candidate) if os.sep in candidate else candidate
    return None


def _not_a_file(path) -> str | None:
    """What ``path`` is when it exists and is no regular file (links followed): "a named pipe", ...; else None (a
    file, or a name the dynamic loader searches for)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return None
    for test, kind in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "no regular file"


def load_cudnn() -> LoadedCudnn:
    """Find and load libcudnn.so.9 once (and the driver or its stand-in, NVRTC, cublasLt); later calls return
    the same ``LoadedCudnn``."""
    global _loaded
    with LOCK:
        if _loaded is not None:
            return _loaded
        driver = ensure_driver()
        picked = {name: _preload(name) for name in _WHEEL_NEIGHBOURS}
        forced = os.environ.get(ENV_LIBCUDNN)
        if forced:
            path, found_via = forced, f"${ENV_LIBCUDNN}"
        else:
            if load_nvidia_dynamic_lib is None:  # pragma: no cover - a dependency of the package
                raise CudnnLibraryNotFoundError(f"cuda-pathfinder is not importable ({_PATHFINDER_ERROR})")
            try:
                found = load_nvidia_dynamic_lib("cudnn")
            except Exception as e:
                raise CudnnLibraryNotFoundError(f"cuda-pathfinder: {e}") from e
            path, found_via = found.abs_path, f"cuda-pathfinder ({found.found_via})"
        named = f"{path!r} (${ENV_LIBCUDNN})" if forced else repr(path)  # the variable at fault, where it is
        if forced and not forced.strip():
            raise CudnnLibraryNotFoundError(f"${ENV_LIBCUDNN} is set but empty; unset it, or name a libcudnn.so.9.")
        kind = _not_a_file(path)
        if kind is not None:  # (dlopen would block on a named pipe for ever, or read a device)
            raise CudnnLibraryNotFoundError(f"{named} is {kind}, not a library file; name a libcudnn.so.9.")
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            raise CudnnLibraryNotFoundError(f"{named}: {str(e).removeprefix(f'{path}: ')}.") from e
        try:
            get_version = lib.cudnnGetVersion
        except AttributeError:  # another library: none of cuDNN's functions may be called in it
            raise CudnnLibraryNotFoundError(f"{named} is not cuDNN: it has no function cudnnGetVersion.") from None
        get_version.restype = ctypes.c_size_t
        version = int(get_version())
        if version < 90000:
            raise CudnnLibraryNotFoundError(f"{named} is cuDNN {format_version(version)}; cudnn-backend needs cuDNN "
                                            ">= 9.0.")
        nvrtc = picked["nvrtc"]
        major = _cuda_major(lib)
        if major is not None:
            # cuDNN dlopens libcublasLt.so.<major> and libnvrtc.so.<major>, which need not be the CUDA major of the
            # libraries beside the package (a cu12 cuDNN chosen with $CUDNN_BACKEND_LIBCUDNN in a cu13 environment)
            folder = os.path.dirname(os.path.realpath(path))
            nvrtc = _load_for_major("nvrtc", major, folder, picked["nvrtc"])  # absent: runtime-compiled engines vanish
            if _load_for_major("cublasLt", major, folder, picked["cublasLt"]) is None:
                # without it cuDNN aborts the process at the first heuristics query (9.28.0: "Cannot load symbol
                # cublasLtGetVersion")
                raise CudnnLibraryNotFoundError(
                    f"{path} is cuDNN {format_version(version)} for CUDA {major}, and libcublasLt.so.{major}, which it "
                    f"loads, is neither beside it (the wheel layout) nor on the library search path. Install it: "
                    f"`pip install nvidia-cublas-cu{major}` (with `pip install --target DIR`, into the same DIR), or "
                    "add its folder to LD_LIBRARY_PATH")
        _loaded = LoadedCudnn(path=path, handle=lib._handle, found_via=found_via, version=version, driver=driver,
                              nvrtc=nvrtc)
        return _loaded


ENV_CARRIED = "CUDNN_CARRY_DEST"  # where tools/carry_cudnn.sh unpacks releases on a machine: <dest>/<release>/lib


def release_library(spec) -> str | None:
    """The libcudnn.so.9 a release ``spec`` names, for running another release beside the loaded one (each in its
    own process, ``CUDNN_BACKEND_LIBCUDNN``): None for "default" (the one this environment loads); a file; a
    folder holding it (itself, ``lib/`` or ``nvidia/cudnn/lib/``); or a release "MAJOR.MINOR.PATCH" that
    tools/carry_cudnn.sh unpacked on this machine (``$CUDNN_CARRY_DEST`` or /tmp/cudnn) or installed in the
    package's cache (``~/.cache/cudnn-backend/releases/cu13-9.28.1``). ValueError names what was looked for."""
    text = os.fspath(spec) if isinstance(spec, os.PathLike) else spec
    if not isinstance(text, str) or not text:
        raise TypeError(f"release: expected a libcudnn.so.9 path, a folder, a release (e.g. 9.28.1) or 'default', "
                        f"not {spec!r}")
    if text in ("default", "system"):
        return None
    path = pathlib.Path(text).expanduser()
    folders = [path] if path.is_dir() else []
    if path.is_file():
        return _shared_library(path, spec)
    if not folders:
        parts = text.split(".")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise ValueError(f"release: {text!r} is neither a file, a folder nor a release (MAJOR.MINOR.PATCH, e.g. "
                             "9.28.1)")
        cache = pathlib.Path(os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache")
        folders = [pathlib.Path(os.environ.get(ENV_CARRIED) or "/tmp/cudnn") / text] + \
            [cache / "cudnn-backend" / "releases" / f"{cuda}-{text}" for cuda in ("cu13", "cu12")]
    candidates = [f / sub / "libcudnn.so.9" for f in folders for sub in ("", "lib", "nvidia/cudnn/lib")]
    found = next((c for c in candidates if c.is_file()), None)
    if found is None and _loaded is not None and _loaded.version_string == text:
        return _loaded.path  # the release this process loaded (pip's, or $CUDNN_BACKEND_LIBCUDNN's) is that one
    if found is None:
        raise ValueError(f"release: no libcudnn.so.9 for {text!r} in {', '.join(str(f) for f in folders)} (carry or "
                         "install one: `bash tools/carry_cudnn.sh pack 9.28.1`, or `pip install --target DIR "
                         "nvidia-cudnn-cu13==9.28.1.*` and give DIR)")
    return _shared_library(found, spec)


def _shared_library(path, spec) -> str:
    """``path`` resolved, once it reads as an ELF file: another kind of file would fail only in the child process
    that loads it, named by its environment variable."""
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise ValueError(f"release: cannot read {spec!r}: {e.strerror or e}") from None
    if magic != b"\x7fELF":
        raise ValueError(f"release: {spec!r} is no shared library (a libcudnn.so.9 file, a folder holding one, a "
                         "release such as 9.28.1, or default)")
    return str(pathlib.Path(path).resolve())


def loaded() -> LoadedCudnn | None:
    """The loaded cuDNN, or None if nothing has needed it yet."""
    return _loaded


def loaded_version_string() -> str:
    """The loaded cuDNN's version as "MAJOR.MINOR.PATCH"."""
    return load_cudnn().version_string
