"""Imports go one way: each layer imports only the layers below it (docs/architecture.md).

Every ``import`` and ``from ... import`` of every module of the package is read from its
source, the function-level ones included, and resolved to the module it names. A module
may import its own layer and those below; no two modules may import each other, directly
or through others (no cycles, whatever the layers).
"""

from __future__ import annotations

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "invarax"

# The layers, lowest first: a top-level module or package of invarax -> its rank.
LAYERS = [
    ("core",),
    ("kernels",),
    ("interpreters",),
    ("ops",),
    ("compiler",),
    ("control_flow",),
    ("distributed",),
    ("transforms",),
    # Accelerator backends: their rules cover the primitives, calls and loops below.
    ("backends",),
    # The API namespaces (JAX's names): built on the transformations and primitives.
    ("serialise", "lax", "tree_util", "tree", "typing", "custom_derivatives",
     "checkpoint_policies", "ad_checkpoint", "sharding", "errors", "extend", "experimental"),
    ("numpy",),
    ("random", "scipy", "dtypes", "flatten_util"),
    ("module",),
    # ``debug`` serves both jax.debug and Equinox's eqx.debug (assert_max_traces, built on
    # Module), so it sits with the layers built on the module layer.
    ("nn", "debug"),
    ("optim", "example_libraries"),
    # invarax.verify(): a battery of workloads over every layer below.
    ("_verify",),
    ("__init__",),
    # The command line and test utilities use the package as a user does; the import alias
    # serves the whole package under JAX's, Equinox's and optax's names.
    ("cli", "test_util", "compat"),
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}

# Imports against the order, each with its reason. None today.
ALLOWED: dict[tuple[str, str], str] = {}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
# The compiled kernels (``kernels/_native``: an extension module, no source to read).
EXTENSIONS = {f"invarax.kernels.{name}" for name in ("_native",)}


def _imports(name: str, path: pathlib.Path) -> list[tuple[str, int]]:
    """``(module, line)`` for each invarax module that ``name`` imports."""
    tree = ast.parse(path.read_text(), str(path))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:  # ``from . import module`` names a module
                sub = f"{target}.{alias.name}"
                found.append((sub if sub in MODULES or sub in EXTENSIONS else target,
                              node.lineno))
    return [(t, line) for t, line in found if t == "invarax" or t.startswith("invarax.")]


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def test_every_top_level_module_has_a_layer():
    missing = sorted({_layer(m) for m in MODULES} - RANK.keys())
    assert not missing, f"add these to LAYERS in {__file__}: {missing}"


def test_imports_go_down_the_layers():
    wrong = []
    for name, imports in GRAPH.items():
        for target, line in imports:
            low, high = _layer(name), _layer(target)
            if RANK[high] > RANK[low] and (low, high) not in ALLOWED:
                wrong.append(f"{MODULES[name].relative_to(PACKAGE.parent)}:{line} imports "
                             f"{target} ({high} is above {low})")
    assert not wrong, "imports against the layer order:\n" + "\n".join(wrong)


def _cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w, _ in GRAPH.get(v, ()):
            if w not in MODULES or w == v:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(MODULES):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    cycles = _cycles()
    assert not cycles, "modules that import each other:\n" + "\n".join(map(str, cycles))
