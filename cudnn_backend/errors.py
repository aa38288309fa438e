"""Every exception cudnn-backend raises, in one module (the lowest layer: it imports nothing of the package).

``CudnnBackendError`` is the one documented common base. Under it:

* ``CudnnError`` and its status-category subclasses: *cuDNN* refused a call. They carry ``.status``
  (a ``Status`` member), the function, the descriptor type and attribute involved, cuDNN's own text
  from ``cudnnGetLastErrorString`` and a hint on getting cuDNN's log. ``CudnnShutdownError`` (a call
  started while the interpreter exits) is one too, under ``CudnnNotInitializedError``: a loop that
  catches ``CudnnError`` also ends quietly at exit.
* ``CudnnVersionError``, ``CudnnFunctionNotFoundError``, ``CudnnLibraryNotFoundError``: the loaded
  cuDNN is too old, or missing.
* ``CudnnUnsafeCallError``: refused before cuDNN saw it, because cuDNN is known to crash on it, or because the
  object's lifetime does not allow it (a closed handle, descriptor or variant pack; one in use by another thread's
  call; ``__init__`` on one already made).
* the errors of the higher layers (graphs, engines, plans, profiles, CUDA, the plan cache).

Mistakes in arguments caught before cuDNN is called raise ``TypeError``/``ValueError`` naming the
parameter, attribute or JSON field; several classes here also derive from those, so both
``except ValueError`` and ``except CudnnBackendError`` catch them. Every exception here pickles.
"""
from __future__ import annotations

import difflib

DEBUG_HINT = "for cuDNN's own log, run with CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG=stderr"

__all__ = [
    "DEBUG_HINT", "CudnnBackendError", "CudnnLibraryNotFoundError", "CudnnFunctionNotFoundError", "CudnnVersionError",
    "CudnnUnsafeCallError", "CudnnShutdownError", "CudnnError", "CudnnNotInitializedError", "CudnnBadParamError",
    "CudnnNotSupportedError", "CudnnInternalError", "CudnnExecutionFailedError", "NativeCudaGraphNotSupportedError",
    "GraphError", "ReferenceUnsupportedError", "EngineError", "NoDeviceError", "NoWorkingPlanError", "PlanVersionError",
    "DeviceProfileError", "DeviceProfileVersionError", "DeviceProfileIdentityWarning", "CudaError", "PlanCacheError", "JsonCheckError",
    "JsonTableFallbackWarning", "MissingDependencyError", "SweepError", "error_class", "make_error",
    "needs_version_message", "DeviceMemoryWarning", "did_you_mean", "ErrataError", "detached",
]


class CudnnBackendError(Exception):
    """Base class of every error specific to cudnn-backend (cuDNN's refusals and the package's own)."""


class CudnnLibraryNotFoundError(CudnnBackendError, OSError):
    """libcudnn could not be found or loaded."""

    def __init__(self, detail: str):
        self.detail = detail
        super().__init__(
            "cuDNN 9 (libcudnn.so.9) could not be loaded: "
            f"{detail}\nInstall it with `pip install nvidia-cudnn-cu13` (CUDA 13) or `pip install nvidia-cudnn-cu12` "
            "(CUDA 12), which cudnn-backend's [cu13] / [cu12] extra installs, or point CUDNN_BACKEND_LIBCUDNN at a "
            "libcudnn.so.9."
        )

    def __reduce__(self):
        return (type(self), (self.detail,))


def needs_version_message(what: str, since: str, loaded: str) -> str:
    """The one wording of every "too old" refusal: ``WHAT needs cuDNN >= X.Y (loaded: A.B)``.

    ``since`` and ``loaded`` are "MAJOR.MINOR.PATCH" texts; both are shown as MAJOR.MINOR unless ``since`` has a
    patch level (then both in full, so that 9.28.1 against 9.28.0 reads right)."""
    def parts(text):
        return [p for p in str(text).split(".")]

    s, lo = parts(since), parts(loaded)
    full = len(s) > 2 and s[2] not in ("0", "")
    short = (lambda p: ".".join(p)) if full else (lambda p: ".".join(p[:2]))
    return f"{what} needs cuDNN >= {short(s)} (loaded: {short(lo)})"


class CudnnVersionError(CudnnBackendError, NotImplementedError):
    """A feature of cuDNN newer than the loaded release: an enumerant (descriptor type, attribute, attribute type,
    value), an enum type or a function (``core.check_available`` raises it for every one of them)."""

    def __init__(self, name: str, since: str, loaded: str, context: str = ""):
        self.name, self.since, self.loaded, self.context = name, since, loaded, context
        where = f" ({context})" if context else ""
        super().__init__(needs_version_message(f"{name}{where}", since, loaded))

    def __reduce__(self):
        return (type(self), (self.name, self.since, self.loaded, self.context))


class CudnnFunctionNotFoundError(CudnnVersionError, AttributeError):
    """The loaded cuDNN lacks a function of cudnn_graph.h (it is older than the function): a CudnnVersionError
    raised by the binding itself, for a call that reached it without going through ``core.check_available``."""

    def __init__(self, function: str, since: str, loaded: str):
        self.function = function
        super().__init__(function, since, loaded)

    def __reduce__(self):
        return (type(self), (self.function, self.since, self.loaded))


class CudnnUnsafeCallError(CudnnBackendError, ValueError):
    """A call refused before cuDNN sees it because cuDNN is known to crash on it, or because the object's lifetime
    does not allow it: a closed handle, descriptor or variant pack, one in use by another thread's call, or
    ``__init__`` on one already made."""


class CudnnError(CudnnBackendError, RuntimeError):
    """cuDNN returned a status other than CUDNN_STATUS_SUCCESS.

    ``status`` is the ``Status`` member (a plain int for a status newer than the header); pickling
    keeps the members as they are (enum members pickle by name).
    """

    def __init__(self, status, function: str = "", descriptor_type=None, attribute=None, cudnn_message: str = "",
                 hint: str = DEBUG_HINT):
        self.status = status
        self.function = function
        self.descriptor_type = descriptor_type
        self.attribute = attribute
        self.cudnn_message = cudnn_message
        self.hint = hint
        super().__init__(self._compose())

    def _compose(self) -> str:
        status_name = getattr(self.status, "name", str(self.status))
        msg = f"{self.function or 'cuDNN call'} failed with {status_name} ({int(self.status)})"
        what = [getattr(x, "name", str(x)) for x in (self.descriptor_type, self.attribute) if x is not None]
        if what:
            msg += " on " + ", ".join(what)
        if self.cudnn_message:
            msg += f": {self.cudnn_message}"
        if self.hint:
            msg += f"\n  hint: {self.hint}"
        return msg

    @property
    def reason(self) -> str:
        """One line: the status name and cuDNN's own message (what tables of refused configs show)."""
        status_name = getattr(self.status, "name", str(self.status))
        return f"{status_name}: {self.cudnn_message}" if self.cudnn_message else status_name

    def __reduce__(self):
        return (type(self), (self.status, self.function, self.descriptor_type, self.attribute, self.cudnn_message,
                             self.hint))


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


_NOT_INITIALIZED = 1001  # CUDNN_STATUS_NOT_INITIALIZED (the Status enum lives a layer up)


class CudnnShutdownError(CudnnNotInitializedError):
    """A cuDNN call started while the interpreter exits, refused: cuDNN's libraries are being torn down.

    A ``CudnnError`` (status ``CUDNN_STATUS_NOT_INITIALIZED``), so a daemon thread's loop that catches
    ``CudnnError`` ends quietly at exit; a thread that does not catch it ends quietly too (``core._exit``).
    """

    MESSAGE = "the interpreter is exiting: no new cuDNN call is started (cuDNN's libraries are being torn down)"

    def __init__(self, status=_NOT_INITIALIZED, function: str = "", descriptor_type=None, attribute=None,
                 cudnn_message: str = MESSAGE, hint: str = ""):
        super().__init__(status, function, descriptor_type, attribute, cudnn_message, hint)

    def _compose(self) -> str:
        return f"{self.function}: {self.cudnn_message}" if self.function else self.cudnn_message


class NativeCudaGraphNotSupportedError(CudnnNotSupportedError):
    """The plan's engine cannot populate a CUDA graph through cuDNN's native CUDA graph API."""


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


def make_error(status, function: str, descriptor_type=None, attribute=None, cudnn_message: str = "") -> CudnnError:
    """The CudnnError (subclass by category) for a status; ``status`` is best given as a ``Status`` member."""
    return error_class(status)(status, function, descriptor_type, attribute, cudnn_message)


# -------------------------------------------------------------------------------------------------
# the higher layers
# -------------------------------------------------------------------------------------------------
class GraphError(CudnnBackendError, ValueError):
    """An operation graph that cuDNN would refuse, misread or run out of bounds, caught before finalize."""


class ReferenceUnsupportedError(GraphError):
    """The fp64 reference evaluator cannot compute an operation of the graph (random numbers, signals, ...);
    the message names each one and why (``reference.unsupported`` lists them)."""


class EngineError(CudnnBackendError, ValueError):
    """An engine or engine configuration request that cannot be met (caught before cuDNN is called)."""


class NoDeviceError(CudnnBackendError, RuntimeError):
    """No GPU is visible, so what needs one cannot be done here: cuDNN choosing engines without a device profile,
    a variant pack allocating the workspace of a plan built offline (pass ``workspace=``)."""


class NoWorkingPlanError(CudnnBackendError, RuntimeError):
    """No engine configuration built an execution plan; ``.report`` lists each one and why it failed."""

    def __init__(self, message: str, report=None):
        super().__init__(message)
        self.report = report

    def __reduce__(self):
        plain = getattr(self.report, "plain", None)
        return (type(self), (self.args[0], plain() if callable(plain) else self.report))


class PlanVersionError(CudnnBackendError, ValueError):
    """A serialized plan from another cuDNN version than the loaded one."""


class DeviceProfileError(CudnnBackendError, ValueError):
    """A device profile that cannot be read or used."""


class DeviceProfileVersionError(DeviceProfileError):
    """The profile was written by another cuDNN release and cannot be converted for the one it is meant for
    (``loaded_version``): ``missing`` names the members that release requires and the profile lacks."""

    def __init__(self, message: str, profile_version=None, loaded_version=None, missing=()):
        super().__init__(message)
        self.profile_version = profile_version
        self.loaded_version = loaded_version
        self.missing = tuple(missing)

    def __reduce__(self):
        return (type(self), (self.args[0], self.profile_version, self.loaded_version, self.missing))


class DeviceProfileIdentityWarning(UserWarning):
    """A device profile holds a member that identifies the GPU to cuDNN (one it compares when it loads a plan) from
    published figures rather than a capture: plans built with it may be refused on that GPU
    (CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH)."""


class CudaError(CudnnBackendError, RuntimeError):
    """A CUDA runtime or driver call (through cuda-bindings) returned an error."""

    def __init__(self, function: str, code, name: str = "", text: str = ""):
        self.function, self.code, self.name, self.text = function, code, name, text
        detail = f"{name}: {text}" if text else name
        try:
            number = int(code)
        except (TypeError, ValueError):
            number = code
        super().__init__(f"{function} failed with {detail or code} ({number})")

    def __reduce__(self):
        try:
            code = int(self.code)
        except (TypeError, ValueError):
            code = self.code
        return (type(self), (self.function, code, self.name, self.text))


class JsonCheckError(CudnnBackendError, ValueError):
    """JSON that cuDNN must not be given (cuDNN crashes on some): ``kind`` ("plan", "kernel cache", "device
    profile"), ``path`` (the JSON field, e.g. "operationGraph.tensors[1].dim[0]") and ``problem``."""

    def __init__(self, kind, path, problem):
        self.kind = kind
        self.path = path
        self.problem = problem
        where = f"{path}: " if path else ""
        super().__init__(f"{kind} JSON: {where}{problem}")

    def __reduce__(self):
        return (type(self), (self.kind, self.path, self.problem))


class JsonTableFallbackWarning(UserWarning):
    """The JSON checks have no table for the cuDNN release in question (newer than every table, or between
    two): they fell back to the nearest older release's table and let members unknown to it through."""


class PlanCacheError(CudnnBackendError, ValueError):
    """A plan cache that cannot be opened or written (a corrupt or foreign entry is a miss, not this)."""


class ErrataError(CudnnBackendError, ValueError):
    """An errata file (cudnn-frontend's deny-list format) refused whole: not JSON, a key written twice, too large or
    too deeply nested, an unknown version, or a rule with a missing, wrongly typed or out-of-range field.
    ``source`` (the file, or where the text came from), ``problems`` (every problem found, each naming the rule and
    the field)."""

    def __init__(self, message: str, source: str = "", problems=()):
        super().__init__(message)
        self.source, self.problems = source, tuple(problems)

    def __reduce__(self):
        return (type(self), (str(self), self.source, self.problems))


class MissingDependencyError(CudnnBackendError, ImportError):
    """An optional dependency (torch, matplotlib, pandas, ray, cuda-bindings...) that this call needs is not
    installed: ``package`` and the ``extra`` that installs it."""

    def __init__(self, package: str, needed_for: str, extra: str = ""):
        self.package, self.needed_for, self.extra = package, needed_for, extra
        how = f"pip install {package}" + (f"; the extra cudnn-backend[{extra}] brings it: pip install '.[{extra}]' "
                                         "in the clone" if extra else "")
        super().__init__(f"{needed_for} needs {package}, which is not installed ({how})", name=package)

    def __reduce__(self):
        return (type(self), (self.package, self.needed_for, self.extra))


class SweepError(CudnnBackendError, RuntimeError):
    """A sweep that could not run at all (no task given, no GPU for a GPU executor, Ray unreachable); a task
    that fails inside a sweep is reported in its result instead."""


class DeviceMemoryWarning(UserWarning):
    """A graph whose tensors (and plan workspace) need more memory than the target GPU has: cuDNN builds the plan,
    which cannot run there."""


def did_you_mean(word, choices, *, listing=True) -> str:
    """``"; did you mean X?"`` naming the choices closest to ``word`` (difflib), else (``listing``) ``"; one of:
    A, B, C"``; empty when there are no choices. For messages that name a wrong field, option or knob."""
    choices = [str(c) for c in choices]
    if not choices:
        return ""
    close = difflib.get_close_matches(str(word), choices, n=3, cutoff=0.6) or \
        difflib.get_close_matches(str(word).upper(), [c.upper() for c in choices], n=3, cutoff=0.6)
    if close:
        by_upper = {c.upper(): c for c in choices}
        return f"; did you mean {' or '.join(by_upper.get(c.upper(), c) for c in close)}?"
    return f"; one of: {', '.join(choices)}" if listing else ""


def detached(error: BaseException) -> BaseException:
    """``error`` without its traceback, to be kept in a result (an engine's refusal, a config's): the traceback's
    frames hold the descriptors the failed call made, and the error itself, a cycle that would keep those cuDNN
    objects alive until the cyclic collector runs (megabytes an exploration)."""
    return error.with_traceback(None)
