"""Downstream Cython code can ``cimport`` cudnn_backend's raw declarations.

Compiles small downstream modules (tests/helpers/cimport_data) in a temporary folder, each in its own
subprocess and all at once, then imports and runs them in a subprocess:

* ``downstream_basic``: ``from cudnn_backend._bindings.cycudnn cimport *``, calls cuDNN with
  ``nogil`` through the .pxd and uses enumerants newer than the installed cuDNN 9.19 as
  compile-time constants; built without (``downstream_basic``) and with
  (``downstream_basic_cudart``) the CUDA runtime headers on the include path, since
  cudnn_backend_graph.h takes its CUDA types from <cuda_runtime_api.h> when it can find it.
* ``downstream_vendor_first`` / ``downstream_ours_first``: the vendor's cudnn.h and the .pxd in one
  module, in both include orders (checked in the generated C). cudnn.h needs the CUDA runtime
  headers, taken from the pip wheels (nvidia-cuda-runtime + nvidia-cuda-crt for CUDA 13,
  nvidia-cuda-runtime-cu12 for CUDA 12), never from a local CUDA toolkit.

Also checks that the .pxd files are shipped and declare all of cudnn_graph.h.
"""
import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field

import pytest

import cudnn_backend
from cudnn_backend._bindings import enums

DATA = pathlib.Path(__file__).resolve().parent.parent / "helpers" / "cimport_data"
BUILD_TIMEOUT_S = 240

# The functions of cudnn_graph.h 9.28 (the header the declarations are generated from).
GRAPH_FUNCTIONS = (
    "cudnnGetVersion",
    "cudnnGetMaxDeviceVersion",
    "cudnnGetCudartVersion",
    "cudnnGetErrorString",
    "cudnnGetLastErrorString",
    "cudnnQueryRuntimeError",
    "cudnnGetProperty",
    "cudnnCreate",
    "cudnnDestroy",
    "cudnnSetStream",
    "cudnnGetStream",
    "cudnnSetCallback",
    "cudnnGetCallback",
    "cudnnGraphVersionCheck",
    "cudnnBackendCreateDescriptor",
    "cudnnBackendDestroyDescriptor",
    "cudnnBackendInitialize",
    "cudnnBackendFinalize",
    "cudnnBackendSetAttribute",
    "cudnnBackendGetAttribute",
    "cudnnGetExecutionPlanWorkspaceSize",
    "cudnnBackendExecute",
    "cudnnBackendPopulateCudaGraph",
    "cudnnBackendUpdateCudaGraph",
)

# Used by downstream_basic.pyx as compile-time constants; all newer than cuDNN 9.19.
NEWER_ENUMERANTS = (
    "CUDNN_TYPE_CUDA_GRAPH_RETENTION",
    "CUDNN_ATTR_EXECUTION_PLAN_CUDA_GRAPH_RETENTION",
    "CUDNN_CUDA_GRAPH_RETENTION_NONE",
    "CUDNN_DATA_FP8_E5M3",
)

CUDNN_INCLUDE_LINE = '#include "cudnn.h"'
OURS_INCLUDE_LINE = '#include "cudnn_backend_graph.h"'


# --- where the headers are ------------------------------------------------------------------------

def _package_parent() -> str:
    """The folder that holds the cudnn_backend package: cimport finds cudnn_backend/_bindings/cycudnn.pxd there."""
    return str(pathlib.Path(cudnn_backend.__file__).resolve().parent.parent)


def _nvidia_roots() -> list[pathlib.Path]:
    """Every folder of the ``nvidia`` namespace package (the pip wheels of CUDA and cuDNN)."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    if spec is None or spec.submodule_search_locations is None:
        return []
    return [pathlib.Path(p) for p in spec.submodule_search_locations]


def _cudnn_include() -> pathlib.Path | None:
    """include/ of the installed cuDNN wheel (nvidia-cudnn-cu13 / -cu12), if it has cudnn.h."""
    for root in _nvidia_roots():
        include = root / "cudnn" / "include"
        if (include / "cudnn.h").is_file() and (include / "cudnn_graph.h").is_file():
            return include
    return None


# Headers cudnn.h needs from CUDA: cuda_runtime_api.h (which includes crt/host_defines.h) and library_types.h.
CUDA_HEADERS = ("cuda_runtime_api.h", "library_types.h", "crt/host_defines.h")


def _cuda_includes() -> list[str] | None:
    """The include/ folders of the CUDA runtime wheels that together hold CUDA_HEADERS (None if some is missing).

    CUDA 13 wheels share nvidia/cu13/include (cuda_runtime_api.h from nvidia-cuda-runtime,
    crt/ from nvidia-cuda-crt); CUDA 12 wheels have nvidia/cuda_runtime/include.
    """
    candidates = []
    for root in _nvidia_roots():
        for sub in ("cu13", "cuda_runtime", "cuda_crt", "cuda_nvcc"):
            include = root / sub / "include"
            if include.is_dir():
                candidates.append(include)
    folders: list[str] = []
    for header in CUDA_HEADERS:
        found = next((d for d in candidates if (d / header).is_file()), None)
        if found is None:
            return None
        if str(found) not in folders:
            folders.append(str(found))
    return folders


# --- building -------------------------------------------------------------------------------------

@dataclass
class Build:
    module: str
    folder: pathlib.Path
    returncode: int | None = None
    output: str = field(default="", repr=False)
    seconds: float = 0.0
    skip_reason: str | None = None

    @property
    def c_source(self) -> str:
        return (self.folder / f"{self.module}.c").read_text()

    def check_cythonized(self):
        """Cython wrote the C file (the C compiler may still have failed)."""
        if self.skip_reason:
            pytest.skip(self.skip_reason)
        assert (self.folder / f"{self.module}.c").is_file(), (
            f"cythonizing {self.module} failed (exit {self.returncode}):\n{self.output[-6000:]}")

    def check(self):
        self.check_cythonized()
        assert self.returncode == 0, (
            f"building {self.module} failed (exit {self.returncode}, {self.seconds:.1f} s):\n{self.output[-6000:]}")

    def run(self) -> dict:
        """Imports the module in a fresh interpreter (after cudnn_backend, whose loader finds cuDNN) and returns run()."""
        code = textwrap.dedent(f"""
            import json, sys
            import cudnn_backend
            sys.path.insert(0, {str(self.folder)!r})
            import {self.module} as m
            print("RESULT=" + json.dumps(m.run()))
        """)
        proc = subprocess.run([sys.executable, "-c", code], cwd=self.folder, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, f"running {self.module} failed:\n{proc.stdout}\n{proc.stderr}"
        lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT=")]
        assert lines, f"{self.module} printed no result:\n{proc.stdout}\n{proc.stderr}"
        return json.loads(lines[-1][len("RESULT="):])


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[str, Build]:
    """All downstream modules, compiled in parallel (one subprocess each)."""
    root = tmp_path_factory.mktemp("cimport")
    ours = cudnn_backend.get_include()
    cudnn_include = _cudnn_include()
    cuda_includes = _cuda_includes()
    cuda_missing = None if cuda_includes else (
        f"the CUDA runtime headers ({', '.join(CUDA_HEADERS)}) are not installed: pip install "
        "nvidia-cuda-runtime nvidia-cuda-crt (CUDA 13) or nvidia-cuda-runtime-cu12 (CUDA 12)")
    vendor_missing = cuda_missing
    if cudnn_include is None:
        vendor_missing = "the cuDNN headers (cudnn.h of the nvidia-cudnn-cu13/-cu12 wheel) are not installed"
    # module -> (source file in cimport_data, C header folders in search order, reason to skip)
    plan = {
        "downstream_basic": ("downstream_basic.pyx", [ours], None),
        "downstream_basic_cudart": ("downstream_basic.pyx", [ours] + (cuda_includes or []), cuda_missing),
        "downstream_vendor_first": ("downstream_vendor_first.pyx",
                                    [ours, str(cudnn_include)] + (cuda_includes or []), vendor_missing),
        "downstream_ours_first": ("downstream_ours_first.pyx",
                                  [ours, str(cudnn_include)] + (cuda_includes or []), vendor_missing),
    }
    env = dict(os.environ)
    for var in ("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH"):  # only the folders given here
        env.pop(var, None)
    result: dict[str, Build] = {}
    running = []
    for module, (source, include_dirs, skip_reason) in plan.items():
        folder = root / module
        build = result[module] = Build(module, folder, skip_reason=skip_reason)
        if skip_reason:
            continue
        shutil.copytree(DATA, folder)
        shutil.copyfile(DATA / source, folder / f"{module}.pyx")
        cmd = [sys.executable, "build_one.py", module, "--include-path", _package_parent()]
        for d in include_dirs:
            cmd += ["--include-dir", d]
        proc = subprocess.Popen(cmd, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        running.append((build, proc, time.monotonic()))
    for build, proc, start in running:
        try:
            build.output, _ = proc.communicate(timeout=BUILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            build.output, _ = proc.communicate()
            build.output += f"\n(killed after {BUILD_TIMEOUT_S} s)"
        build.returncode = proc.returncode
        build.seconds = time.monotonic() - start
    return result


def _include_position(c_source: str, line: str) -> int:
    positions = [i for i, text in enumerate(c_source.splitlines()) if text.strip() == line]
    assert len(positions) == 1, f"{line!r} appears {len(positions)} times in the generated C"
    return positions[0]


# --- 1. cimport alone -----------------------------------------------------------------------------

@pytest.mark.parametrize("module", ["downstream_basic", "downstream_basic_cudart"])
def test_cimport_compiles_and_calls_cudnn_nogil(builds, module):
    build = builds[module]
    build.check()
    c_source = build.c_source
    _include_position(c_source, OURS_INCLUDE_LINE)
    assert CUDNN_INCLUDE_LINE not in c_source

    out = build.run()
    assert out["version"] == cudnn_backend.get_version()
    assert out["create_status"] == 0, cudnn_backend.get_error_string(out["create_status"])
    assert out["created"] is True
    assert out["destroy_status"] == 0, cudnn_backend.get_error_string(out["destroy_status"])
    assert tuple(out["header_version"]) == tuple(int(x) for x in enums.HEADER_VERSION.split("."))
    assert out["newer_enumerants"] == {name: int(getattr(cudnn_backend, name)) for name in NEWER_ENUMERANTS}


def test_newer_enumerants_are_newer_than_919():
    """downstream_basic.pyx's constants really come from headers after 9.19 (so it proves 9.28 coverage)."""
    for name in NEWER_ENUMERANTS:
        assert tuple(int(x) for x in enums.SINCE[name].split(".")) > (9, 19, 0), name


# --- 2. together with the vendor's cudnn.h, in both orders ----------------------------------------

@pytest.mark.parametrize("module, vendor_first", [("downstream_vendor_first", True),
                                                  ("downstream_ours_first", False)])
def test_cimport_with_vendor_cudnn_h(builds, module, vendor_first):
    build = builds[module]
    build.check_cythonized()
    c_source = build.c_source
    vendor_at = _include_position(c_source, CUDNN_INCLUDE_LINE)
    ours_at = _include_position(c_source, OURS_INCLUDE_LINE)
    assert (vendor_at < ours_at) == vendor_first, (
        f"{module}: cudnn.h at line {vendor_at + 1}, cudnn_backend_graph.h at line {ours_at + 1} of the generated C")

    build.check()
    out = build.run()
    # Vendor first: its cudnn_graph.h supplied the types; ours first: cudnn_backend_graph.h stood in for it.
    assert out["graph_types_from_vendor"] is vendor_first
    backend_major, backend_minor = (int(x) for x in enums.HEADER_VERSION.split(".")[:2])
    assert tuple(out["backend_header_version"]) == (backend_major, backend_minor)
    assert out["vendor_header_version"][0] == 9
    assert out["vendor_tensor_is_null"] is True
    assert out["softmax_accurate"] == 1
    assert out["conv_fwd_algo_gemm"] == 2
    assert out["data_half"] == int(cudnn_backend.CUDNN_DATA_HALF)
    assert out["version"] == cudnn_backend.get_version()
    assert out["create_status"] == 0, cudnn_backend.get_error_string(out["create_status"])
    assert out["destroy_status"] == 0, cudnn_backend.get_error_string(out["destroy_status"])


def test_include_orders_really_differ(builds):
    """The two variants' generated C files put the two #include lines in opposite orders."""
    first, second = builds["downstream_vendor_first"], builds["downstream_ours_first"]
    first.check_cythonized()
    second.check_cythonized()
    orders = []
    for build in (first, second):
        lines = [text.strip() for text in build.c_source.splitlines()
                 if text.strip() in (CUDNN_INCLUDE_LINE, OURS_INCLUDE_LINE)]
        orders.append(lines)
    assert orders[0] == [CUDNN_INCLUDE_LINE, OURS_INCLUDE_LINE]
    assert orders[1] == [OURS_INCLUDE_LINE, CUDNN_INCLUDE_LINE]


# --- 3. the .pxd files are shipped and complete ---------------------------------------------------

def _cycudnn_pxd() -> pathlib.Path:
    from cudnn_backend._bindings import cycudnn

    return pathlib.Path(cycudnn.__file__).resolve().with_name("cycudnn.pxd")


def test_pxd_files_are_shipped():
    from cudnn_backend.core import _descriptor
    from cudnn_backend.runtime import _execute
    from cudnn_backend.typed import _base

    assert _cycudnn_pxd().is_file()
    for module in (_descriptor, _execute, _base):
        assert pathlib.Path(module.__file__).resolve().with_name(module.__name__.rsplit(".", 1)[1] + ".pxd").is_file()
    assert (pathlib.Path(cudnn_backend.get_include()) / "cudnn_backend_graph.h").is_file()


_FUNCTION_DECL = re.compile(r"^cdef\s+(?P<ret>[\w\s\*]+?)\s*\b(?P<name>cudnn\w+)\((?P<args>.*)\)(?P<tail>.*)$")


def _declared_functions(pxd_text: str) -> dict[str, str]:
    """{name: the text after the parameter list} of the module-level cdef function declarations."""
    found = {}
    for line in pxd_text.splitlines():
        m = _FUNCTION_DECL.match(line)
        if m:
            assert m["name"] not in found, f"{m['name']} declared twice"
            found[m["name"]] = m["tail"]
    return found


def test_pxd_declares_every_graph_function_nogil():
    declared = _declared_functions(_cycudnn_pxd().read_text())
    assert len(GRAPH_FUNCTIONS) == 24
    assert set(declared) == set(GRAPH_FUNCTIONS)
    for name, tail in declared.items():
        # (declared, or defined inline: the call through the resolved pointer, in the cimporting module)
        assert re.search(r"\bnogil:?\s*$", tail), f"{name} is not declared nogil: {tail!r}"
    # The same set as the generated bookkeeping and the shipped C header's prototypes.
    assert set(enums.FUNCTION_SINCE) == set(GRAPH_FUNCTIONS)
    header = (pathlib.Path(cudnn_backend.get_include()) / "cudnn_backend_graph.h").read_text()
    assert set(re.findall(r"CUDNNWINAPI\s+(cudnn\w+)\s*\(", header)) == set(GRAPH_FUNCTIONS)


def _c_enums(header_text: str) -> dict[str, list[str]]:
    """{typedef name: enumerant names} of the ``typedef enum {...} name;`` blocks of a C header."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", "", header_text, flags=re.S)
    found = {}
    for body, name in re.findall(r"typedef\s+enum\s*\w*\s*\{([^{}]*)\}\s*(\w+)", text):
        found[name] = [re.match(r"\s*(\w+)", item)[1] for item in body.split(",") if item.strip()]
    return found


def test_pxd_covers_the_installed_vendor_header():
    """Every function, enum and enumerant of the installed (older) vendor cudnn_graph.h is declared too."""
    include = _cudnn_include()
    if include is None:
        pytest.skip("the cuDNN headers (nvidia-cudnn wheel) are not installed")
    vendor = (include / "cudnn_graph.h").read_text()
    pxd = _cycudnn_pxd().read_text()
    vendor_functions = set(re.findall(r"CUDNNWINAPI\s+(cudnn\w+)\s*\(", re.sub(r"/\*.*?\*/", "", vendor, flags=re.S)))
    assert len(vendor_functions) >= 20
    assert not vendor_functions - set(_declared_functions(pxd))
    vendor_enums = _c_enums(vendor)
    assert len(vendor_enums) >= 25
    declared = _declared_enumerants_by_type(pxd)
    for enum_name, names in vendor_enums.items():
        assert enum_name in declared, f"{enum_name} is not declared"
        missing = set(names) - set(declared[enum_name])
        assert not missing, f"{enum_name}: {sorted(missing)}"


def test_pxd_enumerants_match_the_shipped_header():
    """The .pxd and cudnn_backend_graph.h declare the same enums with the same enumerants."""
    header = (pathlib.Path(cudnn_backend.get_include()) / "cudnn_backend_graph.h").read_text()
    from_header = _c_enums(header)
    from_header.pop("libraryPropertyType", None)  # CUDA's (library_types.h), a fallback typedef here
    declared = _declared_enumerants_by_type(_cycudnn_pxd().read_text())
    assert {k: sorted(v) for k, v in declared.items()} == {k: sorted(v) for k, v in from_header.items()}


def _declared_enumerants_by_type(pxd_text: str) -> dict[str, list[str]]:
    """{enum: enumerants} of cudnn_graph.h's enums in the .pxd: every `ctypedef enum` block except
    CUDA's libraryPropertyType, less the package's private sentinel (_CUDNNSTATUS_INTERNAL_LOADING_ERROR)."""
    found = {}
    blocks = re.findall(r"^    ctypedef enum (\w+):\n((?:        .*\n|\s*\n)+)", pxd_text, re.M)
    assert blocks
    for enum_name, body in blocks:
        if enum_name == "libraryPropertyType":
            continue
        names = found.setdefault(enum_name, [])
        for line in body.splitlines():
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            name = text.split()[0]
            if name.startswith("_"):
                continue
            assert re.fullmatch(r"CUDNN_\w+", name), f"{enum_name}: unexpected line {line!r}"
            names.append(name)
    return found


def test_pxd_declares_every_enumerant():
    declared = [name for names in _declared_enumerants_by_type(_cycudnn_pxd().read_text()).values() for name in names]
    assert len(declared) == len(set(declared)), "an enumerant is declared twice"
    assert len(declared) == len(enums.ENUMERANT_NAMES)
    assert set(declared) == set(enums.ENUMERANT_NAMES)
