"""Using cudnn-backend's ``.pxd`` declarations from your own Cython code.

Compiles ``examples/cython/tensor_nogil.pyx`` (raw ``cudnnBackend*`` calls through
``cudnn_backend._bindings.cycudnn``, without the GIL) in a temporary folder, imports it and runs it. Needs
Cython, setuptools and a C compiler (the test extra installs the first two). Runs anywhere.

    python examples/cython_downstream.py
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile
import textwrap

import cudnn_backend as cb

HERE = pathlib.Path(__file__).resolve().parent


# [build]
def build(folder):
    """cythonize + build_ext --inplace: cimport finds cudnn_backend's .pxd files under ``include_path``,
    the C compiler finds cudnn_backend_graph.h under ``cudnn_backend.get_include()``."""
    shutil.copy(HERE / "cython" / "tensor_nogil.pyx", folder)
    package_parent = str(pathlib.Path(cb.__file__).resolve().parent.parent)
    setup_py = textwrap.dedent(f"""
        from Cython.Build import cythonize
        from setuptools import Extension, setup
        ext = Extension("tensor_nogil", ["tensor_nogil.pyx"], include_dirs=[{cb.get_include()!r}])
        setup(name="tensor_nogil", script_args=["build_ext", "--inplace", "--build-temp", "build"],
              ext_modules=cythonize([ext], include_path=[{package_parent!r}], quiet=True))
    """)
    (pathlib.Path(folder) / "setup.py").write_text(setup_py)
    run = subprocess.run([sys.executable, "setup.py"], cwd=folder, capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        raise RuntimeError(f"building tensor_nogil failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
# [/build]


# [use]
def use(folder):
    sys.path.insert(0, str(folder))
    import tensor_nogil

    statuses = tensor_nogil.make_tensor(1, 8, 64, 56, 56)
    x = cb.Graph("g").tensor([8, 64, 56, 56], layout="nhwc")     # made and owned by the Python API
    return statuses, tensor_nogil.read_dims(x)
# [/use]


def main():
    try:
        import Cython  # noqa: F401
    except ImportError:
        print("Cython is not installed (pip install cython): skipped")
        return 0
    with tempfile.TemporaryDirectory() as folder:
        build(folder)
        statuses, dims = use(folder)
    print("raw calls, statuses:", statuses)
    print("dims read from a Python-made tensor:", dims)
    return 0 if not any(statuses) and dims == [8, 64, 56, 56] else 1


if __name__ == "__main__":
    sys.exit(main())
