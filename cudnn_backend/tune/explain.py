"""Why cuDNN refuses a graph (NOT_SUPPORTED), and the smallest change that makes it supported.

``why(graph, device_profile)`` probes the graph with every detail kept (``support.probe_graph(detail=True)``): the
stage it stopped at (the builder, the package's checks, cuDNN's finalize, empty heuristics, every config refused
at plan build) and, at each stage, cuDNN's own reasons, captured from its log through the package's logging
callback (``cudnn_messages``): per heuristics mode, per engine, per config.

Then, for a refused graph, a **minimization**: variations of the graph are built and probed offline, and the
cheapest one cuDNN supports is reported as a difference of the graph, per tensor and operation. A variation is
a rebuilt graph: ``GraphDescription`` keeps every operation as plain data (``to_dict``, tensors inline, with
their names, by-value scalars' values and ``allow_unconsumed`` marks) and ``rebuild()`` makes a fresh ``Graph`` of
it. The variations, each costed by its difference (one line per tensor or operation attribute changed, tensor
or operation removed), plus 2 for a split (two graphs run, at least two kernels) and 3 for a drop (the graph no
longer computes the same):

* compute type of an operation (or of all: FLOAT, HALF);
* byte alignment of a real tensor (16);
* virtual-ness: a virtual intermediate made a real output, a real intermediate made virtual;
* data type: of the graph's inputs and outputs together (fp16, bf16, fp32), of one real tensor, of every
  virtual intermediate;
* layout: every tensor of rank 4 and more NHWC or NCHW (strides repacked), or one real tensor;
* convolution stride or dilation 1 (the tensors of the old output shape resized);
* drop an operation (a last one, or a one-input pointwise operation bypassed);
* split the graph in two where only virtual tensors cross (they become real), both halves supported.

Single variations are tried first, cheapest first; when none works, pairs of the cheapest of different kinds,
within ``budget_s`` and ``max_variations``. The answer is verified with every plan built (``plans="all"``).

Offline, a graph refused for a fact only the GPU gives (``SupportResult.unknown``: cuDNN 9.19's missing cluster
layout, ...) gets no minimization: the GPU may run it as it is, so no change is proposed; the explanation says what
offline lacked, and ``why`` on the GPU answers it.
"""
from __future__ import annotations

import copy
import itertools
import time
from dataclasses import dataclass, field

from cudnn_backend.core._descriptor import Descriptor
from cudnn_backend.core._tables import attribute_io
from cudnn_backend.core.families._build import channels_last
from cudnn_backend.core.names import default_tensor_name
from cudnn_backend.core.plain import PlainData
from cudnn_backend.core.versions import format_version, loaded_version
from cudnn_backend.errors import CudnnBackendError
from cudnn_backend.graph import Graph, shapes
from cudnn_backend.patterns import Pattern
from cudnn_backend.runtime.engines import check_graph
from cudnn_backend.runtime.profiles import as_deviceprop
from cudnn_backend.tune import graphs
from cudnn_backend.tune.options import WhyOptions
from cudnn_backend.tune.support import SupportResult, call_builder, cudnn_explanations, materialize, probe_graph
from cudnn_backend.typed import descriptor_class
from cudnn_backend.typed.introspection import signature_of, tensor_name, tensor_slots, to_dict
from cudnn_backend.typed.tensors import data_type_name

__all__ = ["GraphDescription", "Variation", "Explanation", "why", "variations", "diff_descriptions", "VARIATION_KINDS"]

_TENSOR = "CUDNN_BACKEND_TENSOR_DESCRIPTOR"
_COMPUTE_KEYWORDS = ("comp_type", "math_prec", "compute_data_type")
_IO_TYPES = ("CUDNN_DATA_HALF", "CUDNN_DATA_BFLOAT16", "CUDNN_DATA_FLOAT")
#: the variation kinds, in the order a tie in cost is broken
VARIATION_KINDS = ("compute", "alignment", "virtual", "data type", "layout", "convolution", "split", "drop")
#: what a variation costs beyond the lines of its difference: it changes what the graph computes (drop) or how
#: many kernels at least run (split)
_PENALTY = {"split": 2, "drop": 3}
_CONVOLUTIONS = {"CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR": ("x", "w", "y"),
                 "CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR": ("dx", "w", "dy"),
                 "CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR": ("x", "dw", "dy")}
_POINTWISE = "CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR"


def _op_label(op: dict) -> str:
    label = "".join(w.capitalize() for w in op["descriptor_type"][len("CUDNN_BACKEND_OPERATION_"):-len("_DESCRIPTOR")]
                    .split("_"))
    pw = op["attributes"].get("pw_descriptor")
    if isinstance(pw, dict):
        mode = pw["attributes"].get("mode")
        if mode:
            label += " " + str(mode).replace("CUDNN_POINTWISE_", "")
    return label


# ---------------------------------------------------------------------------------------------
# the graph as data
# ---------------------------------------------------------------------------------------------
@dataclass
class GraphDescription:
    """A graph as plain data that ``rebuild()`` turns into a fresh ``Graph``: ``operations`` (each operation's
    ``to_dict()``, tensors inline), ``names`` ({uid: display name}), ``scalars`` ({uid: by-value scalar's value}),
    ``unconsumed`` (UIDs of virtual outputs marked ``allow_unconsumed``)."""

    name: str
    operations: list
    names: dict = field(default_factory=dict)
    scalars: dict = field(default_factory=dict)
    unconsumed: set = field(default_factory=set)

    @classmethod
    def of(cls, graph) -> "GraphDescription":
        """The description of a ``Graph`` (built or not), a ``Pattern`` or a finalized operation graph."""
        if isinstance(graph, Pattern):
            graph = graph.graph
        if isinstance(graph, Graph):
            ops, name = list(graph.operations), graph.name
        elif isinstance(graph, Descriptor):
            ops, name = list(graphs.operations_of(graph)), "graph"
        else:
            raise TypeError(f"graph: expected a Graph, a Pattern or an operation graph, not {type(graph).__name__}")
        names, scalars, unconsumed = {}, {}, set()
        for op in ops:
            for _, t, _ in tensor_slots(op):
                uid = signature_of(t).uid
                names.setdefault(uid, tensor_name(t))
                value = getattr(t, "scalar_value", None)
                if value is not None:
                    scalars[uid] = value
                if getattr(t, "allow_unconsumed", False):
                    unconsumed.add(uid)
        return cls(name, [to_dict(op) for op in ops], names, scalars, unconsumed)

    def copy(self) -> "GraphDescription":
        """A deep copy (edits of the copy leave this one alone)."""
        return GraphDescription(self.name, copy.deepcopy(self.operations), dict(self.names), dict(self.scalars),
                                set(self.unconsumed))

    # -- reading -----------------------------------------------------------------------------
    def slots(self) -> list:
        """Per operation: [(keyword, uid, is_output)] of its tensors."""
        out = []
        for op in self.operations:
            cls = descriptor_class(op["descriptor_type"])
            row = []
            for kw, value in op["attributes"].items():
                for item in value if isinstance(value, list) else [value]:
                    if isinstance(item, dict) and item.get("descriptor_type") == _TENSOR:
                        row.append((kw, item["attributes"]["unique_id"],
                                    attribute_io(cls._spec_for(kw).name) == "output"))
            out.append(row)
        return out

    def tensors(self) -> dict:
        """{uid: tensor attributes} (the first occurrence of each)."""
        out = {}
        for d in _tensor_dicts(self.operations):
            out.setdefault(d["attributes"]["unique_id"], d["attributes"])
        return out

    def producers(self) -> dict:
        """{uid: index of the operation writing it}."""
        return {uid: i for i, row in enumerate(self.slots()) for _, uid, out in row if out}

    def consumers(self) -> dict:
        """{uid: [indices of the operations reading it]}."""
        out: dict = {}
        for i, row in enumerate(self.slots()):
            for _, uid, is_out in row:
                if not is_out:
                    out.setdefault(uid, []).append(i)
        return out

    def name_of(self, uid) -> str:
        """``"name (uid N)"`` of a tensor, as the differences print it."""
        return f"{self.names.get(uid) or default_tensor_name(uid)} (uid {uid})"

    # -- editing -----------------------------------------------------------------------------
    def edit_tensor(self, uid, **changes) -> "GraphDescription":
        """A copy with every occurrence of tensor ``uid`` changed (a value of None removes the attribute)."""
        out = self.copy()
        for d in _tensor_dicts(out.operations):
            attrs = d["attributes"]
            if attrs.get("unique_id") == uid:
                for k, v in changes.items():
                    if v is None:
                        attrs.pop(k, None)
                    else:
                        attrs[k] = v
        return out

    # -- building ----------------------------------------------------------------------------
    def rebuild(self) -> Graph:
        """A fresh, unfinalized ``Graph`` of these operations (one tensor object per UID, named as before)."""
        g = Graph(self.name)
        made: dict = {}
        for op in self.operations:
            g.add(self._make(op, made))
        return g

    def _make(self, d, made):
        if d.get("descriptor_type") == _TENSOR:
            uid = d["attributes"]["unique_id"]
            t = made.get(uid)
            if t is None:
                cls = descriptor_class(_TENSOR)
                t = cls()
                for kw, value in d["attributes"].items():
                    t.set_keyword(kw, tuple(value) if isinstance(value, list) else value)
                t.name = self.names.get(uid)
                if uid in self.scalars:
                    t.scalar_value = self.scalars[uid]
                if uid in self.unconsumed:
                    t.allow_unconsumed = True
                t.finalize()
                made[uid] = t
            return t
        obj = descriptor_class(d["descriptor_type"])()
        for kw, value in d["attributes"].items():
            obj.set_keyword(kw, self._value(value, made))
        obj.finalize(check_required=False)  # cuDNN judges what it needs; the original was accepted as it was
        return obj

    def _value(self, value, made):
        if isinstance(value, dict) and "descriptor_type" in value:
            return self._make(value, made)
        if isinstance(value, list):
            if value and isinstance(value[0], dict):
                return [self._make(v, made) for v in value]
            return [tuple(v) if isinstance(v, list) else v for v in value]
        return value


def _tensor_dicts(obj):
    """Every tensor dict inside a description's operations (recursively)."""
    if isinstance(obj, dict):
        if obj.get("descriptor_type") == _TENSOR:
            yield obj
            return
        for v in obj.get("attributes", obj).values() if "descriptor_type" in obj else obj.values():
            yield from _tensor_dicts(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _tensor_dicts(v)


# ---------------------------------------------------------------------------------------------
# differences
# ---------------------------------------------------------------------------------------------
_TENSOR_FIELDS = ("dimensions", "strides", "data_type", "is_virtual", "byte_alignment", "is_by_value")


def _flatten(attrs, prefix="") -> dict:
    """An operation's non-tensor attributes as {path: value} (child descriptors' attributes dotted)."""
    out = {}
    for k, v in attrs.items():
        if isinstance(v, dict) and "descriptor_type" in v:
            if v["descriptor_type"] == _TENSOR:
                out[prefix + k] = f"uid {v['attributes']['unique_id']}"
            else:
                out.update(_flatten(v["attributes"], prefix + k + "."))
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            out[prefix + k] = [f"uid {x['attributes']['unique_id']}" if x.get("descriptor_type") == _TENSOR else
                               x["descriptor_type"] for x in v]
        else:
            out[prefix + k] = v
    return out


def _show(v) -> str:
    if isinstance(v, str):
        return data_type_name(v) if v.startswith("CUDNN_DATA_") else v
    if v is None:
        return "-"
    return str(v)


def diff_descriptions(before: GraphDescription, after: GraphDescription) -> list:
    """The difference as lines: tensors changed (per attribute), added or removed; operations removed, and
    attributes changed per operation."""
    lines = []
    tb, ta = before.tensors(), after.tensors()
    for uid in sorted(set(tb) | set(ta)):
        if uid not in ta:
            lines.append(f"- tensor {before.name_of(uid)}: no longer in the graph")
            continue
        if uid not in tb:
            lines.append(f"+ tensor {after.name_of(uid)}")
            continue
        for f in _TENSOR_FIELDS:
            a, b = tb[uid].get(f), ta[uid].get(f)
            if f == "is_virtual":
                a, b = bool(a), bool(b)
            if a != b:
                what = {"is_virtual": "virtual", "byte_alignment": "alignment", "dimensions": "dims"}.get(f, f)
                extra = ""
                if f == "strides" and tb[uid].get("dimensions") == ta[uid].get("dimensions"):
                    la, lb = _layout_of(tb[uid]), _layout_of(ta[uid])
                    extra = f" ({la.upper()} → {lb.upper()})" if la != lb else ""
                lines.append(f"~ tensor {before.name_of(uid)}: {what} {_show(a)} → {_show(b)}{extra}")
    sig_b = [(op["descriptor_type"], tuple(u for _, u, o in row if o)) for op, row in zip(before.operations,
                                                                                          before.slots())]
    sig_a = [(op["descriptor_type"], tuple(u for _, u, o in row if o)) for op, row in zip(after.operations,
                                                                                          after.slots())]
    matched = {}
    for i, s in enumerate(sig_b):
        if s in sig_a:
            matched[i] = sig_a.index(s)
    for i, op in enumerate(before.operations):
        if i not in matched:
            lines.append(f"- operation {i} {_op_label(op)}: removed")
            continue
        fb, fa = _flatten(op["attributes"]), _flatten(after.operations[matched[i]]["attributes"])
        for k in sorted(set(fb) | set(fa)):
            if fb.get(k) != fa.get(k):
                lines.append(f"~ operation {i} {_op_label(op)}: {k} {_show(fb.get(k))} → {_show(fa.get(k))}")
    for j, op in enumerate(after.operations):
        if j not in matched.values():
            lines.append(f"+ operation {_op_label(op)}")
    return lines


# ---------------------------------------------------------------------------------------------
# variations
# ---------------------------------------------------------------------------------------------
@dataclass
class Variation:
    """One change of a graph: its ``kind`` (``VARIATION_KINDS``), a ``label``, the changed ``parts`` (one
    description, or two for a split) and its ``cost`` (see the module's notes)."""

    kind: str
    label: str
    parts: list
    cost: int = 0  # set by ``variations``: the lines of its difference plus the kind's penalty

    def diff(self, before: GraphDescription) -> list:
        """The variation as lines of difference from ``before`` (``diff_descriptions``; for a split, each graph)."""
        if len(self.parts) == 1:
            return diff_descriptions(before, self.parts[0])
        lines = []
        for i, part in enumerate(self.parts):
            lines.append(f"graph {i + 1} of {len(self.parts)}: " + ", ".join(_op_label(op) for op in part.operations))
        made_real = [uid for uid, t in self.parts[0].tensors().items() if not t.get("is_virtual") and
                     before.tensors().get(uid, {}).get("is_virtual")]
        for uid in made_real:
            lines.append(f"~ tensor {before.name_of(uid)}: virtual True → False (written by graph 1, read by "
                         "graph 2)")
        return lines


def _real_tensors(desc) -> dict:
    return {uid: t for uid, t in desc.tensors().items() if not t.get("is_virtual") and not t.get("is_by_value")}


def _packed(dims, nhwc) -> list:
    if nhwc and len(dims) >= 3:
        return shapes.nhwc_strides(dims)
    return shapes.packed_strides(dims)


def _layout_of(t) -> str:
    dims, strides = t["dimensions"], t["strides"]
    if channels_last(dims, strides):
        return "nhwc"
    return "nchw" if len(dims) >= 4 else "row"


def _resize(desc, old_dims, new_dims, keep) -> GraphDescription:
    """Every tensor of dims ``old_dims`` (but those in ``keep``) resized to ``new_dims``, strides repacked in their
    own axis order."""
    out = desc
    for uid, t in desc.tensors().items():
        if uid in keep or list(t["dimensions"]) != list(old_dims):
            continue
        out = out.edit_tensor(uid, dimensions=list(new_dims),
                              strides=shapes.strides_like(list(new_dims), list(t["strides"])))
    return out


def variations(desc: GraphDescription) -> list:
    """Every single variation of a description (see the module's notes), cheapest first."""
    out = []
    tensors = desc.tensors()
    real = _real_tensors(desc)
    producers, consumers = desc.producers(), desc.consumers()
    # compute types
    for i, op in enumerate(desc.operations):
        for path, current in _compute_paths(op):
            for target in ("CUDNN_DATA_FLOAT", "CUDNN_DATA_HALF"):
                if target != current:
                    new = desc.copy()
                    _set_path(new.operations[i], path, target)
                    out.append(Variation("compute", f"compute of operation {i} ({_op_label(op)}) "
                                         f"{data_type_name(current)} → {data_type_name(target)}", [new]))
    all_paths = [(i, p, c) for i, op in enumerate(desc.operations) for p, c in _compute_paths(op)]
    for target in ("CUDNN_DATA_FLOAT", "CUDNN_DATA_HALF"):
        changing = [(i, p) for i, p, c in all_paths if c != target]
        if len(changing) > 1:
            new = desc.copy()
            for i, p in changing:
                _set_path(new.operations[i], p, target)
            out.append(Variation("compute", f"compute of every operation → {data_type_name(target)}", [new]))
    # alignment
    for uid, t in real.items():
        if int(t.get("byte_alignment", 16) or 16) < 16:
            out.append(Variation("alignment", f"alignment of {desc.name_of(uid)} → 16 bytes",
                                 [desc.edit_tensor(uid, byte_alignment=16)]))
    # virtual-ness
    for uid, t in tensors.items():
        if t.get("is_virtual") and uid in producers and uid in consumers:
            new = desc.edit_tensor(uid, is_virtual=None)
            out.append(Variation("virtual", f"{desc.name_of(uid)} made a real tensor", [new]))
        elif not t.get("is_virtual") and not t.get("is_by_value") and uid in producers and uid in consumers:
            out.append(Variation("virtual", f"{desc.name_of(uid)} made virtual",
                                 [desc.edit_tensor(uid, is_virtual=True)]))
    # data types
    io = {}
    for uid, t in real.items():
        io.setdefault(t.get("data_type"), []).append(uid)
    for dt, uids in io.items():
        if dt not in _IO_TYPES:
            continue
        for target in _IO_TYPES:
            if target == dt:
                continue
            new = desc
            for uid in uids:
                new = new.edit_tensor(uid, data_type=target)
            if len(uids) > 1:
                out.append(Variation("data type", f"every {data_type_name(dt)} input and output → {data_type_name(target)}",
                                     [new]))
            for uid in uids:
                out.append(Variation("data type", f"{desc.name_of(uid)} {data_type_name(dt)} → {data_type_name(target)}",
                                     [desc.edit_tensor(uid, data_type=target)]))
    virtual_f32 = [uid for uid, t in tensors.items() if t.get("is_virtual") and t.get("data_type") == "CUDNN_DATA_FLOAT"]
    if virtual_f32:
        new = desc
        for uid in virtual_f32:
            new = new.edit_tensor(uid, data_type="CUDNN_DATA_HALF")
        out.append(Variation("data type", "every virtual intermediate float → half", [new]))
    # layout
    wide = {uid: t for uid, t in tensors.items() if len(t["dimensions"]) >= 4 and not t.get("is_by_value")}
    for target in ("nhwc", "nchw"):
        changing = [uid for uid, t in wide.items() if _layout_of(t) != target and
                    list(t["strides"]) != _packed(t["dimensions"], target == "nhwc")]
        if changing:
            new = desc
            for uid in changing:
                new = new.edit_tensor(uid, strides=_packed(wide[uid]["dimensions"], target == "nhwc"))
            out.append(Variation("layout", f"every tensor → {target.upper()}", [new]))
            if len(changing) > 1:
                for uid in changing:
                    if uid in real:
                        out.append(Variation("layout", f"{desc.name_of(uid)} → {target.upper()}", [desc.edit_tensor(
                            uid, strides=_packed(wide[uid]["dimensions"], target == "nhwc"))]))
    # convolution parameters
    for i, op in enumerate(desc.operations):
        roles = _CONVOLUTIONS.get(op["descriptor_type"])
        conv = op["attributes"].get("conv_desc")
        if roles is None or not isinstance(conv, dict):
            continue
        ca = conv["attributes"]
        uid_of = {kw: op["attributes"][kw]["attributes"]["unique_id"] for kw in roles if kw in op["attributes"]}
        x_uid, w_uid, y_uid = (uid_of.get(r) for r in roles)
        if None in (x_uid, w_uid, y_uid):
            continue
        x, w, y = tensors[x_uid], tensors[w_uid], tensors[y_uid]
        for param in ("filter_strides", "dilations"):
            current = list(ca.get(param, []))
            if not current or all(v == 1 for v in current):
                continue
            new = desc.copy()
            _set_path(new.operations[i], ("conv_desc", param), [1] * len(current))
            kwargs = {"padding": ca.get("pre_paddings", 0), "post_padding": ca.get("post_paddings"),
                      "stride": ca.get("filter_strides", 1), "dilation": ca.get("dilations", 1)}
            kwargs["stride" if param == "filter_strides" else "dilation"] = 1
            try:
                new_y = shapes.conv_output_dims(x["dimensions"], w["dimensions"], **kwargs)
            except Exception:  # noqa: BLE001 - a shape that does not work out is no variation
                continue
            resized = _resize(new, y["dimensions"], new_y, keep={x_uid, w_uid})
            what = "stride" if param == "filter_strides" else "dilation"
            out.append(Variation("convolution", f"{what} of operation {i} ({_op_label(op)}) {current} → "
                                 f"{[1] * len(current)}", [resized]))
    # split where only virtual tensors cross
    n = len(desc.operations)
    if n > 1:
        order = _topological(desc)
        for cut in range(1, n):
            first, second = order[:cut], order[cut:]
            crossing = {uid for uid, p in producers.items() if p in first and any(c in second for c in
                                                                                  consumers.get(uid, []))}
            if not crossing:
                continue
            part1 = desc
            for uid in crossing:
                if tensors[uid].get("is_virtual"):
                    part1 = part1.edit_tensor(uid, is_virtual=None, data_type=tensors[uid].get("data_type"))
            p1 = part1.copy()
            p1.operations = [part1.operations[i] for i in first]
            p2 = part1.copy()
            p2.operations = [part1.operations[i] for i in second]
            label = ", ".join(desc.name_of(u) for u in sorted(crossing))
            out.append(Variation("split", f"split into two graphs after operation {order[cut - 1]} "
                                 f"({_op_label(desc.operations[order[cut - 1]])}); {label} made real", [p1, p2]))
    # drop an operation
    for i, op in enumerate(desc.operations):
        outs = [u for kw, u, o in desc.slots()[i] if o]
        if all(u not in consumers for u in outs):  # a last operation: its inputs that were virtual become real
            new = desc.copy()
            new.operations.pop(i)
            ins = [u for kw, u, o in desc.slots()[i] if not o]
            for u in ins:
                if tensors[u].get("is_virtual") and not any(c != i for c in consumers.get(u, [])):
                    new = new.edit_tensor(u, is_virtual=None)
            if new.operations:
                out.append(Variation("drop", f"drop operation {i} ({_op_label(op)})", [new]))
        elif op["descriptor_type"] == _POINTWISE:
            ins = [u for kw, u, o in desc.slots()[i] if not o]
            if len(ins) == 1 and len(outs) == 1 and list(tensors[ins[0]]["dimensions"]) == \
                    list(tensors[outs[0]]["dimensions"]):
                new = _bypass(desc, i, ins[0], outs[0])
                out.append(Variation("drop", f"drop operation {i} ({_op_label(op)}), its readers reading "
                                     f"{desc.name_of(ins[0])}", [new]))
    rank = {k: j for j, k in enumerate(VARIATION_KINDS)}
    for v in out:
        v.cost = len(v.diff(desc)) + _PENALTY.get(v.kind, 0)
    out.sort(key=lambda v: (v.cost, rank[v.kind]))
    return out


def _bypass(desc, i, src, dst) -> GraphDescription:
    """Operation ``i`` (one input ``src``, one output ``dst``) removed; its readers read ``src`` instead."""
    new = desc.copy()
    src_dict = copy.deepcopy(next(d for d in _tensor_dicts(desc.operations) if d["attributes"]["unique_id"] == src))
    new.operations.pop(i)

    def swap(obj):
        if isinstance(obj, dict):
            if obj.get("descriptor_type") == _TENSOR:
                return copy.deepcopy(src_dict) if obj["attributes"]["unique_id"] == dst else obj
            return {k: swap(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [swap(v) for v in obj]
        return obj

    new.operations = [swap(op) for op in new.operations]
    return new


def _topological(desc) -> list:
    slots = desc.slots()
    producers = desc.producers()
    done, order = set(), []
    while len(order) < len(slots):
        progressed = False
        for i, row in enumerate(slots):
            if i in done:
                continue
            if all(producers.get(u, i) in done or producers.get(u) == i for _, u, o in row if not o):
                done.add(i)
                order.append(i)
                progressed = True
        if not progressed:
            order.extend(i for i in range(len(slots)) if i not in done)
            break
    return order


def _compute_paths(op) -> list:
    """[(path, current data type)] of an operation's compute-type attributes (on it or on a child descriptor)."""
    out = []
    for kw, v in op["attributes"].items():
        if kw in _COMPUTE_KEYWORDS and isinstance(v, str):
            out.append(((kw,), v))
        elif isinstance(v, dict) and v.get("descriptor_type") not in (None, _TENSOR):
            for ckw, cv in v["attributes"].items():
                if ckw in _COMPUTE_KEYWORDS and isinstance(cv, str):
                    out.append(((kw, ckw), cv))
    return out


def _set_path(op, path, value):
    node = op["attributes"]
    for key in path[:-1]:
        node = node[key]["attributes"]
    node[path[-1]] = value


# ---------------------------------------------------------------------------------------------
# the explanation
# ---------------------------------------------------------------------------------------------
@dataclass
class Explanation(PlainData):
    """What ``why`` found: the probe ``result`` (with ``detail`` per stage), the ``device`` and ``cudnn_version``,
    the ``minimization`` (the cheapest variation cuDNN supports: kind, label, cost, the difference as lines,
    and the supported result of the changed graph), other working ``alternatives``, how many variations were
    ``tried`` and ``notes``."""

    name: str
    device: str
    cudnn_version: str
    result: SupportResult
    minimization: dict | None = None
    alternatives: list = field(default_factory=list)
    tried: int = 0
    seconds: float = 0.0
    notes: list = field(default_factory=list)

    @property
    def supported(self) -> bool:
        """Whether the graph is supported as it is."""
        return self.result.supported

    @property
    def stage(self) -> str | None:
        """The stage that refused the graph (``support.STAGES``), None when supported."""
        return self.result.stage

    def stages(self) -> list:
        """[(stage, verdict, [detail lines])] in the order cuDNN meets the graph."""
        r, d = self.result, self.result.detail
        out = []
        early = r.stage if r.stage in ("builder", "checks", "unavailable", "finalize") else None
        for stage in ("builder", "checks", "unavailable", "finalize"):
            if early == stage:
                info = d.get(stage, {})
                lines = [info.get("error", r.reason)]
                from_log = [f"{s}: {text}" for s, text in cudnn_explanations(info.get("log", []))]
                lines += [f"cuDNN: {x}" for x in from_log]
                if info.get("traceback"):
                    lines += info["traceback"].rstrip().splitlines()[-6:]
                out.append((stage, "REFUSED", lines))
                return out
        out.append(("build, checks, finalize", "ok", [f"{r.operations} operation(s): {r.ops}" if r.ops else
                                                      f"{r.operations} operation(s)"]))
        engines = d.get("engines", [])
        ok = [e for e in engines if e["supported"]]
        lines = [f"{len(ok)} of {len(engines)} engines finalize for this graph" + (
            ": " + ", ".join(f"{e['engine']} ({e['kind']})" for e in ok) if ok else "")]
        refused: dict = {}
        for e in engines:
            if not e["supported"]:
                refused.setdefault(e["cudnn"] or e["reason"], []).append(e["engine"])
        for why_text, idx in refused.items():
            lines.append(f"engine{'s' if len(idx) > 1 else ''} {', '.join(map(str, idx))}: {why_text}")
        out.append(("engines", "ok" if ok else "none", lines))
        heur = d.get("heuristics", {})
        lines = []
        for mode, info in heur.items():
            lines.append(f"mode {mode}: {info['configs']} config(s)" + (
                f", first engines {info['first']}" if info["first"] else ""))
            if not info["configs"]:
                for status, why_text in cudnn_explanations(info["reasons"]):
                    lines.append(f"  cuDNN {status}: {why_text}")
        out.append(("heuristics", self._refused("heuristics"), lines))
        if r.stage == "heuristics":
            return out
        lines = []
        for a in d.get("plans", []):
            verdict = "built" if a["ok"] and a["stage"] == "plan" else ("finalized" if a["ok"] else "REFUSED")
            lines.append(f"{a['mode']} rank {a['rank']}: engine {a['engine']} ({a['kind']}) "
                         f"{' '.join(f'{k}={v}' for k, v in a['knobs'].items()) or '-'}: {verdict}"
                         + (f": {a['reason']}" if a.get("reason") else "") + (f" [cuDNN: {a['cudnn']}]" if
                                                                               a.get("cudnn") else ""))
        out.append(("plan", self._refused("plan"), lines))
        return out

    def _refused(self, stage) -> str:
        """A stage's verdict: "ok", "REFUSED", or "UNKNOWN" where it refused for a fact only the GPU gives."""
        if self.result.stage != stage:
            return "ok"
        return "UNKNOWN" if self.result.unknown else "REFUSED"

    def text(self) -> str:
        """The explanation as plain text (the command line prints the same with colour)."""
        r = self.result
        lines = [f"{self.name} on {self.device}, cuDNN {self.cudnn_version}: "
                 + ("SUPPORTED" if r.supported else f"UNKNOWN OFFLINE (refused at {r.stage} for a fact only the GPU "
                    "gives)" if r.unknown else f"NOT SUPPORTED (refused at {r.stage})")]
        if r.supported and r.chosen:
            lines.append(f"first working config: engine {r.chosen['engine']} ({r.chosen['kind']}), "
                         f"{'plan built' if r.verified == 'plan' else 'config finalized'}")
        if r.caveat:
            lines.append(r.caveat)
        for stage, verdict, detail in self.stages():
            lines.append(f"[{stage}] {verdict}")
            lines += [f"    {x}" for x in detail]
        if self.minimization is not None:
            m = self.minimization
            lines.append(f"smallest change that makes it supported ({m['kind']}, cost {m['cost']}): {m['label']}")
            lines += [f"    {x}" for x in m["diff"]]
            if m.get("verified"):
                lines.append(f"    → {m['verified']}")
        if self.alternatives:
            lines.append("other changes that work: " + "; ".join(f"{a['label']} (cost {a['cost']})"
                                                                 for a in self.alternatives[:6]))
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """The explanation as JSON-able data: the stages with their lines, the probe result, the minimization."""
        return {"name": self.name, "device": self.device, "cudnn_version": self.cudnn_version,
                "supported": self.supported, "verdict": self.result.verdict, "stage": self.stage,
                "stages": [{"stage": s, "verdict": v, "detail": d} for s, v, d in self.stages()],
                "result": self.result.to_dict(), "minimization": self.minimization,
                "alternatives": self.alternatives, "tried": self.tried, "seconds": round(self.seconds, 3),
                "notes": self.notes}


def _supported(parts, dp, handle) -> tuple:
    """(all parts supported, their results) at the cheap level (precompiled plans built)."""
    results = []
    for part in parts:
        try:
            graph = part.rebuild()
        except Exception as e:  # noqa: BLE001 - a variation cuDNN or the checks refuse to even describe
            results.append(SupportResult(part.name, stage="checks", reason=f"{type(e).__name__}: {e}"[:300]))
            return False, results
        r = probe_graph(graph, dp, handle=handle, plans="precompiled")
        results.append(r)
        if not r.supported:
            return False, results
    return True, results


_WHY = WhyOptions()  # the defaults of why's options


def why(graph, device_profile=None, *, handle=None, kwargs=None, minimize=_WHY.minimize, budget_s=_WHY.budget_s,
        max_variations=_WHY.max_variations, allow_version_mismatch=None) -> Explanation:
    """Explain where and why cuDNN refuses ``graph`` (see the module's notes) -> ``Explanation``.

    ``graph``: a ``Graph``, ``Pattern``, finalized operation graph, pattern name or "FILE.py:FUNC" (called with
    ``kwargs``). ``device_profile``: the target offline (default: the bundled h200); ``minimize``: look for the
    smallest change that makes it supported, within ``budget_s`` seconds and ``max_variations`` probes
    (``WhyOptions``)."""
    checked = WhyOptions(minimize=minimize, budget_s=budget_s, max_variations=max_variations)
    minimize, budget_s, max_variations = checked.minimize, checked.budget_s, checked.max_variations
    t0 = time.perf_counter()
    dp_source = graphs.device_profile(device_profile or ("h200" if handle is None else None))
    dp = None if dp_source is None else as_deviceprop(dp_source, allow_version_mismatch)
    name = graph if isinstance(graph, str) else getattr(graph, "name", "graph")
    graph, kwargs = _users_graph(graph, kwargs)
    result = probe_graph(graph, dp, handle=handle, kwargs=kwargs, plans="all", detail=True)
    result.name = name  # (the reference given, not the name of the graph it built)
    device = getattr(dp_source, "device_name", None) or "this GPU"
    ex = Explanation(name, device, format_version(loaded_version()), result)
    if result.supported or not minimize:
        ex.seconds = time.perf_counter() - t0
        return ex
    if result.unknown:
        ex.notes.append("no minimization: offline cannot decide this graph (see above), and the GPU may run it as it "
                        "is; run `why` on the GPU (without --device-profile) for its answer")
        ex.seconds = time.perf_counter() - t0
        return ex
    if result.stage in ("builder", "unavailable") or (result.stage in ("checks", "finalize") and not result.operations):
        ex.notes.append("no minimization: the graph was never built (the builder "
                        + ("raised" if result.stage == "builder" else "was refused while adding an operation")
                        + "), so there is no graph to vary; the reason above names what to change")
        ex.seconds = time.perf_counter() - t0
        return ex
    g, og, _, _ = materialize(graph, kwargs, handle)
    base = GraphDescription.of(g if g is not None else og)
    singles = variations(base)
    found, tried = [], 0
    deadline = t0 + budget_s
    for v in singles:
        if tried >= max_variations or time.perf_counter() > deadline:
            ex.notes.append(f"the search stopped after {tried} variations (budget_s={budget_s}, "
                            f"max_variations={max_variations})")
            break
        tried += 1
        ok, results = _supported(v.parts, dp, handle)
        if ok:
            found.append((v, results))
    if not found and time.perf_counter() < deadline:
        pool = singles[:24]
        for a, b in itertools.combinations(pool, 2):
            if a.kind == b.kind or len(a.parts) > 1 or len(b.parts) > 1:
                continue
            if tried >= max_variations or time.perf_counter() > deadline:
                break
            combined = _combine(base, a.parts[0], b.parts[0])
            if combined is None:
                continue
            tried += 1
            v = Variation(f"{a.kind} + {b.kind}", f"{a.label}; and {b.label}", [combined], a.cost + b.cost)
            ok, results = _supported(v.parts, dp, handle)
            if ok:
                found.append((v, results))
        found.sort(key=lambda vr: vr[0].cost)
    ex.tried = tried
    if not found:
        ex.notes.append(f"no variation of the {tried} tried makes the graph supported")
    else:
        best, results = found[0]
        ex.minimization = {"kind": best.kind, "label": best.label, "cost": best.cost, "diff": best.diff(base),
                           "results": [r.status for r in results]}
        verified = []
        for part in best.parts:
            r = probe_graph(part.rebuild(), dp, handle=handle, plans="all")
            verified.append(f"{r.status}" + (f", engine {r.chosen['engine']} ({r.chosen['kind']})" if r.chosen else
                                             f": {r.reason}"))
        ex.minimization["verified"] = "; ".join(verified) + " (every plan built)"
        ex.alternatives = [{"kind": v.kind, "label": v.label, "cost": v.cost} for v, _ in found[1:]]
    ex.seconds = time.perf_counter() - t0
    return ex


def _users_graph(graph, kwargs) -> tuple:
    """(graph, kwargs) to probe: a builder of the user's ("FILE.py:FUNC", "module:FUNC", a function) called here,
    so that an error of its own code propagates as the error it is (``file.py:LINE: RuntimeError: ...``), not as
    cuDNN's refusal at the builder stage, and a result that is no graph is named as ``explore`` names it. A refusal
    of the package's while building (a ``CudnnBackendError``) is the probe's to place at its stage."""
    user = (isinstance(graph, str) and ":" in graph and not graph.endswith(".json")) or \
        (callable(graph) and not isinstance(graph, (Graph, Pattern, Descriptor)))
    if not user:
        if not isinstance(graph, (str, Graph, Pattern, Descriptor)):  # a mistake of the call, not a graph to explain
            raise graphs.not_a_graph(graph)
        if isinstance(graph, Descriptor):
            check_graph(graph, "graph")  # (a tensor, an engine config: TypeError naming what it is)
        elif isinstance(graph, str) and not graph.strip():
            raise ValueError("graph: an empty name; give a pattern name, FILE.py:FUNC or module:FUNC")
        graphs.check_reference(graph, (), kwargs)
        return graph, kwargs
    try:
        built = call_builder(graph, kwargs)
    except CudnnBackendError:
        return graph, kwargs
    ref = graph if isinstance(graph, str) else getattr(graph, "__qualname__", repr(graph))
    return graphs.builder_output(built, ref), None


def _combine(base, a, b) -> GraphDescription | None:
    """``b``'s tensor and operation changes applied on top of ``a`` (None when they touch the same thing or the
    operation lists differ)."""
    if len(a.operations) != len(base.operations) or len(b.operations) != len(base.operations):
        return None
    out = a.copy()
    tb, tbase = b.tensors(), base.tensors()
    for uid, attrs in tb.items():
        changes = {k: attrs.get(k) for k in set(attrs) | set(tbase.get(uid, {})) if attrs.get(k) != tbase.get(uid, {})
                   .get(k)}
        if changes:
            out = out.edit_tensor(uid, **changes)
    for i, (op_b, op_base) in enumerate(zip(b.operations, base.operations)):
        for path, current in _compute_paths(op_b):
            before = dict(_compute_paths(op_base)).get(path)
            if before != current:
                _set_path(out.operations[i], path, current)
        cb, cbase = op_b["attributes"].get("conv_desc"), op_base["attributes"].get("conv_desc")
        if isinstance(cb, dict) and cb != cbase:
            out.operations[i]["attributes"]["conv_desc"] = copy.deepcopy(cb)
    return out
