"""Exceptions raised by cudnn-backend.

``CudnnError`` and its subclasses mean *cuDNN* refused a call: they carry the status (an enum
member), the function, the descriptor type and attribute involved and cuDNN's own text from
``cudnnGetLastErrorString``. Mistakes caught on the Python side before cuDNN is called raise the
built-in ``TypeError``/``ValueError`` instead. Every exception here pickles.
"""
from __future__ import annotations

DEBUG_HINT = "for cuDNN's own log, run with CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG=stderr"


class CudnnBackendError(Exception):
    """Base class of the errors that are specific to cudnn-backend."""


class CudnnLibraryNotFoundError(CudnnBackendError, OSError):
    """libcudnn could not be found or loaded."""

    def __init__(self, detail: str):
        self.detail = detail
        super().__init__(
            "cuDNN 9 (libcudnn.so.9) could not be loaded: "
            f"{detail}\nInstall it with `pip install nvidia-cudnn-cu13` (CUDA 13) or `pip install nvidia-cudnn-cu12` "
            "(CUDA 12), i.e. `pip install cudnn-backend[cu13]`, or point CUDNN_BACKEND_LIBCUDNN at a libcudnn.so.9."
        )

    def __reduce__(self):
        return (type(self), (self.detail,))


class CudnnFunctionNotFoundError(CudnnBackendError, AttributeError):
    """The loaded cuDNN lacks a function of cudnn_graph.h (it is older than the function)."""

    def __init__(self, function: str, since: str, loaded: str):
        self.function, self.since, self.loaded = function, since, loaded
        super().__init__(f"{function} is not in the loaded cuDNN {loaded}: it was introduced in cuDNN {since}")

    def __reduce__(self):
        return (type(self), (self.function, self.since, self.loaded))


class CudnnVersionError(CudnnBackendError, NotImplementedError):
    """An enumerant (descriptor type, attribute, attribute type, value) is newer than the loaded cuDNN."""

    def __init__(self, name: str, since: str, loaded: str, context: str = ""):
        self.name, self.since, self.loaded, self.context = name, since, loaded, context
        where = f" ({context})" if context else ""
        super().__init__(f"{name}{where} needs cuDNN {since}; the loaded cuDNN is {loaded}")

    def __reduce__(self):
        return (type(self), (self.name, self.since, self.loaded, self.context))


class CudnnUnsafeCallError(CudnnBackendError, ValueError):
    """A call refused before cuDNN sees it because cuDNN is known to crash on it."""


class CudnnError(CudnnBackendError, RuntimeError):
    """cuDNN returned a status other than CUDNN_STATUS_SUCCESS."""

    def __init__(self, status, function: str = "", descriptor_type=None, attribute=None, cudnn_message: str = "",
                 hint: str = DEBUG_HINT):
        from cudnn_backend._generated.enums import Status

        try:
            status = Status(int(status))
        except ValueError:
            status = int(status)
        self.status = status
        self.function = function
        self.descriptor_type = descriptor_type
        self.attribute = attribute
        self.cudnn_message = cudnn_message
        self.hint = hint
        super().__init__(self._compose())

    def _compose(self) -> str:
        status_name = getattr(self.status, "name", str(self.status))
        parts = [f"{self.function or 'cuDNN call'} failed with {status_name} ({int(self.status)})"]
        what = [getattr(x, "name", str(x)) for x in (self.descriptor_type, self.attribute) if x is not None]
        if what:
            parts.append(" on " + ", ".join(what))
        msg = "".join(parts)
        if self.cudnn_message:
            msg += f": {self.cudnn_message}"
        if self.hint:
            msg += f"\n  hint: {self.hint}"
        return msg

    def __reduce__(self):
        return (
            _rebuild_cudnn_error,
            (type(self), int(self.status), self.function, _enum_ref(self.descriptor_type), _enum_ref(self.attribute),
             self.cudnn_message, self.hint),
        )


def _enum_ref(value):
    return None if value is None else int(value)


def _rebuild_cudnn_error(cls, status, function, descriptor_type, attribute, cudnn_message, hint):
    from cudnn_backend._generated.enums import AttributeName, DescriptorType

    dt = None if descriptor_type is None else DescriptorType(descriptor_type)
    at = None if attribute is None else AttributeName(attribute)
    return cls(status, function, dt, at, cudnn_message, hint)


class CudnnNotInitializedError(CudnnError):
    """Status category 1xxx: initialization, versions, sub-libraries, licensing."""


class CudnnBadParamError(CudnnError):
    """Status category 2xxx: a bad parameter."""


class CudnnNotSupportedError(CudnnError):
    """Status category 3xxx: not supported (graph pattern, shape, layout, architecture, ...)."""


class CudnnInternalError(CudnnError):
    """Status category 4xxx: an internal error (allocation, compilation, ...)."""


class CudnnExecutionFailedError(CudnnError):
    """Status category 5xxx: execution failed (CUDA errors, cuBLAS, ...)."""


_BY_CATEGORY = {
    1000: CudnnNotInitializedError,
    2000: CudnnBadParamError,
    3000: CudnnNotSupportedError,
    4000: CudnnInternalError,
    5000: CudnnExecutionFailedError,
}


def error_class(status: int) -> type[CudnnError]:
    """The CudnnError subclass for a status code (by its category, status // 1000 * 1000)."""
    return _BY_CATEGORY.get(int(status) // 1000 * 1000, CudnnError)


def make_error(status: int, function: str, descriptor_type=None, attribute=None, cudnn_message: str = "") -> CudnnError:
    return error_class(status)(status, function, descriptor_type, attribute, cudnn_message)
