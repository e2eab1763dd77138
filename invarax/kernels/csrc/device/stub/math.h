/* math.h for NVRTC, which has no system headers: the two constants the shared headers use.
 * The math functions themselves are NVRTC's built-in device functions. */
#pragma once
#define INFINITY __longlong_as_double(0x7ff0000000000000LL)
#define NAN __longlong_as_double(0x7ff8000000000000LL)
