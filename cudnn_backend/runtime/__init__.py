"""The runtime: device profiles, engines and knobs, heuristics, plans, variant packs and execution, CUDA
graphs, device memory. High-level objects (``Config``, ``Plan``) hold their descriptors."""
from cudnn_backend.runtime import engines, errata, execution, heuristics, memory, plans, profiles
from cudnn_backend.runtime.engines import Config, EngineInfo, KnobSpec, list_engines, make_config
from cudnn_backend.runtime.errata import Errata
from cudnn_backend.runtime.execution import (
    CapturedGraph,
    CudaGraph,
    VariantPack,
    execute,
    populate_cuda_graph,
    update_cuda_graph,
)
from cudnn_backend.runtime.heuristics import build_first_plan, get_configs
from cudnn_backend.runtime.plans import Plan, build_plan, load_plan, plan_from_json
from cudnn_backend.runtime.profiles import DeviceProfile

__all__ = [
    "engines", "errata", "execution", "heuristics", "memory", "plans", "profiles", "Config", "EngineInfo", "KnobSpec",
    "Errata",
    "list_engines", "make_config", "CapturedGraph", "CudaGraph", "VariantPack", "execute", "populate_cuda_graph",
    "update_cuda_graph",
    "build_first_plan", "get_configs", "Plan", "build_plan", "load_plan", "plan_from_json", "DeviceProfile",
]
