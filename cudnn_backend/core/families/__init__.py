"""One module per operation family: its operations, ``Graph`` methods, shape rules, finalize checks, JSON finalize
modes and JSON node schema (see ``_family``). The op checks (``core.op_checks``), the JSON checks
(``core.json_checks``), the ``Graph`` builder and the reference evaluator read from here.

A new family is one new module with a ``FAMILY`` listed in ``FAMILIES``; ``register`` refuses, at import, an
operation no family owns (of the loaded enums or of the JSON tables).
"""
from __future__ import annotations

from cudnn_backend.core.families import (
    attention,
    band,
    conv,
    layout,
    matmul,
    moe,
    norm,
    pointwise,
    quantize,
    reduction,
    resample,
    rng,
    rope,
    signal,
)
from cudnn_backend.core.families._family import Family, FamilyError, operation_type_name, register

__all__ = ["FAMILIES", "FINALIZE_CHECKS", "FAMILY_OF", "FINALIZE_MODE_NEEDS", "Family", "FamilyError", "register",
           "operation_type_name", "family_of"]

FAMILIES = tuple(m.FAMILY for m in (pointwise, norm, reduction, resample, conv, matmul, attention, band, layout, moe,
                                    quantize, rng, rope, signal))
#: descriptor type -> the shape check ``Descriptor.finalize`` runs first; operation C name -> family name;
#: JSON finalizeMode -> the operation C name a graph in that mode needs a node of
FINALIZE_CHECKS, FAMILY_OF, FINALIZE_MODE_NEEDS = register(FAMILIES)
_BY_NAME = {f.name: f for f in FAMILIES}


def family_of(operation) -> Family:
    """The family owning an operation: its descriptor type, C name or short name (``NORM_FORWARD``)."""
    text = getattr(operation, "name", operation)
    if isinstance(text, str) and not text.startswith("CUDNN_"):
        text = operation_type_name(text)
    try:
        return _BY_NAME[FAMILY_OF[text]]
    except KeyError:
        raise ValueError(f"operation: {operation!r} is no operation of any family") from None
