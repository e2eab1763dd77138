"""Build of invarax's compiled kernels (``invarax.kernels._native``); metadata is in pyproject.toml.

The kernels' results must not depend on the compiler's choices, so floating-point
contraction (fusing ``a * b + c`` into an FMA) is switched off: every FMA in the
kernels is written out, as part of the documented order (docs/numerics.md).
"""

from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

#: Every C file of the kernels is compiled into the one extension; every header is a dependency
#: (so a changed header rebuilds it).
CSRC = Path("invarax/kernels/csrc")
SOURCES = sorted(path.as_posix() for path in CSRC.glob("*.c"))
HEADERS = sorted(path.as_posix() for path in CSRC.glob("*.h"))


class BuildExt(build_ext):
    """Add the flags that fix the kernels' arithmetic for the compiler in use."""

    def build_extensions(self):
        if self.compiler.compiler_type == "msvc":
            flags, libs = ["/O2", "/fp:precise", "/fp:contract-"], []
        else:
            flags = ["-O3", "-std=c11", "-ffp-contract=off", "-fno-fast-math", "-fno-math-errno"]
            libs = ["pthread", "m"]
        for ext in self.extensions:
            ext.extra_compile_args = flags
            ext.libraries = libs
        super().build_extensions()


setup(
    ext_modules=[
        Extension(
            "invarax.kernels._native",
            sources=SOURCES,
            depends=HEADERS,
        )
    ],
    cmdclass={"build_ext": BuildExt},
)
