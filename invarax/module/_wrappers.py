"""``Transformed``: what a filtered transform returns, a Module holding the wrapped function.

As Equinox's wrappers: a pytree whose child is the function (a Module's arrays are then
leaves, traced by an enclosing ``filter_jit``) and whose structure is the transform and its
options. Two wrappers of one function with the same options are equal and hash alike, so
``filter_jit(filter_grad(f))`` re-created at every call finds the program traced before.
"""

from __future__ import annotations

from ..core.api_util import fun_name
from ._module import WRAPPER_FIELDS as _WRAPPER_FIELDS
from ._module import Module, field
from ._partial import Partial


class Transformed(Module):
    """``make(fun, **options)`` called on the arguments: a filtered transform of ``fun``.

    Arguments:
        fun: the wrapped function (any callable, a Module or bound method included).
        make: the transform, a module-level function ``make(fun, **options)`` returning
            the transformed callable.
        options: the transform's hashable keyword options, as a tuple of ``(name, value)``
            pairs (part of the structure).
        trees: keyword options that are pytrees (``in_axes``, say), as a tuple of
            ``(name, value)`` pairs; they are children, so each of their leaves is compared
            on its own.

    Returns:
        A callable pytree; ``__wrapped__`` is ``fun``. Looked up on an instance (a method
        decorated with ``@filter_grad``, say) it is bound to it.

    Example:
        >>> from invarax.module._grad import _value_and_grad
        >>> g = Transformed(lambda x: (x ** 2).sum(), _value_and_grad, (("has_aux", False),))
        >>> g(jnp.ones(2))
        (Array(2., dtype=float32), Array([2., 2.], dtype=float32))
    """

    fun: object
    make: object = field(static=True)
    options: tuple = field(static=True)
    trees: tuple = ()

    def __call__(self, *args, **kwargs):
        options = dict(self.options) | {name: tree for name, tree in self.trees}
        return self.make(self.fun, **options)(*args, **kwargs)

    def __get__(self, instance, owner=None):
        """A method decorated with a filtered transform binds ``self`` as its first
        argument (a ``Partial`` pytree, as Equinox's), so ``@filter_grad`` on a method
        differentiates with respect to the instance."""
        return self if instance is None else Partial(self, instance)

    @property
    def __wrapped__(self):
        return self.fun

    def __getattribute__(self, name):
        # the wrapped function's names, documentation and annotations, as functools.wraps
        # would copy them (read through, so a flattened and rebuilt wrapper keeps them)
        if name in _WRAPPER_FIELDS:
            fun = object.__getattribute__(self, "fun")
            if name == "__name__":
                return fun_name(fun)
            try:
                return getattr(fun, name)
            except AttributeError:
                pass
        return object.__getattribute__(self, name)



def module_update_wrapper(wrapper: Module, wrapped=None):
    """``functools.update_wrapper`` for a Module wrapper, without changing it: Equinox's.

    Arguments:
        wrapper: an instance of a Module class that defines ``__wrapped__`` as a property
            (redirecting to the wrapped callable, so it is not stored twice).
        wrapped: the wrapped callable (default ``wrapper.__wrapped__``).

    Returns:
        A copy of ``wrapper`` with ``__module__``, ``__name__``, ``__qualname__``,
        ``__doc__`` and ``__annotations__`` copied from ``wrapped`` (an attribute the class
        defines as a property keeps the property's value).

    Example:
        >>> class Wrapper(Module):
        ...     fn: object
        ...     def __call__(self, *args):
        ...         return self.fn(*args)
        ...     @property
        ...     def __wrapped__(self):
        ...         return self.fn
        >>> def double(x):
        ...     "Twice x."
        ...     return 2 * x
        >>> w = module_update_wrapper(Wrapper(double))
        >>> w.__name__, w.__doc__, w(3)
        ('double', 'Twice x.', 6)
    """
    from ..core.pytree import tree_flatten, tree_unflatten

    if not isinstance(wrapper, Module):
        raise TypeError(f"module_update_wrapper: wrapper must be a Module instance, got "
                        f"{type(wrapper).__name__}")
    if not isinstance(getattr(type(wrapper), "__wrapped__", None), property):
        raise ValueError(f"module_update_wrapper: {type(wrapper).__name__} must define "
                         "__wrapped__ as a property returning the wrapped callable")
    if wrapped is None:
        wrapped = wrapper.__wrapped__
    leaves, tree = tree_flatten(wrapper)
    wrapper = tree_unflatten(tree, leaves)
    for name in _WRAPPER_FIELDS:
        if isinstance(getattr(type(wrapper), name, None), property):
            continue
        try:
            value = getattr(wrapped, name)
        except AttributeError:
            continue
        object.__setattr__(wrapper, name, value)
    return wrapper
