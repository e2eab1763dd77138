"""Global flags, set with ``invarax.config.update(name, value)`` as in JAX."""

from __future__ import annotations

import contextlib
import operator
import os


class Config:
    """The library's flags.

    Only flags that change behaviour exist; asking for any other name is an error,
    so a misspelt flag never passes silently.

    ``invarax_exact_elementary`` (default True) makes ``exp``, ``log``, ``sin``, ``tanh``,
    ``erf``, ``pow``, ... invarax's own kernels: float32 correctly rounded, the same bits on
    every CPU (N6, docs/numerics.md). Set it to False, or the environment variable
    ``INVARAX_EXACT_ELEMENTARY=0`` before import, to use NumPy's ufuncs instead (faster for
    some functions, but their bits depend on the CPU's vector extensions).

    Example:
        >>> import invarax
        >>> invarax.config.update("jax_enable_x64", True)
        >>> invarax.config.jax_enable_x64
        True
    """

    _defaults = {
        "jax_enable_x64": False,
        "jax_explain_cache_misses": False,
        # jit-decorated functions (and control flow) run as written, op by op, as JAX's
        "jax_disable_jit": False,
        # log each trace of a jitted function (logger "invarax", WARNING), as JAX's
        "jax_log_compiles": False,
        # random: JAX's default threefry streams since JAX 0.5 (False: the older ones)
        "jax_threefry_partitionable": True,
        # invarax's own exp, log, sin, ... (correctly rounded, the same bits on every CPU:
        # N6); False: NumPy's ufuncs (INVARAX_EXACT_ELEMENTARY=0 at import)
        "invarax_exact_elementary": True,
        # loops whose body is 0-d arithmetic run as compiled C (compiler/native.py)
        "invarax_native_loops": True,
        # fusion groups of C forms and elementary functions run as compiled C
        # (compiler/fusion_native.py); False: their Python path (the same bits)
        "invarax_native_fusion": True,
        # local CPU devices of this process (read once, when devices are first used)
        "jax_num_cpu_devices": 1,
        # the default platform ("cpu" or "gpu"; "": a GPU where one is used, else the CPU)
        "jax_platform_name": "",
        # the platforms to use, as JAX_PLATFORMS ("cpu", "cuda,cpu"; "": every one present);
        # read on the first operation
        "jax_platforms": "",
        # the device arrays live on unless placed elsewhere (None: the default backend's
        # first device)
        "jax_default_device": None,
        # JAX's dtype promotion: "standard" (weak types, the promotion lattice) or "strict"
        # (only a weak type promotes; two different dtypes are a TypePromotionError)
        "jax_numpy_dtype_promotion": "standard",
        # jnp's elementwise functions on operands of different ranks (a 0-d one aside):
        # "allow" broadcasts, "warn" broadcasts with a warning, "raise" is a ValueError
        "jax_numpy_rank_promotion": "allow",
    }

    #: The values a string flag takes, with what to do instead of the others.
    _choices = {
        "jax_numpy_dtype_promotion": (("standard", "strict"), "JAX's two promotion modes"),
        "jax_numpy_rank_promotion": (("allow", "warn", "raise"), "JAX's three modes"),
    }

    #: Flags whose default an environment variable overrides when invarax is imported.
    _environment = {"invarax_exact_elementary": "INVARAX_EXACT_ELEMENTARY"}

    def __init__(self):
        self._values = dict(self._defaults)
        for name, variable in self._environment.items():
            if variable in os.environ:
                self._values[name] = _environment_bool(variable, os.environ[variable])
        self._listeners = []
        self._validators = {}

    def update(self, name: str, value) -> None:
        """Set flag ``name`` to ``value``."""
        if name not in self._values:
            known = ", ".join(sorted(self._values))
            raise AttributeError(f"unknown config flag {name!r}; known flags: {known}")
        if name in self._choices and value not in self._choices[name][0]:
            allowed, why = self._choices[name]
            raise ValueError(f"config flag {name!r} takes one of {allowed}, got {value!r}: "
                             f"{why}")
        value = _coerce(name, value, self._defaults[name])
        if name in self._validators:
            self._validators[name](value)
        self._values[name] = value
        for listener in self._listeners:
            listener(name, self._values[name])

    @contextlib.contextmanager
    def flag(self, name: str, value):
        """Set flag ``name`` to ``value`` inside a ``with`` block, and restore it after.

        Arguments:
            name: the flag.
            value: its value inside the block.

        Returns:
            A context manager.

        Example:
            >>> import invarax
            >>> with invarax.config.flag("invarax_exact_elementary", False):
            ...     invarax.config.invarax_exact_elementary
            False
            >>> invarax.config.invarax_exact_elementary
            True
        """
        previous = self.read(name) if name in self._values else None
        self.update(name, value)
        try:
            yield
        finally:
            self.update(name, previous)

    def read(self, name: str):
        """Return the value of flag ``name``."""
        return self._values[name]

    def def_validator(self, name: str, validator) -> None:
        """Call ``validator(value)`` before flag ``name`` changes; it raises to refuse."""
        self._validators[name] = validator

    def on_update(self, listener) -> None:
        """Call ``listener(name, value)`` after every update (used to drop caches)."""
        self._listeners.append(listener)

    def __getattr__(self, name):
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(f"unknown config flag {name!r}")


def _coerce(name: str, value, default):
    if default is None or isinstance(default, str):
        return value
    if isinstance(default, bool):
        return bool(value)
    try:
        count = operator.index(value)
    except TypeError:
        raise TypeError(f"config flag {name!r} takes an int, got {value!r}") from None
    if count < 1:
        raise ValueError(f"config flag {name!r} must be at least 1, got {count}")
    return count


def _environment_bool(variable: str, text: str) -> bool:
    word = text.strip().lower()
    if word in ("1", "true", "on", "yes"):
        return True
    if word in ("0", "false", "off", "no", ""):
        return False
    raise ValueError(f"environment variable {variable}={text!r}: use 1/true/on or 0/false/off")


config = Config()


def numpy_dtype_promotion(mode: str):
    """``with numpy_dtype_promotion("strict"):`` sets ``jax_numpy_dtype_promotion`` inside the
    block, as JAX's context manager.

    Example:
        >>> import invarax, invarax.numpy as jnp
        >>> with invarax.numpy_dtype_promotion("strict"):
        ...     try:
        ...         jnp.ones(2) + jnp.ones(2, jnp.int32)
        ...     except invarax.dtypes.TypePromotionError:
        ...         print("cast one operand explicitly")
        cast one operand explicitly
    """
    return config.flag("jax_numpy_dtype_promotion", mode)


def disable_jit(disable: bool = True):
    """``with disable_jit():`` runs every ``jit``-decorated function inside the block as
    plain Python, operation by operation, as JAX's context manager: ``print`` in it runs at
    every call and shows values, not tracers. ``config.update("jax_disable_jit", True)``
    does so until it is set back.

    Nested ``jit``, ``filter_jit`` and the functions ``invarax`` compiles internally run so
    too; ``lax.scan``, ``fori_loop`` with concrete bounds and ``while_loop`` become Python
    loops and ``cond``/``switch`` with a concrete predicate call one branch, as in JAX
    (docs/compiler.md, "Debugging: disable_jit"). The values are the same bits as with
    ``jit`` (N3).

    Arguments:
        disable: True (the default) disables ``jit`` inside the block; False enables it.

    Returns:
        A context manager.

    Example:
        >>> import invarax, invarax.numpy as jnp
        >>> @invarax.jit
        ... def f(x):
        ...     print("x is", x)
        ...     return x * 2
        >>> with invarax.disable_jit():
        ...     f(jnp.arange(3, dtype=jnp.int32))
        x is [0 1 2]
        Array([0, 2, 4], dtype=int32)
    """
    return config.flag("jax_disable_jit", disable)


def numpy_rank_promotion(mode: str):
    """``with numpy_rank_promotion("raise"):`` sets ``jax_numpy_rank_promotion`` inside the
    block, as JAX's context manager."""
    return config.flag("jax_numpy_rank_promotion", mode)
