"""``Module``: a frozen dataclass that is a pytree, and ``field`` to declare its fields."""

from __future__ import annotations

import abc
import dataclasses
import functools
import inspect
import types
import typing
import warnings

from ..core.pytree import tree_leaves
from ..core.pytree_registry import register_attribute_node, register_pytree_node
from ._abstract import abstract_names, check_not_abstract, dataclass_without_abstract
from ._filters import is_array, is_array_like, is_inexact_array
from ._pretty import Fielded, module_repr
from ._tree_equal import tree_equal

_initialising: set[int] = set()  # ids of the modules whose __init__ is running


def field(*, converter=None, static: bool = False, **kwargs):
    """Declare a field of a ``Module``: ``dataclasses.field`` plus ``converter`` and ``static``.

    Arguments:
        converter: a function applied to the field's value once ``__init__`` returns (the
            generated one or the class's own), before ``__check_init__``.
        static: if True the field is not a child of the pytree but part of its structure
            (hashed and compared with ``==``; never traced or differentiated).
        **kwargs: passed to ``dataclasses.field`` (``default``, ``default_factory``, ...).

    Returns:
        A dataclass field; its ``metadata`` holds ``converter`` and ``static=True`` when
        given (as Equinox's).

    Example:
        >>> class Layer(Module):
        ...     weight: object = field(converter=jnp.asarray)
        ...     activation: str = field(static=True, default="relu")
        >>> Layer([1.0, 2.0])
        Layer(weight=f32[2], activation='relu')
    """
    metadata = dict(kwargs.pop("metadata", None) or {})
    for name in ("converter", "static"):
        if name in metadata:
            raise ValueError(f"Cannot use metadata with `{name}` already set: pass "
                             f"field({name}=...) instead")
    if converter is not None:
        metadata["converter"] = converter
    if static:
        metadata["static"] = True
    return dataclasses.field(metadata=metadata, **kwargs)


def static_field(**kwargs):
    """Deprecated: ``field(static=True, **kwargs)`` (Equinox's old name; warns as Equinox).

    Arguments:
        **kwargs: as for ``field``.

    Returns:
        A static dataclass field.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True):
        ...     warnings.simplefilter("always")
        ...     static_field(default=1).metadata["static"]
        True
    """
    warnings.warn("`equinox.static_field` is deprecated in favour of "
                  "`equinox.field(static=True)`", stacklevel=2)
    return field(**kwargs, static=True)


class _Method:
    """A method of a module class: looked up on an instance it gives a ``BoundMethod``."""

    def __init__(self, func):
        self.func = func
        functools.update_wrapper(self, func)

    def __get__(self, instance, owner=None):
        return self.func if instance is None else _bind(self.func, instance)


def _is_method(name: str, value) -> bool:
    magic = name.startswith("__") and name.endswith("__")
    return callable(value) and type(value).__name__ == "function" and (
        not magic or name == "__call__")


class _Missing:
    """A field the instance does not hold (a class-level default, or a class attribute
    overriding the field, that ``__init__`` never assigned): an empty pytree, as in Equinox,
    so a class attribute is never a leaf; the attribute still reads the class's value."""

    __slots__ = ()

    def __repr__(self):
        return "Missing"


_MISSING = _Missing()
register_pytree_node(_Missing, lambda _: ((), None), lambda _, __: _MISSING)


# The names ``module_update_wrapper`` copies from the wrapped function on to a wrapper.
WRAPPER_FIELDS = ("__module__", "__name__", "__qualname__", "__doc__", "__annotations__")


class _WrapperNames(tuple):
    """The last element of a module's static data when it holds ``WRAPPER_FIELDS`` of its
    own (a wrapper made by ``module_update_wrapper``): kept through flatten and unflatten, as
    Equinox's."""

    __slots__ = ()


def _flatten(fields_children, fields_static, module):
    d = module.__dict__
    get = d.get
    static = tuple(get(n, _MISSING) for n in fields_static)
    if len(d) > len(fields_children) + len(fields_static):
        names = tuple(get(n, _MISSING) for n in WRAPPER_FIELDS)
        if any(v is not _MISSING for v in names):
            static = (*static, _WrapperNames(names))
    return [get(n, _MISSING) for n in fields_children], static


def _unflatten(cls, fields_children, fields_static, static, children):
    module = object.__new__(cls)
    if len(static) > len(fields_static):
        for name, value in zip(WRAPPER_FIELDS, static[-1], strict=True):
            if value is not _MISSING:
                module.__dict__[name] = value
        static = static[:-1]
    for name, value in zip(fields_children + fields_static, (*children, *static), strict=True):
        if value is not _MISSING:
            object.__setattr__(module, name, value)
    return module


def _has_custom_init(namespace, bases) -> bool:
    """Whether the class keeps an ``__init__`` of its own or inherits a non-dataclass one."""
    if "__init__" in namespace:
        return True
    for base in bases:
        for klass in base.__mro__:
            if "_custom_init" in klass.__dict__:
                if klass.__dict__["_custom_init"]:
                    return True
                break
            if klass is not object and "__init__" in klass.__dict__:
                return True  # a plain (non-Module) base with its own __init__
    return False


def _converter_annotation(converter):
    """The annotation of a converter's first parameter (``Any`` when it has none)."""
    try:
        params = list(inspect.signature(converter).parameters.values())
    except (TypeError, ValueError):
        return typing.Any
    if not params or params[0].annotation is inspect.Parameter.empty:
        return typing.Any
    return params[0].annotation


_MSG_CUSTOM_INIT_AND_POST_INIT = (
    "Class `{0.__module__}.{0.__qualname__}` has both an `__init__` method and a "
    "`__post_init__` method, so `__post_init__` will not be run: a dataclass calls it from "
    "the generated `__init__` only. To check invariants whatever the `__init__`, define "
    "`__check_init__` instead.")

_MSG_FIELD_INIT_FALSE = (
    "Using `field(init=False)` on a Module holding float arrays can surprise under grad: "
    "the field is a pytree leaf of its own, so gradients flow to it rather than to the "
    "fields it was computed from in `__post_init__`. Prefer a property or a method.")


class _ModuleMeta(abc.ABCMeta):
    def __new__(mcs, name, bases, namespace, *, is_abstract: bool = False, strict=False,
                **kwargs):
        # Equinox's class keywords: `is_abstract=True` marks a class never instantiated
        # itself; `strict` is its legacy spelling (only `strict=None` meant abstract).
        is_abstract = is_abstract or strict is None
        for key, value in list(namespace.items()):
            if _is_method(key, value):
                namespace[key] = _Method(value)
        # A custom __init__, here or inherited, is kept (as Equinox does); otherwise the
        # dataclass one takes the fields.
        has_init = _has_custom_init(namespace, bases)
        namespace["_custom_init"] = has_init
        cls = super().__new__(mcs, name, bases, namespace, **kwargs)
        if has_init and hasattr(cls, "__post_init__"):
            warnings.warn(_MSG_CUSTOM_INIT_AND_POST_INIT.format(cls), stacklevel=2)
        cls.__abstractvars__, cls.__abstractclassvars__ = abstract_names(cls)
        cls._is_abstract_module = is_abstract
        init_doc = cls.__init__.__doc__
        cls = dataclass_without_abstract(cls, eq=False, repr=False, init=not has_init)
        fields = dataclasses.fields(cls)
        if not has_init:
            cls.__init__.__doc__ = init_doc  # the generated one documents nothing itself
            for f in fields:
                if "converter" in f.metadata and f.name in cls.__init__.__annotations__:
                    cls.__init__.__annotations__[f.name] = _converter_annotation(
                        f.metadata["converter"])
        children = tuple(f.name for f in fields if not f.metadata.get("static", False))
        static = tuple(f.name for f in fields if f.metadata.get("static", False))
        register_attribute_node(cls, functools.partial(_flatten, children, static),
                                functools.partial(_unflatten, cls, children, static),
                                children)
        return cls

    def __call__(cls, *args, **kwargs):
        if cls.__dict__.get("_is_abstract_module"):
            raise TypeError(f"Cannot instantiate abstract `equinox.Module` {cls.__name__} "
                            "(declared with is_abstract=True): instantiate a subclass")
        check_not_abstract(cls, cls.__abstractclassvars__, "class attributes")
        module = cls.__new__(cls)
        _initialising.add(id(module))
        try:
            cls.__init__(module, *args, **kwargs)
            _finish_fields(module)
        finally:
            _initialising.discard(id(module))
        check_not_abstract(cls, cls.__abstractvars__, "attributes")
        for klass in cls.__mro__:  # as Equinox: the class's own check first, then its bases'
            check = klass.__dict__.get("__check_init__")
            if check is not None:
                check(module)
        return module

    @property
    def __signature__(cls):
        """The signature of ``cls(...)``: its ``__init__``'s without ``self``."""
        sig = inspect.signature(cls.__init__)
        return sig.replace(parameters=list(sig.parameters.values())[1:])


def _finish_fields(module):
    """After ``__init__``: every field set (or defaulted), converters run, definitions checked."""
    cls = type(module)
    for f in dataclasses.fields(module):
        try:
            value = getattr(module, f.name)  # a default is the class attribute
        except AttributeError:
            raise TypeError(
                f"Field {f.name!r} was not initialized: {cls.__name__}.__init__ must assign "
                f"`self.{f.name} = ...` (or declare a default in the class body)") from None
        if "converter" in f.metadata:
            object.__setattr__(module, f.name, f.metadata["converter"](value))
        if f.metadata.get("static", False) and any(map(is_array, tree_leaves(value))):
            warnings.warn(
                "A JAX array is being set as static! This can result in unexpected behavior "
                "and is usually a mistake to do.", stacklevel=3)
        if not f.init and any(map(is_inexact_array, tree_leaves(value))):
            warnings.warn(_MSG_FIELD_INIT_FALSE, stacklevel=3)


_MSG_METHOD_IN_INIT = (
    "Cannot assign methods in __init__: `self.{0} = self.<method>` would make the module "
    "contain itself (a bound method holds the module), so it is not a tree. Use a property "
    "instead:\n    @property\n    def {0}(self):\n        return self.<method>")


_MSG_TRANSFORMED = (
    "Possibly assigning a JAX-transformed callable as an attribute on {0}.{1} (field "
    "{2!r}): a function returned by jit/vmap/grad is not a pytree, so the parameters of "
    "the module it wraps are invisible (never updated by an optimiser). Store the module "
    "itself and transform at call time (`jax.vmap(self.{2})(x)`), or use filter_vmap/"
    "filter_jit/filter_grad, which return pytrees.")


def _warn_transformed_callable(cls, name, value) -> None:
    """Equinox's warning for a field holding ``jit``/``vmap``/``grad`` of something with
    arrays (it should hold the pytree, transformed when called)."""
    from ..compiler.jit import Jitted
    from ..transforms._custom_jvp import custom_jvp
    from ..transforms._custom_vjp import custom_vjp

    if not isinstance(value, (Jitted, types.FunctionType, custom_jvp, custom_vjp)):
        return
    seen = set()
    while id(value) not in seen:
        seen.add(id(value))
        try:
            value = value.__wrapped__
        except AttributeError:
            return
        if isinstance(value, types.FunctionType):
            continue
        if any(map(is_array_like, tree_leaves(value))):
            warnings.warn(_MSG_TRANSFORMED.format(cls.__module__, cls.__qualname__, name),
                          stacklevel=3)
            return


class Module(metaclass=_ModuleMeta):
    """A dataclass that is a pytree: its fields are children unless declared ``field(static=True)``.

    Declare fields as class annotations; the ``__init__`` is the dataclass one unless the
    class defines its own (fields it leaves unset take their defaults). Once ``__init__``
    returns, converters run, the module is frozen, and every ``__check_init__`` in the class
    hierarchy is called, the class's own first (Equinox's order). Modules compare equal as
    pytrees (``tree_equal``). Methods looked up on an
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
                raise dataclasses.FrozenInstanceError(
                    f"Cannot set attribute {name!r} of {type(self).__name__}: it is not a "
                    f"field. Declare it in the class body (`{name}: object`) first.")
            if isinstance(value, BoundMethod) and value.__self__ is self:
                raise ValueError(_MSG_METHOD_IN_INIT.format(name))
            _warn_transformed_callable(type(self), name, value)
            object.__setattr__(self, name, value)
            return
        if name == "__orig_class__":  # set by `Module[int]()` (typing's generic alias)
            object.__setattr__(self, name, value)
            return
        raise dataclasses.FrozenInstanceError(
            f"Cannot set attribute {name!r}: {type(self).__name__} is frozen once __init__ "
            f"returns. Make a changed copy instead: "
            f"`model = eqx.tree_at(lambda m: m.{name}, model, new_{name})`."
        )

    def __eq__(self, other):
        """Pytree equality, as Equinox: ``tree_equal(self, other)`` (a bool array for arrays)."""
        return tree_equal(self, other)

    def __hash__(self):
        return hash(tuple((f.name, getattr(self, f.name)) for f in dataclasses.fields(self)))

    def __delattr__(self, name):
        raise dataclasses.FrozenInstanceError(
            f"Cannot delete attribute {name!r}: {type(self).__name__} is frozen."
        )

    def __repr__(self):
        return module_repr(self)


Fielded.register(Module)


class BoundMethod(Module):
    """A method bound to a module, as Equinox's: a Module whose only child is the module.

    So ``model.__call__`` can be passed to ``filter_jit`` or ``filter_grad`` and its arrays
    are traced like the module's own. It compares equal for the same function and equal
    modules (``tree_equal``), and has the function's ``__name__`` and ``__qualname__``.

    Example:
        >>> class Scale(Module):
        ...     a: object
        ...     def times(self, x):
        ...         return self.a * x
        >>> m = Scale(jnp.array(2.0))
        >>> isinstance(m.times, Module), tree_leaves(m.times), m.times(3.0)
        (True, [Array(2., dtype=float32, weak_type=True)], Array(6., dtype=float32, weak_type=True))
    """

    __func__: object = field(static=True)
    __self__: object

    @property
    def __wrapped__(self):
        return functools.partial(self.__func__, self.__self__)

    def __getattr__(self, name):
        if name in ("__name__", "__qualname__"):  # the function's, as a Python bound method
            return getattr(self.__func__, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def _call_bound(self, *args, **kwargs):
    return self.__func__(self.__self__, *args, **kwargs)


# Set after the class is made, so the metaclass does not wrap it as a method: calling a
# bound method must not bind again.
BoundMethod.__call__ = _call_bound


def _bind(func, instance) -> BoundMethod:
    """``BoundMethod(func, instance)`` without ``Module.__init__``'s checks (a method lookup
    is frequent, and both fields are known good)."""
    bound = object.__new__(BoundMethod)
    object.__setattr__(bound, "__func__", func)
    object.__setattr__(bound, "__self__", instance)
    return bound
