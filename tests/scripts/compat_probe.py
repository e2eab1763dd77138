"""Run under ``python -m invarax.compat``: reports, as JSON on stdout, what the alias serves."""

import json
import sys

import equinox as eqx
import jax
import jax._src.ad_util
import jax.numpy as jnp
import jax.scipy.stats.norm
import optax
from equinox.nn import _attention

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
    # private modules that libraries import: lineax's stop_gradient_p, Equinox's attention
    "jax._src.ad_util": jax._src.ad_util.stop_gradient_p is invarax.lax.stop_gradient_p,
    "equinox.nn._attention": _attention.dot_product_attention_weights
    is invarax.nn._attention.dot_product_attention_weights,
    "jax.numpy_dtype_promotion": jax.numpy_dtype_promotion is invarax.numpy_dtype_promotion,
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
