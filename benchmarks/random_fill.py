"""Random inputs for the explorer, two ways, on a GPU: which to keep?

* host (what ``tune.inputs`` does): numpy draws standard normals * 0.5 (float32), rounds them to the tensor's
  type (``typed.arrays.encode``), lays them out (``inputs.host_layout``) and copies them to the device; the fp64
  reference then reads the host values as they are;
* device: a small kernel (a counter hash and Box-Muller, compiled once per process with NVRTC through
  ``cuda.core.Program``, launched with ``cuda.core.launch``) writes them in place; the reference then needs them
  copied back (and decoded).

For each data type and size: the milliseconds of each step and of each route end to end (inputs ready on the
device *and* on the host for the reference), plus the kernel's one-time compile. Writes JSON to ``--out``
($OUT/random_fill.json under tools/gpu_run.sh). Needs one GPU, cuda-core, cuda-bindings and NVRTC."""
import argparse
import json
import os
import statistics
import time

import numpy as np

import cudnn_backend as cb
from cudnn_backend.runtime import memory
from cudnn_backend.runtime._packing import TensorSpec
from cudnn_backend.tune import inputs
from cudnn_backend.typed import arrays

D = cb.DataType

KERNELS = r"""
__device__ __forceinline__ unsigned int mix(unsigned int x) {  // lowbias32
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16; return x;
}
__device__ __forceinline__ float normal(unsigned long long i, unsigned int seed) {
    unsigned int a = mix((unsigned int)i ^ mix(seed));
    unsigned int b = mix(a ^ (unsigned int)(i >> 32) ^ 0x85ebca6bU);
    float u1 = ((a >> 8) + 0.5f) * (1.0f / 16777216.0f);
    float u2 = (b >> 8) * (1.0f / 16777216.0f);
    return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}
#define GRID_LOOP for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; \
                       i += (unsigned long long)gridDim.x * blockDim.x)
extern "C" __global__ void fill_f32(float* out, unsigned long long n, unsigned int seed, float scale) {
    GRID_LOOP { out[i] = normal(i, seed) * scale; }
}
extern "C" __global__ void fill_f16(unsigned short* out, unsigned long long n, unsigned int seed, float scale) {
    GRID_LOOP { float v = normal(i, seed) * scale; unsigned short h;
                asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v)); out[i] = h; }
}
extern "C" __global__ void fill_bf16(unsigned short* out, unsigned long long n, unsigned int seed, float scale) {
    GRID_LOOP { float v = normal(i, seed) * scale; unsigned short h;
                asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v)); out[i] = h; }
}
"""
KERNEL_OF = {D.CUDNN_DATA_FLOAT: "fill_f32", D.CUDNN_DATA_HALF: "fill_f16", D.CUDNN_DATA_BFLOAT16: "fill_bf16"}


def _ms(f, repeats):
    times = []
    out = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = f()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), out


def host_route(spec, buf, repeats):
    rng = np.random.default_rng(0)
    steps = {}
    steps["generate_ms"], values = _ms(lambda: rng.standard_normal(spec.dims, dtype=np.float32) * np.float32(0.5),
                                       repeats)
    steps["encode_ms"], stored = _ms(lambda: arrays.encode(values, spec.data_type), repeats)
    steps["layout_ms"], raw = _ms(lambda: inputs.host_layout(stored, spec), repeats)
    steps["copy_to_device_ms"], _ = _ms(lambda: memory.copy_to_device(buf, raw), repeats)
    steps["total_ms"], _ = _ms(lambda: memory.copy_to_device(buf, inputs.host_layout(arrays.encode(
        rng.standard_normal(spec.dims, dtype=np.float32) * np.float32(0.5), spec.data_type), spec)), repeats)
    decoded = arrays.decode(stored, spec.data_type)
    steps["std"] = float(decoded.std())
    return steps


def device_route(spec, buf, kernel, core, repeats):
    dev = memory.device()
    stream = dev.create_stream()
    n = int(np.prod(spec.dims))
    config = core.LaunchConfig(grid=min((n + 255) // 256, 8 * dev.properties.multiprocessor_count), block=256)
    seed = [0]

    def fill():
        seed[0] += 1
        core.launch(stream, config, kernel, buf.buffer, np.uint64(n), np.uint32(seed[0]), np.float32(0.5))
        stream.sync()

    steps = {}
    steps["fill_ms"], _ = _ms(fill, repeats)
    steps["copy_to_host_ms"], raw = _ms(lambda: memory.copy_to_host(buf, spec.nbytes), repeats)
    steps["decode_ms"], decoded = _ms(lambda: arrays.decode(inputs.stored_view(raw, spec), spec.data_type), repeats)

    def total():
        fill()
        return arrays.decode(inputs.stored_view(memory.copy_to_host(buf, spec.nbytes), spec), spec.data_type)

    steps["total_ms"], decoded = _ms(total, repeats)
    steps["std"] = float(decoded.std())
    return steps


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="65536,1048576,8388608,33554432", help="elements per tensor")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "random_fill.json"))
    args = ap.parse_args()
    core = memory.cuda_core()
    dev = memory.device()
    result = {"date": time.strftime("%Y-%m-%d %H:%M"), "gpu": dev.name, "cases": []}
    t0 = time.perf_counter()
    try:
        program = core.Program(KERNELS, code_type="c++", options=core.ProgramOptions(arch=f"sm_{dev.arch}"))
        module = program.compile("cubin")
        kernels = {dt: module.get_kernel(name) for dt, name in KERNEL_OF.items()}
        result["compile_ms"] = (time.perf_counter() - t0) * 1e3
    except Exception as e:  # noqa: BLE001 - no NVRTC here: the device route cannot run, which is a finding too
        kernels = None
        result["compile_error"] = f"{type(e).__name__}: {e}"
    print(f"kernel compile: {result.get('compile_ms', result.get('compile_error'))}", flush=True)
    for dt in KERNEL_OF:
        for n in (int(x) for x in args.sizes.split(",")):
            spec = TensorSpec(1, "x", (n,), (1,), dt)
            with memory.DeviceBuffer(spec.nbytes) as buf:
                case = {"data_type": dt.name, "elements": n, "bytes": spec.nbytes,
                        "host": host_route(spec, buf, args.repeats)}
                if kernels is not None:
                    case["device"] = device_route(spec, buf, kernels[dt], core, args.repeats)
            result["cases"].append(case)
            dev_total = case.get("device", {}).get("total_ms")
            print(f"{dt.name:22s} {n:>10d}: host {case['host']['total_ms']:8.2f} ms, device "
                  f"{'-' if dev_total is None else f'{dev_total:8.2f}'} ms (inputs on the GPU and their values on the "
                  "host)", flush=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
