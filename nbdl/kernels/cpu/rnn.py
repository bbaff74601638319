"""CPU kernels for the fused RNN op and its gradient (rules in nbdl.ops.rnn).

One kernel call runs the whole sequence.  Per layer and direction: one GEMM
of all timesteps' inputs by ``W_i2h`` (``np.dot`` on (T*N, I_l)), then the
recurrent loop with one (N, H) x (H, G*H) GEMM per step and the gate math in
scalar loops.  Everything backward needs is left in the ``reserve`` vector,
laid out per layer ``l`` as

    y_l (T, N, D*H)                          the layer's output (pre-dropout)
    for each direction d:
        gates (T, N, G*H)                    activated gates (RNN: h itself)
        extra (T, N, H)                      LSTM: cell state; GRU: W_hn h + b_hn
    if p > 0 and L > 1 and l > 0:
        mask (T, N, D*H), x_l (T, N, D*H)    dropout mask and the masked input

``_backward_RNN`` walks the layers top-down and time backwards, collecting
the gate gradients of every step so that the weight gradients are two GEMMs
per layer and direction.  Scratch comes from the op's temp vector (sizes in
``nbdl.ops.rnn``).  Outputs honour REQ_NULL; the ops do not accept REQ_ADD.
"""
import numpy as np
from numba import njit

from ...ops.registry import REQ_NULL, Launch
from ...ops.rnn import (MODE_IDS, backward_temp_sizes, forward_temp_sizes, geometry,
                        param_size, reserve_size)

RNN_RELU, RNN_TANH, LSTM, GRU = 0, 1, 2, 3


# -- layout helpers -------------------------------------------------------------

@njit(cache=True)
def _weights(params, l, d, L, D, G, H, I):
    """(W_i2h (G*H, I_l), W_h2h (G*H, H), b_i2h, b_h2h) of layer l, direction d."""
    off = 0
    il = I
    for ll in range(L):
        il = I if ll == 0 else D * H
        if ll == l:
            off += d * (G * H * il + G * H * H)
            break
        off += D * (G * H * il + G * H * H)
    wx = params[off:off + G * H * il].reshape((G * H, il))
    wh = params[off + G * H * il:off + G * H * il + G * H * H].reshape((G * H, H))
    boff = 0
    for ll in range(L):
        boff += D * (G * H * (I if ll == 0 else D * H) + G * H * H)
    boff += (l * D + d) * 2 * G * H
    return wx, wh, params[boff:boff + G * H], params[boff + G * H:boff + 2 * G * H]


@njit(cache=True)
def _layer_start(l, T, N, D, G, H, extra, drop):
    off = 0
    for ll in range(l):
        off += T * N * D * H + D * (T * N * G * H + extra * T * N * H)
        if drop and ll > 0:
            off += 2 * T * N * D * H
    return off


@njit(cache=True)
def _regions(res, l, T, N, D, G, H, extra, drop):
    """(y, gates of d=0, extra of d=0, gates of d=1, extra of d=1, mask, x) of
    layer l; absent regions are empty arrays."""
    o = _layer_start(l, T, N, D, G, H, extra, drop)
    tn = T * N
    y = res[o:o + tn * D * H].reshape((T, N, D * H))
    o += tn * D * H
    g0 = res[o:o + tn * G * H].reshape((T, N, G * H))
    o += tn * G * H
    e0 = res[o:o + extra * tn * H].reshape((T, N, extra * H))
    o += extra * tn * H
    if D == 2:
        g1 = res[o:o + tn * G * H].reshape((T, N, G * H))
        o += tn * G * H
        e1 = res[o:o + extra * tn * H].reshape((T, N, extra * H))
        o += extra * tn * H
    else:
        g1 = g0
        e1 = e0
    if drop and l > 0:
        m = res[o:o + tn * D * H].reshape((T, N, D * H))
        o += tn * D * H
        x = res[o:o + tn * D * H].reshape((T, N, D * H))
    else:
        m = res[0:0].reshape((0, N, D * H))
        x = m
    return y, g0, e0, g1, e1, m, x


@njit(cache=True, inline="always")
def _gemm(a, b, out):
    """out = a @ b, safe for empty operands (BLAS is not called on them)."""
    if out.size == 0:
        return
    if a.shape[1] == 0:
        out[...] = 0
        return
    np.dot(a, b, out)


@njit(cache=True, inline="always")
def _sigmoid(v, one):
    return one / (one + np.exp(-v))


# -- forward --------------------------------------------------------------------

@njit(cache=True)
def _forward_core(data, params, state, cell, out, hy, cy, res, ws, mode, L, D, H, pkeep,
                  active, clip, lo, hi, r_out, r_hy, r_cy):
    T, N, I = data.shape
    G = 4 if mode == LSTM else (3 if mode == GRU else 1)
    extra = 1 if mode == LSTM or mode == GRU else 0
    drop = pkeep < 1.0 and L > 1
    one = data.dtype.type(1)
    zero = data.dtype.type(0)
    scale = data.dtype.type(1.0 / pkeep)
    h = ws[0:N * H].reshape((N, H))
    c = ws[N * H:2 * N * H].reshape((N, H))
    gh = ws[2 * N * H:2 * N * H + N * G * H].reshape((N, G * H))
    tn = T * N
    for l in range(L):
        y, g0, e0, g1, e1, m, xin = _regions(res, l, T, N, D, G, H, extra, drop)
        if l == 0:
            x2 = data.reshape((tn, I))
        else:
            yp = _regions(res, l - 1, T, N, D, G, H, extra, drop)[0]
            if drop:
                mf = m.reshape(tn * D * H)
                xf = xin.reshape(tn * D * H)
                ypf = yp.reshape(tn * D * H)
                for k in range(mf.size):
                    if active:
                        mf[k] = scale if np.random.random() < pkeep else zero
                    else:
                        mf[k] = one
                    xf[k] = ypf[k] * mf[k]
                x2 = xin.reshape((tn, D * H))
            else:
                x2 = yp.reshape((tn, D * H))
        for d in range(D):
            wx, wh, bx, bh = _weights(params, l, d, L, D, G, H, I)
            g = g0 if d == 0 else g1
            e = e0 if d == 0 else e1
            _gemm(x2, wx.T, g.reshape((tn, G * H)))
            h[...] = state[l * D + d]
            if mode == LSTM:
                c[...] = cell[l * D + d]
            for s in range(T):
                t = s if d == 0 else T - 1 - s
                _gemm(h, wh.T, gh)
                for n in range(N):
                    for j in range(H):
                        if mode == LSTM:
                            ai = g[t, n, j] + bx[j] + bh[j] + gh[n, j]
                            af = g[t, n, H + j] + bx[H + j] + bh[H + j] + gh[n, H + j]
                            ag = g[t, n, 2 * H + j] + bx[2 * H + j] + bh[2 * H + j] + gh[n, 2 * H + j]
                            ao = g[t, n, 3 * H + j] + bx[3 * H + j] + bh[3 * H + j] + gh[n, 3 * H + j]
                            gi = _sigmoid(ai, one)
                            gf = _sigmoid(af, one)
                            gg = np.tanh(ag)
                            go = _sigmoid(ao, one)
                            cv = gf * c[n, j] + gi * gg
                            if clip:
                                cv = min(max(cv, lo), hi)
                            hv = go * np.tanh(cv)
                            g[t, n, j] = gi
                            g[t, n, H + j] = gf
                            g[t, n, 2 * H + j] = gg
                            g[t, n, 3 * H + j] = go
                            e[t, n, j] = cv
                            c[n, j] = cv
                        elif mode == GRU:
                            gr = _sigmoid(g[t, n, j] + bx[j] + gh[n, j] + bh[j], one)
                            gz = _sigmoid(g[t, n, H + j] + bx[H + j] + gh[n, H + j] + bh[H + j],
                                          one)
                            hn = gh[n, 2 * H + j] + bh[2 * H + j]
                            gn = np.tanh(g[t, n, 2 * H + j] + bx[2 * H + j] + gr * hn)
                            hv = (one - gz) * gn + gz * h[n, j]
                            g[t, n, j] = gr
                            g[t, n, H + j] = gz
                            g[t, n, 2 * H + j] = gn
                            e[t, n, j] = hn
                        else:
                            a = g[t, n, j] + bx[j] + bh[j] + gh[n, j]
                            hv = np.tanh(a) if mode == RNN_TANH else max(a, zero)
                            g[t, n, j] = hv
                        y[t, n, d * H + j] = hv
                        h[n, j] = hv
            if r_hy != REQ_NULL:
                hy[l * D + d] = h
            if mode == LSTM and r_cy != REQ_NULL:
                cy[l * D + d] = c
        if l == L - 1 and r_out != REQ_NULL:
            out[...] = y


@njit(cache=True)
def rnn_forward(data, params, state, out, hy, reserve, ws, scratch_reserve, mode, L, D, H,
                pkeep, active, clip, lo, hi, r_out, r_hy):
    R = reserve.size
    res = ws[ws.size - R:ws.size] if scratch_reserve else reserve[0:R]
    _forward_core(data, params, state, state, out, hy, hy, res, ws, mode, L, D, H, pkeep,
                  active, clip, lo, hi, r_out, r_hy, REQ_NULL)


@njit(cache=True)
def lstm_forward(data, params, state, cell, out, hy, cy, reserve, ws, scratch_reserve, mode, L,
                 D, H, pkeep, active, clip, lo, hi, r_out, r_hy, r_cy):
    R = reserve.size
    res = ws[ws.size - R:ws.size] if scratch_reserve else reserve[0:R]
    _forward_core(data, params, state, cell, out, hy, cy, res, ws, mode, L, D, H, pkeep,
                  active, clip, lo, hi, r_out, r_hy, r_cy)


# -- backward -------------------------------------------------------------------

@njit(cache=True)
def _backward_core(og, ghy, gcy, data, params, state, cell, res, dx, dparams, dstate, dcell,
                   ws, mode, L, D, H, pkeep, clip, lo, hi, r_x, r_p, r_s, r_c):
    T, N, I = data.shape
    G = 4 if mode == LSTM else (3 if mode == GRU else 1)
    extra = 1 if mode == LSTM or mode == GRU else 0
    drop = pkeep < 1.0 and L > 1
    one = data.dtype.type(1)
    zero = data.dtype.type(0)
    tn = T * N
    imax = max(I, D * H)
    P = dparams.size
    o = 0
    dy = ws[o:o + tn * D * H].reshape((T, N, D * H))
    o += tn * D * H
    dxl_all = ws[o:o + tn * imax]
    o += tn * imax
    dxt_all = ws[o:o + tn * imax]
    o += tn * imax
    dgx = ws[o:o + tn * G * H].reshape((T, N, G * H))
    o += tn * G * H
    dgh_own = ws[o:o + tn * G * H].reshape((T, N, G * H))
    o += tn * G * H
    hp = ws[o:o + tn * H].reshape((T, N, H))
    o += tn * H
    dh = ws[o:o + N * H].reshape((N, H))
    o += N * H
    dc = ws[o:o + N * H].reshape((N, H))
    o += N * H
    dp = ws[o:o + P]
    dgh = dgh_own if mode == GRU else dgx
    dp[:] = zero
    dy[...] = og
    for l in range(L - 1, -1, -1):
        il = I if l == 0 else D * H
        y, g0, e0, g1, e1, m, xin = _regions(res, l, T, N, D, G, H, extra, drop)
        if l == 0:
            x2 = data.reshape((tn, I))
        elif drop:
            x2 = xin.reshape((tn, il))
        else:
            x2 = _regions(res, l - 1, T, N, D, G, H, extra, drop)[0].reshape((tn, il))
        dxl = dxl_all[0:tn * il].reshape((tn, il))
        dxt = dxt_all[0:tn * il].reshape((tn, il))
        for d in range(D):
            wx, wh, bx, bh = _weights(params, l, d, L, D, G, H, I)
            g = g0 if d == 0 else g1
            e = e0 if d == 0 else e1
            dh[...] = ghy[l * D + d]
            if mode == LSTM:
                dc[...] = gcy[l * D + d]
            for s in range(T):
                t = T - 1 - s if d == 0 else s
                first = (t == 0) if d == 0 else (t == T - 1)
                tp = t - 1 if d == 0 else t + 1
                for n in range(N):
                    for j in range(H):
                        hp[t, n, j] = state[l * D + d, n, j] if first else y[tp, n, d * H + j]
                        dhv = dh[n, j] + dy[t, n, d * H + j]
                        if mode == LSTM:
                            gi = g[t, n, j]
                            gf = g[t, n, H + j]
                            gg = g[t, n, 2 * H + j]
                            go = g[t, n, 3 * H + j]
                            cv = e[t, n, j]
                            cprev = cell[l * D + d, n, j] if first else e[tp, n, j]
                            tc = np.tanh(cv)
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
                            hn = e[t, n, j]
                            dan = dhv * (one - gz) * (one - gn * gn)
                            dr = dan * hn * gr * (one - gr)
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
                _gemm(dgh[t], wh, dh)
                if mode == GRU:
                    dh += dc
            if r_s != REQ_NULL:
                dstate[l * D + d] = dh
            if mode == LSTM and r_c != REQ_NULL:
                dcell[l * D + d] = dc
            # weight and bias gradients over all steps at once
            dwx, dwh, dbx, dbh = _weights(dp, l, d, L, D, G, H, I)
            dgx2 = dgx.reshape((tn, G * H))
            dgh2 = dgh.reshape((tn, G * H))
            _gemm(dgx2.T, x2, dwx)
            _gemm(dgh2.T, hp.reshape((tn, H)), dwh)
            for r in range(tn):
                for k in range(G * H):
                    dbx[k] += dgx2[r, k]
                    dbh[k] += dgh2[r, k]
            if d == 0:
                _gemm(dgx2, wx, dxl)
            else:
                _gemm(dgx2, wx, dxt)
                dxl += dxt
        if l > 0:
            dyf = dy.reshape(tn * D * H)
            dxf = dxl.reshape(tn * D * H)
            if drop:
                mf = m.reshape(tn * D * H)
                for k in range(dyf.size):
                    dyf[k] = dxf[k] * mf[k]
            else:
                dyf[:] = dxf
        elif r_x != REQ_NULL:
            dx[...] = dxl.reshape((T, N, I))
    if r_p != REQ_NULL:
        dparams[:] = dp


@njit(cache=True)
def rnn_backward(og, ghy, data, params, state, reserve, dx, dparams, dstate, ws, mode, L, D, H,
                 pkeep, clip, lo, hi, r_x, r_p, r_s):
    _backward_core(og, ghy, ghy, data, params, state, state, reserve, dx, dparams, dstate,
                   dstate, ws, mode, L, D, H, pkeep, clip, lo, hi, r_x, r_p, r_s, REQ_NULL)


@njit(cache=True)
def lstm_backward(og, ghy, gcy, data, params, state, cell, reserve, dx, dparams, dstate, dcell,
                  ws, mode, L, D, H, pkeep, clip, lo, hi, r_x, r_p, r_s, r_c):
    _backward_core(og, ghy, gcy, data, params, state, cell, reserve, dx, dparams, dstate,
                   dcell, ws, mode, L, D, H, pkeep, clip, lo, hi, r_x, r_p, r_s, r_c)


# -- prepare --------------------------------------------------------------------

def rnn_plan(call, data_shape, dtype):
    """Geometry, flat views and the scalars shared by CPU and CUDA prepares."""
    a = call.attrs
    T, N, I, H, L, D, G = geometry(a, data_shape)
    dt = np.dtype(dtype).type
    clip = a["lstm_state_clip_min"] is not None
    lo = dt(a["lstm_state_clip_min"] if clip else 0)
    hi = dt(a["lstm_state_clip_max"] if clip else 0)
    return dict(T=T, N=N, I=I, H=H, L=L, D=D, G=G, mode=MODE_IDS[a["mode"]], clip=int(clip),
                lo=lo, hi=hi, P=param_size(L, D, G, H, I),
                R=reserve_size(a, T, N, I, H, L, D, G))


def forward_views(call, g):
    T, N, I, H, L, D = g["T"], g["N"], g["I"], g["H"], g["L"], g["D"]
    lstm = call.attrs["mode"] == "lstm"
    state = (L * D, N, H)
    views = [(T, N, I), (g["P"],), state] + ([state] if lstm else [])
    views += [(T, N, D * H), state] + ([state] if lstm else []) + [(g["R"],)]
    return views


def prepare_rnn(call):
    g = rnn_plan(call, call.in_shapes[0], call.out_dtypes[0])
    lstm = call.attrs["mode"] == "lstm"
    p = float(call.attrs["p"])
    pkeep = 1.0 - p
    active = int(bool(call.is_train) and p > 0)
    scratch = int(call.req[-1] == REQ_NULL)
    views = forward_views(call, g) + [None]
    req = list(call.req[:-1])
    scalars = (scratch, g["mode"], g["L"], g["D"], g["H"], pkeep, active, g["clip"], g["lo"],
               g["hi"]) + tuple(req)
    return Launch(lstm_forward if lstm else rnn_forward, scalars, views=views)


def prepare_rnn_backward(call):
    lstm = call.attrs["mode"] == "lstm"
    nh = 3 if lstm else 2
    g = rnn_plan(call, call.in_shapes[nh], call.out_dtypes[0])
    fwd = forward_views(call, g)
    n_in = 4 if lstm else 3
    out_v, hy_v = fwd[n_in], fwd[n_in + 1]
    views = [out_v, hy_v] + ([hy_v] if lstm else []) + fwd[:n_in] + [fwd[-1]] + fwd[:n_in] + [None]
    scalars = (g["mode"], g["L"], g["D"], g["H"], 1.0 - float(call.attrs["p"]), g["clip"],
               g["lo"], g["hi"]) + tuple(call.req)
    return Launch(lstm_backward if lstm else rnn_backward, scalars, views=views)


def forward_ws_size(call):
    return sum(forward_temp_sizes(*geometry(call.attrs, call.in_shapes[0])))


def backward_ws_size(call, data_shape):
    return sum(backward_temp_sizes(*geometry(call.attrs, data_shape)))
