"""Pytree node types: the keys of their children, the registry, and registration.

Each node type has a `_NodeKind`: how its instances are flattened into children and aux
data, rebuilt, keyed (the `SequenceKey`, `DictKey`, `GetAttrKey` or `FlattenedIndexKey` of
each child, for key paths) and printed. Tuples, lists, dicts, `None`, namedtuples,
`collections.OrderedDict` and `collections.defaultdict` are built in; `register_*` add
more. Flattening, treedefs and maps, built on this registry, are in `invarax.core.pytree`.
"""

import collections
import dataclasses
import functools
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "SequenceKey",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
]


# ---------------------------------------------------------------------------------------
# Keys: one step of the path from the root of a pytree to one of its subtrees.


KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyPath = tuple[KeyEntry, ...]  # a leaf's path: one key per node on the way to it


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    """The key of a child of a tuple or list: its index, printed `[0]`."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class DictKey:
    """The key of a child of a dict, `OrderedDict` or `defaultdict`, printed `['a']`."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """The key of a field of a namedtuple or registered dataclass, printed `.name`."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True, slots=True)
class FlattenedIndexKey:
    """The key of a child of a registered node: its position among the flattened children."""

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


def keystr(keys: Iterable[Any], *, simple: bool = False, separator: str = "") -> str:
    """Format a key path as a string.

    Arguments:
        keys: the keys of a path, as given by `tree_flatten_with_path`.
        simple: if True, print each key as its bare value (`0`, `a`) rather than as code
            (`[0]`, `['a']`, `.a`); shorter but ambiguous.
        separator: the string put between keys.

    Returns:
        The keys' strings joined by `separator`.

    Example:
        >>> keystr((DictKey("a"), SequenceKey(0), GetAttrKey("w")))
        "['a'][0].w"
    """
    return separator.join(map(_simple_str if simple else str, keys))


def _simple_str(key: Any) -> str:
    match key:
        case SequenceKey(value) | DictKey(value) | GetAttrKey(value) | FlattenedIndexKey(value):
            return str(value)
    return str(key)


# ---------------------------------------------------------------------------------------
# Node kinds: how each node type is flattened, rebuilt, keyed and printed.


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class _NodeKind:
    """The rules of one pytree node type; compared and hashed by identity."""

    type: type
    flatten: Callable[[Any], tuple[Any, Any]]  # node -> (sized children, aux data)
    unflatten: Callable[[Any, list], Any]  # (aux data, children) -> node
    keys: Callable[[Any, int], tuple]  # (aux data, number of children) -> child keys
    show: Callable[[Any, list[str]], str]  # (aux data, children's reprs) -> repr
    aux_label: str = "auxiliary data"  # what the aux data is, for error messages


_registry: dict[type, _NodeKind] = {}


def _register(kind: _NodeKind) -> None:
    if kind.type in _registry:
        raise ValueError(f"Duplicate pytree node type registration for {kind.type}.")
    _registry[kind.type] = kind


def _kind_of(x: Any) -> _NodeKind | None:
    """The node kind of `x`, or None if `x` is a leaf."""
    kind = _registry.get(type(x))
    if kind is None and isinstance(x, tuple) and hasattr(x, "_fields"):
        return _namedtuple_kind(type(x))
    return kind


@functools.cache
def _namedtuple_kind(nodetype: type) -> _NodeKind:
    keys = tuple(map(GetAttrKey, nodetype._fields))
    return _NodeKind(
        nodetype,
        flatten=lambda x: (x, None),
        unflatten=lambda aux, children: nodetype(*children),
        keys=lambda aux, n: keys,
        show=lambda aux, parts: _custom_repr(f"namedtuple[{nodetype.__name__}]", parts),
    )


def _custom_repr(label: str, parts: list[str]) -> str:
    return f"CustomNode({label}, [{', '.join(parts)}])"


def _sequence_keys(aux: Any, n: int) -> tuple:
    return tuple(map(SequenceKey, range(n)))


def _flat_index_keys(aux: Any, n: int) -> tuple:
    return tuple(map(FlattenedIndexKey, range(n)))


def _dict_keys(aux: tuple, n: int) -> tuple:
    return tuple(map(DictKey, aux))


def _sorted_keys(d: dict) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError as e:
        raise ValueError(
            f"The keys of a dict in a pytree must be sortable (they are flattened in sorted "
            f"order), got keys {list(d)!r}: {e}"
        ) from None


def _flatten_dict(d: dict) -> tuple[list, tuple]:
    keys = _sorted_keys(d)
    return [d[k] for k in keys], keys


def _flatten_defaultdict(d: collections.defaultdict) -> tuple[list, tuple]:
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


_register(
    _NodeKind(
        type(None),
        flatten=lambda x: ((), None),
        unflatten=lambda aux, children: None,
        keys=_sequence_keys,
        show=lambda aux, parts: "None",
    )
)
_register(
    _NodeKind(
        tuple,
        flatten=lambda x: (x, None),
        unflatten=lambda aux, children: tuple(children),
        keys=_sequence_keys,
        show=lambda aux, parts: f"({', '.join(parts)}{',' if len(parts) == 1 else ''})",
    )
)
_register(
    _NodeKind(
        list,
        flatten=lambda x: (x, None),
        unflatten=lambda aux, children: children,
        keys=_sequence_keys,
        show=lambda aux, parts: f"[{', '.join(parts)}]",
    )
)
_register(
    _NodeKind(
        dict,
        flatten=_flatten_dict,
        unflatten=lambda aux, children: dict(zip(aux, children, strict=True)),
        keys=_dict_keys,
        show=lambda aux, parts: (
            "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(aux, parts, strict=True)) + "}"
        ),
        aux_label="keys",
    )
)
_register(
    _NodeKind(
        collections.OrderedDict,
        flatten=lambda x: (list(x.values()), tuple(x)),
        unflatten=lambda aux, children: collections.OrderedDict(zip(aux, children, strict=True)),
        keys=_dict_keys,
        show=lambda aux, parts: _custom_repr(f"OrderedDict[{aux}]", parts),
        aux_label="keys (in order)",
    )
)
_register(
    _NodeKind(
        collections.defaultdict,
        flatten=_flatten_defaultdict,
        unflatten=lambda aux, children: collections.defaultdict(
            aux[0], zip(aux[1], children, strict=True)
        ),
        keys=lambda aux, n: _dict_keys(aux[1], n),
        show=lambda aux, parts: _custom_repr(f"defaultdict[{aux}]", parts),
        aux_label="default_factory and keys",
    )
)


# ---------------------------------------------------------------------------------------
# Registration.


def register_pytree_node(
    nodetype: type,
    flatten_func: Callable[[Any], tuple[Iterable[Any], Any]],
    unflatten_func: Callable[[Any, tuple], Any],
) -> None:
    """Register a type as a pytree node.

    Only instances of exactly `nodetype` are nodes, not instances of its subclasses. The
    children's key in paths is `FlattenedIndexKey(i)`.

    Arguments:
        nodetype: the type to register; registering a type twice is an error.
        flatten_func: maps an instance to `(children, aux_data)`: an iterable of children
            (pytrees) and hashable static data compared with `==`.
        unflatten_func: maps `(aux_data, children)`, with children a tuple, back to an
            instance.

    Returns:
        None.

    Example:
        >>> from invarax.tree_util import tree_leaves
        >>> class Pair:
        ...     def __init__(self, a, b):
        ...         self.a, self.b = a, b
        >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
        >>> tree_leaves([Pair(1, 2), 3])
        [1, 2, 3]
    """

    _register_custom(nodetype, flatten_func, unflatten_func, _flat_index_keys)


def register_attribute_node(nodetype: type, flatten_func, unflatten_func,
                            names: Iterable[str]) -> None:
    """Register a node whose children are the attributes ``names`` (keyed ``GetAttrKey``).

    Used by ``Module``, so that paths and error messages say ``.weight``, not a flat index.
    ``flatten_func`` and ``unflatten_func`` are as for ``register_pytree_node``.
    """
    keys = tuple(map(GetAttrKey, names))
    _register_custom(nodetype, flatten_func, unflatten_func, lambda aux, n: keys)


def _register_custom(nodetype, flatten_func, unflatten_func, keys) -> None:
    def flatten(x: Any) -> tuple[tuple, Any]:
        children, aux = flatten_func(x)
        return tuple(children), aux

    _register(
        _NodeKind(
            nodetype,
            flatten=flatten,
            unflatten=lambda aux, children: unflatten_func(aux, tuple(children)),
            keys=keys,
            show=lambda aux, parts: _custom_repr(f"{nodetype.__name__}[{aux}]", parts),
        )
    )


def register_pytree_node_class(cls: type) -> type:
    """Register a class as a pytree node through its own methods; usable as a decorator.

    Arguments:
        cls: a class with a method `tree_flatten(self) -> (children, aux_data)` and a
            classmethod `tree_unflatten(cls, aux_data, children)`.

    Returns:
        `cls`, unchanged.

    Example:
        >>> from invarax.tree_util import tree_structure
        >>> @register_pytree_node_class
        ... class Scaled:
        ...     def __init__(self, x, scale):
        ...         self.x, self.scale = x, scale
        ...     def tree_flatten(self):
        ...         return (self.x,), self.scale
        ...     @classmethod
        ...     def tree_unflatten(cls, scale, children):
        ...         return cls(*children, scale)
        >>> tree_structure(Scaled(1.0, 2))
        PyTreeDef(CustomNode(Scaled[2], [*]))
    """
    register_pytree_node(cls, cls.tree_flatten, cls.tree_unflatten)
    return cls


@dataclasses.dataclass(frozen=True, slots=True)
class _KeyedAux:
    """A node's aux data with its children's keys beside it; equal (and hashed) as the aux
    data alone, since keys are not part of a tree's structure (as in JAX)."""

    aux: Any
    keys: tuple = dataclasses.field(compare=False)

    def __repr__(self):
        return repr(self.aux)


def register_pytree_with_keys(nodetype: type, flatten_with_keys, unflatten_func,
                              flatten_func=None) -> None:
    """Register a type as a pytree node whose children have keys of its choosing.

    Arguments:
        nodetype: the type to register; registering a type twice is an error.
        flatten_with_keys: maps an instance to `(key_children, aux_data)`, an iterable of
            `(key, child)` pairs (the keys show in paths) and hashable static data.
        unflatten_func: maps `(aux_data, children)` back to an instance.
        flatten_func: accepted for JAX's signature (the children are those of
            `flatten_with_keys`).

    Example:
        >>> from invarax.tree_util import tree_leaves_with_path, keystr
        >>> class Pair:
        ...     def __init__(self, a, b):
        ...         self.a, self.b = a, b
        >>> register_pytree_with_keys(
        ...     Pair, lambda p: (((GetAttrKey("a"), p.a), (GetAttrKey("b"), p.b)), None),
        ...     lambda _, c: Pair(*c))
        >>> [keystr(path) for path, _ in tree_leaves_with_path(Pair(1, 2))]
        ['.a', '.b']
    """

    def flatten(x: Any) -> tuple[tuple, _KeyedAux]:
        pairs, aux = flatten_with_keys(x)
        pairs = tuple(pairs)
        return tuple(c for _, c in pairs), _KeyedAux(aux, tuple(k for k, _ in pairs))

    _register(
        _NodeKind(
            nodetype,
            flatten=flatten,
            unflatten=lambda aux, children: unflatten_func(aux.aux, tuple(children)),
            keys=lambda aux, n: aux.keys,
            show=lambda aux, parts: _custom_repr(f"{nodetype.__name__}[{aux.aux}]", parts),
        )
    )


def register_pytree_with_keys_class(cls: type) -> type:
    """Register a class through its methods `tree_flatten_with_keys(self)` and classmethod
    `tree_unflatten(cls, aux_data, children)`; usable as a decorator."""
    register_pytree_with_keys(cls, cls.tree_flatten_with_keys, cls.tree_unflatten)
    return cls


def register_dataclass(
    nodetype: type,
    data_fields: Iterable[str] | None = None,
    meta_fields: Iterable[str] | None = None,
    drop_fields: Iterable[str] = (),
) -> type:
    """Register a dataclass-like type as a pytree node; usable as a decorator.

    Data fields are children; meta fields are static: they make up the aux data, so they
    are compared with `==` and must be hashable. Instances are rebuilt with
    `nodetype(**fields)`. A field's key in paths is `GetAttrKey(name)`.

    Arguments:
        nodetype: the type to register.
        data_fields: names of the fields that are children.
        meta_fields: names of the static fields. If both `data_fields` and `meta_fields`
            are None, `nodetype` must be a dataclass: its fields with
            `metadata={"static": True}` are meta fields, the others data fields.
        drop_fields: names of dataclass fields with `init=True` that are neither.

    Returns:
        `nodetype`, unchanged.

    Example:
        >>> from invarax.tree_util import tree_flatten
        >>> @register_dataclass
        ... @dataclasses.dataclass
        ... class Layer:
        ...     w: float
        ...     b: float
        ...     act: str = dataclasses.field(default="relu", metadata={"static": True})
        >>> tree_flatten(Layer(1.0, 2.0))
        ([1.0, 2.0], PyTreeDef(CustomNode(Layer[('relu',)], [*, *])))
    """
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError(
                "register_dataclass: pass both data_fields and meta_fields, or neither; got "
                f"data_fields={data_fields!r}, meta_fields={meta_fields!r}."
            )
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(
                f"register_dataclass: {nodetype} is not a dataclass, so data_fields and "
                "meta_fields are required."
            )
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if overlap := set(data_fields) & set(meta_fields):
        raise ValueError(
            f"register_dataclass: data_fields and meta_fields overlap: {sorted(overlap)}."
        )
    if dataclasses.is_dataclass(nodetype):
        init = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        given = set(data_fields) | set(meta_fields)
        if given != init:
            raise ValueError(
                "register_dataclass: data_fields and meta_fields must hold exactly the "
                "dataclass fields with init=True that are not in drop_fields; missing "
                f"{sorted(init - given)}, unexpected {sorted(given - init)}. Add a field "
                "to drop_fields to leave it out of the pytree."
            )
    keys = tuple(map(GetAttrKey, data_fields))

    def flatten(x: Any) -> tuple[tuple, tuple]:
        return (
            tuple([getattr(x, name) for name in data_fields]),
            tuple([getattr(x, name) for name in meta_fields]),
        )

    def unflatten(meta: tuple, data: list) -> Any:
        return nodetype(
            **dict(zip(meta_fields, meta, strict=True)),
            **dict(zip(data_fields, data, strict=True)),
        )

    _register(
        _NodeKind(
            nodetype,
            flatten=flatten,
            unflatten=unflatten,
            keys=lambda aux, n: keys,
            show=lambda aux, parts: _custom_repr(f"{nodetype.__name__}[{aux}]", parts),
            aux_label="meta fields",
        )
    )
    return nodetype


def register_static(cls: type) -> type:
    """Register a type whose instances are static: nodes without children; usable as a decorator.

    The instance itself is the node's aux data, so it must be hashable and compared by `==`.

    Arguments:
        cls: the type to register.

    Returns:
        `cls`, unchanged.

    Example:
        >>> from invarax.tree_util import tree_leaves
        >>> @register_static
        ... class Tag(str):
        ...     pass
        >>> tree_leaves([Tag("relu"), 1.0])
        [1.0]
    """
    register_pytree_node(cls, lambda x: ((), x), lambda aux, children: aux)
    return cls
