"""Pooling's per-window, per-plane and global per-(a, b) math
(``nbdl.kernels.shared.pooling``'s ``build``) compiled for the CPU, and max
pooling's NaN rule as the CPU loops apply it, shared by the window kernels
(``pooling``) and the global ones (``pooling_global``)."""
import numpy as np

from ..shared.jit import njit

from ..shared.pooling import build

# -- the per-window / per-plane math of kernels/shared, compiled for the CPU --

_s = build(njit(cache=True))
_bounds, _plane, _divisor, _pad_zero = _s.bounds, _s.plane, _s.divisor, _s.pad_zero
_pool_window, _scatter_window, _ipow = _s.pool_window, _s.scatter_window, _s.ipow
_pool_at = njit(cache=True, inline="always")(_s.pool_at)
_scatter_plane = njit(cache=True)(_s.scatter_plane)
_global_one = njit(cache=True, inline="always")(_s.global_one)
_global_back_one = njit(cache=True, inline="always")(_s.global_back_one)


# Max pooling's rule is MXNet's (``kernels/shared/pooling.py``): the
# unrolled windows take their elements in a chain of selects from the
# dtype's lowest value (``_floor``), which a NaN never enters; the searches
# for the first maximum start from the first element ranked by ``_key``
# (NaN and -inf as the floor).

@njit(cache=True, inline="always")
def _floor(a):
    """Max pooling's starting value for the data ``a``: its dtype's lowest."""
    return a.dtype.type(np.finfo(a.dtype).min)


@njit(cache=True, inline="always")
def _key(v, low):
    """``v`` as max pooling ranks it: itself above ``low``, else ``low``."""
    return v if v > low else low


@njit(cache=True, inline="always")
def _sel_max(a, b):
    """a if a > b else b (a NaN ``a`` gives ``b``), compiled to a select
    (random data mispredicts a branch)."""
    return max(b, a)


@njit(cache=True, inline="always")
def _clamped(i, n):
    """``i`` clipped to ``[0, n - 1]``, unsigned (no wrap-around checks)."""
    return np.uintp(min(max(i, 0), n - 1))
