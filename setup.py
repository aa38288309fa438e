"""Build: Cython extensions plus the no-device CUDA driver stand-in. Needs only Cython and a C
compiler: the cuDNN types come from include/, the functions are resolved at run time."""
import os
import pathlib
import shutil

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = pathlib.Path(__file__).resolve().parent
INCLUDE = str(ROOT / "include")
STUB_SOURCE = "cudnn_backend/_nodevice/libcuda_stub.c"
# cuDNN opens the driver under both names; one stand-in object per soname so both resolve to it.
STUB_SONAMES = ("libcuda.so.1", "libcuda.so")

extensions = [
    Extension(name, [src], include_dirs=[INCLUDE], extra_compile_args=["-O2"], libraries=["dl"])
    for name, src in [
        ("cudnn_backend._bindings.cycudnn", "cudnn_backend/_bindings/cycudnn.pyx"),
        ("cudnn_backend._descriptor", "cudnn_backend/_descriptor.pyx"),
        ("cudnn_backend._logging", "cudnn_backend/_logging.pyx"),
        ("cudnn_backend._execute", "cudnn_backend/_execute.pyx"),
    ]
]


class BuildExtWithStandIn(build_ext):
    """Also builds the no-device libcuda stand-in as plain shared libraries next to the package."""

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


setup(
    packages=["cudnn_backend", "cudnn_backend._bindings", "cudnn_backend._generated", "cudnn_backend._nodevice",
              "cudnn_backend.data"],
    package_data={
        "cudnn_backend": ["*.pxd", "*.pyx"],
        "cudnn_backend._bindings": ["*.pxd", "*.pyx"],
        "cudnn_backend._generated": ["*.json"],
        "cudnn_backend._nodevice": ["*.c", "libcuda.so*"],
        "cudnn_backend.data": ["*.json"],
    },
    ext_modules=cythonize(
        extensions,
        include_path=[str(ROOT)],
        compiler_directives={"language_level": "3", "embedsignature": True},
        nthreads=int(os.environ.get("CUDNN_BACKEND_BUILD_JOBS", "0")),
    ),
    cmdclass={"build_ext": BuildExtWithStandIn, "build_py": BuildPyWithHeaders},
)
