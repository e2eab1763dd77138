"""Multi-process runs over MPI (mpiexec on this machine, bounded in time): the same bits for
any split of the devices into processes (N7), equal to vmap; sharded arrays, jit with
shardings and shard_map across processes bitwise the unsharded program; a process that dies or hangs
makes the run fail within a bounded time. Skipped without mpi4py and mpiexec."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mpi4py")
MPIEXEC = shutil.which("mpiexec")
pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="mpiexec is not installed")

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests" / "mpi_program.py"
EXAMPLE = ROOT / "examples" / "data_parallel.py"
SHARDING = ROOT / "tests" / "mpi_sharding_program.py"


def _run(processes, devices, *args, timeout=120, **env):
    command = [MPIEXEC, "-n", str(processes), sys.executable, *map(str, args)]
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), "DEVICES": str(devices),
                "INVARAX_NUM_THREADS": "1", **env}
    return subprocess.run(command, cwd=ROOT, env=full_env, capture_output=True, text=True,
                          timeout=timeout)


def _line(result, key):
    assert result.returncode == 0, result.stderr[-3000:]
    return next(line for line in result.stdout.splitlines() if line.startswith(key))


def test_collectives_give_the_same_bits_for_every_layout_and_equal_vmap():
    results = [_run(p, d, PROGRAM, "layout") for p, d in [(1, 4), (2, 2), (4, 1)]]
    digests = {_line(r, "digest") for r in results}
    assert len(digests) == 1, digests
    assert all(_line(r, "equals vmap") == "equals vmap True" for r in results)


def test_data_parallel_training_ends_bitwise_equal_for_every_layout():
    # 20 Adam steps of an MLP, gradients pmean'd over 4 devices: 1x4, 2x2 and 4x1.
    runs = [_run(p, d, EXAMPLE, "--devices", d, *(["--mpi"] if p > 1 else []))
            for p, d in [(1, 4), (2, 2), (4, 1)]]
    digests = {_line(r, "digest") for r in runs}
    assert len(digests) == 1, digests


def test_sharded_arrays_jit_and_shard_map_across_processes_are_bitwise_unsharded():
    # An MLP train step with the batch split, the weights' contracted axis split, both, and
    # nothing split, its arguments built from each process's part; a shard_map with psum
    # and all_gather: bitwise the unsharded step and vmap, the same digest for 1x4, 2x2, 4x1.
    runs = [_run(p, d, SHARDING) for p, d in [(1, 4), (2, 2), (4, 1)]]
    rows = [line.split() for r in runs for line in r.stdout.splitlines()
            if line.startswith("bitwise")]
    assert len(rows) == 7, [r.stderr[-2000:] for r in runs]
    assert {tuple(row[:6]) for row in rows} == {
        ("bitwise", "True", "placement", "True", "errors", "True")}, rows
    assert len({row[7] for row in rows}) == 1, rows  # one digest


def test_the_shared_memory_and_mpi_gathers_give_every_process_bytes_in_order():
    for processes in (2, 3):
        assert _line(_run(processes, 1, PROGRAM, "transports"), "transports") == \
            "transports True"


def test_a_dead_process_ends_the_run():
    result = _run(2, 1, PROGRAM, "die", timeout=60)
    assert result.returncode != 0


def test_a_hung_process_times_out_with_a_clear_error():
    result = _run(2, 1, PROGRAM, "hang", timeout=60, INVARAX_COLLECTIVE_TIMEOUT="1")
    assert result.returncode != 0
    assert "waited 1 s for the other processes" in result.stderr
    assert "INVARAX_COLLECTIVE_TIMEOUT" in result.stderr


def test_processes_on_one_machine_share_its_cores():
    # Without INVARAX_NUM_THREADS, each of P processes on this machine gets CPUs // P kernel
    # threads (at least one), so their kernels do not oversubscribe the cores.
    result = _run(2, 1, PROGRAM, "threads", INVARAX_NUM_THREADS="")
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [line.split() for line in result.stdout.splitlines() if line.startswith("threads")]
    assert len(rows) == 2
    for _, threads, cpus in rows:
        assert int(threads) == max(1, int(cpus) // 2)
