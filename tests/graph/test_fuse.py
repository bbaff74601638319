"""The inference rewrite (nbdl.graph.fuse): a graph bound without gradients
gives what the graph as written gives (within 1e-4 relative), its training
forward is the plain graph's, debug_str lists the rewrites, and Gluon's
predict calls (fused) leave training (not fused) as it was."""
import numpy as np
import pytest

import nbdl
from nbdl import autograd, gluon
from nbdl.gluon import nn
from nbdl.testing import assert_plan_valid

S = nbdl.sym


def block():
    """A ResNet v1 downsampling block, a depthwise layer, Dropout, a head."""
    x = S.var("data")
    y = S.Convolution(x, num_filter=8, kernel=(3, 3), pad=(1, 1), stride=(2, 2), no_bias=True,
                      name="c1")
    y = S.Activation(S.BatchNorm(y, fix_gamma=False, name="bn1"), act_type="relu", name="r1")
    y = S.BatchNorm(S.Convolution(y, num_filter=8, kernel=(3, 3), pad=(1, 1), no_bias=True,
                                  name="c2"), fix_gamma=False, name="bn2")
    sc = S.BatchNorm(S.Convolution(x, num_filter=8, kernel=(1, 1), stride=(2, 2), no_bias=True,
                                   name="sc"), fix_gamma=False, name="bnsc")
    y = S.Activation(y + sc, act_type="relu", name="r2")
    y = S.Convolution(y, num_filter=8, num_group=8, kernel=(3, 3), pad=(1, 1), name="dw")
    y = S.relu(y, name="r3")
    y = S.Dropout(y, p=0.5, name="drop")
    y = S.FullyConnected(S.Flatten(y), num_hidden=5, name="fc")
    return S.SoftmaxOutput(y, name="softmax")


def _values(sym, rng):
    arg_s, _, aux_s = sym.infer_shape(data=(2, 3, 10, 10))
    args = {n: rng.uniform(-1, 1, s).astype(np.float32)
            for n, s in zip(sym.list_arguments(), arg_s)}
    for n in args:
        if n.endswith("gamma"):
            args[n] = rng.uniform(0.5, 1.5, args[n].shape).astype(np.float32)
    aux = {n: (rng.uniform(0.5, 1.5, s) if n.endswith("var") else rng.uniform(-1, 1, s))
           .astype(np.float32) for n, s in zip(sym.list_auxiliary_states(), aux_s)}
    return args, aux


def _bind(sym, args, aux, passes, monkeypatch):
    monkeypatch.setenv("NBDL_GRAPH_PASSES", "1" if passes else "0")
    return sym.bind(nbdl.cpu(), {k: nbdl.nd.array(v) for k, v in args.items()},
                    aux_states={k: nbdl.nd.array(v) for k, v in aux.items()}, grad_req="null")


def test_fused_inference_matches_plain(monkeypatch, rng):
    sym = block()
    args, aux = _values(sym, rng)
    plain = _bind(sym, args, aux, False, monkeypatch)
    fused = _bind(sym, args, aux, True, monkeypatch)
    want = plain.forward()[0].asnumpy()
    got = fused.forward()[0].asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    assert_plan_valid(fused.memory_plan)
    ops = [s.node.op.name for s in fused._sched.fwd_infer]
    assert ops.count("_nbdl_fused_conv") == 4 and "BatchNorm" not in ops
    assert "Dropout" not in ops and "Activation" not in ops and "relu" not in ops
    text = fused.debug_str()
    assert "Fused for inference" in text
    assert "c2 (Convolution) + bn2 (BatchNorm) + _plus" in text and "r2 (Activation) -> c2" in text
    assert "dw (Convolution) + r3 (relu) -> dw (_nbdl_fused_conv)" in text
    assert "drop (Dropout) -> dropped" in text
    assert "Fused for inference" not in plain.debug_str()
    # the user's symbol is unchanged
    assert [n for n in sym.tojson().split('"op": "')[1:] if n.startswith("_nbdl")] == []


def test_training_forward_uses_plain_graph(monkeypatch, rng):
    sym = block()
    args, aux = _values(sym, rng)
    plain = _bind(sym, args, aux, False, monkeypatch)
    fused = _bind(sym, args, aux, True, monkeypatch)
    for _ in range(2):            # batch statistics; the moving ones move the same way
        nbdl.random.seed(3)
        want = plain.forward(is_train=True)[0].asnumpy()
        nbdl.random.seed(3)
        got = fused.forward(is_train=True)[0].asnumpy()
        np.testing.assert_array_equal(got, want)
    for k in aux:
        np.testing.assert_array_equal(fused.aux_dict[k].asnumpy(), plain.aux_dict[k].asnumpy())
    np.testing.assert_allclose(fused.forward()[0].asnumpy(), plain.forward()[0].asnumpy(),
                               rtol=1e-4, atol=1e-6)


def test_shared_entries_are_not_fused(monkeypatch, rng):
    """An intermediate read twice (or an output) stays: only what nothing
    else reads is folded."""
    x = S.var("data")
    c = S.Convolution(x, num_filter=4, kernel=(3, 3), pad=(1, 1), name="c")
    b = S.BatchNorm(c, name="bn")
    r = S.Activation(b, act_type="relu", name="r")
    sym = S.Group([r, c * 2])                       # c is read twice: nothing fused
    args, aux = _values(sym, rng)
    fused = _bind(sym, args, aux, True, monkeypatch)
    assert not fused._bg.fused
    sym = S.Group([r, b])                           # bn is an output: conv + bn only
    fused = _bind(sym, args, aux, True, monkeypatch)
    plain = _bind(sym, args, aux, False, monkeypatch)
    assert [f.describe() for f in fused._bg.fused] == \
        ["c (Convolution) + bn (BatchNorm) -> c (_nbdl_fused_conv)"]
    for a, b_ in zip(fused.forward(), plain.forward()):
        np.testing.assert_allclose(a.asnumpy(), b_.asnumpy(), rtol=1e-4, atol=1e-6)


def _net():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1, use_bias=False), nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(8, 3, padding=1, groups=8), nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(4, 1, activation="relu"), nn.Dropout(0.3), nn.Flatten(), nn.Dense(3))
    return net


@pytest.mark.parametrize("passes", ["1", "0"])
def test_gluon_predict_and_train(passes, monkeypatch):
    """20 SGD steps with a predict call after each: losses and predictions as
    with the passes off (the training executor is never rewritten; the
    predict one is, and reads the same parameters)."""
    def run():
        nbdl.random.seed(0)
        net = _net()
        net.initialize(nbdl.init.Xavier())
        net.hybridize(static_alloc=True, static_shape=True)
        rng = np.random.RandomState(1)
        x = nbdl.nd.array(rng.rand(4, 3, 8, 8).astype(np.float32))
        y = nbdl.nd.array(rng.randint(0, 3, 4).astype(np.float32))
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
        losses, preds = [], []
        for _ in range(20):
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(4)
            losses.append(float(loss.mean().asnumpy().item()))
            preds.append(net(x).asnumpy())
        return np.array(losses), np.array(preds), net
    monkeypatch.setenv("NBDL_GRAPH_PASSES", "0")
    want_l, want_p, _ = run()
    monkeypatch.setenv("NBDL_GRAPH_PASSES", passes)
    got_l, got_p, net = run()
    np.testing.assert_allclose(got_l, want_l, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got_p, want_p, rtol=1e-4, atol=1e-5)
    fused = [len(ex._bg.fused) for ex in net._cached_op.executors()]
    assert sorted(fused) == ([0, 0] if passes == "0" else [0, 4])   # training, predict


def _bind_grads(sym, args, aux, passes, req, monkeypatch):
    monkeypatch.setenv("NBDL_GRAPH_PASSES", "1" if passes else "0")
    grads = {k: nbdl.nd.zeros(v.shape) for k, v in args.items()}
    return sym.bind(nbdl.cpu(), {k: nbdl.nd.array(v) for k, v in args.items()}, args_grad=grads,
                    aux_states={k: nbdl.nd.array(v) for k, v in aux.items()}, grad_req=req)


@pytest.mark.parametrize("req", ["write", "mixed"])
def test_binds_with_gradients_are_not_rewritten(req, monkeypatch, rng):
    """A bind where any argument gets a gradient runs the graph as written:
    same schedule, debug_str, outputs and gradients with the passes on."""
    sym = block()
    args, aux = _values(sym, rng)
    reqs = "write" if req == "write" else \
        {k: ("null" if k in ("data", "softmax_label") else "write") for k in args}
    runs = []
    for passes in (True, False):
        ex = _bind_grads(sym, args, aux, passes, reqs, monkeypatch)
        assert not ex._bg.fused
        text = ex.debug_str()
        assert "Fused for inference" not in text and "_nbdl_fused_conv" not in text
        nbdl.random.seed(5)
        out = ex.forward(is_train=True)[0].asnumpy()
        ex.backward()
        infer = ex.forward()[0].asnumpy()
        runs.append((text, out, infer, {k: g.asnumpy() for k, g in ex.grad_dict.items()
                                        if g is not None}))
    (t1, o1, i1, g1), (t2, o2, i2, g2) = runs
    assert t1 == t2
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(i1, i2)
    assert sorted(g1) == sorted(g2) and g1
    for k in g1:
        np.testing.assert_array_equal(g1[k], g2[k], err_msg=k)


def test_resnet18_v1_inference_matches_plain(monkeypatch):
    """Model-zoo ResNet-18 v1 bound with grad_req='null' (BatchNorm moving
    statistics, gamma and beta away from their initial values): every
    convolution fused (stem, blocks, downsampling shortcuts), no BatchNorm or
    ReLU left, outputs within 1e-4 relative of the graph as written."""
    from nbdl.gluon.model_zoo.vision import resnet18_v1
    nbdl.random.seed(0)
    net = resnet18_v1()
    net.initialize(nbdl.init.Xavier(rnd_type="uniform", factor_type="in", magnitude=6))
    net(nbdl.nd.zeros((1, 3, 32, 32)))
    sym = net(S.var("data"))
    rng = np.random.RandomState(7)
    values = {}
    for name, p in net.collect_params().items():
        v = p.data().asnumpy()
        if name.endswith(("running_var", "gamma")):
            v = rng.uniform(0.5, 1.5, v.shape)
        elif name.endswith(("running_mean", "beta")):
            v = rng.uniform(-0.2, 0.2, v.shape)
        values[name] = v.astype(np.float32)
    arg_names, aux_names = sym.list_arguments(), sym.list_auxiliary_states()
    args = {n: values[n] for n in arg_names if n != "data"}
    args["data"] = rng.uniform(-1, 1, (2, 3, 32, 32)).astype(np.float32)
    aux = {n: values[n] for n in aux_names}
    plain = _bind(sym, args, aux, False, monkeypatch)
    fused = _bind(sym, args, aux, True, monkeypatch)
    want = plain.forward()[0].asnumpy()
    got = fused.forward()[0].asnumpy()
    assert want.shape == (2, 1000) and np.abs(want).max() > 1e-2
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    ops = [s.node.op.name for s in fused._sched.fwd_infer]
    n_conv = sum(1 for s in plain._sched.fwd_infer if s.node.op.name == "Convolution")
    assert n_conv == 20 and ops.count("_nbdl_fused_conv") == n_conv
    assert not {"Convolution", "BatchNorm", "Activation", "relu"} & set(ops)
    assert len(fused._bg.fused) == n_conv
