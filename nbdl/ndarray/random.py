"""``nbdl.nd.random``: sampling into new NDArrays, and ``seed``.

Samples are drawn on the host from nbdl's own ``numpy.random.Generator``
and copied to the device once.  ``seed(n)`` reseeds that generator and the
RNG that compiled kernels draw from (Dropout's masks), so a seeded run is
reproducible end to end.

As in MXNet, a parameter given as an NDArray (``normal(loc=mu_array)``)
samples one set of ``shape`` values per element: the result has shape
``param.shape + shape``.  Without ``shape`` a sampler returns one value
(shape ``(1,)``, MXNet 1.x has no 0-d arrays).
"""
import importlib
import importlib.util

import numpy as np

from ..errors import ArgumentError

from ..dtype import as_dtype
from ..errors import ShapeError
from .creation import _device, _shape, from_host
from .invoke import clear_cache
from .ndarray import NDArray

# Modules holding the kernel-side RNG state; each has ``seed(int)``.  (The
# CUDA kernels draw their generator seeds from the CPU stream, so seeding it
# fixes them too.)
_KERNEL_RNG_MODULES = ("nbdl.kernels.shared.random_state",)

_generator = np.random.default_rng()


def generator():
    """nbdl's numpy Generator (reseeded by ``seed``)."""
    return _generator


def seed(seed_state, ctx="all"):
    """Seed every random number generator nbdl uses (MXNet's
    ``mx.random.seed``).  ``ctx`` is accepted for compatibility; all devices
    are seeded."""
    global _generator
    if not isinstance(seed_state, (int, np.integer)) or isinstance(seed_state, bool):
        raise ArgumentError(f"seed: expected an integer, got {type(seed_state).__name__}")
    s = int(seed_state)
    _generator = np.random.default_rng(s % (1 << 64))
    # Prepared eager launches may hold generator states drawn from the old
    # seed (the CUDA Dropout kernel's); drop them so they are made afresh.
    clear_cache()
    for modname in _KERNEL_RNG_MODULES:
        # The kernel RNG module is optional (a build may have no random
        # kernels yet); look for it rather than importing blindly.
        if importlib.util.find_spec(modname) is not None:
            importlib.import_module(modname).seed(s % (1 << 32))


def _sample(draw, params, shape, dtype, ctx, device, out, default_dtype=None):
    """Draw with ``draw(*params, size)`` on the host and place the result."""
    nd_params = [p for p in params if isinstance(p, NDArray)]
    if out is not None:
        dev = out.context
        dt = np.dtype(out.dtype)
        if shape is None:
            shape = out.shape if not nd_params else out.shape[nd_params[0].ndim:]
    else:
        dev = nd_params[0].context if nd_params and ctx is None and device is None \
            else _device(ctx, device)
        dt = as_dtype(dtype if dtype is not None else default_dtype)
    shape = () if shape is None else _shape(shape)
    if not shape and not nd_params:
        shape = (1,)
    if nd_params:
        base = nd_params[0].shape
        for p in nd_params[1:]:
            if p.shape != base:
                raise ShapeError(f"random: parameter arrays have different shapes "
                                 f"{base} and {p.shape}")
        expand = (slice(None),) * len(base) + (None,) * len(shape)
        host = [p.asnumpy().astype(np.float64)[expand] if isinstance(p, NDArray) else p
                for p in params]
        values = draw(*host, base + shape)
    else:
        values = draw(*params, shape)
    values = np.asarray(values).astype(dt, copy=False)
    if out is not None:
        out[:] = values
        return out
    return from_host(np.ascontiguousarray(values), dev)


def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
    """Samples from [low, high)."""
    _no_kwargs("uniform", kwargs)
    return _sample(lambda lo, hi, size: _generator.uniform(lo, hi, size), [low, high], shape,
                   dtype, ctx, device, out)


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
    _no_kwargs("normal", kwargs)
    return _sample(lambda m, s, size: _generator.normal(m, s, size), [loc, scale], shape,
                   dtype, ctx, device, out)


def randn(*shape, loc=0, scale=1, dtype=None, ctx=None, device=None, **kwargs):
    """Normal samples of shape ``shape`` given as separate integers."""
    _no_kwargs("randn", kwargs)
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return normal(loc, scale, shape=shape or None, dtype=dtype, ctx=ctx, device=device)


def randint(low, high=None, shape=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
    """Integers from [low, high); int32 by default as in MXNet."""
    _no_kwargs("randint", kwargs)
    if high is None:
        low, high = 0, low
    return _sample(lambda lo, hi, size: _generator.integers(lo, hi, size), [low, high], shape,
                   dtype, ctx, device, out, default_dtype=np.int32)


def exponential(scale=1, shape=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
    _no_kwargs("exponential", kwargs)
    return _sample(lambda s, size: _generator.exponential(s, size), [scale], shape,
                   dtype, ctx, device, out)


def gamma(alpha=1, beta=1, shape=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
    """Gamma samples with shape ``alpha`` and scale ``beta`` (MXNet's names)."""
    _no_kwargs("gamma", kwargs)
    return _sample(lambda a, b, size: _generator.gamma(a, b, size), [alpha, beta], shape,
                   dtype, ctx, device, out)


def poisson(lam=1, shape=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
    """Poisson counts (float32 by default, as in MXNet)."""
    _no_kwargs("poisson", kwargs)
    return _sample(lambda lam_, size: _generator.poisson(lam_, size), [lam], shape,
                   dtype, ctx, device, out)


def shuffle(data, **kwargs):
    """A copy of ``data`` with its first axis randomly permuted."""
    _no_kwargs("shuffle", kwargs)
    host = data.asnumpy()
    perm = _generator.permutation(host.shape[0]) if host.ndim else None
    shuffled = host[perm] if perm is not None else host
    return from_host(np.ascontiguousarray(shuffled), data.context)


def _no_kwargs(fname, kwargs):
    if kwargs:
        raise TypeError(f"random.{fname}: unexpected keyword arguments {sorted(kwargs)}")
