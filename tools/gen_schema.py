#!/usr/bin/env python3
"""Attribute-schema extractor for cuDNN's backend (graph) API.

Reads ``cudnn_graph.h`` and produces, for every backend descriptor type and
every ``CUDNN_ATTR_*`` attribute, what a binding needs in order to call
``cudnnBackendSetAttribute`` / ``cudnnBackendGetAttribute`` safely: accepted
attribute types, element-count bounds, role (required / optional / get-only),
a short default, and -- for descriptor-valued attributes -- the descriptor
types accepted.

Sources, in order of trust:

1. The enums ``cudnnBackendAttributeName_t``, ``cudnnBackendAttributeType_t``
   and ``cudnnBackendDescriptorType_t`` are the ground truth for *which*
   attributes / types / descriptors exist, their values, ``@since`` and
   deprecation.
2. Every attribute is assigned to its descriptor type by its NAME (prefix),
   never by the doc block it happens to be described in (doc blocks in the
   header are sometimes attached to the wrong enumerant).
3. Type / count / role / default / accepted descriptor types come from any doc
   comment anywhere in the header that has an entry for the attribute's name
   (two layouts are understood, see ``_parse_doc_entries``).
4. What is not documented, or is documented wrongly, comes from the explicit
   override table in ``schema_overrides.py`` (each entry says why).

Rules used to read the docs (documented here because they are choices):

* types: every ``CUDNN_TYPE_*`` named in the parenthesised spec after the
  attribute name, or in a ``- CUDNN_TYPE_...`` bullet of its entry, in the
  order written (first = preferred).  Doc spellings that differ from the enum
  are mapped through ``DOC_TYPE_ALIASES``.
* counts: ``1 element``/``one element`` -> 1..1; ``N+ elements`` -> N..inf;
  ``one or more`` -> 1..inf; ``zero or more`` -> 0..inf;
  ``1..CUDNN_MAX_DIMS`` -> 1..8; ``at most X`` -> 1..X (a zero-length array
  is never meaningful to set); ``many``/``elementCount`` elements -> 1..inf;
  no count stated -> 1..1 (scalar).  ``CUDNN_MAX_DIMS`` is not defined by the
  header; its ``CUDNN_DIM_MAX`` (8) is used.
* role: ``Read-only``/``Get-only`` -> get_only; else an explicit
  ``Optional`` (even "optional, but required if ...") -> optional; else an
  unconditional ``Required attribute`` / ``This attribute is required.`` /
  ``Required to be set before finalization.`` -> required; a conditional
  requirement ("required for ...", "required only ...", "... if ...") ->
  optional; nothing stated -> optional.
* default: ``Default value is X`` / ``Default is X`` / ``default X`` /
  ``the default value is X`` / ``X is default``; "None" means no default
  (null); ``0.0f`` is written ``0.0``.
* accepts: ``CUDNN_BACKEND_*_DESCRIPTOR`` names in the spec / type bullet, or
  after "Descriptor type" in the entry's prose; the wildcard
  ``CUDNN_BACKEND_OPERATION_*_DESCRIPTOR`` expands to every operation
  descriptor type.

``attribute_prefix`` of a descriptor: the naming prefix used to assign
attributes to it (e.g. ``CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_``) when all
of its attributes start with it; otherwise the longest prefix, cut after an
underscore, shared by all its attributes (for a descriptor with one attribute,
that is the name minus its last word).
"""
from __future__ import annotations

import json
import os
import re
import sys

try:  # imported as tools.gen_schema or run as a script from tools/
    from . import schema_overrides as ov  # type: ignore
except ImportError:  # pragma: no cover - script mode
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import schema_overrides as ov  # type: ignore

ROLES = ("required", "optional", "get_only")
FIELDS = ("types", "count_min", "count_max", "role", "default", "accepts", "get_type", "get_unsupported",
          "set_unsupported", "host_data", "get_max_count")

# --------------------------------------------------------------------------
# Enum parsing
# --------------------------------------------------------------------------

_TOKEN_RE = re.compile(
    r"""
    (?P<trail>/\*\*<(?P<trail_text>.*?)\*/)          # /**< trailing doc */
  | (?P<block>/\*(?P<block_text>.*?)\*/)             # /* or /** block */
  | (?P<line>//[^\n]*)                                # // comment
  | (?P<enumerant>(?P<name>[A-Za-z_]\w*)
        (?P<dep>\s+CUDNN_DEPRECATED_ENUM)?
        \s*(?:=\s*(?P<value>[^,/}]+?))?\s*(?=,|/|$))
  | (?P<comma>,)
    """,
    re.S | re.X,
)
_SINCE_RE = re.compile(r"@since\s+cuDNN\s+(\d+(?:\.\d+){1,2})")


def _find_enum_body(text: str, enum_name: str) -> str:
    m = re.search(r"typedef\s+enum\s*\{(.*?)\}\s*" + re.escape(enum_name) + r"\b", text, re.S)
    if m is None:
        raise ValueError(f"enum {enum_name} not found in header")
    # The non-greedy match stops at the first '}' followed by the name; make
    # sure we took the *last* 'typedef enum {' before it.
    body = m.group(1)
    k = body.rfind("typedef enum")
    if k >= 0:
        body = body[body.index("{", k) + 1:]
    return body


def _norm_version(v: str) -> str:
    parts = v.split(".")
    while len(parts) < 3:
        parts.append("0")
    return ".".join(parts[:3])


def parse_enum(text: str, enum_name: str) -> list[dict]:
    """Enumerants of ``enum_name`` in source order: name, value, since,
    deprecated, brief (trailing comment text), doc (preceding doc block)."""
    body = _find_enum_body(text, enum_name)
    out: list[dict] = []
    known: dict[str, int] = {}
    pending_doc = None
    last = None
    next_value = 0
    for m in _TOKEN_RE.finditer(body):
        if m.group("trail"):
            if last is not None:
                t = m.group("trail_text")
                last["brief"] = (last.get("brief", "") + " " + t).strip()
            continue
        if m.group("block"):
            bt = m.group("block_text")
            if bt.startswith("*"):
                pending_doc = bt[1:]
            continue
        if m.group("line") or m.group("comma"):
            continue
        name = m.group("name")
        if not name.startswith("CUDNN_"):
            continue
        raw = m.group("value")
        if raw is None:
            value = next_value
        else:
            raw = raw.strip()
            try:
                value = int(raw, 0)
            except ValueError:
                if raw in known:
                    value = known[raw]
                else:
                    raise ValueError(f"{enum_name}: cannot evaluate value {raw!r} of {name}")
        next_value = value + 1
        known[name] = value
        last = {"name": name, "value": value, "dep_macro": bool(m.group("dep")),
                "doc": pending_doc, "brief": ""}
        pending_doc = None
        out.append(last)
    for e in out:
        s = _SINCE_RE.search(e["brief"])
        e["since"] = _norm_version(s.group(1)) if s else None
        e["deprecated"] = e.pop("dep_macro") or "@deprecated" in e["brief"]
    return out


def parse_header_version(text: str) -> str:
    parts = []
    for k in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(r"#\s*define\s+CUDNN_GRAPH_" + k + r"\s+(\d+)", text)
        if m is None:
            raise ValueError(f"CUDNN_GRAPH_{k} not defined in header")
        parts.append(m.group(1))
    return ".".join(parts)


def parse_max_dims(text: str) -> int:
    for macro in ("CUDNN_MAX_DIMS", "CUDNN_DIM_MAX"):
        m = re.search(r"#\s*define\s+" + macro + r"\s+(\d+)", text)
        if m:
            return int(m.group(1))
    return 8


# --------------------------------------------------------------------------
# Doc-comment parsing
# --------------------------------------------------------------------------

_DOC_BLOCK_RE = re.compile(r"/\*\*(?!<)(.*?)\*/", re.S)
_ENTRY_HEAD_RE = re.compile(r"^(?P<indent>\s*)(?:-\s+)?(?P<name>CUDNN_ATTR_[A-Z0-9_]+)\s*(?:\((?P<spec>.*)\))?\s*$")


def _doc_lines(block: str) -> list[str]:
    lines = []
    for raw in block.split("\n"):
        s = re.sub(r"^\s*\*(?!/) ?", "", raw, count=1)
        lines.append(s.rstrip())
    return lines


def _indent(s: str) -> int:
    return len(s) - len(s.lstrip(" "))


def _parse_doc_entries(header_text: str) -> list[dict]:
    """Every attribute entry in every doc comment of the header.

    Layout A::   - CUDNN_ATTR_X (CUDNN_TYPE_Y, 1 element)
                       prose ... Required attribute.
    Layout B::     CUDNN_ATTR_X
                     prose
                     - CUDNN_TYPE_Y; one element of descriptor type Z.
                     - Optional attribute.
    Several heads in a row (no body between them) share the body that
    follows.  An entry ends at the next head, or at a non-blank line indented
    no deeper than its head.
    """
    entries: list[dict] = []
    for bm in _DOC_BLOCK_RE.finditer(header_text):
        line0 = header_text.count("\n", 0, bm.start()) + 1
        lines = _doc_lines(bm.group(1))
        group: list[dict] = []
        body_started = False
        for i, ln in enumerate(lines):
            hm = _ENTRY_HEAD_RE.match(ln)
            if hm:
                if body_started:
                    group = []
                    body_started = False
                e = {"name": hm.group("name"), "spec": (hm.group("spec") or "").strip(),
                     "indent": _indent(ln), "body": [], "line": line0 + i}
                group.append(e)
                entries.append(e)
                continue
            if not group:
                continue
            if not ln.strip():
                continue
            if _indent(ln) <= group[0]["indent"]:
                group = []
                body_started = False
                continue
            body_started = True
            for e in group:
                e["body"].append(ln.strip())
    return entries


_TYPE_TOKEN_RE = re.compile(r"CUDNN_TYPE_[A-Z0-9_]+")
_DESC_TOKEN_RE = re.compile(r"CUDNN_BACKEND_[A-Z0-9_*]+_DESCRIPTOR")


def _type_bullets(body: list[str]) -> list[str]:
    """The text of '- CUDNN_TYPE_...' bullets (with continuation lines)."""
    out: list[str] = []
    cur = None
    for ln in body:
        if ln.startswith("- "):
            if cur is not None:
                out.append(cur)
            cur = ln[2:] if ln[2:].lstrip().startswith("CUDNN_TYPE_") else None
        elif cur is not None:
            cur += " " + ln
    if cur is not None:
        out.append(cur)
    return out


def _parse_count(text: str, max_dims: int):
    t = text.replace("CUDNN_MAX_DIMS", str(max_dims)).replace("CUDNN_DIM_MAX", str(max_dims))
    m = re.search(r"(\d+)\s*\.\.\s*(\d+)(?:\s*-\s*(\d+))?", t)
    if m:
        hi = int(m.group(2)) - int(m.group(3) or 0)
        return int(m.group(1)), hi
    m = re.search(r"at most\s+(\d+)(?:\s*-\s*(\d+))?", t)
    if m:
        return 1, int(m.group(1)) - int(m.group(2) or 0)
    m = re.search(r"(\d+)\s*\+\s*elements?", t)
    if m:
        return int(m.group(1)), None
    if re.search(r"\bone or more\b", t, re.I):
        return 1, None
    if re.search(r"\bzero or more\b", t, re.I):
        return 0, None
    if re.search(r"\b(many|elementCount)\s+elements?\b", t):
        return 1, None
    if re.search(r"\b(1|one)\s+elements?\b", t, re.I):
        return 1, 1
    return None


def _role_of(text: str):
    if re.search(r"\b(read-only|get-only)\b", text, re.I):
        return "get_only"
    if re.search(r"\boptional\b", text, re.I):
        return "optional"
    for m in re.finditer(r"\b(required attribute|this attribute is required|required to be set before finalization)\b"
                         r"(?P<rest>[^.;]*)", text, re.I):
        rest = m.group("rest").strip()
        if not rest or rest.startswith(".") or re.match(r"^(attribute)?$", rest):
            return "required"
    if re.search(r"\brequired\b", text, re.I):
        return "optional"  # conditionally required
    return None


_DEFAULT_RES = [
    re.compile(r"\b[Dd]efault value is\s+(?P<v>.+?)(?=\.\s|\.$|\s\(|;|$)"),
    re.compile(r"\b[Dd]efault is\s+(?P<v>.+?)(?=\.\s|\.$|\s\(|;|$)"),
    re.compile(r"\b[Dd]efault\s+(?P<v>-?[0-9][0-9.]*f?)\b"),
    re.compile(r"\b(?P<v>-?[0-9][0-9.]*) is (?:the )?default\b"),
]


def _default_of(text: str):
    for rx in _DEFAULT_RES:
        m = rx.search(text)
        if m:
            v = m.group("v").strip().rstrip(".")
            if v.lower() in ("none",):
                return None
            v = re.sub(r"^(-?\d+\.\d+)f$", r"\1", v)  # 0.0f -> 0.0
            return v
    return None


def _interpret_entry(e: dict, max_dims: int, op_descs: list[str]) -> dict:
    spec = e["spec"]
    body = e["body"]
    bullets = _type_bullets(body)
    prose = " ".join(body)
    info: dict = {}

    type_src = " ".join([spec] + bullets)
    types = []
    for t in _TYPE_TOKEN_RE.findall(type_src):
        t = ov.DOC_TYPE_ALIASES.get(t, t)
        if t not in types:
            types.append(t)
    if types:
        info["types"] = types

    cnt = _parse_count(spec, max_dims) if spec else None
    if cnt is None and bullets:
        cnt = _parse_count(" ".join(bullets), max_dims)
    if cnt is None and types:
        cnt = (1, 1)  # scalar when no count is stated
    if cnt is not None:
        info["count_min"], info["count_max"] = cnt

    role = _role_of(prose)
    if role is not None:
        info["role"] = role

    d = _default_of(prose)
    if d is not None:
        info["default"] = d

    acc: list[str] = []
    for src in [spec] + bullets + re.findall(r"[Dd]escriptor type\s+(CUDNN_BACKEND_[A-Z0-9_*]+_DESCRIPTOR)", prose):
        for tok in _DESC_TOKEN_RE.findall(src):
            expanded = op_descs if tok == "CUDNN_BACKEND_OPERATION_*_DESCRIPTOR" else [tok]
            for x in expanded:
                if x not in acc:
                    acc.append(x)
    if acc:
        info["accepts"] = acc
    return info


# --------------------------------------------------------------------------
# Descriptor assignment
# --------------------------------------------------------------------------

def _naming_prefixes(desc_name: str) -> list[str]:
    core = desc_name[len("CUDNN_BACKEND_"):-len("_DESCRIPTOR")]
    variants = {core}
    for a, b in ov.PREFIX_ABBREVIATIONS:
        for v in list(variants):
            if a in v:
                variants.add(v.replace(a, b))
    prefixes = ["CUDNN_ATTR_" + v + "_" for v in variants]
    prefixes += ov.EXTRA_DESCRIPTOR_PREFIXES.get(desc_name, [])
    return sorted(set(prefixes), key=len, reverse=True)


def _common_prefix(names: list[str]) -> str:
    split = [n.split("_") for n in names]
    k = 0
    while all(len(s) > k + 1 for s in split) and len({s[k] for s in split}) == 1:
        k += 1
    return "_".join(split[0][:k]) + "_"


def _assign(attr_names: list[str], desc_names: list[str]):
    """attr -> (descriptor, matched prefix); longest matching prefix wins."""
    table = []
    for d in desc_names:
        for p in _naming_prefixes(d):
            table.append((p, d))
    table.sort(key=lambda x: len(x[0]), reverse=True)
    out = {}
    for a in attr_names:
        if a in ov.ATTRIBUTE_DESCRIPTOR:
            out[a] = (ov.ATTRIBUTE_DESCRIPTOR[a], None)
            continue
        hits = [(p, d) for p, d in table if a.startswith(p)]
        if not hits:
            raise ValueError(f"no descriptor type's naming prefix matches {a}; add it to "
                             "schema_overrides.ATTRIBUTE_DESCRIPTOR")
        best = len(hits[0][0])
        ds = {d for p, d in hits if len(p) == best}
        if len(ds) != 1:
            raise ValueError(f"{a}: ambiguous descriptor assignment {sorted(ds)}")
        out[a] = (hits[0][1], hits[0][0])
    return out


# --------------------------------------------------------------------------
# Main entry point
# --------------------------------------------------------------------------

def extract_schema(header_text: str) -> dict:
    """Build the schema dict (see module docstring) from cudnn_graph.h text."""
    return extract_schema_with_report(header_text)[0]


def extract_schema_with_report(header_text: str) -> tuple[dict, dict]:
    """Like extract_schema, plus a report (not package data)."""
    return build_schema(parse_header(header_text))


def parse_header(header_text: str) -> dict:
    """What the schema needs from the header, as plain data without the header's prose: the three
    enums (names, values, @since, deprecation) and each documented attribute entry, interpreted
    (types, counts, role, default, accepted descriptor types). tools/generate.py keeps this in
    tools/cudnn_graph_ir.json, so the schema can be rebuilt (and checked in CI) without the header."""
    max_dims = parse_max_dims(header_text)
    descs = parse_enum(header_text, "cudnnBackendDescriptorType_t")
    op_descs = [d["name"] for d in descs if d["name"].startswith("CUDNN_BACKEND_OPERATION_")]
    return {
        "header_version": parse_header_version(header_text),
        "max_dims": max_dims,
        "attributes": parse_enum(header_text, "cudnnBackendAttributeName_t"),
        "types": parse_enum(header_text, "cudnnBackendAttributeType_t"),
        "descriptors": descs,
        "doc_entries": [{"name": e["name"], "line": e["line"], "info": _interpret_entry(e, max_dims, op_descs)}
                        for e in _parse_doc_entries(header_text)],
    }


def build_schema(raw: dict) -> tuple[dict, dict]:
    """The schema and a report from ``parse_header``'s data and the override tables."""
    version = raw["header_version"]
    max_dims = raw["max_dims"]
    attrs, types, descs = raw["attributes"], raw["types"], raw["descriptors"]
    type_names = {t["name"] for t in types}
    desc_names = [d["name"] for d in descs]
    desc_set = set(desc_names)
    attr_names = [a["name"] for a in attrs]
    attr_set = set(attr_names)

    # ---- documentation, by attribute name
    doc_info: dict[str, dict] = {}
    notes: list[str] = []
    for e in raw["doc_entries"]:
        name = ov.DOC_NAME_ALIASES.get(e["name"], e["name"])
        if name not in attr_set:
            if e["name"] not in ov.DOC_ONLY_NAMES:
                notes.append(f"line {e['line']}: doc entry for unknown attribute {e['name']} ignored")
            continue
        info = e["info"]
        cur = doc_info.setdefault(name, {})
        for k, v in info.items():
            if k in cur and cur[k] != v:
                notes.append(f"line {e['line']}: {name}.{k}: doc says {v!r}, earlier doc said {cur[k]!r}; kept first")
            else:
                cur.setdefault(k, v)

    assignment = _assign(attr_names, desc_names)

    # ---- attributes
    out_attrs: dict[str, dict] = {}
    overridden: dict[str, list[str]] = {}
    for a in attrs:
        name = a["name"]
        info = dict(doc_info.get(name, {}))
        o = ov.ATTRIBUTE_OVERRIDES.get(name, {})
        for k, v in o.items():
            if k not in FIELDS:
                raise ValueError(f"override for {name}: unknown field {k}")
            info[k] = v
        if o:
            overridden[name] = sorted(o)
        tlist = list(info.get("types") or [])
        for t in tlist:
            if t not in type_names:
                raise ValueError(f"{name}: unknown attribute type {t}")
        is_desc = "CUDNN_TYPE_BACKEND_DESCRIPTOR" in tlist
        accepts = info.get("accepts") if is_desc else None
        if accepts:
            for d in accepts:
                if d not in desc_set:
                    raise ValueError(f"{name}: unknown descriptor type {d} in accepts")
        cmin = info.get("count_min")
        cmax = info.get("count_max", 1 if cmin is not None else None)
        if cmin is None:
            cmin, cmax = 1, 1
        out_attrs[name] = {
            "value": a["value"],
            "since": a["since"],
            "deprecated": a["deprecated"],
            "descriptor": assignment[name][0],
            "types": tlist,
            "count_min": cmin,
            "count_max": cmax,
            "role": info.get("role", "optional"),
            "default": info.get("default"),
            "accepts": list(accepts) if accepts else None,
            # the attribute type cuDNN's Get wants when it differs from the Set type (same values)
            "get_type": info.get("get_type"),
            # why the generic Get must not be called (it crashes cuDNN, or is not a get at all)
            "get_unsupported": info.get("get_unsupported"),
            # why set() is refused (cuDNN would read memory Python cannot describe safely)
            "set_unsupported": info.get("set_unsupported"),
            # VOID_PTR elements point at host data cuDNN reads: set() takes bytes-like values, not ints
            "host_data": bool(info.get("host_data", False)),
            # the count query is wrong for this attribute: get() asks for up to this many elements
            "get_max_count": info.get("get_max_count"),
            # integer elements must be >= this (sizes, strides, paddings): refused before cuDNN divides by them
            "value_min": ov.VALUE_MIN.get(name),
            # "input"/"output" for an operation's tensor attributes (what graph checks and tables need)
            "io": _io_of(name, assignment[name][0], accepts),
        }

    # ---- descriptors
    by_desc: dict[str, list[str]] = {d: [] for d in desc_names}
    for name in sorted(attr_names, key=lambda n: out_attrs[n]["value"]):
        by_desc[out_attrs[name]["descriptor"]].append(name)
    out_descs: dict[str, dict] = {}
    for d in descs:
        members = by_desc[d["name"]]
        naming = _naming_prefixes(d["name"])
        used = [assignment[m][1] for m in members if assignment[m][1]]
        prefix = None
        if d["name"] in ov.DESCRIPTOR_PREFIX:
            prefix = ov.DESCRIPTOR_PREFIX[d["name"]]
        elif members:
            cands = [p for p in (used or naming) if all(m.startswith(p) for m in members)]
            prefix = max(cands, key=len) if cands else _common_prefix(members)
        else:
            prefix = min(naming, key=len)
        out_descs[d["name"]] = {
            "value": d["value"],
            "since": d["since"],
            "attribute_prefix": prefix,
            "attributes": members,
        }

    schema = {
        "header_version": version,
        "descriptors": out_descs,
        "attributes": out_attrs,
    }
    stale = sorted(
        [f"ATTRIBUTE_OVERRIDES[{n}]" for n in ov.ATTRIBUTE_OVERRIDES if n not in attr_set]
        + [f"ATTRIBUTE_DESCRIPTOR[{n}]" for n in ov.ATTRIBUTE_DESCRIPTOR if n not in attr_set]
        + [f"DOC_NAME_ALIASES[{n}]" for n, t in ov.DOC_NAME_ALIASES.items() if t not in attr_set]
        + [f"DESCRIPTOR_PREFIX[{n}]" for n in ov.DESCRIPTOR_PREFIX if n not in desc_set])
    report = {
        "notes": notes,
        "overridden": overridden,
        "documented": sorted(doc_info),
        "stale_overrides": stale,
        "max_dims": max_dims,
    }
    return schema, report


def _io_of(name: str, descriptor: str, accepts) -> str | None:
    if not descriptor.startswith("CUDNN_BACKEND_OPERATION_") or not accepts or "CUDNN_BACKEND_TENSOR_DESCRIPTOR" not in accepts:
        return None
    return "output" if name in ov.TENSOR_OUTPUTS.get(descriptor, ()) else "input"


def check_schema(schema: dict, expect_descriptors: int | None = None, expect_attributes: int | None = None) -> list[str]:
    """Structural self-check; returns a list of problems (empty = fine)."""
    errs = []
    D = schema["descriptors"]
    A = schema["attributes"]
    if expect_descriptors is not None and len(D) != expect_descriptors:
        errs.append(f"{len(D)} descriptor types, expected {expect_descriptors}")
    if expect_attributes is not None and len(A) != expect_attributes:
        errs.append(f"{len(A)} attributes, expected {expect_attributes}")
    seen = {}
    for d, dv in D.items():
        for a in dv["attributes"]:
            if a in seen:
                errs.append(f"{a} listed under {seen[a]} and {d}")
            seen[a] = d
            if not a.startswith(dv["attribute_prefix"]):
                errs.append(f"{a} does not start with {d}'s attribute_prefix {dv['attribute_prefix']}")
    for a, av in A.items():
        if seen.get(a) != av["descriptor"]:
            errs.append(f"{a}: descriptor {av['descriptor']} but listed under {seen.get(a)}")
        if not av["types"]:
            errs.append(f"{a}: no attribute type")
        if av["role"] not in ROLES:
            errs.append(f"{a}: bad role {av['role']!r}")
        if "CUDNN_TYPE_BACKEND_DESCRIPTOR" in av["types"]:
            if not av["accepts"]:
                errs.append(f"{a}: descriptor-valued but accepts is empty")
        elif av["accepts"] is not None:
            errs.append(f"{a}: accepts set on a non-descriptor attribute")
        if not isinstance(av["count_min"], int) or av["count_min"] < 0:
            errs.append(f"{a}: bad count_min {av['count_min']!r}")
        if av["count_max"] is not None and av["count_max"] < av["count_min"]:
            errs.append(f"{a}: count_min {av['count_min']} > count_max {av['count_max']}")
    return errs


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = "-v" in argv
    argv = [a for a in argv if a != "-v"]
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: gen_schema.py [-v] /path/to/cudnn_graph.h [out.json]", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as f:
        text = f.read()
    schema, rep = extract_schema_with_report(text)
    A, D = schema["attributes"], schema["descriptors"]
    roles = {r: sum(1 for v in A.values() if v["role"] == r) for r in ROLES}
    print(f"header_version       : {schema['header_version']}")
    print(f"descriptor types     : {len(D)} ({sum(1 for v in D.values() if not v['attributes'])} with no attributes)")
    print(f"attributes           : {len(A)}")
    print(f"  by role            : " + ", ".join(f"{r}={n}" for r, n in roles.items()))
    print(f"  descriptor-valued  : {sum(1 for v in A.values() if v['accepts'])}")
    print(f"  documented in header: {len(rep['documented'])}")
    print(f"  needed an override : {len(rep['overridden'])}")
    if verbose:
        for name, fields in rep["overridden"].items():
            print(f"    {name}: {', '.join(fields)}")
    undocumented = [a for a in A if a not in rep["documented"] and a not in rep["overridden"]]
    if undocumented:
        print(f"  neither documented nor overridden ({len(undocumented)}): " + ", ".join(undocumented))
    for n in rep["notes"]:
        print("note:", n)
    expect = ov.EXPECTED_COUNTS.get(schema["header_version"], (None, None))
    errs = check_schema(schema, *expect)
    if expect[0] is not None:  # the override table was written for this header
        errs += [f"override entry names nothing in this header: {x}" for x in rep["stale_overrides"]]
    elif rep["stale_overrides"]:
        print(f"note: {len(rep['stale_overrides'])} override entries name nothing in this header")
    for e in errs:
        print("ERROR:", e)
    if len(argv) > 1:
        with open(argv[1], "w", encoding="utf-8") as f:
            json.dump(schema, f, indent=1)
            f.write("\n")
        print(f"wrote {argv[1]}")
    assert not errs, f"{len(errs)} schema check failures"
    if expect[0] is not None:
        assert len(D) == expect[0] and len(A) == expect[1]
    return 0


if __name__ == "__main__":
    sys.exit(main())
