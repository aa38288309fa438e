#!/usr/bin/env python3
"""Standalone probe: how far does cuDNN's backend API get on a machine with
no GPU and no CUDA driver, given cudnn-backend's libcuda stand-in?

No dependency on the cudnn_backend package: plain ctypes.  Steps:

  0. build cudnn_backend/_nodevice/libcuda_stub.c with `cc` into a temp dir
     (soname libcuda.so.1, and a second copy with soname libcuda.so unless
     --one-soname), dlopen them RTLD_GLOBAL; dlopen NVRTC RTLD_GLOBAL
     (cuda.pathfinder, "nvrtc"); dlopen libcudnn.so.9 (cuda.pathfinder,
     "cudnn").
  a. conv-forward graph of the cudnn-frontend notebook (fp16 NHWC, fp32
     compute), finalize op graph, read ENGINE_GLOBAL_COUNT;
  b. heuristics A / B / FALLBACK with an H200 deviceprop descriptor;
  c. execution plans for every mode-A config (DEVICEPROP, no handle):
     finalize, workspace size, JSON representation;
  d. batched fp16 matmul + bias + ReLU graph: heuristics counts, and a plan
     for the first config (finalizes offline with this stub: NVRTC compiles,
     the cubin lands in the plan JSON; it fails at cuLibraryLoadData only if
     the stub's cuDeviceGetCount reports a device);
  e. error cases: conv op with a non-finalized X; heuristics without
     deviceprop.

Usage:  python tools/nodevice_probe.py [--one-soname] [--no-stub]
        [--no-nvrtc] [--trace] [--deviceprop PATH] [--stub-src PATH]
        [--cflags=-DFOO] [--skip-plans]
"""
import argparse
import ctypes
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_STUB = os.path.join(REPO, "cudnn_backend", "_nodevice", "libcuda_stub.c")
DEFAULT_DEVICEPROP = "/work/shared/data/h200_deviceprop_cudnn91900.json"

# ----------------------------------------------------------------------------
# cuDNN 9.19 enum values (cudnn_graph_v9.h)
# ----------------------------------------------------------------------------
# cudnnBackendDescriptorType_t
POINTWISE_DESCRIPTOR = 0
CONVOLUTION_DESCRIPTOR = 1
ENGINE_DESCRIPTOR = 2
ENGINECFG_DESCRIPTOR = 3
ENGINEHEUR_DESCRIPTOR = 4
EXECUTION_PLAN_DESCRIPTOR = 5
OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR = 10
OPERATION_POINTWISE_DESCRIPTOR = 13
OPERATIONGRAPH_DESCRIPTOR = 15
TENSOR_DESCRIPTOR = 17
MATMUL_DESCRIPTOR = 18
OPERATION_MATMUL_DESCRIPTOR = 19
DEVICEPROP_DESCRIPTOR = 38

# cudnnBackendAttributeType_t
T_HANDLE = 0
T_DATA_TYPE = 1
T_BOOLEAN = 2
T_INT64 = 3
T_FLOAT = 4
T_DOUBLE = 5
T_VOID_PTR = 6
T_CONVOLUTION_MODE = 7
T_HEUR_MODE = 8
T_POINTWISE_MODE = 14
T_BACKEND_DESCRIPTOR = 15
T_INT32 = 23
T_CHAR = 24
TYPE_NAMES = {0: "CUDNN_TYPE_HANDLE", 1: "CUDNN_TYPE_DATA_TYPE", 2: "CUDNN_TYPE_BOOLEAN",
              3: "CUDNN_TYPE_INT64", 4: "CUDNN_TYPE_FLOAT", 5: "CUDNN_TYPE_DOUBLE",
              6: "CUDNN_TYPE_VOID_PTR", 7: "CUDNN_TYPE_CONVOLUTION_MODE",
              8: "CUDNN_TYPE_HEUR_MODE", 14: "CUDNN_TYPE_POINTWISE_MODE",
              15: "CUDNN_TYPE_BACKEND_DESCRIPTOR", 23: "CUDNN_TYPE_INT32",
              24: "CUDNN_TYPE_CHAR"}

# cudnnBackendAttributeName_t
A = dict(
    POINTWISE_MODE=0, POINTWISE_MATH_PREC=1,
    CONVOLUTION_COMP_TYPE=100, CONVOLUTION_CONV_MODE=101, CONVOLUTION_DILATIONS=102,
    CONVOLUTION_FILTER_STRIDES=103, CONVOLUTION_POST_PADDINGS=104,
    CONVOLUTION_PRE_PADDINGS=105, CONVOLUTION_SPATIAL_DIMS=106,
    ENGINEHEUR_MODE=200, ENGINEHEUR_OPERATION_GRAPH=201, ENGINEHEUR_RESULTS=202,
    ENGINEHEUR_DEVICEPROP=204,
    ENGINECFG_ENGINE=300,
    EXECUTION_PLAN_ENGINE_CONFIG=401, EXECUTION_PLAN_WORKSPACE_SIZE=402,
    EXECUTION_PLAN_JSON_REPRESENTATION=405, EXECUTION_PLAN_DEVICEPROP=407,
    OPERATION_CONVOLUTION_FORWARD_ALPHA=700, OPERATION_CONVOLUTION_FORWARD_BETA=701,
    OPERATION_CONVOLUTION_FORWARD_CONV_DESC=702, OPERATION_CONVOLUTION_FORWARD_W=703,
    OPERATION_CONVOLUTION_FORWARD_X=704, OPERATION_CONVOLUTION_FORWARD_Y=705,
    OPERATION_POINTWISE_PW_DESCRIPTOR=750, OPERATION_POINTWISE_XDESC=751,
    OPERATION_POINTWISE_BDESC=752, OPERATION_POINTWISE_YDESC=753,
    OPERATIONGRAPH_OPS=801, OPERATIONGRAPH_ENGINE_GLOBAL_COUNT=802,
    TENSOR_BYTE_ALIGNMENT=900, TENSOR_DATA_TYPE=901, TENSOR_DIMENSIONS=902,
    TENSOR_STRIDES=903, TENSOR_UNIQUE_ID=906, TENSOR_IS_VIRTUAL=907,
    ENGINE_GLOBAL_INDEX=1301,
    MATMUL_COMP_TYPE=1500,
    OPERATION_MATMUL_ADESC=1520, OPERATION_MATMUL_BDESC=1521,
    OPERATION_MATMUL_CDESC=1522, OPERATION_MATMUL_DESC=1523,
    DEVICEPROP_JSON_REPRESENTATION=2702,
)

# cudnnDataType_t
DATA_FLOAT, DATA_HALF = 0, 2
# cudnnConvolutionMode_t
CROSS_CORRELATION = 1
# cudnnBackendHeurMode_t
HEUR_INSTANT, HEUR_B, HEUR_FALLBACK, HEUR_A = 0, 1, 2, 3
# cudnnPointwiseMode_t
PW_ADD, PW_RELU_FWD = 0, 100

CUBIN_KEY = b'"cubin"'

# ----------------------------------------------------------------------------
# loading
# ----------------------------------------------------------------------------
_KEEP = []  # keep CDLL objects alive


def build_and_load_stub(src, one_soname, cflags):
    tmp = tempfile.mkdtemp(prefix="cudnn_nodevice_")
    sonames = ["libcuda.so.1"] if one_soname else ["libcuda.so.1", "libcuda.so"]
    for soname in sonames:
        out = os.path.join(tmp, soname)
        cmd = ["cc", "-shared", "-fPIC", "-O2", "-fvisibility=hidden",
               "-Wl,-soname," + soname, "-o", out, src] + cflags
        subprocess.run(cmd, check=True)
        lib = ctypes.CDLL(out, mode=ctypes.RTLD_GLOBAL)
        _KEEP.append(lib)
        marker = ctypes.c_int.in_dll(lib, "cudnn_backend_nodevice_stub").value
        print(f"  stub built+loaded: {out}  (soname {soname}, marker={marker})")
    return tmp


def load_nvrtc():
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib
        lib = load_nvidia_dynamic_lib("nvrtc")
        # pathfinder dlopens with RTLD_GLOBAL already on Linux; reopening by
        # absolute path with RTLD_GLOBAL is harmless and makes sure.
        h = ctypes.CDLL(lib.abs_path, mode=ctypes.RTLD_GLOBAL)
        _KEEP.append(h)
        print(f"  nvrtc: {lib.abs_path} (found_via={getattr(lib, 'found_via', '?')})")
        return lib.abs_path
    except Exception as e:  # noqa: BLE001
        print(f"  nvrtc: NOT loaded ({type(e).__name__}: {e})")
        return None


def load_cudnn():
    from cuda.pathfinder import load_nvidia_dynamic_lib
    lib = load_nvidia_dynamic_lib("cudnn")
    h = ctypes.CDLL(lib.abs_path, mode=ctypes.RTLD_GLOBAL)
    _KEEP.append(h)
    print(f"  cudnn: {lib.abs_path} (found_via={getattr(lib, 'found_via', '?')})")
    return h


def show_maps():
    """Which libcuda / libnvrtc objects ended up mapped in this process."""
    seen = set()
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1]
            if any(k in p for k in ("libcuda", "nvrtc", "libcudnn", "cublas")) \
                    and p not in seen:
                seen.add(p)
                print("    mapped:", p)


# ----------------------------------------------------------------------------
# thin ctypes wrapper over the backend API
# ----------------------------------------------------------------------------
class CudnnError(Exception):
    def __init__(self, where, status, msg):
        super().__init__(f"{where}: status {status} ({msg})")
        self.status = status
        self.msg = msg


class Be:
    def __init__(self, lib):
        self.lib = lib
        vp, i64 = ctypes.c_void_p, ctypes.c_int64
        lib.cudnnGetVersion.restype = ctypes.c_size_t
        lib.cudnnGetErrorString.restype = ctypes.c_char_p
        lib.cudnnGetErrorString.argtypes = [ctypes.c_int]
        lib.cudnnGetLastErrorString.restype = None
        lib.cudnnGetLastErrorString.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        lib.cudnnBackendCreateDescriptor.argtypes = [ctypes.c_int, ctypes.POINTER(vp)]
        lib.cudnnBackendDestroyDescriptor.argtypes = [vp]
        lib.cudnnBackendFinalize.argtypes = [vp]
        lib.cudnnBackendSetAttribute.argtypes = [vp, ctypes.c_int, ctypes.c_int, i64, vp]
        lib.cudnnBackendGetAttribute.argtypes = [vp, ctypes.c_int, ctypes.c_int, i64,
                                                 ctypes.POINTER(i64), vp]
        for fn in ("cudnnBackendCreateDescriptor", "cudnnBackendDestroyDescriptor",
                   "cudnnBackendFinalize", "cudnnBackendSetAttribute",
                   "cudnnBackendGetAttribute"):
            getattr(lib, fn).restype = ctypes.c_int
        self.attr_log = {}
        self.last_size_query = None
        self.heur_size_query = None  # (desc type, attr) -> (CUDNN_TYPE, C type, count)

    def last_error(self):
        buf = ctypes.create_string_buffer(4096)
        self.lib.cudnnGetLastErrorString(buf, len(buf))
        return buf.value.decode(errors="replace")

    def status_name(self, st):
        return self.lib.cudnnGetErrorString(st).decode()

    def check(self, st, where):
        if st != 0:
            raise CudnnError(where, f"{st} {self.status_name(st)}", self.last_error())

    def create(self, dtype):
        d = ctypes.c_void_p()
        self.check(self.lib.cudnnBackendCreateDescriptor(dtype, ctypes.byref(d)),
                   f"create({dtype})")
        d.dtype = dtype
        return d

    def destroy(self, d):
        self.lib.cudnnBackendDestroyDescriptor(d)

    def finalize(self, d, where="finalize"):
        self.check(self.lib.cudnnBackendFinalize(d), where)

    def set(self, d, attr, atype, values, ctype, note=None):
        """values: list of python values (or descriptors for T_BACKEND_DESCRIPTOR)."""
        if atype == T_BACKEND_DESCRIPTOR:
            arr = (ctypes.c_void_p * len(values))(*[v.value for v in values])
        elif atype == T_CHAR:
            arr = ctypes.create_string_buffer(values, len(values))
        else:
            arr = (ctype * len(values))(*values)
        self.attr_log[(getattr(d, "dtype", "?"), attr)] = (
            TYPE_NAMES.get(atype, atype), note or ctype.__name__, len(values))
        self.check(self.lib.cudnnBackendSetAttribute(d, A[attr], atype, len(values), arr),
                   f"set {attr}")

    def get_i64(self, d, attr):
        v = ctypes.c_int64()
        n = ctypes.c_int64()
        self.check(self.lib.cudnnBackendGetAttribute(d, A[attr], T_INT64, 1,
                                                     ctypes.byref(n), ctypes.byref(v)),
                   f"get {attr}")
        return v.value

    def get_chars(self, d, attr):
        n = ctypes.c_int64()
        self.check(self.lib.cudnnBackendGetAttribute(d, A[attr], T_CHAR, 0,
                                                     ctypes.byref(n), None),
                   f"get {attr} (size)")
        buf = ctypes.create_string_buffer(n.value + 1)
        self.check(self.lib.cudnnBackendGetAttribute(d, A[attr], T_CHAR, n.value,
                                                     ctypes.byref(n), buf),
                   f"get {attr}")
        return buf.raw[:n.value]

    def get_descs(self, d, attr, dtype):
        n = ctypes.c_int64()
        self.check(self.lib.cudnnBackendGetAttribute(d, A[attr], T_BACKEND_DESCRIPTOR, 0,
                                                     ctypes.byref(n), None),
                   f"get {attr} (count)")
        count = n.value
        # NB: for ENGINEHEUR_RESULTS the size query (requested=0, NULL) returns
        # the number of *candidates*; the second call's elementCount is the
        # number actually filled, which can be smaller (even 0).
        self.last_size_query = count
        if count == 0:
            return []
        descs = [self.create(dtype) for _ in range(count)]
        arr = (ctypes.c_void_p * count)(*[x.value for x in descs])
        self.check(self.lib.cudnnBackendGetAttribute(d, A[attr], T_BACKEND_DESCRIPTOR,
                                                     count, ctypes.byref(n), arr),
                   f"get {attr}")
        return descs[:n.value]

    # ---- builders -----------------------------------------------------------
    def tensor(self, uid, dims, strides, dtype, virtual=False, align=16, finalize=True):
        t = self.create(TENSOR_DESCRIPTOR)
        self.set(t, "TENSOR_DATA_TYPE", T_DATA_TYPE, [dtype], ctypes.c_int32,
                 "int32 (cudnnDataType_t enum)")
        self.set(t, "TENSOR_DIMENSIONS", T_INT64, dims, ctypes.c_int64, "int64_t[]")
        self.set(t, "TENSOR_STRIDES", T_INT64, strides, ctypes.c_int64, "int64_t[]")
        self.set(t, "TENSOR_UNIQUE_ID", T_INT64, [uid], ctypes.c_int64, "int64_t")
        self.set(t, "TENSOR_BYTE_ALIGNMENT", T_INT64, [align], ctypes.c_int64, "int64_t")
        self.set(t, "TENSOR_IS_VIRTUAL", T_BOOLEAN, [virtual], ctypes.c_bool,
                 "bool (1 byte, C _Bool)")
        if finalize:
            self.finalize(t, f"finalize tensor uid={uid}")
        return t

    def deviceprop(self, path):
        with open(path, "rb") as f:
            js = f.read()
        dp = self.create(DEVICEPROP_DESCRIPTOR)
        self.set(dp, "DEVICEPROP_JSON_REPRESENTATION", T_CHAR, js, ctypes.c_char,
                 "char[] (JSON bytes, no NUL needed)")
        self.finalize(dp, "finalize deviceprop")
        return dp

    def opgraph(self, ops):
        g = self.create(OPERATIONGRAPH_DESCRIPTOR)
        self.set(g, "OPERATIONGRAPH_OPS", T_BACKEND_DESCRIPTOR, ops, ctypes.c_void_p,
                 "cudnnBackendDescriptor_t[]")
        self.finalize(g, "finalize operation graph")
        return g

    def heuristics(self, graph, mode, dprop):
        h = self.create(ENGINEHEUR_DESCRIPTOR)
        self.set(h, "ENGINEHEUR_OPERATION_GRAPH", T_BACKEND_DESCRIPTOR, [graph],
                 ctypes.c_void_p, "cudnnBackendDescriptor_t")
        self.set(h, "ENGINEHEUR_MODE", T_HEUR_MODE, [mode], ctypes.c_int32,
                 "int32 (cudnnBackendHeurMode_t enum)")
        if dprop is not None:
            self.set(h, "ENGINEHEUR_DEVICEPROP", T_BACKEND_DESCRIPTOR, [dprop],
                     ctypes.c_void_p, "cudnnBackendDescriptor_t")
        self.finalize(h, f"finalize heuristics mode {mode}")
        cfgs = self.get_descs(h, "ENGINEHEUR_RESULTS", ENGINECFG_DESCRIPTOR)
        self.heur_size_query = self.last_size_query
        return cfgs

    def plan(self, cfg, dprop):
        p = self.create(EXECUTION_PLAN_DESCRIPTOR)
        self.set(p, "EXECUTION_PLAN_ENGINE_CONFIG", T_BACKEND_DESCRIPTOR, [cfg],
                 ctypes.c_void_p, "cudnnBackendDescriptor_t")
        if dprop is not None:
            self.set(p, "EXECUTION_PLAN_DEVICEPROP", T_BACKEND_DESCRIPTOR, [dprop],
                     ctypes.c_void_p, "cudnnBackendDescriptor_t")
        self.finalize(p, "finalize execution plan")
        return p

    def engine_index(self, cfg):
        eng = self.get_descs(cfg, "ENGINECFG_ENGINE", ENGINE_DESCRIPTOR)
        return self.get_i64(eng[0], "ENGINE_GLOBAL_INDEX") if eng else None


def nhwc_strides(n, c, h, w):
    return [c * h * w, 1, w * c, c]


# ----------------------------------------------------------------------------
# graphs
# ----------------------------------------------------------------------------
def build_conv(be, finalize_x=True):
    X = be.tensor(1, [8, 64, 56, 56], nhwc_strides(8, 64, 56, 56), DATA_HALF,
                  finalize=finalize_x)
    W = be.tensor(2, [32, 64, 3, 3], nhwc_strides(32, 64, 3, 3), DATA_HALF)
    Y = be.tensor(3, [8, 32, 56, 56], nhwc_strides(8, 32, 56, 56), DATA_HALF)
    cv = be.create(CONVOLUTION_DESCRIPTOR)
    be.set(cv, "CONVOLUTION_SPATIAL_DIMS", T_INT64, [2], ctypes.c_int64, "int64_t")
    be.set(cv, "CONVOLUTION_COMP_TYPE", T_DATA_TYPE, [DATA_FLOAT], ctypes.c_int32,
           "int32 (cudnnDataType_t enum)")
    be.set(cv, "CONVOLUTION_CONV_MODE", T_CONVOLUTION_MODE, [CROSS_CORRELATION],
           ctypes.c_int32, "int32 (cudnnConvolutionMode_t enum)")
    be.set(cv, "CONVOLUTION_PRE_PADDINGS", T_INT64, [1, 1], ctypes.c_int64, "int64_t[]")
    be.set(cv, "CONVOLUTION_POST_PADDINGS", T_INT64, [1, 1], ctypes.c_int64, "int64_t[]")
    be.set(cv, "CONVOLUTION_FILTER_STRIDES", T_INT64, [1, 1], ctypes.c_int64, "int64_t[]")
    be.set(cv, "CONVOLUTION_DILATIONS", T_INT64, [1, 1], ctypes.c_int64, "int64_t[]")
    be.finalize(cv, "finalize convolution")
    op = be.create(OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)
    be.set(op, "OPERATION_CONVOLUTION_FORWARD_X", T_BACKEND_DESCRIPTOR, [X], ctypes.c_void_p,
           "cudnnBackendDescriptor_t")
    be.set(op, "OPERATION_CONVOLUTION_FORWARD_W", T_BACKEND_DESCRIPTOR, [W], ctypes.c_void_p,
           "cudnnBackendDescriptor_t")
    be.set(op, "OPERATION_CONVOLUTION_FORWARD_Y", T_BACKEND_DESCRIPTOR, [Y], ctypes.c_void_p,
           "cudnnBackendDescriptor_t")
    be.set(op, "OPERATION_CONVOLUTION_FORWARD_CONV_DESC", T_BACKEND_DESCRIPTOR, [cv],
           ctypes.c_void_p, "cudnnBackendDescriptor_t")
    # alpha/beta: CUDNN_TYPE_FLOAT (C float) for non-double compute types.
    be.set(op, "OPERATION_CONVOLUTION_FORWARD_ALPHA", T_FLOAT, [1.0], ctypes.c_float, "float")
    be.set(op, "OPERATION_CONVOLUTION_FORWARD_BETA", T_FLOAT, [0.0], ctypes.c_float, "float")
    be.finalize(op, "finalize conv-forward op")
    return op, [X, W, Y, cv]


def pointwise_desc(be, mode):
    pw = be.create(POINTWISE_DESCRIPTOR)
    be.set(pw, "POINTWISE_MODE", T_POINTWISE_MODE, [mode], ctypes.c_int32,
           "int32 (cudnnPointwiseMode_t enum)")
    be.set(pw, "POINTWISE_MATH_PREC", T_DATA_TYPE, [DATA_FLOAT], ctypes.c_int32,
           "int32 (cudnnDataType_t enum)")
    be.finalize(pw, f"finalize pointwise mode {mode}")
    return pw


def pointwise_op(be, pw, x, y, b=None):
    op = be.create(OPERATION_POINTWISE_DESCRIPTOR)
    be.set(op, "OPERATION_POINTWISE_PW_DESCRIPTOR", T_BACKEND_DESCRIPTOR, [pw],
           ctypes.c_void_p, "cudnnBackendDescriptor_t")
    be.set(op, "OPERATION_POINTWISE_XDESC", T_BACKEND_DESCRIPTOR, [x], ctypes.c_void_p,
           "cudnnBackendDescriptor_t")
    if b is not None:
        be.set(op, "OPERATION_POINTWISE_BDESC", T_BACKEND_DESCRIPTOR, [b], ctypes.c_void_p,
               "cudnnBackendDescriptor_t")
    be.set(op, "OPERATION_POINTWISE_YDESC", T_BACKEND_DESCRIPTOR, [y], ctypes.c_void_p,
           "cudnnBackendDescriptor_t")
    be.finalize(op, "finalize pointwise op")
    return op


def build_matmul_bias_relu(be, bias_batch=1):
    Bt, M, K, N = 4, 64, 32, 128
    a = be.tensor(11, [Bt, M, K], [M * K, K, 1], DATA_HALF)
    b = be.tensor(12, [Bt, K, N], [K * N, N, 1], DATA_HALF)
    c = be.tensor(13, [Bt, M, N], [M * N, N, 1], DATA_FLOAT, virtual=True)
    bias = be.tensor(14, [bias_batch, 1, N], [N, N, 1], DATA_HALF)
    d = be.tensor(15, [Bt, M, N], [M * N, N, 1], DATA_FLOAT, virtual=True)
    out = be.tensor(16, [Bt, M, N], [M * N, N, 1], DATA_HALF)
    mm = be.create(MATMUL_DESCRIPTOR)
    be.set(mm, "MATMUL_COMP_TYPE", T_DATA_TYPE, [DATA_FLOAT], ctypes.c_int32,
           "int32 (cudnnDataType_t enum)")
    be.finalize(mm, "finalize matmul desc")
    mop = be.create(OPERATION_MATMUL_DESCRIPTOR)
    be.set(mop, "OPERATION_MATMUL_ADESC", T_BACKEND_DESCRIPTOR, [a], ctypes.c_void_p,
           "cudnnBackendDescriptor_t")
    be.set(mop, "OPERATION_MATMUL_BDESC", T_BACKEND_DESCRIPTOR, [b], ctypes.c_void_p,
           "cudnnBackendDescriptor_t")
    be.set(mop, "OPERATION_MATMUL_CDESC", T_BACKEND_DESCRIPTOR, [c], ctypes.c_void_p,
           "cudnnBackendDescriptor_t")
    be.set(mop, "OPERATION_MATMUL_DESC", T_BACKEND_DESCRIPTOR, [mm], ctypes.c_void_p,
           "cudnnBackendDescriptor_t")
    be.finalize(mop, "finalize matmul op")
    add = pointwise_op(be, pointwise_desc(be, PW_ADD), c, d, bias)
    relu = pointwise_op(be, pointwise_desc(be, PW_RELU_FWD), d, out)
    return [mop, add, relu]


# ----------------------------------------------------------------------------
def heur_counts(be, graph, dprop, label):
    res = {}
    for name, mode in (("A", HEUR_A), ("B", HEUR_B), ("FALLBACK", HEUR_FALLBACK)):
        try:
            cfgs = be.heuristics(graph, mode, dprop)
            res[name] = cfgs
            idx = [be.engine_index(c) for c in cfgs[:8]]
            print(f"  [{label}] heuristics {name:8s}: {len(cfgs):3d} configs filled "
                  f"(size query said {be.heur_size_query}); "
                  f"first engine global indices {idx}")
        except CudnnError as e:
            res[name] = []
            print(f"  [{label}] heuristics {name:8s}: ERROR {e}")
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--one-soname", action="store_true",
                    help="build only the libcuda.so.1-soname stub")
    ap.add_argument("--no-stub", action="store_true")
    ap.add_argument("--no-nvrtc", action="store_true")
    ap.add_argument("--stub-src", default=DEFAULT_STUB)
    ap.add_argument("--cflags", default="", help="extra cc flags (e.g. -DFOO)")
    ap.add_argument("--deviceprop", default=DEFAULT_DEVICEPROP)
    ap.add_argument("--skip-plans", action="store_true")
    ap.add_argument("--trace", action="store_true",
                    help="build the stub with -DCUDNN_BACKEND_STUB_TRACE (logs calls)")
    args = ap.parse_args()

    print("== 0. loading")
    if not args.no_stub:
        cflags = args.cflags.split() + (["-DCUDNN_BACKEND_STUB_TRACE"] if args.trace else [])
        build_and_load_stub(args.stub_src, args.one_soname, cflags)
    if not args.no_nvrtc:
        load_nvrtc()
    lib = load_cudnn()
    be = Be(lib)
    print(f"  cudnnGetVersion() = {lib.cudnnGetVersion()}")

    print("\n== a. conv forward graph (fp16 NHWC, 8x64x56x56 * 32x64x3x3, pad 1)")
    op, keep = build_conv(be)
    graph = be.opgraph([op])
    print(f"  operation graph finalized; ENGINE_GLOBAL_COUNT = "
          f"{be.get_i64(graph, 'OPERATIONGRAPH_ENGINE_GLOBAL_COUNT')}")

    print("\n== b. heuristics with H200 deviceprop")
    dprop = be.deviceprop(args.deviceprop)
    print(f"  deviceprop descriptor finalized from {args.deviceprop}")
    res = heur_counts(be, graph, dprop, "conv")
    print(f"  COUNTS conv: A={len(res['A'])} B={len(res['B'])} "
          f"FALLBACK={len(res['FALLBACK'])}   (offline: 40/74/4; B size query says 83)")

    if not args.skip_plans:
        print("\n== c. execution plans for all mode-A configs (DEVICEPROP, no handle)")
        ok, fails = 0, []
        for i, cfg in enumerate(res["A"]):
            try:
                p = be.plan(cfg, dprop)
                ws = be.get_i64(p, "EXECUTION_PLAN_WORKSPACE_SIZE")
                js = be.get_chars(p, "EXECUTION_PLAN_JSON_REPRESENTATION")
                ok += 1
                if i < 3:
                    print(f"  plan {i}: engine {be.engine_index(cfg)} ws={ws} "
                          f"json={len(js)} bytes: {js[:100]!r}...")
                be.destroy(p)
            except CudnnError as e:
                fails.append((i, str(e)))
        print(f"  COUNTS conv plans: {ok}/{len(res['A'])} finalized+serialized "
              f"(expected 40/40)")
        for i, e in fails[:5]:
            print(f"    plan {i} failed: {e}")

    print("\n== d. batched fp16 matmul + bias + ReLU (runtime-compiled engines)")
    for bias_batch in (1, 4):
        try:
            ops = build_matmul_bias_relu(be, bias_batch)
            mg = be.opgraph(ops)
            print(f"  bias [{bias_batch},1,128]: graph finalized; ENGINE_GLOBAL_COUNT = "
                  f"{be.get_i64(mg, 'OPERATIONGRAPH_ENGINE_GLOBAL_COUNT')}")
            r = heur_counts(be, mg, dprop, f"mm bias{bias_batch}")
            print(f"  COUNTS matmul(bias [{bias_batch},1,128]): A={len(r['A'])} "
                  f"B={len(r['B'])} FALLBACK={len(r['FALLBACK'])}   (expected 2/2/1)")
            if bias_batch != 1:
                continue
            for i, cfg in enumerate(r["A"]):
                t0 = time.time()
                try:
                    p = be.plan(cfg, dprop)
                    dt = time.time() - t0
                    ws = be.get_i64(p, "EXECUTION_PLAN_WORKSPACE_SIZE")
                    js = be.get_chars(p, "EXECUTION_PLAN_JSON_REPRESENTATION")
                    print(f"  plan for mode-A config {i} (engine {be.engine_index(cfg)}): "
                          f"FINALIZED in {dt:.2f}s, ws={ws}, JSON {len(js)} bytes, "
                          f"contains cubin: {CUBIN_KEY in js}")
                except CudnnError as e:
                    print(f"  plan for mode-A config {i} (engine {be.engine_index(cfg)}): "
                          f"FAILED:\n    {e}")
        except CudnnError as e:
            print(f"  bias [{bias_batch},1,128]: ERROR {e}")

    print("\n== e. error cases")
    try:
        build_conv(be, finalize_x=False)
        print("  conv op with non-finalized X: finalized (!)")
    except CudnnError as e:
        print(f"  conv op with non-finalized X: {e}")
    for name, mode in (("A", HEUR_A), ("B", HEUR_B), ("FALLBACK", HEUR_FALLBACK),
                       ("INSTANT", HEUR_INSTANT)):
        try:
            cfgs = be.heuristics(graph, mode, None)
            err = be.last_error()  # NB: reading it clears it
            print(f"  heuristics {name} WITHOUT deviceprop: finalize OK, {len(cfgs)} configs "
                  f"filled (size query said {be.heur_size_query}); "
                  f"last error ({len(err)} chars) starts {err[:300]!r}")
        except CudnnError as e:
            print(f"  heuristics {name} WITHOUT deviceprop: {e}")
    if res["A"]:
        try:
            p = be.plan(res["A"][0], None)
            js = be.get_chars(p, "EXECUTION_PLAN_JSON_REPRESENTATION")
            print("  plan from a deviceprop-heuristics config, WITHOUT plan deviceprop and "
                  f"handle: finalized; JSON carries the H200 profile: {b'NVIDIA H200' in js}")
        except CudnnError as e:
            print(f"  plan WITHOUT deviceprop/handle: {e}")

    print("\n== loaded driver-ish objects")
    show_maps()

    print("\n== attribute types used (descriptor type id, attribute) -> "
          "(CUDNN_TYPE_*, C element type, count of last set)")
    for (dt, attr), (t, c, n) in sorted(be.attr_log.items(), key=lambda kv: A[kv[0][1]]):
        print(f"  desc {dt:>2} {attr:42s} {t:30s} {c}  (n={n})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
