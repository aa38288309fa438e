"""The exhaustive pass: every candidate checked and timed fully when it is proposed (``warmup`` calls, the median of
``repeats`` samples of ~300 µs, inputs rotated over every buffer set), as explore did before racing. The final
round then re-times the fastest few head to head."""
from __future__ import annotations

from cudnn_backend.tune.search import Level, Strategy

__all__ = ["Exhaustive"]


class Exhaustive(Strategy):
    name = "exhaustive"
    checks_early = True
    holds_plans = False  # each plan closed once timed; the final round builds its few again

    def screen_level(self, options):
        return Level("full", options.warmup, options.repeats, 300.0, rotate=True)

    def final_level(self, options):
        return Level("final", 20, 5, 1000.0)

    def run(self, search):
        """Nothing more: every candidate was timed fully as it was screened."""
