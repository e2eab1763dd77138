"""No float result comes from a vendor BLAS or LAPACK (N6 in docs/numerics.md): NumPy's
``linalg``, ``dot``, ``matmul``, ``@``, ``einsum``, ``tensordot``, ... and SciPy call
OpenBLAS or MKL, whose order of operations depends on the CPU's kernel (measured:
``OPENBLAS_CORETYPE`` changes the bits of ``np.linalg.cholesky`` and of a float matmul).
invarax's contractions and factorisations are its own kernels; outside the allowed calls
below, each with its reason and a comment at its call site, naming one is a bug (route it
through ``invarax.kernels``)."""

import ast
import pathlib

import invarax

ROOT = pathlib.Path(invarax.__file__).parent
DOCS = ROOT.parent / "docs" / "numerics.md"

# The NumPy names that reach BLAS/LAPACK for float operands (np.convolve and np.correlate
# through the dtype's dot, which is cblas_sdot/ddot; cov, corrcoef through dot; polyfit
# and roots through lstsq and eigvals; vecdot, matvec, vecmat through the same dot).
VENDOR = {"linalg", "dot", "matmul", "einsum", "tensordot", "vdot", "inner", "convolve",
          "correlate", "cov", "corrcoef", "polyfit", "roots", "vecdot", "matvec", "vecmat"}
# The layers whose values are NumPy arrays: there ``a @ b`` and ``a.dot(b)`` are NumPy's.
NUMPY_VALUE_LAYERS = {"core", "kernels", "interpreters", "ops", "compiler"}
# The comment that the call site of an allowed call carries (on its line or the one above).
MARKER = "vendor BLAS allowed:"
# (file, call) pairs allowed, with the reason (docs/numerics.md lists them too).
ALLOWED = {
    ("kernels/linalg.py", "np.linalg.eig"): "eig and eigvals: LAPACK's geev, the one documented "
                                        "float exception (a nonsymmetric eigensolver of our "
                                        "own is future work)",
    ("kernels/contraction.py", "np.matmul"): "integer and bool products: exact, whatever the "
                                             "order (float dtypes take the canonical gemm)",
}


def vendor_calls(path: pathlib.Path, numpy_values: bool) -> list[tuple[int, str]]:
    """``(line, what)`` for each NumPy/SciPy BLAS or LAPACK routine the file names; with
    ``numpy_values`` also each ``@`` and ``.dot(...)`` (the operands are NumPy arrays)."""
    tree = ast.parse(path.read_text())
    aliases, found = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top == "scipy" or alias.name.startswith("numpy.linalg"):
                    found.append((node.lineno, f"import {alias.name}"))
                elif alias.name == "numpy":
                    aliases.add(alias.asname or "numpy")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            top = node.module.split(".")[0]
            if top == "scipy" or node.module.startswith("numpy.linalg"):
                found.append((node.lineno, f"from {node.module} import ..."))
            elif node.module == "numpy":
                found += [(node.lineno, f"from numpy import {a.name}")
                          for a in node.names if a.name in VENDOR]
    routines = {}  # np.linalg nodes followed by a routine's name -> that name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            routines[node.value] = node.attr
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr in VENDOR):
            what = f"{node.value.id}.{node.attr}"
            if node.attr == "linalg" and node in routines:
                what += f".{routines[node]}"  # np.linalg.eig: the routine, not the module
            found.append((node.lineno, what))
        elif numpy_values and isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(
                node.op, ast.MatMult):
            found.append((node.lineno, "@"))
        elif (numpy_values and isinstance(node, ast.Call)
              and isinstance(node.func, ast.Attribute) and node.func.attr == "dot"
              and not (isinstance(node.func.value, ast.Name) and node.func.value.id in aliases)):
            found.append((node.lineno, ".dot()"))
    return sorted(found)


def _scan(path: pathlib.Path) -> list[tuple[int, str]]:
    name = path.relative_to(ROOT)
    return vendor_calls(path, len(name.parts) > 1 and name.parts[0] in NUMPY_VALUE_LAYERS)


def test_no_vendor_blas_outside_the_allowed_calls():
    offenders = {}
    for path in sorted(ROOT.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        calls = [(line, call) for line, call in _scan(path) if (name, call) not in ALLOWED]
        if calls:
            offenders[name] = calls
    assert offenders == {}, ("NumPy/SciPy BLAS or LAPACK outside the allowed calls (route them "
                             f"through invarax's kernels): {offenders}")


def test_each_allowed_call_exists_and_says_so_where_it_is():
    """A stale entry would let a later offender in unnoticed; a call site without the comment
    would hide the exception from the next reader."""
    for (name, call), reason in ALLOWED.items():
        path = ROOT / name
        lines = path.read_text().splitlines()
        sites = [line for line, found in _scan(path) if found == call]
        assert sites, (name, call)
        for line in sites:
            nearby = "\n".join(lines[max(0, line - 3):line])
            assert MARKER in nearby, f"{name}:{line}: say '# {MARKER} {reason}' above {call}"


def test_the_numerics_page_lists_the_exceptions():
    text = DOCS.read_text()
    assert "### No vendor BLAS or LAPACK" in text
    assert "`geev`" in text and "integer" in text


def test_the_scan_finds_them(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import numpy as _np\nimport scipy.linalg\nfrom numpy import dot, add\n"
                      "from numpy.linalg import eig\n_np.linalg.solve(a, b)\nc = a @ b\n"
                      "a.dot(b)\n_np.add(a, b)\nf = _np.einsum\nc @= b\nimport numpy.linalg\n")
    assert vendor_calls(sample, numpy_values=False) == [
        (2, "import scipy.linalg"), (3, "from numpy import dot"),
        (4, "from numpy.linalg import ..."), (5, "_np.linalg.solve"), (9, "_np.einsum"),
        (11, "import numpy.linalg")]
    assert {(6, "@"), (7, ".dot()"), (10, "@")} <= set(vendor_calls(sample, numpy_values=True))
