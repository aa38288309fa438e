"""RNG: random tensors (Bernoulli dropout masks) from a seed and offset.

``Graph`` methods (the mixin): Random numbers: Bernoulli (dropout masks), uniform and normal distributions (Philox:
seed + offset).

Reference ops: none computed (``NOT_COMPUTED`` says why).
"""
from __future__ import annotations

from cudnn_backend._bindings.enums import DataType, RngDistribution
from cudnn_backend.core.families import _build
from cudnn_backend.core.families._build import as_choice
from cudnn_backend.core.families._family import Family
from cudnn_backend.core.families._reference import not_computed
from cudnn_backend.errors import GraphError

__all__ = ["FAMILY", "RngOps", "NOT_COMPUTED"]


_I64 = DataType.CUDNN_DATA_INT64
# what each distribution reads (a value given for another would be set on the descriptor, and ignored)
_PARAMETERS = {RngDistribution.CUDNN_RNG_DISTRIBUTION_BERNOULLI: ("probability",),
               RngDistribution.CUDNN_RNG_DISTRIBUTION_UNIFORM: ("minimum", "maximum"),
               RngDistribution.CUDNN_RNG_DISTRIBUTION_NORMAL: ("mean", "std")}
_DIST = {"bernoulli": RngDistribution.CUDNN_RNG_DISTRIBUTION_BERNOULLI,
         "uniform": RngDistribution.CUDNN_RNG_DISTRIBUTION_UNIFORM,
         "normal": RngDistribution.CUDNN_RNG_DISTRIBUTION_NORMAL}


class RngOps:
    """``rng(dims, ...)``."""

    def rng(self, dims, *, distribution="bernoulli", probability=None, minimum=None, maximum=None, mean=None, std=None,
            seed=None, offset=None, strides=None, output=True, output_data_type=DataType.CUDNN_DATA_FLOAT, name="rng"):
        """RNG: ``{"y", "seed", "offset"}``. Each distribution reads its own parameters: bernoulli ``probability``
        (default 0.5), uniform ``minimum`` and ``maximum``, normal ``mean`` and ``std``; another's is refused.
        ``seed`` is an int (set on the operation) or an INT64 [1,...] tensor (made here when None); ``offset`` an
        INT64 [1,...] tensor (made here when None)."""
        name = _build.as_name(name, "rng")
        dims = _build.as_dims(dims, "dims")
        ones = [1] * len(dims)
        dist = as_choice(RngDistribution, distribution, "distribution", "CUDNN_RNG_DISTRIBUTION_", _DIST)
        reads = _PARAMETERS[dist]
        for keyword, value in (("probability", probability), ("minimum", minimum), ("maximum", maximum),
                               ("mean", mean), ("std", std)):
            if value is not None and keyword not in reads:
                raise GraphError(f"{keyword}: the {dist.name.removeprefix('CUDNN_RNG_DISTRIBUTION_').lower()} "
                                 f"distribution does not read it (it reads {' and '.join(reads)})")
        desc = self._descriptor("RNG", distribution=dist)
        if dist == RngDistribution.CUDNN_RNG_DISTRIBUTION_BERNOULLI:
            probability = 0.5 if probability is None else probability
            desc.bernoulli_dist_probability = probability  # the typed layer checks it is a real number
            if not 0.0 <= desc.bernoulli_dist_probability <= 1.0:
                raise ValueError(f"probability: {probability!r} is not a probability in [0, 1]")
        if minimum is not None:
            desc.uniform_dist_minimum = minimum
        if maximum is not None:
            desc.uniform_dist_maximum = maximum
        if mean is not None:
            desc.normal_dist_mean = mean
        if std is not None:
            desc.normal_dist_standard_deviation = std
        desc.finalize()
        if seed is None:
            seed = self.tensor(ones, ones, _I64, name=f"{name}_seed")
        elif self._is_tensor(seed):
            self._need_tensor(seed, "seed")
        if offset is None:
            offset = self.tensor(ones, ones, _I64, name=f"{name}_offset")
        else:
            self._need_tensor(offset, "offset")
        y = self._output(output, dims, None, output_data_type, f"{name}_y",
                         strides=_build.as_strides(strides, len(dims)) if strides is not None else None)
        self.add(self._operation("RNG", ydesc=y, desc=desc, seed=seed, offset_desc=offset))
        return {"y": y, "seed": seed, "offset": offset}


#: why the reference evaluator does not compute its outputs
NOT_COMPUTED = "random numbers (Philox with a seed and offset): no reference values"

FAMILY = Family(
    "rng", ("RNG",),
    graph_methods=("rng",),
    graph_mixin=RngOps,
    reference_ops={"RNG": not_computed(NOT_COMPUTED)},
    doc=__doc__)
