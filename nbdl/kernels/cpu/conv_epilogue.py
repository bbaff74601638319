"""The CPU convolution kernels' output loop (``nbdl.kernels.shared.conv_epilogue``):
the per-channel scale and shift computed once a call, and a channel's run of
output positions finished (bias, a folded BatchNorm, a residual added, ReLU)
while it is still in cache after its GEMM or direct loop.

The loops take flat arrays and unsigned offsets: Numba tests a signed index
for wraparound (``a[-1]``), and that test in ``a[base + q]`` keeps LLVM from
vectorising the loop; creating slice views instead costs a few tens of
nanoseconds each, which adds up over the 7- and 14-element rows of small
images.  The helpers here are inlined by Numba (``inline="numba"``), not
as LLVM-inlined twins: MobileNet's inference ran 5-6% slower that way."""
import numpy as np

from ..shared.jit import njit

from ..shared.conv_epilogue import (EP_AFFINE, EP_RELU, EP_RELU_NAN, EP_RESIDUAL,
                                    py_channel_affine)

_affine = njit(cache=True, inline="numba")(py_channel_affine)
_U = np.uint64


@njit(cache=True)
def fold(st, b, gamma, beta, mm, mv, has_bias, has_bn, fix_gamma, eps, ep):
    """st[0, c], st[1, c] = scale and shift of every output channel c (only
    with ``EP_AFFINE``; ``st`` may be empty otherwise)."""
    if not ep & EP_AFFINE:
        return
    one = st.dtype.type(1)
    for c in range(st.shape[1]):
        s, t = _affine(c, b, gamma, beta, mm, mv, has_bias, has_bn, fix_gamma, eps, one)
        st[0, c] = s
        st[1, c] = t


@njit(cache=True, inline="numba")
def channel(st, c, ep):
    """(scale, shift) of channel c: (1, 0) without ``EP_AFFINE``."""
    if ep & EP_AFFINE:
        return st[0, c], st[1, c]
    return st.dtype.type(1), st.dtype.type(0)


@njit(cache=True, inline="numba")
def store(o, o0, src, s0, r, n, s, t, ep, add):
    """o[o0:o0+n] (=|+=) src[s0:s0+n] * s + t (+ r[o0:o0+n] with
    ``EP_RESIDUAL``), flat arrays; ``o`` may be ``src`` with o0 == s0.  Under
    ``add`` (``REQ_ADD``) the epilogue is at most a bias (ops that fuse more
    do not accumulate).  ReLU is ``relu``'s, applied after."""
    o0, s0, n = _U(o0), _U(s0), _U(n)
    if add:
        for q in range(n):
            o[o0 + q] += src[s0 + q] * s + t
    elif ep & EP_RESIDUAL:
        for q in range(n):
            o[o0 + q] = src[s0 + q] * s + t + r[o0 + q]
    else:
        for q in range(n):
            o[o0 + q] = src[s0 + q] * s + t


@njit(cache=True, inline="numba")
def relu(o, o0, n, ep):
    """o[o0:o0+n] through the ReLU of ``ep`` (Activation's: NaN -> 0, or the
    relu op's: NaN kept)."""
    o0, n = _U(o0), _U(n)
    zero = o.dtype.type(0)
    if ep & EP_RELU:
        for q in range(n):
            v = o[o0 + q]
            o[o0 + q] = v if v > zero else zero
    elif ep & EP_RELU_NAN:
        for q in range(n):
            v = o[o0 + q]
            o[o0 + q] = v if (v != v or v > zero) else zero


@njit(cache=True)
def finish_run(o, r, st, c, ep, qa, qb):
    """o[qa:qb] (a channel's output positions, 1-D, holding the convolution's
    sums) finished in place through channel ``c``'s epilogue; ``r`` the
    residual's channel (any array of o's type without ``EP_RESIDUAL``)."""
    if ep == 0:
        return
    s, t = channel(st, c, ep)
    if ep & (EP_AFFINE | EP_RESIDUAL):
        store(o, qa, o, qa, r, qb - qa, s, t, ep, False)
    relu(o, qa, qb - qa, ep)
