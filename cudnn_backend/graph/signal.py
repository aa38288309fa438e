"""Signals between graphs: set a flag after an operation, or wait for one before it."""
from __future__ import annotations

from cudnn_backend._bindings.enums import SignalMode
from cudnn_backend.core._descriptor import as_int
from cudnn_backend.graph._util import as_choice
from cudnn_backend.typed import OperationSignal

__all__ = ["SignalOps"]


class SignalOps:
    """``signal``."""

    def signal(self, x, flag, value, *, mode="set", output=False, output_data_type=None, name="signal"):
        """SIGNAL: ``mode`` "set" writes ``value`` to ``flag`` once x is produced, "wait" waits for it; the output
        passes x through, ordering what reads it after the signal."""
        x, flag = self._need_tensor(x, "x"), self._need_tensor(flag, "flag")
        mode = as_choice(SignalMode, mode, "mode", "CUDNN_SIGNAL_")
        op = OperationSignal(mode=mode, flagdesc=flag, value=as_int(value, "value"), xdesc=x)
        y = None
        if output is not False:
            y = op.ydesc = self._output(output, x.shape, x, output_data_type or x.data_type, name, strides=x.strides)
        self.add(op)
        return y
