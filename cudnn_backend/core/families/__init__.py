"""One module per operation family, holding everything about it: its ``FAMILY`` (a ``Family``: operations,
``Graph`` methods and the mixin class that defines them, finalize checks, JSON finalize modes, reference ops;
the JSON node schema through ``node_schema``), its shape rules, its finalize checks, its ``Graph`` methods and its
fp64 reference ops. The op checks (``core.op_checks``), the JSON checks (``core.json_checks``), the ``Graph``
builder (``graph.Graph`` inherits every family's mixin) and the reference evaluator read from here.

A new family is one new module: every module of this package whose name does not start with ``_`` and that has a
``FAMILY`` is found here (``pkgutil``, in name order). ``register`` refuses, at import, an operation no family owns
(of the loaded enums or of the JSON tables), one owned twice, and a check, mode or reference op of an operation its
family does not own. What the family modules share lives in ``_family`` (the declaration and its registry),
``_build`` (reading the user's values), ``_checks`` (the finalize checks' helpers) and ``_reference`` (the
evaluator's ``Op`` and blocks). The family modules import only core and below: their ``Graph`` methods make
descriptors through ``GraphCore`` (``self._operation("ROPE_FWD", ...)``), not through the typed classes.
"""
from __future__ import annotations

import importlib
import pkgutil

from cudnn_backend.core.families._family import (
    Family,
    FamilyError,
    graph_mixins,
    operation_type_name,
    finalize_check_floors,
    json_finalize_checks,
    reference_ops,
    register,
    shape_rules,
)

__all__ = ["FAMILIES", "FINALIZE_CHECKS", "FINALIZE_CHECK_FLOORS", "FAMILY_OF", "FINALIZE_MODE_NEEDS", "GRAPH_MIXINS", "JSON_FINALIZE_CHECKS",
           "REFERENCE_OPS",
           "SHAPE_RULES", "Family", "FamilyError", "register", "operation_type_name", "family_of", "family_modules"]


def family_modules(package=__name__, path=__path__) -> list:
    """The family modules of a package: each module whose name does not start with ``_`` and that has a
    ``FAMILY``, in name order (a deterministic order: the ``Graph`` bases and every table follow it)."""
    found = []
    for info in sorted(pkgutil.iter_modules(path), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        if isinstance(getattr(module, "FAMILY", None), Family):
            found.append(module)
    return found


FAMILIES = tuple(m.FAMILY for m in family_modules())
#: descriptor type -> the shape check ``Descriptor.finalize`` runs first; operation C name -> family name;
#: JSON finalizeMode -> the operation C name a graph in that mode needs a node of
FINALIZE_CHECKS, FAMILY_OF, FINALIZE_MODE_NEEDS = register(FAMILIES)
#: descriptor type -> the element count below which its finalize check adds nothing to cuDNN's (skipped there)
FINALIZE_CHECK_FLOORS = finalize_check_floors(FAMILIES)
#: operation C name -> (finalize check, {AttributeName: plan JSON member}): the checks a plan's nodes get too
JSON_FINALIZE_CHECKS = json_finalize_checks(FAMILIES)
#: operation descriptor type value -> the reference evaluator's Op class
REFERENCE_OPS = reference_ops(FAMILIES)
#: the ``Graph`` mixins, one per family that has methods beyond ``GraphCore``'s
GRAPH_MIXINS = graph_mixins(FAMILIES)
#: shape rule name -> function: every family's public shape rules (``cudnn_backend.shapes``)
SHAPE_RULES = shape_rules(FAMILIES)
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
