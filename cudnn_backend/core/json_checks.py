"""Checks of the JSON text that cuDNN deserializes, before cuDNN sees it.

cuDNN 9.19 kills the process on malformed JSON handed to it through

* ``CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION``   (a serialized execution plan),
* ``CUDNN_ATTR_KERNEL_CACHE_JSON_REPRESENTATION``     (a serialized kernel cache),
* ``CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION``       (a device profile),

(an uncaught ``std::invalid_argument`` from ``std::stoll``, SIGSEGV, SIGFPE, ``bad_alloc``, a double
free at exit, a stack overflow in its recursive parser). This module refuses such text:

    text = check_plan_json(text)          # -> the text to give cuDNN, or ValueError naming the field
    text = check_kernel_cache_json(text)
    text = check_deviceprop_json(text)

Each function accepts ``str`` or a bytes-like object (UTF-8), measures the nesting (skipping over
strings, at C speed) *before* ``json.loads`` can recurse, parses, checks every member against the tables
below (type, range, cross references: tensor names, node order, finalizeMode against the nodes, kernel
parameter offsets against their data...) and returns the text cuDNN must be given:

* the input itself when both parsers read it alike: it is ASCII, has no duplicate key (refused anyway:
  cuDNN reads the first, Python the last), no ``-0`` (an int for Python, a double for cuDNN); what cuDNN
  wrote itself always qualifies, and handing it over unchanged saves a json.dumps that costs as much as
  all the checks;
* otherwise, or with ``canonical=True``, the document re-serialized canonically (compact, ASCII only).

Everything refused raises ``JsonCheckError`` (a ``ValueError``) whose message names the JSON path, e.g.
``plan JSON: operationGraph.tensors[1].dim[0]: expected an integer in [1, 9223372036854775807], got 0``;
a value that is not text at all raises ``TypeError``.

The tables describe what cuDNN 9.19.0 writes and accepts (``CUDNN_VERSION``); they were derived from
serializations of many graphs and engines, from cuDNN's own strings, and from fuzzing cuDNN with mutated
JSON (tests/json_fuzz_worker.py). They are plain data (dicts of member -> checker), one per JSON kind, so
that another cuDNN version can get its own; each checker is read two ways: a slow one that explains a
refusal (path and reason) and a fast one compiled into Python functions from the same tables.
Keys cuDNN does not write are refused everywhere: cuDNN ignores most unknown keys, but plans and caches
are tied to the exact cuDNN version that wrote them, so an unknown key is corruption or a version
mismatch, and strictness keeps the tables honest.

Not guarded: graphs that are valid JSON in every respect but rewired (a node reading another existing
tensor of the right shape, a tensor laid out differently) can still crash the fused attention engines
of cuDNN 9.19 (SDPA_FWD engine 2, SDPA_BWD engine 6), which trust a deserialized graph; only the
layouts found first are refused (see UNIT_STRIDE_MODES). That needs cuDNN's own pattern matching.

This module is pure Python: the standard library (json, re, math, operator, binascii, marshal) and the
package's errors module (``JsonCheckError``) are all it imports.
"""
from __future__ import annotations

import binascii
import json
import marshal
import math
import re
import warnings
from math import prod as _prod
from operator import mul as _mul

from cudnn_backend._bindings import _loader
from cudnn_backend.core.versions import parse_version
from cudnn_backend.errors import CudnnLibraryNotFoundError, JsonCheckError, JsonTableFallbackWarning

__all__ = ["check_plan_json", "check_kernel_cache_json", "check_deviceprop_json", "deviceprop_members",
           "table_release", "JsonCheckError", "JsonTableFallbackWarning", "CUDNN_VERSION", "TABLE_RELEASES",
           "MAX_DEPTH", "MAX_TEXT_CHARS"]

# Nesting: real plans are 8 levels deep, kernel caches 9 (kernel_cache[].value[].kernelParams.offsets[]).
# cuDNN's recursive parser overflows its stack at ~200,000 levels (~20,000 on a 256 KiB thread);
# Python's json recurses in C too. 32 leaves a wide margin above real documents.
MAX_DEPTH = 32
MAX_TEXT_CHARS = 1 << 30  # 1 Gi characters: far beyond any real plan or cache (hundreds of KB)

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
MAX_RANK = 8  # CUDNN_DIM_MAX: cuDNN refuses tensors of more dimensions
# the largest element count / element offset a tensor may span: 2**56 elements is far beyond any
# device (an H200 holds 2**37 bytes) and keeps byte sizes (x 16-byte elements x vector count) in int64
MAX_TENSOR_SPAN = 1 << 56
DEVICE_NAME_MAX_BYTES = 255  # 256 bytes: double free at exit; 300: bad_alloc / SIGSEGV (cuDNN 9.19)
MAX_ARRAY = 1 << 16  # tensors per graph, nodes per graph, offsets per kernel...: a sanity bound


# ------------------------------------------------------------------------------------------------
# parsing: text -> Python objects, with the nesting limit checked first
# ------------------------------------------------------------------------------------------------
class _Special:
    """NaN, Infinity and -Infinity as parsed (json's parse_constant): kept apart from ordinary floats
    so that a literal Infinity (which cuDNN writes itself, e.g. a ReLU's upper clip) can be told from
    a number too large for a double (1e400, which Python reads as inf and cuDNN refuses)."""

    __slots__ = ("text", "value")

    def __init__(self, text, value):
        self.text = text
        self.value = value

    def __repr__(self):
        return self.text


_NAN = _Special("NaN", math.nan)
_INF = _Special("Infinity", math.inf)
_NINF = _Special("-Infinity", -math.inf)
_DECODER = json.JSONDecoder(parse_constant={"NaN": _NAN, "Infinity": _INF, "-Infinity": _NINF}.__getitem__)


def _special_default(o):
    if isinstance(o, _Special):
        return o.value
    raise TypeError(f"not JSON: {type(o).__name__}")  # pragma: no cover


# A cubin (tens to hundreds of KB of base64) is cut out of the text before parsing and replaced by a
# placeholder: json.loads, the structure scan and json.dumps then only see the small rest. The
# placeholder is no base64 (it starts with '#'): it cannot pass for a cubin another way.
_CUBIN_KEY = '"cubin":"'
_PLACEHOLDER = "#blob"
_PLACEHOLDER_RE = re.compile(r"#blob([0-9]{1,9})\Z")

_ESCAPE_B = re.compile(rb"\\.", re.DOTALL)
_STRUCTURAL = b'"[]{}:'
_DELETE_BUT_STRUCTURAL = bytes(c for c in range(256) if c not in _STRUCTURAL)
_QUOTED_B = re.compile(rb'"[^"]*"')


def _structure(kind, text):
    """(nesting depth, object members) of JSON text, skipping over strings, at C speed.

    The depth is capped: MAX_DEPTH + 1 means "deeper than allowed". Brackets that do not pair up are
    refused here (json.loads would recurse into unclosed brackets before noticing). Members are the
    ':' outside strings (compared with the parsed document's, they reveal duplicate keys).
    """
    b = text.encode("utf-8")
    if b"\\" in b:
        b = _ESCAPE_B.sub(b"", b)  # escapes live only inside strings: \" \\ \uXXXX gone
    r = b.translate(None, _DELETE_BUT_STRUCTURAL)  # only  " [ ] { } :  remain
    if r.count(b'""') * 2 == r.count(b'"'):
        # every string is "" here: no string holds [ ] { } : (the greedy count of "" pairs covers every
        # quote exactly when the first string with such content is absent)
        r = r.translate(None, b'"')
    else:
        # "" is an empty string, or the end of one string and the start of the next: removing it keeps
        # every other character inside or outside as it was. What remains quoted held [ ] { } :
        r = _QUOTED_B.sub(b"", r.replace(b'""', b""))
    members = r.count(b":")
    brackets = r.translate(None, b":")
    depth = 0
    while brackets and depth <= MAX_DEPTH:
        # one nesting level: the innermost pairs (\x01 keeps "{[]}" from losing two levels in one round)
        shorter = brackets.replace(b"[]", b"\x01").replace(b"{}", b"\x01").replace(b"\x01", b"")
        if len(shorter) == len(brackets):
            raise JsonCheckError(kind, "", "not valid JSON (brackets, braces or quotes do not pair up)")
        brackets = shorter
        depth += 1
    return depth, members


def _as_text(kind, value):
    if isinstance(value, str):
        text = value
    elif isinstance(value, (bytes, bytearray, memoryview)):
        try:
            text = bytes(value).decode("utf-8")
        except UnicodeDecodeError as e:
            raise JsonCheckError(kind, "", f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    else:
        raise TypeError(f"{kind} JSON: expected the JSON text (str or UTF-8 bytes), not {type(value).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise JsonCheckError(kind, "", f"{len(text)} characters is more than the {MAX_TEXT_CHARS} accepted")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise JsonCheckError(kind, "", f"not valid Unicode ({e.reason}: {text[e.start]!r} at character "
                                           f"{e.start})") from None
    return text


def _cut_blobs(text):
    """(text with placeholders, [cubin, ...]): the values of ``"cubin":"..."`` members cut out.

    Only certain members are cut: the key's opening quote not escaped, no backslash inside the value.
    Anything else stays in place and is checked the slow way.
    """
    start = text.find(_CUBIN_KEY)
    if start < 0:
        return text, []
    pieces, blobs, pos = [], [], 0
    while start >= 0:
        value_start = start + len(_CUBIN_KEY)
        end = text.find('"', value_start)
        if end < 0:
            break
        if (start > 0 and text[start - 1] == "\\") or text.find("\\", value_start, end) >= 0:
            start = text.find(_CUBIN_KEY, value_start)
            continue
        pieces.append(text[pos:value_start])
        pieces.append(f"{_PLACEHOLDER}{len(blobs)}")
        blobs.append(text[value_start:end])
        pos = end
        start = text.find(_CUBIN_KEY, end)
    pieces.append(text[pos:])
    return "".join(pieces), blobs


def _paste_blobs(text, blobs):
    """Put the cubins back into canonical text (where every "cubin":"#blobN" is a placeholder)."""
    if not blobs:
        return text
    marker = _CUBIN_KEY + _PLACEHOLDER
    parts = text.split(marker)
    out = [parts[0]]
    for part in parts[1:]:
        quote = part.index('"')
        out.append(_CUBIN_KEY)
        out.append(blobs[int(part[:quote])])
        out.append(part[quote:])
    return "".join(out)


def _find_duplicate(text):
    """(path, key) of the first duplicated key (slow: only called once duplicates are known to exist)."""

    class Dup(dict):
        pass

    def hook(pairs):
        d = dict(pairs)
        if len(d) != len(pairs):
            seen = set()
            for k, _v in pairs:
                if k in seen:
                    dup = Dup(d)
                    dup.key = k
                    return dup
                seen.add(k)
        return d

    doc = json.JSONDecoder(object_pairs_hook=hook, parse_constant=_DECODER.parse_constant).decode(text)

    def walk(o, path):
        if isinstance(o, Dup):
            return path, o.key
        items = o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, list) else ()
        for k, v in items:
            found = walk(v, path + (k,))
            if found:
                return found
        return None

    return walk(doc, ())


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _format_path(path):
    out = []
    for k in path:
        if isinstance(k, int):
            out.append(f"[{k}]")
        else:
            out.append(("." if out else "") + (k if _PLAIN_KEY.match(k) else json.dumps(k)))
    return "".join(out)


def _show(v):
    """A short description of a JSON value for messages (ASCII: lone surrogates escaped)."""
    if isinstance(v, _Special):
        return v.text
    if v is None:
        return "null"
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v if len(v) <= 40 else v[:37] + "...")
    if isinstance(v, float) and v - v != 0.0:
        return "a number too large for a double"
    if isinstance(v, (int, float)):
        r = repr(v)
        return r if len(r) <= 40 else r[:37] + "..."
    if isinstance(v, list):
        return f"an array of {len(v)}"
    if isinstance(v, dict):
        return f"an object of {len(v)} members"
    return type(v).__name__  # pragma: no cover


class _Context:
    """The slow path's state: it explains (raises) what the fast path refused."""

    __slots__ = ("kind", "blobs", "used", "members")

    def __init__(self, kind, blobs):
        self.kind = kind
        self.blobs = blobs
        self.used = set()  # blob indexes met (each must be met once)
        self.members = 0  # object members met

    def fail(self, path, problem):
        raise JsonCheckError(self.kind, _format_path(path), problem)


class _Fast:
    """The fast path's state: object members met, blob indexes met, graphs already checked."""

    __slots__ = ("n", "blobs", "used", "graphs")

    def __init__(self, blobs):
        self.n = 0
        self.blobs = blobs
        self.used = set()
        self.graphs = []  # [graph, members]: a kernel cache repeats its graph in every key


# ------------------------------------------------------------------------------------------------
# checkers. Each is declarative data with two readings of the same rule:
#   checker(value, path, ctx)   the slow path: raises JsonCheckError naming the path, or returns;
#   checker.fast(var, env)      a Python expression, true when the value in ``var`` is certainly valid
#                               (a compiled object check is a function of (value, c), c a _Fast).
# The fast path may refuse more than the slow one (it then runs and decides); never less.
# ------------------------------------------------------------------------------------------------
class Check:
    def fast(self, var, env):
        name = f"_k{len(env)}"
        env[name] = self.predicate()
        return f"{name}({var}, c)"

    def predicate(self):
        """A function (value, c) -> bool for checkers without an inline expression."""
        raise NotImplementedError  # pragma: no cover


def _const(env, value):
    name = f"_k{len(env)}"
    env[name] = value
    return name


class Any(Check):
    """Anything (checked elsewhere: a node's tensor references)."""

    def __call__(self, v, path, ctx):
        pass

    def fast(self, var, env):
        return "True"


class Int(Check):
    """A JSON integer (not a float like 8.0, not a bool) in [lo, hi]."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __call__(self, v, path, ctx):
        if type(v) is not int or not self.lo <= v <= self.hi:
            ctx.fail(path, f"expected an integer in [{self.lo}, {self.hi}], got {_show(v)}")

    def fast(self, var, env):
        return f"(type({var}) is int and {self.lo} <= {var} <= {self.hi})"

    def __repr__(self):
        return f"Int({self.lo}, {self.hi})"


class PowerOfTwo(Int):
    def __call__(self, v, path, ctx):
        if type(v) is not int or not self.lo <= v <= self.hi or v & (v - 1):
            ctx.fail(path, f"expected a power of two in [{self.lo}, {self.hi}], got {_show(v)}")

    def fast(self, var, env):
        return f"(type({var}) is int and {self.lo} <= {var} <= {self.hi} and not {var} & ({var} - 1))"


class Float(Check):
    """A JSON number with a fraction or exponent (cuDNN requires IsDouble(): 1 is refused, 1.0 is
    not), finite; ``infinite=True`` also admits the literals Infinity and -Infinity, which cuDNN
    itself writes (a ReLU whose upper clip is +inf). NaN and numbers beyond a double never."""

    def __init__(self, infinite=False):
        self.infinite = infinite

    def __call__(self, v, path, ctx):
        if type(v) is float and v - v == 0.0:
            return
        if v is _INF or v is _NINF:
            if self.infinite:
                return
            ctx.fail(path, f"expected a finite number, got {v.text}")
        if v is _NAN:
            ctx.fail(path, "expected a number, got NaN")
        if type(v) is float:
            ctx.fail(path, "expected a number that fits in a double (like 1e400 does not)")
        if type(v) is int:
            ctx.fail(path, f"expected a JSON float such as {v}.0 (cuDNN refuses an integer here), got {v}")
        ctx.fail(path, f"expected a number, got {_show(v)}")

    def fast(self, var, env):
        finite = f"(type({var}) is float and {var} - {var} == 0.0)"
        if self.infinite:
            return f"({finite} or {var} is {_const(env, _INF)} or {var} is {_const(env, _NINF)})"
        return finite

    def __repr__(self):
        return f"Float(infinite={self.infinite})"


class Bool(Check):
    def __call__(self, v, path, ctx):
        if v is not True and v is not False:
            ctx.fail(path, f"expected true or false, got {_show(v)}")

    def fast(self, var, env):
        return f"({var} is True or {var} is False)"


_ENUM_NAME = re.compile(r"CUDNN_[A-Za-z0-9_]{1,96}\Z")  # letters: CUDNN_TENSOR_REORDERING_F16x16


class Enum(Check):
    """A cuDNN enumerant name: ``CUDNN_`` + letters, digits, underscores, starting with ``prefix``.
    cuDNN looks the name up and refuses unknown ones cleanly; the pattern keeps out what is not a
    name at all (no list of values: that is cuDNN's own, version-specific, business)."""

    def __init__(self, prefix="CUDNN_"):
        assert prefix.startswith("CUDNN_") and _ENUM_NAME.match(prefix + "X")
        self.prefix = prefix
        # the prefix, then what _ENUM_NAME allows after it (at most 96 characters after CUDNN_)
        self.match = re.compile(re.escape(prefix) + r"[A-Za-z0-9_]{%d,%d}\Z" % (
            max(0, 1 - (len(prefix) - 6)), 96 - (len(prefix) - 6))).match

    def __call__(self, v, path, ctx):
        if type(v) is not str or not self.match(v):
            ctx.fail(path, f"expected a cuDNN enumerant name {self.prefix}..., got {_show(v)}")

    def fast(self, var, env):
        return f"(type({var}) is str and {_const(env, self.match)}({var}) is not None)"

    def __repr__(self):
        return f"Enum({self.prefix!r})"


class OneOf(Check):
    def __init__(self, *values):
        self.values = frozenset(values)

    def __call__(self, v, path, ctx):
        if type(v) is not str or v not in self.values:
            shown = ", ".join(sorted(self.values)) if len(self.values) <= 8 else f"one of {len(self.values)} names"
            ctx.fail(path, f"expected {shown}, got {_show(v)}")

    def fast(self, var, env):
        return f"(type({var}) is str and {var} in {_const(env, self.values)})"

    def __repr__(self):
        return f"OneOf({len(self.values)} values)"


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class Text(Check):
    """A free-text string: at most ``max_bytes`` bytes of UTF-8, no control characters (NUL in
    particular: cuDNN reads these as C strings), no lone surrogates."""

    def __init__(self, max_bytes):
        self.max_bytes = max_bytes

    def __call__(self, v, path, ctx):
        if type(v) is not str:
            ctx.fail(path, f"expected a string, got {_show(v)}")
        size = len(v) if v.isascii() else len(_utf8(v, path, ctx))
        if size > self.max_bytes:
            ctx.fail(path, f"expected at most {self.max_bytes} bytes of UTF-8, got {size}")
        m = _CONTROL.search(v)
        if m:
            ctx.fail(path, f"control character {m.group()!r} in {_show(v)}")

    def fast(self, var, env):
        s = _const(env, _CONTROL.search)
        return f"(type({var}) is str and {var}.isascii() and len({var}) <= {self.max_bytes} and {s}({var}) is None)"

    def __repr__(self):
        return f"Text({self.max_bytes})"


def _utf8(v, path, ctx):
    try:
        return v.encode("utf-8")
    except UnicodeEncodeError as e:
        ctx.fail(path, f"lone surrogate {v[e.start]!r} in the string")


_INT_NAME = re.compile(r"(?:0|-?[1-9][0-9]{0,18})\Z")


def _name_in_range(v):
    return INT64_MIN <= int(v) <= INT64_MAX


def _name_ok(v):
    return type(v) is str and _INT_NAME.match(v) is not None and (len(v) < 19 or _name_in_range(v))


class Name(Check):
    """A tensor name: the decimal int64 UID as cuDNN writes it ("1", "-5"): cuDNN 9.19 reads names
    and every tensor reference with std::stoll and aborts the process when that throws."""

    def __call__(self, v, path, ctx):
        if not _name_ok(v):
            ctx.fail(path, f"expected a tensor name, a decimal int64 string like \"1\", got {_show(v)} (cuDNN "
                           "9.19 aborts the process on tensor names std::stoll cannot read)")

    def fast(self, var, env):
        m, r = _const(env, _INT_NAME.match), _const(env, _name_in_range)
        return f"(type({var}) is str and {m}({var}) is not None and (len({var}) < 19 or {r}({var})))"


def _ints_ok(x, lo, hi):
    """All items ints (not bools) in [lo, hi]: C-speed for the arrays of dimensions and strides."""
    return not x or (_INT_TYPE >= set(map(type, x)) and lo <= min(x) and max(x) <= hi)


_INT_TYPE = frozenset((int,))


def _all_c(pred, x, c):
    for e in x:
        if not pred(e, c):
            return False
    return True


class Array(Check):
    """A JSON array of ``min_len``..``max_len`` items, each checked by ``item``."""

    def __init__(self, item, min_len=0, max_len=None):
        self.item, self.min_len = item, min_len
        self.max_len = MAX_ARRAY if max_len is None else max_len

    def __call__(self, v, path, ctx):
        if type(v) is not list:
            ctx.fail(path, f"expected an array, got {_show(v)}")
        if not self.min_len <= len(v) <= self.max_len:
            n = f"{self.min_len}" if self.min_len == self.max_len else f"{self.min_len} to {self.max_len}"
            ctx.fail(path, f"expected an array of {n} items, got {len(v)}")
        for i, x in enumerate(v):
            self.item(x, path + (i,), ctx)

    def fast(self, var, env):
        head = f"type({var}) is list and {self.min_len} <= len({var}) <= {self.max_len}"
        item = self.item
        if type(item) is Int:  # dims, strides, paddings: C-speed min/max over the items
            types, mn, mx = _const(env, _INT_TYPE), _const(env, min), _const(env, max)
            items = (f"{types} >= set(map(type, {var})) and {item.lo} <= {mn}({var}) and {mx}({var}) <= {item.hi}")
            if self.min_len == 0:
                items = f"(not {var} or {items})"
            return f"({head} and {items})"
        if type(item).fast is Check.fast:  # objects, graphs...: a compiled function, called per item
            pred = _const(env, item.predicate())
            return f"({head} and {_const(env, _all_c)}({pred}, {var}, c))"
        body = item.fast("e", env)
        return f"({head} and all({body} for e in {var}))"

    def __repr__(self):
        return f"Array({self.item!r}, {self.min_len}, {self.max_len})"


class Object(Check):
    """A JSON object whose members are checked by ``fields`` (name -> checker); ``required`` names
    must be present; any other name is refused (see the module docstring), or with ``extra=True``
    (a release without a table of its own) passed through unchecked but counted. ``then``
    (optional) is a function (object) -> None or (path suffix, problem): a rule across members."""

    def __init__(self, fields, required=(), then=None, what="object", count=True, extra=False):
        self.fields = dict(fields)
        self.required = tuple(required)
        self.then = then
        self.what = what
        self.count = count
        self.extra = extra
        self._pred = None

    def __call__(self, v, path, ctx):
        if type(v) is not dict:
            ctx.fail(path, f"expected {'an' if self.what[0] in 'aeiou' else 'a'} {self.what}, got {_show(v)}")
        if self.count:
            ctx.members += len(v)
        fields = self.fields
        for k, x in v.items():
            check = fields.get(k)
            if check is None:
                if self.extra:
                    _utf8(k, path, ctx)
                    ctx.members += _members_in(x)
                    continue
                self.unknown(k, path, ctx)
            check(x, path + (k,), ctx)
        for k in self.required:
            if k not in v:
                ctx.fail(path, f"missing member {json.dumps(k)}")
        if self.then is not None:
            problem = self.then(v)
            if problem is not None:
                ctx.fail(path + problem[0], problem[1])

    def unknown(self, k, path, ctx):
        _utf8(k, path, ctx)
        known = ", ".join(sorted(self.fields))
        ctx.fail(path + (k,), f"unknown member (this {self.what} has: {known})")

    def predicate(self):
        """Compile the fast check: one function, the member checks inlined."""
        if self._pred is None:
            env = {"MISSING": _MISSING, "members_in": _members_in, "ascii_keys": _ascii_keys}
            allowed = _const(env, frozenset(self.fields))
            required = _const(env, frozenset(self.required))
            lines = ["def pred(v, c):",
                     "    if type(v) is not dict:", "        return False"]
            if self.extra:  # unknown members pass: their own members counted (duplicate keys), names ASCII
                lines += ["    keys = v.keys()",
                          f"    if not {required} <= keys:", "        return False",
                          f"    extra = keys - {allowed}",
                          "    if extra:",
                          "        if not ascii_keys(extra):", "            return False",
                          "        c.n += sum(members_in(v[k]) for k in extra)"]
            elif set(self.required) == set(self.fields):  # no optional member: one comparison of the key sets
                lines += [f"    if v.keys() != {allowed}:", "        return False"]
            else:
                lines += ["    keys = v.keys()",
                          f"    if not (keys <= {allowed} and {required} <= keys):", "        return False"]
            if self.count:
                lines.append("    c.n += len(v)")
            for k, check in self.fields.items():
                expr = check.fast("x", env)
                if expr == "True":
                    continue
                if k in self.required:
                    lines.append(f"    x = v[{k!r}]")
                    lines.append(f"    if not {expr}:")
                else:
                    lines.append(f"    x = v.get({k!r}, MISSING)")
                    lines.append(f"    if x is not MISSING and not {expr}:")
                lines.append("        return False")
            if self.then is not None:
                lines.append(f"    if {_const(env, self.then)}(v) is not None:")
                lines.append("        return False")
            lines.append("    return True")
            exec("\n".join(lines), env)  # noqa: S102 - code generated from the tables above, no input
            self._pred = env["pred"]
        return self._pred

    def __repr__(self):
        return f"Object({sorted(self.fields)})"


def _members_in(v):
    """The object members inside a value passed through unchecked (the duplicate-key count needs them)."""
    if type(v) is dict:
        return len(v) + sum(map(_members_in, v.values()))
    if type(v) is list:
        return sum(map(_members_in, v))
    return 0


def _ascii_keys(keys):
    return all(k.isascii() for k in keys)


_MISSING = object()


class Lazy(Check):
    """A checker named before it is defined (recursive structures)."""

    def __init__(self, get):
        self.get = get

    def __call__(self, v, path, ctx):
        self.get()(v, path, ctx)

    def predicate(self):
        get = self.get
        return lambda v, c: get().predicate()(v, c)


# ------------------------------------------------------------------------------------------------
# base64 payloads: cubins and kernel parameter blocks
# ------------------------------------------------------------------------------------------------
_B64_ALPHABET_PAD = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
_ELF_B64 = "f0VMR"  # base64 of b"\x7fELF" begins so
MAX_CUBIN_CHARS = 1 << 28
MAX_RAW_DATA = 1 << 20


def _b64_problem(s):
    """Why ``s`` is not padded base64, or None. C speed: bytes.translate deletes the alphabet."""
    if not s.isascii():
        return "non-ASCII character"
    n = len(s)
    if n % 4:
        return f"length {n} is not a multiple of 4"
    body = n - (n > 0 and s[-1] == "=") - (n > 1 and s[-2] == "=")
    if s.find("=", 0, body) >= 0:
        return "'=' before the end"
    rest = s.encode("ascii").translate(None, _B64_ALPHABET_PAD)
    if rest:
        return f"character {chr(rest[0])!r} is not base64"
    return None


def _cubin_problem(s):
    if not s:
        return "empty cubin"
    if len(s) > MAX_CUBIN_CHARS:
        return f"cubin of {len(s)} characters is more than {MAX_CUBIN_CHARS}"
    problem = _b64_problem(s)
    if problem:
        return f"expected base64, {problem}"
    if not s.startswith(_ELF_B64):
        return "expected the base64 of an ELF image (f0VMR...)"
    return None


def _blob_index(v, nblobs, used):
    """The index of a placeholder (recorded as used), None for any other string, -1 for a bad one."""
    m = _PLACEHOLDER_RE.match(v) if v.startswith(_PLACEHOLDER) else None
    if m is None:
        return None
    i = int(m.group(1))
    if i >= nblobs or i in used:
        return -1
    used.add(i)
    return i


class Cubin(Check):
    """A kernel image: base64 (A-Z a-z 0-9 + /, '=' padding) of an ELF file. cuDNN decodes it
    leniently and, on a GPU, hands it to the driver: garbage must not get that far."""

    def __call__(self, v, path, ctx):
        if type(v) is not str:
            ctx.fail(path, f"expected a base64 string, got {_show(v)}")
        i = _blob_index(v, len(ctx.blobs), ctx.used)
        if i == -1:
            ctx.fail(path, "expected base64, character '#' is not base64")
        problem = _cubin_problem(v if i is None else ctx.blobs[i])
        if problem:
            ctx.fail(path, problem)

    def predicate(self):
        return _cubin_fast


def _cubin_fast(v, c):
    if type(v) is not str:
        return False
    i = _blob_index(v, len(c.blobs), c.used)
    if i == -1:
        return False
    return _cubin_problem(v if i is None else c.blobs[i]) is None


class Base64(Check):
    def __init__(self, max_bytes):
        self.max_bytes = max_bytes

    def __call__(self, v, path, ctx):
        if type(v) is not str:
            ctx.fail(path, f"expected a base64 string, got {_show(v)}")
        problem = _b64_problem(v)
        if problem:
            ctx.fail(path, f"expected base64, {problem}")
        if len(v) // 4 * 3 > self.max_bytes:
            ctx.fail(path, f"more than {self.max_bytes} bytes")

    def fast(self, var, env):
        p = _const(env, _b64_problem)
        return f"(type({var}) is str and len({var}) // 4 * 3 <= {self.max_bytes} and {p}({var}) is None)"


# ------------------------------------------------------------------------------------------------
# the device profile (DEVICEPROP JSON, and GPUProfile inside a plan)
# ------------------------------------------------------------------------------------------------
_I32 = Int(INT32_MIN, INT32_MAX)
_I32_POS = Int(1, INT32_MAX)
_I32_NONNEG = Int(0, INT32_MAX)
_I64 = Int(INT64_MIN, INT64_MAX)
_I64_NONNEG = Int(0, INT64_MAX)

# member -> (checker, releases that write it, releases that require it): ranges (since, until) of cuDNN
# versions, until None = every later release with a table. Members are read as int32 (IsInt),
# totalGlobalMem as uint64. Counts a GPU always has at least one of are >= 1. Ordered as cuDNN writes them.
DEVICEPROP_MEMBERS = {
    "maxGridSize": (Array(_I32_POS, 3, 3), ((91002, None),), ((91002, None),)),
    "maxBlockSize": (Array(_I32_POS, 3, 3), ((91002, None),), ((91002, None),)),
    "regsPerBlock": (_I32_POS, ((91002, None),), ((91002, None),)),
    "multiProcessorCount": (_I32_POS, ((91002, None),), ((91002, None),)),
    "smCountOrigin": (Int(0, 8), ((92800, None),), ()),
    "warpSize": (Int(1, 1024), ((91002, None),), ((91002, None),)),
    "maxSharedMemoryPerBlock": (_I32_NONNEG, ((91002, None),), ((91002, None),)),
    "maxSharedMemoryPerBlockOptin": (_I32_NONNEG, ((91002, None),), ((91002, None),)),
    "oversizedSharedMemoryPerBlock": (_I32_NONNEG, ((92800, None),), ()),
    "reservedSharedMemoryPerBlock": (_I32_NONNEG, ((91002, None),), ((91002, None),)),
    "maxRegistersPerSM": (_I32_POS, ((91002, None),), ((91002, None),)),
    "maxCtasPerSM": (_I32_NONNEG, ((91002, None),), ((91002, None),)),
    "maxThreadsPerBlock": (_I32_POS, ((91400, None),), ((91400, None),)),
    "maxThreadsPerSM": (_I32_POS, ((91002, None),), ((91002, None),)),
    "pciDeviceId": (_I32_NONNEG, ((91002, None),), ((91002, None),)),
    "isTccDriver": (Int(0, 1), ((91002, None),), ((91002, None),)),
    "supportCoopLaunch": (Int(0, 1), ((91002, None),), ((91002, None),)),
    "totalGlobalMem": (_I64_NONNEG, ((91002, None),), ((91002, None),)),
    "smClockRateKHz": (_I32_NONNEG, ((91002, None),), ((91002, None),)),
    "memClockRateKHz": (_I32_NONNEG, ((91002, None),), ((91002, None),)),
    "memoryBusWidth": (_I32_POS, ((92800, None),), ((92800, None),)),
    "l2CacheSize": (_I32_NONNEG, ((91002, None),), ((91002, None),)),
    "cudaDeviceId": (_I32_NONNEG, ((91002, None),), ((91002, None),)),
    "deviceVer": (_I32_NONNEG, ((91002, None),), ((91002, None),)),
    "driverVer": (_I32_NONNEG, ((91002, None),), ((91002, None),)),
    # 255 bytes is the most cuDNN 9.19 survives: 256 double-frees at exit, 300 aborts (bad_alloc)
    "deviceName": (Text(DEVICE_NAME_MAX_BYTES), ((91002, None),), ((91002, None),)),
}


# ------------------------------------------------------------------------------------------------
# operation graphs (a plan's, a kernel cache's, and each kernel cache key's)
# ------------------------------------------------------------------------------------------------
def _tensor_then(t):
    """Dimensions and strides agree; the tensor's extent fits; vectDim names a dimension."""
    dim, stride = t["dim"], t["stride"]
    if len(dim) != len(stride):
        return ("stride",), f"expected {len(dim)} strides (one per dimension), got {len(stride)}"
    count, span = 1, 1
    for d, s in zip(dim, stride):
        count *= d
        span += (d - 1) * s
    if count > MAX_TENSOR_SPAN or span > MAX_TENSOR_SPAN:
        return ("dim",), f"the tensor spans more than 2**56 elements (dims {dim}, strides {stride})"
    if t["vectDim"] >= len(dim):
        return ("vectDim",), f"expected -1 or a dimension index below {len(dim)}, got {t['vectDim']}"
    return None


def _tensor_fields(nested):
    fields = {
        "name": Name(),
        "dataType": Enum("CUDNN_DATA_"),
        # 0 / {} / null / "2" / 2.5 / 2**64 as dim[0] of a matmul operand: SIGFPE in cuDNN 9.19
        "dim": Array(Int(1, INT64_MAX), 1, MAX_RANK),
        "stride": Array(Int(1, INT64_MAX), 1, MAX_RANK),
        "isVirtual": Bool(),
        "isByValue": Bool(),
        "vectCount": Int(1, 64),
        "vectDim": Int(-1, MAX_RANK - 1),
        "ptrAlignment": PowerOfTwo(1, 1 << 30),
        "reordering": Enum("CUDNN_TENSOR_REORDERING_"),
    }
    if not nested:  # a ragged tensor carries its offset tensor (one, itself not ragged)
        fields["isRagged"] = Array(Lazy(lambda: RAGGED_OFFSET_TENSOR), 1, 1)
    return fields


TENSOR_REQUIRED = ("name", "dataType", "dim", "stride", "isVirtual", "isByValue", "vectCount", "vectDim",
                   "ptrAlignment", "reordering")
TENSOR = Object(_tensor_fields(nested=False), required=TENSOR_REQUIRED, then=_tensor_then, what="tensor object")
RAGGED_OFFSET_TENSOR = Object(_tensor_fields(nested=True), required=TENSOR_REQUIRED, then=_tensor_then,
                              what="tensor object")

# -- nodes: one table per operation -----------------------------------------------------------------
# A node refers to tensors by name. Tensor members are marked IN (read), OUT (written) or INS (an array
# of tensors read): cuDNN 9.19 needs the nodes in topological order (a node reading a tensor that a
# later node writes: SIGSEGV in the runtime-compiled engines), checked with these roles.
IN, OUT, INS = "in", "out", "ins"
_F = Float()
_F_INF = Float(infinite=True)  # clip and padding values: cuDNN writes +-Infinity itself
_DT = Enum("CUDNN_DATA_")
_SPATIAL = 6  # convolution / resampling spatial dimensions (rank 8 minus batch and channels)
_PADS = Array(Int(0, INT64_MAX), 1, _SPATIAL)
_STEPS = Array(Int(1, INT64_MAX), 1, _SPATIAL)


def _fractions_ok(v, positive):
    for num, den in v:
        if den < 1 or (positive and num < 1):
            return False
    return True


class Fractions(Check):
    """Resampling windows, paddings and strides: [[numerator, denominator], ...] per spatial
    dimension; denominators >= 1 (cuDNN divides by them), numerators >= 1 where ``positive``."""

    def __init__(self, positive):
        self.positive = positive
        self.shape = Array(Array(Int(0, INT64_MAX), 2, 2), 1, _SPATIAL)

    def __call__(self, v, path, ctx):
        self.shape(v, path, ctx)
        for i, (num, den) in enumerate(v):
            if den < 1 or (self.positive and num < 1):
                ctx.fail(path + (i,), f"expected [numerator{' >= 1' if self.positive else ''}, denominator >= 1], "
                                      f"got [{num}, {den}]")

    def fast(self, var, env):
        return f"({self.shape.fast(var, env)} and {_const(env, _fractions_ok)}({var}, {self.positive}))"


_CONV = {"mode": Enum("CUDNN_"), "mathPrec": _DT, "alpha": _F, "beta": _F, "pad": _PADS, "pad_lower": _PADS,
         "pad_upper": _PADS, "stride": _STEPS, "dilation": _STEPS}
_RESAMPLE = {"alpha": _F, "beta": _F, "mode": Enum("CUDNN_RESAMPLE_"), "nbSpatialDims": Int(1, _SPATIAL),
             "windowDim": Fractions(True), "prePad": Fractions(False), "postPad": Fractions(False),
             "stride": Fractions(True), "compType": _DT, "nanOpt": Enum("CUDNN_"), "paddingMode": Enum("CUDNN_")}

# operation -> {member: checker, or the tensor role of a member naming tensors}. Every member was
# seen in a serialization by cuDNN 9.19 except those marked unverified (taken from cuDNN's own
# strings: the operation could not be finalized offline with them). Operations absent here are
# refused: SDPA backward (cannot form a graph in 9.19) and those of later versions.
NODE_TABLES = {
    "CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR": dict(_CONV, X=IN, W=IN, Y=OUT),
    "CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR": dict(_CONV, dY=IN, W=IN, dX=OUT),
    "CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR": dict(_CONV, X=IN, dY=IN, dW=OUT),
    "CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR": {
        "pointwiseMode": Enum("CUDNN_POINTWISE_"), "mathPrec": _DT, "alpha1": _F, "alpha2": _F,
        "alpha": _F, "beta": _F,  # ELU alpha; softplus / swish beta
        "upperClip": _F_INF, "lowerClip": _F_INF, "lowerClipSlope": _F, "axis": Int(0, MAX_RANK - 1),
        "X": IN, "B": IN, "T": IN, "dY": IN, "Y": OUT, "dX": OUT},
    "CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR": {
        "mathPrec": _DT, "paddingDataType": Enum("CUDNN_TYPE_"), "paddingValue": _F_INF,
        "matA": IN, "matB": IN, "mOverride": IN, "nOverride": IN, "kOverride": IN, "matC": OUT},
    "CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR": {
        "reductionOp": Enum("CUDNN_REDUCE_TENSOR_"), "mathPrec": _DT, "isDeterministic": Bool(), "X": IN, "Y": OUT},
    "CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR": {"mathPrec": _DT, "X": IN, "Sum": OUT, "SqSum": OUT},
    "CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR": {
        "mode": Enum("CUDNN_"), "fmode": Enum("CUDNN_NORM_FWD_"), "X": IN, "Scale": IN, "Bias": IN,
        "epsilonDesc": IN, "expavgfactorDesc": IN, "InRunningMean": IN, "InRunningVar": IN, "peerStats": INS,
        "Y": OUT, "Mean": OUT, "InvVariance": OUT, "OutRunningMean": OUT, "OutRunningVar": OUT},
    "CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR": {
        "mode": Enum("CUDNN_"), "X": IN, "DY": IN, "Mean": IN, "InvVariance": IN, "Scale": IN,
        "epsilonDesc": IN,  # unverified
        "peerStats": INS, "DX": OUT, "DScale": OUT, "DBias": OUT},
    "CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR": {
        "mode": Enum("CUDNN_"), "mathPrec": _DT, "ySum": IN, "ySqSum": IN, "bnScale": IN, "bnBias": IN,
        "bnPrevRunningMean": IN, "bnPrevRunningVar": IN, "accumCntValTensor": IN, "epsilonValTensor": IN,
        "expAverageFactorValTensor": IN, "bnEqScale": OUT, "bnEqBias": OUT, "bnUpdatedRunningMean": OUT,
        "bnUpdatedRunningVar": OUT, "bnSavedMean": OUT, "bnSavedInvStd": OUT},
    "CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR": {
        "mathPrec": _DT, "xDesc": IN, "dyDesc": IN, "BNmeanDesc": IN, "BNscaleDesc": IN, "BNinvstdDesc": IN,
        "dGammaDesc": OUT, "dBetaDesc": OUT, "eqDyScaleDesc": OUT, "eqXScaleDesc": OUT, "eqBiasDesc": OUT},
    "CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR": dict(_RESAMPLE, X=IN, Y=OUT, Idx=OUT),
    "CUDNN_BACKEND_OPERATION_RESAMPLE_BWD_DESCRIPTOR": dict(_RESAMPLE, dY=IN, X=IN, Y=IN, Idx=IN, dX=OUT),
    "CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR": {
        "axis": Int(0, MAX_RANK - 1), "inplaceIndex": Int(-1, MAX_ARRAY), "inputDescs": INS, "outputDesc": OUT},
    "CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR": {"X": IN, "Y": OUT},
    "CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR": {
        "distribution": Enum("CUDNN_RNG_DISTRIBUTION_"), "bernoulli_dist_probability": _F,
        "normal_dist_mean": _F, "normal_dist_std_dev": _F, "uniform_dist_max": _F, "uniform_dist_min": _F,
        "seed": _I64, "seedTensor": IN, "offset": IN, "Y": OUT},
    "CUDNN_BACKEND_OPERATION_SIGNAL_DESCRIPTOR": {
        "mode": Enum("CUDNN_SIGNAL_"), "value": _I64, "flagDesc": IN, "X": IN, "Y": OUT},
    "CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR": {"container": IN, "sequence": IN, "pageTable": IN,
                                                            "Y": OUT},
    "CUDNN_BACKEND_OPERATION_EXPAND_BAND_MATRIX_DESCRIPTOR": {
        "lower_bandwidth": _I32_NONNEG, "upper_bandwidth": _I32_NONNEG, "axis": Int(0, MAX_RANK - 1),
        "pad_value": _F_INF, "kvOffset": IN,  # kvOffset: unverified
        "X": IN, "Y": OUT},
    "CUDNN_BACKEND_OPERATION_CONTRACT_BAND_MATRIX_DESCRIPTOR": {
        "lower_bandwidth": _I32_NONNEG, "upper_bandwidth": _I32_NONNEG, "axis": Int(0, MAX_RANK - 1),
        "pad_value": _F_INF, "max_token": _I64, "X": IN, "Y": OUT},
    "CUDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR": {
        "mathPrec": _DT, "block_size": _I32_POS, "X": IN, "Y": OUT, "scale": OUT},
    "CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR": {
        "mathPrec": _DT, "block_size": Array(_I32_POS, 1, MAX_RANK), "is_neg_scale": Bool(),
        "X": IN, "scale": IN, "Y": OUT},
    "CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR": {
        "Q": IN, "K": IN, "V": IN, "scale": IN, "seqLenQ": IN, "seqLenKV": IN, "blockMask": IN,
        "pageTableK": IN, "pageTableV": IN, "O": OUT, "stats": OUT},
    "CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR": {
        "mode": Enum("CUDNN_MOE_GROUPED_MATMUL_MODE_"), "mathPrec": _DT, "token": IN, "weight": IN,
        "firstTokenOffset": IN, "tokenIndex": IN, "tokenKs": IN, "topK": _I32_POS,  # the last 3: unverified
        "output": OUT},
}

# finalizeMode values cuDNN 9.19 knows. Four of them make cuDNN look for a node of one operation and
# use it unchecked: a graph without such a node crashes (SIGSEGV); the others fail cleanly.
FINALIZE_MODES = frozenset(
    "CONV_FORWARD CONV_BWD_DATA CONV_BWD_FILTER CONV_SCALE_ADD_BIAS_ACT CONV_ADD_BIAS_ACT SCALE_BIAS_ADD_RELU_WGRAD "
    "BN_FINALIZE_STATISTICS DGRAD_ADD_DRELU_DUAL_BN_BWD GENERIC_CONV_FUSION GENERIC_MATMUL_FUSION "
    "GENERIC_POINTWISE_FUSION UNIFIED_SDPA_FWD UNIFIED_SDPA_BWD NORM_FWD_INFER NORM_FWD_TRAIN NORM_BWD "
    "SPARSE_PATTERN_GNN RESAMPLE_FWD RESAMPLE_BWD FMHA_FLASH_ATTENTION BLAS_MATMUL SCALE_BIAS_ADD_RELU_CONV_STATS "
    "SDPA_FWD SDPA_BWD".split())
# The fused attention engines (SDPA_FWD engine 2, SDPA_BWD engine 6 on an H200) assume that the
# matmuls' tensors in memory are packed along a matrix dimension (one of the last two has stride 1;
# SIGSEGV otherwise, even with the stride 1 on a batch dimension); the other engines of these graphs
# refuse such layouts cleanly or cope.
UNIT_STRIDE_MODES = frozenset(("SDPA_FWD", "SDPA_BWD"))
_MATMUL = "CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR"
FINALIZE_MODE_NEEDS = {
    "CONV_FORWARD": "CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR",
    "CONV_BWD_DATA": "CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR",
    "CONV_BWD_FILTER": "CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR",
    "NORM_BWD": "CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR",
}
GRAPH_FIELDS = {"finalizeMode": OneOf(*FINALIZE_MODES), "tensors": Any(), "nodes": Any(),
                "isDynamicShapeEnabled": Bool()}
GRAPH_REQUIRED = ("finalizeMode", "tensors", "nodes")


def _short_op(op):
    return op.replace("CUDNN_BACKEND_OPERATION_", "").replace("_DESCRIPTOR", "").lower()


class _Op:
    """A compiled node table: the members' checks (an Object over the node, tensor members not
    checked there) and the tensor roles."""

    def __init__(self, op, table):
        self.op = op
        self.roles = {k: c for k, c in table.items() if isinstance(c, str)}
        fields = {k: c for k, c in table.items() if not isinstance(c, str)}
        fields.update({k: Any() for k in self.roles}, operation=Any())
        self.params = Object(fields, what=f"{_short_op(op)} node", count=False)
        self.fast_params = self.params.predicate()


_OPS = {op: _Op(op, table) for op, table in NODE_TABLES.items()}
_OPERATION = OneOf(*NODE_TABLES)


class Graph(Check):
    """An operationGraph: tensors (unique names), nodes (known operations, references to existing
    tensors, topological order, no tensor written twice, no virtual tensor read before written) and a
    finalizeMode that fits the nodes. Checked alike at the top of plans and caches and in each cache key."""

    tensor = TENSOR
    fields = Object(GRAPH_FIELDS, required=GRAPH_REQUIRED, what="operation graph object")

    def __call__(self, g, path, ctx):
        self.fields(g, path, ctx)
        tensors, nodes = g["tensors"], g["nodes"]
        Array(self.tensor, 1)(tensors, path + ("tensors",), ctx)  # not an array: SIGSEGV in cuDNN 9.19
        if type(nodes) is not list or not 1 <= len(nodes) <= MAX_ARRAY:
            ctx.fail(path + ("nodes",), f"expected an array of 1 to {MAX_ARRAY} nodes, got {_show(nodes)}")
        names, virtual = {}, set()
        for i, t in enumerate(tensors):
            name = t["name"]
            if name in names:
                ctx.fail(path + ("tensors", i, "name"), f"tensor name {name} is used by tensors[{names[name]}] too")
            names[name] = i
            if t["isVirtual"]:
                virtual.add(name)
        producer, reads = {}, []
        for i, node in enumerate(nodes):
            p = path + ("nodes", i)
            if type(node) is not dict:
                ctx.fail(p, f"expected a node object, got {_show(node)}")
            if "operation" not in node:
                ctx.fail(p, 'missing member "operation"')
            _OPERATION(node["operation"], p + ("operation",), ctx)
            op = _OPS[node["operation"]]
            ctx.members += len(node)
            op.params(node, p, ctx)
            inputs = []
            for k, role in op.roles.items():
                if k not in node:
                    continue
                v = node[k]
                if role == INS:
                    if type(v) is not list or not 1 <= len(v) <= MAX_ARRAY:
                        ctx.fail(p + (k,), f"expected an array of tensor names, got {_show(v)}")
                    refs = [(x, p + (k, j)) for j, x in enumerate(v)]
                else:
                    refs = [(v, p + (k,))]
                for name, rp in refs:
                    Name()(name, rp, ctx)
                    if name not in names:
                        ctx.fail(rp, f"no tensor named {name} in the graph's tensors")
                    if role == OUT:
                        if name in producer:
                            ctx.fail(rp, f"tensor {name} is written by nodes[{producer[name]}] too")
                        producer[name] = i
                    else:
                        inputs.append((name, rp))
            reads.append(inputs)
        for i, inputs in enumerate(reads):
            for name, rp in inputs:
                j = producer.get(name)
                if j is not None and j >= i:
                    ctx.fail(rp, f"tensor {name} is read here but written by "
                                 f"{'this node' if j == i else f'a later node (nodes[{j}])'}: cuDNN needs the "
                                 "nodes in topological order")
                if j is None and name in virtual:
                    ctx.fail(rp, f"virtual tensor {name} is read here but no node writes it")
        problem = _mode_problem(g)
        if problem:
            ctx.fail(path + problem[0], problem[1])

    def predicate(self):
        return _graph_fast


def _mode_problem(g):
    """(path suffix, problem) where the finalizeMode does not fit the graph, else None."""
    mode, nodes = g["finalizeMode"], g["nodes"]
    need = FINALIZE_MODE_NEEDS.get(mode)
    if need is not None and not any(n["operation"] == need for n in nodes):
        return ("finalizeMode",), (f"finalizeMode {mode} needs a {_short_op(need)} node and this graph has none "
                                   "(cuDNN 9.19 crashes on that)")
    if mode in UNIT_STRIDE_MODES:
        tensors = {t["name"]: t for t in g["tensors"]}
        for i, n in enumerate(nodes):
            if n["operation"] != _MATMUL:
                continue
            for k in ("matA", "matB", "matC"):
                t = tensors.get(n.get(k))
                if t is None or t["isVirtual"]:
                    continue
                matrix = list(zip(t["dim"][-2:], t["stride"][-2:]))
                if not any(s == 1 and d > 1 for d, s in matrix) and any(d > 1 for d, _ in matrix):
                    return ("nodes", i, k), (f"tensor {t['name']} (dims {t['dim']}, strides {t['stride']}) has no "
                                             f"stride 1 in its last two (matrix) dimensions: in a {mode} graph the "
                                             "fused attention engines of cuDNN 9.19 crash on that")
    return None


_GRAPH_FIELDS_FAST = Graph.fields.predicate()
_TENSOR_GENERIC = TENSOR.predicate()
_TENSOR_KEYS = frozenset(TENSOR_REQUIRED)
_T = TENSOR.fields
_NAME_MATCH, _DT_MATCH, _REORDER_MATCH = _INT_NAME.match, _T["dataType"].match, _T["reordering"].match
_VC, _VD, _PA = _T["vectCount"], _T["vectDim"], _T["ptrAlignment"]
assert type(_T["dim"].item) is type(_T["stride"].item) is Int and _T["dim"].item.lo == _T["stride"].item.lo == 1


def _tensor_fast(t, c):
    """TENSOR.predicate() by hand for the commonest tensor (no isRagged): the hottest object, ~2x faster.
    Same rules, from the same table entries (test_fast_and_slow_paths_agree compares it with the slow path)."""
    if type(t) is not dict or t.keys() != _TENSOR_KEYS:
        return _TENSOR_GENERIC(t, c)
    name, dim, stride = t["name"], t["dim"], t["stride"]
    vc, vd, pa = t["vectCount"], t["vectDim"], t["ptrAlignment"]
    dt, ro, iv, ib = t["dataType"], t["reordering"], t["isVirtual"], t["isByValue"]
    if not (type(name) is str and _NAME_MATCH(name) is not None and len(name) < 19
            and type(dt) is str and _DT_MATCH(dt) is not None and type(ro) is str and _REORDER_MATCH(ro) is not None
            and (iv is True or iv is False) and (ib is True or ib is False)
            and type(vc) is int and _VC.lo <= vc <= _VC.hi and type(pa) is int and _PA.lo <= pa <= _PA.hi
            and not pa & (pa - 1) and type(dim) is list and type(stride) is list
            and 1 <= len(dim) <= MAX_RANK and len(stride) == len(dim) and type(vd) is int and _VD.lo <= vd < len(dim)
            and _INT_TYPE >= set(map(type, dim + stride)) and min(dim) >= 1 and min(stride) >= 1
            and max(stride) <= INT64_MAX):
        return False
    if _prod(dim) > MAX_TENSOR_SPAN or sum(map(_mul, dim, stride)) - sum(stride) >= MAX_TENSOR_SPAN:
        return False
    c.n += 10
    return True


_TENSOR_FAST = _tensor_fast


def _same(a, b):
    """a == b with the types too (1 == 1.0 == True for ==): marshal writes each type apart."""
    try:
        return marshal.dumps(a) == marshal.dumps(b)
    except ValueError:  # NaN / Infinity markers: not marshallable, no shortcut
        return False


def _graph_fast(g, c):
    for seen in c.graphs:
        # the same graph again (a kernel cache repeats it in its keys): == at C speed, then the types
        if g == seen[0] and _same(g, seen[0]):
            c.n += seen[1]
            return True
    before = c.n
    if not _graph_fast_check(g, c):
        return False
    c.graphs.append((g, c.n - before))
    return True


def _graph_fast_check(g, c):
    if not _GRAPH_FIELDS_FAST(g, c):
        return False
    tensors, nodes = g["tensors"], g["nodes"]
    if type(tensors) is not list or not 1 <= len(tensors) <= MAX_ARRAY:
        return False
    if type(nodes) is not list or not 1 <= len(nodes) <= MAX_ARRAY:
        return False
    names, virtual = set(), set()
    for t in tensors:
        if not _TENSOR_FAST(t, c):
            return False
        name = t["name"]
        if name in names:
            return False
        names.add(name)
        if t["isVirtual"]:
            virtual.add(name)
    producer, reads = {}, []
    ops = _OPS
    for i, node in enumerate(nodes):
        if type(node) is not dict:
            return False
        op = node.get("operation")
        op = ops.get(op) if type(op) is str else None
        if op is None or not op.fast_params(node, c):
            return False
        c.n += len(node)
        for k, role in op.roles.items():
            v = node.get(k, _MISSING)
            if v is _MISSING:
                continue
            if role == INS:
                if type(v) is not list or not 1 <= len(v) <= MAX_ARRAY:
                    return False
                for x in v:
                    if type(x) is not str or x not in names:
                        return False
                    reads.append((i, x))
            elif type(v) is not str or v not in names:
                return False
            elif role == OUT:
                if v in producer:
                    return False
                producer[v] = i
            else:
                reads.append((i, v))
    for i, name in reads:
        j = producer.get(name)
        if j is not None and j >= i or j is None and name in virtual:
            return False
    return _mode_problem(g) is None


GRAPH = Graph()


# ------------------------------------------------------------------------------------------------
# engines and their compiled kernels
# ------------------------------------------------------------------------------------------------
KNOB_NAMES = frozenset("CUDNN_KNOB_TYPE_" + k for k in (
    "ARRAY_SIZE_PER_THREAD BLOCK_SIZE CHUNK_K COUNTS CTA_COUNT CTA_SPLIT_K_MODE EDGE IDX_MODE KBLOCK KERNEL_CFG "
    "LDGA LDGB LDGC LOAD_SIZE MULTIPLY NUM_C_PER_BLOCK OCCUPANCY REDUCTION_MODE SINGLEBUFFER SLICED SPECFILT "
    "SPLIT_COLS SPLIT_H SPLIT_K SPLIT_K_BUF SPLIT_K_SLC SPLIT_P_SLC SPLIT_RS STAGES STREAM_K SWAP_AB SWIZZLE "
    "TILEK TILE_CGA TILE_CGA_M TILE_CGA_N TILE_COLS TILE_M TILE_N TILE_ROWS TILE_SIZE USE_TEX WARP_SPEC_CFG "
    "WINO_TILE WORKSPACE").split())


class Knobs(Check):
    """knobChoices: {CUDNN_KNOB_TYPE_<one of cuDNN 9.19's knobs>: int32 choice} (cuDNN: IsInt)."""

    def __call__(self, v, path, ctx):
        if type(v) is not dict:
            ctx.fail(path, f"expected an object of knob choices, got {_show(v)}")
        ctx.members += len(v)
        for k, x in v.items():
            if k not in KNOB_NAMES:
                _utf8(k, path, ctx)
                ctx.fail(path + (k,), f"unknown knob (cuDNN 9.19 knobs are CUDNN_KNOB_TYPE_ + one of: "
                                      f"{', '.join(sorted(n[16:] for n in KNOB_NAMES))})")
            _I32(x, path + (k,), ctx)

    def predicate(self):
        return _knobs_fast


def _knobs_fast(v, c):
    if type(v) is not dict or not v.keys() <= KNOB_NAMES or not _ints_ok(list(v.values()), INT32_MIN, INT32_MAX):
        return False
    c.n += len(v)
    return True


# kernel parameters: a block of bytes (rawData) that cuDNN patches at run time at the offsets listed
UPDATE_METHODS = ("pointer", "value", "workspace", "tma_desc", "shape_from_node", "shape_from_tensor",
                  "shape_from_param", "shape_from_graph")
_PATCH_BYTES = {"pointer": 8, "workspace": 8, "tma_desc": 64}  # bytes written at the offset ("size" otherwise)
OFFSET_FIELDS = {
    "value": _I32_NONNEG,  # the byte offset into rawData (cuDNN: IsInt)
    "update_as": OneOf(*UPDATE_METHODS),
    "uid": _I64,
    "context_uid": _I64,
    "size": _I32_NONNEG,
    "idx_shape_update_fn": _I32_NONNEG,
    "name": Text(1024),
}
OFFSET = Object(OFFSET_FIELDS, required=("value",), what="kernel parameter offset object")


def _kernel_params_then(kp):
    """Every patch lands inside rawData (cuDNN would write past its end on the GPU otherwise)."""
    raw = kp["rawData"]
    size = len(binascii.a2b_base64(raw)) if raw else 0
    for i, o in enumerate(kp["offsets"]):
        width = o.get("size", _PATCH_BYTES.get(o.get("update_as"), 0))
        if o["value"] + width > size:
            return ("offsets", i), (f"patches bytes {o['value']} to {o['value'] + width} of a {size}-byte rawData "
                                    "(cuDNN would write past its end)")
    return None


KERNEL_PARAMS = Object({"offsets": Array(OFFSET, 0), "rawData": Base64(MAX_RAW_DATA)},
                       required=("offsets", "rawData"), then=_kernel_params_then, what="kernelParams object")
KERNEL_FIELDS = {"kernelName": Text(4096), "kernelParams": KERNEL_PARAMS, "cubin": Cubin()}
KERNEL = Object(KERNEL_FIELDS, required=("cubin",), what="kernel object")
PAYLOAD = Object({"kernels": Array(KERNEL, 1, 1024)}, required=("kernels",), what="payload object")

ENGINE_FIELDS = {
    "engineId": _I32_NONNEG,
    "smVersion": _I32_NONNEG,
    "targetSMcount": _I32_NONNEG,
    "knobChoices": Knobs(),
    "payload": PAYLOAD,
}
ENGINE = Object(ENGINE_FIELDS, required=("engineId", "knobChoices"), what="engine object")


# ------------------------------------------------------------------------------------------------
# the three documents
# ------------------------------------------------------------------------------------------------
TABLE_RELEASES = (91002, 91400, 91900, 92200, 92800, 92801)  # the cuDNN releases with a table of their own
CUDNN_VERSION = TABLE_RELEASES[-1]  # the newest release with a table (newer ones fall back to it, see _Tables)


def _in(release, ranges):
    return any(since <= release and (until is None or release <= until) for since, until in ranges)


# kernel_cache[].key.type: cuDNN 9.19 accepts 0, 1 and 2; 3 .. 2**31-1 and negative values: SIGSEGV
KERNEL_CACHE_KEY_TYPES = (0, 2)
CACHE_KEY_FIELDS = {
    "type": Int(*KERNEL_CACHE_KEY_TYPES),
    "engineId": _I32_NONNEG,
    "knobChoices": Knobs(),
    "check_specialization": Bool(),
    "operationGraph": GRAPH,  # checked exactly like the top-level graph
    "bpa_a": _I32_NONNEG,  # type 1 (fort native) keys: bpa_a/b/c (cuDNN: IsInt)
    "bpa_b": _I32_NONNEG,
    "bpa_c": _I32_NONNEG,
    "shader_hash_key": Int(0, (1 << 64) - 1),  # type 2 (tensor IR) keys (cuDNN: IsUint64)
}
CACHE_KEY = Object(CACHE_KEY_FIELDS, required=("type", "engineId", "knobChoices", "operationGraph"),
                   what="kernel cache key object")
CACHE_ENTRY = Object({"key": CACHE_KEY, "value": Array(KERNEL, 0, 1024)}, required=("key", "value"),
                     what="kernel cache entry object")


class _Tables:
    """The checkers of one release: the table of ``table`` (a release in TABLE_RELEASES) for ``release``.

    A release with a table of its own gets it, strict. Any other release (newer than every table, between
    two, older than the oldest) gets the nearest older table (the oldest for one older than all) with
    ``lenient`` on: unknown members pass through unchecked (counted, their names valid), the members of
    the table keep their checks, and only members every table requires stay required: what that cuDNN
    writes itself is never refused, the structural guards (size, depth, names, types, crash guards) hold.
    """

    def __init__(self, release, table, lenient):
        self.release, self.table, self.lenient = release, table, lenient
        self.deviceprop_order = tuple(k for k, (_, present, _) in DEVICEPROP_MEMBERS.items() if _in(table, present))
        # what the table's release requires (the best guess for a release without a table), and what the
        # checks require: that, or when lenient only what every table requires
        self.deviceprop_required = tuple(k for k, (_, _, req) in DEVICEPROP_MEMBERS.items() if _in(table, req))
        required = [k for k in self.deviceprop_required if not lenient or all(
            _in(t, DEVICEPROP_MEMBERS[k][2]) for t in TABLE_RELEASES)]
        self.deviceprop = Object({k: DEVICEPROP_MEMBERS[k][0] for k in self.deviceprop_order}, required=required,
                                 what="device profile object", extra=lenient)
        plan_fields = {"cudnnVersion": _I32_NONNEG, "schemaVersion": _I32_NONNEG, "operationGraph": GRAPH,
                       "GPUProfile": self.deviceprop, "engine": ENGINE}
        self.plan = Object(plan_fields, required=plan_fields, what="execution plan object", extra=lenient)
        cache_fields = {"cudnnVersion": _I32_NONNEG, "schemaVersion": _I32_NONNEG, "operationGraph": GRAPH,
                        "kernel_cache": Array(CACHE_ENTRY, 0)}
        self.kernel_cache = Object(cache_fields, required=cache_fields, what="kernel cache object", extra=lenient)
        self.schemas = {"plan": self.plan, "kernel cache": self.kernel_cache, "device profile": self.deviceprop}


_BY_RELEASE = {}  # release -> _Tables
_DEFAULT = []  # [the loaded cuDNN's _Tables], once known
_WARNED = set()


def _release_text(v):
    return f"{v // 10000}.{v % 10000 // 100}.{v % 100}"


def table_release(release=None) -> int:
    """The release whose table checks JSON for cuDNN ``release`` (default: the loaded cuDNN): the release
    itself when it has a table, else the nearest older one (the oldest table for a release older than all)."""
    return _tables(release).table


def _tables(release):
    if release is None:
        if _DEFAULT:
            return _DEFAULT[0]
        try:
            version = _loader.load_cudnn().version
        except CudnnLibraryNotFoundError:  # no cuDNN to give the JSON to: the newest table, strict
            version = CUDNN_VERSION
        tables = _tables(version)
        _DEFAULT.append(tables)
        return tables
    tables = _BY_RELEASE.get(release)
    if tables is not None:
        return tables
    version = parse_version(release, "release")
    tables = _BY_RELEASE.get(version)
    if tables is None:
        if version in TABLE_RELEASES:
            tables = _Tables(version, version, False)
        else:
            older = [t for t in TABLE_RELEASES if t < version]
            table = older[-1] if older else TABLE_RELEASES[0]
            tables = _Tables(version, table, True)
        _BY_RELEASE[version] = tables
    if tables.lenient and version not in _WARNED:
        _WARNED.add(version)
        how = "is newer than every table" if version > CUDNN_VERSION else (
            "is older than every table" if version < TABLE_RELEASES[0] else "has no table of its own")
        warnings.warn(
            f"cuDNN {_release_text(version)} {how} in cudnn_backend's JSON checks (tables: "
            f"{', '.join(map(_release_text, TABLE_RELEASES))}); its plan, kernel cache and device profile JSON is "
            f"checked with the {_release_text(tables.table)} table, members unknown to it passed through unchecked. "
            "Derive a table for it with tools/derive_json_tables.py.", JsonTableFallbackWarning, stacklevel=4)
    _BY_RELEASE[release] = tables
    return tables


def deviceprop_members(release=None, *, required=True) -> tuple:
    """The device-profile (DEVICEPROP JSON) members of cuDNN ``release`` (default: the loaded cuDNN) in the
    order cuDNN writes them: those it requires (``required=True``), or every member its table knows.
    For a release without a table: those of the nearest older table (see ``table_release``), the best
    guess of what to write for it (its checks then require only what every table requires)."""
    tables = _tables(release)
    return tables.deviceprop_required if required else tables.deviceprop_order


def _check(kind, value, canonical, release):
    schema = (_DEFAULT[0] if release is None and _DEFAULT else _tables(release)).schemas[kind]
    text = _as_text(kind, value)
    small, blobs = _cut_blobs(text)
    depth, members = _structure(kind, small)
    if depth > MAX_DEPTH:
        raise JsonCheckError(kind, "", f"nested deeper than {MAX_DEPTH} levels (real documents nest at most 9; "
                                       "cuDNN's parser overflows its stack on deep nesting)")
    try:
        doc = _DECODER.decode(small)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise JsonCheckError(kind, "", "nested too deeply") from None
    except ValueError as e:
        raise JsonCheckError(kind, "", f"not valid JSON ({e})") from None
    fast = _Fast(blobs)
    if schema.predicate()(doc, fast) and len(fast.used) == len(blobs):
        seen = fast.n
    else:  # the slow path says what is wrong (or finds it right after all: the fast path is conservative)
        ctx = _Context(kind, blobs)
        schema(doc, (), ctx)
        if len(ctx.used) != len(blobs):  # pragma: no cover - every "cubin" member is a kernel's
            raise JsonCheckError(kind, "", "a cubin outside a kernel object")
        seen = ctx.members
    if seen != members:
        found = _find_duplicate(small)
        if found:
            raise JsonCheckError(kind, _format_path(found[0]), f"duplicate key {json.dumps(found[1])} (cuDNN would "
                                                               "read the first, Python the last)")
        raise JsonCheckError(kind, "", "duplicate keys")  # pragma: no cover - the counts say there are some
    if not canonical and text.isascii() and "-0" not in small:
        # Both parsers read this text alike: no duplicate keys, no raw non-ASCII, no -0 (an int 0 for
        # Python, a double for cuDNN), numbers in range. Handing it over unchanged saves a json.dumps,
        # as slow as the rest of the check together on a cubin-heavy plan.
        return text
    out = json.dumps(doc, separators=(",", ":"), ensure_ascii=True, allow_nan=True, default=_special_default)
    return _paste_blobs(out, blobs)


def check_plan_json(text, *, canonical=False, release=None) -> str:
    """Check a serialized execution plan (CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION) and return
    the text to give cuDNN: the input itself where both parsers read it alike (compact or not), else
    (and with ``canonical=True``) the canonical re-serialization (compact, ASCII, keys once).
    JsonCheckError (a ValueError) names the offending field; TypeError for a value that is not text.
    ``release``: the cuDNN release the text is meant for (91900, "9.19.0"; default: the loaded cuDNN);
    its table decides (see ``table_release``; a release without one warns once, JsonTableFallbackWarning)."""
    return _check("plan", text, canonical, release)


def check_kernel_cache_json(text, *, canonical=False, release=None) -> str:
    """Check a serialized kernel cache (CUDNN_ATTR_KERNEL_CACHE_JSON_REPRESENTATION): as check_plan_json."""
    return _check("kernel cache", text, canonical, release)


def check_deviceprop_json(text, *, canonical=False, release=None) -> str:
    """Check a device profile (CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION): as check_plan_json. The members
    each release requires: ``deviceprop_members(release)``."""
    return _check("device profile", text, canonical, release)
