"""What the operation families build with: Python values read as sizes, dims, strides and layouts (ints only: no
float, bool or string is ever taken as an int; every size >= 1), data types and enum choices by member, C name,
short name or value, by-value scalars checked against their type, and the version gate. The ``Graph`` builder's
core (``graph._core``) and the families' ``Graph`` methods read the user's values through here, and through
``core._coerce`` (``as_int``, ``user_sequence``) and ``core._status`` (the version gate) below it, which import no
family.
"""
from __future__ import annotations

import enum
import functools
import inspect
import math
import numbers

import numpy as np

from cudnn_backend._bindings.enums import DataType
from cudnn_backend.core._coerce import as_int, refuse_unordered, user_sequence
from cudnn_backend.core import graph_limits
from cudnn_backend.core._status import check_available
from cudnn_backend.core.names import DATA_TYPE_ALIASES, DATA_TYPE_PREFIX, NAN_REFUSED
from cudnn_backend.core.versions import OVERRIDE_SHAPES_NEEDS

__all__ = ["as_int", "as_bool", "flags_checked", "as_name", "int_range", "as_data_type", "output_type", "as_choice",
           "require", "real_number", "scalar_value",
           "OVERRIDE_SHAPES_NEEDS", "as_list", "as_sizes", "as_dims", "as_strides", "pair", "packed_strides",
           "stride_order", "strides_like", "nhwc_strides", "bshd_strides", "elements_alias", "layout_strides",
           "channels_last", "MAX_RANK", "MAX_SIZE", "MAX_ELEMENTS", "BOOLEAN_TYPES"]

MAX_RANK = 8  # CUDNN_DIM_MAX
MAX_SIZE = (1 << 63) - 1  # sizes and strides are int64 in cuDNN




def as_bool(value, what) -> bool:
    """A bool from True, False or a numpy bool; anything else is a TypeError naming ``what`` (a truthy string such as
    "no", or a 0 meant as False, would otherwise read as whatever its truth value is)."""
    if value is True or value is False:
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    raise TypeError(f"{what}: expected True or False, not {type(value).__name__}")


def flags_checked(function):
    """``function`` with its parameters whose default is True or False taking only a bool (else a TypeError naming
    the parameter): "no" or 0 would otherwise act as its truth value."""
    signature = inspect.signature(function)
    flags = tuple(name for name, p in signature.parameters.items() if isinstance(p.default, bool))

    @functools.wraps(function)
    def checked(*args, **kwargs):
        try:
            given = signature.bind(*args, **kwargs).arguments
        except TypeError:  # Python's own words, which name the function
            return function(*args, **kwargs)
        for name in flags:
            if name in given:
                as_bool(given[name], name)
        return function(*args, **kwargs)

    return checked


def as_name(name, default=None) -> str:
    """The ``name`` an operation gives its tensors (``name``_y, ``name``_stats, ...): a str, ``default`` for None (as
    the methods whose name defaults to None take it), else a TypeError (any object would otherwise be formatted into
    the names)."""
    if type(name) is str:
        return name
    if name is None and default is not None:
        return default
    if not isinstance(name, str):
        raise TypeError(f"name: expected a str, not {type(name).__name__}")
    return name


def as_data_type(value, what="data_type") -> DataType:
    """A DataType from a member, its C name, any name of ``core.names.DATA_TYPE_ALIASES`` ("fp16", "half",
    "float16", "bf16", "fp32", "fp8_e4m3", ...), an int, or an array library's dtype (``numpy.float16``,
    ``numpy.dtype("float32")``, ``torch.bfloat16``, ``ml_dtypes.float8_e4m3fn``)."""
    if not isinstance(value, (str, int)):  # (names, members and ints, the usual values, skip the dtype test)
        library, name = _dtype_object(value)
        if name is not None:
            member = DATA_TYPE_ALIASES.get(name.lower())
            if member is None:
                raise TypeError(f"{what}: the {library} dtype {name} has no cuDNN data type")
            return member
    return as_choice(DataType, value, what, DATA_TYPE_PREFIX, DATA_TYPE_ALIASES)


_DTYPE_LIBRARIES = ("numpy", "ml_dtypes", "torch", "jax", "jaxlib", "cupy")


def _dtype_object(value) -> tuple:
    """(library, dtype name) of an array library's dtype (``numpy.dtype("float16")``, ``torch.float16``) or scalar
    type (``numpy.float16``, ``ml_dtypes.bfloat16``), else (None, None). Never of a scalar (``numpy.int32(2)``, a
    data type's value)."""
    if isinstance(value, np.dtype):  # (cupy's and JAX's too)
        return "numpy", value.name
    if isinstance(value, type):
        library = (getattr(value, "__module__", None) or "").split(".")[0]
        if library in _DTYPE_LIBRARIES:
            try:
                return library, np.dtype(value).name
            except TypeError:
                pass
        return None, None
    kind = type(value)
    if kind.__module__ == "torch" and kind.__name__ == "dtype":
        return "torch", str(value).removeprefix("torch.")
    return None, None


def output_type(output_data_type, default):
    """An output's data type: ``output_data_type=`` as given (checked where the tensor is made), else ``default``. Not
    ``output_data_type or default``: CUDNN_DATA_FLOAT is 0, and would be taken for "not given"."""
    return default if output_data_type is None else output_data_type


@functools.cache
def _members_any_case(enum_cls) -> dict:
    return {name.upper(): member for name, member in enum_cls.__members__.items()}


def as_choice(enum_cls, value, what, prefix="", aliases=None):
    """A member of ``enum_cls`` from a member, its C name, its name without ``prefix`` (any case), an alias or an
    int; a member of another enum, a bool, a float is refused (TypeError), an unknown name too (ValueError)."""
    if isinstance(value, enum_cls):
        return value
    if isinstance(value, enum.Enum) or isinstance(value, bool):
        raise TypeError(f"{what}: expected a {enum_cls.__name__}, not {type(value).__name__}"
                        f"{'.' + value.name if isinstance(value, enum.Enum) else ''}")
    if isinstance(value, str):
        key = value.strip()
        if aliases and key.lower() in aliases:
            return aliases[key.lower()]
        by_name = _members_any_case(enum_cls)  # (mixed-case members: CUDNN_TENSOR_REORDERING_F8_128x4)
        for candidate in (key.upper(), (prefix + key).upper()):
            if candidate in by_name:
                return by_name[candidate]
        names = ", ".join(m[len(prefix):].lower() if m.startswith(prefix) else m for m in list(enum_cls.__members__)[:8])
        raise ValueError(f"{what}: {value!r} is not a {enum_cls.__name__} (e.g. {names}, ...)")
    v = as_int(value, what)
    try:
        return enum_cls(v)
    except ValueError:
        raise ValueError(f"{what}: {v} is not a valid {enum_cls.__name__}") from None


def require(name, what: str):
    """The version gate (``core.check_available``) for an operation family: CudnnVersionError "NAME (what) needs
    cuDNN >= X.Y (loaded: A.B)" unless the loaded cuDNN has ``name`` (or every name of a tuple), raised before the
    method makes any tensor or descriptor."""
    check_available(name, what)


_INT_RANGES = {DataType.CUDNN_DATA_INT8: (-(1 << 7), (1 << 7) - 1), DataType.CUDNN_DATA_UINT8: (0, (1 << 8) - 1),
               DataType.CUDNN_DATA_INT32: (-(1 << 31), (1 << 31) - 1), DataType.CUDNN_DATA_INT64: (-(1 << 63), (1 << 63) - 1)}
if "CUDNN_DATA_UINT32" in DataType.__members__:
    _INT_RANGES[DataType["CUDNN_DATA_UINT32"]] = (0, (1 << 32) - 1)


def int_range(data_type):
    """(lowest, highest) value of an integer data type; None for the other types."""
    return _INT_RANGES.get(data_type)


# the data types holding booleans: BOOLEAN (bit-packed, eight elements a byte) and, from cuDNN 9.25, BYTE_BOOLEAN
# (one byte an element, as every array library's bool arrays)
BOOLEAN_TYPES = frozenset(DataType[n] for n in ("CUDNN_DATA_BOOLEAN", "CUDNN_DATA_BYTE_BOOLEAN")
                          if n in DataType.__members__)


def real_number(value) -> bool:
    """Whether ``value`` is a real number (``numbers.Real``) a scalar takes: not numpy's timedelta64, a duration that
    numpy registers as an integer."""
    return isinstance(value, numbers.Real) and not isinstance(value, np.timedelta64)


def _is_nan(value) -> bool:
    """Whether a real number is NaN (an int never is, however large; a Fraction past float's range neither)."""
    if isinstance(value, numbers.Integral):
        return False
    try:
        return math.isnan(value)
    except (OverflowError, TypeError, ValueError):
        return False


def scalar_value(value, data_type, what="value"):
    """A by-value scalar's value checked against its data type when the graph is built, not when a variant pack
    binds it: an int in range for integer types, a bool for BOOLEAN and BYTE_BOOLEAN, a real number otherwise (None:
    bound later); the Graph then encodes it as packs do, refusing a number past its type's values."""
    if value is None:
        return None
    dt = as_data_type(data_type, "data_type")
    if dt in BOOLEAN_TYPES:
        if not (isinstance(value, bool) or type(value).__name__ == "bool_"):
            raise TypeError(f"{what}: a {dt.name[len(DATA_TYPE_PREFIX):]} scalar takes a bool, not "
                            f"{type(value).__name__}")
        return bool(value)
    if dt in _INT_RANGES:
        v = as_int(value, what)
        lo, hi = _INT_RANGES[dt]
        if not lo <= v <= hi:
            raise ValueError(f"{what}: {v} does not fit in {dt.name}")
        return v
    if isinstance(value, bool) or not real_number(value):
        raise TypeError(f"{what}: a {dt.name} scalar takes a real number, not {type(value).__name__}")
    if _is_nan(value):  # (a graph's constant, as an attribute is: a value bound in a pack is data)
        raise ValueError(f"{what}: {NAN_REFUSED}")
    return value  # (its range: typed.arrays.scalar_code, as variant packs encode it)


MAX_ELEMENTS = graph_limits.MAX_TENSOR_ELEMENTS  # a tensor's span (graph_limits says why)


def packed_strides(dims, order=None):
    """Fully packed strides; ``order`` lists axes from outermost to innermost (default: row-major)."""
    order = list(range(len(dims))) if order is None else list(order)
    strides = [0] * len(dims)
    acc = 1
    for axis in reversed(order):
        strides[axis] = acc
        acc *= max(dims[axis], 1)
    if acc > MAX_ELEMENTS:
        raise ValueError(f"dims: {list(dims)} spans {acc} elements; a cuDNN tensor spans at most {MAX_ELEMENTS}")
    return strides


_ALIAS_EXACT_ELEMENTS = 1 << 22  # up to this many elements, interleaved strides are checked element by element


def elements_alias(dims, strides) -> bool:
    """Whether strides give two elements of a tensor one address (a broadcast stride 0, or axes stepping inside each
    other). Taken axis by axis from the smallest stride, a stride that steps past everything the smaller ones span
    cannot alias (dims of 1 take no step); axes interleaved otherwise are checked element by element, and above
    ``_ALIAS_EXACT_ELEMENTS`` elements taken to alias."""
    if type(dims) is tuple and type(strides) is tuple:  # a tensor signature's: the graph checks ask for every output
        for v in dims + strides:
            if type(v) is not int:  # (equal keys, other arithmetic: an int32's overflows; or no hash at all)
                return _elements_alias(dims, strides)
        return _tuples_alias(dims, strides)
    return _elements_alias(dims, strides)


@functools.lru_cache(maxsize=1024)
def _tuples_alias(dims, strides) -> bool:
    """``_elements_alias`` of tuples of plain ints, remembered."""
    return _elements_alias(dims, strides)


def _elements_alias(dims, strides) -> bool:
    span = 1  # elements from the first to the last of the axes taken so far, plus one
    # (stride, dim) pairs sort by stride; among equal strides the order changes nothing: the second always breaks
    axes = [(s, d) for d, s in zip(dims, strides) if d > 1]
    axes.sort()
    for s, d in axes:
        if s < span:
            break
        span += (d - 1) * s
    else:
        return False
    if any(s == 0 for s, _ in axes) or math.prod(d for _, d in axes) > _ALIAS_EXACT_ELEMENTS:
        return True
    offsets = np.zeros(1, dtype=np.int64)
    for s, d in axes:
        offsets = (offsets[:, None] + np.arange(d, dtype=np.int64) * s).ravel()
    return len(np.unique(offsets)) != len(offsets)


def stride_order(strides):
    """Axes from outermost to innermost by stride (ties keep axis order)."""
    return sorted(range(len(strides)), key=lambda i: (-strides[i], i))


def channels_last(dims, strides) -> bool:
    """Whether a tensor of 4 or more dims with more than one channel has its channels (axis 1) as the fastest axis:
    NHWC and NDHWC, not NCHW."""
    if dims is None or strides is None or len(dims) < 4 or len(strides) != len(dims):
        return False
    return int(dims[1]) > 1 and int(strides[1]) == 1


def strides_like(dims, ref_strides):
    """Packed strides for ``dims`` in the same axis order as ``ref_strides`` (keeps NHWC as NHWC)."""
    if len(ref_strides) != len(dims):
        return packed_strides(dims)
    return packed_strides(dims, stride_order(ref_strides))



def _sequence(values, what):
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{what}: expected a sequence of ints, not {type(values).__name__}")
    try:
        n = len(values)
    except TypeError:
        n = None
    except Exception as e:  # a raising __len__
        raise TypeError(f"{what}: len() failed ({type(e).__name__}: {e})") from None
    if n is not None and (not isinstance(n, int) or n > MAX_RANK * 8):
        raise ValueError(f"{what}: {n} entries; cuDNN tensors have at most {MAX_RANK} dims")
    return user_sequence(values, what, MAX_RANK * 8)


def as_list(values, what) -> list:
    """The entries of a sequence the caller gave, read one by one (a lying or raising ``__len__``/``__iter__`` is a
    TypeError/ValueError naming ``what``)."""
    return _sequence(values, what)


def as_sizes(values, what, minimum=1, rank=None) -> list:
    """A list of exact ints >= ``minimum`` (and ``rank`` of them when given), or TypeError/ValueError naming ``what``."""
    refuse_unordered(values, what)
    items = _sequence(values, what)
    out = [as_int(v, f"{what}[{i}]") for i, v in enumerate(items)]
    for i, v in enumerate(out):
        if v < minimum:
            extra = " (zero and negative sizes are refused: cuDNN divides by them)" if minimum == 1 else ""
            raise ValueError(f"{what}[{i}] is {v}; it must be >= {minimum}{extra}")
        if v > MAX_SIZE:
            raise ValueError(f"{what}[{i}] is {v}; it must be at most {MAX_SIZE} (cuDNN sizes are int64)")
    if rank is not None and len(out) != rank:
        raise ValueError(f"{what}: expected {rank} entries, got {len(out)}")
    return out


def as_dims(dims, what="dims") -> list:
    """Tensor dims: 1 to 8 ints, each >= 1."""
    out = as_sizes(dims, what)
    if not 1 <= len(out) <= MAX_RANK:
        raise ValueError(f"{what}: {len(out)} dims; cuDNN tensors have 1 to {MAX_RANK}")
    return out


def as_strides(strides, rank, what="strides") -> list:
    """Tensor strides: ``rank`` ints, each >= 1."""
    return as_sizes(strides, what, 1, rank)


def pair(v, n, what="value", minimum=0) -> list:
    """One int for every spatial dim, or a sequence of exactly ``n`` ints (each >= ``minimum``)."""
    if type(v) is int and minimum <= v <= MAX_SIZE:
        return [v] * n
    if (type(v) is list or type(v) is tuple) and len(v) == n and \
            all(type(x) is int and minimum <= x <= MAX_SIZE for x in v):
        return list(v)
    if isinstance(v, (list, tuple)) or (hasattr(v, "__iter__") and not isinstance(v, (str, bytes))):
        return as_sizes(v, what, minimum, n)
    x = as_int(v, what)
    if x < minimum:
        raise ValueError(f"{what} is {x}; it must be >= {minimum}")
    if x > MAX_SIZE:
        raise ValueError(f"{what} is {x}; it must be at most {MAX_SIZE} (cuDNN sizes are int64)")
    return [x] * n


def nhwc_strides(dims):
    """Channels-last packed strides for ``[N, C, *spatial]``."""
    if len(dims) < 3:
        raise ValueError(f"layout: 'nhwc' needs [N, C, spatial...] (rank >= 3), not {len(dims)} dims {list(dims)}")
    return packed_strides(dims, [0, *range(2, len(dims)), 1])


def bshd_strides(dims):
    """Strides of a [B, H, S, D] attention tensor stored interleaved as B, S, H, D (cudnn-frontend's default)."""
    b, h, s, d = dims
    return [s * h * d, d, h * d, 1]


_LAYOUTS = {"nhwc": nhwc_strides, "channels_last": nhwc_strides, "nchw": packed_strides,
            "row_major": packed_strides, "packed": packed_strides, "bshd": bshd_strides}


def layout_strides(dims, layout):
    """Strides of a named layout: 'nhwc' (channels last), 'nchw'/'row_major' (packed), 'bshd' (attention)."""
    if not isinstance(layout, str) or layout.lower() not in _LAYOUTS:
        raise ValueError(f"layout: {layout!r} is not one of {', '.join(_LAYOUTS)}")
    if layout.lower() == "bshd" and len(dims) != 4:
        raise ValueError(f"layout: 'bshd' needs [B, H, S, D], not {list(dims)}")
    return _LAYOUTS[layout.lower()](list(dims))

