"""float16 for the ops MXNet 1.9.1 runs in float16 that were float32/64 only
here (through ``OpDef.half_mirrors``: each float16 call equals the float32
call on the same values, rounded once), and a clear ``DTypeError`` for the
ops MXNet itself refuses in float16."""
import numpy as np
import pytest

import nbdl
from nbdl.errors import DTypeError

nd = nbdl.nd
F16, F32 = np.float16, np.float32
RNG = np.random.RandomState(3)


def half(a):
    return np.asarray(a, dtype=F16)


def test_all_finite_float16():
    ok = half([1.0, -65504.0, 0.5])
    bad = half([1.0, np.inf, 2.0])
    nan = half([np.nan, 1.0])
    assert nd.all_finite(nd.array(ok, dtype=F16)).asnumpy().tolist() == [1.0]
    out = nd.all_finite(nd.array(bad, dtype=F16))
    assert out.dtype == np.float32 and out.asnumpy().tolist() == [0.0]
    mixed = [nd.array(ok, dtype=F16), nd.array(ok, dtype=F32), nd.array(nan, dtype=F16)]
    assert nd.multi_all_finite(*mixed[:2], num_arrays=2).asnumpy().tolist() == [1.0]
    assert nd.multi_all_finite(*mixed, num_arrays=3).asnumpy().tolist() == [0.0]
    # init_output=False: the output is only cleared, never set
    acc = nd.array([0.0])
    nd.all_finite(nd.array(ok, dtype=F16), init_output=False, out=acc)
    assert acc.asnumpy().tolist() == [0.0]


def test_histogram_float16_is_the_float32_histogram():
    x = half(RNG.uniform(-2, 2, 50))
    edges = half([-2, -0.5, 0.25, 1, 2])
    for bins in (7, edges):
        got = {}
        for d in (F16, F32):
            b = bins if isinstance(bins, int) else nd.array(bins, dtype=d)
            got[d] = nd.histogram(nd.array(x, dtype=d), bins=b, range=(-1.5, 1.5))
        (c16, b16), (c32, b32) = got[F16], got[F32]
        assert c16.dtype == np.int64 and b16.dtype == np.float16
        np.testing.assert_array_equal(c16.asnumpy(), c32.asnumpy())
        np.testing.assert_array_equal(b16.asnumpy(), b32.asnumpy().astype(F16))


def _run(call, values, dtype, out_grad=None):
    """``call`` on ``values`` as ``dtype`` arrays, and the gradients of the
    float inputs when ``out_grad`` is given."""
    arrs = [nd.array(v, dtype=dtype if v.dtype != np.int32 else np.int32) for v in values]
    floats = [a for a in arrs if a.dtype != np.int32]
    for a in floats:
        a.attach_grad()
    with nbdl.autograd.record():
        outs = call(*arrs)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    if out_grad is not None:
        nbdl.autograd.backward(outs[:1], [nd.array(out_grad, dtype=dtype)])
    return [o.asnumpy() for o in outs], [a.grad.asnumpy() for a in floats]


def _same_rounded(a16, a32):
    for h, f in zip(a16, a32):
        assert h.dtype == np.float16
        np.testing.assert_array_equal(h, f.astype(F16))


def test_svm_output_float16_and_its_gradient():
    data, label = half(RNG.uniform(-1, 1, (4, 3))), half([0, 2, 1, 2])
    res = {d: _run(lambda x, y: nd.SVMOutput(x, y, margin=0.5), [data, label], d,
                   out_grad=np.ones((4, 3))) for d in (F16, F32)}
    _same_rounded(res[F16][0], res[F32][0])
    _same_rounded(res[F16][1][:1], res[F32][1][:1])      # the data gradient


def test_hawkesll_float16():
    n, t, k = 3, 4, 2
    vals = [half(RNG.uniform(0.5, 2, (n, k))), half(RNG.uniform(0.1, 0.5, k)),
            half(RNG.uniform(0.5, 2, k)), half(RNG.uniform(0, 1, (n, k))),
            half(RNG.uniform(0.1, 1, (n, t))), RNG.randint(0, k, (n, t)).astype(np.int32),
            half([2, t, 1]), half([t + 1] * n)]
    res = {d: _run(nd.contrib.hawkesll, vals, d, out_grad=np.ones(n)) for d in (F16, F32)}
    _same_rounded(res[F16][0], res[F32][0])
    _same_rounded(res[F16][1][:3], res[F32][1][:3])      # lda, alpha, beta gradients


MULTI = [
    ("multi_sgd_update", 2, {"lrs": (0.1, 0.2), "wds": (0.0, 0.01)}),
    ("multi_sgd_mom_update", 3, {"lrs": (0.1, 0.2), "wds": (0.0, 0.01), "momentum": 0.9}),
    ("preloaded_multi_sgd_update", 2, {}),
    ("preloaded_multi_sgd_mom_update", 3, {"momentum": 0.9}),
]


@pytest.mark.parametrize("name,per,attrs", MULTI, ids=[m[0] for m in MULTI])
def test_multi_tensor_updates_float16(name, per, attrs):
    # two weights, each with its gradient (and momentum), updated in place:
    # every written array is the float32 update of the same values, rounded once
    vals = [half(RNG.uniform(-1, 1, s)) for s in ((5,), (2, 3)) for _ in range(per)]
    got = {}
    for d in (F16, F32):
        arrs = [nd.array(v, dtype=d) for v in vals]
        extra = [nd.array([0.1, 0.2]), nd.array([0.0, 0.01])] if name.startswith("pre") else []
        getattr(nd, name)(*arrs, *extra, num_weights=2, rescale_grad=0.5,
                          out=[arrs[0], arrs[per]], **attrs)
        got[d] = [a.asnumpy() for a in arrs if a is not None]
    written = [0, per] + ([2, per + 2] if per == 3 else [])
    _same_rounded([got[F16][i] for i in written], [got[F32][i] for i in written])


def _h(*shape):
    return nd.array(RNG.uniform(0.1, 0.9, shape), dtype=F16)


# MXNet 1.9.1 refuses float16 in these (CPU): float32/64 only here too, with
# an nbdl DTypeError naming the op, the argument and the dtype
REFUSED = [
    ("_linalg_gemm2", "A", lambda: nd.linalg.gemm2(_h(2, 2), _h(2, 2))),
    ("_linalg_potrf", "A", lambda: nd.linalg.potrf(_h(2, 2))),
    ("khatri_rao", "arg0", lambda: nd.khatri_rao(_h(2, 3), _h(4, 3))),
    ("_contrib_MultiBoxPrior", "data", lambda: nd.contrib.MultiBoxPrior(_h(1, 3, 4, 4),
                                                                        sizes=(0.5,))),
    ("_contrib_DeformableConvolution", "data", lambda: nd.contrib.DeformableConvolution(
        _h(1, 2, 5, 5), _h(1, 18, 3, 3), _h(4, 2, 3, 3), _h(4), kernel=(3, 3), num_filter=4)),
    ("CTCLoss", "data", lambda: nd.CTCLoss(_h(3, 1, 4), nd.array([[1, 2]], dtype=F16))),
    ("IdentityAttachKLSparseReg", "data", lambda: nd.IdentityAttachKLSparseReg(_h(2, 3), _h(3))),
    ("_image_resize", "data", lambda: nd.image.resize(_h(4, 4, 3), size=(2, 2))),
    ("_contrib_fft", "data", lambda: nd.contrib.fft(_h(2, 4))),
    ("_contrib_count_sketch", "data", lambda: nd.contrib.count_sketch(
        _h(2, 4), nd.array([[0, 1, 2, 0]], dtype=F16), nd.array([[1, -1, 1, 1]], dtype=F16),
        out_dim=3)),
    ("_contrib_MultiBoxDetection", "cls_prob", lambda: nd.contrib.MultiBoxDetection(
        _h(1, 2, 4), _h(1, 16), _h(1, 4, 4))),
    ("RNN", "data", lambda: nd.RNN(_h(2, 1, 3), _h(36), _h(1, 1, 4), state_size=4,
                                   num_layers=1, mode="rnn_tanh")),
    ("_contrib_SyncBatchNorm", "data", lambda: nd.contrib.SyncBatchNorm(
        _h(2, 3, 2), _h(3), _h(3), _h(3), _h(3), key="half")),
]


@pytest.mark.parametrize("op,arg,call", REFUSED, ids=[r[0] for r in REFUSED])
def test_float16_refused_as_in_mxnet(op, arg, call):
    with pytest.raises(DTypeError, match=rf"{op}.*'{arg}'.*float16"):
        call()
