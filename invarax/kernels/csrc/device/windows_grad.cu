/* windows_grad.cu - the gradient of max (min) windows on the GPU (select_and_gather_add,
 * select_and_scatter_add), compiled by NVRTC (invarax/kernels/nvrtc.py) with --fmad=false
 * -ftz=false -prec-div=true -prec-sqrt=true. One thread an output (argselect, gather) or an
 * operand element (scatter: it visits the windows that hold it in output order, so no
 * atomics), each computed by windows.h: the CPU's bits. d is order.h's window description
 * of the operand; n the number of threads' results. */
#include "windows.h"

#define WGRAD_KERNELS(T, SFX)                                                               \
    extern "C" __global__ void wgrad_argselect_##SFX(const T *x, int *idx, const long long *d, \
                                                     int is_max, long long n) {             \
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;                     \
        if (i < n) idx[i] = ord_win_argselect_##SFX(x, (const int64_t *)d, i, is_max);      \
    }                                                                                       \
    extern "C" __global__ void wgrad_gather_##SFX(const T *t, const int *idx, T *out,       \
                                                  const long long *d, long long n) {        \
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;                     \
        if (i < n) out[i] = ord_win_gather_##SFX(t, (const int64_t *)d, idx, i);            \
    }                                                                                       \
    extern "C" __global__ void wgrad_scatter_##SFX(const T *src, const int *idx, T *out,    \
                                                   const long long *d, long long n) {       \
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;                     \
        if (i < n) out[i] = ord_win_scatter_##SFX(src, idx, (const int64_t *)d, i);         \
    }

WGRAD_KERNELS(float, f32)
WGRAD_KERNELS(double, f64)
