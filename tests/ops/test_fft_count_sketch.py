"""_contrib_fft, _contrib_ifft and _contrib_count_sketch against numpy."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import check_consistency, check_numeric_gradient, check_symbolic_forward

nd, sym = nbdl.nd, nbdl.sym


def interleave(z):
    return np.stack([z.real, z.imag], -1).reshape(z.shape[:-1] + (2 * z.shape[-1],))


@pytest.mark.parametrize("n", [1, 8, 12, 7, 30])
def test_fft_ifft_vs_numpy(n, rng):
    x = rng.normal(size=(3, n)).astype(np.float32)
    y = sym.contrib.fft(sym.var("data"))
    check_symbolic_forward(y, {"data": x}, [interleave(np.fft.fft(x.astype(np.float64)))],
                           rtol=1e-5, atol=1e-5)
    z = rng.normal(size=(2, 1, 3, 2 * n))
    zc = z[..., ::2] + 1j * z[..., 1::2]
    y = sym.contrib.ifft(sym.var("data"))
    check_symbolic_forward(y, {"data": z}, [(np.fft.ifft(zc) * n).real], rtol=1e-10, atol=1e-10)


@pytest.mark.cuda
def test_gradients_are_each_other(rng):
    check_numeric_gradient(sym.contrib.fft(sym.var("data")), {"data": rng.normal(size=(2, 6))})
    check_numeric_gradient(sym.contrib.ifft(sym.var("data")), {"data": rng.normal(size=(2, 10))})
    x = rng.normal(size=(2, 5)).astype(np.float32)
    check_consistency(sym.contrib.fft(sym.var("data")), {"data": x}, atol=1e-5)
    check_consistency(sym.contrib.ifft(sym.var("data")), {"data": np.tile(x, 2)}, atol=1e-5)


def np_sketch(x, h, s, k):
    rows = x.reshape(-1, x.shape[-1])
    out = np.zeros((len(rows), k))
    for i in range(x.shape[-1]):
        out[:, int(h[0, i])] += s[0, i] * rows[:, i]
    return out.reshape(x.shape[:-1] + (k,))


@pytest.mark.cuda
def test_count_sketch(rng):
    x = rng.normal(size=(2, 3, 1, 6)).astype(np.float32)
    h = rng.randint(0, 4, (1, 6)).astype(np.float32)
    s = rng.choice([-1.0, 1.0], (1, 6)).astype(np.float32)
    y = sym.contrib.count_sketch(sym.var("data"), sym.var("h"), sym.var("s"), out_dim=4)
    loc = {"data": x, "h": h, "s": s}
    check_symbolic_forward(y, loc, [np_sketch(x, h, s, 4)], atol=1e-6)
    check_numeric_gradient(y, {k: v.astype(np.float64) for k, v in loc.items()},
                           grad_nodes=["data"])
    check_consistency(y, loc, atol=1e-6)
    with pytest.raises(nbdl.ShapeError, match="count_sketch.*h must be"):
        y.infer_shape(data=(2, 6), h=(1, 5), s=(1, 6))


def test_errors():
    with pytest.raises(nbdl.ShapeError, match="_contrib_ifft.*even"):
        nd.contrib.ifft(nd.zeros((2, 5)))
    with pytest.raises(nbdl.ShapeError, match="_contrib_fft.*2-D"):
        nd.contrib.fft(nd.zeros((2, 2, 5)))
