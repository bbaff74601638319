"""im2col / col2im against a numpy reference, and each as the other's gradient."""
import itertools

import numpy as np
import pytest

import nbdl
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)


def np_im2col(x, kernel, stride, dilate, pad):
    nd = len(kernel)
    n, c = x.shape[:2]
    sp = x.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    out = [(sp[i] + 2 * pad[i] - dilate[i] * (kernel[i] - 1) - 1) // stride[i] + 1
           for i in range(nd)]
    taps = list(itertools.product(*[range(k) for k in kernel]))
    pos = list(itertools.product(*[range(o) for o in out]))
    col = np.zeros((n, c, len(taps), len(pos)), x.dtype)
    for t, tap in enumerate(taps):
        for q, o in enumerate(pos):
            idx = tuple(o[i] * stride[i] + tap[i] * dilate[i] for i in range(nd))
            col[:, :, t, q] = xp[(slice(None), slice(None)) + idx]
    return col.reshape(n, c * len(taps), len(pos))


def np_col2im(col, out_size, kernel, stride, dilate, pad):
    """The adjoint of np_im2col, by its matrix."""
    n = col.shape[0]
    c = col.shape[1] // int(np.prod(kernel))
    size = int(np.prod(out_size))
    img = np.zeros((n, c) + tuple(out_size))
    for i in range(size):
        e = np.zeros(size)
        e[i] = 1
        basis = np_im2col(e.reshape((1, 1) + tuple(out_size)), kernel, stride, dilate, pad)
        # column rows of channel cc are cc*K .. cc*K + K
        k = basis.shape[1]
        for cc in range(c):
            img.reshape(n, c, size)[:, cc, i] = np.sum(col[:, cc * k:(cc + 1) * k] * basis[0],
                                                       axis=(1, 2))
    return img


CASES = [
    dict(kernel=(3,), stride=(1,), dilate=(1,), pad=(1,), shape=(2, 2, 5)),
    dict(kernel=(2, 3), stride=(2, 1), dilate=(1, 2), pad=(1, 1), shape=(1, 2, 4, 5)),
    dict(kernel=(3, 3), stride=(1, 1), dilate=(1, 1), pad=(2, 2), shape=(1, 1, 1, 1)),
    dict(kernel=(1, 2, 2), stride=(1, 1, 1), dilate=(1, 1, 1), pad=(0, 0, 0),
         shape=(1, 1, 2, 3, 3)),
]


@pytest.mark.cuda
@pytest.mark.parametrize("case", CASES)
def test_im2col(case, rng):
    case = dict(case)
    shape = case.pop("shape")
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    y = nbdl.sym.im2col(nbdl.sym.var("data"), **case)
    want = np_im2col(x, **case)
    check_symbolic_forward(y, {"data": x}, [want])
    og = rng.normal(size=want.shape).astype(np.float32)
    check_symbolic_backward(y, {"data": x}, [og],
                            {"data": np_col2im(og, shape[2:], **case)}, rtol=1e-5, atol=1e-5)
    check_consistency(y, {"data": x})


@pytest.mark.cuda
@pytest.mark.parametrize("case", CASES[:2])
def test_col2im(case, rng):
    case = dict(case)
    shape = case.pop("shape")
    cols = np_im2col(np.zeros(shape), **case).shape
    x = rng.uniform(-1, 1, cols)
    y = nbdl.sym.col2im(nbdl.sym.var("data"), output_size=shape[2:], **case)
    check_symbolic_forward(y, {"data": x}, [np_col2im(x, shape[2:], **case)], rtol=1e-10)
    check_numeric_gradient(y, {"data": x})
    check_consistency(y, {"data": x.astype(np.float32)}, rtol=1e-5, atol=1e-5)


def test_im2col_defaults_nd():
    x = nbdl.nd.array(np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3))
    out = nbdl.nd.im2col(x, kernel=(2, 2))
    assert out.shape == (1, 4, 4)
    assert np.all(out.asnumpy()[0, :, 0] == [0, 1, 3, 4])


def test_im2col_errors():
    with pytest.raises(nbdl.ShapeError, match="im2col.*dimensions"):
        nbdl.sym.im2col(nbdl.sym.var("data"), kernel=(2, 2)).infer_shape(data=(1, 1, 4))
    with pytest.raises(nbdl.ShapeError, match="im2col.*smaller than the dilated kernel"):
        nbdl.sym.im2col(nbdl.sym.var("data"), kernel=(5, 5)).infer_shape(data=(1, 1, 4, 4))
    with pytest.raises(nbdl.ShapeError, match="col2im.*blocks"):
        nbdl.sym.col2im(nbdl.sym.var("data"), kernel=(2, 2), output_size=(3, 3)).infer_shape(
            data=(1, 4, 5))
    with pytest.raises(nbdl.errors.AttrError, match="col2im.*output_size"):
        nbdl.sym.col2im(nbdl.sym.var("data"), kernel=(2, 2), output_size=(3,)).infer_shape(
            data=(1, 4, 4))


def test_col2im_positional_output_size_sym_and_nd(rng):
    """MXNet's col2im(data, output_size, kernel=...) takes output_size by position."""
    x = rng.uniform(-1, 1, (1, 4, 4)).astype(np.float32)
    y = nbdl.sym.col2im(nbdl.sym.var("data"), (3, 3), kernel=(2, 2))
    assert y.infer_shape(data=(1, 4, 4))[1] == [(1, 1, 3, 3)]
    out = nbdl.nd.col2im(nbdl.nd.array(x), (3, 3), kernel=(2, 2))
    assert np.allclose(out.asnumpy(), np_col2im(x, (3, 3), (2, 2), (1, 1), (1, 1), (0, 0)))
    # a trailing None input is left out
    z = nbdl.sym.contrib.BilinearResize2D(nbdl.sym.var("data"), None, height=2, width=2)
    assert z.list_arguments() == ["data"]
    with pytest.raises(nbdl.errors.GraphError, match="given by position and by keyword"):
        nbdl.sym.col2im(nbdl.sym.var("data"), (3, 3), output_size=(3, 3), kernel=(2, 2))
    # an op with more inputs than were given takes no attribute by position
    with pytest.raises(nbdl.errors.GraphError, match="positional arguments must be Symbols"):
        nbdl.sym.Crop(nbdl.sym.var("arg0"), (2, 2), num_args=1)
