"""Run under ``python -m invarax.compat``: reports, as JSON on stdout, what the alias serves."""

import json
import sys

import equinox as eqx
import jax
import jax.numpy as jnp
import jax.scipy.stats.norm
import optax

import invarax

report = {"argv": sys.argv, "main": __name__, "jax_version": jax.__version__,
          "eqx_version": eqx.__version__, "optax_version": optax.__version__}
report["served"] = {
    "jax.numpy": jnp.sum is invarax.numpy.sum,
    "jax.scipy.stats.norm": jax.scipy.stats.norm.logpdf is invarax.scipy.stats.norm.logpdf,
    "jax.nn.relu": jax.nn.relu is invarax.nn.relu,
    "jax.core.Tracer": __import__("jax.core").core.Tracer is invarax.core.trace.Tracer,
    "jax.errors": jax.errors.TracerBoolConversionError is invarax.errors.TracerBoolConversionError,
    "equinox.Module": eqx.Module is invarax.Module,
    "equinox.nn.Linear": eqx.nn.Linear is invarax.nn.Linear,
    "equinox.apply_updates": eqx.apply_updates is invarax.apply_updates,
    "optax.adam": optax.adam is invarax.optim.adam,
    "sys.modules": sys.modules["jax.numpy"] is jnp,
}
errors = {}
try:
    jax.numpy.not_a_function  # noqa: B018
except AttributeError as err:
    errors["attribute"] = str(err)
try:
    from jax import not_a_name  # noqa: F401
except ImportError as err:
    errors["from_import"] = str(err)
try:
    import jax.not_a_module  # noqa: F401
except ImportError as err:
    errors["import"] = str(err)
try:
    jax.ops  # noqa: B018  (invarax.ops is internal: not JAX's jax.ops)
except AttributeError as err:
    errors["internal"] = str(err)
report["errors"] = errors
report["hasattr"] = hasattr(jax, "not_a_name")
report["jaxtyping"] = __import__("jaxtyping").__file__.find("invarax") < 0
report["value"] = float(jnp.sum(jnp.arange(4.0)))
print(json.dumps(report))
