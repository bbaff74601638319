"""Smaller helpers of ``nbdl.test_utils`` (MXNet 1.9.1's names)."""
import functools
import json

import numpy as np

from .. import testing as _testing
from ..device import as_device, current_device, num_gpus
from ..errors import ArgumentError
from ._compare import assert_almost_equal
from ._tols import get_etol, get_tols


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    """``assert_almost_equal`` with numpy's ``assert_allclose`` defaults
    (tight ``rtol``, no ``atol``, NaNs equal).

    Parameters
    ----------
    a, b : numpy.ndarray or NDArray
    rtol, atol : float
    equal_nan : bool
    """
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=("a", "b"),
                                 equal_nan=False, mismatches=(10, 10)):
    """``assert_almost_equal`` that tolerates a fraction ``etol`` of
    mismatching elements.

    Parameters
    ----------
    a, b : numpy.ndarray or NDArray
    rtol, atol : None, float or dict of dtype to float
    etol : float, optional
        Largest tolerated fraction of elements outside the tolerance
        (0 or None: none, i.e. plain ``assert_almost_equal``).
    names : tuple of two str
    equal_nan : bool
    mismatches : tuple of two int
    """
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan,
                            mismatches=mismatches)
        return
    rt, at = get_tols(a, b, rtol, atol)
    an, bn = np.broadcast_arrays(_testing._np(a), _testing._np(b))
    close = np.isclose(an, bn, rtol=rt, atol=at, equal_nan=equal_nan)
    if 1 - np.count_nonzero(close) / max(close.size, 1) > etol:
        assert_almost_equal(an, bn, rtol=rt, atol=at, names=names, equal_nan=equal_nan,
                            mismatches=mismatches)


def retry(n):
    """Decorator: run a (stochastic) test up to ``n`` times until it passes
    without ``AssertionError``; the last failure is raised.

    Parameters
    ----------
    n : int
        Attempts, at least 1.
    """
    if not isinstance(n, int) or n < 1:
        raise ArgumentError(f"retry: n must be a positive int, got {n!r}")

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            for i in range(n):
                try:
                    return f(*args, **kwargs)
                except AssertionError:
                    if i == n - 1:
                        raise
        return wrapper
    return decorate


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """Bind ``sym`` to numpy inputs, run forward, return numpy outputs.

    Parameters
    ----------
    sym : Symbol
    ctx : Context, optional
    is_train : bool
    **inputs : numpy.ndarray
        Every argument by name.

    Returns
    -------
    numpy.ndarray or list of numpy.ndarray
        The one output, or the list of outputs.
    """
    args = {k: np.asarray(_testing._np(v)) for k, v in inputs.items()}
    _, outs, _, _ = _testing.bind_and_run(sym, args, device=as_device(ctx) if ctx is not None
                                          else current_device(), is_train=is_train)
    return outs[0] if len(outs) == 1 else outs


def same_symbol_structure(sym1, sym2):
    """Whether two symbols have the same operator at every node position.

    Parameters
    ----------
    sym1, sym2 : Symbol
    """
    n1 = json.loads(sym1.tojson())["nodes"]
    n2 = json.loads(sym2.tojson())["nodes"]
    return all(a["op"] == b["op"] for a, b in zip(n1, n2))


def collapse_sum_like(a, shape):
    """Sum ``a`` over the axes a broadcast to it from ``shape`` would have
    added or stretched, giving an array of ``shape``.

    Parameters
    ----------
    a : numpy.ndarray
    shape : tuple of int
        Broadcastable to ``a.shape``.
    """
    shape = tuple(shape)
    if len(a.shape) < len(shape):
        raise ArgumentError(f"collapse_sum_like: shape {shape} has more dimensions than "
                            f"a.shape {a.shape}")
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    lead = len(a.shape) - len(shape)
    axes = list(range(lead))
    for i, s in enumerate(shape):
        if s != a.shape[i + lead]:
            if s != 1:
                raise ArgumentError(f"collapse_sum_like: shape {shape} does not broadcast "
                                    f"to a.shape {a.shape}")
            axes.append(i + lead)
    return np.sum(a, axis=tuple(axes)).reshape(shape)


def list_gpus():
    """GPU indices: ``range(number of GPUs)`` (empty without one).

    Returns
    -------
    range
    """
    return range(num_gpus())


def rand_coord_2d(x_low, x_high, y_low, y_high):
    """A random integer coordinate ``(x, y)`` with ``x_low <= x < x_high``
    and ``y_low <= y < y_high``.

    Parameters
    ----------
    x_low, x_high, y_low, y_high : int
    """
    return (np.random.randint(x_low, x_high, dtype=np.int64),
            np.random.randint(y_low, y_high, dtype=np.int64))


def is_aarch64_run():
    """Whether this runs on an aarch64 machine (MXNet's helper, used to skip
    tests there)."""
    import platform
    return platform.machine() == "aarch64"


__all__ = ["is_aarch64_run", "assert_allclose", "assert_almost_equal_with_err", "retry", "simple_forward",
           "same_symbol_structure", "collapse_sum_like", "list_gpus", "rand_coord_2d"]
