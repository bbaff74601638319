"""CPU kernels of the multi-tensor optimizer helpers (``nbdl/ops/optimizer_multi.py``).

``multi_sum_sq``, the ``preloaded_multi_*`` updates and ``reset_arrays``
take a variable number of arrays: their launchers are Python loops calling
one compiled kernel per array (so such a step runs in the executor's Python
loop, not a generated driver).  The preloaded updates are MXNet's
``mom = momentum * mom - lr * wd * w - lr * clip(rescale * g); w += mom``
(``kernels/shared/optimizer.sgd_mom_step``; no momentum: ``mom`` starts at
0 each time) with ``lr``/``wd`` read from the ``lrs``/``wds`` arrays; the
mixed-precision ones take float16 weights and gradients as their uint16
bits (``_half.py``) and update the float32 master copy.
"""
import numpy as np

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import optimizer as _steps
from ..shared.optimizer import multi_sum_sq_run, preloaded_plan
from ..shared.jit import njit
from ._half import f2h, h2f
from ..shared.store import py_put

_put = njit(cache=True, inline="always")(py_put)

sgd_mom_step = njit(cache=True)(_steps.sgd_mom_step)
lars_step = njit(cache=True)(_steps.lars_step)


@njit(cache=True)
def sum_sq(x, acc, i):
    """acc[i] = sum of x**2 (x flat), in float64."""
    s = 0.0
    for j in range(x.size):
        v = np.float64(x[j])
        s += v * v
    acc[i] = s


@njit(cache=True)
def multi_lars(lrs, w_ss, g_ss, wds, out, req, eta, eps, rescale):
    if req == REQ_NULL:
        return
    for i in range(lrs.size):
        v = lars_step(lrs[i], w_ss[i], g_ss[i], wds[i], eta, eps, rescale)
        _put(out, i, v, req == REQ_ADD)


@njit(cache=True)
def preloaded_sgd(w, g, mom, out, lrs, wds, k, req, momentum, rescale, clip, has_mom):
    lr = lrs[k]
    wd = wds[k]
    for i in range(w.size):
        m = mom[i] if has_mom else momentum * 0
        a, m = sgd_mom_step(w[i], g[i], m, lr, momentum, wd, rescale, clip)
        if has_mom:
            mom[i] = m
        if req != REQ_NULL:
            out[i] = a


@njit(cache=True)
def preloaded_mp_sgd(w, g, mom, w32, out, lrs, wds, k, req, momentum, rescale, clip, has_mom):
    """``w``, ``g``, ``out``: float16 bits; ``mom``, ``w32`` float32."""
    lr = lrs[k]
    wd = wds[k]
    for i in range(w32.size):
        m = mom[i] if has_mom else np.float32(0)
        a, m = sgd_mom_step(w32[i], h2f(g[i]), m, lr, momentum, wd, rescale, clip)
        w32[i] = a
        if has_mom:
            mom[i] = m
        if req != REQ_NULL:
            out[i] = f2h(a)


def _bits(a):
    return a.view(np.uint16) if a.dtype == np.float16 else a


def _store_sum_sq(acc, out, req):
    if req == REQ_ADD:
        out += acc
    else:
        out[:] = acc


def prepare_multi_sum_sq(call):
    return Launch(multi_sum_sq_run(call, lambda acc: None, sum_sq, _store_sum_sq), (),
                  views=None)


def prepare_multi_lars(call):
    n = int(np.prod(call.in_shapes[0], dtype=np.int64))
    t = np.float32
    return Launch(multi_lars, (int(call.req[0]),) + tuple(t(call.attrs[k])
                                                          for k in call.op.scalar_attrs),
                  views=[(n,)] * 5)


def prepare_preloaded(call):
    mp, has_mom, scalars, unpack = preloaded_plan(call)

    def run(*args):
        momentum, rescale, clip, lrs, wds, weights = unpack(args)
        for k, (w, g, mom, w32, out, req) in enumerate(weights):
            if mp:
                preloaded_mp_sgd(_bits(w), _bits(g), mom, w32, _bits(out), lrs, wds, k, req,
                                 momentum, rescale, clip, has_mom)
            else:
                preloaded_sgd(w, g, mom, out, lrs, wds, k, req, momentum, rescale, clip, has_mom)
    return Launch(run, scalars, views=None)


def prepare_reset_arrays(call):
    n = len(call.in_shapes)

    def run(*arrays):
        for a in arrays[:n]:
            a.fill(0)
    return Launch(run, (), views=None)
