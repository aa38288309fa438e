"""Build: Cython extensions plus the no-device CUDA driver stand-in. Needs only Cython and a C
compiler: the cuDNN types come from include/, the functions are resolved at run time."""
import os
import pathlib
import shutil

from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = pathlib.Path(__file__).resolve().parent
INCLUDE = str(ROOT / "include")
STUB_SOURCE = "cudnn_backend/_nodevice/libcuda_stub.c"
# cuDNN opens the driver under both names; one stand-in object per soname so both resolve to it.
STUB_SONAMES = ("libcuda.so.1", "libcuda.so")

# The generated typed classes are thin (keyword parsing, then the core's checked set): -O1 compiles
# their 80,000 lines of C three times faster than -O2 and the hot paths live in core._descriptor.
OPT = {"cudnn_backend.typed._classes": "-O1"}
# Every .pyx of the package is a compiled module (found, not listed: a module split in two is two new files).
PYX = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "cudnn_backend").rglob("*.pyx"))
extensions = [
    Extension(name, [src], include_dirs=[INCLUDE], extra_compile_args=[OPT.get(name, "-O2")], libraries=["dl"])
    for name, src in ((src[:-len(".pyx")].replace("/", "."), src) for src in PYX)
]
# The operation family modules (core/families/*.py: their Graph methods, shape rules, checks, reference ops) and the
# Graph class stay plain Python source, compiled as they are (Cython's pure Python mode): the builder's per-call
# bookkeeping is what graph construction's speed is made of. Found, not listed: a new family is one new module.
COMPILED_PY = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "cudnn_backend" / "core" / "families").glob("*.py")
                     if p.name != "__init__.py") + ["cudnn_backend/graph/_graph.py"]
extensions += [
    Extension(src[:-len(".py")].replace("/", "."), [src], extra_compile_args=["-O1"]) for src in COMPILED_PY
]


# Cython and the C compiler on every CPU this process may use ($CUDNN_BACKEND_BUILD_JOBS to choose): the modules are
# independent, and a build on a 2-core CI machine or a user's laptop takes minutes serially.
JOBS = int(os.environ.get("CUDNN_BACKEND_BUILD_JOBS") or
           (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


class BuildExtWithStandIn(build_ext):
    """Also builds the no-device libcuda stand-in as plain shared libraries next to the package; compiles the
    extensions JOBS at a time unless told otherwise (``--parallel``)."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = JOBS

    def run(self):
        super().run()
        out_dir = ROOT / "cudnn_backend" / "_nodevice" if self.inplace else (
            pathlib.Path(self.build_lib) / "cudnn_backend" / "_nodevice")
        out_dir.mkdir(parents=True, exist_ok=True)
        objects = self.compiler.compile([STUB_SOURCE], output_dir=self.build_temp, extra_postargs=["-fPIC", "-O2"])
        for soname in STUB_SONAMES:
            self.compiler.link_shared_object(
                objects, soname, output_dir=str(out_dir), extra_postargs=[f"-Wl,-soname,{soname}"]
            )


class BuildPyWithHeaders(build_py):
    """Ships include/ inside the package, for downstream Cython code (cudnn_backend.get_include())."""

    def run(self):
        super().run()
        target = pathlib.Path(self.build_lib) / "cudnn_backend" / "include"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(INCLUDE, target)


# every package folder (found, not listed: a list kept by hand lost a new subpackage), and the data folders
PACKAGES = find_packages(include=["cudnn_backend", "cudnn_backend.*"]) + ["cudnn_backend._nodevice",
                                                                         "cudnn_backend.data"]

setup(
    packages=PACKAGES,
    package_data={
        **{p: ["*.pxd", "*.pyx", "*.pyi"] for p in PACKAGES},
        "cudnn_backend": ["py.typed", "*.pyi"],
        "cudnn_backend._bindings": ["*.pxd", "*.pyx", "*.json"],
        "cudnn_backend._nodevice": ["libcuda.so*"],
        "cudnn_backend.data": ["*.json"],
    },
    exclude_package_data={"": ["*.c"]},  # Cython's C and the stand-in's source: the sdist's, not the wheel's
    ext_modules=cythonize(
        extensions,
        include_path=[str(ROOT)],
        compiler_directives={"language_level": "3", "embedsignature": True},
        nthreads=JOBS if JOBS > 1 else 0,  # (0: in this process, no pool)
    ),
    cmdclass={"build_ext": BuildExtWithStandIn, "build_py": BuildPyWithHeaders},
)
