"""Temporary GPU probe: what INT8 NCHW conv (engine 71) computes."""
import numpy as np, torch
import cudnn_backend as cb
from cudnn_backend.graph import Graph, shapes
from cudnn_backend.runtime.execution import VariantPack, execute
from cudnn_backend.runtime.heuristics import build_first_plan
D = cb.DataType
N, C, H, W, K = 2, 8, 4, 6, 8
h = cb.Handle()
g = Graph("p", io_data_type=D.CUDNN_DATA_FLOAT, compute_data_type=D.CUDNN_DATA_INT32)
x = g.tensor([N, C, H, W], shapes.layout_strides([N, C, H, W], "nchw"), D.CUDNN_DATA_INT8, name="x")
w = g.tensor([K, C, 3, 3], shapes.layout_strides([K, C, 3, 3], "nchw"), D.CUDNN_DATA_INT8, name="w")
y = g.conv_fwd(x, w, padding=1, output=True, output_data_type=D.CUDNN_DATA_FLOAT, name="y")
og = g.build(h)
plan, rep = build_first_plan(og, handle=h)
print("plan", getattr(plan, "engine_global_index", None), plan)
def run(xv, wv):
    xt = torch.tensor(xv, dtype=torch.int8, device="cuda").contiguous()
    wt = torch.tensor(wv, dtype=torch.int8, device="cuda").contiguous()
    yt = torch.full((N, K, H, W), float("nan"), device="cuda")
    pack = VariantPack(plan, {x: xt, w: wt, y: yt})
    execute(h, plan, pack); torch.cuda.synchronize()
    return yt.cpu().double().numpy()
def ref(xv, wv):
    return torch.nn.functional.conv2d(torch.tensor(xv).double(), torch.tensor(wv).double(), padding=1).numpy()
def vect_c(a):  # memory of NCHW read as NCHW_VECT_C (x4): channel c = c4*4 + v at [n, c4, h, w, v]
    n, c, hh, ww = a.shape
    mem = a.reshape(-1)
    v = mem.reshape(n, c // 4, hh, ww, 4)
    return v.transpose(0, 1, 4, 2, 3).reshape(n, c, hh, ww)
def nhwc_read(a):  # NCHW memory read as NHWC
    n, c, hh, ww = a.shape
    return a.reshape(-1).reshape(n, hh, ww, c).transpose(0, 3, 1, 2)
rng = np.random.default_rng(0)
cases = {"ones": (np.ones((N, C, H, W), np.int8), np.ones((K, C, 3, 3), np.int8)),
         "rand0-7": (rng.integers(0, 8, (N, C, H, W)).astype(np.int8), rng.integers(0, 8, (K, C, 3, 3)).astype(np.int8)),
         "rand-8-7": (rng.integers(-8, 8, (N, C, H, W)).astype(np.int8), rng.integers(-8, 8, (K, C, 3, 3)).astype(np.int8))}
for c in range(C):
    xv = np.zeros((N, C, H, W), np.int8); xv[:, c] = 1
    cases[f"x only ch{c}"] = (xv, np.ones((K, C, 3, 3), np.int8))
wv = np.zeros((K, C, 3, 3), np.int8); wv[:, :, 1, 1] = 1
cases["w centre only"] = (rng.integers(0, 8, (N, C, H, W)).astype(np.int8), wv)
for name, (xv, wv) in cases.items():
    out = run(xv, wv); r = ref(xv, wv)
    err = np.abs(out - r).max() / max(np.abs(r).max(), 1)
    hyp = {}
    for hn, fx, fw in (("x vect_c", vect_c, None), ("x,w vect_c", vect_c, vect_c), ("x nhwc", nhwc_read, None),
                       ("x,w nhwc", nhwc_read, nhwc_read), ("w vect_c", None, vect_c), ("w nhwc", None, nhwc_read)):
        rr = ref(fx(xv) if fx else xv, fw(wv) if fw else wv)
        hyp[hn] = float(np.abs(out - rr).max())
    print(f"{name:14s} rel err {err:.3g}  bad positions {int((np.abs(out - r) > 1e-3).sum())}/{out.size}  hypotheses max|diff| {hyp}")
    if name in ("ones", "x only ch0"):
        print("  out[0,0]", out[0, 0].tolist(), "\n  ref[0,0]", r[0, 0].tolist())
