"""The fused RNN's mode codes, reserve layout, plan and views (what the CPU and
CUDA prepares and kernels share)."""
import numpy as np
from .jit import njit

from ...ops.rnn import MODE_IDS, geometry, param_size, rec_size, reserve_size

RNN_RELU, RNN_TANH, LSTM, GRU = 0, 1, 2, 3


def py_seq_len(lens, n, use, T):
    """Element ``n``'s sequence length: ``int(lens[n])`` clipped to [0, T]
    when ``use``, else T (plain Python compiled by both devices' kernels)."""
    if not use:
        return T
    v = int(lens[n])
    if v < 0:
        return 0
    if v > T:
        return T
    return v


@njit(cache=True)
def _layer_start(l, T, N, D, G, H, R, extra, hasq, drop):
    off = 0
    for ll in range(l):
        off += T * N * D * R + D * T * N * (G * H + extra * H + hasq * H)
        if drop and ll > 0:
            off += 2 * T * N * D * R
    return off


def rnn_plan(call, data_shape, dtype):
    """Geometry, flat views and the scalars shared by CPU and CUDA prepares."""
    a = call.attrs
    T, N, I, H, L, D, G, P = geometry(a, data_shape)
    dt = np.dtype(dtype).type
    clip = a["lstm_state_clip_min"] is not None
    lo = dt(a["lstm_state_clip_min"] if clip else 0)
    hi = dt(a["lstm_state_clip_max"] if clip else 0)
    return dict(T=T, N=N, I=I, H=H, L=L, D=D, G=G, P=P, R=rec_size(H, P),
                mode=MODE_IDS[a["mode"]], clip=int(clip), lo=lo, hi=hi,
                NP=param_size(L, D, G, H, I, P), RS=reserve_size(a, T, N, I, H, L, D, G, P),
                use_len=bool(a["use_sequence_length"]))


def forward_views(call, g):
    """Views of the forward inputs (sequence_length: its own shape) and outputs."""
    T, N, I, H, L, D, R = g["T"], g["N"], g["I"], g["H"], g["L"], g["D"], g["R"]
    lstm = call.attrs["mode"] == "lstm"
    state, cell = (L * D, N, R), (L * D, N, H)
    views = [(T, N, I), (g["NP"],), state] + ([cell] if lstm else [])
    views += [None] if g["use_len"] else []
    views += [(T, N, D * R), state] + ([cell] if lstm else []) + [(g["RS"],)]
    return views


def backward_views(call, g):
    """Head gradients, forward inputs, reserve, input gradients, scratch."""
    lstm = call.attrs["mode"] == "lstm"
    fwd = forward_views(call, g)
    n_in = (4 if lstm else 3) + (1 if g["use_len"] else 0)
    n_grads = 4 if lstm else 3
    heads = fwd[n_in:n_in + n_grads - 1]
    return heads + fwd[:n_in] + [fwd[-1]] + fwd[:n_grads] + [None]
