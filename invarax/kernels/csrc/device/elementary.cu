/* elementary.cu - invarax's elementary functions on the GPU, element by element, by the
 * functions the CPU's loops give every element:
 * - elementary_*: exp to cosh (elementary_ids.h), elementary_scalar.h's elem_f32_value
 *   (float32: elementary_f32.h's fast path, elem_f32_fix where it flags an element, so the
 *   correctly rounded result) and elem_f64_scalar (float64);
 * - elementary_more_*: log2 to digamma, elementary_scalar_more.h's elem_more_f32_value and
 *   elem_more_f64;
 * - elementary2_*: atan2 and pow of two operands of one shape (ELEM2_*), its elem2_f32_value
 *   and elem2_f64. */
#include "elementary_scalar_more.h"

#define ELEMENTARY_KERNEL(NAME, T, VALUE)                                                   \
    extern "C" __global__ void NAME(int fn, const T *x, T *y, long long n) {                 \
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;                     \
        if (i < n) y[i] = VALUE(fn, x[i]);                                                  \
    }

ELEMENTARY_KERNEL(elementary_f32, float, elem_f32_value)
ELEMENTARY_KERNEL(elementary_f64, double, elem_f64_scalar)
ELEMENTARY_KERNEL(elementary_more_f32, float, elem_more_f32_value)
ELEMENTARY_KERNEL(elementary_more_f64, double, elem_more_f64)

#define ELEMENTARY2_KERNEL(NAME, T, VALUE)                                                  \
    extern "C" __global__ void NAME(int fn, const T *a, const T *b, T *y, long long n) {    \
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;                     \
        if (i < n) y[i] = VALUE(fn, a[i], b[i]);                                            \
    }

ELEMENTARY2_KERNEL(elementary2_f32, float, elem2_f32_value)
ELEMENTARY2_KERNEL(elementary2_f64, double, elem2_f64)
