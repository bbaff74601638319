"""CUDA kernels of the samplers (views and math as ``nbdl.kernels.cpu.random``).

Each launch takes its key from the device's key stream
(``random_state.next_key``: seeded per GPU by ``mx.random.seed(s, ctx)``), so
the numbers do not depend on the grid, and a bound executor draws new ones on
every call.  Grid-stride loops over the output elements; the multinomial runs
one thread per (row, draw), the shuffle draws its permutation in one thread
and gathers the rows in parallel.
"""
import math
import warnings

import numpy as np
from numba import config as numba_config
from numba import cuda

from ...errors import DTypeError
from ...ops.registry import REQ_NULL, Launch
from ..shared.random import (DIST_UNIFORM, draw, fit_uniform, multinomial_views, permutation, pick,
                             randint, sample_code, sample_views, scalar_params, shuffle_views,
                             uniform01, unique_zipfian_row)
from ..shared.random_state import next_key
from ._launch import launcher
from ..shared.elemwise_plan import size_of as _size

if numba_config.ENABLE_CUDASIM:
    # The simulator runs the generator's uint64 arithmetic on numpy scalars,
    # which warn when it wraps (as it is meant to; compiled code wraps silently).
    warnings.filterwarnings("ignore", message="overflow encountered in scalar",
                            category=RuntimeWarning, module=r"nbdl\.kernels\.shared\.random")


@cuda.jit
def _fill(out, dist, a, b, key):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = draw(dist, a, b, key, i)
        if dist == DIST_UNIFORM:
            out[i] = fit_uniform(out[i], a, b)


@cuda.jit
def _sample(p1, p2, out, dist, per, key):
    for e in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        n = e // per
        a = np.float64(p1[n])
        b = np.float64(p2[n])
        out[e] = draw(dist, a, b, key, e)
        if dist == DIST_UNIFORM:
            out[e] = fit_uniform(out[e], a, b)


@cuda.jit
def _randint(out, low, high, key):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = randint(low, high, key, i)


@cuda.jit
def _multinomial(data, out, prob, with_prob, key):
    m = out.shape[1]
    for e in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        r = e // m
        j = e - r * m
        c = pick(data, r, uniform01(key, e, 0))
        out[r, j] = c
        if with_prob:
            prob[r, j] = math.log(data[r, c])


@cuda.jit
def _multinomial_backward(pgrad, data, sample, grad):
    # one thread per row: the draws of a row may hit one category many times
    m = sample.shape[1]
    k = data.shape[1]
    for r in range(cuda.grid(1), data.shape[0], cuda.gridsize(1)):
        for c in range(k):
            grad[r, c] = 0
        for j in range(m):
            c = int(sample[r, j])
            grad[r, c] += pgrad[r, j] / data[r, c]


@cuda.jit
def _permutation(perm, key):
    if cuda.grid(1) == 0:
        permutation(perm, key)


@cuda.jit
def _gather_rows(data, out, perm):
    rest = data.shape[1]
    for e in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        i = e // rest
        k = e - i * rest
        out[i, k] = data[perm[i], k]


def _nothing(*arrays):
    return None


def _device_id(call):
    _no_half(call)
    return call.device.device_id if call.device is not None else 0


def _no_half(call):
    for d in list(call.in_dtypes) + list(call.out_dtypes):
        if np.dtype(d) == np.float16:
            raise DTypeError(f"{call.op.name}: float16 is not supported by the CUDA samplers "
                             f"(float32/float64 are; the CPU kernels take float16)")


def prepare_random(call, like=False):
    _no_half(call)
    code, a, b = scalar_params(call.op.name, call.attrs)
    n = _size(call.out_shapes[0])
    views = [(n,), (n,)] if like else [(n,)]
    if call.req[0] == REQ_NULL or n == 0:
        return Launch(_nothing, (), views=views)
    run = launcher(_fill, n)
    dev = _device_id(call)

    def fn(*arrays):
        run(arrays[-1], int(code), a, b, next_key(dev))
    return Launch(fn, (), views=views)


def prepare_random_like(call):
    return prepare_random(call, like=True)


def prepare_sample(call):
    _no_half(call)
    pview, oview, per = sample_views(call)
    code = int(sample_code(call.op.name))
    two = len(call.in_shapes) == 2
    views = [pview, pview, oview] if two else [pview, oview]
    total = oview[0]
    if call.req[0] == REQ_NULL or total == 0:
        return Launch(_nothing, (), views=views)
    run = launcher(_sample, total)
    dev = _device_id(call)

    def fn(*arrays):
        p1 = arrays[0]
        p2 = arrays[1] if two else p1
        run(p1, p2, arrays[-1], code, int(max(per, 1)), next_key(dev))
    return Launch(fn, (), views=views)


def prepare_randint(call):
    n = _size(call.out_shapes[0])
    if call.req[0] == REQ_NULL or n == 0:
        return Launch(_nothing, (), views=[(n,)])
    run = launcher(_randint, n)
    dev = _device_id(call)
    low, high = int(call.attrs["low"]), int(call.attrs["high"])

    def fn(out):
        run(out, low, high, next_key(dev))
    return Launch(fn, (), views=[(n,)])


def prepare_multinomial(call):
    _no_half(call)
    dview, oview = multinomial_views(call.in_shapes[0], call.out_shapes[0])
    with_prob = bool(call.attrs["get_prob"])
    views = [dview, oview, oview] if with_prob else [dview, oview]
    n = _size(oview)
    if all(r == REQ_NULL for r in call.req) or n == 0:
        return Launch(_nothing, (), views=views)
    run = launcher(_multinomial, n)
    dev = _device_id(call)

    def fn(data, out, *prob):
        run(data, out, prob[0] if with_prob else out, with_prob and call.req[1] != REQ_NULL,
            next_key(dev))
    return Launch(fn, (), views=views)


def prepare_multinomial_backward(call):
    dview, oview = multinomial_views(call.in_shapes[1], call.in_shapes[2])
    views = [oview, dview, oview, dview]
    if call.req[0] == REQ_NULL or _size(dview) == 0:
        return Launch(_nothing, (), views=views)
    run = launcher(_multinomial_backward, dview[0])

    def fn(pgrad, data, sample, grad):
        run(pgrad, data, sample, grad)
    return Launch(fn, (), views=views)


def prepare_shuffle(call):
    dview, pview = shuffle_views(call.in_shapes[0])
    views = [dview, dview, pview]
    n = _size(dview)
    if call.req[0] == REQ_NULL or n == 0:
        return Launch(_nothing, (), views=views)
    gather = launcher(_gather_rows, n)
    dev = _device_id(call)

    def fn(data, out, perm):
        _permutation[1, 1](perm, next_key(dev))
        gather(data, out, perm)
    return Launch(fn, (), views=views)


@cuda.jit
def _unique_zipfian(samples, tries, seen, log_range_max, key):
    for r in range(cuda.grid(1), samples.shape[0], cuda.gridsize(1)):
        unique_zipfian_row(r, key, samples, tries, seen, log_range_max)


def prepare_unique_zipfian(call):
    dev = _device_id(call)
    rows = call.out_shapes[0][0]
    log_range_max = math.log(call.attrs["range_max"])
    run = launcher(_unique_zipfian, rows)
    skip = all(r == REQ_NULL for r in call.req) or rows == 0

    def fn(samples, tries, seen):
        if not skip:
            run(samples, tries, seen, log_range_max, next_key(dev))
    return Launch(fn, ())
