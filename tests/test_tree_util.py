import collections
import dataclasses

import numpy as np
import pytest

import invarax.core.pytree
from invarax import tree_util as tu
from invarax.tree_util import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    SequenceKey,
    keystr,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)

Point = collections.namedtuple("Point", ["x", "y"])
Other = collections.namedtuple("Other", ["x", "y"])


class Pair:
    """Registered with register_pytree_node; aux data is a label."""

    def __init__(self, a, b, label="pair"):
        self.a, self.b, self.label = a, b, label

    def __eq__(self, other):
        return type(other) is Pair and (self.a, self.b, self.label) == (
            other.a,
            other.b,
            other.label,
        )


tu.register_pytree_node(
    Pair, lambda p: ([p.a, p.b], p.label), lambda label, children: Pair(*children, label)
)


@tu.register_pytree_node_class
class Box:
    def __init__(self, value, scale):
        self.value, self.scale = value, scale

    def tree_flatten(self):
        return (self.value,), self.scale

    @classmethod
    def tree_unflatten(cls, scale, children):
        assert isinstance(children, tuple)
        return cls(*children, scale)


@tu.register_dataclass
@dataclasses.dataclass
class Layer:
    w: object
    b: object
    act: str = dataclasses.field(default="relu", metadata={"static": True})


@tu.register_static
@dataclasses.dataclass(frozen=True)
class Config:
    size: int


NESTED = (1, {"b": [2, 3], "a": None, "c": Point(4, (5,))}, [None, 6])


def test_tree_util_reexports_everything():
    assert set(tu.__all__) == set(invarax.core.pytree.__all__) | {"Partial"}
    for name in invarax.core.pytree.__all__:
        assert getattr(tu, name) is getattr(invarax.core.pytree, name)


# --- built-in nodes -------------------------------------------------------------------


def test_flatten_roundtrip_nested():
    leaves, treedef = tree_flatten(NESTED)
    assert leaves == [1, 2, 3, 4, 5, 6]
    assert tree_unflatten(treedef, leaves) == NESTED
    assert treedef.num_leaves == 6


def test_none_is_an_empty_node():
    assert tree_leaves([1, None, 2]) == [1, 2]
    assert tree_leaves(None) == []
    _, treedef = tree_flatten(None)
    assert treedef.num_leaves == 0 and treedef.num_nodes == 1
    assert tree_unflatten(treedef, []) is None
    assert tree_map(lambda x: x + 1, [1, None]) == [2, None]


def test_leaves_are_anything_unregistered():
    x = np.arange(3)
    obj = object()
    assert tree_leaves([x, "s", 2.5, obj, b"b"])[3] is obj
    assert tree_leaves("abc") == ["abc"]

    # subclasses of containers are leaves, except namedtuples
    class MyList(list):
        pass

    class MyTuple(tuple):
        pass

    assert tree_leaves([MyList([1, 2]), MyTuple((3,))]) == [MyList([1, 2]), MyTuple((3,))]


def test_leaf_root():
    leaves, treedef = tree_flatten(3.0)
    assert leaves == [3.0]
    assert repr(treedef) == "PyTreeDef(*)"
    assert tree_unflatten(treedef, ["x"]) == "x"
    assert tu.treedef_is_leaf(treedef)


def test_dict_keys_sorted_and_rebuilt_sorted():
    tree = {"b": 1, "a": 2, "c": {"z": 3, "y": 4}}
    leaves, treedef = tree_flatten(tree)
    assert leaves == [2, 1, 4, 3]
    rebuilt = tree_unflatten(treedef, leaves)
    assert type(rebuilt) is dict
    assert list(rebuilt) == ["a", "b", "c"] and list(rebuilt["c"]) == ["y", "z"]
    assert rebuilt == tree


def test_dict_insertion_order_does_not_matter():
    assert tree_structure({"a": 1, "b": 2}) == tree_structure({"b": 2, "a": 1})


def test_unsortable_dict_keys():
    with pytest.raises(ValueError, match="must be sortable"):
        tree_flatten({1: "x", "a": "y"})


def test_ordered_dict_keeps_insertion_order():
    tree = collections.OrderedDict([("b", 1), ("a", 2)])
    leaves, treedef = tree_flatten(tree)
    assert leaves == [1, 2]
    rebuilt = tree_unflatten(treedef, [10, 20])
    assert type(rebuilt) is collections.OrderedDict
    assert list(rebuilt.items()) == [("b", 10), ("a", 20)]
    assert treedef != tree_structure(collections.OrderedDict([("a", 2), ("b", 1)]))
    assert treedef != tree_structure({"b": 1, "a": 2})


def test_defaultdict_keeps_default_factory():
    tree = collections.defaultdict(list, {"b": 1, "a": 2})
    leaves, treedef = tree_flatten(tree)
    assert leaves == [2, 1]
    rebuilt = tree_unflatten(treedef, leaves)
    assert type(rebuilt) is collections.defaultdict
    assert rebuilt.default_factory is list and rebuilt == tree
    assert treedef != tree_structure(collections.defaultdict(dict, {"b": 1, "a": 2}))


def test_namedtuple():
    leaves, treedef = tree_flatten([Point(1, (2, 3))])
    assert leaves == [1, 2, 3]
    rebuilt = tree_unflatten(treedef, leaves)
    assert type(rebuilt[0]) is Point and rebuilt == [Point(1, (2, 3))]
    assert treedef != tree_structure([Other(1, (2, 3))])
    assert treedef != tree_structure([(1, (2, 3))])


def test_empty_containers():
    for tree in [(), [], {}, collections.OrderedDict()]:
        leaves, treedef = tree_flatten(tree)
        assert leaves == [] and tree_unflatten(treedef, []) == tree
        assert type(tree_unflatten(treedef, [])) is type(tree)


def test_is_leaf():
    tree = [(1, 2), None, [3]]
    assert tree_leaves(tree, is_leaf=lambda x: isinstance(x, tuple)) == [(1, 2), 3]
    assert tree_leaves(tree, is_leaf=lambda x: x is None) == [1, 2, None, 3]
    assert tree_leaves(tree, is_leaf=lambda x: x is tree) == [tree]
    treedef = tree_structure(tree, is_leaf=lambda x: x is None)
    assert repr(treedef) == "PyTreeDef([(*, *), *, [*]])"
    mapped = tree_map(lambda x: "none" if x is None else x, tree, is_leaf=lambda x: x is None)
    assert mapped == [(1, 2), "none", [3]]


def test_tree_unflatten_accepts_any_iterable():
    treedef = tree_structure([1, (2, 3)])
    assert tree_unflatten(treedef, iter("abc")) == ["a", ("b", "c")]


def test_tree_unflatten_wrong_number_of_leaves():
    treedef = tree_structure((1, 2, 3))
    with pytest.raises(ValueError, match=r"Too few leaves .*: expected 3, got 2"):
        tree_unflatten(treedef, [1, 2])
    with pytest.raises(ValueError, match=r"Too many leaves .*: expected 3, got 4"):
        tree_unflatten(treedef, [1, 2, 3, 4])
    with pytest.raises(ValueError, match=r"Too many leaves for PyTreeDef\(\*\): expected 1"):
        tree_unflatten(tree_structure(1), [1, 2])


# --- registration ---------------------------------------------------------------------


def test_register_pytree_node():
    tree = [Pair(1, (2, 3), "p"), 4]
    leaves, treedef = tree_flatten(tree)
    assert leaves == [1, 2, 3, 4]
    assert tree_unflatten(treedef, leaves) == tree
    assert repr(treedef) == "PyTreeDef([CustomNode(Pair[p], [*, (*, *)]), *])"
    assert treedef != tree_structure([Pair(1, (2, 3), "q"), 4])


def test_register_pytree_node_class():
    leaves, treedef = tree_flatten(Box([1, 2], scale=3))
    assert leaves == [1, 2]
    box = tree_unflatten(treedef, [5, 6])
    assert type(box) is Box and box.value == [5, 6] and box.scale == 3
    assert repr(treedef) == "PyTreeDef(CustomNode(Box[3], [[*, *]]))"


def test_register_dataclass_with_static_field():
    layer = Layer(np.ones(2), 0.5, act="tanh")
    leaves, treedef = tree_flatten(layer)
    assert leaves[1] == 0.5 and leaves[0] is layer.w
    rebuilt = tree_unflatten(treedef, [1, 2])
    assert rebuilt == Layer(1, 2, act="tanh")
    assert repr(treedef) == "PyTreeDef(CustomNode(Layer[('tanh',)], [*, *]))"
    assert treedef == tree_structure(Layer(3, 4, act="tanh"))
    assert treedef != tree_structure(Layer(3, 4, act="relu"))


def test_register_dataclass_explicit_fields_and_drop_fields():
    @dataclasses.dataclass
    class Cell:
        h: object
        c: object
        name: str
        cache: object = dataclasses.field(default=None, init=False)

    tu.register_dataclass(Cell, data_fields=["c", "h"], meta_fields=["name"])
    assert tree_leaves(Cell(1, 2, "lstm")) == [2, 1]
    assert tree_unflatten(tree_structure(Cell(1, 2, "x")), [3, 4]) == Cell(4, 3, "x")

    @dataclasses.dataclass
    class Tagged:
        x: object
        tag: str = "t"

    tu.register_dataclass(Tagged, drop_fields=["tag"])
    assert tree_leaves(Tagged(1)) == [1]


def test_register_dataclass_errors():
    @dataclasses.dataclass
    class D:
        x: object
        y: object

    with pytest.raises(TypeError, match="both data_fields and meta_fields, or neither"):
        tu.register_dataclass(D, data_fields=["x", "y"])
    with pytest.raises(TypeError, match="is not a dataclass"):
        tu.register_dataclass(Pair)
    with pytest.raises(ValueError, match=r"missing \['y'\], unexpected \[\]"):
        tu.register_dataclass(D, data_fields=["x"], meta_fields=[])
    with pytest.raises(ValueError, match=r"missing \[\], unexpected \['z'\]"):
        tu.register_dataclass(D, data_fields=["x", "y", "z"], meta_fields=[])
    with pytest.raises(ValueError, match=r"overlap: \['x'\]"):
        tu.register_dataclass(D, data_fields=["x", "y"], meta_fields=["x"])


def test_register_static():
    tree = {"config": Config(3), "w": 1.0}
    leaves, treedef = tree_flatten(tree)
    assert leaves == [1.0]
    assert tree_unflatten(treedef, [2.0]) == {"config": Config(3), "w": 2.0}
    assert treedef != tree_structure({"config": Config(4), "w": 1.0})


def test_duplicate_registration():
    for nodetype in [Pair, tuple, dict, type(None), collections.OrderedDict]:
        with pytest.raises(ValueError, match="Duplicate pytree node type registration"):
            tu.register_pytree_node(nodetype, lambda x: ((), None), lambda aux, c: None)
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_dataclass(Layer)


def test_registered_namedtuple_takes_precedence():
    Vec = collections.namedtuple("Vec", ["x", "y"])
    assert tree_leaves(Vec(1, 2)) == [1, 2]
    tu.register_pytree_node(Vec, lambda v: ((v.y,), v.x), lambda x, c: Vec(x, *c))
    assert tree_leaves(Vec(1, 2)) == [2]


# --- treedefs -------------------------------------------------------------------------


def test_treedef_properties():
    treedef = tree_structure((1, {"a": 2, "b": [3, 4]}))
    assert treedef.num_leaves == 4
    assert treedef.num_nodes == 7
    assert treedef.children() == [tree_structure(1), tree_structure({"a": 2, "b": [3, 4]})]
    assert tree_structure(1).children() == []
    assert treedef.unflatten("wxyz") == ("w", {"a": "x", "b": ["y", "z"]})
    assert tree_structure([1, None]).num_nodes == 3


def test_treedef_equality_and_hash():
    a = tree_structure({"x": (np.ones(2), None), "y": Point(1, 2)})
    b = tree_structure({"y": Point("u", "v"), "x": ("s", None)})
    assert a == b and hash(a) == hash(b)
    assert len({a, b}) == 1
    cache = {a: "hit"}
    assert cache[b] == "hit"
    different = [
        tree_structure({"x": [1, None], "y": Point(1, 2)}),  # list vs tuple
        tree_structure({"x": (1, 2), "y": Point(1, 2)}),  # leaf vs None
        tree_structure({"z": (1, None), "y": Point(1, 2)}),  # keys
        tree_structure({"x": (1, None), "y": Other(1, 2)}),  # namedtuple type
        tree_structure({"x": (1, None), "y": (1, 2)}),
    ]
    for other in different:
        assert a != other
    assert len(set(different)) == len(different)
    assert tree_structure(1) != 1


def test_treedef_hash_with_unhashable_aux():
    treedef = tree_structure(Pair(1, 2, label=["unhashable"]))
    same = tree_structure(Pair(3, 4, label=["unhashable"]))
    assert treedef == same and hash(treedef) == hash(same)
    assert treedef != tree_structure(Pair(3, 4, label=["other"]))


def test_treedef_is_immutable():
    treedef = tree_structure((1, 2))
    with pytest.raises(AttributeError):
        treedef.extra = 1


@pytest.mark.parametrize(
    ("tree", "expected"),
    [
        ((1, {"b": [2, 3], "a": 1}), "PyTreeDef((*, {'a': *, 'b': [*, *]}))"),
        ([1, None, 2], "PyTreeDef([*, None, *])"),
        (None, "PyTreeDef(None)"),
        ((1,), "PyTreeDef((*,))"),
        ((), "PyTreeDef(())"),
        ({}, "PyTreeDef({})"),
        (Point(1, 2), "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))"),
        (
            collections.OrderedDict([("b", 1), ("a", 2)]),
            "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))",
        ),
        (
            collections.defaultdict(list, {"b": 1, "a": 2}),
            "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))",
        ),
        (Layer(1, 2), "PyTreeDef(CustomNode(Layer[('relu',)], [*, *]))"),
    ],
)
def test_repr(tree, expected):
    assert repr(tree_structure(tree)) == expected


def test_flatten_up_to():
    treedef = tree_structure((1, {"a": 2, "b": None}))
    full = ([1, 2], {"b": None, "a": {"deep": (3,)}})
    assert treedef.flatten_up_to(full) == [[1, 2], {"deep": (3,)}]
    assert tree_structure(1).flatten_up_to({"x": 1}) == [{"x": 1}]
    assert tree_structure(Point(1, 2)).flatten_up_to(Point([1], 2)) == [[1], 2]


@pytest.mark.parametrize(
    ("prefix", "tree", "message"),
    [
        (
            (1, 2),
            (1, 2, 3),
            r"at the root: different numbers of children: expected a tuple with 2 children, got 3",
        ),
        ([1, (2, 3)], [1, [2, 3]], r"at \[1\]: different types: expected tuple, got list"),
        (
            {"a": 1, "b": 2},
            {"a": 1, "c": 2},
            r"at the root: different keys of dict nodes: expected \('a', 'b'\), got \('a', 'c'\)",
        ),
        ({"a": 1}, {"a": 1, "b": 2}, r"different keys of dict nodes"),
        (
            [{"a": None}],
            [{"a": 3}],
            r"at \[0\]\['a'\]: different types: expected NoneType, got int",
        ),
        (Point(1, 2), Other(1, 2), r"different types: expected Point, got Other"),
        (Point(1, 2), (1, 2), r"different types: expected Point, got tuple"),
        (Point([1], 2), Point((1,), 2), r"at \.x: different types: expected list, got tuple"),
        (
            collections.OrderedDict([("a", 1), ("b", 2)]),
            collections.OrderedDict([("b", 1), ("a", 2)]),
            r"different keys \(in order\) of OrderedDict nodes",
        ),
        (
            collections.defaultdict(list, a=1),
            collections.defaultdict(dict, a=1),
            r"different default_factory and keys of defaultdict nodes",
        ),
        (Layer(1, 2), Layer(1, 2, act="tanh"), r"different meta fields of Layer nodes"),
        (Pair(1, [2]), Pair(1, [2, 3]), r"at \[<flat index 1>\]: different numbers"),
    ],
)
def test_flatten_up_to_mismatch(prefix, tree, message):
    treedef = tree_structure(prefix)
    with pytest.raises(ValueError, match=message) as info:
        treedef.flatten_up_to(tree)
    text = str(info.value)
    assert f"expected structure: {treedef}" in text
    assert f"got structure:      {tree_structure(tree)}" in text


# --- maps and reductions --------------------------------------------------------------


def test_tree_map_single_tree():
    assert tree_map(lambda x: x * 2, NESTED) == (
        2,
        {"a": None, "b": [4, 6], "c": Point(8, (10,))},
        [None, 12],
    )


def test_tree_map_several_trees():
    tree = {"a": 1, "b": (2, None)}
    other = {"b": (20, None), "a": 10}
    third = {"a": 100, "b": (200, None)}
    assert tree_map(lambda x, y, z: x + y + z, tree, other, third) == {"a": 111, "b": (222, None)}


def test_tree_map_rest_trees_may_have_the_first_as_prefix():
    result = tree_map(lambda x, y: (x, y), (1, 2), ([3, 4], {"c": 5}))
    assert result == ((1, [3, 4]), (2, {"c": 5}))
    # a leaf of the first tree may meet None in another
    assert tree_map(lambda x, y: y, [1, 2], [None, 3]) == [None, 3]


def test_tree_map_mismatch_errors():
    def add(x, y):
        return x + y

    with pytest.raises(ValueError, match=r"tree_map: rest\[0\] does not have the structure"):
        tree_map(add, (1, 2), (1, 2, 3))
    with pytest.raises(ValueError, match=r"rest\[1\].*different types: expected tuple, got list"):
        tree_map(lambda x, y, z: x, (1, 2), (1, 2), [1, 2])
    with pytest.raises(ValueError, match=r"different keys of dict nodes") as info:
        tree_map(add, {"a": 1}, {"b": 1})
    assert "expected structure: PyTreeDef({'a': *})" in str(info.value)
    assert "got structure:      PyTreeDef({'b': *})" in str(info.value)
    with pytest.raises(ValueError, match=r"at \[1\]: different types: expected NoneType"):
        tree_map(add, (1, None), (1, 3))
    with pytest.raises(ValueError, match=r"at \['x'\]: different numbers of children"):
        tree_map(add, {"x": [1, 2]}, {"x": [1, 2, 3]})


def test_tree_all_and_reduce():
    assert tu.tree_all([True, {"a": 1, "b": None}])
    assert not tu.tree_all([True, (0,)])
    assert tu.tree_all([])
    assert tu.tree_all([None, 0], is_leaf=lambda x: x == 0) is False
    assert tu.tree_reduce(lambda a, b: a + b, [1, (2, 3)]) == 6
    assert tu.tree_reduce(lambda a, b: a + b, [1, (2, 3)], 10) == 16
    assert tu.tree_reduce(lambda a, b: a + b, [], 0) == 0
    assert tu.tree_reduce(
        lambda a, b: [*a, b], [(1, 2)], [], is_leaf=lambda x: isinstance(x, tuple)
    ) == [(1, 2)]
    with pytest.raises(TypeError):
        tu.tree_reduce(lambda a, b: a + b, [])


def test_all_leaves_and_treedef_is_leaf():
    assert tu.all_leaves([1, "a", np.ones(2)])
    assert not tu.all_leaves([1, None])
    assert not tu.all_leaves([1, (2,)])
    assert not tu.all_leaves([Point(1, 2)])
    assert tu.all_leaves([1, None], is_leaf=lambda x: x is None)
    assert tu.all_leaves(tree_leaves(NESTED))
    assert not tu.treedef_is_leaf(tree_structure(None))
    assert not tu.treedef_is_leaf(tree_structure((1,)))
    assert tu.treedef_is_leaf(tree_structure(None, is_leaf=lambda x: x is None))


# --- paths ----------------------------------------------------------------------------


def test_key_reprs_and_strs():
    keys = (SequenceKey(0), DictKey("a"), GetAttrKey("x"), FlattenedIndexKey(1))
    assert [repr(k) for k in keys] == [
        "SequenceKey(idx=0)",
        "DictKey(key='a')",
        "GetAttrKey(name='x')",
        "FlattenedIndexKey(key=1)",
    ]
    assert keystr(keys) == "[0]['a'].x[<flat index 1>]"
    assert keystr(keys, simple=True, separator="/") == "0/a/x/1"
    assert keystr(()) == ""
    assert SequenceKey(0) == SequenceKey(0) and hash(DictKey("a")) == hash(DictKey("a"))


def test_tree_flatten_with_path_builtins():
    pairs, treedef = tu.tree_flatten_with_path(NESTED)
    assert treedef == tree_structure(NESTED)
    assert [leaf for _, leaf in pairs] == tree_leaves(NESTED)
    assert [keystr(path) for path, _ in pairs] == [
        "[0]",
        "[1]['b'][0]",
        "[1]['b'][1]",
        "[1]['c'].x",
        "[1]['c'].y[0]",
        "[2][1]",
    ]
    assert pairs[3][0] == (SequenceKey(1), DictKey("c"), GetAttrKey("x"))


def test_tree_flatten_with_path_other_nodes():
    tree = [
        collections.OrderedDict([("b", 1), ("a", 2)]),
        collections.defaultdict(list, {"d": 3, "c": 4}),
        Pair(5, 6),
        Layer(7, 8),
        Box(9, 1),
        Config(1),
    ]
    paths = [keystr(path) for path, _ in tu.tree_leaves_with_path(tree)]
    assert paths == [
        "[0]['b']",
        "[0]['a']",
        "[1]['c']",
        "[1]['d']",
        "[2][<flat index 0>]",
        "[2][<flat index 1>]",
        "[3].w",
        "[3].b",
        "[4][<flat index 0>]",
    ]


def test_paths_with_is_leaf_and_leaf_root():
    pairs, _ = tu.tree_flatten_with_path({"a": (1, 2)}, is_leaf=lambda x: isinstance(x, tuple))
    assert pairs == [((DictKey("a"),), (1, 2))]
    assert tu.tree_leaves_with_path(5) == [((), 5)]


def test_tree_map_with_path():
    tree = {"b": [1, None], "a": Point(2, 3)}
    result = tu.tree_map_with_path(lambda path, x: f"{keystr(path)}:{x}", tree)
    assert result == {"a": Point("['a'].x:2", "['a'].y:3"), "b": ["['b'][0]:1", None]}
    total = tu.tree_map_with_path(lambda path, x, y: (len(path), x + y), [1, (2,)], [10, (20,)])
    assert total == [(1, 11), ((2, 22),)]
    with pytest.raises(ValueError, match=r"tree_map_with_path: rest\[0\]"):
        tu.tree_map_with_path(lambda path, x, y: x, [1], [1, 2])


# --- differential tests against JAX ---------------------------------------------------

ORACLE_TREES = [
    NESTED,
    {"z": {"b": None, "a": [1, (2, None)]}, "y": 3},
    [None, None, 1],
    Point(Point(1, 2), {"k": 3}),
    collections.OrderedDict([("z", 1), ("a", {"q": 2, "p": 3})]),
    collections.defaultdict(list, {"z": 1, "a": [2, None]}),
    ((), [], {}, None, 4),
]


@pytest.mark.parametrize("tree", ORACLE_TREES)
def test_matches_jax_flatten(tree):
    jtu = pytest.importorskip("jax").tree_util
    leaves, treedef = tree_flatten(tree)
    jax_leaves, jax_treedef = jtu.tree_flatten(tree)
    assert leaves == jax_leaves
    assert repr(treedef) == repr(jax_treedef)
    assert (treedef.num_leaves, treedef.num_nodes) == (
        jax_treedef.num_leaves,
        jax_treedef.num_nodes,
    )
    assert tree_unflatten(treedef, range(len(leaves))) == jtu.tree_unflatten(
        jax_treedef, range(len(leaves))
    )
    paths = [tuple(map(repr, path)) for path, _ in tu.tree_leaves_with_path(tree)]
    jax_paths = [tuple(map(repr, path)) for path, _ in jtu.tree_leaves_with_path(tree)]
    assert paths == jax_paths


@pytest.mark.parametrize("tree", ORACLE_TREES)
def test_matches_jax_is_leaf_none(tree):
    jtu = pytest.importorskip("jax").tree_util

    def is_none(x):
        return x is None

    assert tree_leaves(tree, is_leaf=is_none) == jtu.tree_leaves(tree, is_leaf=is_none)
    assert tu.all_leaves(tree_leaves(tree)) == jtu.all_leaves(jtu.tree_leaves(tree))


def test_matches_jax_prefix_map_and_mismatches():
    jtu = pytest.importorskip("jax").tree_util

    def pair(x, y):
        return (x, y)

    cases = [
        ((1, 2), ([3, 4], {"c": 5})),
        ({"a": 1, "b": None}, {"b": None, "a": [2]}),
        ([1, 2], [None, 3]),
        ((1, 2), (1, 2, 3)),
        ({"a": 1}, {"b": 1}),
        ((1, None), (1, 3)),
        (Point(1, 2), (1, 2)),
        (collections.OrderedDict(a=1, b=2), collections.OrderedDict(b=1, a=2)),
    ]
    for tree, other in cases:
        try:
            expected = jtu.tree_map(pair, tree, other)
        except ValueError:
            with pytest.raises(ValueError):
                tree_map(pair, tree, other)
        else:
            assert tree_map(pair, tree, other) == expected
