/* stddef.h for NVRTC: size_t and ptrdiff_t are NVRTC's built-in types already. */
#pragma once
#ifndef NULL
#define NULL 0
#endif
