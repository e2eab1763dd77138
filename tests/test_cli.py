"""The ``invarax`` command: the README's main job (``invarax demo``) and ``invarax ir``."""

import importlib.util
import io
import os
import re
import sys
import textwrap

import numpy as np
import pytest

from invarax.cli import _demo as cli_demo
from invarax.cli import _main as cli
from invarax.cli import _report as _cli_report
from invarax.cli._ir import UsageError, parse_avals

HAVE_JAX = importlib.util.find_spec("jax") is not None

USER_MODULE = textwrap.dedent("""
    import invarax.numpy as jnp

    def loss(w, b):
        return jnp.sum(jnp.sin(w) * b)

    def expr(x1, x2):
        return (x1 / x2 - jnp.exp(x2)) * (jnp.sin(x1 / x2) + x1 / x2 - jnp.exp(x2))

    class Holder:
        @staticmethod
        def double(x):
            return 2.0 * x
""")


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "usermod_cli.py").write_text(USER_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "usermod_cli"


def test_demo_trains_and_reports_bitwise(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.setattr(_cli_report, "torch_checks", lambda *args: None)
    out = io.StringIO()
    png = tmp_path / "loss.png"
    assert cli_demo.demo(out, steps=150, png=str(png), peers=True) == 0
    text = out.getvalue()
    assert "training [##############################] 150/150" in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = text.split("reproducibility report")[1].strip().splitlines()[1:]
    header, rows = table[0].split(), table[1:len(_cli_report.CHECKS) + 1]
    assert header == ["invarax", "JAX", "PyTorch"] if HAVE_JAX else header[0] == "invarax"
    for check, row in zip(_cli_report.CHECKS, rows, strict=True):
        cells = re.split(r"\s{2,}", row.strip())
        assert cells[0] == check and cells[1] == "bitwise equal", row
        assert cells[-1] == "not installed"


def test_demo_fails_when_training_does_not_converge(tmp_path):
    out = io.StringIO()
    assert cli_demo.demo(out, steps=2, png="", peers=False) == 1
    assert "lower) in 2 steps" in out.getvalue()


def test_main_runs_the_demo(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["demo", "--steps", "150", "--no-peers", "--png", ""]) == 0
    assert "reproducibility report" in capsys.readouterr().out
    assert cli.main(["demo", "--steps", "0"]) == 2


@pytest.fixture
def no_training(monkeypatch):
    """Fail the test if the demo starts training: a bad --png must stop it before."""
    def train(*args, **kwargs):
        raise AssertionError("the demo trained before checking --png")

    monkeypatch.setattr(cli_demo, "train", train)


@pytest.mark.parametrize("where, message", [
    ("missing/dir/x.png", "does not exist: create it (mkdir -p "),
    ("", "is a directory: give a file name such as "),
])
def test_demo_bad_png_is_one_line_before_training(tmp_path, capsys, no_training,
                                                  where, message):
    png = str(tmp_path / where) if where else str(tmp_path)
    assert cli.main(["demo", "--no-peers", "--png", png]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("invarax demo: error: ")
    assert message in captured.err and "--png '' skips the plot" in captured.err


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root can write to any directory")
def test_demo_png_in_a_read_only_directory(tmp_path, capsys, no_training):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        assert cli.main(["demo", "--png", str(folder / "x.png")]) == 2
    finally:
        folder.chmod(0o700)
    assert "is not writable: choose another path" in capsys.readouterr().err


def test_demo_png_without_matplotlib(tmp_path, monkeypatch, capsys, no_training):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    assert cli.main(["demo", "--png", str(tmp_path / "x.png")]) == 2
    assert "needs matplotlib, which is not installed: pip install matplotlib" in (
        capsys.readouterr().err)
    monkeypatch.chdir(tmp_path)  # without --png the plot is skipped, not an error
    assert cli._png_path(None) == ("invarax-demo-loss.png", None)
    assert cli._png_path("") == ("", None)


def run_ir(capsys, *argv):
    code = cli.main(["ir", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_ir_prints_the_jaxpr(user_module, capsys):
    code, out, _ = run_ir(capsys, f"{user_module}:loss", "--args", "f32[3],f32[3]")
    assert code == 0
    assert out.startswith("{ lambda ; a:f32[3] b:f32[3]. let")
    assert "sin a" in out and "reduce_sum" in out


def test_ir_grad_jvp_vmap(user_module, capsys):
    _, grad_out, _ = run_ir(capsys, f"{user_module}:loss", "--args", "f32[3],f32[3]", "--grad")
    assert "cos a" in grad_out and grad_out.rstrip().splitlines()[-1].count(",") == 1
    _, jvp_out, _ = run_ir(capsys, f"{user_module}:loss", "--args", "f32[3],f32[3]", "--jvp")
    assert jvp_out.startswith("{ lambda ; a:f32[3] b:f32[3] c:f32[3] d:f32[3]. let")
    _, vmap_out, _ = run_ir(capsys, f"{user_module}:Holder.double", "--args", "f32[2]",
                            "--vmap", "--batch", "5")
    assert vmap_out.startswith("{ lambda ; a:f32[5,2]. let")


def test_ir_optimize_shows_one_div_and_one_exp(user_module, capsys):
    _, plain, _ = run_ir(capsys, f"{user_module}:expr", "--args", "f32[8],f32[8]")
    code, optimised, _ = run_ir(capsys, f"{user_module}:expr", "--args", "f32[8],f32[8]",
                                "--optimize")
    assert code == 0
    assert plain.count(" div ") == 3 and plain.count(" exp ") == 2
    assert optimised.count(" div ") == 1 and optimised.count(" exp ") == 1


def test_ir_x64_arguments_do_not_leak_the_flag(user_module, capsys):
    import invarax

    code, out, _ = run_ir(capsys, f"{user_module}:loss", "--args", "f64[2],f64[2]")
    assert code == 0 and "a:f64[2]" in out
    assert invarax.config.jax_enable_x64 is False


@pytest.mark.parametrize("argv, message", [
    (["nocolon", "--args", "f32[]"], "expected MODULE:FUNCTION"),
    (["no_such_module_xyz:f", "--args", "f32[]"], "cannot import module 'no_such_module_xyz'"),
    (["{mod}:missing", "--args", "f32[]"], "has no attribute 'missing'"),
    (["{mod}:loss", "--args", "float[3]"], "unknown dtype 'float'"),
    (["{mod}:loss", "--args", "f32(3)"], "write abstract values as in a jaxpr"),
    (["{mod}:loss", "--args", "f32[3]"], "cannot take the 1 argument(s)"),
])
def test_ir_usage_errors(user_module, capsys, argv, message):
    argv = [a.format(mod=user_module) for a in argv]
    code, out, err = run_ir(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err


def test_parse_avals():
    assert parse_avals("f32[2,3], i32[]") == [((2, 3), np.dtype("float32")),
                                              ((), np.dtype("int32"))]
    assert parse_avals("bool[4]") == [((4,), np.dtype(bool))]
    with pytest.raises(UsageError, match="expected ','"):
        parse_avals("f32[3] f32[3]")


def test_report_marks_bitwise_and_differences():
    a = np.array([1.0, 2.0], np.float32)
    b = np.nextafter(a, np.float32(3.0))
    assert _cli_report.compare(a, a.copy()) == "bitwise equal"
    assert _cli_report.compare(a, b).startswith("differs by 2.4e-07")
    table = _cli_report.format_report({"invarax": [(a, a)] * 4, "JAX": None})
    lines = table.splitlines()
    assert len(lines) == 1 + len(_cli_report.CHECKS)
    assert all("bitwise equal" in line and "not installed" in line for line in lines[1:])
