"""Facts about a GPU that cuDNN reads only from the live device and no device-profile JSON carries: captured on the GPU
and kept beside cuDNN's JSON in the package's profile file (``DeviceProfile.device_facts``; cuDNN never sees them).

Live, cuDNN fills its device properties with the GPU's **cluster occupancy** -- how many thread-block clusters of 1 to
16 blocks fit on the GPU at once when one block fills an SM, measured with ``cuOccupancyMaxActiveClusters`` on a
kernel of its own -- and the SM count of each GPC; its runtime-compiled convolution engines size their clusters from
them. No release's device-profile JSON has a member for them, and offline no release asks the driver (the stand-in's
trace shows no such call), so offline cuDNN 9.19 has none ("No GPC available") and cuDNN 9.28 assumes one GPC of 18
SMs (18, 9, 6, 4, 3, 3, 2, 2, 2, 1, ... clusters). Recorded here, a profile says what the GPU really has, and what an
offline answer lacks (``tune.offline_gaps``).

Each fact is stored as ``{"value": ..., "source": ...}`` under its name:

``cluster_occupancy``
    [clusters of 1 block, of 2 blocks, ..., of 16 blocks]: the most co-resident clusters of that size of a kernel one
    block of which takes all the shared memory a block may opt in to (so one block per SM), non-portable cluster sizes
    allowed: the table cuDNN measures. Not published (it depends on how many SMs each of the chip's GPCs kept):
    captured on the GPU.
``max_cluster_size``
    {"portable": N, "non_portable": M}: the largest cluster such a kernel may launch with, portable and with the
    non-portable attribute (``cuOccupancyMaxPotentialClusterSize``). Published for compute capability 9.0 and later
    (8 and 16), captured on the GPU.
"""
from __future__ import annotations

import datetime

from cudnn_backend.errors import DeviceProfileError
from cudnn_backend.runtime import memory

__all__ = ["FACTS", "CLUSTER_SIZES", "capture", "check", "published", "describe"]

#: the facts a profile can carry beside cuDNN's JSON: {name: what it is}
FACTS = {
    "cluster_occupancy": "most co-resident thread-block clusters of 1..16 blocks, one block per SM (what cuDNN "
                         "measures live; offline cuDNN 9.19 has none, 9.28 assumes one GPC of 18 SMs)",
    "max_cluster_size": "largest cluster a kernel may launch with: portable, and with the non-portable attribute",
}
#: the cluster sizes cuDNN measures (cuDNN 9.19: 1 to 16)
CLUSTER_SIZES = tuple(range(1, 17))
# published facts by compute capability (deviceVer, MAJOR*100 + MINOR*10, inclusive range; None: no upper bound)
_PUBLISHED = (
    ((900, None), {"max_cluster_size": {"portable": 8, "non_portable": 16}},
     "CUDA C++ Programming Guide, thread block clusters: 8 blocks portable, 16 with "
     "cudaFuncAttributeNonPortableClusterSizeAllowed (compute capability 9.0 and later)"),
)
# a kernel that does nothing: what matters to the occupancy is the shared memory each of its blocks takes
_PROBE_NAME = "cudnn_backend_cluster_probe"
_PROBE_PTX = (f".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry {_PROBE_NAME}()\n{{\n\tret;\n}}\n"
              ).encode() + b"\0"
_PROBE_THREADS = 32


def published(device_ver) -> dict:
    """{fact: {"value", "source"}} of the facts published for GPUs of ``device_ver`` (deviceVer: 900 for 9.0)."""
    out = {}
    if device_ver is None:
        return out
    for (low, high), facts, source in _PUBLISHED:
        if low <= int(device_ver) and (high is None or int(device_ver) <= high):
            out.update({k: {"value": v, "source": f"published: {source}"} for k, v in facts.items()})
    return out


def _check_int(value, what, low=0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise DeviceProfileError(f"{what}: expected an int >= {low}, not {value!r}")
    return value


def check(data, what="device_facts") -> dict:
    """The facts of a profile file, checked (DeviceProfileError naming the member for anything else); None or {} is
    no facts. Facts this package does not know are kept as they are (a newer package may write more)."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise DeviceProfileError(f"{what}: expected an object of facts, not {type(data).__name__}")
    out = {}
    for name, fact in data.items():
        where = f"{what}.{name}"
        if not isinstance(fact, dict) or "value" not in fact:
            raise DeviceProfileError(f"{where}: expected {{\"value\": ..., \"source\": ...}}, not {fact!r}"[:300])
        source = fact.get("source", "")
        if not isinstance(source, str):
            raise DeviceProfileError(f"{where}.source: expected text, not {type(source).__name__}")
        value = fact["value"]
        if value is not None and name == "cluster_occupancy":
            if not isinstance(value, list) or not value or len(value) > 64:
                raise DeviceProfileError(f"{where}.value: expected a list of cluster counts (one per cluster size "
                                         f"from 1), not {value!r}"[:300])
            value = [_check_int(v, f"{where}.value[{i}]") for i, v in enumerate(value)]
        elif value is not None and name == "max_cluster_size":
            if not isinstance(value, dict) or set(value) != {"portable", "non_portable"}:
                raise DeviceProfileError(f"{where}.value: expected {{\"portable\": N, \"non_portable\": M}}, not "
                                         f"{value!r}"[:300])
            value = {k: _check_int(v, f"{where}.value.{k}", 1) for k, v in value.items()}
        out[name] = {"value": value, "source": source}
    return out


def _call(result, what):
    """A cuda.bindings driver call's value, or DeviceProfileError naming the call and the driver's error."""
    err, *values = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        raise DeviceProfileError(f"{what}: {getattr(err, 'name', err)}")
    return values[0] if len(values) == 1 else values


def capture(device=0) -> dict:
    """The facts of CUDA device ``device``, measured there (needs the GPU, cuda-core and cuda-bindings): each
    ``{"value", "source"}``; a fact that could not be measured has value None and its source says why, so a profile
    capture never fails for it."""
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    try:
        measured = _measure(int(device))
    except Exception as e:  # noqa: BLE001 - every fact is extra: the profile is captured without it
        reason = f"not captured: {type(e).__name__}: {e}"[:300]
        return {name: {"value": None, "source": reason} for name in FACTS}
    source = (f"captured on CUDA device {int(device)} ({when}): cuOccupancyMaxActiveClusters / "
              f"cuOccupancyMaxPotentialClusterSize, one {_PROBE_THREADS}-thread block per SM")
    return {name: {"value": value, "source": source} for name, value in measured.items()}


def _measure(device) -> dict:
    drv = memory.cudriver()
    memory.cuda_core().Device(device).set_current()  # the primary context, current in this thread
    dev = _call(drv.cuDeviceGet(device), "cuDeviceGet")
    optin = _call(drv.cuDeviceGetAttribute(
        drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev), "cuDeviceGetAttribute")
    module = _call(drv.cuModuleLoadData(_PROBE_PTX), "cuModuleLoadData")
    try:
        func = _call(drv.cuModuleGetFunction(module, _PROBE_NAME.encode()), "cuModuleGetFunction")
        attr = drv.CUfunction_attribute
        _call(drv.cuFuncSetAttribute(func, attr.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(optin)),
              "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)")
        # as much shared memory as one block per SM leaves it: the block fills the SM
        smem = _call(drv.cuOccupancyAvailableDynamicSMemPerBlock(func, 1, _PROBE_THREADS),
                     "cuOccupancyAvailableDynamicSMemPerBlock")

        def config(cluster):
            cfg = drv.CUlaunchConfig()
            cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = cluster, 1, 1
            cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = _PROBE_THREADS, 1, 1
            cfg.sharedMemBytes = int(smem)
            a = drv.CUlaunchAttribute()
            a.id = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
            a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z = cluster, 1, 1
            cfg.attrs = [a]
            cfg.numAttrs = 1
            return cfg

        portable = _call(drv.cuOccupancyMaxPotentialClusterSize(func, config(1)),
                         "cuOccupancyMaxPotentialClusterSize")
        _call(drv.cuFuncSetAttribute(func, attr.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
              "cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)")
        non_portable = _call(drv.cuOccupancyMaxPotentialClusterSize(func, config(1)),
                             "cuOccupancyMaxPotentialClusterSize")
        occupancy = []
        for cluster in CLUSTER_SIZES:
            if cluster > int(non_portable):
                occupancy.append(0)  # no such cluster can launch
                continue
            occupancy.append(int(_call(drv.cuOccupancyMaxActiveClusters(func, config(cluster)),
                                       f"cuOccupancyMaxActiveClusters(cluster of {cluster})")))
    finally:
        drv.cuModuleUnload(module)
    return {"cluster_occupancy": occupancy,
            "max_cluster_size": {"portable": int(portable), "non_portable": int(non_portable)}}


def describe(facts, device_ver=None) -> list:
    """[(fact, value as text, where it comes from)] for every fact in ``FACTS`` (then any other the profile has):
    captured, else published for GPUs of ``device_ver``, else "not captured" with how to capture it."""
    facts = dict(facts or {})
    known = published(device_ver)
    rows = []
    for name in list(FACTS) + [n for n in facts if n not in FACTS]:
        fact = facts.get(name)
        if fact is not None and fact.get("value") is not None:
            rows.append((name, _text(fact["value"]), fact.get("source") or "in the profile file"))
        elif name in known:
            why = f"; {fact['source']}" if fact and fact.get("source") else ""
            rows.append((name, _text(known[name]["value"]), known[name]["source"] + why))
        else:
            why = fact["source"] if fact and fact.get("source") else "not captured"
            rows.append((name, "-", f"{why} (`cudnn-backend profile capture` on the GPU records it)"))
    return rows


def _text(value) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value))
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return str(value)
