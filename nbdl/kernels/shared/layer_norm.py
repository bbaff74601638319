"""LayerNorm's prepare-time views and per-row math, shared by the CPU and
CUDA kernels (``build(jit)``: plain functions the device modules compile).

The data is viewed as ``(outer, n, inner)`` with ``n`` the normalised axis;
a row is one ``(outer, inner)`` pair, mean and std are ``(outer, inner)``,
gamma/beta and their gradients ``(n,)``.  Mean and variance are two passes
over the row (the variance of the centred values), in the data's dtype.
Each output honours its own req; a null mean/std output is never written
(the planner gives such an output no storage of its own)."""
import math
from types import SimpleNamespace

from ...ops.registry import REQ_ADD, REQ_NULL
from .store import py_store_req


def layer_norm_views(attrs, shape):
    """``(outer, n, inner)``, ``(outer, inner)`` and ``(n,)``."""
    shape = tuple(shape)
    a = attrs["axis"] + len(shape) if attrs["axis"] < 0 else attrs["axis"]
    outer, inner = math.prod(shape[:a]), math.prod(shape[a + 1:])
    return (outer, int(shape[a]), inner), (outer, inner), (int(shape[a]),)


def build(jit):
    """Compile the store of ``kernels.shared.store`` with ``jit`` and return the per-row functions on
    it, plain (the caller compiles them).

    Parameters
    ----------
    jit : callable
        Compiles ``kernels.shared.store.py_store_req`` (every output's
        write/add) for the device.

    Returns
    -------
    SimpleNamespace
        ``forward_row(x, gamma, beta, out, mean, std, o, i, eps, r_out,
        r_mean, r_std)``, ``data_grad_row(og, x, gamma, mean, std, dx, o, i,
        add)`` and ``param_grad(og, x, mean, std, dgamma, dbeta, k, r_gamma,
        r_beta)`` (column ``k``'s sums over every row, in float64, as MXNet's
        compensated sum reducer keeps them accurate).
    """
    store = jit(py_store_req)

    def forward_row(x, gamma, beta, out, mean, std, o, i, eps, r_out, r_mean, r_std):
        n = x.shape[1]
        zero = x.dtype.type(0)
        if n == 0:
            nan = x.dtype.type(math.nan)   # numpy: the mean of nothing is nan
            store(mean, (o, i), nan, r_mean)
            store(std, (o, i), nan, r_std)
            return
        nf = x.dtype.type(n)   # dividing by an int would promote float32 to float64
        s = zero
        for k in range(n):
            s += x[o, k, i]
        m = s / nf
        v = zero
        for k in range(n):
            d = x[o, k, i] - m
            v += d * d
        sd = math.sqrt(v / nf + eps)
        inv = x.dtype.type(1) / sd
        if r_out == REQ_ADD:
            for k in range(n):
                out[o, k, i] += (x[o, k, i] - m) * inv * gamma[k] + beta[k]
        elif r_out != REQ_NULL:
            for k in range(n):
                out[o, k, i] = (x[o, k, i] - m) * inv * gamma[k] + beta[k]
        store(mean, (o, i), m, r_mean)
        store(std, (o, i), sd, r_std)

    def data_grad_row(og, x, gamma, mean, std, dx, o, i, add):
        """dx = (g - mean(g) - xhat * mean(g * xhat)) / std with g = og * gamma."""
        n = x.shape[1]
        if n == 0:
            return
        m = mean[o, i]
        inv = x.dtype.type(1) / std[o, i]
        s1 = x.dtype.type(0)
        s2 = x.dtype.type(0)
        for k in range(n):
            g = og[o, k, i] * gamma[k]
            s1 += g
            s2 += g * (x[o, k, i] - m) * inv
        nf = x.dtype.type(n)
        s1 /= nf
        s2 /= nf
        for k in range(n):
            v = (og[o, k, i] * gamma[k] - s1 - (x[o, k, i] - m) * inv * s2) * inv
            if add:
                dx[o, k, i] += v
            else:
                dx[o, k, i] = v

    def param_grad(og, x, mean, std, dgamma, dbeta, k, r_gamma, r_beta):
        inner = x.shape[2]
        sg = 0.0
        sb = 0.0
        for r in range(x.shape[0] * inner):
            o = r // inner
            i = r - o * inner
            g = og[o, k, i]
            sb += g
            sg += g * (x[o, k, i] - mean[o, i]) / std[o, i]
        store(dgamma, k, dgamma.dtype.type(sg), r_gamma)
        store(dbeta, k, dbeta.dtype.type(sb), r_beta)

    return SimpleNamespace(forward_row=forward_row, data_grad_row=data_grad_row,
                           param_grad=param_grad)
