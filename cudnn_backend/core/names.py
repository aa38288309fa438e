"""The names the package prints and reads for what cuDNN only numbers: data types and unnamed tensors.

**Data types: one table.** Each ``DataType`` is printed one way, its short name: ``fp16``, ``bf16``, ``fp32`` and
``fp64`` for HALF, BFLOAT16, FLOAT and DOUBLE (the names their users write), every other member its C name
lower-cased without ``CUDNN_DATA_`` (``fp8_e4m3``, ``int8``, ``boolean``, ...). Every reader (the ``Graph``
builder, the catalogue, the command line, arrays' dtypes) accepts the short name, that lower-cased C name
(``half``, ``bfloat16``, ``float``, ``double``), the array libraries' dtype names (``float16``, ``float32``,
``float8_e4m3fn``, ...), ``bf16`` and ``fp8`` (the catalogue's label for ``fp8_e4m3``). Tables, messages,
labels, catalogue keys and the command line all print through ``data_type_name``.

**Enumerants** by their C names, as plans' JSON writes them: ``enumerants``, across every enum.

**Tensors without a name** are shown as ``t<uid>`` (``v<uid>`` when virtual; ``tensor`` without a UID):
``default_tensor_name``, read by typed tensors, tensor specs, graph tables and the finalize checks alike.
"""
from __future__ import annotations

import functools
from enum import IntEnum

from cudnn_backend._bindings import enums as _enums
from cudnn_backend._bindings.enums import DataType

__all__ = ["with_article", "NAN_REFUSED", "DATA_TYPE_PREFIX", "DATA_TYPE_NAMES", "DATA_TYPE_ALIASES", "data_type_name",
           "read_data_type", "default_tensor_name", "enumerants", "operation_label", "reads_its_output",
           "written_twice", "uid_names_two_tensors", "virtual_never_written"]

DATA_TYPE_PREFIX = "CUDNN_DATA_"
D = DataType

# the names printed: the usual ones first (tables list data types in this order), then every other member
_SHORT = {"CUDNN_DATA_HALF": "fp16", "CUDNN_DATA_BFLOAT16": "bf16", "CUDNN_DATA_FLOAT": "fp32",
          "CUDNN_DATA_DOUBLE": "fp64"}
_FIRST = ("CUDNN_DATA_HALF", "CUDNN_DATA_BFLOAT16", "CUDNN_DATA_FLOAT", "CUDNN_DATA_FP8_E4M3", "CUDNN_DATA_FP8_E5M2",
          "CUDNN_DATA_INT8", "CUDNN_DATA_DOUBLE")
#: every DataType -> the one name printed for it, the usual data types first
DATA_TYPE_NAMES = {D[m]: _SHORT.get(m, m[len(DATA_TYPE_PREFIX):].lower())
                   for m in dict.fromkeys((*_FIRST, *D.__members__)) if m in D.__members__}

# names read beside the printed ones and the lower-cased C names: the array libraries' dtype names (numpy, torch,
# JAX, ml_dtypes), and the common abbreviations. "bool" is BYTE_BOOLEAN: every library's bool holds a byte an
# element, while cuDNN reads BOOLEAN bit-packed (eight elements a byte)
_ALSO = {"float16": "CUDNN_DATA_HALF", "float32": "CUDNN_DATA_FLOAT", "float64": "CUDNN_DATA_DOUBLE",
         "bool": "CUDNN_DATA_BYTE_BOOLEAN", "fp8": "CUDNN_DATA_FP8_E4M3", "float8_e4m3fn": "CUDNN_DATA_FP8_E4M3",
         "float8_e5m2": "CUDNN_DATA_FP8_E5M2", "float8_e8m0fnu": "CUDNN_DATA_FP8_E8M0"}
#: every name a data type is read by (lower case) -> the DataType
DATA_TYPE_ALIASES = {
    **{m[len(DATA_TYPE_PREFIX):].lower(): D[m] for m in D.__members__},
    **{name: D[m] for name, m in _ALSO.items() if m in D.__members__},
    **{name: member for member, name in DATA_TYPE_NAMES.items()},
}


# a NaN given where cuDNN takes a number (a float attribute, a graph's scalar): nothing means anything by it, and cuDNN
# takes it, computing NaN
NAN_REFUSED = "NaN is not a number cuDNN can compute with; give a real value"


def with_article(noun: str) -> str:
    """``noun`` with its indefinite article ("an OperationGraph", "a Tensor")."""
    return ("an " if noun[:1] in "AEIOUaeiou" else "a ") + noun


def read_data_type(name: str):
    """The DataType a name reads as: its C name or any name of ``DATA_TYPE_ALIASES`` (any case); None for a name
    of none."""
    text = name.strip()
    member = D.__members__.get(text)
    if member is None:  # (not ``or``: CUDNN_DATA_FLOAT is 0)
        text = text.lower()
        member = DATA_TYPE_ALIASES.get(text[len(DATA_TYPE_PREFIX):] if text.startswith("cudnn_data_") else text)
    return member


def data_type_name(value, unknown: str = "?") -> str:
    """The one printed name of a data type (``fp16`` for ``DataType.CUDNN_DATA_HALF``, its value, its C name as
    plan JSON writes it, or any name ``DATA_TYPE_ALIASES`` reads); ``unknown`` for None; the value itself when it
    names no data type."""
    if value is None:
        return unknown
    if isinstance(value, str):
        member = read_data_type(value)
        return value if member is None else DATA_TYPE_NAMES[member]
    try:
        return DATA_TYPE_NAMES[D(int(value))]
    except (TypeError, ValueError):
        return str(value)


def default_tensor_name(uid, virtual=False) -> str:
    """The display name of a tensor given none: ``t<uid>``, ``v<uid>`` for a virtual one, ``tensor`` without a
    UID."""
    if uid is None:
        return "tensor"
    return f"v{uid}" if virtual else f"t{uid}"


@functools.cache
def enumerants() -> dict:
    """{C name: member} of every enumerant of every cuDNN enum the package declares (aliases included), made once."""
    return {name: member for enum in vars(_enums).values()
            if isinstance(enum, type) and issubclass(enum, IntEnum) and enum is not IntEnum
            for name, member in enum.__members__.items()}


_OPERATION_PREFIX, _DESCRIPTOR_SUFFIX = "CUDNN_BACKEND_OPERATION_", "_DESCRIPTOR"


def operation_label(op) -> str:
    """``ConvolutionForward``, ``Pointwise ADD``, ...: an operation descriptor's type without its prefix (and a
    pointwise operation's mode)."""
    dtype = op.descriptor_type
    label = "".join(w.capitalize() for w in dtype.name.removeprefix(_OPERATION_PREFIX)
                    .removesuffix(_DESCRIPTOR_SUFFIX).split("_"))
    if dtype == _enums.DescriptorType.CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
        pw = op.values.get(_enums.AttributeName.CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR)
        mode = pw.values.get(_enums.AttributeName.CUDNN_ATTR_POINTWISE_MODE) if hasattr(pw, "values") else None
        if mode is not None:
            try:
                label += " " + _enums.PointwiseMode(mode).name.replace("CUDNN_POINTWISE_", "")
            except ValueError:
                pass
    return label


def reads_its_output(label, tensor, uid, out_keyword, in_keyword, fix="give the output a tensor of its own") -> str:
    """The refusal of an operation (``label``) whose output ``out_keyword`` is the tensor it reads as
    ``in_keyword``."""
    return (f"{label}: {tensor} (uid {uid}) is both its output {out_keyword} and its input {in_keyword}: an "
            f"operation cannot write a tensor it reads (cuDNN 9.24 and later refuse the graph; earlier releases plan "
            f"it, racing the output over its own input); {fix}")


def uid_names_two_tensors(uid, first, other) -> str:
    """The refusal of a graph whose operations give one UID two different tensors (``first``, ``other``: each use
    described)."""
    return (f"uid {uid} names two different tensors: {first}, and {other} (cuDNN would plan it, reading or writing "
            "one buffer as the other's shape); give every use of a UID the same tensor")


def virtual_never_written(label, keyword, tensor, uid) -> str:
    """The refusal of an operation (``label``) reading as ``keyword`` a virtual tensor no operation of its graph
    writes."""
    return (f"{label}.{keyword} reads the virtual tensor {tensor} (uid {uid}), but no operation of the graph writes "
            "it: a virtual tensor holds only what an operation writes (cuDNN plans the graph, its kernels reading "
            "memory nobody wrote, and refuses to load the plan); make it a real tensor, or add the operation that "
            "writes it")


def written_twice(label, tensor, uid, first_keyword, out_keyword, fix="give the output a tensor of its own") -> str:
    """The refusal of an operation (``label``) writing one tensor as two of its outputs."""
    return (f"{label}: {tensor} (uid {uid}) is both its output {first_keyword} and its output {out_keyword}: each "
            f"output needs memory of its own (cuDNN plans it, and both would be written to one buffer); {fix}")
