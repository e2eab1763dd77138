"""``INVARAX_MAX_ISA``: the best instruction set the compiled kernels may use.

Every kernel gives the same bits at every dispatch level (docs/numerics.md, N6), so the
cap only changes speed; it exists so that tests can run each level's code on one machine.
"""

from __future__ import annotations

import os

from . import _native

ENV = "INVARAX_MAX_ISA"
#: The accepted values, lowest first, and the kernels' name of each level.
LEVELS = {"baseline": "scalar", "avx2": "avx2", "avx512": "avx512"}


def apply_max_isa(value: str | None = None) -> str:
    """Cap the kernels' dispatch at ``value`` (default: ``$INVARAX_MAX_ISA``, if set).

    Arguments:
        value: ``"baseline"`` (SSE2 only, C99 ``fma`` in software where the CPU lacks it),
            ``"avx2"`` (AVX2 + FMA) or ``"avx512"``; a level above what the CPU runs means
            the CPU's best.

    Returns:
        The kernels' level now in use (``"scalar"``, ``"avx2"`` or ``"avx512"``).

    Example:
        >>> apply_max_isa("baseline")
        'scalar'
        >>> apply_max_isa("avx512") == _native.isas()[-1]
        True
    """
    value = os.environ.get(ENV) if value is None else value
    available = _native.isas()
    if not value:
        _native.set_isa(available[-1])
        return available[-1]
    key = value.strip().lower()
    if key not in LEVELS:
        raise ValueError(f"{ENV}={value!r} is not a dispatch level; use one of "
                         f"{', '.join(LEVELS)} (or unset it for the CPU's best)")
    wanted = list(LEVELS).index(key)
    level = available[min(wanted, len(available) - 1)]
    _native.set_isa(level)
    return level


def current_level() -> str:
    """The kernels' dispatch level in use (``"scalar"``, ``"avx2"`` or ``"avx512"``).

    Example:
        >>> current_level() in _native.isas()
        True
    """
    level = _native.set_isa(_native.isas()[0])  # set_isa returns the level it replaces
    _native.set_isa(level)
    return level


apply_max_isa()  # $INVARAX_MAX_ISA caps every kernel's dispatch, read once at import
