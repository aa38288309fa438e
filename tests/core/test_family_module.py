"""A new operation family is one new module in ``core/families``: nothing else names it.

Each test runs a child interpreter on a copy of the package (links to its files, the compiled modules included)
from which the ``moe`` family module is taken out. Without a module owning MOE_GROUPED_MATMUL the import fails,
naming the operations; with one new source module, ``experts.py`` (moe's source, plus a finalize check that counts
its calls and a shape rule), dropped in beside the others, the registry accepts it, ``Graph`` gains its methods,
``Descriptor.finalize`` runs its check, ``cudnn_backend.shapes`` exports its shape rule, the work estimate counts its
operation its way and the reference evaluator computes its operation. A hand-kept list anywhere (of the family modules,
the ``Graph`` bases or the reference ops) would make the second test fail.
"""
import os
import shutil
import subprocess
import sys

from tests.helpers.crash import child_env
from tests.helpers.env import ROOT

FAMILIES = ROOT / "cudnn_backend" / "core" / "families"

# the copy's family module: moe's source with a finalize check that counts its calls
COUNTED_CHECK = '''
#: the operations the finalize check below was called on
CHECKED = []


def check_counted(op):
    """The finalize check of the test's family: counts its calls."""
    CHECKED.append(op.descriptor_type.name)


def experts_output_dims(tokens, weights):
    """The test family's public shape rule."""
    return [tokens[0], tokens[1], weights[2]]


'''

WITH_THE_MODULE = r"""
import numpy as np

import cudnn_backend as cb
from cudnn_backend._bindings.enums import DescriptorType
from cudnn_backend.core import families, op_checks
from cudnn_backend.core.families import experts
from cudnn_backend.reference import evaluate

assert experts.__file__.endswith("experts.py"), experts.__file__  # the new source module, not a compiled one
assert families.family_of("MOE_GROUPED_MATMUL") is experts.FAMILY
assert families.FAMILY_OF["CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_BWD_DESCRIPTOR"] == "experts"
fwd = DescriptorType.CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR
assert op_checks.FINALIZE_CHECKS[fwd] is experts.check_counted
assert cb.Graph.moe_grouped_matmul.__wrapped__ is experts.MoeOps.moe_grouped_matmul  # (undone where it raises)
assert families.REFERENCE_OPS[int(fwd)] is experts.MoeGroupedMatmul
assert cb.shapes.experts_output_dims is experts.experts_output_dims and "experts_output_dims" in cb.shapes.__all__

t, k, n, e = 6, 4, 3, 2
g = cb.Graph("experts", io_data_type="float")
tokens, weights = g.tensor([1, t, k], name="tokens"), g.tensor([e, k, n], [k * n, 1, k], name="weights")
offsets = g.tensor([e, 1, 1], data_type="int32", name="offsets")
out = g.moe_grouped_matmul(tokens, weights, offsets)
og = g.build()
assert experts.CHECKED == [fwd.name], experts.CHECKED  # Descriptor.finalize ran the family's check
assert cb.reference.estimated_work(og) == t * n * k  # its cost is the family's own (MoeGroupedMatmul.work)

rng = np.random.default_rng(7)
tv, wv, ov = rng.standard_normal([1, t, k]), rng.standard_normal([e, k, n]), np.array([0, 2])
r = evaluate(og, {tokens.uid: tv, weights.uid: wv, offsets.uid: ov.reshape(e, 1, 1)})
expected = np.concatenate([tv[0, :2] @ wv[0], tv[0, 2:] @ wv[1]])[None]
assert np.allclose(r.outputs[out.uid], expected, rtol=1e-12, atol=1e-12), (r.outputs[out.uid], expected)
print("ok")
"""

WITHOUT_THE_MODULE = r"""
try:
    import cudnn_backend  # noqa: F401
except Exception as e:
    print(type(e).__name__, e)
else:
    print("imported")
"""


def _package_without_moe(tmp_path):
    """A copy of the package, each file a link to the checkout's, without the moe family module (source, C and
    compiled)."""
    root = tmp_path / "tree"
    shutil.copytree(ROOT / "cudnn_backend", root / "cudnn_backend", copy_function=os.symlink,
                    ignore=shutil.ignore_patterns("__pycache__"))
    dropped = sorted((root / "cudnn_backend" / "core" / "families").glob("moe.*"))
    assert dropped, "the copy has no moe module to take out"
    for path in dropped:
        path.unlink()
    return root


def _run(root, code):
    env = child_env(PYTHONDONTWRITEBYTECODE=1)
    env["PYTHONPATH"] = str(root)  # the copy only, not the checkout
    out = subprocess.run([sys.executable, "-c", code], cwd=str(root), env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout.strip()


def test_without_a_module_owning_them_the_import_names_the_operations(tmp_path):
    line = _run(_package_without_moe(tmp_path), WITHOUT_THE_MODULE)
    assert line.startswith("FamilyError"), line
    assert "CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR" in line
    assert "CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_BWD_DESCRIPTOR" in line


def test_one_new_module_is_a_whole_family(tmp_path):
    root = _package_without_moe(tmp_path)
    source = (FAMILIES / "moe.py").read_text()
    head, declaration = source.split("\nFAMILY = Family(\n")
    declaration = declaration.replace('"moe",', '"experts",', 1).replace(
        "graph_mixin=MoeOps,", 'graph_mixin=MoeOps,\n    finalize_checks={"MOE_GROUPED_MATMUL": check_counted},\n'
        '    shape_rules=(experts_output_dims,),', 1)
    assert '"experts"' in declaration and "check_counted" in declaration
    (root / "cudnn_backend" / "core" / "families" / "experts.py").write_text(
        head + "\n" + COUNTED_CHECK + "FAMILY = Family(\n" + declaration)
    assert _run(root, WITH_THE_MODULE) == "ok"
