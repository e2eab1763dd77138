"""Every reduction and contraction is computed in invarax/kernels/ and nowhere else."""

import ast
import pathlib

import invarax

ROOT = pathlib.Path(invarax.__file__).parent

# NumPy functions that reduce or contract; outside kernels/ they would bypass the
# canonical order (docs/numerics.md).
REDUCING = {
    "sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin",
    "cumsum", "cumprod", "matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum",
    "nansum", "nanprod", "average", "trace", "linalg", "median", "logaddexp", "convolve",
}
UFUNC_METHODS = {"reduce", "accumulate", "reduceat", "at"}
# Files allowed NumPy reductions, with the reason.
ALLOWED = {
    "test_util.py": "check_grads' own float64 arithmetic (inner products, error sizes) "
                    "checks derivatives; it computes no value a transformation returns",
    "module/internal/_unvmap.py": "unvmap_any/all/max over the batch axis: a boolean any/all "
                                  "and a max, exact in any order",
}


def numpy_reductions(path):
    """``(line, call)`` for each NumPy reduction called in the file at ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Attribute):
            continue
        chain = []
        inner = node
        while isinstance(inner, ast.Attribute):
            chain.append(inner.attr)
            inner = inner.value
        if isinstance(inner, ast.Name) and inner.id == "np":
            names = chain[::-1]
            if names[0] in REDUCING or (len(names) > 1 and names[-1] in UFUNC_METHODS):
                found.append((node.lineno, "np." + ".".join(names)))
    return found


def test_no_reduction_outside_kernels():
    offenders = {
        str(path.relative_to(ROOT)): numpy_reductions(path)
        for path in ROOT.rglob("*.py")
        if "kernels" not in path.parts and str(path.relative_to(ROOT)) not in ALLOWED
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_scan_finds_reductions(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import numpy as np\nnp.add.reduce(x)\nnp.matmul(a, b)\nnp.sin(x)\n")
    assert numpy_reductions(sample) == [(2, "np.add.reduce"), (3, "np.matmul")]
