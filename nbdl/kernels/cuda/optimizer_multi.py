"""CUDA kernels of the multi-tensor optimizer helpers (``nbdl/ops/optimizer_multi.py``):
as the CPU module (``kernels/cpu/optimizer_multi.py``), one launch per array;
``multi_sum_sq`` adds each thread's partial sum into a float64 accumulator
with an atomic add, so its last bits may vary from run to run."""
import numpy as np
from numba import cuda, float32

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import optimizer as _steps
from ..shared.optimizer import multi_sum_sq_run, preloaded_plan
from ._launch import grid1d
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)

_sgd_mom = cuda.jit(device=True)(_steps.sgd_mom_step)
_lars = cuda.jit(device=True)(_steps.lars_step)


def _run(kernel, n, *args):
    if n:
        blocks, threads = grid1d(n)
        kernel[blocks, threads](*args)


@cuda.jit
def _zero(x):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        x[i] = 0


@cuda.jit
def _sum_sq(x, acc, k):
    s = 0.0
    for j in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        v = float(x[j])
        s += v * v
    cuda.atomic.add(acc, k, s)


@cuda.jit
def _store(acc, out, req):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        _put(out, i, acc[i], req == REQ_ADD)


@cuda.jit
def _multi_lars(lrs, w_ss, g_ss, wds, out, req, eta, eps, rescale):
    for i in range(cuda.grid(1), lrs.size, cuda.gridsize(1)):
        v = _lars(lrs[i], w_ss[i], g_ss[i], wds[i], eta, eps, rescale)
        if req == REQ_ADD:
            out[i] += v
        elif req != REQ_NULL:
            out[i] = v


@cuda.jit
def _preloaded(w, g, mom, w32, out, lrs, wds, k, req, momentum, rescale, clip, has_mom, mp):
    """One weight's update; ``mp``: float16 ``w``/``g``/``out``, the master copy
    ``w32`` updated (else ``w32`` is ``w`` and not written)."""
    lr = lrs[k]
    wd = wds[k]
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        m = mom[i] if has_mom else momentum * 0
        if mp:
            a, m = _sgd_mom(w32[i], float32(g[i]), m, lr, momentum, wd, rescale, clip)
            w32[i] = a
        else:
            a, m = _sgd_mom(w[i], g[i], m, lr, momentum, wd, rescale, clip)
        if has_mom:
            mom[i] = m
        if req != REQ_NULL:
            out[i] = a


def prepare_multi_sum_sq(call):
    def begin(acc):
        _run(_zero, acc.size, acc)

    def add_array(x, acc, i):
        _run(_sum_sq, x.size, x, acc, i)

    def finish(acc, out, req):
        _run(_store, acc.size, acc, out, req)
    return Launch(multi_sum_sq_run(call, begin, add_array, finish), (), views=None)


def prepare_multi_lars(call):
    n = int(np.prod(call.in_shapes[0], dtype=np.int64))
    scalars = (int(call.req[0]),) + tuple(np.float32(call.attrs[k]) for k in call.op.scalar_attrs)

    def run(*args):
        _run(_multi_lars, n, *args)
    return Launch(run, scalars, views=[(n,)] * 5)


def prepare_preloaded(call):
    mp, has_mom, scalars, unpack = preloaded_plan(call)

    def run(*args):
        momentum, rescale, clip, lrs, wds, weights = unpack(args)
        for k, (w, g, mom, w32, out, req) in enumerate(weights):
            _run(_preloaded, out.size, w, g, mom, w32, out, lrs, wds, k, req, momentum, rescale,
                 clip, has_mom, mp)
    return Launch(run, scalars, views=None)


def prepare_reset_arrays(call):
    n = len(call.in_shapes)

    def run(*arrays):
        for a in arrays[:n]:
            flat = a.reshape(a.size)
            _run(_zero, a.size, flat.view(np.uint16) if flat.dtype == np.float16 else flat)
    return Launch(run, (), views=None)
