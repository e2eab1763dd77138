"""``Module``: a frozen dataclass that is a pytree, and ``field`` to declare its fields."""

from __future__ import annotations

import abc
import dataclasses
import functools

from ..core.pytree_registry import register_attribute_node, register_pytree_node
from ._pretty import module_repr

_initialising: set[int] = set()  # ids of the modules whose __init__ is running


def field(*, static: bool = False, converter=None, **kwargs):
    """Declare a field of a ``Module``: ``dataclasses.field`` plus ``static`` and ``converter``.

    Arguments:
        static: if True the field is not a child of the pytree but part of its structure
            (hashed and compared with ``==``; never traced or differentiated).
        converter: a function applied to the field's value once ``__init__`` returns.
        **kwargs: passed to ``dataclasses.field`` (``default``, ``default_factory``, ...).

    Returns:
        A dataclass field.

    Example:
        >>> class Layer(Module):
        ...     weight: object = field(converter=jnp.asarray)
        ...     activation: str = field(static=True, default="relu")
        >>> Layer([1.0, 2.0])
        Layer(weight=f32[2], activation='relu')
    """
    metadata = dict(kwargs.pop("metadata", None) or {})
    metadata["static"] = static
    if converter is not None:
        metadata["converter"] = converter
    return dataclasses.field(metadata=metadata, **kwargs)


class BoundMethod:
    """A method bound to a module; a pytree whose only child is the module.

    So ``model.__call__`` can be passed to ``filter_jit`` or ``filter_grad`` and its arrays
    are traced like the module's own.
    """

    __slots__ = ("__func__", "__self__")

    def __init__(self, func, instance):
        object.__setattr__(self, "__func__", func)
        object.__setattr__(self, "__self__", instance)

    def __call__(self, *args, **kwargs):
        return self.__func__(self.__self__, *args, **kwargs)

    @property
    def __wrapped__(self):
        return functools.partial(self.__func__, self.__self__)

    def __repr__(self):
        return f"<bound method {self.__func__.__qualname__} of {self.__self__!r}>"


register_pytree_node(BoundMethod, lambda m: ((m.__self__,), m.__func__),
                     lambda func, children: BoundMethod(func, children[0]))


class _Method:
    """A method of a module class: looked up on an instance it gives a ``BoundMethod``."""

    def __init__(self, func):
        self.func = func
        functools.update_wrapper(self, func)

    def __get__(self, instance, owner=None):
        return self.func if instance is None else BoundMethod(self.func, instance)


def _is_method(name: str, value) -> bool:
    magic = name.startswith("__") and name.endswith("__")
    return callable(value) and type(value).__name__ == "function" and (
        not magic or name == "__call__")


def _flatten(fields_children, fields_static, module):
    return ([getattr(module, n) for n in fields_children],
            tuple(getattr(module, n) for n in fields_static))


def _unflatten(cls, fields_children, fields_static, static, children):
    module = object.__new__(cls)
    for name, value in zip(fields_children + fields_static, (*children, *static), strict=True):
        object.__setattr__(module, name, value)
    return module


class _ModuleMeta(abc.ABCMeta):
    def __new__(mcs, name, bases, namespace, **kwargs):
        for key, value in list(namespace.items()):
            if _is_method(key, value):
                namespace[key] = _Method(value)
        # A custom __init__, here or inherited, is kept (as Equinox does); otherwise the
        # dataclass one takes the fields.
        has_init = "__init__" in namespace or any(
            getattr(base, "_custom_init", False) for base in bases)
        namespace["_custom_init"] = has_init
        cls = super().__new__(mcs, name, bases, namespace, **kwargs)
        cls = dataclasses.dataclass(eq=False, repr=False, init=not has_init)(cls)
        fields = dataclasses.fields(cls)
        children = tuple(f.name for f in fields if not f.metadata.get("static", False))
        static = tuple(f.name for f in fields if f.metadata.get("static", False))
        register_attribute_node(cls, functools.partial(_flatten, children, static),
                                functools.partial(_unflatten, cls, children, static),
                                children)
        return cls

    def __call__(cls, *args, **kwargs):
        module = cls.__new__(cls)
        _initialising.add(id(module))
        try:
            cls.__init__(module, *args, **kwargs)
            _convert_and_check_fields(module)
        finally:
            _initialising.discard(id(module))
        for klass in reversed(cls.__mro__):
            check = klass.__dict__.get("__check_init__")
            if check is not None:
                check(module)
        return module


def _convert_and_check_fields(module):
    missing = []
    for f in dataclasses.fields(module):
        if f.name not in module.__dict__:
            missing.append(f.name)
        elif "converter" in f.metadata:
            object.__setattr__(module, f.name, f.metadata["converter"](module.__dict__[f.name]))
    if missing:
        raise ValueError(
            f"{type(module).__name__}.__init__ did not set the field(s) {missing}; assign "
            "every field (self.name = value) in __init__"
        )


class Module(metaclass=_ModuleMeta):
    """A dataclass that is a pytree: its fields are children unless declared ``field(static=True)``.

    Declare fields as class annotations; the ``__init__`` is the dataclass one unless the
    class defines its own. Once ``__init__`` returns, converters run, the module is frozen,
    and every ``__check_init__`` in the class hierarchy is called. Methods looked up on an
    instance are ``BoundMethod`` pytrees, so ``model.__call__`` carries the model's arrays.

    Arguments:
        the fields, as for a dataclass (or those of the class's own ``__init__``).

    Returns:
        A frozen module; change one with ``tree_at``.

    Example:
        >>> class Linear(Module):
        ...     weight: object
        ...     bias: object
        ...     def __call__(self, x):
        ...         return self.weight @ x + self.bias
        >>> model = Linear(jnp.ones((3, 2)), jnp.zeros(3))
        >>> model
        Linear(weight=f32[3,2], bias=f32[3])
        >>> model(jnp.ones(2))
        Array([2., 2., 2.], dtype=float32)
    """

    def __setattr__(self, name, value):
        if id(self) in _initialising:
            if name not in {f.name for f in dataclasses.fields(self)}:
                raise AttributeError(
                    f"Cannot set attribute {name!r} of {type(self).__name__}: it is not a field. "
                    f"Declare it in the class body (`{name}: object`) first."
                )
            object.__setattr__(self, name, value)
            return
        raise dataclasses.FrozenInstanceError(
            f"Cannot set attribute {name!r}: {type(self).__name__} is frozen once __init__ "
            f"returns. Make a changed copy instead: "
            f"`model = eqx.tree_at(lambda m: m.{name}, model, new_{name})`."
        )

    def __delattr__(self, name):
        raise dataclasses.FrozenInstanceError(
            f"Cannot delete attribute {name!r}: {type(self).__name__} is frozen."
        )

    def __repr__(self):
        return module_repr(self)
