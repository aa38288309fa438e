/* Appended to a copy of cudnn_backend/_nodevice/libcuda_stub.c, built as libcuda.so.1 and LD_PRELOADed (see README):
 * the entry points cuDNN's static CUDA runtime looks up, traced and refused. Not part of the package. */
/* experiment: what cuDNN's static CUDA runtime asks for */
STUB_EXPORT CUresult cuInit(unsigned int flags) { if (trace_calls) fprintf(stderr, "[libcuda stub] cuInit(%u)\n", flags); return CUDA_ERROR_NO_DEVICE; }
STUB_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, unsigned long long flags, int *status)
{
    if (trace_calls) fprintf(stderr, "[libcuda stub] cuGetProcAddress_v2(%s, %d, %llu)\n", symbol, cudaVersion, flags);
    if (pfn) *pfn = NULL; if (status) *status = 1; return 500;
}
STUB_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, unsigned long long flags)
{
    if (trace_calls) fprintf(stderr, "[libcuda stub] cuGetProcAddress(%s, %d, %llu)\n", symbol, cudaVersion, flags);
    if (pfn) *pfn = NULL; return 500;
}
STUB_EXPORT CUresult cuGetExportTable(const void **table, const void *uuid)
{
    TRACE(); if (table) *table = NULL; return 500;
}
