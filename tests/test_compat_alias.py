"""The import alias (``invarax.compat``): JAX's, Equinox's and optax's modules served by
invarax's, the errors for what is not served, and ``python -m invarax.compat``.

Each check runs in a fresh interpreter (bounded by a timeout): the alias must be installed
before anything imports JAX, which this test process has done.
"""

import json
import pathlib
import subprocess
import sys
import types

import pytest

import invarax
import invarax.compat
from invarax.compat import __main__ as compat_main
from invarax.compat import _table

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROBE = ROOT / "tests" / "scripts" / "compat_probe.py"


def _run(*args, timeout=120):
    done = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)
    return done


@pytest.fixture(scope="module")
def probe():
    done = _run("-m", "invarax.compat", str(PROBE), "first", "--second")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_script_runs_as_main_with_its_arguments(probe):
    assert probe["main"] == "__main__"
    assert probe["argv"] == [str(PROBE), "first", "--second"]
    assert probe["value"] == 6.0


def test_modules_are_invaraxs(probe):
    assert probe["served"] == dict.fromkeys(probe["served"], True)


def test_versions_are_the_followed_releases(probe):
    assert (probe["jax_version"], probe["eqx_version"], probe["optax_version"]) == (
        _table.VERSIONS["jax"], _table.VERSIONS["equinox"], _table.VERSIONS["optax"])
    assert invarax.__version__ != _table.VERSIONS["jax"]  # invarax's own stays


def test_missing_names_are_named(probe):
    errors = probe["errors"]
    assert "invarax does not provide jax.numpy.not_a_function yet" in errors["attribute"]
    assert "invarax does not provide jax.not_a_name yet" in errors["from_import"]
    assert "invarax does not provide jax.not_a_module yet" in errors["import"]
    assert "invarax does not provide jax.ops yet" in errors["internal"]
    assert probe["hasattr"] is False  # an AttributeError, so hasattr() feature tests work
    assert probe["jaxtyping"]  # jaxtyping stays the real one


def test_module_form_and_code_form(capsys):
    done = _run("-m", "invarax.compat", "-m", "json.tool", "--help")
    assert done.returncode == 0 and "json.tool" in done.stdout + done.stderr
    code = "import sys, jax; print(type(jax).__name__, sys.argv[1:])"
    done = _run("-m", "invarax.compat", "-c", code, "a", "b")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["AliasModule", "['a',", "'b']"]
    assert compat_main.main([]) == 2 and "usage" in capsys.readouterr().err


def test_install_after_the_real_jax_is_refused(monkeypatch):
    if "jax" not in sys.modules:  # stands for the real one, imported before install()
        monkeypatch.setitem(sys.modules, "jax", types.ModuleType("jax"))
    with pytest.raises(RuntimeError, match="the real jax is imported already"):
        invarax.compat.install()
    assert not invarax.compat.installed()


def test_table_maps_submodules_by_path_only_where_it_says():
    assert _table.invarax_module("jax.numpy.linalg") == "invarax.numpy.linalg"
    assert _table.invarax_module("jax.scipy.stats.norm") == "invarax.scipy.stats.norm"
    assert _table.invarax_module("jax.interpreters.ad") == "invarax.extend.interpreters.ad"
    assert _table.invarax_module("equinox.internal") == "invarax.module.internal"
    assert _table.invarax_module("optax.losses") == "invarax.optim.losses"
    assert _table.invarax_module("jax.ops") is None  # invarax.ops is internal
    assert _table.invarax_module("jax.numpy._promote") is None  # private
    assert _table.invarax_module("numpy") is None
