"""The README is true: its example runs and asserts its bitwise claims, its test command is
CI's, its links resolve, and its benchmark table is the one in benchmarks/results.md."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).parent.parent
README = ROOT / "README.md"
TEXT = README.read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, re.S)
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def section(text: str, title: str) -> str:
    """The text of the ``## title`` section, up to the next ``## `` heading."""
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def test_readme_has_one_example():
    assert len(BLOCKS) == 1


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index):
    namespace = {"__name__": "readme"}
    exec(compile(BLOCKS[index], f"README.md block {index}", "exec"), namespace)


def test_readme_example_asserts_its_bitwise_claims():
    # the example's comments promise bitwise results: each claim is an exact assertion
    # (np.array_equal), never a tolerance; vmap, jit and a Module are all exercised
    example = BLOCKS[0]
    assert example.count("assert np.array_equal(") >= 4
    assert "allclose" not in example and "atol" not in example
    for name in ("jax.grad(", "jax.vmap(", "jax.jit(", "eqx.Module", "eqx.filter_vmap(",
                 "eqx.filter_jit("):
        assert name in example, name


def test_readme_uses_equinox_names_only():
    # `import invarax as eqx` must read as real Equinox: it has filter_vmap, not vmap
    assert not re.search(r"\beqx\.(vmap|jit|grad)\(", TEXT)


def test_ci_runs_the_readme_test_command():
    commands = re.findall(r"```bash\n(.*?)```", TEXT, re.S)
    test_command = next(c.strip() for c in commands if "pytest" in c)
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1].strip() == test_command


def test_readme_links_resolve():
    links = LINK.findall(TEXT)
    assert links
    for target in links:
        if not target.startswith(("http://", "https://")):
            assert (ROOT / target).exists(), target


def table_rows(text: str) -> dict[str, list[str]]:
    """Benchmark rows by their workload number ('1', '5a', ...): [label, cells...]."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        match = re.match(r"(\d+[a-z]?)\. ", cells[0]) if line.startswith("| ") else None
        if match:
            assert match.group(1) not in rows, f"row {match.group(1)} twice"
            rows[match.group(1)] = cells
    return rows


NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?")


def test_readme_benchmark_table_is_results_md():
    results_text = (ROOT / "benchmarks" / "results.md").read_text()
    results = table_rows(results_text)
    readme = table_rows(section(TEXT, "Benchmarks"))
    assert len(readme) >= 15
    for row, cells in readme.items():
        assert row in results, f"README row {row} is not in benchmarks/results.md"
        theirs = results[row]
        # every figure and ratio: the same string as the results file's
        assert cells[1:] == theirs[1:], (row, cells[1:], theirs[1:])
        # figures in the label (sizes, NumPy's GFLOP/s, ...) come from the results label
        assert set(NUMBER.findall(cells[0])) <= set(NUMBER.findall(theirs[0])), row
    # and the machine and library versions named beside the table are the recorded ones
    prose = section(TEXT, "Benchmarks").split("\n| workload")[0]
    machine = next(line for line in results_text.splitlines() if line.startswith("Machine:"))
    assert "AMD EPYC" in prose and "AMD EPYC" in machine
    for version in re.findall(r"\d+\.\d+\.\d+", prose):
        assert version in machine, version


def test_readme_coverage_counts_match_their_docs():
    # "396 of jax.numpy's 416 names" and the like: each count is the one its doc states
    rows = [line.strip().strip("|").split("|") for line in
            section(TEXT, "What is covered").splitlines() if line.startswith("| ")]
    rows = [row for row in rows if LINK.search(row[-1])]
    assert len(rows) >= 10  # one row per capability, each linking to its doc
    for _, what, doc in rows:
        target = LINK.search(doc).group(1)
        doc_text = (ROOT / target).read_text()
        for number in re.findall(r"\b\d{2,}\b", what):
            assert re.search(rf"\b{number}\b", doc_text), (number, target)
