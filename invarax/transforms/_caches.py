"""``clear_caches``: forget every traced and compiled program (JAX's ``jax.clear_caches``
and Equinox's ``eqx.clear_caches`` in one)."""

from __future__ import annotations

from ..core import backends


def _memoised():
    """The memoised (``functools.lru_cache``) helpers that hold traced programs."""
    from ..compiler import call, passes
    from ..control_flow import common as _control_flow
    from ..control_flow import while_grad
    from ..interpreters import ad

    return (call.executable, call.split_known, passes._run_sub, passes._structure, ad._forwards,
            _control_flow._scan_loop, _control_flow._while_loop_program, while_grad._vjp_jaxpr)


def clear_caches() -> None:
    """Forget every program traced and compiled so far, as ``jax.clear_caches()`` (and
    Equinox's ``clear_caches()``, whose caches are these).

    The next call of each ``jit``/``filter_jit`` function traces again; results do not
    change (a retrace gives the same program). Use it to free memory, or to count traces
    from a clean state in a test.

    Returns:
        None.

    Example:
        >>> import invarax
        >>> traces = []
        >>> f = invarax.jit(lambda x: traces.append(1) or x + 1)
        >>> _ = f(1.0); _ = f(2.0); invarax.clear_caches(); _ = f(3.0)
        >>> len(traces)
        2
    """
    from ..compiler.jit import _shared

    for _, caches in list(_shared.values()):
        caches.entries.clear()
        caches.fast.clear()
        caches.signatures.clear()
        caches.variants.clear()
    for helper in (*_memoised(), *backends.CACHES):
        helper.cache_clear()
    from ..core import buffers

    buffers.clear()  # the spare buffers of programs, fusion groups, scans and collectives
