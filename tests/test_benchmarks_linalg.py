"""The linalg/FFT benchmark runs end to end on tiny sizes (no timing is asserted)."""

from benchmarks import __main__ as harness


def test_tiny_linalg_table(capsys):
    harness.main(["--linalg", "--tiny"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "(ms)" in line]
    assert len(rows) == 7
    assert "load average" in out


def test_tiny_accuracy_table(capsys):
    from benchmarks import linalg

    linalg.main(["--tiny", "--accuracy"])
    assert "| invarax float32 |" in capsys.readouterr().out


def test_tiny_accuracy_table_float64(capsys):
    import invarax
    from benchmarks import linalg

    linalg.main(["--tiny", "--accuracy", "--x64"])
    out = capsys.readouterr().out
    assert "| invarax float64 |" in out and "| numpy float64 |" in out
    assert not invarax.config.read("jax_enable_x64")  # restored
