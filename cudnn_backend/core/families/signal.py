"""SIGNAL: a flag set or waited on between graphs.

``Graph`` methods (the mixin): Signals between graphs: set a flag after an operation, or wait for one before it.

Reference ops: none computed (``NOT_COMPUTED`` says why).
"""
from __future__ import annotations

from cudnn_backend._bindings.enums import SignalMode
from cudnn_backend.core.families._build import as_choice, as_int, output_type
from cudnn_backend.core.families._family import Family
from cudnn_backend.core.families._reference import not_computed

__all__ = ["FAMILY", "SignalOps", "NOT_COMPUTED"]


class SignalOps:
    """``signal``."""

    def signal(self, x, flag, value, *, mode="set", output=False, output_data_type=None, name="signal"):
        """SIGNAL: ``mode`` "set" writes ``value`` to ``flag`` once x is produced, "wait" waits for it; the output
        passes x through, ordering what reads it after the signal."""
        x, flag = self._need_tensor(x, "x"), self._need_tensor(flag, "flag")
        mode = as_choice(SignalMode, mode, "mode", "CUDNN_SIGNAL_")
        op = self._operation("SIGNAL", mode=mode, flagdesc=flag, value=as_int(value, "value"), xdesc=x)
        y = None
        if output is not False:
            y = op.ydesc = self._output(output, x.shape, x, output_type(output_data_type, x.data_type), name,
                                        strides=x.strides)
        self.add(op)
        return y


#: why the reference evaluator does not compute its outputs
NOT_COMPUTED = "a flag set or awaited between graphs: synchronization, not math"

FAMILY = Family(
    "signal", ("SIGNAL",),
    graph_methods=("signal",),
    graph_mixin=SignalOps,
    reference_ops={"SIGNAL": not_computed(NOT_COMPUTED)},
    doc=__doc__)
