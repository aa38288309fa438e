"""Compiles one downstream Cython module in place, in the current folder (a copy of
tests/cimport_data). Run by tests/test_cimport.py in a subprocess, one per module, in parallel.

usage: python build_one.py MODULE [--include-path DIR]... [--include-dir DIR]...
"""
import argparse
import sys

from Cython.Build import cythonize
from setuptools import Extension, setup


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("module", help="module name; its source is MODULE.pyx here")
    parser.add_argument("--include-path", action="append", default=[], help="where cimport looks for .pxd files")
    parser.add_argument("--include-dir", action="append", default=[], help="a C header folder (in search order)")
    args = parser.parse_args(argv)
    # Type mismatches between the .pxd and the C headers are errors, not warnings, whatever the compiler's default.
    flags = [] if sys.platform == "win32" else [
        "-O0", "-Werror=implicit-function-declaration", "-Werror=incompatible-pointer-types", "-Werror=int-conversion"]
    ext = Extension(args.module, [args.module + ".pyx"], include_dirs=args.include_dir, extra_compile_args=flags)
    modules = cythonize([ext], include_path=args.include_path, compiler_directives={"language_level": "3"},
                        force=True, quiet=True)
    setup(name=args.module, ext_modules=modules, script_name="build_one.py",
          script_args=["build_ext", "--inplace", "--build-temp", "build"])


if __name__ == "__main__":
    main()
