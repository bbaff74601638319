"""Blocks and hybridization, in the spirit of MXNet's test_gluon.py."""
import itertools
import warnings

import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.gluon import HybridBlock, nn
from nbdl.testing import assert_almost_equal


class Model(HybridBlock):          # the Gluon 2.0 example, with nbdl in place of mx
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense0 = nn.Dense(20)
        self.dense1 = nn.Dense(20)

    def forward(self, x):
        x = nbdl.npx.relu(self.dense0(x))
        return nbdl.npx.relu(self.dense1(x))


def test_gluon2_example_runs():
    model = Model()
    model.initialize(device=nbdl.cpu(0))
    model.hybridize()
    out = model(nbdl.np.zeros((10, 10), device=nbdl.cpu(0)))
    assert out.shape == (10, 20)
    eager = Model()
    eager.share_parameters(model.collect_params())
    x = nbdl.np.array(np.random.RandomState(0).rand(10, 10).astype(np.float32))
    assert_almost_equal(eager(x).asnumpy(), model(x).asnumpy(), rtol=1e-5, atol=1e-6)


def test_structural_parameter_names():
    net = nn.HybridSequential()
    net.add(nn.Dense(4, in_units=3), nn.Dense(2))
    assert list(net.collect_params()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert list(net.collect_params(".*weight")) == ["0.weight", "1.weight"]
    m = Model()
    assert list(m.collect_params()) == ["dense0.weight", "dense0.bias", "dense1.weight", "dense1.bias"]


def _mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="relu"), nn.Dropout(0.0), nn.Dense(3))
    return net


@pytest.mark.parametrize("static_alloc,static_shape", list(itertools.product([False, True], repeat=2)))
def test_hybridized_equals_eager_outputs_and_gradients(static_alloc, static_shape):
    rng = np.random.RandomState(0)
    x_np = rng.rand(4, 5).astype(np.float32)
    nbdl.random.seed(1)
    eager = _mlp()
    eager.initialize()
    hyb = _mlp()
    hyb.initialize()
    for (k, p), q in zip(eager.collect_params().items(), hyb.collect_params().values()):
        pass
    x = nbdl.nd.array(x_np)
    eager(x)                    # finish deferred init
    hyb(x)
    for p, q in zip(eager.collect_params().values(), hyb.collect_params().values()):
        q.set_data(p.data())
    hyb.hybridize(static_alloc=static_alloc, static_shape=static_shape)
    results = []
    for net in (eager, hyb):
        with autograd.record():
            out = net(x)
            loss = nbdl.nd.sum(out * out)
        loss.backward()
        results.append((out.asnumpy(), [p.grad().asnumpy().copy() for p in net.collect_params().values()]))
    assert_almost_equal(results[0][0], results[1][0], rtol=1e-5, atol=1e-6)
    for a, b in zip(results[0][1], results[1][1]):
        assert_almost_equal(a, b, rtol=1e-5, atol=1e-6)


def test_batch_size_switch_with_static_alloc():
    net = _mlp()
    net.initialize()
    net.hybridize(static_alloc=True, static_shape=True)
    for bs in (4, 2, 4):
        x = nbdl.nd.ones((bs, 5))
        with autograd.record():
            out = net(x)
        out.backward()
        assert out.shape == (bs, 3)


def test_grad_req_add_doubles_gradients():
    net = nn.Dense(3, in_units=4)
    net.initialize()
    net.hybridize()
    x = nbdl.nd.ones((2, 4))
    with autograd.record():
        y = net(x)
    y.backward()
    once = net.weight.grad().asnumpy().copy()
    for p in net.collect_params().values():
        p.grad_req = "add"
    net.zero_grad()
    for _ in range(2):
        with autograd.record():
            y = net(x)
        y.backward()
    assert_almost_equal(net.weight.grad().asnumpy(), 2 * once, rtol=1e-6)


def test_deferred_init_and_error_before_it():
    net = nn.Dense(5)
    net.initialize()
    with pytest.raises(nbdl.gluon.DeferredInitializationError):
        net.weight.data()
    net(nbdl.nd.ones((2, 7)))
    assert net.weight.shape == (5, 7)


def test_parameter_sharing():
    a = nn.Dense(3, in_units=4)
    b = nn.Dense(3, in_units=4)
    b.share_parameters(a.collect_params())
    a.initialize()
    x = nbdl.nd.ones((1, 4))
    assert_almost_equal(a(x).asnumpy(), b(x).asnumpy())
    assert b.weight is a.weight


def test_block_defining_neither_forward_is_rejected():
    class Empty(HybridBlock):
        pass
    with pytest.raises(nbdl.NbdlError, match="neither forward.*nor hybrid_forward"):
        Empty()(nbdl.nd.ones((2,)))


def test_non_hybrid_child_is_rejected():
    net = nn.HybridSequential()
    with pytest.raises(nbdl.NbdlError, match="HybridSequential"):
        net.add(nn.Lambda(lambda x: x))


def test_adding_a_child_after_hybridize_warns_and_deactivates():
    net = _mlp()
    net.initialize()
    net.hybridize()
    net(nbdl.nd.ones((2, 5)))
    with pytest.warns(UserWarning, match="hybridize"):
        net.add(nn.Dense(2))
    assert not net._active


def test_export_then_imports_gives_identical_outputs(tmp_path):
    net = _mlp()
    net.initialize()
    net.hybridize()
    x = nbdl.nd.array(np.random.RandomState(0).rand(3, 5).astype(np.float32))
    ref = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / "mlp"), epoch=3)
    assert params_file.endswith("mlp-0003.params")
    blk = nbdl.gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    assert_almost_equal(blk(x).asnumpy(), ref)


def test_export_before_hybridized_forward_raises():
    net = _mlp()
    net.initialize()
    with pytest.raises(nbdl.NbdlError, match="hybridize"):
        net.export("nowhere")


def test_save_load_parameters_round_trip_and_corrupt_file(tmp_path):
    net = _mlp()
    net.initialize()
    net(nbdl.nd.ones((1, 5)))
    f = str(tmp_path / "net.params")
    net.save_parameters(f)
    other = _mlp()
    other.initialize()
    other(nbdl.nd.ones((1, 5)))
    before = [p.data().asnumpy().copy() for p in other.collect_params().values()]
    raw = open(f, "rb").read()
    open(f + ".bad", "wb").write(raw[: len(raw) // 2])
    with pytest.raises(nbdl.NbdlError):
        other.load_parameters(f + ".bad")
    for b, p in zip(before, other.collect_params().values()):
        assert_almost_equal(p.data().asnumpy(), b)
    other.load_parameters(f)
    for p, q in zip(net.collect_params().values(), other.collect_params().values()):
        assert_almost_equal(p.data().asnumpy(), q.data().asnumpy())


def test_forward_hooks_and_summary(capsys):
    net = _mlp()
    net.initialize()
    seen = []
    h = net.register_forward_hook(lambda blk, args, out: seen.append(out.shape))
    net(nbdl.nd.ones((2, 5)))
    h.detach()
    net(nbdl.nd.ones((2, 5)))
    assert seen == [(2, 3)]
    text = net.summary(nbdl.nd.ones((2, 5)))
    assert "Dense-" in text and "Total params: 75" in text


def test_repr():
    net = _mlp()
    text = repr(net)
    assert text.startswith("HybridSequential(") and "(0): Dense(None -> 8, relu)" in text


def test_debug_str_of_hybridized_block():
    net = _mlp()
    net.initialize()
    net.hybridize()
    with autograd.record():
        y = net(nbdl.nd.ones((2, 5)))
    y.backward()
    text = nbdl.debug_str(net)
    assert "Op:FullyConnected" in text and "bytes planned" in text


def test_two_forwards_before_one_backward_with_hybridize():
    net = nn.Dense(2, in_units=3)
    net.initialize()
    x1, x2 = nbdl.nd.ones((1, 3)), nbdl.nd.ones((1, 3)) * 2
    expected = x1.asnumpy() + x2.asnumpy()
    net.hybridize()
    with autograd.record():
        loss = nbdl.nd.sum(net(x1)) + nbdl.nd.sum(net(x2))
    loss.backward()
    assert_almost_equal(net.weight.grad().asnumpy(), np.repeat(expected, 2, axis=0))


@pytest.mark.parametrize("hybrid_a,hybrid_b", [(True, True), (True, False), (False, True)])
def test_shared_parameter_gradients_sum_across_blocks(hybrid_a, hybrid_b):
    a = nn.Dense(2, in_units=3, use_bias=False)
    b = nn.Dense(2, in_units=3, use_bias=False)
    b.share_parameters(a.collect_params())
    a.initialize()
    if hybrid_a:
        a.hybridize()
    if hybrid_b:
        b.hybridize()
    x1, x2 = nbdl.nd.ones((1, 3)), nbdl.nd.ones((1, 3)) * 5
    with autograd.record():
        loss = nbdl.nd.sum(a(x1)) + nbdl.nd.sum(b(x2))
    loss.backward()
    assert_almost_equal(a.weight.grad().asnumpy(), np.full((2, 3), 6.0, np.float32))


def test_symbol_block_feature_extractor_from_internals():
    net = _mlp()
    net.initialize()
    net.hybridize()
    x = nbdl.nd.array(np.random.RandomState(0).rand(2, 5).astype(np.float32))
    net(x)
    sym = net._cached[0]
    internals = sym.get_internals()
    hidden = [n for n in internals.list_outputs() if n.startswith("activation")]
    assert len(hidden) == 1
    feat = nbdl.gluon.SymbolBlock(internals[hidden[0]], nbdl.sym.var("data"),
                                  params=net.collect_params())
    out = feat(x)
    w0, b0 = net[0].weight.data().asnumpy(), net[0].bias.data().asnumpy()
    first = np.maximum(x.asnumpy() @ w0.T + b0, 0)
    assert_almost_equal(out.asnumpy(), first, rtol=1e-5, atol=1e-6)


def test_register_op_hook_sees_every_op():
    net = _mlp()
    net.initialize()
    net.hybridize()
    seen = []
    net.register_op_hook(lambda name, op, arr: seen.append((name, op, arr.shape)))
    net(nbdl.nd.ones((2, 5)))
    ops = [op for _, op, _ in seen]
    assert ops.count("FullyConnected") == 2 and "Activation" in ops
    assert all(isinstance(s, tuple) for _, _, s in seen)
    net.register_op_hook(None)
    seen.clear()
    net(nbdl.nd.ones((2, 5)))
    assert seen == []


def test_gluon_demo_eager_and_hybridized_losses_agree():
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "gluon_mlp_digits.py"
    spec = importlib.util.spec_from_file_location("gluon_mlp_digits", path)
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    hyb, _ = demo.run(epochs=2, hybridize=True, progress=False, verbose=False)
    eag, _ = demo.run(epochs=2, hybridize=False, progress=False, verbose=False)
    np.testing.assert_allclose(hyb, eag, rtol=1e-5, atol=1e-5)


class _WithStates(HybridBlock):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, in_units=3)

    def forward(self, x, states):
        h, c = states
        y = self.dense(x) + h
        return y, [y * c, c]


def test_hybridized_block_takes_and_returns_nested_lists():
    net = _WithStates()
    net.initialize()
    x, h, c = nbdl.nd.ones((2, 3)), nbdl.nd.ones((2, 3)) * 2, nbdl.nd.ones((2, 3)) * 3
    y_e, (s0_e, s1_e) = net(x, [h, c])
    net.hybridize()
    y_h, states = net(x, [h, c])
    assert isinstance(states, list) and len(states) == 2
    assert_almost_equal(y_h.asnumpy(), y_e.asnumpy())
    assert_almost_equal(states[0].asnumpy(), s0_e.asnumpy())
    assert_almost_equal(states[1].asnumpy(), s1_e.asnumpy())


def test_children_hybridized_alone_before_being_added(tmp_path):
    a, b = nn.Dense(2, in_units=2), nn.Dense(2, in_units=2)
    a.initialize()
    b.initialize()
    x = nbdl.nd.array(np.array([[1.0, -2.0]], np.float32))
    for d in (a, b):
        d.hybridize()
        d(x)                              # each traced with variables 'weight', 'bias'
    net = nn.HybridSequential()
    net.add(a, b)
    eager = net(x).asnumpy()
    net.hybridize()
    assert_almost_equal(net(x).asnumpy(), eager, rtol=1e-6)
    a(nbdl.nd.ones((3, 2)))               # a new shape: a traces again on its own
    _, params = net.export(str(tmp_path / "net"))
    assert sorted(nbdl.nd.load(params)) == ["arg:0.bias", "arg:0.weight", "arg:1.bias",
                                            "arg:1.weight"]


def test_dense_accepts_zero_units_and_refuses_negative():
    # MXNet 1.x builds Dense(0) (an unknown size); a negative one is an error
    layer = nbdl.gluon.nn.Dense(0)
    assert layer.weight.shape == (0, 0)
    with pytest.raises(nbdl.NbdlError, match="units must be >= 0"):
        nbdl.gluon.nn.Dense(-1)
