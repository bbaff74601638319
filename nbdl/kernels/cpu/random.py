"""CPU kernels of the samplers (rules in nbdl.ops.random, math in
nbdl.kernels.shared.random).

Each launch draws its 64-bit key from numba's per-thread stream inside the
kernel (so ``nbdl.random.seed`` reproduces eager calls, bound executors and
the generated driver alike, and every call of a bound executor draws new
numbers), then every element is a pure function of (key, element index).
The loops are serial and flat: one compilation per output dtype (and per
parameter dtype for the ``_sample_`` ops), whatever the rank.
"""
import math

import numpy as np
from numba import njit

from ...ops.registry import REQ_NULL, Launch
from ..shared.random import (DIST_UNIFORM, draw, fit_uniform, key_from, multinomial_views, pick,
                             randint, sample_code, sample_views, scalar_params, shuffle_views,
                             uniform01, uniform_below)

_KEY_RANGE = 2 ** 62


@njit(cache=True)
def launch_key():
    """A fresh launch key from numba's stream."""
    return key_from(np.random.randint(0, _KEY_RANGE))


@njit(cache=True)
def random_fill(out, dist, a, b, req):
    """``out`` (1-d) filled with samples of ``dist`` with scalar parameters."""
    if req == REQ_NULL:
        return
    key = launch_key()
    for i in range(out.size):
        out[i] = draw(dist, a, b, key, i)
        if dist == DIST_UNIFORM:
            out[i] = fit_uniform(out[i], a, b)


@njit(cache=True)
def random_like(data, out, dist, a, b, req):
    """``random_fill`` for the ``_like`` ops (``data`` is read for its shape only)."""
    random_fill(out, dist, a, b, req)


@njit(cache=True)
def sample_params(p1, p2, out, dist, per, req):
    """``per`` samples for each parameter element: ``out[e]`` uses
    ``p1[e // per]``, ``p2[e // per]`` (one-parameter ops pass ``p1`` twice)."""
    if req == REQ_NULL:
        return
    key = launch_key()
    for e in range(out.size):
        n = e // per
        a = np.float64(p1[n])
        b = np.float64(p2[n])
        out[e] = draw(dist, a, b, key, e)
        if dist == DIST_UNIFORM:
            out[e] = fit_uniform(out[e], a, b)


@njit(cache=True)
def randint_fill(out, low, high, req):
    if req == REQ_NULL:
        return
    key = launch_key()
    for i in range(out.size):
        out[i] = randint(low, high, key, i)


@njit(cache=True, inline="always")
def _multinomial(data, out, prob, with_prob, key):
    n, m = out.shape
    for r in range(n):
        for j in range(m):
            c = pick(data, r, uniform01(key, r * m + j, 0))
            out[r, j] = c
            if with_prob:
                prob[r, j] = math.log(data[r, c])


@njit(cache=True)
def multinomial(data, out, req):
    """Indices drawn from the rows of ``data`` (n, k) into ``out`` (n, m)."""
    if req == REQ_NULL:
        return
    _multinomial(data, out, data, False, launch_key())


@njit(cache=True)
def multinomial_prob(data, out, prob, req, req_prob):
    """``multinomial`` and ``prob = log(data[row, index])``."""
    if req == REQ_NULL and req_prob == REQ_NULL:
        return
    _multinomial(data, out, prob, req_prob != REQ_NULL, launch_key())


@njit(cache=True)
def multinomial_backward(pgrad, data, sample, grad, req):
    """``grad[r, c] = sum_j pgrad[r, j] / data[r, c]`` over the draws j of c."""
    if req == REQ_NULL:
        return
    grad[:] = 0
    n, m = sample.shape
    for r in range(n):
        for j in range(m):
            c = int(sample[r, j])
            grad[r, c] += pgrad[r, j] / data[r, c]


@njit(cache=True)
def shuffle(data, out, perm, req):
    """``out[i] = data[perm[i]]`` along axis 0 of (rows, rest) views, ``perm`` a
    Fisher-Yates permutation drawn under a fresh key."""
    if req == REQ_NULL:
        return
    key = launch_key()
    n = perm.size
    for i in range(n):
        perm[i] = i
    for i in range(n - 1, 0, -1):
        j = uniform_below(i + 1, key, 0, i)
        t = perm[i]
        perm[i] = perm[j]
        perm[j] = t
    rows = data.shape[0]
    for i in range(rows):
        src = perm[i]
        for k in range(data.shape[1]):
            out[i, k] = data[src, k]


def _size(shape):
    n = 1
    for s in shape:
        n *= int(s)
    return n


def prepare_random(call):
    code, a, b = scalar_params(call.op.name, call.attrs)
    n = _size(call.out_shapes[0])
    return Launch(random_fill, (int(code), a, b, int(call.req[0])), views=[(n,)])


def prepare_random_like(call):
    code, a, b = scalar_params(call.op.name, call.attrs)
    n = _size(call.out_shapes[0])
    return Launch(random_like, (int(code), a, b, int(call.req[0])), views=[(n,), (n,)])


def prepare_sample(call):
    pview, oview, per = sample_views(call)
    code = sample_code(call.op.name)
    scalars = (int(code), int(max(per, 1)), int(call.req[0]))
    if len(call.in_shapes) == 1:
        return Launch(_sample_one, scalars, views=[pview, oview])
    return Launch(sample_params, scalars, views=[pview, pview, oview])


@njit(cache=True)
def _sample_one(p1, out, dist, per, req):
    sample_params(p1, p1, out, dist, per, req)


def prepare_randint(call):
    n = _size(call.out_shapes[0])
    return Launch(randint_fill, (int(call.attrs["low"]), int(call.attrs["high"]),
                                 int(call.req[0])), views=[(n,)])


def prepare_multinomial(call):
    dview, oview = multinomial_views(call.in_shapes[0], call.out_shapes[0])
    if call.attrs["get_prob"]:
        return Launch(multinomial_prob, (int(call.req[0]), int(call.req[1])),
                      views=[dview, oview, oview])
    return Launch(multinomial, (int(call.req[0]),), views=[dview, oview])


def prepare_multinomial_backward(call):
    dview, oview = multinomial_views(call.in_shapes[1], call.in_shapes[2])
    return Launch(multinomial_backward, (int(call.req[0]),),
                  views=[oview, dview, oview, dview])


def prepare_shuffle(call):
    dview, pview = shuffle_views(call.in_shapes[0])
    return Launch(shuffle, (int(call.req[0]),), views=[dview, dview, pview])
