"""The README's main job, ``invarax demo``."""

import io

from invarax import cli


def test_demo_reports_every_check_bitwise_equal():
    out = io.StringIO()
    assert cli.demo(out) == 0
    text = out.getvalue()
    assert "{ lambda ; a:f32[] b:f32[]. let" in text
    report = text.split("reproducibility report")[1].strip().splitlines()[1:]
    assert len(report) >= 8
    assert all(line.rstrip().endswith("bitwise equal") for line in report), report


def test_main_dispatches_demo(capsys):
    assert cli.main(["demo"]) == 0
    assert "reproducibility report" in capsys.readouterr().out
