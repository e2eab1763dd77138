"""``AbstractVar`` and ``AbstractClassVar``: annotations for attributes a subclass must supply.

A ``Module`` class records the names still abstract (``__abstractvars__``,
``__abstractclassvars__``); instantiating it raises until a subclass overrides every one of
them (Equinox's rules: an ``AbstractVar[T]`` is overridden by a field, a class attribute or
a property; an ``AbstractClassVar[T]`` by a ``ClassVar[T]``). Neither creates a field.
"""


import dataclasses
import inspect
from typing import ClassVar, Generic, TypeVar, get_args, get_origin

_T = TypeVar("_T")


class AbstractVar(Generic[_T]):
    """Mark an abstract instance attribute of a ``Module``: ``attr: AbstractVar[bool]``.

    A subclass overrides it by a field (``attr: bool``), a class attribute or a property;
    a module with one left abstract cannot be instantiated. It does not create a field.

    Arguments:
        _T: the attribute's type (one subscript).

    Returns:
        A type annotation.

    Example:
        >>> class AbstractX(Module):
        ...     flag: AbstractVar[bool]
        >>> class X(AbstractX):
        ...     flag: bool
        >>> X(True).flag
        True
    """


class AbstractClassVar(Generic[_T]):
    """Mark an abstract class attribute of a ``Module``: ``attr: AbstractClassVar[int]``.

    A subclass overrides it by ``attr: ClassVar[int] = value`` (or another
    ``AbstractClassVar``); a module with one left abstract cannot be instantiated.

    Arguments:
        _T: the attribute's type (one subscript).

    Returns:
        A type annotation.

    Example:
        >>> from typing import ClassVar
        >>> class AbstractX(Module):
        ...     size: AbstractClassVar[int]
        >>> class X(AbstractX):
        ...     size: ClassVar[int] = 3
        >>> X().size
        3
    """


def _kind(annotation) -> tuple[bool, bool]:
    """``(is_abstract, is_class_attribute)`` of one annotation."""
    if isinstance(annotation, str):
        if annotation.startswith(("AbstractVar[", "AbstractClassVar[")):
            raise NotImplementedError(
                f"the string annotation {annotation!r} is not supported: abstract attributes "
                "need real annotations (drop `from __future__ import annotations` here)")
        return False, annotation.startswith(("ClassVar[", "typing.ClassVar["))
    if annotation in (AbstractVar, AbstractClassVar):
        raise TypeError(f"Cannot use unsubscripted `{annotation.__name__}`: write "
                        f"`{annotation.__name__}[T]` with the attribute's type T")
    origin = get_origin(annotation)
    if origin in (AbstractVar, AbstractClassVar):
        if len(get_args(annotation)) != 1:
            raise TypeError(f"`{origin.__name__}` can only have a single argument.")
        return True, origin is AbstractClassVar
    return False, origin is ClassVar


def abstract_names(cls) -> tuple[frozenset, frozenset]:
    """The names of ``cls``'s abstract instance and class attributes not yet overridden."""
    abstract_vars, abstract_class_vars = set(), set()
    for klass in reversed(cls.__mro__):
        for name, annotation in inspect.get_annotations(klass).items():
            is_abstract, is_class = _kind(annotation)
            if is_abstract and name in klass.__dict__:
                what = "class attribute" if is_class else "attribute"
                raise TypeError(f"Abstract {what} {name} cannot have value in {klass.__name__}; "
                                "give it its value in a concrete subclass")
            if is_abstract and is_class:
                abstract_vars.discard(name)
                abstract_class_vars.add(name)
            elif is_abstract:
                if name not in abstract_class_vars:
                    abstract_vars.add(name)
            else:
                abstract_class_vars.discard(name)
                if not is_class:
                    abstract_vars.discard(name)
        for name in klass.__dict__:
            abstract_vars.discard(name)
            abstract_class_vars.discard(name)
    return frozenset(abstract_vars), frozenset(abstract_class_vars)


def dataclass_without_abstract(cls, **kwargs):
    """``dataclasses.dataclass(**kwargs)(cls)``, abstract annotations making no field."""
    annotations = inspect.get_annotations(cls)
    concrete = {n: a for n, a in annotations.items() if not _kind(a)[0]}
    if len(concrete) == len(annotations):
        return dataclasses.dataclass(**kwargs)(cls)
    cls.__annotations__ = concrete
    try:
        cls = dataclasses.dataclass(**kwargs)(cls)
    finally:
        cls.__annotations__ = annotations
    return cls


def check_not_abstract(cls, attributes: frozenset, what: str) -> None:
    """A TypeError naming the abstract ``attributes`` left, if any."""
    if attributes:
        raise TypeError(
            f"Can't instantiate abstract class {cls.__name__} with abstract {what} "
            f"{set(attributes)}: a subclass must define them")
