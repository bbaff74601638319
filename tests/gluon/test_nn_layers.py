"""Gluon activation layers and Embedding against numpy references, and small
CNNs built from the nn layers: deferred shapes, eager vs hybridized outputs
and gradients, export/imports."""
import math

import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.gluon import nn
from nbdl.testing import assert_almost_equal



def run_both(layer, x, rtol=1e-5, atol=1e-6):
    arr = nbdl.nd.array(x) if isinstance(x, np.ndarray) else x
    eager = layer(arr).asnumpy()
    layer.hybridize()
    hybrid = layer(arr).asnumpy()
    layer.hybridize(False)
    assert_almost_equal(eager, hybrid, rtol=rtol, atol=atol)
    return eager


# -- activations ----------------------------------------------------------------------

_erf = np.vectorize(math.erf)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


ACT_CASES = [
    (lambda: nn.LeakyReLU(0.1), lambda x: np.where(x > 0, x, 0.1 * x), "LeakyReLU(0.1)"),
    (lambda: nn.ELU(), lambda x: np.where(x > 0, x, np.expm1(x)), "ELU(1.0)"),
    (lambda: nn.ELU(0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x)), "ELU(0.5)"),
    (lambda: nn.SELU(), lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x)),
     "SELU()"),
    (lambda: nn.GELU(), lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))),
     "GELU(approximation='erf')"),
    (lambda: nn.GELU(approximation="tanh"),
     lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
     "GELU(approximation='tanh')"),
    (lambda: nn.Swish(), lambda x: x * sigmoid(x), "Swish(beta=1.0)"),
    (lambda: nn.Swish(2.0), lambda x: x * sigmoid(2 * x), "Swish(beta=2.0)"),
    (lambda: nn.SiLU(), lambda x: x * sigmoid(x), "SiLU()"),
]


@pytest.mark.parametrize("make,ref,text", ACT_CASES, ids=[c[2] for c in ACT_CASES])
def test_activation_layers(make, ref, text, rng):
    x = rng.uniform(-3, 3, (3, 4, 5)).astype(np.float32)
    layer = make()
    assert repr(layer) == text
    assert_almost_equal(run_both(layer, x), ref(x.astype(np.float64)), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("in_channels", [1, 3])
def test_prelu(in_channels, rng):
    layer = nn.PReLU(in_channels=in_channels)
    layer.initialize()
    assert layer.alpha.shape == (in_channels,)
    assert_almost_equal(layer.alpha.data().asnumpy(), np.full(in_channels, 0.25))
    alpha = rng.uniform(0, 1, in_channels).astype(np.float32)
    layer.alpha.set_data(alpha)
    x = rng.uniform(-2, 2, (2, 3, 4)).astype(np.float32)
    a = alpha.reshape(1, -1, 1)
    assert_almost_equal(run_both(layer, x), np.where(x > 0, x, a * x), rtol=1e-5, atol=1e-6)
    xa = nbdl.nd.array(x)
    with autograd.record():
        y = layer(xa)
    y.backward()
    grad = np.where(x > 0, 0, x)
    expect = grad.sum() if in_channels == 1 else grad.sum(axis=(0, 2))
    assert_almost_equal(layer.alpha.grad().asnumpy(), np.reshape(expect, (in_channels,)),
                        rtol=1e-4, atol=1e-5)
    assert repr(layer) == f"PReLU(in_channels={in_channels})"


def test_activation_argument_checks():
    with pytest.raises(nbdl.NbdlError):
        nn.LeakyReLU(-0.1)
    with pytest.raises(nbdl.NbdlError, match="approximation"):
        nn.GELU(approximation="fast")


# -- Embedding ------------------------------------------------------------------------

def test_embedding_lookup_gradient_and_repr(rng):
    layer = nn.Embedding(6, 3)
    assert repr(layer) == "Embedding(6 -> 3, float32)"
    layer.initialize()
    assert layer.weight.shape == (6, 3)
    w = rng.uniform(-1, 1, (6, 3)).astype(np.float32)
    layer.weight.set_data(w)
    ids = np.array([[0, 5, 2], [2, 2, 1]], np.float32)
    out = run_both(layer, ids)
    assert_almost_equal(out, w[ids.astype(int)])
    with autograd.record():
        y = layer(nbdl.nd.array(ids))
    y.backward()
    counts = np.bincount(ids.astype(int).ravel(), minlength=6).astype(np.float32)
    assert_almost_equal(layer.weight.grad().asnumpy(), np.repeat(counts[:, None], 3, 1))


def test_embedding_sparse_grad_warns_and_works():
    with pytest.warns(UserWarning, match="sparse_grad"):
        layer = nn.Embedding(4, 2, sparse_grad=True)
    layer.initialize()
    assert layer(nbdl.nd.array([1, 3])).shape == (2, 2)


# -- models -----------------------------------------------------------------------------

def small_cnn():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, padding=1),
            nn.BatchNorm(),
            nn.Activation("relu"),
            nn.MaxPool2D(),
            nn.Conv2D(6, 3, strides=1, groups=2, activation="relu"),
            nn.GlobalAvgPool2D(),
            nn.Flatten(),
            nn.Dense(5))
    return net


def test_small_cnn_deferred_shapes_and_names():
    net = small_cnn()
    net.initialize()
    x = nbdl.nd.ones((2, 3, 8, 8))
    assert net(x).shape == (2, 5)
    shapes = {k: p.shape for k, p in net.collect_params().items()}
    assert shapes == {
        "0.weight": (4, 3, 3, 3), "0.bias": (4,),
        "1.gamma": (4,), "1.beta": (4,), "1.running_mean": (4,), "1.running_var": (4,),
        "4.weight": (6, 2, 3, 3), "4.bias": (6,),
        "7.weight": (5, 6), "7.bias": (5,)}
    assert "(0): Conv2D(3 -> 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))" in repr(net)


def _copy_params(src, dst):
    for p, q in zip(src.collect_params().values(), dst.collect_params().values()):
        q.set_data(p.data())


def test_small_cnn_hybridized_equals_eager_in_training(rng):
    x = nbdl.nd.array(rng.uniform(-1, 1, (3, 3, 8, 8)).astype(np.float32))
    eager, hyb = small_cnn(), small_cnn()
    for net in (eager, hyb):
        net.initialize()
        net(x)
    _copy_params(eager, hyb)
    hyb.hybridize()
    results = []
    for net in (eager, hyb):
        with autograd.record():
            out = net(x)
            loss = nbdl.nd.sum(out * out)
        loss.backward()
        results.append((out.asnumpy(),
                        {k: (p.grad().asnumpy().copy() if p.grad_req != "null" else
                             p.data().asnumpy().copy())
                         for k, p in net.collect_params().items()}))
    assert_almost_equal(results[0][0], results[1][0], rtol=1e-4, atol=1e-5)
    for k in results[0][1]:
        assert_almost_equal(results[0][1][k], results[1][1][k], rtol=1e-3, atol=1e-5)
    # running statistics moved away from their initial values in both
    assert not np.allclose(results[0][1]["1.running_mean"], 0)


def test_small_cnn_export_imports_round_trip(tmp_path, rng):
    net = small_cnn()
    net.initialize()
    x = nbdl.nd.array(rng.uniform(-1, 1, (2, 3, 8, 8)).astype(np.float32))
    with autograd.record():           # move the running statistics off their defaults
        net(x)
    net.hybridize()
    ref = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / "cnn"))
    loaded = nbdl.nd.load(params_file)
    assert "aux:1.running_mean" in loaded and "aux:1.running_var" in loaded
    assert "arg:0.weight" in loaded and "arg:1.running_mean" not in loaded
    sym = nbdl.sym.load(sym_file)
    assert sorted(sym.list_auxiliary_states()) == ["1.running_mean", "1.running_var"]
    blk = nbdl.gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    assert_almost_equal(blk(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    # parameters round trip too
    f = str(tmp_path / "cnn.params")
    net.save_parameters(f)
    other = small_cnn()
    other.load_parameters(f)
    assert_almost_equal(other(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)


def test_lenet_style_model_trains(rng):
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, activation="relu"), nn.AvgPool2D(), nn.Flatten(),
            nn.Dense(8, activation="relu"), nn.Dense(2))
    net.initialize(nbdl.initializer.Xavier())
    net.hybridize()
    x = nbdl.nd.array(rng.uniform(-1, 1, (8, 1, 6, 6)).astype(np.float32))
    y = nbdl.nd.array((np.arange(8) % 2).astype(np.float32))
    trainer = nbdl.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    loss_fn = nbdl.gluon.loss.SoftmaxCrossEntropyLoss()
    losses = []
    for _ in range(15):
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(8)
        losses.append(float(loss.asnumpy().mean()))
    assert losses[-1] < losses[0]


GRAD_LAYERS = [
    (lambda: nn.Conv1D(3, 2, strides=2, padding=1), (2, 2, 7)),
    (lambda: nn.Conv2D(4, 3, groups=2, dilation=2), (2, 2, 6, 6)),
    (lambda: nn.Conv2DTranspose(2, 3, strides=2, output_padding=1), (1, 3, 3, 3)),
    (lambda: nn.AvgPool2D(3, 2, 1, count_include_pad=False), (2, 2, 5, 5)),
    (lambda: nn.MaxPool1D(3, 1, 1), (2, 2, 6)),
    (lambda: nn.InstanceNorm(scale=True), (2, 3, 4)),
    (lambda: nn.GroupNorm(2), (2, 4, 3)),
    (lambda: nn.LayerNorm(), (3, 5)),
    (lambda: nn.PReLU(in_channels=3), (2, 3, 4)),
    (lambda: nn.GELU(), (2, 3)),
    (lambda: nn.PixelShuffle2D(2), (1, 8, 2, 3)),
    (lambda: nn.ReflectionPad2D(1), (1, 2, 3, 3)),
]


@pytest.mark.parametrize("make,shape", GRAD_LAYERS,
                         ids=[type(make()).__name__ for make, _ in GRAD_LAYERS])
def test_layer_gradients_eager_equal_hybridized(make, shape, rng):
    x_np = rng.uniform(-1, 1, shape).astype(np.float32)
    head = None
    results = []
    for hybrid in (False, True):
        layer = make()
        layer.initialize()
        x = nbdl.nd.array(x_np)
        layer(x)
        for p in layer.collect_params().values():
            p.set_data(np.linspace(-0.5, 0.8, int(np.prod(p.shape)), dtype=np.float32)
                       .reshape(p.shape))
        if hybrid:
            layer.hybridize()
        x.attach_grad()
        with autograd.record():
            y = layer(x)
            if head is None:
                head = rng.uniform(-1, 1, y.shape).astype(np.float32)
            loss = nbdl.nd.sum(y * nbdl.nd.array(head))
        loss.backward()
        results.append([y.asnumpy(), x.grad.asnumpy()] +
                       [p.grad().asnumpy() for p in layer.collect_params().values()
                        if p.grad_req != "null"])
    for a, b in zip(*results):
        assert_almost_equal(a, b, rtol=1e-4, atol=1e-5)
