"""The fused RNN's gate math for one (step, batch element), written as short
loops over rows that LLVM vectorises (``rnn``'s time loops call these).

What makes them vectorise: the transcendentals are ``_vmath``'s (Numba's
``np.exp``/``np.tanh`` are a library call per element), every loop runs a
plain ``range(n)`` index over row *views* (an index such as ``H + j`` is
tested for wraparound, which stops the vectoriser), each loop touches few
arrays (the runtime overlap tests LLVM adds grow with every pair of them),
and the functions are compiled with ``error_model="numpy"`` (no ZeroDivision
test in sigmoid's and tanh's divisions).  Sums keep the order of the
original per-element expressions (``x.W + b_i2h + b_h2h + h.W``), so only the
transcendentals differ from numpy's, by a few ulp.

Rows: ``gr`` a step's ``G*H`` gate values (pre-activations ``x . W_i2h`` in,
activated gates out; the reserve's), ``ghr`` ``h . W_h2h`` of the step,
``bx``/``bh`` the biases.
"""
from ..shared.jit import njit

from ._vmath import vsigmoid, vtanh


@njit(cache=True, error_model="numpy")
def lstm_forward(gr, ghr, bx, bh, cr, er, hv, clip, lo, hi):
    """Gates i, f, g, o activated in ``gr``; cell ``cr`` updated (and saved
    in ``er``); the new hidden values in ``hv``."""
    h_n = cr.shape[0]
    for k in range(4 * h_n):
        gr[k] = gr[k] + bx[k] + bh[k] + ghr[k]
    sg = gr[0:2 * h_n]
    for k in range(2 * h_n):
        sg[k] = vsigmoid(sg[k])
    gg = gr[2 * h_n:3 * h_n]
    go = gr[3 * h_n:4 * h_n]
    for j in range(h_n):
        gg[j] = vtanh(gg[j])
        go[j] = vsigmoid(go[j])
    gi = gr[0:h_n]
    gf = gr[h_n:2 * h_n]
    for j in range(h_n):
        cv = gf[j] * cr[j] + gi[j] * gg[j]
        if clip:
            cv = min(max(cv, lo), hi)
        cr[j] = cv
        er[j] = cv
    for j in range(h_n):
        hv[j] = go[j] * vtanh(cr[j])


@njit(cache=True, error_model="numpy")
def gru_forward(gr, ghr, bx, bh, hprev, er, hv):
    """Gates r, z, n activated in ``gr``; ``er`` the saved ``W_hn h + b_hn``;
    the new hidden values in ``hv`` (may be ``hprev`` itself)."""
    h_n = er.shape[0]
    for k in range(2 * h_n):
        gr[k] = vsigmoid(gr[k] + bx[k] + ghr[k] + bh[k])
    gx, gz, gn = gr[0:h_n], gr[h_n:2 * h_n], gr[2 * h_n:3 * h_n]
    bxn, ghn, bhn = bx[2 * h_n:3 * h_n], ghr[2 * h_n:3 * h_n], bh[2 * h_n:3 * h_n]
    for j in range(h_n):
        hn = ghn[j] + bhn[j]
        er[j] = hn
        gn[j] = vtanh(gn[j] + bxn[j] + gx[j] * hn)
    one = hv.dtype.type(1)
    for j in range(h_n):
        hv[j] = (one - gz[j]) * gn[j] + gz[j] * hprev[j]


@njit(cache=True, error_model="numpy")
def simple_forward(gr, ghr, bx, bh, hv, tanh):
    """RNN_TANH / RNN_RELU: gr (the reserve) and hv get tanh or relu of the sum."""
    zero = gr.dtype.type(0)
    for k in range(gr.shape[0]):
        a = gr[k] + bx[k] + bh[k] + ghr[k]
        gr[k] = a
    if tanh:
        for k in range(gr.shape[0]):
            gr[k] = vtanh(gr[k])
    else:
        for k in range(gr.shape[0]):
            gr[k] = max(gr[k], zero)
    for k in range(gr.shape[0]):
        hv[k] = gr[k]


@njit(cache=True, error_model="numpy")
def lstm_backward(gr, cv, cprev, dc, dhv, dg, tc, clip, lo, hi):
    """Gate gradients ``dg`` of one step from the hidden gradient ``dhv`` and
    the cell gradient ``dc`` (carried: becomes the previous step's); ``tc``
    a row of scratch."""
    h_n = cv.shape[0]
    one = cv.dtype.type(1)
    zero = cv.dtype.type(0)
    for j in range(h_n):
        tc[j] = vtanh(cv[j])
    gi, gf, gg, go = gr[0:h_n], gr[h_n:2 * h_n], gr[2 * h_n:3 * h_n], gr[3 * h_n:4 * h_n]
    di, df, dgg, do = dg[0:h_n], dg[h_n:2 * h_n], dg[2 * h_n:3 * h_n], dg[3 * h_n:4 * h_n]
    for j in range(h_n):
        t = tc[j]
        do[j] = dhv[j] * t * go[j] * (one - go[j])
        dc[j] = dc[j] + dhv[j] * go[j] * (one - t * t)
    if clip:
        for j in range(h_n):
            pre = gf[j] * cprev[j] + gi[j] * gg[j]
            if pre < lo or pre > hi:
                dc[j] = zero
    for j in range(h_n):
        d = dc[j]
        di[j] = d * gg[j] * gi[j] * (one - gi[j])
        df[j] = d * cprev[j] * gf[j] * (one - gf[j])
        dgg[j] = d * gi[j] * (one - gg[j] * gg[j])
        dc[j] = d * gf[j]


@njit(cache=True, error_model="numpy")
def gru_backward(gr, hn, hprev, dhv, dgx, dgh, dc):
    """Gate gradients of one step: ``dgx`` for the input products, ``dgh``
    for the recurrent ones (n's is scaled by r there); ``dc`` gets the part
    of the hidden gradient that flows to the previous step directly."""
    h_n = hn.shape[0]
    one = hn.dtype.type(1)
    gx, gz, gn = gr[0:h_n], gr[h_n:2 * h_n], gr[2 * h_n:3 * h_n]
    dxr, dxz, dxn = dgx[0:h_n], dgx[h_n:2 * h_n], dgx[2 * h_n:3 * h_n]
    dhr, dhz, dhn = dgh[0:h_n], dgh[h_n:2 * h_n], dgh[2 * h_n:3 * h_n]
    for j in range(h_n):
        dan = dhv[j] * (one - gz[j]) * (one - gn[j] * gn[j])
        dr = dan * hn[j] * gx[j] * (one - gx[j])
        dz = dhv[j] * (hprev[j] - gn[j]) * gz[j] * (one - gz[j])
        dxr[j] = dr
        dxz[j] = dz
        dxn[j] = dan
        dhr[j] = dr
        dhz[j] = dz
        dhn[j] = dan * gx[j]
        dc[j] = dhv[j] * gz[j]


@njit(cache=True, error_model="numpy")
def simple_backward(gr, dhv, dg, tanh):
    """RNN_TANH / RNN_RELU gate gradient from the saved activations ``gr``."""
    one = gr.dtype.type(1)
    zero = gr.dtype.type(0)
    if tanh:
        for j in range(gr.shape[0]):
            dg[j] = dhv[j] * (one - gr[j] * gr[j])
    else:
        for j in range(gr.shape[0]):
            dg[j] = dhv[j] if gr[j] > zero else zero


__all__ = ["lstm_forward", "gru_forward", "simple_forward", "lstm_backward", "gru_backward",
           "simple_backward"]
