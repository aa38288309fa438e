# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Argument coercion: the user's Python values read as the C values cuDNN takes. No float, bool or string is ever
taken as an int; every failure is a TypeError or ValueError naming what was being read (``what``: a parameter name,
or a (descriptor type, attribute) pair formatted only when a message needs it).

The lowest compiled module of ``core``: ``Descriptor``, ``Handle`` and the operation families' builders
(``core.families._build``) read their arguments through here, so none of them imports another for it.
"""
import enum
import numbers
import operator
from collections.abc import Mapping, Set

from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.long cimport PyLong_AsLongLong, PyLong_CheckExact

from cudnn_backend._bindings.enums import AttributeName, DescriptorType

INT64_MIN = -int("9223372036854775808")
INT64_MAX = int("9223372036854775807")
ADDRESS_LIMIT = int("18446744073709551616")  # 2**64: addresses are below it


def _name_of(enum_cls, value):
    """The member of ``enum_cls`` for ``value``, or ``value`` itself where it is none (newer than the header)."""
    try:
        return enum_cls(value)
    except ValueError:
        return value


cdef str _w(object what):
    """An error message's subject: a string, or (descriptor type, attribute) formatted only when needed."""
    if type(what) is tuple:
        return _what((<tuple>what)[0], (<tuple>what)[1])
    return what


cdef str _what(int dtype, int attr):
    return f"{_name_of(DescriptorType, dtype).name if dtype >= 0 else '?'}.{_attr_name(attr)}"


cdef str _dtype_name(int dtype):
    """A descriptor type's C name for messages (its number when it is none: a never-created descriptor)."""
    m = _name_of(DescriptorType, dtype)
    return m.name if isinstance(m, DescriptorType) else f"descriptor type {dtype}"


cdef str _attr_name(int attr):
    m = _name_of(AttributeName, attr)
    return m.name if isinstance(m, AttributeName) else str(attr)


cdef int _enum_arg(object value, object enum_cls, str what) except? -1:
    """An enum argument (descriptor type, attribute, attribute type) as a C int: a member of ``enum_cls``,
    its C name, or an int (not a bool, not a member of another enum)."""
    if type(value) is enum_cls:
        return <int>value
    if PyLong_CheckExact(value):
        v = value
    elif isinstance(value, str):
        try:
            return int(enum_cls[value])
        except KeyError:
            raise ValueError(f"{what}: {value!r} is not a name of {enum_cls.__name__}") from None
    elif isinstance(value, bool) or isinstance(value, enum.Enum):
        raise TypeError(f"{what}: expected a {enum_cls.__name__} member, its C name or an int, not "
                        f"{type(value).__name__}{'.' + value.name if isinstance(value, enum.Enum) else ''}")
    else:
        v = _index(value, what)
    if v < 0 or v > 0x7FFFFFFF:
        raise ValueError(f"{what}: {v} is not a valid {enum_cls.__name__}")
    return <int>v


cdef object _index(object v, object what):
    """operator.index with every failure as TypeError naming ``what`` (floats, strings and bools refused)."""
    if isinstance(v, bool):
        raise TypeError(f"{_w(what)}: expected an integer, not bool")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{_w(what)}: expected an integer, not {type(v).__name__}") from None
    except Exception as e:  # a raising __index__
        raise TypeError(f"{_w(what)}: cannot read an integer from {type(v).__name__} ({type(e).__name__}: {e})") from None


def as_int(value, what, minimum=None, maximum=None):
    """An exact int from an integer-like value: floats, strings, bools and raising ``__index__`` refused with a
    TypeError naming ``what``; bounds with a ValueError."""
    v = value if PyLong_CheckExact(value) else _index(value, what)
    if minimum is not None and v < minimum:
        raise ValueError(f"{what}: {v} is below the minimum {minimum}")
    if maximum is not None and v > maximum:
        raise ValueError(f"{what}: {v} is above the maximum {maximum}")
    return v


def user_sequence(values, what, limit=4096):
    """The elements of a sequence the caller gave, read one by one (at most ``limit``): a lying ``__len__`` or a
    raising ``__iter__``/``__next__`` is a TypeError/ValueError naming ``what``, never MemoryError or IndexError.
    (``Descriptor.set`` reads its values on its own path, in C.)"""
    try:
        it = iter(values)
    except TypeError:
        raise TypeError(f"{what}: expected a sequence, not {type(values).__name__}") from None
    except Exception as e:
        raise TypeError(f"{what}: iterating failed (the {type(values).__name__} raised {type(e).__name__}: {e})") \
            from None
    out = []
    try:
        for v in it:
            out.append(v)
            if len(out) > limit:
                raise ValueError(f"{what}: more than {limit} entries")
    except (TypeError, ValueError):
        raise
    except Exception as e:
        raise TypeError(f"{what}: iterating failed (the {type(values).__name__} raised {type(e).__name__}: {e})") \
            from None
    return out


def refuse_unordered(values, what, order=""):
    """TypeError naming ``what`` for a set or a mapping where a sequence's order says which element goes where
    (``order``: what that order is, for the message)."""
    if type(values) is not list and type(values) is not tuple and isinstance(values, (Set, Mapping)):
        raise TypeError(f"{what}: a {type(values).__name__} is a set or a mapping, not a sequence in the caller's "
                        f"order{order}; pass a list or tuple")


def stream_address(stream):
    """A CUDA stream argument as its address: an int, a cuda-bindings or cuda.core stream, anything with
    ``__cuda_stream__``, or a torch stream (None: 0, the legacy default stream)."""
    if stream is None:
        return 0
    if isinstance(stream, bool):
        raise TypeError("stream: expected an int, a CUDA stream object or None, not bool")
    if hasattr(stream, "__cuda_stream__"):
        proto = stream.__cuda_stream__
        proto = proto() if callable(proto) else proto
        if not isinstance(proto, tuple) or len(proto) != 2:
            raise TypeError(f"stream: the {type(stream).__name__}'s __cuda_stream__() gave {proto!r}, not the "
                            "(version, address) pair of the CUDA stream protocol")
        return as_int(proto[1], "stream", 0, ADDRESS_LIMIT - 1)
    if hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
        return as_int(stream.cuda_stream, "stream", 0, ADDRESS_LIMIT - 1)
    if isinstance(stream, numbers.Integral):
        return as_int(stream, "stream", 0, ADDRESS_LIMIT - 1)
    if isinstance(stream, (numbers.Number, str, bytes, bytearray)):  # int() would truncate 1.5, or parse "7"
        raise TypeError(f"stream: expected an int, a CUDA stream object or None, not {type(stream).__name__}")
    try:
        return as_int(int(stream), "stream", 0, ADDRESS_LIMIT - 1)  # cuda-bindings CUstream / cudaStream_t
    except (TypeError, ValueError):
        raise TypeError(f"stream: cannot use a {type(stream).__name__} as a CUDA stream") from None


cdef int64_t _int64(object v, object what) except? -1:
    cdef int64_t out
    if PyLong_CheckExact(v):
        try:
            return PyLong_AsLongLong(v)
        except OverflowError:
            raise ValueError(f"{_w(what)}: {v} does not fit in 64 bits") from None
    i = _index(v, what)
    try:
        out = PyLong_AsLongLong(i)
    except OverflowError:
        raise ValueError(f"{_w(what)}: {i} does not fit in 64 bits") from None
    return out


cdef double _real(object v, object what) except? -1.0:
    if type(v) is float:
        return PyFloat_AS_DOUBLE(v)
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{_w(what)}: expected a real number, not {type(v).__name__}")
    try:
        return float(v)
    except OverflowError:
        raise ValueError(f"{_w(what)}: {v} does not fit in a double") from None
    except Exception as e:
        raise TypeError(f"{_w(what)}: cannot read a number from {type(v).__name__} ({type(e).__name__}: {e})") from None


cdef bint _is_int_like(object v):
    return (PyLong_CheckExact(v) or isinstance(v, numbers.Integral)) and not isinstance(v, bool)
