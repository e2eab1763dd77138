/* elementary.cu - invarax's elementary functions (exp to cosh, elementary_ids.h) on the GPU,
 * element by element, by the functions the CPU's loops give every element:
 * elem_f32_value (float32: elementary_f32.h's fast path, elem_f32_fix where it flags an
 * element, so the correctly rounded result) and elem_f64_scalar (float64). */
#include "elementary_scalar.h"

extern "C" __global__ void elementary_f32(int fn, const float *x, float *y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = elem_f32_value(fn, x[i]);
}

extern "C" __global__ void elementary_f64(int fn, const double *x, double *y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = elem_f64_scalar(fn, x[i]);
}
