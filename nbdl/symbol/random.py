"""``nbdl.sym.random``: MXNet's ``mx.sym.random`` samplers as graph nodes.

A sampler whose parameters are Symbols builds a ``_sample_<dist>`` node (one
set of ``shape`` draws per parameter element); with numbers it builds a
``_random_<dist>`` node (``shape`` empty: inferred from the consumer, as
``sym.random.uniform() + x``).  Other names of the ``_random_`` ops are here
too (``sym.random.uniform_like``, ``sym.random.pdf_normal``).
"""
import numpy as np

from ..errors import ArgumentError
from ..ops.registry import op_namespace
from .construct import create
from .prefixed import package_function
from .symbol import Symbol


def _node(dist, names, params, shape, dtype, kwargs):
    syms = [p for p in params if isinstance(p, Symbol)]
    attrs = {}
    if shape is not None:
        attrs["shape"] = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if dtype is not None:
        attrs["dtype"] = np.dtype(dtype).name
    if syms:
        if len(syms) != len(params):
            raise ArgumentError(f"sym.random.{dist}: distribution parameters must all be "
                                f"Symbols or all numbers")
        return create(f"_sample_{dist}", *params, **attrs, **kwargs)
    attrs.update(zip(names, params))
    return create(f"_random_{dist}", **attrs, **kwargs)


def uniform(low=0, high=1, shape=None, dtype=None, **kwargs):
    """A uniform [low, high) sampler node (``low``/``high`` numbers or Symbols;
    ``name=``/``attr=`` as for every op)."""
    return _node("uniform", ("low", "high"), [low, high], shape, dtype, kwargs)


def normal(loc=0, scale=1, shape=None, dtype=None, **kwargs):
    """A normal sampler node (parameters as ``uniform``'s)."""
    return _node("normal", ("loc", "scale"), [loc, scale], shape, dtype, kwargs)


def randn(*shape, loc=0, scale=1, dtype=None, **kwargs):
    """A normal sampler node of shape ``shape`` given as separate integers."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return normal(loc, scale, shape=shape or None, dtype=dtype, **kwargs)


def poisson(lam=1, shape=None, dtype=None, **kwargs):
    """A Poisson sampler node."""
    return _node("poisson", ("lam",), [lam], shape, dtype, kwargs)


def exponential(scale=1, shape=None, dtype=None, **kwargs):
    """An exponential sampler node of mean ``scale`` (the op's rate ``lam = 1/scale``)."""
    lam = 1.0 / scale
    return _node("exponential", ("lam",), [lam], shape, dtype, kwargs)


def gamma(alpha=1, beta=1, shape=None, dtype=None, **kwargs):
    """A gamma sampler node (shape ``alpha``, scale ``beta``)."""
    return _node("gamma", ("alpha", "beta"), [alpha, beta], shape, dtype, kwargs)


def negative_binomial(k=1, p=1, shape=None, dtype=None, **kwargs):
    """A negative binomial sampler node."""
    return _node("negative_binomial", ("k", "p"), [k, p], shape, dtype, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, **kwargs):
    """A generalized negative binomial sampler node (mean ``mu``, dispersion ``alpha``)."""
    return _node("generalized_negative_binomial", ("mu", "alpha"), [mu, alpha], shape, dtype,
                 kwargs)


def randint(low, high, shape=None, dtype=None, **kwargs):
    """A uniform integer [low, high) sampler node (int32 by default)."""
    return _node("randint", ("low", "high"), [int(low), int(high)], shape, dtype, kwargs)


def multinomial(data, shape=None, get_prob=True, dtype="int32", **kwargs):
    """A ``_sample_multinomial`` node over ``data``'s last axis (with
    ``get_prob``, True by default as MXNet's ``sym.random.multinomial``, two
    outputs: the indices and their log-probabilities)."""
    attrs = {"get_prob": bool(get_prob), "dtype": np.dtype(dtype).name}
    if shape is not None:
        attrs["shape"] = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return create("_sample_multinomial", data, **attrs, **kwargs)


def shuffle(data, **kwargs):
    """A ``_shuffle`` node (``data``'s first axis randomly permuted)."""
    return create("_shuffle", data, **kwargs)


__getattr__ = op_namespace("_random_", "nbdl.sym.random", package_function, globals(),
                           name_the_op=False)[0]
