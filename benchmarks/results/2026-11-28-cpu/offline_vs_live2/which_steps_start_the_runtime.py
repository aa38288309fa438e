# which cuDNN steps initialize cuDNN's static CUDA runtime offline: one process per step
# Usage (offline, the stand-in forced): STUB_PROBE=PATH/libcuda.so.1 CUDNN_BACKEND_NODEVICE=1 python which_steps_start_the_runtime.py conv_fwd fp16 nhwc 3
# (STEP: an engine index, or a heuristics mode A / B / FALLBACK); STUB_PROBE is the stand-in with stub_probe_addition.c appended.
import sys, subprocess, os
name, dt, lay, what = sys.argv[1:5]
code = f'''
import sys
from cudnn_backend.tune import catalogue, support, graphs
from cudnn_backend.runtime import engines as E, heuristics as H
e = [e for e in catalogue.default_catalogue() if e.name == {name!r} and e.data_type == {dt!r} and e.layout == {lay!r}][0]
g, og, stage, err = support.materialize(e.builder, e.kwargs, None)
dp = support.as_deviceprop(graphs.device_profile("h200"), None)
print("=== start", file=sys.stderr, flush=True)
w = {what!r}
if w in ("A", "B", "FALLBACK"):
    cs = H.get_configs(og, w, dp, raise_if_empty=False); print("configs", len(cs), [c.engine_index for c in cs], file=sys.stderr)
else:
    info = E.inspect_engine(og, int(w), dp, probe_configs=True); print("supported", info.supported, file=sys.stderr)
'''
env = dict(os.environ, CUDNN_BACKEND_STUB_TRACE="1", LD_PRELOAD=os.environ.get("STUB_PROBE", "stub_probe/libcuda.so.1"))
out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stderr
after = out.split("=== start", 1)[-1]
rt = "cuGetProcAddress_v2(cuInit" in after
calls = sorted({l.split("] ")[1].split("(")[0] for l in after.splitlines() if l.startswith("[libcuda stub]")})
res = [l for l in after.splitlines() if l.startswith(("configs", "supported"))]
print(f"{name} {dt} {lay} {what}: runtime init attempted={rt}; driver calls={calls}; {res}")
