"""_contrib_BilinearResize2D (modes, align_corners, like) against numpy."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)


def np_axis(size, osize, align):
    """(first index, second index, weight of the second) per output index."""
    if osize > 1:
        scale = (size - 1) / (osize - 1) if align else size / osize
    else:
        scale = 0.0
    out = []
    for d in range(osize):
        r = scale * d if align else max(scale * (d + 0.5) - 0.5, 0.0)
        i = int(r)
        out.append((i, i + (1 if i < size - 1 else 0), r - i))
    return out


def np_resize(x, oh, ow, align=True):
    x = x.astype(np.float64)
    n, c, h, w = x.shape
    out = np.zeros((n, c, oh, ow))
    for a, (h0, h1, hl) in enumerate(np_axis(h, oh, align)):
        for b, (w0, w1, wl) in enumerate(np_axis(w, ow, align)):
            out[:, :, a, b] = ((1 - hl) * ((1 - wl) * x[:, :, h0, w0] + wl * x[:, :, h0, w1])
                               + hl * ((1 - wl) * x[:, :, h1, w0] + wl * x[:, :, h1, w1]))
    return out


def np_resize_grad(og, h, w, align=True):
    n, c, oh, ow = og.shape
    dx = np.zeros((n, c, h, w))
    for a, (h0, h1, hl) in enumerate(np_axis(h, oh, align)):
        for b, (w0, w1, wl) in enumerate(np_axis(w, ow, align)):
            g = og[:, :, a, b]
            dx[:, :, h0, w0] += (1 - hl) * (1 - wl) * g
            dx[:, :, h0, w1] += (1 - hl) * wl * g
            dx[:, :, h1, w0] += hl * (1 - wl) * g
            dx[:, :, h1, w1] += hl * wl * g
    return dx


def resize(**kw):
    return nbdl.sym.contrib.BilinearResize2D(nbdl.sym.var("data"), **kw)


@pytest.mark.parametrize("kw,hw", [
    ({"height": 5, "width": 7}, (5, 7)),
    ({"height": 2, "width": 3, "align_corners": False}, (2, 3)),
    ({"height": 7, "width": 4, "align_corners": False}, (7, 4)),
    ({"scale_height": 2.0, "scale_width": 0.5}, (6, 2)),
    ({"mode": "odd_scale", "scale_height": 2.0, "scale_width": 2.0}, (5, 8)),
    ({"mode": "to_even_up"}, (4, 4)),
    ({"mode": "to_odd_down"}, (3, 3)),
])
def test_bilinear_resize(kw, hw, rng):
    x = rng.uniform(-1, 1, (1, 2, 3, 4)).astype(np.float32)
    y = resize(**kw)
    align = kw.get("align_corners", True)
    check_symbolic_forward(y, {"data": x}, [np_resize(x, *hw, align)], rtol=1e-5, atol=1e-6)
    og = rng.normal(size=(1, 2) + hw)
    check_symbolic_backward(y, {"data": x.astype(np.float64)}, [og],
                            {"data": np_resize_grad(og, 3, 4, align)}, rtol=1e-6, atol=1e-8)


@pytest.mark.cuda
def test_bilinear_resize_gradient_and_devices(rng):
    x = rng.uniform(-1, 1, (2, 1, 3, 3)).astype(np.float32)
    y = resize(height=4, width=5, align_corners=False)
    check_numeric_gradient(y, {"data": x})
    check_consistency(y, {"data": x})


@pytest.mark.cuda
def test_bilinear_resize_like(rng):
    x = rng.uniform(-1, 1, (1, 2, 3, 3)).astype(np.float32)
    like = rng.uniform(-1, 1, (1, 5, 4, 6)).astype(np.float32)
    y = nbdl.sym.contrib.BilinearResize2D(nbdl.sym.var("data"), nbdl.sym.var("like"),
                                          mode="like")
    assert y.list_arguments() == ["data", "like"]
    loc = {"data": x, "like": like}
    check_symbolic_forward(y, loc, [np_resize(x, 4, 6)], rtol=1e-5, atol=1e-6)
    og = rng.normal(size=(1, 2, 4, 6)).astype(np.float32)
    check_symbolic_backward(y, loc, [og], {"data": np_resize_grad(og, 3, 3),
                                           "like": np.zeros_like(like)}, rtol=1e-5, atol=1e-6)
    check_consistency(y, loc)


def test_bilinear_resize_nd_float64(rng):
    x = rng.uniform(-1, 1, (1, 1, 2, 2))
    out = nbdl.nd.contrib.BilinearResize2D(nbdl.nd.array(x, dtype=np.float64), height=3, width=3)
    assert out.dtype == np.float64
    assert np.allclose(out.asnumpy(), np_resize(x, 3, 3))


def test_bilinear_resize_errors():
    with pytest.raises(nbdl.ShapeError, match="BilinearResize2D.*4-D"):
        resize(height=2, width=2).infer_shape(data=(2, 3, 4))
    with pytest.raises(nbdl.errors.AttrError, match="odd_scale"):
        resize(mode="odd_scale")
