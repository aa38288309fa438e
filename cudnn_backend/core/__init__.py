"""The checked core: ``Descriptor`` and ``Handle``, cuDNN's messages (logging and capture), schema
queries, versions, the device probe. Every exception class lives one layer below, in
``cudnn_backend.errors``."""
from cudnn_backend.core._coerce import as_int
from cudnn_backend.core._descriptor import (
    Descriptor,
    choose_type,
    get_execution_plan_workspace_size,
    is_same_topology,
)
from cudnn_backend.core._gate import calls_in_flight
from cudnn_backend.core._handle import Handle
from cudnn_backend.core._library import (
    get_cudart_version,
    get_error_string,
    get_max_device_version,
    get_property,
    get_version,
    graph_version_check,
)
from cudnn_backend.core._status import (
    check_available,
    clear_error,
    is_available,
    last_error_string,
    since_of,
    unavailable_enumerants,
)
from cudnn_backend.core._tables import attribute_io
from cudnn_backend.core._logging import (
    cudnn_messages,
    cudnn_reasons,
    disable_logging,
    enable_logging,
    logging_enabled,
)
from cudnn_backend.core import _exit, device, schema, versions  # noqa: F401 - _exit: quiet threads at exit
from cudnn_backend.core.info import info

__all__ = [
    "Descriptor", "Handle", "as_int", "attribute_io", "calls_in_flight", "check_available", "choose_type",
    "clear_error", "get_cudart_version", "get_error_string", "get_execution_plan_workspace_size",
    "get_max_device_version", "get_property", "get_version", "graph_version_check", "is_available",
    "is_same_topology", "last_error_string", "since_of", "unavailable_enumerants", "cudnn_messages", "cudnn_reasons",
    "disable_logging", "enable_logging", "logging_enabled", "device", "schema", "versions", "info",
]
