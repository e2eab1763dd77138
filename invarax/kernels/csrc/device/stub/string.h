/* string.h for NVRTC: nothing to declare (memcpy is one of NVRTC's built-in functions). */
#pragma once
