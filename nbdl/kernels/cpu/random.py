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
from ..shared.jit import njit

from ...ops.registry import REQ_NULL, Launch
from ._half import bits_launcher, f2h, h2f
from ..shared.random import (DIST_UNIFORM, draw, fit_uniform, key_from, multinomial_views,
                             permutation, pick, randint, sample_code, sample_views, scalar_params,
                             shuffle_views, uniform01, unique_zipfian_row)
from ..shared.elemwise_plan import size_of as _size

_KEY_RANGE = 2 ** 62


@njit(cache=True)
def launch_key():
    """A fresh launch key from numba's stream."""
    return key_from(np.random.randint(0, _KEY_RANGE))


@njit(cache=True, inline="always")
def _store(out, i, v, dist, a, b, half):
    """``out[i] = v`` rounded to the output dtype (float16 as its bits when
    ``half``), a uniform sample kept below ``b``."""
    if half:
        h = f2h(v)
        if dist == DIST_UNIFORM and h2f(h) >= b and b > a:
            h = f2h(a)
        out[i] = h
    else:
        out[i] = v
        if dist == DIST_UNIFORM:
            out[i] = fit_uniform(out[i], a, b)


@njit(cache=True, inline="always")
def _load(arr, i, half):
    if half:
        return np.float64(h2f(arr[i]))
    return np.float64(arr[i])


@njit(cache=True)
def random_fill(out, dist, a, b, half, req):
    """``out`` (1-d) filled with samples of ``dist`` with scalar parameters
    (``half``: ``out`` holds float16 bits)."""
    if req == REQ_NULL:
        return
    key = launch_key()
    for i in range(out.size):
        _store(out, i, draw(dist, a, b, key, i), dist, a, b, half)


@njit(cache=True)
def random_like(data, out, dist, a, b, half, req):
    """``random_fill`` for the ``_like`` ops (``data`` is read for its shape only)."""
    random_fill(out, dist, a, b, half, req)


@njit(cache=True)
def sample_params(p1, p2, out, dist, per, half_in, half_out, req):
    """``per`` samples for each parameter element: ``out[e]`` uses
    ``p1[e // per]``, ``p2[e // per]`` (one-parameter ops pass ``p1`` twice;
    ``half_in`` / ``half_out``: the parameters / output hold float16 bits)."""
    if req == REQ_NULL:
        return
    key = launch_key()
    for e in range(out.size):
        n = e // per
        a = _load(p1, n, half_in)
        b = _load(p2, n, half_in)
        _store(out, e, draw(dist, a, b, key, e), dist, a, b, half_out)


@njit(cache=True)
def randint_fill(out, low, high, req):
    if req == REQ_NULL:
        return
    key = launch_key()
    for i in range(out.size):
        out[i] = randint(low, high, key, i)


@njit(cache=True, inline="always")
def _pick_half(data, r, u):
    k = data.shape[1]
    acc = 0.0
    for c in range(k):
        acc += h2f(data[r, c])
        if u < acc:
            return c
    return k - 1


@njit(cache=True, inline="always")
def _multinomial(data, out, prob, with_prob, half_data, half_out, key):
    n, m = out.shape
    for r in range(n):
        for j in range(m):
            u = uniform01(key, r * m + j, 0)
            c = _pick_half(data, r, u) if half_data else pick(data, r, u)
            if half_out:
                out[r, j] = f2h(c)
            else:
                out[r, j] = c
            if with_prob:
                if half_data:
                    prob[r, j] = f2h(math.log(h2f(data[r, c])))
                else:
                    prob[r, j] = math.log(data[r, c])


@njit(cache=True)
def multinomial(data, out, half_data, half_out, req):
    """Indices drawn from the rows of ``data`` (n, k) into ``out`` (n, m)
    (``half_*``: that array holds float16 bits)."""
    if req == REQ_NULL:
        return
    _multinomial(data, out, data, False, half_data, half_out, launch_key())


@njit(cache=True)
def multinomial_prob(data, out, prob, half_data, half_out, req, req_prob):
    """``multinomial`` and ``prob = log(data[row, index])``."""
    if req == REQ_NULL and req_prob == REQ_NULL:
        return
    _multinomial(data, out, prob, req_prob != REQ_NULL, half_data, half_out, launch_key())


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
    permutation(perm, launch_key())
    rows = data.shape[0]
    for i in range(rows):
        src = perm[i]
        for k in range(data.shape[1]):
            out[i, k] = data[src, k]


def _half(dtype):
    return np.dtype(dtype) == np.float16


def _fn(kernel, dtypes):
    """``kernel``, or its float16-bits launcher when an array is float16."""
    return bits_launcher(kernel) if any(_half(d) for d in dtypes) else kernel


def prepare_random(call):
    code, a, b = scalar_params(call.op.name, call.attrs)
    n = _size(call.out_shapes[0])
    half = _half(call.out_dtypes[0])
    return Launch(_fn(random_fill, call.out_dtypes), (int(code), a, b, half, int(call.req[0])),
                  views=[(n,)])


def prepare_random_like(call):
    code, a, b = scalar_params(call.op.name, call.attrs)
    n = _size(call.out_shapes[0])
    half = _half(call.out_dtypes[0])
    return Launch(_fn(random_like, call.out_dtypes), (int(code), a, b, half, int(call.req[0])),
                  views=[(n,), (n,)])


def prepare_sample(call):
    pview, oview, per = sample_views(call)
    code = sample_code(call.op.name)
    scalars = (int(code), int(max(per, 1)), _half(call.in_dtypes[0]), _half(call.out_dtypes[0]),
               int(call.req[0]))
    dts = list(call.in_dtypes) + list(call.out_dtypes)
    if len(call.in_shapes) == 1:
        return Launch(_fn(_sample_one, dts), scalars, views=[pview, oview])
    return Launch(_fn(sample_params, dts), scalars, views=[pview, pview, oview])


@njit(cache=True)
def _sample_one(p1, out, dist, per, half_in, half_out, req):
    sample_params(p1, p1, out, dist, per, half_in, half_out, req)


def prepare_randint(call):
    n = _size(call.out_shapes[0])
    return Launch(randint_fill, (int(call.attrs["low"]), int(call.attrs["high"]),
                                 int(call.req[0])), views=[(n,)])


def prepare_multinomial(call):
    dview, oview = multinomial_views(call.in_shapes[0], call.out_shapes[0])
    halves = (_half(call.in_dtypes[0]), _half(call.out_dtypes[0]))
    dts = list(call.in_dtypes) + list(call.out_dtypes)
    if call.attrs["get_prob"]:
        return Launch(_fn(multinomial_prob, dts), halves + (int(call.req[0]), int(call.req[1])),
                      views=[dview, oview, oview])
    return Launch(_fn(multinomial, dts), halves + (int(call.req[0]),), views=[dview, oview])


def prepare_multinomial_backward(call):
    dview, oview = multinomial_views(call.in_shapes[1], call.in_shapes[2])
    return Launch(multinomial_backward, (int(call.req[0]),),
                  views=[oview, dview, oview, dview])


def prepare_shuffle(call):
    dview, pview = shuffle_views(call.in_shapes[0])
    return Launch(shuffle, (int(call.req[0]),), views=[dview, dview, pview])


@njit(cache=True)
def unique_zipfian(samples, tries, seen, log_range_max, req0, req1):
    if req0 == REQ_NULL and req1 == REQ_NULL:
        return
    key = launch_key()
    for r in range(samples.shape[0]):
        unique_zipfian_row(r, key, samples, tries, seen, log_range_max)


def prepare_unique_zipfian(call):
    return Launch(unique_zipfian, (math.log(call.attrs["range_max"]),) + tuple(
        int(r) for r in call.req))
