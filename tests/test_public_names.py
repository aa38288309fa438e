"""Every name ``cudnn_backend`` exported before the restructuring (tests/data/public_names_before.txt, 887 names) is
still reachable as ``getattr(cudnn_backend, name)``, and every class the old ``cudnn_backend.typed`` module had
(tests/data/typed_names_before.txt) is still in ``cudnn_backend.typed``.

The lazily loaded layers (PEP 562) are reached through ``getattr``. ``TUNE_LAYER`` lists the names the tune/cli
layers provide (explore, autotune, the plan cache, ...): they are asserted like the others, so this test fails
until those layers exist.
"""
import importlib
import subprocess
import sys

import pytest

import cudnn_backend
import cudnn_backend.typed

from tests.helpers.crash import child_env
from tests.helpers.env import DATA, ROOT

PUBLIC = [line.strip() for line in (DATA / "public_names_before.txt").read_text().splitlines() if line.strip()]
TYPED = [line.strip() for line in (DATA / "typed_names_before.txt").read_text().splitlines() if line.strip()]
# provided by the tune / cli layers (being written): asserted all the same
TUNE_LAYER = {"tune", "explore", "autotune", "Exploration", "PlanCache", "fusion_report", "bench", "sweep", "cli",
              "support_matrix", "compare_support", "SupportMatrix", "why", "TuneOptions"}
# names added since the lists were recorded: the reference layer (loaded on first use) and its error; stream capture
ADDED = {"reference", "ReferenceResult", "evaluate_reference", "ReferenceUnsupportedError", "CapturedGraph",
         "DeviceMemoryWarning"}
# names the old typed module held that were no API: imported modules, the __future__ flag, old internals
TYPED_NOT_CLASSES = {"annotations", "difflib", "numbers", "MIXINS", "register_descriptor_class"}


def test_the_lists_are_the_recorded_ones():
    assert len(PUBLIC) == len(set(PUBLIC)) == 887
    assert len(TYPED) == len(set(TYPED)) == 68


def test_every_old_public_name_is_reachable():
    listed = set(dir(cudnn_backend))
    missing = []
    for name in PUBLIC:
        try:
            value = getattr(cudnn_backend, name)
        except AttributeError as e:
            missing.append(f"{name} ({e})")
            continue
        if value is None or name not in listed:
            missing.append(f"{name} (None or not in dir())")
    assert not missing, f"{len(missing)} old public names are gone: {missing}"


def test_every_old_typed_name_is_in_typed():
    wrong = []
    for name in sorted(set(TYPED) - TYPED_NOT_CLASSES):
        value = getattr(cudnn_backend.typed, name, None)
        if value is None:
            wrong.append(f"{name} (missing)")
        elif name[0].isupper() and not isinstance(value, type):  # classes: descriptor classes, bases, enums, errors
            wrong.append(f"{name} (not a class)")
        elif name[0].islower() and not callable(value):
            wrong.append(f"{name} (not callable)")
    assert not wrong, wrong


def test_typed_classes_are_the_descriptor_classes():
    for name in TYPED:
        value = getattr(cudnn_backend.typed, name, None)
        if isinstance(value, type) and issubclass(value, cudnn_backend.typed.TypedDescriptor) and \
                value is not cudnn_backend.typed.TypedDescriptor:
            assert cudnn_backend.typed.descriptor_class(value.DESCRIPTOR_TYPE) is value


@pytest.mark.parametrize("name", sorted(TUNE_LAYER))
def test_tune_and_cli_names(name):
    """Provided by the tune / cli layers (loaded on first use)."""
    module, attribute = cudnn_backend._LAZY[name]
    value = getattr(cudnn_backend, name)
    expected = importlib.import_module(module)
    assert value is (expected if attribute is None else getattr(expected, attribute))


@pytest.mark.parametrize("name", sorted(ADDED))
def test_added_names(name):
    assert name in dir(cudnn_backend) and getattr(cudnn_backend, name) is not None
    assert name not in PUBLIC  # new: not among the recorded names


def test_lazy_names_resolve_to_their_modules():
    for name, (module, attribute) in cudnn_backend._LAZY.items():
        value = getattr(cudnn_backend, name)
        expected = importlib.import_module(module)
        assert value is (expected if attribute is None else getattr(expected, attribute)), name
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        cudnn_backend.no_such_name  # noqa: B018


def test_import_loads_only_the_lower_layers():
    code = ("import sys, cudnn_backend\n"
            "print(sorted(m for m in sys.modules if m.startswith('cudnn_backend.') and m.split('.')[1] in "
            "('graph', 'runtime', 'reference', 'patterns', 'tune', 'cli')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=str(ROOT),
                         env=child_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_to_dict_is_the_one_plain_data_name_and_the_earlier_names_still_answer():
    """``to_dict()`` is the one name for a result or data class's plain data; ``as_dict`` (the earlier name of most
    of them) and a Config's or Plan's ``summary`` still answer, the same data with a DeprecationWarning."""
    from cudnn_backend.core.plain import PlainData
    from cudnn_backend.runtime.engines import Config, EngineInfo, KnobSpec
    from cudnn_backend.runtime.execution import KernelNode
    from cudnn_backend.runtime.heuristics import Attempt
    from cudnn_backend.runtime.plans import Plan
    from cudnn_backend.tune.benchmark import BenchCase, BenchReport
    from cudnn_backend.tune.cache import CacheEntry
    from cudnn_backend.tune.catalogue import CatalogueEntry
    from cudnn_backend.tune.explain import Explanation
    from cudnn_backend.tune.fusion import FusionReport
    from cudnn_backend.tune.results import ConfigResult
    from cudnn_backend.tune.support import SupportResult
    from cudnn_backend.tune.timing import Timing

    for cls in (EngineInfo, KnobSpec, KernelNode, Attempt, BenchCase, BenchReport, CacheEntry, FusionReport,
                ConfigResult, Timing, Config, Plan, SupportResult, Explanation, CatalogueEntry):
        assert issubclass(cls, PlainData) and "to_dict" in vars(cls), cls.__name__
        assert cls.as_dict is PlainData.as_dict, cls.__name__  # one definition of the earlier name
    for cls in (Config, Plan):  # live objects: their summary() was their plain data
        assert cls.summary.__name__ == "summary" and "deprecated" in cls.summary.__doc__
    timing = Timing(1.5, 1.0, 2.0, 3, 10)
    expected = {"median_us": 1.5, "min_us": 1.0, "max_us": 2.0, "samples": 3, "calls_per_sample": 10}
    assert timing.to_dict() == expected
    with pytest.warns(DeprecationWarning, match=r"Timing.as_dict\(\) is deprecated: use to_dict\(\)"):
        assert timing.as_dict() == expected


# names added since the recorded lists (each asserted reachable where it was added)
ADDED_TO_MODULES = {
    "cudnn_backend": ["JsonTableFallbackWarning"],
    "cudnn_backend.errors": ["JsonTableFallbackWarning"],
    "cudnn_backend.core.json_checks": ["deviceprop_members", "table_release", "document_release", "TABLE_RELEASES",
                                       "JsonTableFallbackWarning"],
}


@pytest.mark.parametrize("module", sorted(ADDED_TO_MODULES))
def test_names_added_to_modules(module):
    mod = importlib.import_module(module)
    for name in ADDED_TO_MODULES[module]:
        assert getattr(mod, name, None) is not None, f"{module}.{name}"
        assert name in getattr(mod, "__all__", dir(mod)), f"{module}.{name} not in __all__"
