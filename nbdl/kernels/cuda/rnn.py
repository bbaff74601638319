"""CUDA kernels for the fused RNN op (reserve layout, scratch and
variable-length semantics as in ``nbdl.kernels.cpu.rnn``, so both devices
agree on what the forward leaves).

The batch rows of a recurrence are independent, so the forward runs one
thread per sequence (batch row) for each layer and direction, computing
every step's gate pre-activations (and, with a projection, the projected
output) with dot-product loops.  The backward, per layer and direction, runs
one thread per sequence for the step-by-step gradient (gate gradients, dh,
dc, the projection's), then one thread per parameter element for the weight
and bias gradients (sums over all steps and rows) and one thread per input
element for the layer's input gradient.  Each row's length is read from the
first N scratch entries, which ``_fill_lens`` writes first.  Dropout masks
between layers are drawn with xoroshiro128+ states made at prepare time (as
``nbdl.kernels.cuda.dropout`` does).
"""
import math

import numpy as np
from numba import cuda
from numba.cuda.random import xoroshiro128p_uniform_float64

from ...ops.registry import REQ_NULL, Launch
from ...ops.rnn import backward_temp_call_sizes, forward_temp_sizes
from ..shared.rnn import (GRU, LSTM, RNN_TANH, _layer_start, backward_views, forward_views,
                          py_seq_len, rnn_plan)
from ._launch import launcher, rng_grid
from .dropout import _make_states
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)

_seq_len = cuda.jit(device=True)(py_seq_len)


def _weights(params, l, d, L, D, G, H, I, P):
    """Python twin of ``nbdl.kernels.cpu.rnn._weights`` on device arrays."""
    R = P if P > 0 else H
    GH = G * H

    def block(ll):
        return GH * (I if ll == 0 else D * R) + GH * R + P * H
    off = sum(D * block(ll) for ll in range(l)) + d * block(l)
    il = I if l == 0 else D * R
    wx = params[off:off + GH * il].reshape((GH, il))
    off += GH * il
    wh = params[off:off + GH * R].reshape((GH, R))
    off += GH * R
    wr = params[off:off + P * H].reshape((P, H))
    boff = sum(D * block(ll) for ll in range(L)) + (l * D + d) * 2 * GH
    return wx, wh, wr, params[boff:boff + GH], params[boff + GH:boff + 2 * GH]


def _regions(res, l, T, N, D, G, H, R, extra, hasq, drop):
    """Python twin of ``nbdl.kernels.cpu.rnn._regions`` on device arrays:
    (y, [(gates, extra, q) per direction], mask, x)."""
    o = int(_layer_start(l, T, N, D, G, H, R, extra, hasq, drop))
    tn = T * N

    def take(n, shape):
        nonlocal o
        a = res[o:o + n].reshape(shape)
        o += n
        return a
    y = take(tn * D * R, (T, N, D * R))
    dirs = [(take(tn * G * H, (T, N, G * H)), take(extra * tn * H, (T, N, extra * H)),
             take(hasq * tn * H, (T, N, hasq * H))) for _ in range(D)]
    m = xin = None
    if drop and l > 0:
        m = take(tn * D * R, (tn * D * R,))
        xin = take(tn * D * R, (T, N, D * R))
    return y, dirs, m, xin


@cuda.jit(device=True)
def _sig(v, one):
    return one / (one + math.exp(-v))


@cuda.jit(device=True)
def _pos(s, ln, d):
    if d == 0 or s >= ln:
        return s
    return ln - 1 - s


@cuda.jit
def _fill_lens(dst, lens, use, T):
    for n in range(cuda.grid(1), dst.size, cuda.gridsize(1)):
        dst[n] = _seq_len(lens, n, use, T)


@cuda.jit
def _forward_layer(x, wx, wh, wr, bx, bh, h0, c0, y, g, e, q, hy, cy, lens, d, mode, H, R, proj,
                   clip, lo, hi, one, zero, w_hy, w_cy):
    T = x.shape[0]
    N = x.shape[1]
    il = x.shape[2]
    GH = g.shape[2]
    for n in range(cuda.grid(1), N, cuda.gridsize(1)):
        ln = int(lens[n])
        for s in range(T):
            t = _pos(s, ln, d)
            if s >= ln:          # padding: zero output and reserve at (t, n)
                for k in range(GH):
                    g[t, n, k] = zero
                for j in range(e.shape[2]):
                    e[t, n, j] = zero
                for j in range(q.shape[2]):
                    q[t, n, j] = zero
                for j in range(R):
                    y[t, n, d * R + j] = zero
                continue
            tp = t - 1 if d == 0 else t + 1
            for k in range(GH):
                a = bx[k]
                for i in range(il):
                    a += wx[k, i] * x[t, n, i]
                b = bh[k]
                for i in range(R):
                    hprev = h0[n, i] if s == 0 else y[tp, n, d * R + i]
                    b += wh[k, i] * hprev
                if mode == GRU and k >= 2 * H:
                    g[t, n, k] = a
                    e[t, n, k - 2 * H] = b
                else:
                    g[t, n, k] = a + b
            for j in range(H):
                if mode == LSTM:
                    cprev = c0[n, j] if s == 0 else e[tp, n, j]
                    gi = _sig(g[t, n, j], one)
                    gf = _sig(g[t, n, H + j], one)
                    gg = math.tanh(g[t, n, 2 * H + j])
                    go = _sig(g[t, n, 3 * H + j], one)
                    cv = gf * cprev + gi * gg
                    if clip:
                        cv = min(max(cv, lo), hi)
                    hv = go * math.tanh(cv)
                    g[t, n, j] = gi
                    g[t, n, H + j] = gf
                    g[t, n, 2 * H + j] = gg
                    g[t, n, 3 * H + j] = go
                    e[t, n, j] = cv
                elif mode == GRU:
                    hprev = h0[n, j] if s == 0 else y[tp, n, d * H + j]
                    gr = _sig(g[t, n, j], one)
                    gz = _sig(g[t, n, H + j], one)
                    gn = math.tanh(g[t, n, 2 * H + j] + gr * e[t, n, j])
                    hv = (one - gz) * gn + gz * hprev
                    g[t, n, j] = gr
                    g[t, n, H + j] = gz
                    g[t, n, 2 * H + j] = gn
                else:
                    a = g[t, n, j]
                    hv = math.tanh(a) if mode == RNN_TANH else max(a, zero)
                    g[t, n, j] = hv
                if proj:
                    q[t, n, j] = hv
                else:
                    y[t, n, d * H + j] = hv
            if proj:
                for p in range(R):
                    v = zero
                    for j in range(H):
                        v += wr[p, j] * q[t, n, j]
                    y[t, n, d * R + p] = v
        tl = ln - 1 if d == 0 else 0
        for j in range(R):
            if w_hy:
                hy[n, j] = h0[n, j] if ln == 0 else y[tl, n, d * R + j]
        for j in range(H):
            if w_cy:
                cy[n, j] = c0[n, j] if ln == 0 else e[tl, n, j]


@cuda.jit
def _dropout_mask(yp, m, xin, states, pkeep, scale, zero):
    tid = cuda.grid(1)
    for k in range(tid, m.size, cuda.gridsize(1)):
        m[k] = scale if xoroshiro128p_uniform_float64(states, tid) < pkeep else zero
        xin[k] = yp[k] * m[k]


@cuda.jit
def _dropout_fill(yp, m, xin, one):
    """Outside training the mask is all ones and the layer input is the output."""
    for k in range(cuda.grid(1), m.size, cuda.gridsize(1)):
        m[k] = one
        xin[k] = yp[k]


@cuda.jit
def _copy(src, dst):
    for k in range(cuda.grid(1), dst.size, cuda.gridsize(1)):
        dst[k] = src[k]


@cuda.jit
def _mul(a, b, out):
    for k in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[k] = a[k] * b[k]


@cuda.jit
def _backward_steps(dy, g, e, q, y, h0, c0, ghy, gcy, wh, wr, dgx, dgh, hp, drall, dh, dc, dhc,
                    dstate, dcell, lens, d, mode, H, R, proj, clip, lo, hi, one, zero, w_s, w_c):
    T = dy.shape[0]
    N = dy.shape[1]
    GH = g.shape[2]
    for n in range(cuda.grid(1), N, cuda.gridsize(1)):
        ln = int(lens[n])
        for j in range(R):
            dh[n, j] = ghy[n, j]
        for j in range(H):
            if mode == LSTM:
                dc[n, j] = gcy[n, j]
        for s in range(T - 1, -1, -1):
            t = _pos(s, ln, d)
            if s >= ln:          # padding: no gradient from or through (t, n)
                for k in range(GH):
                    dgx[t, n, k] = zero
                    dgh[t, n, k] = zero
                for j in range(R):
                    hp[t, n, j] = zero
                for j in range(drall.shape[2]):
                    drall[t, n, j] = zero
                continue
            first = s == 0
            tp = t - 1 if d == 0 else t + 1
            for j in range(R):
                hp[t, n, j] = h0[n, j] if first else y[tp, n, d * R + j]
            if proj:
                for p in range(R):
                    drall[t, n, p] = dh[n, p] + dy[t, n, d * R + p]
                for j in range(H):
                    v = zero
                    for p in range(R):
                        v += drall[t, n, p] * wr[p, j]
                    dhc[n, j] = v
            for j in range(H):
                if proj:
                    dhv = dhc[n, j]
                else:
                    dhv = dh[n, j] + dy[t, n, d * H + j]
                if mode == LSTM:
                    gi = g[t, n, j]
                    gf = g[t, n, H + j]
                    gg = g[t, n, 2 * H + j]
                    go = g[t, n, 3 * H + j]
                    cv = e[t, n, j]
                    cprev = c0[n, j] if first else e[tp, n, j]
                    tc = math.tanh(cv)
                    dcv = dc[n, j] + dhv * go * (one - tc * tc)
                    if clip:
                        pre = gf * cprev + gi * gg
                        if pre < lo or pre > hi:
                            dcv = zero
                    dgx[t, n, j] = dcv * gg * gi * (one - gi)
                    dgx[t, n, H + j] = dcv * cprev * gf * (one - gf)
                    dgx[t, n, 2 * H + j] = dcv * gi * (one - gg * gg)
                    dgx[t, n, 3 * H + j] = dhv * tc * go * (one - go)
                    dc[n, j] = dcv * gf
                elif mode == GRU:
                    gr = g[t, n, j]
                    gz = g[t, n, H + j]
                    gn = g[t, n, 2 * H + j]
                    dan = dhv * (one - gz) * (one - gn * gn)
                    dr = dan * e[t, n, j] * gr * (one - gr)
                    dz = dhv * (hp[t, n, j] - gn) * gz * (one - gz)
                    dgx[t, n, j] = dr
                    dgx[t, n, H + j] = dz
                    dgx[t, n, 2 * H + j] = dan
                    dgh[t, n, j] = dr
                    dgh[t, n, H + j] = dz
                    dgh[t, n, 2 * H + j] = dan * gr
                    dc[n, j] = dhv * gz   # GRU has no cell: dc holds dh's direct part
                else:
                    hv = g[t, n, j]
                    if mode == RNN_TANH:
                        dgx[t, n, j] = dhv * (one - hv * hv)
                    else:
                        dgx[t, n, j] = dhv if hv > zero else zero
            for j in range(R):
                v = zero
                for k in range(GH):
                    v += dgh[t, n, k] * wh[k, j]
                if mode == GRU:
                    v += dc[n, j]
                dh[n, j] = v
        for j in range(R):
            if w_s:
                dstate[n, j] = dh[n, j]
        for j in range(H):
            if w_c:
                dcell[n, j] = dc[n, j]


@cuda.jit
def _param_grads(x, hp, dgx, dgh, dwx, dwh, dbx, dbh, zero):
    T = x.shape[0]
    N = x.shape[1]
    il = x.shape[2]
    R = hp.shape[2]
    GH = dgx.shape[2]
    total = GH * il + GH * R + 2 * GH
    for p in range(cuda.grid(1), total, cuda.gridsize(1)):
        v = zero
        if p < GH * il:
            k = p // il
            i = p - k * il
            for t in range(T):
                for n in range(N):
                    v += dgx[t, n, k] * x[t, n, i]
            dwx[k, i] = v
        elif p < GH * il + GH * R:
            u = p - GH * il
            k = u // R
            i = u - k * R
            for t in range(T):
                for n in range(N):
                    v += dgh[t, n, k] * hp[t, n, i]
            dwh[k, i] = v
        elif p < GH * il + GH * R + GH:
            k = p - GH * il - GH * R
            for t in range(T):
                for n in range(N):
                    v += dgx[t, n, k]
            dbx[k] = v
        else:
            k = p - GH * il - GH * R - GH
            for t in range(T):
                for n in range(N):
                    v += dgh[t, n, k]
            dbh[k] = v


@cuda.jit
def _proj_grads(drall, q, dwr, zero):
    """dW_h2r = sum over steps and rows of dr (P) outer h (H)."""
    T = drall.shape[0]
    N = drall.shape[1]
    P = drall.shape[2]
    H = q.shape[2]
    for u in range(cuda.grid(1), P * H, cuda.gridsize(1)):
        p = u // H
        j = u - p * H
        v = zero
        for t in range(T):
            for n in range(N):
                v += drall[t, n, p] * q[t, n, j]
        dwr[p, j] = v


@cuda.jit
def _input_grad(dgx, wx, dxl, zero, add):
    TN = dgx.shape[0]
    GH = dgx.shape[1]
    il = dxl.shape[1]
    for p in range(cuda.grid(1), TN * il, cuda.gridsize(1)):
        r = p // il
        i = p - r * il
        v = zero
        for k in range(GH):
            v += dgx[r, k] * wx[k, i]
        _put(dxl, (r, i), v, add)


def _split(ws, sizes):
    out, o = [], 0
    for n in sizes:
        out.append(ws[o:o + n])
        o += n
    return out


def _unpack(args, lstm, use_len, n_outs):
    """(inputs dict, outputs list, ws) from a kernel call's positional arrays."""
    names = ["data", "params", "state"] + (["cell"] if lstm else []) + \
        (["lens"] if use_len else [])
    ins = dict(zip(names, args[:len(names)]))
    rest = args[len(names):]
    return ins, list(rest[:n_outs]), rest[n_outs]


def prepare_rnn(call):
    g = rnn_plan(call, call.in_shapes[0], call.out_dtypes[0])
    T, N, I, H, L, D, G, P, R = (g[k] for k in "TNIHLDGPR")
    mode, lstm, use_len = g["mode"], call.attrs["mode"] == "lstm", g["use_len"]
    extra = 1 if call.attrs["mode"] in ("lstm", "gru") else 0
    hasq = 1 if P > 0 else 0
    p = float(call.attrs["p"])
    drop = p > 0 and L > 1
    active = bool(call.is_train) and p > 0
    dt = np.dtype(call.out_dtypes[0]).type
    one, zero = dt(1), dt(0)
    scale = dt(1.0 / (1.0 - p))
    req = list(call.req)
    r_out, r_hy = req[0], req[1]
    r_cy = req[2] if lstm else REQ_NULL
    scratch = req[-1] == REQ_NULL
    fsizes = forward_temp_sizes(T, N, I, H, L, D, G, P)
    views = forward_views(call, g) + [None]
    layer = launcher(_forward_layer, N)
    fill = launcher(_fill_lens, N)
    size = T * N * D * R
    states = None
    if drop and active and size:
        blocks, threads = rng_grid(size)
        states = _make_states(blocks * threads)
    else:
        fill_kernel = launcher(_dropout_fill, size)

    def fn(*args):
        ins, outs, ws = _unpack(args, lstm, use_len, 4 if lstm else 3)
        data, params, state = ins["data"], ins["params"], ins["state"]
        if lstm:
            out, hy, cy, reserve = outs
            cell = ins["cell"]
        else:
            out, hy, reserve = outs
            cell, cy = state, hy
        res = ws[sum(fsizes):] if scratch else reserve
        lens = ws[:N]
        if N:
            fill(lens, ins.get("lens", lens), use_len, T)
        for l in range(L):
            y, dirs, m, xin = _regions(res, l, T, N, D, G, H, R, extra, hasq, drop)
            if l == 0:
                x = data
            else:
                yp = _regions(res, l - 1, T, N, D, G, H, R, extra, hasq, drop)[0]
                if drop:
                    if states is not None:
                        # configured per call (the simulator's kernel[...] is shared)
                        _dropout_mask[blocks, threads](yp.reshape(size), m, xin.reshape(size),
                                                       states, 1.0 - p, scale, zero)
                    elif size:
                        fill_kernel(yp.reshape(size), m, xin.reshape(size), one)
                    x = xin
                else:
                    x = yp
            for d in range(D):
                wx, wh, wr, bx, bh = _weights(params, l, d, L, D, G, H, I, P)
                gates, e, q = dirs[d]
                k = l * D + d
                if N:
                    layer(x, wx, wh, wr, bx, bh, state[k], cell[k], y, gates, e, q, hy[k], cy[k],
                          lens, d, mode, H, R, P > 0, g["clip"], g["lo"], g["hi"], one, zero,
                          r_hy != REQ_NULL, r_cy != REQ_NULL)
            if l == L - 1 and r_out != REQ_NULL and size:
                launcher(_copy, size)(y.reshape(size), out.reshape(size))
    return Launch(fn, (), views=views)


def prepare_rnn_backward(call):
    lstm = call.attrs["mode"] == "lstm"
    nh = 3 if lstm else 2
    g = rnn_plan(call, call.in_shapes[nh], call.out_dtypes[0])
    T, N, I, H, L, D, G, P, R = (g[k] for k in "TNIHLDGPR")
    mode, use_len = g["mode"], g["use_len"]
    extra = 1 if call.attrs["mode"] in ("lstm", "gru") else 0
    hasq = 1 if P > 0 else 0
    drop = float(call.attrs["p"]) > 0 and L > 1
    dt = np.dtype(call.out_dtypes[0]).type
    one, zero = dt(1), dt(0)
    req = list(call.req)
    r_x, r_p, r_s = req[0], req[1], req[2]
    r_c = req[3] if lstm else REQ_NULL
    sizes = backward_temp_call_sizes(call)
    tn = T * N
    steps = launcher(_backward_steps, N)
    fill = launcher(_fill_lens, N)

    def fn(*args):
        heads, args = args[:nh], args[nh:]
        ins, rest, ws = _unpack(args, lstm, use_len, 1 + (4 if lstm else 3))
        reserve, grads = rest[0], rest[1:]
        og, ghy = heads[0], heads[1]
        data, params, state = ins["data"], ins["params"], ins["state"]
        if lstm:
            gcy, cell = heads[2], ins["cell"]
            dx, dparams, dstate, dcell = grads
        else:
            gcy, cell = ghy, state
            dx, dparams, dstate = grads
            dcell = dstate
        (lens, dy, dxl_all, _, dgx, dgh_own, hp, dh, dc, _, _, drall, _, dhc,
         dp_scratch, _, _) = _split(ws, sizes)
        # the parameter gradient is computed in the output unless it is not wanted
        dp = dp_scratch if r_p == REQ_NULL else dparams
        if N:
            fill(lens, ins.get("lens", lens), use_len, T)
        dy = dy.reshape((T, N, D * R))
        dgx = dgx.reshape((T, N, G * H))
        dgh = dgh_own.reshape((T, N, G * H)) if mode == GRU else dgx
        hp = hp.reshape((T, N, R))
        drall = drall.reshape((T, N, P))
        dh, dc, dhc = dh.reshape((N, R)), dc.reshape((N, H)), dhc.reshape((N, hasq * H))
        if dy.size:
            launcher(_copy, dy.size)(og.reshape(dy.size), dy.reshape(dy.size))
        for l in range(L - 1, -1, -1):
            il = I if l == 0 else D * R
            y, dirs, m, xin = _regions(reserve, l, T, N, D, G, H, R, extra, hasq, drop)
            if l == 0:
                x = data
            elif drop:
                x = xin
            else:
                x = _regions(reserve, l - 1, T, N, D, G, H, R, extra, hasq, drop)[0]
            dxl = dxl_all[:tn * il].reshape((tn, il))
            for d in range(D):
                wx, wh, wr, bx, bh = _weights(params, l, d, L, D, G, H, I, P)
                dwx, dwh, dwr, dbx, dbh = _weights(dp, l, d, L, D, G, H, I, P)
                gates, e, q = dirs[d]
                k = l * D + d
                if N:
                    steps(dy, gates, e, q, y, state[k], cell[k], ghy[k], gcy[k], wh, wr, dgx, dgh,
                          hp, drall, dh, dc, dhc, dstate[k], dcell[k], lens, d, mode, H, R,
                          P > 0, g["clip"], g["lo"], g["hi"], one, zero, r_s != REQ_NULL,
                          r_c != REQ_NULL)
                n_p = G * H * il + G * H * R + 2 * G * H
                launcher(_param_grads, n_p)(x, hp, dgx, dgh, dwx, dwh, dbx, dbh, zero)
                if P > 0:
                    launcher(_proj_grads, P * H)(drall, q, dwr, zero)
                if tn * il:
                    launcher(_input_grad, tn * il)(dgx.reshape((tn, G * H)), wx, dxl, zero,
                                                   d > 0)
            n = tn * il
            if l > 0 and n:
                if drop:
                    launcher(_mul, n)(dxl.reshape(n), m, dy.reshape(n))
                else:
                    launcher(_copy, n)(dxl.reshape(n), dy.reshape(n))
            elif l == 0 and r_x != REQ_NULL and n:
                launcher(_copy, n)(dxl.reshape(n), dx.reshape(n))
    return Launch(fn, (), views=backward_views(call, g))
