"""Build of invarax's compiled kernels (``invarax.kernels._native``); metadata is in pyproject.toml.

The kernels' results must not depend on the compiler's choices, so floating-point
contraction (fusing ``a * b + c`` into an FMA) is switched off: every FMA in the
kernels is written out, as part of the documented order (docs/numerics.md).
"""

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCES = ["module.c", "gemm.c", "reduce.c", "fma.c", "linalg.c", "window.c", "elementary.c",
           "fft.c", "elementary_more.c"]
HEADERS = ["native.h", "gemm_impl.h", "reduce_impl.h", "linalg_impl.h", "linalg_blocked.h",
           "linalg_svd.h", "elementary_math.h", "elementary_loops.h", "elementary_hard.h",
           "elementary_f32.h", "elementary_f32_avx512.h", "elementary_inverse.h", "elementary_special.h",
           "elementary_pow.h",
           "elementary_more_loops.h", "fft_impl.h", "fft_stages.h"]


class BuildExt(build_ext):
    """Add the flags that fix the kernels' arithmetic for the compiler in use."""

    def build_extensions(self):
        if self.compiler.compiler_type == "msvc":
            flags, libs = ["/O2", "/fp:precise", "/fp:contract-"], []
        else:
            flags = ["-O3", "-std=c11", "-ffp-contract=off", "-fno-fast-math"]
            libs = ["pthread", "m"]
        for ext in self.extensions:
            ext.extra_compile_args = flags
            ext.libraries = libs
        super().build_extensions()


setup(
    ext_modules=[
        Extension(
            "invarax.kernels._native",
            sources=[f"invarax/kernels/csrc/{name}" for name in SOURCES],
            depends=[f"invarax/kernels/csrc/{name}" for name in HEADERS],
        )
    ],
    cmdclass={"build_ext": BuildExt},
)
