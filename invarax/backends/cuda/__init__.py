"""The CUDA backend: invarax on NVIDIA GPUs, with the CPU's bits (docs/gpu.md).

Importing it registers the ``"cuda"`` rules of the lowering table (``rules_*.py``) and the
runner that places eager operations (``runner.py``); the GPUs themselves are found on the
first operation (``distributed/devices.py``), and without CuPy, NVRTC or a GPU nothing of
this runs.
"""

from . import rules_calls, rules_compute, rules_elementwise, rules_shape, rules_windows, runner

__all__ = ["rules_calls", "rules_compute", "rules_elementwise", "rules_shape", "rules_windows",
           "runner"]
