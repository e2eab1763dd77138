"""Where an eager operation runs: on the host, or on an accelerator that holds its operands.

The eval trace runs each primitive's impl on host values. A backend for an accelerator (the
CUDA one, ``invarax/backends/cuda``) installs a ``Runner`` here when its devices are found;
from then on the eval trace first offers every operation to it. The runner decides where
the operation runs from its operands' placement (an operand committed to a device, else
the default device) and either computes it there, returning the outputs, or returns None
to let the host run the impl. Without an accelerator no runner is installed and the eval
trace reads one module global per operation.
"""

from __future__ import annotations


class Runner:
    """Runs eager operations on an accelerator (see the module docstring)."""

    def run(self, primitive, args: list, params: dict, out_avals):
        """The outputs of ``primitive`` on the concrete ``args`` (``ArrayImpl``s), computed
        on the accelerator (a list for a multiple-results primitive, else one array), or
        None where the host computes them."""
        raise NotImplementedError


#: Platform name -> ``factory(devices)`` giving the runner for those devices (each
#: backend adds its own when imported).
FACTORIES: dict = {}
#: The caches of backends' compiled programs (``functools.lru_cache`` functions), which
#: ``clear_caches()`` clears with the others.
CACHES: list = []
#: The installed runner, or None (no accelerator in use).
RUNNER: Runner | None = None
#: Finds the accelerators once (set by the device registry): returns the runner to
#: install, or None. Called on the first eager operation or the first use of devices.
PROBE = None
_probed = False


def runner() -> Runner | None:
    """The runner in use, probing for accelerators on the first call."""
    global _probed, RUNNER
    if not _probed:
        _probed = True
        if PROBE is not None:
            RUNNER = PROBE()
    return RUNNER
