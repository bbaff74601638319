"""nn.DeformableConvolution and nn.ModulatedDeformableConvolution: the layer
is its offset Convolution feeding the deformable op (checked against those
ops called directly; the ops themselves are checked against numpy in
tests/ops/test_deformable_convolution.py), eager vs hybridized outputs and
gradients, deferred input channels, Gluon's parameter names and order, repr,
argument errors."""
import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.gluon import nn
from nbdl.testing import assert_almost_equal


def randomize(layer, rng, scale=0.5):
    for p in layer.collect_params().values():
        p.set_data(rng.uniform(-scale, scale, p.shape).astype(np.float32))


def expected(layer, x, modulated):
    """The layer's output from the ops it is made of, called eagerly."""
    p = {k: v.data() for k, v in layer.collect_params().items()}
    kw = dict(layer._kwargs_deformable_conv)
    conv_kw = dict(kernel=kw["kernel"], stride=kw["stride"], dilate=kw["dilate"], pad=kw["pad"],
                   num_group=kw["num_group"])
    off_inputs = [x, p["offset_weight"]] + ([p["offset_bias"]] if "offset_bias" in p else [])
    off = nbdl.nd.Convolution(*off_inputs, num_filter=p["offset_weight"].shape[0],
                              no_bias="offset_bias" not in p, **conv_kw)
    w = [p["deformable_conv_weight"]] + (
        [p["deformable_conv_bias"]] if "deformable_conv_bias" in p else [])
    dg = kw["num_deformable_group"]
    if not modulated:
        return nbdl.nd._contrib_DeformableConvolution(
            x, off, *w, num_filter=layer._channels, num_deformable_group=dg,
            no_bias=len(w) == 1, **conv_kw)
    split = 2 * dg * kw["kernel"][0] * kw["kernel"][1]
    mask = 2 * nbdl.nd.sigmoid(nbdl.nd.slice_axis(off, axis=1, begin=split, end=None))
    return nbdl.nd._contrib_ModulatedDeformableConvolution(
        x, nbdl.nd.slice_axis(off, axis=1, begin=0, end=split), mask, *w,
        num_filter=layer._channels, num_deformable_group=dg, no_bias=len(w) == 1, **conv_kw)


def grads_of(layer, x):
    with autograd.record():
        y = layer(x)
    y.backward()
    return y.asnumpy(), {k: p.grad().asnumpy().copy() for k, p in layer.collect_params().items()}


@pytest.mark.parametrize("cls,modulated", [(nn.DeformableConvolution, False),
                                           (nn.ModulatedDeformableConvolution, True)])
@pytest.mark.parametrize("kwargs", [
    dict(kernel_size=3, padding=1, num_deformable_group=2),
    dict(kernel_size=(2, 3), strides=(2, 1), dilation=(1, 2), groups=2, use_bias=False,
         offset_use_bias=False, activation="relu"),
])
def test_layer_matches_ops_eager_and_hybridized(cls, modulated, kwargs, rng):
    layer = cls(4, **kwargs)
    layer.initialize()
    x = nbdl.nd.array(rng.uniform(-1, 1, (2, 4, 5, 6)).astype(np.float32))
    layer(x)                                     # deferred shapes from the data
    k = kwargs["kernel_size"]
    k = (k, k) if isinstance(k, int) else k
    g, dg = kwargs.get("groups", 1), kwargs.get("num_deformable_group", 1)
    taps = (3 if modulated else 2) * dg * k[0] * k[1]
    assert layer.deformable_conv_weight.shape == (4, 4 // g) + k
    assert layer.offset_weight.shape == (taps, 4 // g) + k
    randomize(layer, rng)
    y, eager = grads_of(layer, x)
    want = expected(layer, x, modulated).asnumpy()
    if kwargs.get("activation") == "relu":
        want = np.maximum(want, 0)
    assert_almost_equal(y, want, rtol=1e-5, atol=1e-6)
    layer.hybridize()
    y2, hybrid = grads_of(layer, x)
    assert_almost_equal(y2, y, rtol=1e-5, atol=1e-6)
    for name in eager:
        assert np.any(eager[name] != 0), name
        assert_almost_equal(hybrid[name], eager[name], rtol=1e-4, atol=1e-5,
                            names=(f"hybridized grad of {name}", "eager"))


def test_zero_initialised_offsets_make_a_convolution(rng):
    """Gluon's defaults (offset weights and biases zero): the layer starts as
    Conv2D (times 2*sigmoid(0) = 1 for the modulated one)."""
    x = nbdl.nd.array(rng.uniform(-1, 1, (1, 3, 5, 5)).astype(np.float32))
    for cls in (nn.DeformableConvolution, nn.ModulatedDeformableConvolution):
        layer = cls(2, 3, padding=1, in_channels=3)
        layer.initialize()
        conv = nn.Conv2D(2, 3, padding=1, in_channels=3)
        conv.initialize()
        conv.weight.set_data(layer.deformable_conv_weight.data())
        conv.bias.set_data(rng.uniform(-1, 1, 2).astype(np.float32))
        layer.deformable_conv_bias.set_data(conv.bias.data())
        assert_almost_equal(layer(x).asnumpy(), conv(x).asnumpy(), rtol=1e-5, atol=1e-6)


def test_parameter_names_shapes_and_repr():
    d = nn.DeformableConvolution(8, 3, in_channels=4, groups=2, num_deformable_group=2)
    assert list(d.collect_params()) == ["offset_weight", "offset_bias", "deformable_conv_weight",
                                        "deformable_conv_bias"]
    assert [p.shape for p in d.collect_params().values()] == \
        [(36, 2, 3, 3), (36,), (8, 2, 3, 3), (8,)]
    m = nn.ModulatedDeformableConvolution(4, (1, 3), use_bias=False, offset_use_bias=False)
    assert list(m.collect_params()) == ["deformable_conv_weight", "offset_weight"]
    assert m.offset_weight.shape == (9, 0, 1, 3) and m.deformable_conv_weight.shape == (4, 0, 1, 3)
    assert repr(d) == ("DeformableConvolution(4 -> 8, kernel_size=(3, 3), stride=(1, 1), "
                       "groups=2, num_deformable_group=2)")
    assert repr(nn.ModulatedDeformableConvolution(2, 3, strides=2, padding=1, dilation=2,
                                                  use_bias=False, activation="relu")) == \
        ("ModulatedDeformableConvolution(None -> 2, kernel_size=(3, 3), stride=(2, 2), "
         "padding=(1, 1), dilation=(2, 2), bias=False, Activation(relu))")
    default = nn.DeformableConvolution(3)
    assert default._kwargs_deformable_conv["kernel"] == (1, 1)


def test_export_names_the_contrib_ops(tmp_path, rng):
    layer = nn.ModulatedDeformableConvolution(2, 3, padding=1)
    layer.initialize()
    layer.hybridize()
    layer(nbdl.nd.array(rng.uniform(-1, 1, (1, 2, 4, 4)).astype(np.float32)))
    layer.export(str(tmp_path / "mdc"))
    text = (tmp_path / "mdc-symbol.json").read_text()
    assert "_contrib_ModulatedDeformableConvolution" in text and '"Convolution"' in text


def test_bad_arguments():
    with pytest.raises(nbdl.NbdlError, match="layout"):
        nn.DeformableConvolution(4, 3, layout="NHWC")
    with pytest.raises(nbdl.NbdlError, match="groups"):
        nn.DeformableConvolution(4, 3, groups=3)
    with pytest.raises(nbdl.NbdlError, match="num_deformable_group"):
        nn.ModulatedDeformableConvolution(4, 3, num_deformable_group=3)
    with pytest.raises(nbdl.NbdlError, match="adj"):
        nn.ModulatedDeformableConvolution(4, 3, adj=(1, 1))
    with pytest.raises(nbdl.NbdlError, match="kernel_size"):
        nn.DeformableConvolution(4, (3, 3, 3))
    with pytest.raises(nbdl.NbdlError, match="channels"):
        nn.DeformableConvolution(0, 3)
