/*
 * libcuda_stub.c -- cudnn-backend's "no device" stand-in for the CUDA driver.
 *
 * Why: cuDNN 9's graph library reaches the driver through a small shim that
 * dlopen()s "libcuda.so.1" (falling back to "libcuda.so") and dlsym()s the
 * entry points below, and it uses NVRTC (libnvrtc.so.13/.12) next to it.  If
 * the shim cannot resolve *all* of them, every runtime-compiled engine
 * (matmul / pointwise fusions, ...) is silently dropped from heuristics.  On a
 * machine without a GPU or driver, loading this object under the soname
 * libcuda.so.1 makes cuDNN 9.19 (measured, see tools/nodevice_probe.py):
 *   - return heuristics for runtime-compiled engines (given a
 *     CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR), and
 *   - finalize execution plans for them: NVRTC compiles the kernel and the
 *     cubin ends up in CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION.
 * Precompiled conv engines work offline even without this stand-in.
 *
 * Measured requirements (cuDNN 9.19.0):
 *   - 22 of the 29 functions must all exist (any one missing => no
 *     runtime-compiled engines); the 7 others -- cuModuleLoadData,
 *     cuModuleUnload, cuModuleGetFunction, cuLaunchKernelEx,
 *     cuOccupancyMaxPotentialClusterSize, cuTensorMapEncodeTiled,
 *     cuTensorMapEncodeIm2col -- were not needed in our tests; kept, harmless;
 *   - only cuDriverGetVersion and cuDeviceGetCount are actually *called*
 *     while building graphs, heuristics and plans (cuDNN 9.28 adds
 *     cuCtxGetCurrent, see there);
 *   - cuDeviceGetCount must NOT report a device: if it says >= 1 device,
 *     plan finalization tries cuLibraryLoadData on the compiled kernel and
 *     fails with CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER;
 *   - cuDriverGetVersion's answer does not matter (error, 12080 and 13000
 *     all behave the same; cuDNN's static CUDA runtime gives up either way
 *     because cuGetProcAddress finds nothing -- that is why heuristics mode B
 *     drops the configs whose check calls cudaGetDevice);
 *   - the CUDA runtime's own start (cuInit, cuGetProcAddress[_v2],
 *     cuGetExportTable) is refused and counted, see the end of this file.
 * Everything answers CUDA_ERROR_NO_DEVICE except the two error-string calls, cuCtxGetCurrent (no context
 * current, as a driver answers) and the other context calls while a test emulates contexts (see
 * cudnn_backend_stub_emulate_contexts).
 *
 * The soname libcuda.so.1 alone suffices: glibc's dlopen("libcuda.so.1")
 * matches an already-loaded object by soname (RTLD_LOCAL or RTLD_GLOBAL),
 * and cuDNN only tries "libcuda.so" when "libcuda.so.1" fails.  Caveat: once
 * loaded, it *is* libcuda.so.1 for the whole process (PyTorch, CuPy, ...);
 * load it only when no real driver can be dlopen()ed.
 *
 * No CUDA headers: CUresult is an int, handles are void*.  Only the C calling
 * convention matters; trailing arguments we never read are declared for
 * documentation.
 *
 * Build (see setup.py):  cc -shared -fPIC -O2 -fvisibility=hidden \
 *                           -Wl,-soname,libcuda.so.1 -o libcuda.so.1 libcuda_stub.c
 * Debug aid:             CUDNN_BACKEND_STUB_TRACE=1 in the environment logs every call (or build with
 *                        -DCUDNN_BACKEND_STUB_TRACE).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* Tracing: every entry point cuDNN calls, one line on stderr, when CUDNN_BACKEND_STUB_TRACE is set to anything
 * but "" or "0" in the environment (read once, when the stand-in loads), or always when built with
 * -DCUDNN_BACKEND_STUB_TRACE.  What a release asks the driver for offline is how one learns whether the stand-in
 * could answer it (docs/guide/offline.rst). */
#ifdef CUDNN_BACKEND_STUB_TRACE
static int trace_calls = 1;
#else
static int trace_calls = 0;
#endif

__attribute__((constructor)) static void read_trace_setting(void)
{
    const char *v = getenv("CUDNN_BACKEND_STUB_TRACE");
    if (v != NULL && v[0] != '\0' && !(v[0] == '0' && v[1] == '\0'))
        trace_calls = 1;
}

#define TRACE() do { if (trace_calls) fprintf(stderr, "[libcuda stub] %s\n", __func__); } while (0)

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUlibrary, *CUkernel,
             *CUstream, *CUlinkState;

#define CUDA_SUCCESS          0
#define CUDA_ERROR_NO_DEVICE  100

#define STUB_EXPORT __attribute__((visibility("default")))

/* Marker: a loader can dlsym() this to tell the stand-in from a real driver. */
STUB_EXPORT int cudnn_backend_nodevice_stub = 1;

static const char NODEV_MSG[] =
    "no CUDA device (cudnn-backend's no-device stand-in)";
static const char NODEV_NAME[] = "CUDA_ERROR_NO_DEVICE";

/* ---- error reporting: must succeed so callers can format messages ------- */

STUB_EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    TRACE();
    (void)error;
    if (pStr) *pStr = NODEV_MSG;
    return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    TRACE();
    if (pStr) *pStr = (error == CUDA_ERROR_NO_DEVICE) ? NODEV_NAME : NODEV_MSG;
    return CUDA_SUCCESS;
}

/* ---- driver / device queries -------------------------------------------- */

/* Called by cuDNN's static CUDA runtime (heuristics mode B); any answer
 * works, an error is the honest one. */
STUB_EXPORT CUresult cuDriverGetVersion(int *driverVersion)
{
    TRACE();
    if (driverVersion) *driverVersion = 0;
    return CUDA_ERROR_NO_DEVICE;
}

/* Called once per execution-plan finalize of a runtime-compiled engine.
 * Must report no device (error here; "success, 0" works too): a count >= 1
 * makes cuDNN load the compiled kernel with cuLibraryLoadData, which fails. */
STUB_EXPORT CUresult cuDeviceGetCount(int *count)
{
    TRACE();
    if (count) *count = 0;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    TRACE();
    (void)ordinal;
    if (device) *device = -1;
    return CUDA_ERROR_NO_DEVICE;
}

/* ---- contexts and streams ----------------------------------------------- */

/* A per-thread current context, for the package's own tests of how a Handle's context is made current in a
 * thread that has none (cudnn_backend.core: Handle, execute).  Off by default: then no context is current
 * (cuCtxGetCurrent) and every other call below answers CUDA_ERROR_NO_DEVICE as the rest do. */
static int emulate_contexts = 0;
static __thread CUcontext emulated_current = NULL;
static long emulated_set_calls = 0;

STUB_EXPORT void cudnn_backend_stub_emulate_contexts(int on)
{
    emulate_contexts = on;
    emulated_set_calls = 0;
}

/* For the package's tests of a driver that cannot say which context is current: cuCtxGetCurrent fails. */
static int context_query_fails = 0;

STUB_EXPORT void cudnn_backend_stub_fail_context_query(int on)
{
    context_query_fails = on;
}

/* cuCtxSetCurrent calls since emulation was switched on (all threads). */
STUB_EXPORT long cudnn_backend_stub_set_current_calls(void)
{
    return __atomic_load_n(&emulated_set_calls, __ATOMIC_SEQ_CST);
}

/* Without emulation: what a driver answers in a thread with no current context (success, NULL).  cuDNN 9.28's
 * TensorIR GEMM engine asks while it finalizes and fails with INTERNAL_ERROR on an error here, where on a GPU it
 * finalizes (measured on an H200: 521 of the 605 catalogue graphs lost that engine offline). */
STUB_EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    TRACE();
    if (pctx) *pctx = emulate_contexts ? emulated_current : NULL;
    return context_query_fails ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    TRACE();
    if (emulate_contexts) {
        emulated_current = ctx;
        __atomic_add_fetch(&emulated_set_calls, 1, __ATOMIC_SEQ_CST);
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_NO_DEVICE;
}

/* Emulated: the device of context c is (address / 16) % 8. */
STUB_EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
    TRACE();
    if (emulate_contexts && emulated_current != NULL) {
        if (device) *device = (CUdevice)(((size_t)emulated_current / 16) % 8);
        return CUDA_SUCCESS;
    }
    if (device) *device = -1;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuCtxGetLimit(size_t *pvalue, int limit)
{
    TRACE();
    (void)limit;
    if (pvalue) *pvalue = 0;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuCtxPopCurrent(CUcontext *pctx)
{
    TRACE();
    if (pctx) *pctx = NULL;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuCtxPushCurrent(CUcontext ctx)
{
    TRACE();
    (void)ctx;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
    TRACE();
    (void)hStream;
    if (pctx) *pctx = NULL;
    return CUDA_ERROR_NO_DEVICE;
}

/* ---- modules, libraries, kernels (loading code needs a device) ---------- */

STUB_EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    TRACE();
    (void)image;
    if (module) *module = NULL;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuModuleUnload(CUmodule hmod)
{
    TRACE();
    (void)hmod;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod,
                                         const char *name)
{
    TRACE();
    (void)hmod; (void)name;
    if (hfunc) *hfunc = NULL;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuLibraryLoadData(CUlibrary *library, const void *code,
                                       void *jitOptions, void **jitOptionsValues,
                                       unsigned int numJitOptions,
                                       void *libraryOptions,
                                       void **libraryOptionValues,
                                       unsigned int numLibraryOptions)
{
    TRACE();
    (void)code; (void)jitOptions; (void)jitOptionsValues; (void)numJitOptions;
    (void)libraryOptions; (void)libraryOptionValues; (void)numLibraryOptions;
    if (library) *library = NULL;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
                                           void *jitOptions, void **jitOptionsValues,
                                           unsigned int numJitOptions,
                                           void *libraryOptions,
                                           void **libraryOptionValues,
                                           unsigned int numLibraryOptions)
{
    TRACE();
    (void)fileName; (void)jitOptions; (void)jitOptionsValues; (void)numJitOptions;
    (void)libraryOptions; (void)libraryOptionValues; (void)numLibraryOptions;
    if (library) *library = NULL;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuLibraryUnload(CUlibrary library)
{
    TRACE();
    (void)library;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library,
                                        const char *name)
{
    TRACE();
    (void)library; (void)name;
    if (pKernel) *pKernel = NULL;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuKernelGetAttribute(int *pi, int attrib, CUkernel kernel,
                                          CUdevice dev)
{
    TRACE();
    (void)attrib; (void)kernel; (void)dev;
    if (pi) *pi = 0;
    return CUDA_ERROR_NO_DEVICE;
}

/* cuDNN 9.28 looks this one up each time it loads a runtime-compiled kernel and, missing, prints "Could not
 * load symbol cuKernelGetFunction" to stderr (hundreds of lines per explore); with no device it is never called. */
STUB_EXPORT CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    TRACE();
    (void)kernel;
    if (pFunc) *pFunc = NULL;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuKernelSetAttribute(int attrib, int val, CUkernel kernel,
                                          CUdevice dev)
{
    TRACE();
    (void)attrib; (void)val; (void)kernel; (void)dev;
    return CUDA_ERROR_NO_DEVICE;
}

/* ---- JIT linking ---------------------------------------------------------- */

STUB_EXPORT CUresult cuLinkCreate(unsigned int numOptions, void *options,
                                  void **optionValues, CUlinkState *stateOut)
{
    TRACE();
    (void)numOptions; (void)options; (void)optionValues;
    if (stateOut) *stateOut = NULL;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuLinkAddData(CUlinkState state, int type, void *data,
                                   size_t size, const char *name,
                                   unsigned int numOptions, void *options,
                                   void **optionValues)
{
    TRACE();
    (void)state; (void)type; (void)data; (void)size; (void)name;
    (void)numOptions; (void)options; (void)optionValues;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuLinkComplete(CUlinkState state, void **cubinOut,
                                    size_t *sizeOut)
{
    TRACE();
    (void)state;
    if (cubinOut) *cubinOut = NULL;
    if (sizeOut) *sizeOut = 0;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuLinkDestroy(CUlinkState state)
{
    TRACE();
    (void)state;
    return CUDA_ERROR_NO_DEVICE;
}

/* ---- launches and occupancy ------------------------------------------------ */

STUB_EXPORT CUresult cuLaunchKernel(CUfunction f,
                                    unsigned int gridDimX, unsigned int gridDimY,
                                    unsigned int gridDimZ, unsigned int blockDimX,
                                    unsigned int blockDimY, unsigned int blockDimZ,
                                    unsigned int sharedMemBytes, CUstream hStream,
                                    void **kernelParams, void **extra)
{
    TRACE();
    (void)f; (void)gridDimX; (void)gridDimY; (void)gridDimZ; (void)blockDimX;
    (void)blockDimY; (void)blockDimZ; (void)sharedMemBytes; (void)hStream;
    (void)kernelParams; (void)extra;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f,
                                               unsigned int gridDimX,
                                               unsigned int gridDimY,
                                               unsigned int gridDimZ,
                                               unsigned int blockDimX,
                                               unsigned int blockDimY,
                                               unsigned int blockDimZ,
                                               unsigned int sharedMemBytes,
                                               CUstream hStream,
                                               void **kernelParams)
{
    TRACE();
    (void)f; (void)gridDimX; (void)gridDimY; (void)gridDimZ; (void)blockDimX;
    (void)blockDimY; (void)blockDimZ; (void)sharedMemBytes; (void)hStream;
    (void)kernelParams;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuLaunchKernelEx(const void *config, CUfunction f,
                                      void **kernelParams, void **extra)
{
    TRACE();
    (void)config; (void)f; (void)kernelParams; (void)extra;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuOccupancyMaxPotentialClusterSize(int *clusterSize,
                                                        CUfunction func,
                                                        const void *config)
{
    TRACE();
    (void)func; (void)config;
    if (clusterSize) *clusterSize = 0;
    return CUDA_ERROR_NO_DEVICE;
}

/* What cuDNN asks a live GPU for its thread-block cluster layout: a device attribute (the shared memory a block
 * may opt in to), function attributes, and the occupancy of clusters of 1 to 16 blocks (mb_tools::GpcVSL,
 * libcudnn_graph).  Offline no release measured calls them (CUDNN_BACKEND_STUB_TRACE shows none): a device profile
 * is taken as it is, so what they would answer cannot reach cuDNN from here.  They exist so that a trace would show
 * a release that starts asking. */
STUB_EXPORT CUresult cuDeviceGetAttribute(int *pi, int attrib, CUdevice dev)
{
    TRACE();
    (void)attrib; (void)dev;
    if (pi) *pi = 0;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuFuncGetAttribute(int *pi, int attrib, CUfunction hfunc)
{
    TRACE();
    (void)attrib; (void)hfunc;
    if (pi) *pi = 0;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuFuncSetAttribute(CUfunction hfunc, int attrib, int value)
{
    TRACE();
    (void)hfunc; (void)attrib; (void)value;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func, const void *config)
{
    TRACE();
    (void)func; (void)config;
    if (numClusters) *numClusters = 0;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, CUfunction func,
                                                             int numBlocks, int blockSize)
{
    TRACE();
    (void)func; (void)numBlocks; (void)blockSize;
    if (dynamicSmemSize) *dynamicSmemSize = 0;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
                                                                 size_t dynamicSMemSize)
{
    TRACE();
    (void)func; (void)blockSize; (void)dynamicSMemSize;
    if (numBlocks) *numBlocks = 0;
    return CUDA_ERROR_NO_DEVICE;
}

/* ---- TMA descriptors (Hopper+ engines encode them while building plans) --- */

STUB_EXPORT CUresult cuTensorMapEncodeTiled(void *tensorMap, int dataType,
                                            unsigned int rank, void *globalAddress,
                                            const void *globalDim,
                                            const void *globalStrides,
                                            const void *boxDim,
                                            const void *elementStrides,
                                            int interleave, int swizzle,
                                            int l2Promotion, int oobFill)
{
    TRACE();
    (void)tensorMap; (void)dataType; (void)rank; (void)globalAddress;
    (void)globalDim; (void)globalStrides; (void)boxDim; (void)elementStrides;
    (void)interleave; (void)swizzle; (void)l2Promotion; (void)oobFill;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuTensorMapEncodeIm2col(void *tensorMap, int dataType,
                                             unsigned int rank, void *globalAddress,
                                             const void *globalDim,
                                             const void *globalStrides,
                                             const int *pixelBoxLowerCorner,
                                             const int *pixelBoxUpperCorner,
                                             unsigned int channelsPerPixel,
                                             unsigned int pixelsPerColumn,
                                             const void *elementStrides,
                                             int interleave, int swizzle,
                                             int l2Promotion, int oobFill)
{
    TRACE();
    (void)tensorMap; (void)dataType; (void)rank; (void)globalAddress;
    (void)globalDim; (void)globalStrides; (void)pixelBoxLowerCorner;
    (void)pixelBoxUpperCorner; (void)channelsPerPixel; (void)pixelsPerColumn;
    (void)elementStrides; (void)interleave; (void)swizzle; (void)l2Promotion;
    (void)oobFill;
    return CUDA_ERROR_NO_DEVICE;
}

/* ---- the CUDA runtime's start ---------------------------------------------------------------------------- */

/* cuDNN links the CUDA runtime statically, and a few steps start it: some engines while they finalize (conv_fwd 3,
 * 4, 6, 58, ...), some heuristics queries (matmul).  The runtime starts by asking libcuda.so.1 for these four; it
 * would then need ~100 entry points and the driver's private export tables (cuGetExportTable), which no stand-in can
 * give, so offline it must not start.  Each answers as a driver without the entry point would (not found) or without
 * a device (cuInit), and the runtime gives up exactly as when they were absent: the same engines refuse, heuristics
 * list the same configs (measured on the default catalogue, cuDNN 9.10.2, 9.19.0 and 9.28.1).  What they add is a
 * record: each counts the request.  The runtime asks once per process (4 requests: cuGetProcAddress_v2 for "",
 * cuInit and cuGetProcAddress twice), remembers that it could not start, and never asks again: a step can be seen to
 * start it only in a process where it has not asked yet (tune.offline_gaps forks such processes).  Other users of
 * the driver in the process see the same "no driver": cuda-bindings' driver module raises FunctionNotFoundError (a
 * RuntimeError: "function cuInit is not found") where it raised RuntimeError("Failed to get cuGetProcAddress_v2"),
 * and its runtime module still answers cudaErrorInsufficientDriver. */
static long runtime_requests = 0;

/* How many requests cuDNN's CUDA runtime made to the entry points below since the stand-in loaded (all threads);
 * read before and after a step to learn whether the step tried to start the runtime. */
STUB_EXPORT long cudnn_backend_stub_runtime_requests(void)
{
    return __atomic_load_n(&runtime_requests, __ATOMIC_SEQ_CST);
}

#define CUDA_ERROR_NOT_FOUND 500
#define RUNTIME_REQUEST() do { __atomic_add_fetch(&runtime_requests, 1, __ATOMIC_SEQ_CST); TRACE(); } while (0)

STUB_EXPORT CUresult cuInit(unsigned int flags)
{
    RUNTIME_REQUEST();
    (void)flags;
    return CUDA_ERROR_NO_DEVICE;
}

STUB_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, unsigned long long flags,
                                         int *symbolStatus)
{
    RUNTIME_REQUEST();
    (void)symbol; (void)cudaVersion; (void)flags;
    if (pfn) *pfn = NULL;
    if (symbolStatus) *symbolStatus = 1;  /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
    return CUDA_ERROR_NOT_FOUND;
}

STUB_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, unsigned long long flags)
{
    RUNTIME_REQUEST();
    (void)symbol; (void)cudaVersion; (void)flags;
    if (pfn) *pfn = NULL;
    return CUDA_ERROR_NOT_FOUND;
}

STUB_EXPORT CUresult cuGetExportTable(const void **ppExportTable, const void *pExportTableId)
{
    RUNTIME_REQUEST();
    (void)pExportTableId;
    if (ppExportTable) *ppExportTable = NULL;
    return CUDA_ERROR_NOT_FOUND;
}
