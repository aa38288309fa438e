"""Argument coercion shared by the operation families: data types and enum choices by member, C name,
short name or value; version gates."""
from __future__ import annotations

import enum
import numbers

from cudnn_backend._bindings.enums import DataType
from cudnn_backend.core._descriptor import as_int, check_available
from cudnn_backend.core.versions import OVERRIDE_SHAPES_NEEDS

__all__ = ["as_data_type", "as_choice", "require", "scalar_value", "OVERRIDE_SHAPES_NEEDS"]

_DATA_TYPE_NAMES = {
    "half": DataType.CUDNN_DATA_HALF, "float16": DataType.CUDNN_DATA_HALF, "fp16": DataType.CUDNN_DATA_HALF,
    "float": DataType.CUDNN_DATA_FLOAT, "float32": DataType.CUDNN_DATA_FLOAT, "fp32": DataType.CUDNN_DATA_FLOAT,
    "bfloat16": DataType.CUDNN_DATA_BFLOAT16, "bf16": DataType.CUDNN_DATA_BFLOAT16,
    "double": DataType.CUDNN_DATA_DOUBLE, "float64": DataType.CUDNN_DATA_DOUBLE,
    "int8": DataType.CUDNN_DATA_INT8, "uint8": DataType.CUDNN_DATA_UINT8, "int32": DataType.CUDNN_DATA_INT32,
    "int64": DataType.CUDNN_DATA_INT64, "bool": DataType.CUDNN_DATA_BOOLEAN, "boolean": DataType.CUDNN_DATA_BOOLEAN,
    "fp8_e4m3": DataType.CUDNN_DATA_FP8_E4M3, "fp8_e5m2": DataType.CUDNN_DATA_FP8_E5M2,
}


def as_data_type(value, what="data_type") -> DataType:
    """A DataType from a member, its C name, a short name ("half", "float", "bfloat16", "fp8_e4m3", ...) or an int."""
    return as_choice(DataType, value, what, "CUDNN_DATA_", _DATA_TYPE_NAMES)


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
        for candidate in (key, key.upper(), prefix + key.upper()):
            if candidate in enum_cls.__members__:
                return enum_cls[candidate]
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


def scalar_value(value, data_type, what="value"):
    """A by-value scalar's value checked against its data type when the graph is built, not when a variant pack
    binds it: an int in range for integer types, a bool for BOOLEAN, a real number otherwise (None: bound later)."""
    if value is None:
        return None
    dt = as_data_type(data_type, "data_type")
    if dt == DataType.CUDNN_DATA_BOOLEAN:
        if not (isinstance(value, bool) or type(value).__name__ == "bool_"):
            raise TypeError(f"{what}: a BOOLEAN scalar takes a bool, not {type(value).__name__}")
        return bool(value)
    if dt in _INT_RANGES:
        v = as_int(value, what)
        lo, hi = _INT_RANGES[dt]
        if not lo <= v <= hi:
            raise ValueError(f"{what}: {v} does not fit in {dt.name}")
        return v
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what}: a {dt.name} scalar takes a real number, not {type(value).__name__}")
    return value
