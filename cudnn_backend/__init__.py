"""cudnn-backend: full manual control over NVIDIA cuDNN's backend graph API from Python.

Layers (each a module or folder; lower layers never import higher ones):

* ``_bindings/cycudnn.pxd``  raw one-to-one declarations of cudnn_graph.h (generated, ``nogil``)
* ``_bindings/_loader.py``   finds and loads libcudnn (cuda-pathfinder) and, without a GPU, the
  no-device driver stand-in
* ``_generated/enums.py``, ``schema.py``  Python enums and the attribute schema (generated)
* ``_descriptor.pyx``, ``_errors.py``, ``_logging.pyx``  checked wrappers: ``Handle``,
  ``Descriptor``, ``CudnnError``, logging
* ``info.py``, ``__main__.py``  tools

Every enumerant of cudnn_graph.h is a module attribute under its exact C name
(``cudnn_backend.CUDNN_ATTR_TENSOR_UNIQUE_ID``).
"""
import pathlib as _pathlib

from cudnn_backend._version import __version__
from cudnn_backend._generated import enums as _enums
from cudnn_backend._generated.enums import *  # noqa: F401,F403 - every enum and enumerant by C name
from cudnn_backend._errors import (
    CudnnBackendError,
    CudnnBadParamError,
    CudnnError,
    CudnnExecutionFailedError,
    CudnnFunctionNotFoundError,
    CudnnInternalError,
    CudnnLibraryNotFoundError,
    CudnnNotInitializedError,
    CudnnNotSupportedError,
    CudnnUnsafeCallError,
    CudnnVersionError,
)
from cudnn_backend import schema
from cudnn_backend._descriptor import (
    Descriptor,
    Handle,
    check_available,
    get_cudart_version,
    get_error_string,
    get_execution_plan_workspace_size,
    get_max_device_version,
    get_property,
    get_version,
    graph_version_check,
    is_same_topology,
    last_error_string,
)
from cudnn_backend._logging import disable_logging, enable_logging, logging_enabled
from cudnn_backend.info import info

# the higher layers, for convenience (each module is also importable on its own)
from cudnn_backend import typed  # noqa: E402
from cudnn_backend.typed import descriptor_class  # noqa: E402
from cudnn_backend.graph import Graph, GraphError  # noqa: E402
from cudnn_backend.profiles import DeviceProfile  # noqa: E402
from cudnn_backend.heuristics import build_first_plan, get_configs  # noqa: E402
from cudnn_backend.engines import list_engines, make_config  # noqa: E402
from cudnn_backend.plans import build_plan, plan_from_json  # noqa: E402
from cudnn_backend.execution import (  # noqa: E402
    CudaGraph,
    NativeCudaGraphNotSupportedError,
    VariantPack,
    execute,
    populate_cuda_graph,
    update_cuda_graph,
)


def get_include() -> str:
    """The folder holding cudnn_backend_graph.h, for Cython code that cimports cudnn_backend's .pxd files."""
    here = _pathlib.Path(__file__).resolve().parent
    shipped = here / "include"
    return str(shipped if shipped.exists() else here.parent / "include")


def loaded_library():
    """Where and which cuDNN was loaded (loads it if nothing has yet)."""
    from cudnn_backend._bindings import _loader

    return _loader.load_cudnn()
