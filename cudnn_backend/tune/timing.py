"""Honest GPU timing of one plan: CUDA events, warm-up, the median of N samples, inputs rotated over several
buffer sets; optionally cold (L2 flushed before every call) or inside a CUDA graph (no launch overhead).

Needs a GPU and torch (optional dependency, imported when first used)."""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from cudnn_backend.core._descriptor import Handle
from cudnn_backend.runtime.execution import execute

__all__ = ["Timing", "Timer"]


@dataclass
class Timing:
    """Microseconds per call: median, min and max over the samples."""

    median_us: float
    min_us: float
    max_us: float
    samples: int
    calls_per_sample: int

    def to_dict(self) -> dict:
        return {"median_us": self.median_us, "min_us": self.min_us, "max_us": self.max_us, "samples": self.samples,
                "calls_per_sample": self.calls_per_sample}

    as_dict = to_dict  # the earlier name, kept as an alias


class Timer:
    """Times ``execute(handle, plan, pack)`` on the handle's stream.

    ``warmup`` calls first; then ``repeats`` samples, each an event pair around a batch of calls sized so a
    sample spans about ``target_sample_us`` (at least one call), rotating through the packs given. ``cold``
    writes a buffer twice the L2 size between calls (each sample is then one call, the flush outside the
    events); ``cuda_graph`` captures a batch of calls in a CUDA graph and times its replay (launch overhead
    left out).

    torch is imported, and the handle put on torch's current stream, by ``bind()`` (the first ``time()`` calls
    it): a Timer made before then costs nothing, so a sweep worker's import of torch can still be under way.
    """

    def __init__(self, handle: Handle, *, warmup=10, repeats=20, target_sample_us=300.0, cold=False, cuda_graph=False):
        if not isinstance(handle, Handle):
            raise TypeError("handle: expected a cudnn_backend.Handle")
        self.handle = handle
        self.warmup, self.repeats, self.target = int(warmup), int(repeats), float(target_sample_us)
        if self.repeats < 1 or self.warmup < 0:
            raise ValueError("repeats must be >= 1 and warmup >= 0")
        self.cold, self.cuda_graph = bool(cold), bool(cuda_graph)
        self._torch = self.stream = self._flush = None

    def bind(self):
        """Import torch and run the handle on torch's current stream (idempotent)."""
        if self._torch is not None:
            return
        import torch

        self.stream = torch.cuda.current_stream()
        self.handle.stream = self.stream.cuda_stream
        if self.cold:
            l2 = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 64 << 20)
            self._flush = torch.empty(max(2 * l2, 1 << 20), dtype=torch.uint8, device="cuda")
        self._torch = torch

    def describe(self) -> str:
        """What was measured, in words (for reports)."""
        how = ("cold (L2 flushed before each call, one call per sample)" if self.cold else
               "in a CUDA graph (replay, launch overhead excluded)" if self.cuda_graph else
               "warm, back to back on one stream")
        return (f"CUDA events on the handle's stream, {self.warmup} warm-up calls, median of {self.repeats} samples, "
                f"inputs rotated over the buffer sets, {how}")

    def time(self, plan, packs) -> Timing:
        self.bind()
        torch = self._torch
        h = self.handle
        for i in range(self.warmup):
            execute(h, plan, packs[i % len(packs)])
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(self.stream)
        execute(h, plan, packs[0])
        end.record(self.stream)
        end.synchronize()
        one_us = max(start.elapsed_time(end) * 1000.0, 0.5)
        batch = 1 if self.cold else max(1, min(200, int(self.target / one_us)))
        if self.cuda_graph:
            return self._time_graph(plan, packs, batch)
        samples = []
        for r in range(self.repeats):
            if self._flush is not None:
                self._flush.fill_(r & 0xFF)
            start.record(self.stream)
            for i in range(batch):
                execute(h, plan, packs[(r * batch + i) % len(packs)])
            end.record(self.stream)
            end.synchronize()
            samples.append(start.elapsed_time(end) * 1000.0 / batch)
        return Timing(statistics.median(samples), min(samples), max(samples), len(samples), batch)

    def _time_graph(self, plan, packs, batch) -> Timing:
        torch = self._torch
        side = torch.cuda.Stream()
        h = self.handle
        old = h.stream
        g = torch.cuda.CUDAGraph()
        try:
            h.stream = side.cuda_stream
            with torch.cuda.stream(side):
                execute(h, plan, packs[0])
            torch.cuda.synchronize()
            with torch.cuda.graph(g, stream=side):
                for i in range(batch):
                    execute(h, plan, packs[i % len(packs)])
        finally:
            h.stream = old
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(3):
            g.replay()
        torch.cuda.synchronize()
        samples = []
        for _ in range(self.repeats):
            start.record(self.stream)
            g.replay()
            end.record(self.stream)
            end.synchronize()
            samples.append(start.elapsed_time(end) * 1000.0 / batch)
        return Timing(statistics.median(samples), min(samples), max(samples), len(samples), batch)
