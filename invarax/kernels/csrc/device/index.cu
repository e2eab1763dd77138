/* index.cu - the index arithmetic of gathers, scatters and dynamic slices on the GPU, so
 * that index values never travel to the host; compiled by NVRTC (invarax/kernels/nvrtc.py).
 * One thread an index vector or a moved unit (index.h's functions); every kernel takes its
 * thread count first.
 *
 * index_rows_SFX(n, idx, dims, k, rows, drop): the rows of n index vectors of k SFX indices.
 * index_take_SFX(n, src, rows, fill, dst, w, e): n units of gathered rows of w units.
 * index_window_SFX(n, big, small, desc, starts, e, update): n units of a dynamic slice's
 *   window (update: written into big instead of read from it). */
#include "index.h"

#define ROWS_KERNEL(T, SFX)                                                                 \
    extern "C" __global__ void index_rows_##SFX(long long n, const T *idx,                  \
                                                const long long *dims, long long k,         \
                                                long long *rows, int drop) {                \
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;                     \
        if (i < n) idx_rows_##SFX(i, idx, (const int64_t *)dims, k, (int64_t *)rows, drop); \
    }

ROWS_KERNEL(int8_t, i8)
ROWS_KERNEL(uint8_t, u8)
ROWS_KERNEL(int16_t, i16)
ROWS_KERNEL(uint16_t, u16)
ROWS_KERNEL(int32_t, i32)
ROWS_KERNEL(uint32_t, u32)
ROWS_KERNEL(int64_t, i64)
ROWS_KERNEL(uint64_t, u64)

#define MOVE_KERNELS(U, SFX)                                                                \
    extern "C" __global__ void index_take_##SFX(long long n, const U *src,                  \
                                                const long long *rows, const U *fill,       \
                                                U *dst, long long w, long long e) {         \
        long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;                     \
        if (t < n) idx_take_##SFX(t, src, (const int64_t *)rows, fill, dst, w, e);          \
    }                                                                                       \
    extern "C" __global__ void index_window_##SFX(long long n, U *big, U *small,            \
                                                  const long long *desc,                    \
                                                  const long long *starts, long long e,     \
                                                  int update) {                             \
        long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;                     \
        if (t < n)                                                                          \
            idx_window_##SFX(t, big, small, (const int64_t *)desc, (const int64_t *)starts, \
                             e, update);                                                    \
    }

MOVE_KERNELS(uint8_t, u8)
MOVE_KERNELS(uint16_t, u16)
MOVE_KERNELS(uint32_t, u32)
MOVE_KERNELS(uint64_t, u64)
