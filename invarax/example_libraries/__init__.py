"""``invarax.example_libraries``: JAX's small reference libraries, ``optimizers`` (the
init/update/get_params triple) and ``stax`` (layers as ``(init_fun, apply_fun)`` pairs),
with JAX's formulas, on invarax."""

from . import optimizers, stax  # noqa: F401
