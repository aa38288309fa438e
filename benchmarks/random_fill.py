"""Random inputs for the explorer, on a GPU: the device kernel the package uses against the host routes.

* numpy (the route before): standard normals * 0.5 (float32), rounded to the tensor's type
  (``typed.arrays.encode``), copied to the device; the fp64 reference reads the host values as they are;
* host twin (the fallback where NVRTC is missing): ``memory.host_random`` (the kernel's generator in numpy),
  copied to the device;
* device (what ``tune.inputs`` does): ``memory.fill_random`` writes the values in place (a kernel compiled once per
  process with NVRTC through ``cuda.core.Program``); the reference then needs them copied back (and decoded).

For each data type and size: the milliseconds of each route end to end (inputs ready on the device *and* their
values on the host for the reference), plus the kernel's one-time compile. Then, for every graph of the ResNet-50
preset, ``inputs.make_buffer_sets(graph, 4)`` and the first read of the host values (the copy back), with the
device kernel and with the host twin forced. Writes JSON to ``--out`` ($OUT/random_fill.json under
tools/gpu_run.sh). Needs one GPU, cuda-core, cuda-bindings and NVRTC."""
import argparse
import json
import os
import statistics
import time

import numpy as np

import cudnn_backend as cb
from cudnn_backend.runtime import memory
from cudnn_backend.runtime._packing import TensorSpec
from cudnn_backend.tune import graphs, inputs
from cudnn_backend.tune.sweeps import tasks_from_preset
from cudnn_backend.typed import arrays

D = cb.DataType
TYPES = (D.CUDNN_DATA_FLOAT, D.CUDNN_DATA_HALF, D.CUDNN_DATA_BFLOAT16, D.CUDNN_DATA_FP8_E4M3)


def _ms(f, repeats):
    times = []
    out = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = f()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), out


def numpy_route(spec, buf, repeats):
    rng = np.random.default_rng(0)

    def total():
        values = arrays.encode(rng.standard_normal(spec.dims, dtype=np.float32) * np.float32(0.5), spec.data_type)
        memory.copy_to_device(buf, inputs.host_layout(values, spec))
        return values

    return _ms(total, repeats)[0]


def twin_route(spec, buf, n, repeats):
    def total():
        values = memory.host_random(spec.data_type, n, 1)
        memory.copy_to_device(buf, values)
        return values

    return _ms(total, repeats)[0]


def device_route(spec, buf, n, repeats):
    steps = {}
    key = [0]

    def fill():
        key[0] += 1
        assert memory.fill_random(buf, spec.data_type, n, key[0]) is None, "the device route is not in use"
        memory.synchronize(0)

    steps["fill_ms"], _ = _ms(fill, repeats)
    steps["copy_to_host_ms"], raw = _ms(lambda: memory.copy_to_host(buf, spec.nbytes), repeats)
    steps["decode_ms"], _ = _ms(lambda: arrays.decode(inputs.stored_view(raw, spec), spec.data_type), repeats)

    def total():
        fill()
        return arrays.decode(inputs.stored_view(memory.copy_to_host(buf, spec.nbytes), spec), spec.data_type)

    steps["total_ms"], decoded = _ms(total, repeats)
    steps["std"] = float(decoded.std())
    return steps


def preset_sets(preset, repeats, route):
    """make_buffer_sets(graph, 4) and the first read of ``host`` for each graph of the preset."""
    rows = []
    with cb.Handle() as handle:
        for task in tasks_from_preset(preset):
            subject = graphs.resolve(task.builder, handle=handle, kwargs=dict(task.kwargs), name=task.name)
            make, host = [], []
            for _ in range(repeats):
                t0 = time.perf_counter()
                sets = inputs.make_buffer_sets(subject.op_graph, 4, stream=handle.stream)
                t1 = time.perf_counter()
                values = sets[0].host
                t2 = time.perf_counter()
                assert values and sets[0].random_fill.startswith(route), sets[0].random_fill
                for s in sets:
                    s.close()
                make.append((t1 - t0) * 1e3)
                host.append((t2 - t1) * 1e3)
            elements = max(int(np.prod(s.dims)) for s in inputs.tensor_specs(operation_graph=subject.op_graph).values())
            rows.append({"graph": task.name, "largest_tensor_elements": elements,
                         "make_buffer_sets_ms": statistics.median(make), "host_values_ms": statistics.median(host)})
            print(f"  {route:6s} {task.name:40s} make_buffer_sets {rows[-1]['make_buffer_sets_ms']:8.2f} ms, host values "
                  f"{rows[-1]['host_values_ms']:8.2f} ms", flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="65536,1048576,8388608,33554432", help="elements per tensor")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--preset", default="resnet50", help="graphs whose buffer sets are made ('' to skip)")
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "random_fill.json"))
    args = ap.parse_args()
    dev = memory.device()
    result = {"date": time.strftime("%Y-%m-%d %H:%M"), "gpu": dev.name, "cases": []}
    t0 = time.perf_counter()
    kernel = memory.random_fill_kernel()
    if isinstance(kernel, str):
        result["compile_error"] = kernel
    else:
        result["compile_ms"] = (time.perf_counter() - t0) * 1e3
    print(f"kernel compile: {result.get('compile_ms', result.get('compile_error'))}", flush=True)
    for dt in TYPES:
        for n in (int(x) for x in args.sizes.split(",")):
            spec = TensorSpec(1, "x", (n,), (1,), dt)
            with memory.DeviceBuffer(spec.nbytes) as buf:
                case = {"data_type": dt.name, "elements": n, "bytes": spec.nbytes,
                        "numpy_ms": numpy_route(spec, buf, args.repeats),
                        "twin_ms": twin_route(spec, buf, n, args.repeats)}
                if not isinstance(kernel, str):
                    case["device"] = device_route(spec, buf, n, args.repeats)
            result["cases"].append(case)
            dev_total = case.get("device", {}).get("total_ms")
            print(f"{dt.name:22s} {n:>10d}: numpy {case['numpy_ms']:8.2f} ms, host twin {case['twin_ms']:8.2f} ms, "
                  f"device {'-' if dev_total is None else f'{dev_total:8.2f}'} ms (inputs on the GPU and their values "
                  "on the host)", flush=True)
    if args.preset and not isinstance(kernel, str):
        print(f"{args.preset}: buffer sets (4 per graph) and the host values the reference reads", flush=True)
        result["preset"] = {"name": args.preset, "device": preset_sets(args.preset, args.repeats, "device")}
        memory._kernels[dev.device_id] = "forced by benchmarks/random_fill.py"  # the host twin from here on
        try:
            result["preset"]["host"] = preset_sets(args.preset, args.repeats, "forced")
        finally:
            memory._kernels.pop(dev.device_id, None)
        for route in ("device", "host"):
            rows = result["preset"][route]
            total = sum(r["make_buffer_sets_ms"] + r["host_values_ms"] for r in rows)
            print(f"{args.preset} {route}: {total:.0f} ms for {len(rows)} graphs", flush=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
