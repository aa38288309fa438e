"""Honest GPU timing of one plan: CUDA events, warm-up, the median of N samples, inputs rotated over several
buffer sets; optionally cold (L2 flushed before every call) or inside a CUDA graph (no launch overhead).

Runs on cuda.core and cuda-bindings (``runtime.memory``: events, the L2 flush; ``runtime.execution``: stream
capture); no torch. ``benchmarks/timer_compare.py`` checks on a GPU that it measures what the torch-based timer
it replaced measured."""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from cudnn_backend.core._handle import Handle
from cudnn_backend.core.plain import PlainData
from cudnn_backend.runtime import memory
from cudnn_backend.runtime.execution import CapturedGraph, execute

__all__ = ["Timing", "Timer"]


@dataclass
class Timing(PlainData):
    """Microseconds per call: median, min and max over the samples."""

    median_us: float
    min_us: float
    max_us: float
    samples: int
    calls_per_sample: int

    def to_dict(self) -> dict:
        return {"median_us": self.median_us, "min_us": self.min_us, "max_us": self.max_us, "samples": self.samples,
                "calls_per_sample": self.calls_per_sample}



class Timer:
    """Times ``execute(handle, plan, pack)`` on the handle's stream.

    ``warmup`` calls first; then ``repeats`` samples, each an event pair around a batch of calls sized so a
    sample spans about ``target_sample_us`` (at least one call), rotating through the packs given. ``cold``
    writes a buffer twice the L2 size between calls (each sample is then one call, the flush outside the
    events); ``cuda_graph`` captures a batch of calls in a CUDA graph and times its replay (launch overhead
    left out).

    The events (and the flush buffer) are made by ``bind()`` (the first ``time()`` calls it), on the stream the
    handle has then: a Timer made before costs nothing.
    """

    def __init__(self, handle: Handle, *, warmup=10, repeats=20, target_sample_us=300.0, cold=False, cuda_graph=False):
        if not isinstance(handle, Handle):
            raise TypeError("handle: expected a cudnn_backend.Handle")
        self.handle = handle
        self.warmup, self.repeats, self.target = int(warmup), int(repeats), float(target_sample_us)
        if self.repeats < 1 or self.warmup < 0:
            raise ValueError("repeats must be >= 1 and warmup >= 0")
        self.cold, self.cuda_graph = bool(cold), bool(cuda_graph)
        self.stream = self._events = self._flush = None

    def bind(self):
        """Make the device current and the timing events on the handle's stream (idempotent)."""
        if self._events is not None:
            return
        self.stream = self.handle.stream
        self._events = memory.EventTimer(self.stream)
        if self.cold:
            self._flush = memory.L2Flush(self.stream)

    def close(self):
        """Free the L2 flush buffer (the events go with the object)."""
        if self._flush is not None:
            self._flush.close()
            self._flush = None

    @property
    def how(self) -> str:
        """How calls are timed, in words: warm, cold or in a CUDA graph."""
        return ("cold (L2 flushed before each call, one call per sample)" if self.cold else
                "in a CUDA graph (replay, launch overhead excluded)" if self.cuda_graph else
                "warm, back to back on one stream")

    def describe(self) -> str:
        """What was measured, in words (for reports)."""
        return (f"CUDA events on the handle's stream, {self.warmup} warm-up calls, median of {self.repeats} samples, "
                f"inputs rotated over the buffer sets, {self.how}")

    def time(self, plan, packs, *, warmup=None, repeats=None, target_sample_us=None, warmup_us=0.0,
             lead_in=False) -> Timing:
        """Time ``plan`` over ``packs`` (rotated); ``warmup``, ``repeats`` and ``target_sample_us`` override the
        Timer's own for this call (a search times its candidates at several levels). ``warmup_us``: after the
        ``warmup`` calls, more calls until about that much GPU time, not waited for, so the first sample starts on
        a busy GPU (a brief timing of a plan just built is otherwise its coldest). ``lead_in``: each sample starts
        behind one call it does not measure, so no sample includes the launch of its first call (which a sample
        of a few calls of a few microseconds each would otherwise count several percent of). Both off by default
        (the exhaustive pass times as it always did)."""
        warmup = self.warmup if warmup is None else int(warmup)
        repeats = self.repeats if repeats is None else int(repeats)
        target = self.target if target_sample_us is None else float(target_sample_us)
        if repeats < 1 or warmup < 0:
            raise ValueError("repeats must be >= 1 and warmup >= 0")
        self.bind()
        h, ev = self.handle, self._events
        for i in range(warmup):
            execute(h, plan, packs[i % len(packs)])
        memory.synchronize(self.stream)
        ev.start()
        execute(h, plan, packs[0])
        ev.stop()
        one_us = max(ev.elapsed_ms() * 1000.0, 0.5)
        batch = 1 if self.cold else max(1, min(200, int(target / one_us)))
        if self.cuda_graph:
            return self._time_graph(plan, packs, batch, repeats)
        for i in range(min(1000, int(warmup_us / one_us))):
            execute(h, plan, packs[i % len(packs)])
        lead_in = lead_in and self._flush is None
        samples = []
        for r in range(repeats):
            if self._flush is not None:
                self._flush(r & 0xFF)
            if lead_in:
                execute(h, plan, packs[r % len(packs)])
            ev.start()
            for i in range(batch):
                execute(h, plan, packs[(r * batch + i) % len(packs)])
            ev.stop()
            samples.append(ev.elapsed_ms() * 1000.0 / batch)
        return Timing(statistics.median(samples), min(samples), max(samples), len(samples), batch)

    def _time_graph(self, plan, packs, batch, repeats) -> Timing:
        h, ev = self.handle, self._events

        def record():
            for i in range(batch):
                execute(h, plan, packs[i % len(packs)])

        with CapturedGraph(h, record) as g:
            for _ in range(3):
                g.launch(self.stream)
            memory.synchronize(self.stream)
            samples = []
            for _ in range(repeats):
                ev.start()
                g.launch(self.stream)
                ev.stop()
                samples.append(ev.elapsed_ms() * 1000.0 / batch)
        return Timing(statistics.median(samples), min(samples), max(samples), len(samples), batch)
