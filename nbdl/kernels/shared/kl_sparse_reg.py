"""IdentityAttachKLSparseReg's views, scalars and per-channel update (plain
Python: compiled by ``njit`` in ``kernels.cpu.kl_sparse_reg``, by
``cuda.jit(device=True)`` in ``kernels.cuda.kl_sparse_reg``).  Data are seen
as (N, C, inner)."""
import math

import numpy as np


def kl_view(shape):
    """(N, C, inner) of data ``shape``."""
    shape = tuple(int(d) for d in shape)
    return (shape[0], shape[1], math.prod(shape[2:]))


def kl_scalars(call):
    """(target, penalty, momentum, 1) in the data's dtype."""
    t = np.dtype(call.in_dtypes[0]).type
    a = call.attrs
    return t(a["sparseness_target"]), t(a["penalty"]), t(a["momentum"]), t(1)


def py_kl_channel(og, x, ma, dx, c, target, penalty, momentum, one, write, add):
    """Update ``ma[c]`` with channel ``c``'s mean activation, then (``write``) write
    (``add``: add) its gradient."""
    n_, _, k_ = x.shape
    s = target - target
    for n in range(n_):
        for i in range(k_):
            s += x[n, c, i]
    avg = s / (n_ * k_) if n_ * k_ > 0 else s
    m = momentum * ma[c] + (one - momentum) * avg
    ma[c] = m
    if not write:
        return
    reg = penalty * (-target / m + (one - target) / (one - m))
    for n in range(n_):
        for i in range(k_):
            v = og[n, c, i] + reg
            if add:
                dx[n, c, i] += v
            else:
                dx[n, c, i] = v
