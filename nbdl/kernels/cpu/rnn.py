"""CPU kernels for the fused RNN op and its gradient (rules in nbdl.ops.rnn).

One kernel call runs the whole sequence.  Per layer and direction: one GEMM
of all timesteps' inputs by ``W_i2h`` (``np.dot`` on (T*N, I_l)), then the
recurrent loop with one (N, R) x (R, G*H) GEMM per step (plus, with a
projection, one (N, H) x (H, P) GEMM) and the gate math in scalar loops.
Everything backward needs is left in the ``reserve`` vector, laid out per
layer ``l`` as

    y_l (T, N, D*R)                          the layer's output (pre-dropout)
    for each direction d:
        gates (T, N, G*H)                    activated gates (RNN: h itself)
        extra (T, N, H)                      LSTM: cell state; GRU: W_hn h + b_hn
        q (T, N, H)                          LSTMP: the unprojected h
    if p > 0 and L > 1 and l > 0:
        mask (T, N, D*R), x_l (T, N, D*R)    dropout mask and the masked input

Variable lengths: the kernels read each batch element's length from the
first N entries of their scratch vector, which the entry points fill
(clipped to [0, T]; T for every element without ``use_sequence_length``), so
the large cores compile once per float dtype whatever the lengths' dtype.
At iteration ``s`` of a direction, element ``n`` is at step ``_pos`` (``s``
forward, ``len - 1 - s`` backward in time) when ``s < len``; the iterations
``s >= len`` visit the padding steps ``t = s``, where the forward writes zeros
(outputs and reserve) and the backward zero gate gradients, so the weight
GEMMs over all steps see nothing of the padding.

``_backward_RNN`` walks the layers top-down and each direction's iterations
in reverse, collecting the gate gradients of every step so that the weight
gradients are two (three with a projection) GEMMs per layer and direction.
Scratch comes from the op's temp vector (sizes in ``nbdl.ops.rnn``).  The time loops hold
BLAS to one thread when the per-step product is small (``_hold_steps``): a
sleeping BLAS thread can stall each of those small GEMMs for milliseconds on a
busy machine.
Outputs honour REQ_NULL; the ops do not accept REQ_ADD.
"""
import numpy as np
from numba import prange

from ..shared.jit import njit

from ...ops.registry import REQ_NULL, Launch
from ._blas_threads import hold_blas, hold_for, release_blas
from ._gemm import gemm, gemm_part, part_bounds
from ._parallel import chunk, threads, twins as _twins, use_parallel, variant
from .rnn_cells import (gru_backward, gru_forward, lstm_backward, lstm_forward, simple_backward,
                        simple_forward)
from ..shared.rnn import (GRU, LSTM, RNN_TANH, _layer_start, backward_views, forward_views,
                          py_seq_len, rnn_plan)

_seq_len = njit(cache=True, inline="always")(py_seq_len)


# -- layout helpers -------------------------------------------------------------

@njit(cache=True)
def _weights(params, l, d, L, D, G, H, I, P):
    """(W_i2h (G*H, I_l), W_h2h (G*H, R), W_h2r (P, H) (empty without a
    projection), b_i2h, b_h2h) of layer l, direction d."""
    R = P if P > 0 else H
    GH = G * H
    off = 0
    il = I
    for ll in range(L):
        il = I if ll == 0 else D * R
        block = GH * il + GH * R + P * H
        if ll == l:
            off += d * block
            break
        off += D * block
    wx = params[off:off + GH * il].reshape((GH, il))
    off += GH * il
    wh = params[off:off + GH * R].reshape((GH, R))
    off += GH * R
    wr = params[off:off + P * H].reshape((P, H))
    boff = 0
    for ll in range(L):
        boff += D * (GH * (I if ll == 0 else D * R) + GH * R + P * H)
    boff += (l * D + d) * 2 * GH
    return wx, wh, wr, params[boff:boff + GH], params[boff + GH:boff + 2 * GH]


@njit(cache=True)
def _regions(res, l, T, N, D, G, H, R, extra, hasq, drop):
    """(y, gates/extra/q of d=0, gates/extra/q of d=1, mask, x) of layer l;
    absent regions are empty arrays."""
    o = _layer_start(l, T, N, D, G, H, R, extra, hasq, drop)
    tn = T * N
    y = res[o:o + tn * D * R].reshape((T, N, D * R))
    o += tn * D * R
    g0 = res[o:o + tn * G * H].reshape((T, N, G * H))
    o += tn * G * H
    e0 = res[o:o + extra * tn * H].reshape((T, N, extra * H))
    o += extra * tn * H
    q0 = res[o:o + hasq * tn * H].reshape((T, N, hasq * H))
    o += hasq * tn * H
    if D == 2:
        g1 = res[o:o + tn * G * H].reshape((T, N, G * H))
        o += tn * G * H
        e1 = res[o:o + extra * tn * H].reshape((T, N, extra * H))
        o += extra * tn * H
        q1 = res[o:o + hasq * tn * H].reshape((T, N, hasq * H))
        o += hasq * tn * H
    else:
        g1 = g0
        e1 = e0
        q1 = q0
    if drop and l > 0:
        m = res[o:o + tn * D * R].reshape((T, N, D * R))
        o += tn * D * R
        x = res[o:o + tn * D * R].reshape((T, N, D * R))
    else:
        m = res[0:0].reshape((0, N, D * R))
        x = m
    return y, g0, e0, q0, g1, e1, q1, m, x


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
def _gemm_part(a, b, out, t, nt):
    """Part ``t`` of ``nt`` of out = a @ b (all of it for nt = 1,
    ``_gemm.gemm_part``): the layer-wide products (inputs by ``W_i2h``, the
    weight gradients) split over the parallel core's threads, BLAS held to
    one thread there (views with a leading dimension, no copies; an empty
    inner dimension gives zeros, as ``_gemm``)."""
    gemm_part(a, b, out, 1.0, 0.0, t, nt)


@njit(cache=True, inline="always")
def _h2h_part(h, wh, gh, gt, t, nt):
    """Part ``t`` of ``nt`` of a step's gh = h . W_h2h^T (``_gemm_part``'s
    split), computed as gt = W_h2h . h^T and transposed back into gh in
    blocks of 16 columns: OpenBLAS runs that form faster (one thread, half an
    LSTM's 32 x 256 x 1024: 43 against 67 us, 49 with the transpose)."""
    r0, r1, c0, c1 = part_bounds(gh.shape[0], gh.shape[1], t, nt)
    if r1 <= r0 or c1 <= c0:
        return
    if h.shape[1] == 0:
        gh[r0:r1, c0:c1] = 0
        return
    gemm(wh[c0:c1, :], h[r0:r1, :].T, gt[c0:c1, r0:r1], 1.0, 0.0)
    _transpose_into(gt, gh, r0, r1, c0, c1)


@njit(cache=True, inline="always")
def _transpose_into(src, dst, p0, p1, q0, q1):
    """dst[p, q] = src[q, p] for p in [p0, p1), q in [q0, q1), in blocks of
    16 q's (each block's reads of ``src`` stay in cache across the p's: a
    plain transpose of an LSTM step's 512 x 32 gates cost 90 us, the
    blocked one 6)."""
    for b0 in range(q0, q1, 16):
        b1 = min(q1, b0 + 16)
        for p in range(p0, p1):
            row = dst[p]
            for q in range(b0, b1):
                row[q] = src[q, p]


@njit(cache=True, inline="always")
def _pos(s, ln, d):
    """The time step element n is at in iteration s of direction d (padding
    steps, s >= len, map to themselves)."""
    if d == 0 or s >= ln:
        return s
    return ln - 1 - s


@njit(cache=True)
def _fill_lens(dst, lens, use, T):
    """dst[n] = length of element n: int(lens[n]) clipped to [0, T], or T."""
    for n in range(dst.size):
        dst[n] = _seq_len(lens, n, use, T)


# -- forward --------------------------------------------------------------------

def _forward_core_py(data, params, state, cell, out, hy, cy, res, ws, mode, L, D, H, P, pkeep,
                     active, clip, lo, hi, hold, r_out, r_hy, r_cy, nt):
    T, N, I = data.shape
    G = 4 if mode == LSTM else (3 if mode == GRU else 1)
    GH = G * H
    R = P if P > 0 else H
    proj = P > 0
    hasq = 1 if proj else 0
    extra = 1 if mode == LSTM or mode == GRU else 0
    drop = pkeep < 1.0 and L > 1
    one = data.dtype.type(1)
    zero = data.dtype.type(0)
    scale = data.dtype.type(1.0 / pkeep)
    o = 0
    lens = ws[o:o + N]
    o += N
    h = ws[o:o + N * R].reshape((N, R))
    o += N * R
    c = ws[o:o + N * H].reshape((N, H))
    o += N * H
    gh = ws[o:o + N * GH].reshape((N, GH))
    o += N * GH
    hc = ws[o:o + hasq * N * H].reshape((N, hasq * H))
    o += hasq * N * H
    rb = ws[o:o + N * P].reshape((N, P))
    o += N * P
    gt = ws[o:o + GH * N].reshape((GH, N))
    tn = T * N
    for l in range(L):
        y, g0, e0, q0, g1, e1, q1, m, xin = _regions(res, l, T, N, D, G, H, R, extra, hasq, drop)
        if l == 0:
            x2 = data.reshape((tn, I))
        else:
            yp = _regions(res, l - 1, T, N, D, G, H, R, extra, hasq, drop)[0]
            if drop:
                mf = m.reshape(tn * D * R)
                xf = xin.reshape(tn * D * R)
                ypf = yp.reshape(tn * D * R)
                for k in range(mf.size):
                    if active:
                        mf[k] = scale if np.random.random() < pkeep else zero
                    else:
                        mf[k] = one
                    xf[k] = ypf[k] * mf[k]
                x2 = xin.reshape((tn, D * R))
            else:
                x2 = yp.reshape((tn, D * R))
        for d in range(D):
            wx, wh, wr, bx, bh = _weights(params, l, d, L, D, G, H, I, P)
            g = g0 if d == 0 else g1
            e = e0 if d == 0 else e1
            q = q0 if d == 0 else q1
            g2 = g.reshape((tn, GH))
            for tt in prange(nt):
                _gemm_part(x2, wx.T, g2, tt, nt)
            h[...] = state[l * D + d]
            if mode == LSTM:
                c[...] = cell[l * D + d]
            prev = hold_blas(hold)      # the per-step products are small
            for s in range(T):
                for tt in prange(nt):        # h . W_h2h^T, split along its longer side
                    _h2h_part(h, wh, gh, gt, tt, nt)
                for tt in prange(nt):        # batch slices, one a thread (nt = 1: serial)
                    n0, n1 = chunk(N, tt, nt)
                    for n in range(n0, n1):
                        ln = int(lens[n])
                        t = _pos(s, ln, d)
                        if s >= ln:      # padding: zero output and reserve at (t, n)
                            for k in range(GH):
                                g[t, n, k] = zero
                            for j in range(extra * H):
                                e[t, n, j] = zero
                            for j in range(hasq * H):
                                q[t, n, j] = zero
                                hc[n, j] = zero
                            for j in range(R):
                                y[t, n, d * R + j] = zero
                            continue
                        gr = g[t, n]
                        hv = q[t, n] if proj else y[t, n, d * H:(d + 1) * H]
                        if mode == LSTM:
                            lstm_forward(gr, gh[n], bx, bh, c[n], e[t, n], hv, clip, lo, hi)
                        elif mode == GRU:
                            gru_forward(gr, gh[n], bx, bh, h[n], e[t, n], hv)
                        else:
                            simple_forward(gr, gh[n], bx, bh, hv, mode == RNN_TANH)
                        keep = hc[n] if proj else h[n]
                        for j in range(H):
                            keep[j] = hv[j]
                    if proj:
                        _gemm(hc[n0:n1], wr.T, rb[n0:n1])
                        for n in range(n0, n1):
                            ln = int(lens[n])
                            if s < ln:
                                t = _pos(s, ln, d)
                                for j in range(P):
                                    y[t, n, d * P + j] = rb[n, j]
                                    h[n, j] = rb[n, j]
            release_blas(prev)
            if r_hy != REQ_NULL:
                hy[l * D + d] = h
            if mode == LSTM and r_cy != REQ_NULL:
                cy[l * D + d] = c
        if l == L - 1 and r_out != REQ_NULL:
            out[...] = y


# The time loops run ``nt`` parts (``prange``): the serial core with nt = 1,
# the parallel one with a part a thread.  Each step's recurrent product is
# split along its longer side (``_gemm.part_bounds``: an LSTM's 32 x 1024
# h . W_h2h^T by gate columns, so each thread reads its half of W_h2h, which
# stays in its core's cache from step to step: 2.4 against 3.3 ms for 35
# steps split by rows), then the gate math runs in batch slices, one a
# thread; the layer-wide products are split the same way (``_gemm_part``),
# BLAS held to one thread for the whole parallel call.  One source, two
# compilations (``_parallel.variant``).
_forward_core = njit(cache=True)(_forward_core_py)
_forward_core_par = njit(cache=True, parallel=True)(variant(_forward_core_py, "_forward_core_par"))


@njit(cache=True)
def rnn_forward(data, params, state, cell, lens, out, hy, cy, reserve, ws, use_len,
                scratch_reserve, mode, L, D, H, P, pkeep, active, clip, lo, hi, hold, nt, r_out,
                r_hy, r_cy):
    """Every mode, with or without lengths: a missing cell (state) / lens is
    another array of the call, never read (``mode``, ``use_len``, ``r_cy``)."""
    R = reserve.size
    res = ws[ws.size - R:ws.size] if scratch_reserve else reserve[0:R]
    _fill_lens(ws[0:data.shape[1]], lens, use_len, data.shape[0])
    _forward_core(data, params, state, cell, out, hy, cy, res, ws, mode, L, D, H, P, pkeep,
                  active, clip, lo, hi, hold, r_out, r_hy, r_cy, 1)


@njit(cache=True)
def rnn_forward_parallel(data, params, state, cell, lens, out, hy, cy, reserve, ws, use_len,
                         scratch_reserve, mode, L, D, H, P, pkeep, active, clip, lo, hi, hold, nt,
                         r_out, r_hy, r_cy):
    R = reserve.size
    res = ws[ws.size - R:ws.size] if scratch_reserve else reserve[0:R]
    _fill_lens(ws[0:data.shape[1]], lens, use_len, data.shape[0])
    saved = hold_blas(1)
    _forward_core_par(data, params, state, cell, out, hy, cy, res, ws, mode, L, D, H, P, pkeep,
                      active, clip, lo, hi, hold, r_out, r_hy, r_cy, nt)
    release_blas(saved)


# -- backward -------------------------------------------------------------------

@njit(cache=True, inline="always")
def _transpose_part(a, at, t, nt):
    """Rows of ``at = a.T`` split over ``nt`` parts, part ``t``, in blocks
    of 16 of ``a``'s rows."""
    r0, r1 = chunk(at.shape[0], t, nt)
    _transpose_into(a, at, r0, r1, 0, a.shape[0])


@njit(cache=True, inline="always")
def _dh_part(dgs, wht, dht, dh, dc, lens, s, gru, t, nt):
    """Part ``t`` of ``nt`` of a backward step's dh = dgs . W_h2h (split
    along its longer side, as ``part_bounds``), computed as dht = W_h2h^T .
    dgs^T from the transposed copy ``wht`` and written back transposed
    into the rows of the batch still inside their sequence (GRU adds the
    gradient through its reset-gated path, ``dc``).  OpenBLAS runs this form
    faster (one thread, half an LSTM's 32 x 1024 x 256: 53 against 68 us)."""
    n_n, r_n = dh.shape[0], dh.shape[1]
    r0, r1, c0, c1 = part_bounds(n_n, r_n, t, nt)
    if r1 <= r0 or c1 <= c0:
        return
    if dgs.shape[1] == 0:
        dht[c0:c1, r0:r1] = 0
    else:
        gemm(wht[c0:c1, :], dgs[r0:r1, :].T, dht[c0:c1, r0:r1], 1.0, 0.0)
    for j0 in range(c0, c1, 16):
        j1 = min(c1, j0 + 16)
        for n in range(r0, r1):
            if s >= int(lens[n]):
                continue
            row = dh[n]
            if gru:
                for j in range(j0, j1):
                    row[j] = dht[j, n] + dc[n, j]
            else:
                for j in range(j0, j1):
                    row[j] = dht[j, n]

def _backward_core_py(og, ghy, gcy, data, params, state, cell, res, dx, dparams, dstate, dcell,
                      ws, mode, L, D, H, P, pkeep, clip, lo, hi, hold, r_x, r_p, r_s, r_c, nt):
    T, N, I = data.shape
    G = 4 if mode == LSTM else (3 if mode == GRU else 1)
    GH = G * H
    R = P if P > 0 else H
    proj = P > 0
    hasq = 1 if proj else 0
    extra = 1 if mode == LSTM or mode == GRU else 0
    drop = pkeep < 1.0 and L > 1
    zero = data.dtype.type(0)
    tn = T * N
    imax = max(I, D * R)
    NP = dparams.size
    # slices in the order of nbdl.ops.rnn.backward_temp_sizes
    o = 0
    lens = ws[o:o + N]
    o += N
    dy = ws[o:o + tn * D * R].reshape((T, N, D * R))
    o += tn * D * R
    dxl_all = ws[o:o + tn * imax]
    o += tn * imax
    dxt_all = ws[o:o + (D - 1) * tn * imax]
    o += (D - 1) * tn * imax
    dgx = ws[o:o + tn * GH].reshape((T, N, GH))
    o += tn * GH
    n_own = tn * GH if mode == GRU else 0
    dgh_own = ws[o:o + n_own].reshape((T, N, GH if mode == GRU else 0))
    o += n_own
    hp = ws[o:o + tn * R].reshape((T, N, R))
    o += tn * R
    dh = ws[o:o + N * R].reshape((N, R))
    o += N * R
    dc = ws[o:o + N * H].reshape((N, H))
    o += N * H
    dgs = ws[o:o + N * GH].reshape((N, GH))
    o += N * GH
    dhn = ws[o:o + N * R].reshape((N, R))
    o += N * R
    drall = ws[o:o + tn * P].reshape((T, N, P))
    o += tn * P
    drs = ws[o:o + N * P].reshape((N, P))
    o += N * P
    dhc = ws[o:o + hasq * N * H].reshape((N, hasq * H))
    o += hasq * N * H
    # the parameter gradient accumulates in the output unless it is not wanted
    dp = ws[o:o + NP] if r_p == REQ_NULL else dparams[0:NP]
    o += NP if r_p == REQ_NULL else 0
    wht = ws[o:o + R * GH].reshape((R, GH))
    o += R * GH
    dht = ws[o:o + R * N].reshape((R, N))
    dgh = dgh_own if mode == GRU else dgx
    dp[:] = zero
    dy[...] = og
    for l in range(L - 1, -1, -1):
        il = I if l == 0 else D * R
        y, g0, e0, q0, g1, e1, q1, m, xin = _regions(res, l, T, N, D, G, H, R, extra, hasq, drop)
        if l == 0:
            x2 = data.reshape((tn, I))
        elif drop:
            x2 = xin.reshape((tn, il))
        else:
            x2 = _regions(res, l - 1, T, N, D, G, H, R, extra, hasq, drop)[0].reshape((tn, il))
        dxl = dxl_all[0:tn * il].reshape((tn, il))
        dxt = dxt_all[0:(D - 1) * tn * il].reshape((tn, il if D == 2 else 0))
        for d in range(D):
            wx, wh, wr, bx, bh = _weights(params, l, d, L, D, G, H, I, P)
            g = g0 if d == 0 else g1
            e = e0 if d == 0 else e1
            q = q0 if d == 0 else q1
            dh[...] = ghy[l * D + d]
            if mode == LSTM:
                dc[...] = gcy[l * D + d]
            for tt in prange(nt):
                _transpose_part(wh, wht, tt, nt)
            prev = hold_blas(hold)      # the per-step products are small
            for s in range(T - 1, -1, -1):
                for tt in prange(nt):
                    n0, n1 = chunk(N, tt, nt)
                    if proj:
                        # gradient of the projected output r, then of the unprojected h
                        for n in range(n0, n1):
                            ln = int(lens[n])
                            t = _pos(s, ln, d)
                            for j in range(P):
                                v = dh[n, j] + dy[t, n, d * P + j] if s < ln else zero
                                drs[n, j] = v
                                drall[t, n, j] = v
                        _gemm(drs[n0:n1], wr, dhc[n0:n1])
                    for n in range(n0, n1):
                        ln = int(lens[n])
                        t = _pos(s, ln, d)
                        if s >= ln:      # padding: no gradient from or through (t, n)
                            for k in range(GH):
                                dgx[t, n, k] = zero
                                dgh[t, n, k] = zero
                                dgs[n, k] = zero
                            for j in range(R):
                                hp[t, n, j] = zero
                            continue
                        first = s == 0
                        tp = t - 1 if d == 0 else t + 1
                        for j in range(R):
                            hp[t, n, j] = state[l * D + d, n, j] if first else y[tp, n, d * R + j]
                        if proj:
                            dhv = dhc[n]
                        else:
                            dhv = dhn[n]
                            dyr = dy[t, n, d * H:(d + 1) * H]
                            for j in range(H):
                                dhv[j] = dh[n, j] + dyr[j]
                        if mode == LSTM:
                            lstm_backward(g[t, n], e[t, n], cell[l * D + d, n] if first else e[tp, n],
                                          dc[n], dhv, dgx[t, n], dgs[n], clip, lo, hi)
                        elif mode == GRU:
                            gru_backward(g[t, n], e[t, n], hp[t, n], dhv, dgx[t, n], dgh[t, n],
                                         dc[n])
                        else:
                            simple_backward(g[t, n], dhv, dgx[t, n], mode == RNN_TANH)
                        for k in range(GH):
                            dgs[n, k] = dgh[t, n, k]
                for tt in prange(nt):        # dgs . W_h2h, split along its longer side
                    _dh_part(dgs, wht, dht, dh, dc, lens, s, mode == GRU, tt, nt)
            release_blas(prev)
            if r_s != REQ_NULL:
                dstate[l * D + d] = dh
            if mode == LSTM and r_c != REQ_NULL:
                dcell[l * D + d] = dc
            # weight and bias gradients over all steps at once
            dwx, dwh, dwr, dbx, dbh = _weights(dp, l, d, L, D, G, H, I, P)
            dgx2 = dgx.reshape((tn, GH))
            dgh2 = dgh.reshape((tn, GH))
            hp2 = hp.reshape((tn, R))
            dxd = dxl if d == 0 else dxt
            # products nobody reads are skipped: the parameters' gradient when
            # it is not wanted, the first layer's input gradient when the
            # data's is not (a model's input sequence)
            want_w = r_p != REQ_NULL
            want_x = l > 0 or r_x != REQ_NULL
            for tt in prange(nt):
                if want_w:
                    _gemm_part(dgx2.T, x2, dwx, tt, nt)
                    _gemm_part(dgh2.T, hp2, dwh, tt, nt)
                if want_x:
                    _gemm_part(dgx2, wx, dxd, tt, nt)
            if want_w:
                if proj:
                    _gemm(drall.reshape((tn, P)).T, q.reshape((tn, H)), dwr)
                for r in range(tn):
                    for k in range(GH):
                        dbx[k] += dgx2[r, k]
                        dbh[k] += dgh2[r, k]
            if d > 0 and want_x:
                dxl += dxt
        if l > 0:
            dyf = dy.reshape(tn * D * R)
            dxf = dxl.reshape(tn * D * R)
            if drop:
                mf = m.reshape(tn * D * R)
                for k in range(dyf.size):
                    dyf[k] = dxf[k] * mf[k]
            else:
                dyf[:] = dxf
        elif r_x != REQ_NULL:
            dx[...] = dxl.reshape((T, N, I))


_backward_core = njit(cache=True)(_backward_core_py)
_backward_core_par = njit(cache=True, parallel=True)(variant(_backward_core_py,
                                                             "_backward_core_par"))


@njit(cache=True)
def rnn_backward(og, ghy, gcy, data, params, state, cell, lens, reserve, dx, dparams, dstate,
                 dcell, ws, use_len, mode, L, D, H, P, pkeep, clip, lo, hi, hold, nt, r_x, r_p,
                 r_s, r_c):
    _fill_lens(ws[0:data.shape[1]], lens, use_len, data.shape[0])
    _backward_core(og, ghy, gcy, data, params, state, cell, reserve, dx, dparams, dstate,
                   dcell, ws, mode, L, D, H, P, pkeep, clip, lo, hi, hold, r_x, r_p, r_s, r_c, 1)


@njit(cache=True)
def rnn_backward_parallel(og, ghy, gcy, data, params, state, cell, lens, reserve, dx, dparams,
                          dstate, dcell, ws, use_len, mode, L, D, H, P, pkeep, clip, lo, hi, hold,
                          nt, r_x, r_p, r_s, r_c):
    _fill_lens(ws[0:data.shape[1]], lens, use_len, data.shape[0])
    saved = hold_blas(1)
    _backward_core_par(og, ghy, gcy, data, params, state, cell, reserve, dx, dparams, dstate,
                       dcell, ws, mode, L, D, H, P, pkeep, clip, lo, hi, hold, r_x, r_p, r_s,
                       r_c, nt)
    release_blas(saved)


# -- prepare --------------------------------------------------------------------


def _pick(names, wanted, stand_in):
    """Launch.args: the index in ``names`` (the call's arrays) of each of
    ``wanted`` (the kernel's), or of its stand-in when the call has none."""
    at = {n: i for i, n in enumerate(names)}
    return tuple(at[n] if n in at else at[stand_in[n]] for n in wanted)


_FWD_ARGS = ("data", "params", "state", "cell", "lens", "out", "hy", "cy", "reserve", "ws")
_BWD_ARGS = ("og", "ghy", "gcy", "data", "params", "state", "cell", "lens", "reserve", "dx",
             "dparams", "dstate", "dcell", "ws")
_STAND_IN = {"cell": "state", "cy": "hy", "gcy": "ghy", "dcell": "dstate", "lens": "ws"}


def _hold_steps(g):
    """Hold BLAS to one thread over the time loop when its per-step product
    (N, R) x (R, G*H) is small; the whole-sequence products stay threaded."""
    return hold_for(2 * g["N"] * g["R"] * g["G"] * g["H"])


def _slices(g):
    """Batch slices of the time loops: one a thread (the parallel kernels,
    BLAS held to one thread) when there are threads, a few rows each and
    enough work a step; else 1 (the serial ones)."""
    nt = threads()
    if nt < 2 or g["N"] < 2 * nt or not use_parallel(g["T"] * g["N"] * g["G"] * g["H"]):
        return 1
    return nt


def prepare_rnn(call):
    g = rnn_plan(call, call.in_shapes[0], call.out_dtypes[0])
    lstm = call.attrs["mode"] == "lstm"
    p = float(call.attrs["p"])
    pkeep = 1.0 - p
    active = int(bool(call.is_train) and p > 0)
    scratch = int(call.req[-1] == REQ_NULL)
    views = forward_views(call, g) + [None]
    req = list(call.req[:-1]) + ([] if lstm else [REQ_NULL])
    names = (["data", "params", "state"] + (["cell"] if lstm else [])
             + (["lens"] if g["use_len"] else []) + ["out", "hy"] + (["cy"] if lstm else [])
             + ["reserve", "ws"])
    nt = _slices(g)
    scalars = (int(g["use_len"]), scratch, g["mode"], g["L"], g["D"], g["H"], g["P"], pkeep,
               active, g["clip"], g["lo"], g["hi"], 1 if nt > 1 else _hold_steps(g), nt) + \
        tuple(req)
    return Launch(rnn_forward_parallel if nt > 1 else rnn_forward, scalars, views=views,
                  args=_pick(names, _FWD_ARGS, _STAND_IN))


def prepare_rnn_backward(call):
    lstm = call.attrs["mode"] == "lstm"
    nh = 3 if lstm else 2
    g = rnn_plan(call, call.in_shapes[nh], call.out_dtypes[0])
    cell = ["cell"] if lstm else []
    names = (["og", "ghy"] + (["gcy"] if lstm else []) + ["data", "params", "state"] + cell
             + (["lens"] if g["use_len"] else []) + ["reserve", "dx", "dparams", "dstate"]
             + (["dcell"] if lstm else []) + ["ws"])
    req = tuple(call.req) + (() if lstm else (REQ_NULL,))
    nt = _slices(g)
    scalars = (int(g["use_len"]), g["mode"], g["L"], g["D"], g["H"], g["P"],
               1.0 - float(call.attrs["p"]), g["clip"], g["lo"], g["hi"],
               1 if nt > 1 else _hold_steps(g), nt) + req
    return Launch(rnn_backward_parallel if nt > 1 else rnn_backward, scalars,
                  views=backward_views(call, g), args=_pick(names, _BWD_ARGS, _STAND_IN))


# Serial twins: what an executor runs until the parallel variant is compiled.
_twins((rnn_forward_parallel, rnn_forward), (rnn_backward_parallel, rnn_backward))
