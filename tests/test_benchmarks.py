"""The benchmark harness runs end to end on tiny sizes; no timing is asserted."""

import importlib.util

import pytest

from benchmarks import __main__ as harness
from benchmarks import peers, problems
from benchmarks.report import DASH

# The peers' own deprecation warnings (torch.func's jacfwd scripts decompositions).
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_tiny_run_writes_table_results_and_chart(tmp_path, capsys):
    harness.main(["--tiny", "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    results = (tmp_path / "results.md").read_text()
    table = results[results.index("| workload |") :].split("\n\n")[0]
    assert table in printed
    assert "Command: `python -m benchmarks --tiny`" in results
    header, _, *rows = table.splitlines()
    assert header.split(" | ")[1:5] == list(peers.TITLES.values())
    assert len(rows) == 19  # 1-9, control flow 10-12, convolution 13-16, transformer 17
    installed = peers.installed()
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[1] != DASH  # invarax runs every workload
        for name, cell in zip(peers.TITLES, cells[1:5], strict=True):
            if name not in installed:
                assert cell == DASH
    chart = "jax" in installed and importlib.util.find_spec("matplotlib") is not None
    assert (tmp_path / "ratios.png").exists() == chart


def test_configs_share_the_workload_sizes_of_the_issue():
    full, quick = problems.CONFIGS["full"], problems.CONFIGS["quick"]
    assert (full.mlp, full.batch, full.points, full.elementwise, full.jacobian) == (
        (784, 512, 512, 10), 256, 10_000, 10_000_000, 1000,
    )  # fmt: skip
    assert (quick.mlp, quick.example_batch, quick.steps) == (full.mlp, 128, 100)


def test_transformer_row_has_the_issue_sizes_and_equinox_parameters():
    from benchmarks import transformer

    # batch 8, seq 128, d 256, 4 heads (issue 17)
    assert transformer.sizes(problems.CONFIGS["full"]) == (8, 128, 256, 4)
    assert transformer.sizes(problems.CONFIGS["quick"]) == (8, 128, 256, 4)
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    import numpy as np

    import invarax

    ours = transformer.block_class(invarax, invarax)(8, 2, key=invarax.random.key(0))
    theirs = transformer.block_class(jax, eqx)(8, 2, key=jax.random.key(0))
    mine = invarax.tree_util.tree_leaves(invarax.filter(ours, invarax.is_array))
    peer = jax.tree_util.tree_leaves(eqx.filter(theirs, eqx.is_array))
    assert len(mine) == len(peer) == 12
    for a, b in zip(mine, peer, strict=True):
        assert np.array_equal(np.asarray(a), np.asarray(b))


def test_control_flow_rows_run_alone(capsys):
    from benchmarks import control_flow

    control_flow.main(["--tiny", "--repeats", "1"])
    printed = capsys.readouterr().out
    assert all(f"| {key} |" in printed for key in control_flow.ROWS)


def test_target_rows_run_and_print_a_line_per_run(capsys):
    pytest.importorskip("jax")
    from benchmarks import targets

    targets.main(["--tiny", "--runs", "2", "--rows", "jacrev,conv"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("# all threads, wall clock")
    assert [line.split(":")[0] for line in lines[1:]] == [
        "jacrev run 0", "jacrev run 1", "conv run 0", "conv run 1"]
    assert "conv/square gemm" in lines[-1] and "load" in lines[-1]


def test_elementary_flag_row_runs_and_restores_the_flag():
    import invarax
    from benchmarks import elementary_flag

    row = elementary_flag.fused_row(1000, repeats=1)
    assert row.startswith("fused expression of workload 4") and "ratio" in row
    assert invarax.config.invarax_exact_elementary


def test_fusion_sizes_prints_a_row_per_expression(capsys):
    from benchmarks import fusion_sizes

    fusion_sizes.main(["--repeats", "1"])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("  ")[0] for line in lines[2:]] == ["w - 0.01 g", "tanh, 1 - y*y",
                                                           "w*0.9 + g*0.1 - w*g"]
    assert all(line.count(" / ") == 4 for line in lines[2:])
