"""``Partial``: ``functools.partial`` as a Module, as Equinox's."""

from __future__ import annotations

from ._module import Module


class Partial(Module):
    """A function with some arguments bound, as a pytree: ``equinox.Partial``.

    Unlike ``functools.partial``, its bound arguments are pytree children, so arrays among
    them are traced by ``filter_jit`` and differentiated by ``filter_grad``.

    Arguments:
        func: the function (itself a child: a Module's arrays are seen too).
        *args: leading positional arguments to bind.
        **kwargs: keyword arguments to bind.

    Returns:
        The Module; calling it calls ``func(*args, *more_args, **more_kwargs, **kwargs)``.

    Example:
        >>> scale = Partial(lambda w, x: w * x, jnp.array([1.0, 2.0]))
        >>> scale(jnp.ones(2))
        Array([1., 2.], dtype=float32)
        >>> filter_grad(lambda p: p(jnp.ones(2)).sum())(scale).args
        (Array([1., 1.], dtype=float32),)
    """

    func: object
    args: tuple
    keywords: dict

    def __init__(self, func, /, *args, **kwargs):
        self.func = func
        self.args = args
        self.keywords = kwargs

    def __call__(self, *args, **kwargs):
        return self.func(*self.args, *args, **kwargs, **self.keywords)
