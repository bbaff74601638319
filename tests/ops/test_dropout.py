import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.kernels.shared.random_state import seed
from nbdl.ops.registry import REQ_NULL, REQ_WRITE, Call, get_op
from nbdl.symbol.symbol import Symbol
from nbdl.testing import assert_almost_equal, check_symbolic_backward, run_symbol

# The CUDA simulator's xoroshiro code overflows numpy uint64 scalars on purpose.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning",
                                        "ignore::numba.core.errors.NumbaWarning")


def dropout(**attrs):
    return nbdl.sym.Dropout(nbdl.sym.var("x"), **attrs)


def with_mask(sym):
    """Both outputs of the Dropout node (the mask is hidden in ``sym``)."""
    return Symbol(sym._outputs[0].node.outputs())


def run(sym, x, is_train, device=None, out_grad=None):
    """(output, mask, gradient of x) with head gradient ``out_grad``
    (zero for the mask)."""
    both = with_mask(sym)
    if out_grad is None:
        outs, _, _ = run_symbol(both, {"x": x}, device=device, is_train=is_train)
        return outs[0], outs[1], None
    with nbdl.np_shape(True):       # a 0 dim is a size, not unknown
        mshape = both.infer_shape(x=x.shape)[1][1]
    outs, grads, _ = run_symbol(both, {"x": x}, out_grads=[out_grad, np.zeros(mshape, x.dtype)],
                                device=device, is_train=is_train)
    return outs[0], outs[1], grads["x"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 4), (1,), (0, 3), (2, 1, 3)])
def test_inference_is_identity(dtype, shape, rng):
    x = rng.uniform(-1, 1, shape).astype(dtype)
    og = rng.normal(size=shape).astype(dtype)
    out, mask, grad = run(dropout(p=0.7), x, is_train=False, out_grad=og)
    assert out.dtype == dtype and mask.dtype == dtype
    assert np.array_equal(out, x)
    assert np.all(mask == 1)
    assert_almost_equal(grad, og)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_training_statistics_and_scale(dtype, p, rng):
    seed(123)
    x = rng.uniform(0.5, 1.5, (100, 100)).astype(dtype)
    out, mask, _ = run(dropout(p=p), x, is_train=True)
    kept = mask != 0
    # 10^4 draws: the kept fraction's standard deviation is <= 0.005
    assert abs(kept.mean() - (1 - p)) < 0.025
    scale = dtype(1.0 / (1.0 - p))
    assert np.all(mask[kept] == scale)
    assert_almost_equal(out, x * mask)
    assert np.all(out[~kept] == 0)
    assert_almost_equal(out[kept], x[kept] * scale, rtol=1e-6)


def test_gradient_is_out_grad_times_mask(rng):
    x = rng.uniform(size=(5, 6))
    og = rng.normal(size=(5, 6))
    out, mask, grad = run(dropout(p=0.4), x, is_train=True, out_grad=og)
    assert_almost_equal(grad, og * mask)
    assert_almost_equal(out, x * mask)


def test_visible_symbol_backward(rng):
    """The ordinary (one visible output) symbol differentiates too."""
    x = rng.uniform(size=(3, 4))
    check_symbolic_backward(dropout(p=0.5), {"x": x}, [np.ones((3, 4))], {"x": np.ones((3, 4))},
                            is_train=False)


def test_p_zero_and_one(rng):
    x = rng.uniform(size=(4, 5))
    out, mask, _ = run(dropout(p=0.0), x, is_train=True)
    assert np.array_equal(out, x) and np.all(mask == 1)
    # MXNet's mask is keep / (1 - p): 0 * inf = NaN when p = 1
    out, mask, grad = run(dropout(p=1.0), x, is_train=True, out_grad=np.ones_like(x))
    assert np.all(np.isnan(out)) and np.all(np.isnan(mask)) and np.all(np.isnan(grad))


def test_mode_always_drops_at_inference(rng):
    seed(7)
    x = np.ones((50, 40))
    out, mask, _ = run(dropout(p=0.5, mode="always"), x, is_train=False)
    assert 0.4 < (mask == 0).mean() < 0.6
    assert set(np.unique(out)) <= {0.0, 2.0}


@pytest.mark.parametrize("shape,axes,mshape", [((4, 5, 3), (1,), (4, 1, 3)),
                                               ((2, 3, 4, 5), (2, 3), (2, 3, 1, 1)),
                                               ((2, 3, 4), (0, -1), (1, 3, 1)),
                                               ((2, 3, 2, 2, 2), (1, 3), (2, 1, 2, 1, 2))])
def test_axes_share_the_mask(shape, axes, mshape, rng):
    x = rng.uniform(0.5, 1.5, shape)
    og = rng.normal(size=shape)
    out, mask, grad = run(dropout(p=0.5, axes=axes), x, is_train=True, out_grad=og)
    assert mask.shape == mshape
    assert_almost_equal(out, x * mask)
    assert_almost_equal(grad, og * mask)
    assert with_mask(dropout(axes=axes)).infer_shape(x=shape)[1] == [shape, mshape]


def test_seed_reproduces_masks(rng):
    x = np.ones((30, 30), np.float32)
    seed(42)
    _, m1, _ = run(dropout(p=0.3), x, is_train=True)
    _, m2, _ = run(dropout(p=0.3), x, is_train=True)
    seed(42)
    _, m3, _ = run(dropout(p=0.3), x, is_train=True)
    assert np.array_equal(m1, m3)
    assert not np.array_equal(m1, m2)


def test_outputs_and_inference():
    y = dropout(p=0.2)
    assert len(y.list_outputs()) == 1
    assert get_op("Dropout").train_aware
    args, outs, _ = y.infer_shape(x=(3, 7))
    assert outs == [(3, 7)]
    _, touts, _ = y.infer_type(x=np.float64)
    assert touts == [np.float64]


def _launch(op, attrs, shape, req, is_train, x, out, mask, *temps):
    parsed, _ = op.parse_attrs(attrs)
    mshape = mask.shape
    call = Call(op, parsed, [shape], [x.dtype], [shape, mshape], [x.dtype, x.dtype],
                req=req, is_train=is_train)
    launch = op.prepare(call)
    arrays = [x, out, mask] + list(temps)
    launch.fn(*[a.reshape(v) for a, v in zip(arrays, launch.views)], *launch.scalars)
    return op.temps(call)


def test_mask_not_requested_uses_scratch(rng):
    """req null for the mask: the kernel draws into planner scratch and
    leaves the mask buffer alone."""
    op = get_op("Dropout")
    x = rng.uniform(0.5, 1.5, (20, 10)).astype(np.float32)
    out = np.empty_like(x)
    mask = np.full((20, 1), -7.0, np.float32)
    parsed, _ = op.parse_attrs({"p": 0.5, "axes": (1,)})
    call = Call(op, parsed, [x.shape], [x.dtype], [x.shape, (20, 1)], [x.dtype, x.dtype],
                req=[REQ_WRITE, REQ_NULL], is_train=True)
    temps = op.temps(call)
    assert temps == [((20, 1), np.dtype(np.float32))]
    scratch = np.zeros((20, 1), np.float32)
    launch = op.prepare(call)
    arrays = [x, out, mask, scratch]
    launch.fn(*[a.reshape(v) for a, v in zip(arrays, launch.views)], *launch.scalars)
    assert np.all(mask == -7.0)
    assert_almost_equal(out, x * scratch)
    assert set(np.unique(scratch)) <= {0.0, 2.0}


def test_inplace_forward(rng):
    op = get_op("Dropout")
    assert op.inplace(None) == [(0, 0)]
    x = rng.uniform(0.5, 1.5, (8, 8))
    buf = x.copy()
    mask = np.empty((8, 8))
    _launch(op, {"p": 0.5}, x.shape, [REQ_WRITE, REQ_WRITE], True, buf, buf, mask)
    assert_almost_equal(buf, x * mask)


@pytest.mark.parametrize("attrs,match", [({"p": 1.5}, "p=1.5"), ({"p": -0.1}, "p="),
                                         ({"mode": "test"}, "mode"), ({"axes": (1, 1)}, "axes"),
                                         ({"cudnn_off": "maybe"}, "cudnn_off")])
def test_bad_attrs(attrs, match):
    with pytest.raises(nbdl.AttrError, match=match):
        dropout(**attrs)


def test_cudnn_off_accepted(rng):
    x = rng.uniform(size=(2, 3))
    out, _, _ = run(dropout(cudnn_off=True), x, is_train=False)
    assert np.array_equal(out, x)


def test_axes_out_of_range():
    with pytest.raises(nbdl.ShapeError, match=r"Dropout.*axes.*\(2, 3\)"):
        dropout(axes=(2,)).infer_shape(x=(2, 3))


# -- CUDA (simulator): exact where deterministic, statistical otherwise -----------------

@pytest.mark.cuda
@pytest.mark.parametrize("p,is_train,axes", [(0.5, False, ()), (0.0, True, ()), (0.0, True, (1,)),
                                             (1.0, True, ())])
def test_cuda_matches_cpu_when_deterministic(p, is_train, axes, rng):
    x = rng.uniform(size=(3, 2, 2)).astype(np.float32)
    og = rng.normal(size=x.shape).astype(np.float32)
    res = [run(dropout(p=p, axes=axes), x, is_train, device=d, out_grad=og) for d in (cpu(), gpu())]
    for a, b in zip(res[0], res[1]):
        assert_almost_equal(b, a, equal_nan=True)   # p=1: NaN everywhere, as MXNet


@pytest.mark.cuda
def test_cuda_training_statistics(rng):
    seed(5)
    x = rng.uniform(0.5, 1.5, (8, 64)).astype(np.float32)  # the simulator is slow
    og = rng.normal(size=x.shape).astype(np.float32)
    out, mask, grad = run(dropout(p=0.25), x, is_train=True, device=gpu(), out_grad=og)
    kept = mask != 0
    assert abs(kept.mean() - 0.75) < 0.1  # 512 draws: sd ~0.019
    assert np.all(mask[kept] == np.float32(1 / 0.75))
    assert_almost_equal(out, x * mask)
    assert_almost_equal(grad, og * mask)


@pytest.mark.cuda
def test_cuda_axes(rng):
    seed(9)
    x = rng.uniform(0.5, 1.5, (4, 3, 2)).astype(np.float32)
    out, mask, grad = run(dropout(p=0.5, axes=(0, 2)), x, is_train=True, device=gpu(),
                          out_grad=np.ones_like(x))
    assert mask.shape == (1, 3, 1)
    assert_almost_equal(out, x * mask)
    assert_almost_equal(grad, np.broadcast_to(mask, x.shape))
