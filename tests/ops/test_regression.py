import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.ops.registry import get_op
from nbdl.testing import (assert_almost_equal, check_symbolic_backward,
                          check_symbolic_forward, run_symbol)


def np_softmax_rows(x2):
    z = x2 - x2.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def np_softmax_output_forward(x, multi_output=False, preserve_shape=False):
    x = x.astype(np.float64)
    if multi_output:
        n, k = x.shape[:2]
        x3 = x.reshape(n, k, -1).transpose(0, 2, 1).reshape(-1, k)
        return np_softmax_rows(x3).reshape(n, -1, k).transpose(0, 2, 1).reshape(x.shape)
    if preserve_shape:
        return np_softmax_rows(x.reshape(-1, x.shape[-1])).reshape(x.shape)
    return np_softmax_rows(x.reshape(x.shape[0], -1)).reshape(x.shape)


def np_softmax_output_grad(x, label, grad_scale=1.0, ignore_label=-1.0, multi_output=False,
                           use_ignore=False, preserve_shape=False, normalization="null",
                           smooth_alpha=0.0, out_grad=None):
    """MXNet's SoftmaxOutput gradient, written out with numpy."""
    out = np_softmax_output_forward(x, multi_output, preserve_shape)
    if label.shape == x.shape:  # probability labels
        g = (out - label) * grad_scale
        return g * out_grad if out_grad is not None else g
    if multi_output:
        n, k = x.shape[:2]
        p = out.reshape(n, k, -1).transpose(0, 2, 1).reshape(-1, k)  # (n*d, k)
        sp = p.shape[0] // n if n else 1
    else:
        k = x.shape[-1] if preserve_shape else x.size // x.shape[0]
        p = out.reshape(-1, k)
        sp = 1
    lab = label.reshape(-1).astype(np.float64).astype(np.int64)  # C truncation
    target = np.full(p.shape, smooth_alpha / (k - 1) if k > 1 else 0.0)
    rows = np.arange(p.shape[0])
    hit = (lab >= 0) & (lab < k)
    target[rows[hit], lab[hit]] = 1.0 - smooth_alpha
    g = p - target
    if use_ignore:
        g[lab == int(ignore_label)] = 0
    if normalization == "batch":
        cnt = p.shape[0] // sp
    elif normalization == "valid":
        cnt = max(int(np.sum(lab != int(ignore_label))), 1)
    else:
        cnt = 1
    g = g * grad_scale / (sp if normalization != "valid" else 1) / cnt
    if multi_output:
        n, k = x.shape[:2]
        g = g.reshape(n, -1, k).transpose(0, 2, 1).reshape(x.shape)
    else:
        g = g.reshape(x.shape)
    return g * out_grad if out_grad is not None else g


def cpu_gpu_agree(sym, location, wrt, rtol=1e-5, atol=1e-6, seed=0):
    """Outputs and the gradients of ``wrt`` agree between cpu and the CUDA simulator."""
    rng = np.random.RandomState(seed)
    outs, _, _ = run_symbol(sym, location, device=cpu())
    ogs = [rng.normal(size=o.shape).astype(o.dtype) for o in outs]
    res = [run_symbol(sym, location, out_grads=ogs, grad_nodes=wrt, device=d, is_train=True)
           for d in (cpu(), gpu())]
    for a, b in zip(res[0][0], res[1][0]):
        assert_almost_equal(b, a, rtol, atol, names=("gpu output", "cpu output"))
    for k in wrt:
        assert_almost_equal(res[1][1][k], res[0][1][k], rtol, atol, names=("gpu grad", "cpu grad"))


def so(**attrs):
    return nbdl.sym.SoftmaxOutput(nbdl.sym.var("data"), nbdl.sym.var("label"), **attrs)


# -- SoftmaxOutput -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,attrs", [((4, 3), {}), ((1, 1), {}), ((0, 3), {}),
                                         ((2, 3, 4), {"preserve_shape": True}),
                                         ((2, 3, 4), {}),
                                         ((2, 3, 2, 2), {"multi_output": True}),
                                         ((2, 3), {"multi_output": True})])
def test_softmax_output_forward(dtype, shape, attrs, rng):
    x = rng.uniform(-2, 2, shape).astype(dtype)
    y = so(**attrs)
    with nbdl.np_shape(True):       # a 0 dim is a size, not unknown
        lshape = y.infer_shape(data=shape)[0][1]
    label = rng.randint(0, max(shape[1] if len(shape) > 1 else 1, 1), lshape).astype(dtype)
    want = np_softmax_output_forward(x, attrs.get("multi_output", False),
                                     attrs.get("preserve_shape", False)) if x.size else x
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-5)
    check_symbolic_forward(y, {"data": x, "label": label}, [want], **tol)


BACKWARD_CASES = [
    ((4, 3), {}),
    ((4, 3), {"grad_scale": 0.5, "normalization": "batch"}),
    ((5, 3), {"use_ignore": True, "ignore_label": 1, "normalization": "valid"}),
    ((5, 3), {"ignore_label": 1, "normalization": "valid"}),  # counts without use_ignore
    ((4, 3), {"smooth_alpha": 0.2}),
    ((4, 3), {"smooth_alpha": 0.1, "use_ignore": True, "ignore_label": 2}),
    ((2, 3, 4), {"preserve_shape": True, "normalization": "batch"}),
    ((2, 3, 4), {}),
    ((2, 3, 2, 2), {"multi_output": True}),
    ((2, 3, 2, 2), {"multi_output": True, "normalization": "batch", "grad_scale": 3.0}),
    ((2, 4, 3), {"multi_output": True, "use_ignore": True, "ignore_label": 0,
                 "normalization": "valid"}),
    ((1, 1), {}),
]


@pytest.mark.parametrize("shape,attrs", BACKWARD_CASES)
@pytest.mark.parametrize("label_dtype", [np.float64, np.int32])
def test_softmax_output_backward(shape, attrs, label_dtype, rng):
    x = rng.uniform(-2, 2, shape)
    y = so(**attrs)
    with nbdl.np_shape(True):       # a 0 dim is a size, not unknown
        lshape = y.infer_shape(data=shape)[0][1]
    k = shape[1] if attrs.get("multi_output") else (shape[-1] if attrs.get("preserve_shape")
                                                    else int(np.prod(shape[1:])))
    # include out-of-range labels (no one-hot target) and the ignore label
    label = rng.randint(-1, k + 1, lshape).astype(label_dtype)
    want = np_softmax_output_grad(x, label, **attrs)
    # the head gradient is ignored (loss output): pass a random one
    check_symbolic_backward(y, {"data": x, "label": label}, [rng.normal(size=shape)],
                            {"data": want})


def test_softmax_output_valid_all_ignored(rng):
    x = rng.uniform(size=(3, 4))
    label = np.full((3,), 2.0)
    y = so(use_ignore=True, ignore_label=2, normalization="valid")
    check_symbolic_backward(y, {"data": x, "label": label}, [np.ones((3, 4))],
                            {"data": np.zeros((3, 4))})


@pytest.mark.parametrize("multi", [False, True])
def test_softmax_output_out_grad(multi, rng):
    shape = (2, 3, 2) if multi else (4, 3)
    x = rng.uniform(-1, 1, shape)
    y = so(out_grad=True, multi_output=multi, grad_scale=2.0)
    with nbdl.np_shape(True):       # a 0 dim is a size, not unknown
        lshape = y.infer_shape(data=shape)[0][1]
    label = rng.randint(0, 3, lshape).astype(np.float64)
    og = rng.normal(size=shape)
    check_symbolic_backward(y, {"data": x, "label": label}, [og],
                            {"data": np_softmax_output_grad(x, label, grad_scale=2.0,
                                                            multi_output=multi, out_grad=og)})


def test_softmax_output_probability_labels(rng):
    x = rng.uniform(-1, 1, (3, 4))
    p = rng.dirichlet(np.ones(4), size=3)
    y = so(grad_scale=2.0, normalization="batch")  # no normalisation with probabilities
    check_symbolic_backward(y, {"data": x, "label": p}, [np.ones((3, 4))],
                            {"data": (np_softmax_rows(x) - p) * 2.0})


def test_softmax_alias_and_label_variable():
    y = nbdl.sym.Softmax(nbdl.sym.var("data"), name="sm")
    assert y.list_arguments() == ["data", "sm_label"]
    args, outs, _ = y.infer_shape(data=(8, 10))
    assert args == [(8, 10), (8,)] and outs == [(8, 10)]
    assert get_op("Softmax") is get_op("SoftmaxOutput")
    assert get_op("SoftmaxOutput").loss_output


@pytest.mark.parametrize("attrs,dshape,lshape", [
    ({}, (4, 3), (4,)),
    ({"preserve_shape": True}, (2, 3, 4), (2, 3)),
    ({}, (2, 3, 4), (2,)),
    ({"multi_output": True}, (2, 3, 4, 5), (2, 4, 5)),
])
def test_softmax_output_label_inference(attrs, dshape, lshape):
    args, _, _ = so(**attrs).infer_shape(data=dshape)
    assert args[1] == lshape


@pytest.mark.parametrize("lshape", [(2, 20), (2, 1, 4, 5), (2, 4, 5), (2, 3, 4, 5)])
def test_softmax_output_multi_label_shapes_accepted(lshape):
    args, _, _ = so(multi_output=True).infer_shape(data=(2, 3, 4, 5), label=lshape)
    assert args[1] == lshape


def test_softmax_output_label_type_inference():
    args, outs, _ = so().infer_type(data=np.float64)
    assert args == [np.float64, np.float64] and outs == [np.float64]


@pytest.mark.parametrize("attrs,dshape,lshape", [({}, (4, 3), (3,)), ({}, (4, 3), (4, 2)),
                                                 ({"multi_output": True}, (2, 3, 4), (2, 3))])
def test_softmax_output_label_mismatch(attrs, dshape, lshape):
    with pytest.raises(nbdl.ShapeError, match=r"SoftmaxOutput.*label shape.*" +
                       str(lshape).replace("(", r"\(").replace(")", r"\)")):
        so(**attrs).infer_shape(data=dshape, label=lshape)


def test_softmax_output_1d_data_rejected():
    with pytest.raises(nbdl.ShapeError, match=r"SoftmaxOutput.*\(5,\)"):
        so().infer_shape(data=(5,))


@pytest.mark.parametrize("attrs,match", [({"normalization": "mean"}, "normalization"),
                                         ({"smooth_alpha": 1.5}, "smooth_alpha"),
                                         ({"multi_output": True, "preserve_shape": True},
                                          "multi_output"),
                                         ({"grad_scale": "x"}, "grad_scale")])
def test_softmax_output_bad_attrs(attrs, match):
    with pytest.raises(nbdl.AttrError, match=match):
        so(**attrs)


@pytest.mark.parametrize("shape,attrs", [((4, 3), {"use_ignore": True, "normalization": "valid",
                                                   "ignore_label": 0}),
                                         ((2, 3, 2), {"multi_output": True, "smooth_alpha": 0.1,
                                                      "normalization": "valid"}),
                                         ((3, 2), {"out_grad": True})])
@pytest.mark.cuda
def test_softmax_output_cuda_matches_cpu(shape, attrs, rng):
    y = so(**attrs)
    with nbdl.np_shape(True):       # a 0 dim is a size, not unknown
        lshape = y.infer_shape(data=shape)[0][1]
    cpu_gpu_agree(y, {"data": rng.uniform(-1, 1, shape).astype(np.float32),
                      "label": rng.randint(0, 3, lshape).astype(np.int32)}, ["data"])


@pytest.mark.cuda
def test_softmax_output_cuda_probability_labels(rng):
    cpu_gpu_agree(so(), {"data": rng.uniform(size=(2, 3)).astype(np.float32),
                         "label": rng.dirichlet(np.ones(3), 2).astype(np.float32)}, ["data"])


# -- regression outputs ------------------------------------------------------------------

REG = {
    "LinearRegressionOutput": (lambda x: x, lambda o, l: o - l),
    "LogisticRegressionOutput": (lambda x: 1 / (1 + np.exp(-x)), lambda o, l: o - l),
    "MAERegressionOutput": (lambda x: x, lambda o, l: np.where(o - l > 0, 1.0, -1.0)),
}


def reg(name, **attrs):
    return getattr(nbdl.sym, name)(nbdl.sym.var("data"), nbdl.sym.var("label"), **attrs)


@pytest.mark.parametrize("name", sorted(REG))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,lshape", [((4, 3), (4, 3)), ((5, 1), (5,)), ((1,), (1,)),
                                          ((0, 2), (0, 2)), ((2, 3, 2), (2, 6))])
def test_regression_forward_backward(name, dtype, shape, lshape, rng):
    fwd, bwd = REG[name]
    x = rng.uniform(-2, 2, shape).astype(dtype)
    label = rng.uniform(-2, 2, lshape).astype(dtype)
    y = reg(name, grad_scale=1.5)
    out = fwd(x.astype(np.float64))
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-5)
    check_symbolic_forward(y, {"data": x, "label": label}, [out], **tol)
    num_output = label.size // label.shape[0] if label.shape[0] else 1
    want = bwd(out, label.reshape(shape)) * 1.5 / num_output
    check_symbolic_backward(y, {"data": x, "label": label}, [np.zeros(shape, dtype)],
                            {"data": want}, **tol)


def test_mae_ties_count_negative():
    x = np.array([[1.0, 2.0]])
    y = reg("MAERegressionOutput")
    check_symbolic_backward(y, {"data": x, "label": x.copy()}, [np.ones((1, 2))],
                            {"data": np.array([[-0.5, -0.5]])})


def test_regression_int_labels(rng):
    x = rng.uniform(size=(3, 2))
    label = np.array([[0, 1], [1, 0], [1, 1]], dtype=np.int64)
    check_symbolic_backward(reg("LogisticRegressionOutput"), {"data": x, "label": label},
                            [np.ones((3, 2))], {"data": (1 / (1 + np.exp(-x)) - label) / 2})


@pytest.mark.parametrize("dshape,lshape", [((4, 1), (4,)), ((4, 3), (4, 3)), ((4,), (4,))])
def test_regression_label_inference(dshape, lshape):
    args, outs, _ = reg("LinearRegressionOutput").infer_shape(data=dshape)
    assert args[1] == lshape and outs == [dshape]


@pytest.mark.parametrize("lshape", [(3, 4), (4, 2), (2, 6)])
def test_regression_label_mismatch(lshape):
    with pytest.raises(nbdl.ShapeError, match=r"LinearRegressionOutput.*\(4, 3\)"):
        reg("LinearRegressionOutput").infer_shape(data=(4, 3), label=lshape)


def test_regression_bad_attr():
    with pytest.raises(nbdl.AttrError, match="grad_scale"):
        reg("MAERegressionOutput", grad_scale="big")


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(REG))
def test_regression_cuda_matches_cpu(name, rng):
    cpu_gpu_agree(reg(name, grad_scale=2.0),
                  {"data": rng.uniform(-1, 1, (3, 2)).astype(np.float32),
                   "label": rng.uniform(-1, 1, (3, 2)).astype(np.float32)}, ["data"])


# -- MakeLoss ----------------------------------------------------------------------

@pytest.mark.parametrize("normalization, scale", [("null", 1.0), ("batch", 1 / 3), ("valid", 1 / 5)])
def test_make_loss_forward_identity_backward_constant(normalization, scale):
    x = np.array([[1.0, -2.0, 3.0, 0.0], [0.5, -1.0, 2.0, 4.0], [-3.0, 0.0, 0.2, -0.1]])
    data = nbdl.sym.Variable("data")
    sym = nbdl.sym.MakeLoss(data, grad_scale=2.0, normalization=normalization, valid_thresh=0.3)
    # the head gradient is ignored; 'valid' counts the 5 elements above 0.3
    check_symbolic_forward(sym, {"data": x}, [x])
    check_symbolic_backward(sym, {"data": x}, [np.full_like(x, 7.0)],
                            {"data": np.full_like(x, 2.0 * scale)}, rtol=1e-12, atol=0)


def test_make_loss_valid_count_is_at_least_one_and_names():
    x = np.array([[-1.0, -2.0]])
    sym = nbdl.sym.make_loss(nbdl.sym.Variable("data"), normalization="valid")
    check_symbolic_backward(sym, {"data": x}, [np.ones_like(x)], {"data": np.ones_like(x)})
    assert get_op("make_loss") is get_op("MakeLoss")
    with pytest.raises(nbdl.errors.AttrError, match="normalization"):
        nbdl.sym.MakeLoss(nbdl.sym.Variable("data"), normalization="sum")


def test_make_loss_eager_autograd_and_json_round_trip():
    x = nbdl.nd.array([[1.0, -2.0, 3.0], [0.5, -1.0, 2.0]])
    x.attach_grad()
    with nbdl.autograd.record():
        y = nbdl.nd.make_loss(x * 2, normalization="batch")
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), x.asnumpy() * 2)
    np.testing.assert_allclose(x.grad.asnumpy(), np.full((2, 3), 2.0 / 2))
    sym = nbdl.sym.make_loss(nbdl.sym.Variable("a") * 3, grad_scale=0.5, name="loss")
    back = nbdl.sym.load_json(sym.tojson())
    assert back.list_outputs() == ["loss_output"]
    check_symbolic_backward(back, {"a": np.ones((2, 2))}, [np.zeros((2, 2))],
                            {"a": np.full((2, 2), 1.5)})


@pytest.mark.cuda
def test_make_loss_cuda_simulator_matches_cpu():
    x = np.array([[1.0, -2.0, 3.0], [0.5, -1.0, 2.0]], np.float32)
    sym = nbdl.sym.MakeLoss(nbdl.sym.Variable("data"), normalization="valid", grad_scale=3.0)
    for device in (cpu(), gpu(0)):
        check_symbolic_backward(sym, {"data": x}, [np.ones_like(x)],
                                {"data": np.full_like(x, 3.0 / 4)}, device=device)
