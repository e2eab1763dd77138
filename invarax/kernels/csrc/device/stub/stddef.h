/* stddef.h for NVRTC: the types the shared headers use (LP64). */
#pragma once
typedef long long ptrdiff_t;
typedef unsigned long long size_t;
#ifndef NULL
#define NULL 0
#endif
