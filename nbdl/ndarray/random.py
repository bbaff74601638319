"""``nbdl.nd.random``: MXNet's samplers as ops, and ``seed``.

Every sampler runs an op of the op table (``_random_<dist>`` with scalar
parameters, ``_sample_<dist>`` when a parameter is an NDArray,
``_sample_multinomial``, ``_shuffle``, ``_random_randint``), so the numbers
come from nbdl's kernel generators on the output's device and
``seed(n)`` reproduces them.  ``generator()`` is nbdl's host-side numpy
Generator, which data pipelines (samplers, transforms) draw from; ``seed``
reseeds it too.

As in MXNet, a parameter given as an NDArray (``normal(loc=mu_array)``)
samples one set of ``shape`` values per element: the result has shape
``param.shape + shape`` (a scalar beside it is broadcast to the array's
shape).  Without ``shape`` a sampler returns one value (shape ``(1,)``,
MXNet 1.x has no 0-d arrays).  Other names of the ``_random_`` ops are here
too: ``nd.random.uniform_like`` is ``_random_uniform_like``,
``nd.random.pdf_normal`` is ``_random_pdf_normal``.
"""
import numpy as np

from ..device import as_device
from ..errors import ArgumentError, ShapeError
from ..kernels.shared import random_state as _kernel_rng
from ..ops.registry import op_namespace
from .creation import _device, _shape, full
from . import namespace
from .invoke import clear_cache, invoke
from ..array import NDArray

_generator = np.random.default_rng()


def generator():
    """nbdl's host-side numpy Generator (reseeded by ``seed``)."""
    return _generator


def seed(seed_state, ctx="all"):
    """Seed nbdl's random number generators (MXNet's ``mx.random.seed``).

    Parameters
    ----------
    seed_state : int
        The seed (any integer).
    ctx : Context or 'all'
        'all' seeds every device and the host generator; a CPU context seeds
        the CPU kernels' stream and the host generator; ``gpu(i)`` seeds only
        that GPU's stream, so its draws repeat whatever the others do.
    """
    global _generator
    if not isinstance(seed_state, (int, np.integer)) or isinstance(seed_state, bool):
        raise ArgumentError(f"seed: expected an integer, got {type(seed_state).__name__}")
    s = int(seed_state)
    dev = None if isinstance(ctx, str) and ctx == "all" else as_device(ctx)
    # Prepared eager launches may hold generator states drawn from the old
    # seed (the CUDA Dropout kernel's); drop them so they are made afresh.
    clear_cache()
    if dev is None or dev.device_type == "cpu":
        _generator = np.random.default_rng(s % (1 << 64))
        _kernel_rng.seed(s % (1 << 32))
    if dev is None:
        _kernel_rng.seed_all_devices(s)
    elif dev.device_type != "cpu":
        _kernel_rng.seed_device(dev.device_id, s)


def _no_kwargs(fname, kwargs):
    kwargs.pop("name", None)          # MXNet's imperative calls ignore name=
    if kwargs:
        raise TypeError(f"random.{fname}: unexpected keyword arguments {sorted(kwargs)}")


def _dtype_name(dtype):
    if dtype is None:
        return None
    return np.dtype(dtype).name


def _sample(dist, names, params, shape, dtype, ctx, out, device, kwargs):
    """Run ``_random_<dist>`` (scalar parameters) or ``_sample_<dist>`` (any
    parameter an NDArray)."""
    _no_kwargs(dist, kwargs)
    arrays = [p for p in params if isinstance(p, NDArray)]
    if out is not None and dtype is None:
        dtype = out.dtype
    if arrays:
        base = arrays[0]
        for p in arrays[1:]:
            if p.shape != base.shape:
                raise ShapeError(f"random.{dist}: parameter arrays have different shapes "
                                 f"{base.shape} and {p.shape}")
        inputs = [p if isinstance(p, NDArray) else
                  full(base.shape, float(p), device=base.context, dtype=base.dtype)
                  for p in params]
        if shape is None:
            shape = () if out is None else tuple(out.shape[base.ndim:])
        attrs = {"shape": _shape(shape) if shape != () else ()}
        if dtype is not None:
            attrs["dtype"] = _dtype_name(dtype)
        return invoke(f"_sample_{dist}", inputs, attrs, out=out)
    for p in params:
        if not isinstance(p, (int, float, np.integer, np.floating)) or isinstance(p, bool):
            raise ArgumentError(f"random.{dist}: distribution parameters must be numbers or "
                                f"NDArrays, got {type(p).__name__}")
    if out is not None:
        dev = out.context
        if shape is None:
            shape = out.shape
    else:
        dev = _device(ctx, device)
    shape = (1,) if shape is None else _shape(shape)
    attrs = dict(zip(names, params))
    attrs["shape"] = shape
    if dtype is not None:
        attrs["dtype"] = _dtype_name(dtype)
    return invoke(f"_random_{dist}", [], attrs, out=out, device=dev)


def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
    """Samples from the half-open interval [low, high).

    Parameters
    ----------
    low, high : float or NDArray
        The bounds (NDArrays: one set of ``shape`` samples per element).
    shape : int or tuple of int, optional
        Samples to draw (per parameter element); one value by default.
    dtype : str or dtype, optional
        float32 (default) or float64.
    ctx, device : Context, optional
        The output's device (the parameters' when they are NDArrays).
    out : NDArray, optional
        Written instead of a new array.
    """
    return _sample("uniform", ("low", "high"), [low, high], shape, dtype, ctx, out, device,
                   kwargs)


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
    """Samples from N(loc, scale**2) (parameters as ``uniform``'s)."""
    return _sample("normal", ("loc", "scale"), [loc, scale], shape, dtype, ctx, out, device,
                   kwargs)


def randn(*shape, loc=0, scale=1, dtype=None, ctx=None, device=None, out=None, **kwargs):
    """Normal samples of shape ``shape`` given as separate integers.

    Parameters
    ----------
    *shape : int
        The output's shape.
    loc, scale : float or NDArray
        Mean and standard deviation.
    dtype, ctx, device, out :
        As ``uniform``'s.
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return normal(loc, scale, shape=shape or None, dtype=dtype, ctx=ctx, device=device,
                  out=out, **kwargs)


def randint(low, high=None, shape=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
    """Integers from [low, high) (``randint(n)``: from [0, n)); int32 by default
    as in MXNet.

    Parameters
    ----------
    low, high : int
        The bounds.
    shape, ctx, device, out :
        As ``uniform``'s.
    dtype : str or dtype, optional
        int32 (default) or int64.
    """
    _no_kwargs("randint", kwargs)
    if high is None:
        low, high = 0, low
    if isinstance(low, NDArray) or isinstance(high, NDArray):
        raise ArgumentError("random.randint: low and high must be integers (MXNet has no "
                            "array form)")
    return _sample("randint", ("low", "high"), [int(low), int(high)], shape, dtype, ctx, out,
                   device, {})


def exponential(scale=1, shape=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
    """Samples of the exponential distribution of mean ``scale`` (rate ``1/scale``:
    the op's ``lam``)."""
    lam = 1.0 / scale
    return _sample("exponential", ("lam",), [lam], shape, dtype, ctx, out, device, kwargs)


def gamma(alpha=1, beta=1, shape=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
    """Gamma samples with shape ``alpha`` and scale ``beta`` (MXNet's names)."""
    return _sample("gamma", ("alpha", "beta"), [alpha, beta], shape, dtype, ctx, out, device,
                   kwargs)


def poisson(lam=1, shape=None, dtype=None, ctx=None, out=None, device=None, **kwargs):
    """Poisson counts of mean ``lam`` (float32 by default, as in MXNet)."""
    return _sample("poisson", ("lam",), [lam], shape, dtype, ctx, out, device, kwargs)


def negative_binomial(k=1, p=1, shape=None, dtype=None, ctx=None, out=None, device=None,
                      **kwargs):
    """Failures before the ``k``-th success with success probability ``p``."""
    return _sample("negative_binomial", ("k", "p"), [k, p], shape, dtype, ctx, out, device,
                   kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, ctx=None, out=None,
                                  device=None, **kwargs):
    """Negative binomial samples of mean ``mu`` and dispersion ``alpha``
    (variance ``mu + alpha * mu**2``)."""
    return _sample("generalized_negative_binomial", ("mu", "alpha"), [mu, alpha], shape,
                   dtype, ctx, out, device, kwargs)


def multinomial(data, shape=None, get_prob=False, out=None, dtype="int32", **kwargs):
    """Indices drawn from the categorical distributions on ``data``'s last axis.

    Parameters
    ----------
    data : NDArray
        Probabilities (rows summing to 1).
    shape : int or tuple of int, optional
        Draws per distribution (one by default).
    get_prob : bool
        Also return log(p) of each draw (differentiable wrt ``data``).
    out : NDArray, optional
        Written instead of a new array.
    dtype : str
        The indices' dtype (int32 default, uint8, float32, float64).
    """
    _no_kwargs("multinomial", kwargs)
    attrs = {"get_prob": bool(get_prob), "dtype": _dtype_name(dtype)}
    if shape is not None:
        attrs["shape"] = _shape(shape)
    return invoke("_sample_multinomial", [data], attrs, out=out)


def shuffle(data, **kwargs):
    """A copy of ``data`` with its first axis randomly permuted.

    Parameters
    ----------
    data : NDArray
        The array to shuffle.
    """
    out = kwargs.pop("out", None)
    _no_kwargs("shuffle", kwargs)
    return invoke("_shuffle", [data], None, out=out)


# nd.random.<x> for the other _random_ ops (uniform_like, pdf_normal, ...)
__getattr__ = op_namespace("_random_", "nbdl.nd.random", namespace.function_for, globals(),
                           name_the_op=False)[0]


__all__ = ["uniform", "normal", "randn", "poisson", "exponential", "gamma", "multinomial",
           "negative_binomial", "generalized_negative_binomial", "shuffle", "randint", "seed",
           "generator"]
