"""Crop (h_w, crop_like, offset, center_crop) against numpy slicing."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)


def var(n):
    return nbdl.sym.var(n)


@pytest.mark.cuda
@pytest.mark.parametrize("kw,window", [
    ({"h_w": (2, 3)}, (0, 0)),
    ({"h_w": (2, 2), "offset": (1, 2)}, (1, 2)),
    ({"h_w": (2, 3), "center_crop": True}, (1, 1)),
])
def test_crop_h_w(kw, window, rng):
    x = rng.uniform(-1, 1, (2, 3, 4, 5)).astype(np.float32)
    y = nbdl.sym.Crop(var("arg0"), num_args=1, **kw)
    h, w = kw["h_w"]
    oy, ox = window
    check_symbolic_forward(y, {"arg0": x}, [x[:, :, oy:oy + h, ox:ox + w]])
    og = rng.normal(size=(2, 3, h, w)).astype(np.float32)
    want = np.zeros_like(x)
    want[:, :, oy:oy + h, ox:ox + w] = og
    check_symbolic_backward(y, {"arg0": x}, [og], {"arg0": want})
    check_consistency(y, {"arg0": x})


@pytest.mark.cuda
def test_crop_like(rng):
    x = rng.uniform(-1, 1, (1, 2, 5, 4)).astype(np.float64)
    like = rng.uniform(-1, 1, (1, 7, 3, 2)).astype(np.float64)
    y = nbdl.sym.Crop(var("arg0"), var("arg1"), num_args=2, center_crop=True)
    assert y.list_arguments() == ["arg0", "arg1"]
    check_symbolic_forward(y, {"arg0": x, "arg1": like}, [x[:, :, 1:4, 1:3]])
    og = rng.normal(size=(1, 2, 3, 2))
    want = np.zeros_like(x)
    want[:, :, 1:4, 1:3] = og
    check_symbolic_backward(y, {"arg0": x, "arg1": like}, [og],
                            {"arg0": want, "arg1": np.zeros_like(like)})
    check_numeric_gradient(y, {"arg0": x, "arg1": like}, grad_nodes=["arg0"])
    check_consistency(y, {"arg0": x, "arg1": like})


def test_crop_nd():
    x = nbdl.nd.array(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
    out = nbdl.nd.Crop(x, num_args=1, h_w=(2, 2), offset=(1, 1))
    assert np.all(out.asnumpy()[0, 0] == [[5, 6], [9, 10]])


def test_crop_errors():
    with pytest.raises(nbdl.ShapeError, match="Crop.*h_w"):
        nbdl.sym.Crop(var("arg0"), num_args=1, h_w=(5, 2)).infer_shape(arg0=(1, 1, 4, 4))
    with pytest.raises(nbdl.ShapeError, match="Crop.*offset"):
        nbdl.sym.Crop(var("arg0"), num_args=1, h_w=(3, 3), offset=(2, 0)).infer_shape(
            arg0=(1, 1, 4, 4))
    with pytest.raises(nbdl.ShapeError, match="Crop.*4-D"):
        nbdl.sym.Crop(var("arg0"), num_args=1, h_w=(1, 1)).infer_shape(arg0=(4, 4))
    with pytest.raises(nbdl.errors.AttrError, match="Crop.*num_args"):
        nbdl.sym.Crop(var("arg0"), var("arg1"), var("arg2"), num_args=3)
