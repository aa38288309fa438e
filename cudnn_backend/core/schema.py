"""The attribute schema: for every backend descriptor type, its attributes, and for every attribute
its accepted attribute types, element count, role and (for descriptor-valued ones) the descriptor
types it accepts.

Generated from cudnn_graph.h by tools/generate.py (``_bindings/schema.json``); this module only
reads it (the checked core turns it into C tables). The checked ``Descriptor.set/get/finalize`` consult it before cuDNN is called, because
cuDNN can abort the process when handed, say, a descriptor of the wrong type.
"""
from __future__ import annotations

import json
import pathlib
from dataclasses import dataclass
from functools import lru_cache

from cudnn_backend._bindings.enums import AttributeName, AttributeType, DescriptorType

_SCHEMA_PATH = pathlib.Path(__file__).resolve().parent.parent / "_bindings" / "schema.json"

REQUIRED, OPTIONAL, GET_ONLY = "required", "optional", "get_only"


@dataclass(frozen=True)
class AttributeSpec:
    name: AttributeName
    descriptor: DescriptorType
    types: tuple[AttributeType, ...]  # accepted attribute types, preferred first
    count_min: int
    count_max: int | None  # None: unbounded
    role: str  # "required", "optional" or "get_only"
    default: str | None
    accepts: tuple[DescriptorType, ...] | None  # descriptor types a descriptor-valued attribute takes
    since: str
    deprecated: bool
    get_type: AttributeType | None = None  # what cuDNN's Get wants, when it differs from the Set types
    get_unsupported: str | None = None  # why the generic Get is refused (it would crash cuDNN)
    set_unsupported: str | None = None  # why Set is refused (cuDNN would read memory we cannot describe)
    host_data: bool = False  # VOID_PTR elements address host data cuDNN reads (set takes bytes, not ints)
    get_max_count: int | None = None  # cuDNN's count query is wrong here: get() asks for this many
    value_min: int | None = None  # integer elements must be >= this (sizes >= 1, paddings >= 0, ...)
    io: str | None = None  # "input" / "output" for an operation's tensor attributes

    @property
    def settable(self) -> bool:
        """Whether the attribute can be set (every role but get-only)."""
        return self.role != GET_ONLY

    def count_text(self) -> str:
        """The accepted element count in words: "exactly 1", "at least 0", "1 to 8"."""
        if self.count_max == self.count_min:
            return f"exactly {self.count_min}"
        if self.count_max is None:
            return f"at least {self.count_min}"
        return f"{self.count_min} to {self.count_max}"


@dataclass(frozen=True)
class DescriptorSpec:
    name: DescriptorType
    since: str
    attribute_prefix: str
    attributes: tuple[AttributeName, ...]

    @property
    def required(self) -> tuple[AttributeName, ...]:
        """The attributes that must be set before this descriptor type finalizes."""
        return tuple(a for a in self.attributes if ATTRIBUTES[a].role == REQUIRED)


@lru_cache(maxsize=1)
def raw() -> dict:
    """The schema as the generator wrote it (JSON-compatible dict)."""
    return json.loads(_SCHEMA_PATH.read_text())


def _build():
    data = raw()
    attributes = {}
    for name, a in data["attributes"].items():
        attributes[AttributeName[name]] = AttributeSpec(
            name=AttributeName[name],
            descriptor=DescriptorType[a["descriptor"]],
            types=tuple(AttributeType[t] for t in a["types"]),
            count_min=int(a["count_min"]),
            count_max=None if a["count_max"] is None else int(a["count_max"]),
            role=a["role"],
            default=a.get("default"),
            accepts=None if a.get("accepts") is None else tuple(DescriptorType[t] for t in a["accepts"]),
            since=a["since"],
            deprecated=bool(a.get("deprecated", False)),
            get_type=AttributeType[a["get_type"]] if a.get("get_type") else None,
            get_unsupported=a.get("get_unsupported"),
            set_unsupported=a.get("set_unsupported"),
            host_data=bool(a.get("host_data", False)),
            get_max_count=a.get("get_max_count"),
            value_min=a.get("value_min"),
            io=a.get("io"),
        )
    descriptors = {}
    for name, d in data["descriptors"].items():
        descriptors[DescriptorType[name]] = DescriptorSpec(
            name=DescriptorType[name],
            since=d["since"],
            attribute_prefix=d["attribute_prefix"],
            attributes=tuple(AttributeName[x] for x in d["attributes"]),
        )
    return attributes, descriptors


ATTRIBUTES, DESCRIPTORS = _build()
HEADER_VERSION: str = raw()["header_version"]


def attribute(name) -> AttributeSpec:
    """The spec of an attribute, given as AttributeName, int or C name."""
    return ATTRIBUTES[_as_attribute(name)]


def descriptor(dtype) -> DescriptorSpec:
    """The spec of a descriptor type, given as DescriptorType, int or C name."""
    return DESCRIPTORS[_as_descriptor_type(dtype)]


def _as_attribute(name) -> AttributeName:
    return AttributeName[name] if isinstance(name, str) else AttributeName(name)


def _as_descriptor_type(dtype) -> DescriptorType:
    return DescriptorType[dtype] if isinstance(dtype, str) else DescriptorType(dtype)
