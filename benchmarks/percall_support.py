"""Shared by the per-call benchmarks: the cases, the conv under test, recording ratios to C."""

CASES = {
    # the launch-bound conv of the per-call anchors, and the notebook's conv
    "launch_bound": dict(n=1, c=8, h=8, w=8, k=8, r=3, s=3, padding=1),
    "notebook": dict(n=8, c=64, h=56, w=56, k=32, r=3, s=3, padding=1),
}
C_ITERS = 20000
C_RUNS = 3  # runs of the C harness per case, interleaved; the median of their medians is the C number


class ConvCase:
    """A plain conv forward graph, its plan (the recommended flow) and device buffers."""

    def __init__(self, name, handle, torch):
        from cudnn_backend import patterns
        from cudnn_backend.runtime.heuristics import build_first_plan
        from cudnn_backend.runtime.execution import VariantPack

        c = CASES[name]
        self.name, self.sizes = name, c
        self.pattern = patterns.conv_fwd(n=c["n"], c=c["c"], h=c["h"], w=c["w"], k=c["k"], r=c["r"], s=c["s"],
                                         padding=c["padding"], build=False)
        self.op_graph = self.pattern.build(handle)
        self.plan, self.report = build_first_plan(self.op_graph, handle=handle)
        cl = torch.channels_last
        self.x = torch.randn(c["n"], c["c"], c["h"], c["w"], device="cuda", dtype=torch.half).to(memory_format=cl)
        self.w = torch.randn(c["k"], c["c"], c["r"], c["s"], device="cuda", dtype=torch.half).to(memory_format=cl)
        self.y = torch.empty(c["n"], c["k"], c["h"], c["w"], device="cuda", dtype=torch.half).to(memory_format=cl)
        self.buffers = {self.pattern.x: self.x, self.pattern.w: self.w, self.pattern.y: self.y}
        self.pack = VariantPack(self.plan, self.buffers)
        self.pointers = tuple(int(self.buffers_by_uid()[u].data_ptr()) for u in self.pack.pointer_uids)

    def buffers_by_uid(self):
        return {t.uid: v for t, v in self.buffers.items()}


def record(benchmark, c_results, case, c_key, per_call_stats=True):
    """Attach the C number and the ratio to this benchmark (median per call over C's median per call)."""
    fused = 1 if c_key == "build_graph_us" else 0
    c = c_results[(case, fused)]
    benchmark.extra_info["case"] = case
    benchmark.extra_info["c_us"] = c[c_key]
    benchmark.extra_info["c_metric"] = c_key
    benchmark.extra_info["c_engine"] = c["engine"]
    benchmark.extra_info["c_us_runs"] = c.get(c_key + "_runs")
    # medians on both sides (the C harness: the median over C_RUNS runs of its median of 7 timed batches)
    median_us = benchmark.stats.stats.median * 1e6
    benchmark.extra_info["median_us"] = median_us
    benchmark.extra_info["ratio_to_c"] = median_us / c[c_key]
