"""Gluon convolution, pooling, padding and pixel-shuffle layers against numpy
references written with loops; eager vs hybridized; deferred shapes; repr."""
import math

import numpy as np
import pytest

import nbdl
from nbdl.gluon import nn
from nbdl.testing import assert_almost_equal



def run_both(layer, *xs, rtol=1e-5, atol=1e-5):
    """The layer's output eagerly and hybridized (they must agree)."""
    arrays = [nbdl.nd.array(x) for x in xs]
    eager = layer(*arrays).asnumpy()
    layer.hybridize()
    hybrid = layer(*arrays).asnumpy()
    layer.hybridize(False)
    assert_almost_equal(eager, hybrid, rtol=rtol, atol=atol)
    return eager


def randomize(layer, rng):
    for p in layer.collect_params().values():
        p.set_data(rng.uniform(-1, 1, p.shape).astype(np.float32))


# -- numpy references -------------------------------------------------------------

def conv_ref(x, w, b, stride, pad, dilate, groups):
    n = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad]).astype(np.float64)
    f, cg, k = w.shape[0], w.shape[1], w.shape[2:]
    osz = [(xp.shape[2 + i] - dilate[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(n)]
    out = np.zeros((x.shape[0], f) + tuple(osz))
    fg = f // groups
    for pos in np.ndindex(*osz):
        for kp in np.ndindex(*k):
            idx = tuple(pos[i] * stride[i] + kp[i] * dilate[i] for i in range(n))
            patch = xp[(slice(None), slice(None)) + idx]
            for g in range(groups):
                wk = w[(slice(g * fg, (g + 1) * fg), slice(None)) + kp]
                out[(slice(None), slice(g * fg, (g + 1) * fg)) + pos] += \
                    patch[:, g * cg:(g + 1) * cg] @ wk.T
    if b is not None:
        out += b.reshape((1, f) + (1,) * n)
    return out


def deconv_ref(x, w, b, stride, pad, dilate, groups, adj):
    n = x.ndim - 2
    cin, fg, k = w.shape[0], w.shape[1], w.shape[2:]
    cg, f = cin // groups, w.shape[1] * groups
    full = [(x.shape[2 + i] - 1) * stride[i] + dilate[i] * (k[i] - 1) + 1 + adj[i]
            for i in range(n)]
    out = np.zeros((x.shape[0], f) + tuple(full))
    for pos in np.ndindex(*x.shape[2:]):
        for kp in np.ndindex(*k):
            o = tuple(pos[i] * stride[i] + kp[i] * dilate[i] for i in range(n))
            for g in range(groups):
                xs = x[(slice(None), slice(g * cg, (g + 1) * cg)) + pos]
                wk = w[(slice(g * cg, (g + 1) * cg), slice(None)) + kp]
                out[(slice(None), slice(g * fg, (g + 1) * fg)) + o] += xs @ wk
    crop = tuple(slice(pad[i], full[i] - pad[i]) for i in range(n))
    out = out[(slice(None), slice(None)) + crop]
    if b is not None:
        out += b.reshape((1, f) + (1,) * n)
    return out


def pool_ref(x, kernel, stride, pad, pool_type, ceil=False, count_include_pad=True,
             global_pool=False):
    n, sp = x.ndim - 2, x.shape[2:]
    if global_pool:
        kernel, stride, pad = sp, (1,) * n, (0,) * n
    rnd = math.ceil if ceil else math.floor
    osz = [int(rnd((sp[i] + 2 * pad[i] - kernel[i]) / stride[i])) + 1 for i in range(n)]
    out = np.zeros(x.shape[:2] + tuple(osz))
    for pos in np.ndindex(*osz):
        start = [pos[i] * stride[i] - pad[i] for i in range(n)]
        end = [min(start[i] + kernel[i], sp[i] + pad[i]) for i in range(n)]
        padded_size = np.prod([end[i] - start[i] for i in range(n)])
        lo = [max(s, 0) for s in start]
        hi = [min(e, sp[i]) for i, e in enumerate(end)]
        win = x[(slice(None), slice(None)) + tuple(slice(a, b) for a, b in zip(lo, hi))]
        win = win.reshape(x.shape[0], x.shape[1], -1)
        if pool_type == "max":
            out[(slice(None), slice(None)) + pos] = win.max(-1)
        else:
            size = padded_size if count_include_pad else win.shape[-1]
            out[(slice(None), slice(None)) + pos] = win.sum(-1) / size
    return out


def pixel_shuffle_ref(x, factors):
    n = len(factors)
    c = x.shape[1] // int(np.prod(factors))
    sp = x.shape[2:]
    out = np.zeros((x.shape[0], c) + tuple(s * f for s, f in zip(sp, factors)), x.dtype)
    for ch in range(c):
        for sub in np.ndindex(*factors):
            src = ch * int(np.prod(factors)) + int(np.ravel_multi_index(sub, factors))
            dst = tuple(slice(sub[i], None, factors[i]) for i in range(n))
            out[(slice(None), ch) + dst] = x[:, src]
    return out


# -- convolution --------------------------------------------------------------------

CONV_CASES = [
    # (layer class, ndim, spatial, kwargs)
    (nn.Conv1D, 1, (7,), dict(kernel_size=3)),
    (nn.Conv1D, 1, (8,), dict(kernel_size=2, strides=2, padding=1, dilation=2)),
    (nn.Conv2D, 2, (5, 6), dict(kernel_size=(3, 2))),
    (nn.Conv2D, 2, (6, 6), dict(kernel_size=3, strides=2, padding=1, groups=2)),
    (nn.Conv2D, 2, (7, 5), dict(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 0),
                                use_bias=False)),
    (nn.Conv3D, 3, (4, 5, 4), dict(kernel_size=2, strides=(1, 2, 1), padding=(0, 1, 1))),
]


@pytest.mark.parametrize("cls,ndim,spatial,kwargs", CONV_CASES)
def test_conv_matches_reference_and_infers_in_channels(cls, ndim, spatial, kwargs, rng):
    groups = kwargs.get("groups", 1)
    layer = cls(4, **kwargs)
    layer.initialize()
    x = rng.uniform(-1, 1, (2, 2 * groups) + spatial).astype(np.float32)
    layer(nbdl.nd.array(x))
    k = kwargs["kernel_size"]
    k = (k,) * ndim if isinstance(k, int) else k
    assert layer.weight.shape == (4, 2) + k
    randomize(layer, rng)
    out = run_both(layer, x)
    tup = lambda v, d: (v,) * ndim if isinstance(v, int) else tuple(v)  # noqa: E731
    b = layer.bias.data().asnumpy() if layer.bias is not None else None
    ref = conv_ref(x, layer.weight.data().asnumpy(), b, tup(kwargs.get("strides", 1), 1),
                   tup(kwargs.get("padding", 0), 0), tup(kwargs.get("dilation", 1), 1), groups)
    assert_almost_equal(out, ref, rtol=1e-4, atol=1e-5)


def test_conv_with_activation_and_given_in_channels(rng):
    layer = nn.Conv2D(3, 3, padding=1, activation="relu", in_channels=2)
    assert layer.weight.shape == (3, 2, 3, 3)
    layer.initialize()
    randomize(layer, rng)
    x = rng.uniform(-1, 1, (1, 2, 4, 4)).astype(np.float32)
    out = run_both(layer, x)
    ref = conv_ref(x, layer.weight.data().asnumpy(), layer.bias.data().asnumpy(), (1, 1),
                   (1, 1), (1, 1), 1)
    assert_almost_equal(out, np.maximum(ref, 0), rtol=1e-4, atol=1e-5)


DECONV_CASES = [
    (nn.Conv1DTranspose, 1, (5,), dict(kernel_size=3, strides=2, padding=1, output_padding=1)),
    (nn.Conv2DTranspose, 2, (3, 4), dict(kernel_size=(3, 2))),
    (nn.Conv2DTranspose, 2, (3, 3), dict(kernel_size=3, strides=2, padding=1, groups=2,
                                         output_padding=1)),
    (nn.Conv3DTranspose, 3, (2, 3, 2), dict(kernel_size=2, strides=2, use_bias=False)),
]


@pytest.mark.parametrize("cls,ndim,spatial,kwargs", DECONV_CASES)
def test_conv_transpose_matches_reference(cls, ndim, spatial, kwargs, rng):
    groups = kwargs.get("groups", 1)
    layer = cls(2 * groups, **kwargs)
    layer.initialize()
    x = rng.uniform(-1, 1, (2, 3 * groups) + spatial).astype(np.float32)
    layer(nbdl.nd.array(x))
    k = kwargs["kernel_size"]
    k = (k,) * ndim if isinstance(k, int) else k
    assert layer.weight.shape == (3 * groups, 2) + k
    randomize(layer, rng)
    out = run_both(layer, x)
    tup = lambda v, d: (v,) * ndim if isinstance(v, int) else tuple(v)  # noqa: E731
    b = layer.bias.data().asnumpy() if layer.bias is not None else None
    ref = deconv_ref(x, layer.weight.data().asnumpy(), b, tup(kwargs.get("strides", 1), 1),
                     tup(kwargs.get("padding", 0), 0), (1,) * ndim, groups,
                     tup(kwargs.get("output_padding", 0), 0))
    assert_almost_equal(out, ref, rtol=1e-4, atol=1e-5)


def test_conv_repr_and_parameter_shapes():
    assert repr(nn.Conv2D(16, 3, in_channels=3)) == \
        "Conv2D(3 -> 16, kernel_size=(3, 3), stride=(1, 1))"
    assert repr(nn.Conv2D(8, (3, 5), strides=2, padding=1, dilation=2, groups=2,
                          use_bias=False, activation="relu")) == \
        ("Conv2D(None -> 8, kernel_size=(3, 5), stride=(2, 2), padding=(1, 1), "
         "dilation=(2, 2), groups=2, bias=False, Activation(relu))")
    assert repr(nn.Conv1D(4, 3, in_channels=2)) == "Conv1D(2 -> 4, kernel_size=(3,), stride=(1,))"
    assert repr(nn.Conv2DTranspose(4, 3, strides=2, output_padding=1, in_channels=6)) == \
        ("Conv2DTranspose(6 -> 4, kernel_size=(3, 3), stride=(2, 2), "
         "output_padding=(1, 1))")
    assert nn.Conv3D(5, 2, in_channels=4, groups=1).weight.shape == (5, 4, 2, 2, 2)
    assert nn.Conv2D(6, 3, in_channels=4, groups=2).weight.shape == (6, 2, 3, 3)
    assert nn.Conv2D(6, 3).weight.shape == (6, 0, 3, 3)
    assert nn.Conv2D(6, 3, layout="NHWC", in_channels=4).weight.shape == (6, 3, 3, 4)
    assert nn.Conv2DTranspose(6, 3, in_channels=4, groups=2).weight.shape == (4, 3, 3, 3)
    assert list(nn.Conv2D(2, 1).collect_params()) == ["weight", "bias"]


def test_conv_rejects_bad_arguments():
    with pytest.raises(nbdl.NbdlError, match="groups"):
        nn.Conv2D(5, 3, groups=2)
    with pytest.raises(nbdl.NbdlError, match="kernel_size"):
        nn.Conv2D(4, (3, 3, 3))
    with pytest.raises(nbdl.NbdlError, match="layout"):
        nn.Conv2D(4, 3, layout="NCW")
    with pytest.raises(nbdl.NbdlError, match="channels"):
        nn.Conv1D(0, 3)


# -- pooling ------------------------------------------------------------------------

POOL_CASES = [
    (nn.MaxPool1D, dict(), (9,), "max"),
    (nn.MaxPool2D, dict(), (6, 7), "max"),
    (nn.MaxPool2D, dict(pool_size=3, strides=2, padding=1), (7, 6), "max"),
    (nn.MaxPool2D, dict(pool_size=(3, 2), strides=(2, 1), ceil_mode=True), (8, 5), "max"),
    (nn.MaxPool3D, dict(), (4, 4, 5), "max"),
    (nn.AvgPool1D, dict(pool_size=3, strides=1, padding=1), (6,), "avg"),
    (nn.AvgPool2D, dict(), (6, 6), "avg"),
    (nn.AvgPool2D, dict(pool_size=3, strides=2, padding=1), (7, 7), "avg"),
    (nn.AvgPool2D, dict(pool_size=3, strides=2, padding=1, count_include_pad=False), (7, 7),
     "avg"),
    (nn.AvgPool2D, dict(pool_size=2, strides=2, ceil_mode=True), (5, 5), "avg"),
    (nn.AvgPool3D, dict(pool_size=2, strides=1), (3, 4, 3), "avg"),
]


@pytest.mark.parametrize("cls,kwargs,spatial,pool_type", POOL_CASES)
def test_pooling_matches_reference(cls, kwargs, spatial, pool_type, rng):
    layer = cls(**kwargs)
    n = len(spatial)
    x = rng.uniform(-1, 1, (2, 3) + spatial).astype(np.float32)
    out = run_both(layer, x)
    tup = lambda v: (v,) * n if isinstance(v, int) else tuple(v)  # noqa: E731
    kernel = tup(kwargs.get("pool_size", 2))
    stride = tup(kwargs["strides"]) if kwargs.get("strides") is not None else kernel
    ref = pool_ref(x, kernel, stride, tup(kwargs.get("padding", 0)), pool_type,
                   ceil=kwargs.get("ceil_mode", False),
                   count_include_pad=kwargs.get("count_include_pad", True))
    assert out.shape == ref.shape
    assert_almost_equal(out, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cls,spatial,pool_type", [
    (nn.GlobalMaxPool1D, (5,), "max"), (nn.GlobalAvgPool1D, (5,), "avg"),
    (nn.GlobalMaxPool2D, (4, 3), "max"), (nn.GlobalAvgPool2D, (4, 3), "avg"),
    (nn.GlobalMaxPool3D, (2, 3, 2), "max"), (nn.GlobalAvgPool3D, (2, 3, 2), "avg")])
def test_global_pooling(cls, spatial, pool_type, rng):
    x = rng.uniform(-1, 1, (2, 3) + spatial).astype(np.float32)
    out = run_both(cls(), x)
    assert out.shape == (2, 3) + (1,) * len(spatial)
    axes = tuple(range(2, x.ndim))
    ref = x.max(axis=axes, keepdims=True) if pool_type == "max" else x.mean(axis=axes,
                                                                            keepdims=True)
    assert_almost_equal(out, ref, rtol=1e-5, atol=1e-6)


def test_pooling_repr():
    assert repr(nn.MaxPool2D()) == ("MaxPool2D(size=(2, 2), stride=(2, 2), padding=(0, 0), "
                                    "ceil_mode=False, global_pool=False, pool_type=max, "
                                    "layout=NCHW)")
    assert repr(nn.AvgPool1D(3, 1, 1, ceil_mode=True)) == (
        "AvgPool1D(size=(3,), stride=(1,), padding=(1,), ceil_mode=True, global_pool=False, "
        "pool_type=avg, layout=NCW)")
    assert repr(nn.GlobalAvgPool2D()) == (
        "GlobalAvgPool2D(size=(1, 1), stride=(1, 1), padding=(0, 0), ceil_mode=True, "
        "global_pool=True, pool_type=avg, layout=NCHW)")
    with pytest.raises(nbdl.NbdlError, match="pool_size"):
        nn.MaxPool2D(pool_size=(2, 2, 2))


# -- padding, pixel shuffle ------------------------------------------------------------

@pytest.mark.parametrize("padding", [1, 2, (0, 0, 0, 0, 1, 2, 2, 0)])
def test_reflection_pad2d(padding, rng):
    x = rng.uniform(-1, 1, (2, 3, 4, 5)).astype(np.float32)
    out = run_both(nn.ReflectionPad2D(padding), x)
    pw = (0, 0, 0, 0) + (padding,) * 4 if isinstance(padding, int) else padding
    ref = np.pad(x, [(pw[2 * i], pw[2 * i + 1]) for i in range(4)], mode="reflect")
    assert_almost_equal(out, ref)


@pytest.mark.parametrize("cls,factor,spatial", [
    (nn.PixelShuffle1D, 3, (4,)), (nn.PixelShuffle2D, (2, 3), (3, 2)),
    (nn.PixelShuffle2D, 2, (2, 2)), (nn.PixelShuffle3D, (1, 2, 2), (2, 3, 2))])
def test_pixel_shuffle(cls, factor, spatial, rng):
    n = len(spatial)
    factors = (factor,) * n if isinstance(factor, int) else factor
    x = rng.uniform(-1, 1, (2, 2 * int(np.prod(factors))) + spatial).astype(np.float32)
    layer = cls(factor)
    out = run_both(layer, x)
    assert_almost_equal(out, pixel_shuffle_ref(x, factors))
    assert repr(layer) == f"{cls.__name__}({factor if n == 1 else factors})"
