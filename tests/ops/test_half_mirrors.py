"""float16 through the float32 kernels (``OpDef.half_mirrors``): storage
float16, the op computed in float32 on the exact float32 values of the
float16 inputs, each result rounded once."""
import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.ops.registry import (REQ_ADD, REQ_NULL, REQ_WRITE, Call, Launch, OpDef,
                               half_launch, half_mirror_temps)
from nbdl.testing import bind_and_run, check_consistency

nd = nbdl.nd
sym = nbdl.sym
F16 = np.float16


def half(a):
    return np.asarray(a, dtype=F16)


def f64(a):
    return np.asarray(a, dtype=F16).astype(np.float64)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _group_norm(x, gamma, beta, eps=1e-5):
    # one group per channel here: (N, G, H, W) normalised over (H, W)
    mean = x.mean(axis=(2, 3), keepdims=True)
    var = x.var(axis=(2, 3), keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma[:, None, None] + beta[:, None, None]


RNG = np.random.RandomState(0)
X = half(RNG.uniform(-2, 2, (2, 3, 4)))
M = half(RNG.uniform(-1, 1, (4, 5)))
W = half(RNG.uniform(-1, 1, (5, 3)))
IDX = np.array([2, 0, 3], np.int32)

# (name, eager call on float16 arrays, numpy reference on the float64 values)
CASES = [
    ("sum", lambda: nd.sum(nd.array(X, dtype=F16), axis=(0, 2)), lambda: f64(X).sum(axis=(0, 2))),
    ("mean", lambda: nd.mean(nd.array(X, dtype=F16), axis=1), lambda: f64(X).mean(axis=1)),
    ("max", lambda: nd.max(nd.array(X, dtype=F16), axis=2), lambda: f64(X).max(axis=2)),
    ("softmax", lambda: nd.softmax(nd.array(X, dtype=F16)), lambda: softmax(f64(X))),
    ("log_softmax", lambda: nd.log_softmax(nd.array(X, dtype=F16), axis=1),
     lambda: np.log(softmax(f64(X), axis=1))),
    ("dot", lambda: nd.dot(nd.array(M, dtype=F16), nd.array(W, dtype=F16)),
     lambda: f64(M) @ f64(W)),
    ("batch_dot", lambda: nd.batch_dot(nd.array(X, dtype=F16), nd.array(X, dtype=F16),
                                       transpose_b=True),
     lambda: f64(X) @ f64(X).transpose(0, 2, 1)),
    ("FullyConnected", lambda: nd.FullyConnected(nd.array(M, dtype=F16),
                                                 nd.array(W.T.copy(), dtype=F16),
                                                 no_bias=True, num_hidden=3),
     lambda: f64(M) @ f64(W)),
    ("transpose", lambda: nd.transpose(nd.array(X, dtype=F16), axes=(2, 0, 1)),
     lambda: f64(X).transpose(2, 0, 1)),
    ("concat", lambda: nd.concat(nd.array(X, dtype=F16), nd.array(X, dtype=F16), dim=2),
     lambda: np.concatenate([f64(X), f64(X)], axis=2)),
    ("take", lambda: nd.take(nd.array(M, dtype=F16), nd.array(IDX, dtype=np.int32)),
     lambda: f64(M)[IDX]),
    ("cumsum", lambda: nd.cumsum(nd.array(X, dtype=F16), axis=2), lambda: f64(X).cumsum(axis=2)),
    ("sort", lambda: nd.sort(nd.array(X, dtype=F16), axis=1), lambda: np.sort(f64(X), axis=1)),
    ("Pooling", lambda: nd.Pooling(nd.array(X[None], dtype=F16), kernel=(2, 2),
                                   pool_type="avg"),
     lambda: (f64(X[None])[:, :, :-1, :-1] + f64(X[None])[:, :, 1:, :-1]
              + f64(X[None])[:, :, :-1, 1:] + f64(X[None])[:, :, 1:, 1:]) / 4),
    ("LeakyReLU", lambda: nd.LeakyReLU(nd.array(X, dtype=F16), act_type="elu", slope=0.5),
     lambda: np.where(f64(X) > 0, f64(X), 0.5 * np.expm1(f64(X)))),
    ("LeakyReLU_prelu", lambda: nd.LeakyReLU(nd.array(X, dtype=F16),
                                             nd.array(half([0.25, -0.5, 1.5]), dtype=F16),
                                             act_type="prelu"),
     lambda: np.where(f64(X) > 0, f64(X), f64([0.25, -0.5, 1.5])[:, None] * f64(X))),
    ("GroupNorm", lambda: nd.GroupNorm(nd.array(X[:, :2].reshape(2, 2, 2, 2), dtype=F16),
                                       nd.array(half([1.5, -0.5]), dtype=F16),
                                       nd.array(half([0.25, 1.0]), dtype=F16),
                                       num_groups=2, eps=1e-5),
     lambda: _group_norm(f64(X[:, :2].reshape(2, 2, 2, 2)), f64([1.5, -0.5]), f64([0.25, 1.0]))),
    ("Pad", lambda: nd.Pad(nd.array(X[None], dtype=F16), mode="reflect",
                           pad_width=(0, 0, 0, 0, 1, 1, 2, 1)),
     lambda: np.pad(f64(X[None]), ((0, 0), (0, 0), (1, 1), (2, 1)), mode="reflect")),
    ("Embedding", lambda: nd.Embedding(nd.array(IDX, dtype=np.int32), nd.array(M, dtype=F16),
                                       input_dim=4, output_dim=5), lambda: f64(M)[IDX]),
]


@pytest.mark.parametrize("name,call,ref", CASES, ids=[c[0] for c in CASES])
def test_float16_results_are_the_float32_results_rounded_once(name, call, ref):
    out = call()
    assert out.dtype == np.float16, name
    want = np.asarray(ref())
    # one rounding of a float32 computation: within a float16 ulp of the exact value
    np.testing.assert_allclose(out.asnumpy().astype(np.float64), want, rtol=2 ** -10,
                               atol=2 ** -14)


def test_softmax_dtype_float32_of_float16_data_and_its_gradient():
    x = nd.array(X, dtype=F16)
    x.attach_grad()
    g = RNG.normal(size=X.shape)
    with nbdl.autograd.record():
        y = nd.softmax(x, dtype="float32")
    y.backward(nd.array(g, dtype=np.float32))
    assert y.dtype == np.float32 and x.grad.dtype == np.float16
    s = softmax(f64(X))
    np.testing.assert_allclose(y.asnumpy(), s, rtol=1e-6)
    want = s * (g - (g * s).sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(x.grad.asnumpy().astype(np.float64), want, rtol=2e-3, atol=2e-3)
    wide = nd.softmax(nd.array(X), dtype="float64")             # float32 data, float64 out
    assert wide.dtype == np.float64
    np.testing.assert_allclose(wide.asnumpy(), softmax(X.astype(np.float32).astype(np.float64)),
                               rtol=1e-12)


@pytest.mark.parametrize("name", ["LeakyReLU_prelu", "GroupNorm", "Pad"])
def test_float16_gradients_are_the_float32_gradients_rounded(name):
    # the same graph in float16 and in float32: every gradient within float16 rounding
    data = {"LeakyReLU_prelu": [X, half([0.25, -0.5, 1.5])],
            "GroupNorm": [X[:, :2].reshape(2, 2, 2, 2), half([1.5, -0.5]), half([0.25, 1.0])],
            "Pad": [X[None]]}[name]
    call = {"LeakyReLU_prelu": lambda a: nd.LeakyReLU(*a, act_type="prelu"),
            "GroupNorm": lambda a: nd.GroupNorm(*a, num_groups=2),
            "Pad": lambda a: nd.Pad(*a, mode="edge", pad_width=(0, 0, 0, 0, 1, 2, 0, 1))}[name]
    grads = {}
    for dt in (F16, np.float32):
        args = [nd.array(v, dtype=dt) for v in data]
        for a in args:
            a.attach_grad()
        with nbdl.autograd.record():
            y = call(args)
        g = np.cos(np.arange(y.size)).reshape(y.shape)
        y.backward(nd.array(g, dtype=dt))
        grads[dt] = [a.grad for a in args]
    for g16, g32 in zip(grads[F16], grads[np.float32]):
        assert g16.dtype == np.float16
        np.testing.assert_allclose(g16.asnumpy().astype(np.float64), g32.asnumpy(),
                                   rtol=4e-3, atol=4e-3)


def test_gradients_accumulate_in_float16_arrays():
    """grad_req='add' on a float16 argument: the mirror starts from the
    gradient array's value."""
    w = sym.var("w")
    y = sym.FullyConnected(sym.var("x"), w, no_bias=True, num_hidden=3)
    loc = {"x": M, "w": half(W.T)}
    init = {"w": half(np.full((3, 5), 0.5))}
    og = half(RNG.normal(size=(4, 3)))
    _, _, grads, _ = bind_and_run(y, loc, grad_names=["w"], grad_req="add", grad_init=init,
                                  out_grads=[og], backward=True)
    want = 0.5 + f64(og).T @ f64(M)
    assert grads["w"].dtype == np.float16
    np.testing.assert_allclose(grads["w"].astype(np.float64), want, rtol=2e-3, atol=2e-3)


@pytest.mark.cuda
def test_cuda_runs_float16_through_the_same_mirrors():
    check_consistency(sym.softmax(sym.var("x")), {"x": X}, devices=[cpu(), gpu()],
                      rtol=1e-3, atol=1e-3)
    check_consistency(sym.dot(sym.var("a"), sym.var("b")), {"a": M, "b": W},
                      devices=[cpu(), gpu()], rtol=1e-3, atol=1e-3)


def test_half_launch_converts_inputs_copies_back_mutated_ones_and_honours_req():
    """The launcher on its own, around a fake float32 kernel that doubles input
    0 in place (a mutated input) and writes (or adds) input 1 + 1 to output 0."""
    op = OpDef(name="_half_launch_probe", input_names=("a", "b"), mutates=(0,))

    def prepare32(call):
        assert all(np.dtype(d) == np.float32 for d in call.in_dtypes + call.out_dtypes)
        add = call.req[0] == REQ_ADD

        def fn(a, b, out):
            a *= 2
            if add:
                out += b + 1
            else:
                out[...] = b + 1
        return Launch(fn, ())

    def copy(dst, src):
        np.copyto(dst, src, casting="unsafe")

    def run(req, out):
        call = Call(op, {}, [(3,), (3,)], [F16, F16], [(3,)], [F16], req=[req])
        temps = half_mirror_temps(call)
        assert temps == [((3,), np.dtype(np.float32))] * 3
        a = half([1, 2, 3])
        half_launch(call, prepare32, copy, 0).fn(a, half([0.5, 1.5, 2.5]), out,
                                                 *[np.empty(s, d) for s, d in temps])
        np.testing.assert_array_equal(a, [2, 4, 6])      # the mutated input, copied back
        return out
    np.testing.assert_array_equal(run(REQ_WRITE, np.zeros(3, F16)), [1.5, 2.5, 3.5])
    assert (run(REQ_NULL, np.full(3, 7, F16)) == 7).all()             # not written back
    np.testing.assert_array_equal(run(REQ_ADD, np.full(3, 7, F16)), [8.5, 9.5, 10.5])



def test_half_launch_keeps_the_float32_launchs_scalars_replaceable():
    # OpDef.scalar_attrs: an eager call replaces the launch's trailing scalars
    op = OpDef(name="_half_launch_scalar_probe", input_names=("a",))

    def prepare32(call):
        def fn(a, out, scale):
            out[...] = a * scale
        return Launch(fn, (np.float32(2.0),))

    call = Call(op, {}, [(3,)], [F16], [(3,)], [F16], req=[REQ_WRITE])
    launch = half_launch(call, prepare32, lambda d, s: np.copyto(d, s, casting="unsafe"), 0)
    assert launch.scalars == (np.float32(2.0),)
    out = np.zeros(3, F16)
    temps = [np.empty(s, d) for s, d in half_mirror_temps(call)]
    launch.fn(half([1, 2, 3]), out, *temps, np.float32(0.5))
    np.testing.assert_array_equal(out, [0.5, 1, 1.5])

# -- float16 calls equal the float32 calls rounded once ------------------------------------
# Inputs hold float16 values, so the float32 call sees the same numbers: a
# float16 call through the mirrors must give its result rounded once, exactly.

X4 = half(RNG.uniform(-2, 2, (2, 4, 4, 4)))
ROIS = half([[0, 0, 0, 2, 3], [1, 1, 0, 3, 2]])
LENS = half([1, 2, 2])        # one length per batch entry of X (axis 1)


def _dropout(x, d):
    from nbdl.kernels.shared.random_state import seed
    seed(11)
    return nd.Dropout(x, p=0.5, mode="always")


# (name, data, call(data NDArray, dtype)): the other inputs are made in the call
SAME = [
    ("Dropout", X4, _dropout),
    ("SoftmaxActivation", X4, lambda x, d: nd.SoftmaxActivation(x, mode="channel")),
    ("SoftmaxOutput", X[0], lambda x, d: nd.SoftmaxOutput(x, nd.array(half([0, 2, 1]), dtype=d))),
    ("L2Normalization", X4, lambda x, d: nd.L2Normalization(x, mode="channel")),
    ("LRN", X4, lambda x, d: nd.LRN(x, nsize=3)),
    ("Crop", X4, lambda x, d: nd.Crop(x, num_args=1, offset=(1, 0), h_w=(2, 3))),
    ("depth_to_space", X4, lambda x, d: nd.depth_to_space(x, block_size=2)),
    ("space_to_depth", X4, lambda x, d: nd.space_to_depth(x, block_size=2)),
    ("SequenceMask", X, lambda x, d: nd.SequenceMask(x, nd.array(LENS, dtype=d),
                                                     use_sequence_length=True, value=-1.0)),
    ("SequenceLast", X, lambda x, d: nd.SequenceLast(x, nd.array(LENS, dtype=d),
                                                     use_sequence_length=True)),
    ("SequenceReverse", X, lambda x, d: nd.SequenceReverse(x)),
    ("AdaptiveAvgPooling2D", X4, lambda x, d: nd.contrib.AdaptiveAvgPooling2D(x,
                                                                             output_size=(3, 2))),
    ("BilinearResize2D", X4, lambda x, d: nd.contrib.BilinearResize2D(x, height=5, width=3)),
    ("ROIPooling", X4, lambda x, d: nd.ROIPooling(x, nd.array(ROIS, dtype=d), pooled_size=(2, 2),
                                                  spatial_scale=1.0)),
    ("ROIAlign", X4, lambda x, d: nd.contrib.ROIAlign(x, nd.array(ROIS, dtype=d),
                                                      pooled_size=(2, 2), spatial_scale=1.0)),
    ("UpSampling", X4, lambda x, d: nd.UpSampling(x, scale=2, sample_type="nearest",
                                                  num_args=1)),
    ("InstanceNorm", X4, lambda x, d: nd.InstanceNorm(x, nd.array(half([1.5, -0.5, 1, 2]), dtype=d),
                                                      nd.array(half([0, 1, -1, 0.5]), dtype=d))),
    ("where", X, lambda x, d: nd.where(nd.array((X > 0).astype(F16), dtype=d), x, -2 * x)),
    ("LinearRegressionOutput", X, lambda x, d: nd.LinearRegressionOutput(x, nd.array(X[::-1],
                                                                                     dtype=d))),
    ("LogisticRegressionOutput", X, lambda x, d: nd.LogisticRegressionOutput(
        x, nd.array((X > 0).astype(F16), dtype=d))),
    ("MAERegressionOutput", X, lambda x, d: nd.MAERegressionOutput(x, nd.array(X[::-1],
                                                                               dtype=d))),
    ("MakeLoss", X, lambda x, d: nd.MakeLoss(x, grad_scale=0.5)),
    ("moments", X, lambda x, d: nd.moments(x, axes=(1,))[1]),
    ("swish", X, lambda x, d: nd.swish(x, beta=1.5)),
    ("log_sigmoid", X, lambda x, d: nd.log_sigmoid(x)),
    ("mish", X, lambda x, d: nd.mish(x)),
    ("softmax_cross_entropy", X[0], lambda x, d: nd.softmax_cross_entropy(
        x, nd.array(half([0, 2, 1]), dtype=d))),
    ("im2col", X4, lambda x, d: nd.im2col(x, kernel=(2, 2), stride=(1, 2), pad=(1, 0))),
    ("col2im", X.reshape(1, 4, 6), lambda x, d: nd.col2im(
        x, output_size=(3, 4), kernel=(2, 2))),
]


@pytest.mark.parametrize("name,data,call", SAME, ids=[c[0] for c in SAME])
def test_float16_call_is_the_float32_call_rounded_once(name, data, call):
    o16, o32 = call(nd.array(data, dtype=F16), F16), call(nd.array(data, dtype=np.float32),
                                                          np.float32)
    assert o16.dtype == np.float16, name
    np.testing.assert_array_equal(o16.asnumpy(), o32.asnumpy().astype(F16))


def _data_grad(data, call, d):
    x = nd.array(data, dtype=d)
    x.attach_grad()
    with nbdl.autograd.record():
        y = call(x, d)
    y.backward(nd.array(np.cos(np.arange(y.size)).reshape(y.shape), dtype=d))
    return x.grad


@pytest.mark.parametrize("name", ["Dropout", "SoftmaxActivation", "SoftmaxOutput",
                                  "L2Normalization", "LRN", "Crop", "depth_to_space",
                                  "SequenceLast", "AdaptiveAvgPooling2D", "BilinearResize2D",
                                  "ROIPooling", "ROIAlign", "UpSampling", "InstanceNorm",
                                  "where", "LinearRegressionOutput", "LogisticRegressionOutput",
                                  "MakeLoss", "moments", "swish", "log_sigmoid", "mish",
                                  "softmax_cross_entropy", "im2col", "col2im"])
def test_float16_data_gradient_is_the_float32_one_within_rounding(name):
    _, data, call = next(c for c in SAME if c[0] == name)
    g16, g32 = _data_grad(data, call, F16), _data_grad(data, call, np.float32)
    assert g16.dtype == np.float16
    np.testing.assert_allclose(g16.asnumpy().astype(np.float64), g32.asnumpy(), rtol=4e-3,
                               atol=4e-3)


def test_float16_shape_and_size_arrays():
    x = nd.array(X, dtype=F16)
    np.testing.assert_array_equal(nd.shape_array(x).asnumpy(), [2, 3, 4])
    np.testing.assert_array_equal(nd.size_array(x).asnumpy(), [24])


def test_float16_shuffle_permutes_rows():
    out = nd.shuffle(nd.array(M, dtype=F16))
    assert out.dtype == np.float16
    got = sorted(map(tuple, out.asnumpy().tolist()))
    assert got == sorted(map(tuple, M.tolist()))


@pytest.mark.parametrize("name,states,attrs", [
    ("sgd_update", 0, {"lr": 0.1, "wd": 0.01}),
    ("sgd_mom_update", 1, {"lr": 0.1, "momentum": 0.9}),
    ("adam_update", 2, {"lr": 0.01}),
    ("rmsprop_update", 1, {"lr": 0.01}),
    ("signum_update", 1, {"lr": 0.01, "momentum": 0.9}),
])
def test_float16_updates_are_the_float32_updates_rounded(name, states, attrs):
    # weight, gradient and states in float16, updated in place: each written
    # array is the float32 update of the same values, rounded once
    vals = [half(RNG.uniform(-1, 1, 6)) for _ in range(2 + states)]
    vals[2:] = [np.abs(v) for v in vals[2:]]      # variances are non-negative
    res = {}
    for d in (F16, np.float32):
        arrs = [nd.array(v, dtype=d) for v in vals]
        getattr(nd, name)(*arrs, out=arrs[0], **attrs)
        res[d] = [a.asnumpy() for a in [arrs[0]] + arrs[2:]]
    for a16, a32 in zip(res[F16], res[np.float32]):
        assert a16.dtype == np.float16
        np.testing.assert_array_equal(a16, a32.astype(F16))
