"""CUDA kernels for Dropout and its gradient (views as in
``nbdl.kernels.cpu.dropout``).

The mask is drawn with numba's xoroshiro128+ generators, one state per
launched thread.  The states are made when the op is prepared (bind time, or
each eager call; a small device allocation outside the planner's arena),
seeded from numba's CPU stream, so seeding that stream
(``random_state.seed``) reproduces GPU masks too; a bound executor keeps its
states, which advance on every call.
"""
import numpy as np
from numba import cuda
from numba.cuda.random import xoroshiro128p_dtype, xoroshiro128p_uniform_float64

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.dropout import broadcast_views, dropout_plan
from ..shared.random_state import draw_seed
from ._launch import launcher, rng_grid
from ..shared.elemwise_plan import size_of as _size
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)


@cuda.jit
def _draw(mask, states, pkeep, scale):
    tid = cuda.grid(1)
    for e in range(tid, mask.size, cuda.gridsize(1)):
        if xoroshiro128p_uniform_float64(states, tid) < pkeep:
            mask[e] = scale
        else:
            mask[e] = 0


@cuda.jit
def _fill(mask, value):
    for e in range(cuda.grid(1), mask.size, cuda.gridsize(1)):
        mask[e] = value


@cuda.jit
def _apply(x, mask, out, add):
    a1 = x.shape[1]
    a2 = x.shape[2]
    a3 = x.shape[3]
    a4 = x.shape[4]
    a5 = x.shape[5]
    for e in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        r = e
        i5 = r % a5
        r //= a5
        i4 = r % a4
        r //= a4
        i3 = r % a3
        r //= a3
        i2 = r % a2
        r //= a2
        i1 = r % a1
        i0 = r // a1
        # a mask dim is either the data's or 1 (broadcast): min() picks 0 there
        v = x[i0, i1, i2, i3, i4, i5] * mask[
            min(i0, mask.shape[0] - 1), min(i1, mask.shape[1] - 1),
            min(i2, mask.shape[2] - 1), min(i3, mask.shape[3] - 1),
            min(i4, mask.shape[4] - 1), min(i5, mask.shape[5] - 1)]
        _put(out, (i0, i1, i2, i3, i4, i5), v, add)


def _make_states(n):
    """``n`` xoroshiro128+ states seeded from numba's CPU stream.  Each state
    is an independent random 128-bit seed (not numba's jump-ahead
    subsequences: those are made by a CPU loop that costs a compile per
    process and seconds in the simulator); with a period of 2**128, streams
    this short overlap with negligible probability."""
    rng = np.random.default_rng(int(draw_seed()))
    host = np.empty(n, dtype=xoroshiro128p_dtype)
    host["s0"] = rng.integers(0, 2 ** 64, size=n, dtype=np.uint64) | np.uint64(1)  # never all-zero
    host["s1"] = rng.integers(0, 2 ** 64, size=n, dtype=np.uint64)
    return cuda.to_device(host)


def prepare_dropout(call):
    dview, mview, pkeep, scale, draw_mask, fill_value = dropout_plan(call)
    dt = np.dtype(call.out_dtypes[0]).type
    n, m = _size(dview), _size(mview)
    want_out = call.req[0] != REQ_NULL
    scratch = call.req[1] == REQ_NULL
    views = [dview, dview, mview] + ([mview] if scratch else [])
    if m == 0 or (scratch and not want_out):  # nothing is wanted
        return Launch(lambda *arrays: None, (), views=views)
    apply = launcher(_apply, n)
    if draw_mask:
        blocks, threads = rng_grid(m)
        states = _make_states(blocks * threads)
    else:
        fill = launcher(_fill, m)

    def fn(x, out, mask, *temp):
        target = temp[0] if scratch else mask
        flat = target.reshape(m)
        if draw_mask:
            # configured at each call: the simulator's kernel[grid, block]
            # reconfigures the one kernel object every prepare shares
            _draw[blocks, threads](flat, states, float(pkeep), dt(scale))
        else:
            fill(flat, dt(fill_value))
        if want_out:
            apply(x, target, out, False)
    return Launch(fn, (), views=views)


def prepare_dropout_backward(call):
    dview, mview = broadcast_views(call.in_shapes[0], call.attrs["axes"])
    views = [dview, mview, dview]
    if call.req[0] == REQ_NULL or _size(dview) == 0:
        return Launch(lambda *arrays: None, (), views=views)
    apply = launcher(_apply, _size(dview))
    add = call.req[0] == REQ_ADD

    def fn(og, mask, grad):
        apply(og, mask, grad, add)
    return Launch(fn, (), views=views)
