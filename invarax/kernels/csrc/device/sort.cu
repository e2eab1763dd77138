/* sort.cu - sorting and cumlogsumexp on the GPU, compiled by NVRTC (invarax/kernels/nvrtc.py)
 * with --fmad=false -ftz=false -prec-div=true -prec-sqrt=true.
 *
 * argsort_SFX: one block a row of an (m, k) key operand with strides (sm, sk), in elements;
 * its threads run sort.h's phases with a barrier between them, so the row's indices end up
 * stably sorted by sort.h's relation `mode`: the CPU's permutation. perm and scratch are
 * (m, k) int64, contiguous; perm is the input order unless init (then 0, 1, ...).
 * cumlogsumexp_SFX: one thread a row (logsumexp.h's scan), written contiguous. */
#include "logsumexp.h"
#include "sort.h"

#define SORT_KERNEL(T, SFX)                                                                 \
    extern "C" __global__ void argsort_##SFX(const T *key, long long *perm,                 \
                                             long long *scratch, long long m, long long k,  \
                                             long long sm, long long sk, int mode,          \
                                             int init) {                                    \
        const int phases = ord_sort_phases(k);                                              \
        for (long long row = blockIdx.x; row < m; row += gridDim.x)                         \
            for (int q = 0; q < phases; q++) {                                              \
                ord_sort_phase_##SFX(q, key + row * sm, sk, (int64_t *)perm + row * k,      \
                                     (int64_t *)scratch + row * k, k, mode, init,           \
                                     threadIdx.x, blockDim.x);                              \
                __syncthreads();                                                            \
            }                                                                               \
    }

SORT_KERNEL(float, f32)
SORT_KERNEL(double, f64)
SORT_KERNEL(int8_t, i8)
SORT_KERNEL(uint8_t, u8)
SORT_KERNEL(int16_t, i16)
SORT_KERNEL(uint16_t, u16)
SORT_KERNEL(int32_t, i32)
SORT_KERNEL(uint32_t, u32)
SORT_KERNEL(int64_t, i64)
SORT_KERNEL(uint64_t, u64)

#define LSE_KERNEL(T, SFX)                                                                  \
    extern "C" __global__ void cumlogsumexp_##SFX(const T *x, T *y, long long m, long long k, \
                                                  long long sm, long long sk, int reverse) { \
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;                     \
        if (i < m) ord_cumlogsumexp_##SFX(x + i * sm, sk, y + i * k, k, 0, reverse);        \
    }

LSE_KERNEL(float, f32)
LSE_KERNEL(double, f64)
