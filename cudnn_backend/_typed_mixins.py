"""Behaviour added to a few generated typed classes (see typed.py), keyed by descriptor type:
tensors made from arrays, operation graphs that check, print and draw themselves, and engines,
engine configs, execution plans and heuristics that read back as Python data (the work is done in
engines.py, plans.py and heuristics.py, imported lazily: typed.py imports this module).

A mixin member named like a generated keyword property would be hidden by it (the class's own
namespace wins), so the names here never repeat a keyword."""
from __future__ import annotations

from cudnn_backend import arrays as _arrays
from cudnn_backend._generated.enums import DescriptorType

T = DescriptorType


class TensorMixin:
    """``Tensor``: also built from any array-like; carries an optional display name."""

    @classmethod
    def from_array(cls, array, uid=None, name=None, *, virtual=False, by_value=False, alignment=None,
                   data_type=None, finalize=True):
        """A tensor descriptor shaped like ``array`` (numpy, torch, cupy, DLPack or __cuda_array_interface__).

        Dims, strides (in elements), data type and byte alignment (from the data pointer, at most 16)
        are inferred; ``uid`` defaults to the next free one of ``cudnn_backend.graph.UidAllocator``'s
        global counter when None.
        """
        info = _arrays.describe(array)
        if uid is None:
            from cudnn_backend.graph import default_uids

            uid = default_uids.next()
        kwargs = dict(
            data_type=data_type if data_type is not None else info.data_type,
            dimensions=list(info.shape) or [1],
            strides=list(info.strides) or [1],
            unique_id=int(uid),
            byte_alignment=alignment if alignment is not None else info.alignment,
        )
        if virtual:
            kwargs["is_virtual"] = True
        if by_value:
            kwargs["is_by_value"] = True
        t = cls(**kwargs)
        t.name = name
        return t.finalize() if finalize else t

    def value(self, keyword):
        """An attribute as set (no cuDNN call), or read from cuDNN for tensors cuDNN made."""
        values = self._typed_state["values"]
        if keyword in values:
            return values[keyword]
        if values and keyword in ("is_virtual", "is_by_value"):
            return False  # their default, for a tensor built here
        return self.get_keyword(keyword)

    @property
    def name(self):
        return self.__dict__.get("_name") or f"t{self.value('unique_id')}"

    @name.setter
    def name(self, value):
        self.__dict__["_name"] = value

    @property
    def uid(self) -> int:
        return int(self.value("unique_id"))

    @property
    def shape(self) -> tuple:
        return tuple(self.value("dimensions") or ())

    @property
    def virtual(self) -> bool:
        return bool(self.value("is_virtual"))

    def describe(self) -> str:
        from cudnn_backend.graph import TensorInfo

        return TensorInfo(self).describe()


class OperationGraphMixin:
    """``OperationGraph``: checks before finalize, a table of its operations, Graphviz DOT."""

    @property
    def operations(self) -> tuple:
        return tuple(self._typed_state["values"].get("ops") or ())

    def finalize(self, check_required=True, check_graph=True):
        if check_graph:
            from cudnn_backend.graph import check_operations

            check_operations(self.operations)
        return super().finalize(check_required=check_required)

    def table(self) -> str:
        from cudnn_backend.graph import operations_table

        return operations_table(self.operations)

    def to_dot(self, name="cudnn_graph") -> str:
        from cudnn_backend.graph import operations_dot

        return operations_dot(self.operations, name)

    def __str__(self):
        return self.table()


class EngineMixin:
    """``Engine``: notes and knobs as Python data, its knob space, configs from knob values (engines.py)."""

    @property
    def numerical_notes(self) -> tuple:
        from cudnn_backend import engines

        return engines.engine_numerical_notes(self)

    @property
    def behavior_notes(self) -> tuple:
        from cudnn_backend import engines

        return engines.engine_behavior_notes(self)

    @property
    def runtime_compiled(self) -> bool:
        from cudnn_backend._generated.enums import BehaviorNote

        return BehaviorNote.CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION in self.behavior_notes

    @property
    def knob_specs(self) -> tuple:
        """CUDNN_ATTR_ENGINE_KNOB_INFO as ``engines.KnobSpec`` (type, minimum, maximum, stride)."""
        from cudnn_backend import engines

        return engines.engine_knobs(self)

    def knob_space_size(self) -> int:
        from cudnn_backend import engines

        return engines.knob_space_size(self.knob_specs)

    def knob_space(self, limit=None, sample=None, seed=None):
        """Iterate ``{KnobType: value}`` combinations (see ``engines.iter_knob_space``)."""
        from cudnn_backend import engines

        return engines.iter_knob_space(self.knob_specs, limit, sample, seed)

    def make_config(self, knobs=None, check=True):
        """A finalized EngineConfig of this engine with ``{knob: value}``."""
        from cudnn_backend import engines

        return engines.make_config(self, knobs, check=check)

    def info(self):
        """An ``engines.EngineInfo`` row of this (finalized) engine."""
        from cudnn_backend import engines

        return engines.inspect_engine_descriptor(self)


class EngineConfigMixin:
    """``EngineConfig``: its graph, engine index, knobs and notes (engines.py); a plan from it (plans.py)."""

    @property
    def operation_graph(self):
        """The operation graph this config is for (attached to heuristics results; an engine's graph)."""
        from cudnn_backend.plans import config_operation_graph

        return config_operation_graph(self)

    @property
    def engine_index(self) -> int:
        from cudnn_backend import engines

        return engines.config_engine_index(self)

    @property
    def knobs(self) -> dict:
        """``{KnobType: value}`` of the knob choices (read with room for every knob type)."""
        from cudnn_backend import engines

        return engines.config_knobs(self)

    @property
    def numerical_notes(self) -> tuple:
        from cudnn_backend import engines

        return engines.engine_numerical_notes(engines.config_engine(self))

    @property
    def behavior_notes(self) -> tuple:
        from cudnn_backend import engines

        return engines.engine_behavior_notes(engines.config_engine(self))

    @property
    def heuristics_mode(self):
        """The HeurMode that returned this config (None if it was not from heuristics)."""
        from cudnn_backend import engines

        return engines.get_ref(self, "heuristics_mode")

    @property
    def rank(self):
        """Position in its heuristics' results (0 = cuDNN's first choice), or None."""
        from cudnn_backend import engines

        return engines.get_ref(self, "rank")

    def summary(self) -> dict:
        from cudnn_backend import engines

        return engines.as_row(self)

    def build_plan(self, handle=None, device_profile=None, **kwargs):
        """``plans.build_plan(self, handle, device_profile, ...)``."""
        from cudnn_backend.plans import build_plan

        return build_plan(self, handle, device_profile, **kwargs)


class ExecutionPlanMixin:
    """``ExecutionPlan``: its graph, engine, knobs and JSON (plans.py).

    ``workspace_size`` and ``handle`` are the generated keyword properties: cuDNN's workspace size
    after finalize, and the Handle the plan was built or loaded with (None for a profile-only plan).
    """

    @property
    def operation_graph(self):
        """The operation graph (keeps its operations and tensors alive); None if loaded from JSON without one."""
        from cudnn_backend.plans import plan_operation_graph

        return plan_operation_graph(self)

    @property
    def engine_index(self) -> int:
        from cudnn_backend.plans import plan_engine_index

        return plan_engine_index(self)

    @property
    def knobs(self) -> dict:
        from cudnn_backend.plans import plan_knobs

        return plan_knobs(self)

    @property
    def numerical_notes(self) -> tuple:
        from cudnn_backend import engines
        from cudnn_backend.plans import plan_engine_config

        return engines.engine_numerical_notes(engines.config_engine(plan_engine_config(self)))

    @property
    def behavior_notes(self) -> tuple:
        from cudnn_backend import engines
        from cudnn_backend.plans import plan_engine_config

        return engines.engine_behavior_notes(engines.config_engine(plan_engine_config(self)))

    def to_json(self) -> str:
        """CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION (load it with ``plans.plan_from_json``)."""
        from cudnn_backend.plans import plan_json

        return plan_json(self)

    def save(self, path):
        from cudnn_backend.plans import save_plan

        return save_plan(self, path)

    def summary(self) -> dict:
        from cudnn_backend.plans import plan_summary

        return plan_summary(self)


class EngineHeuristicsMixin:
    """``EngineHeuristics``: its results with the graph attached (heuristics.py)."""

    def configs(self) -> list:
        """The finalized heuristics' EngineConfigs, in cuDNN's order; raises NoDeviceError for the
        empty answer of a GPU-less machine without a device profile."""
        from cudnn_backend.heuristics import heuristics_configs

        return heuristics_configs(self)


MIXINS = {
    T.CUDNN_BACKEND_TENSOR_DESCRIPTOR: TensorMixin,
    T.CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR: OperationGraphMixin,
    T.CUDNN_BACKEND_ENGINE_DESCRIPTOR: EngineMixin,
    T.CUDNN_BACKEND_ENGINECFG_DESCRIPTOR: EngineConfigMixin,
    T.CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: ExecutionPlanMixin,
    T.CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR: EngineHeuristicsMixin,
}
