import itertools
import math

import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.ops.registry import REQ_ADD, REQ_NULL, REQ_WRITE, Call, get_op
from nbdl.testing import (assert_almost_equal, check_consistency, check_numeric_gradient,
                          check_symbolic_backward, check_symbolic_forward)


# -- numpy reference with direct loops (channels-first) --------------------------

def _geometry(x_shape, kernel, stride, pad, conv, global_pool):
    ns = len(x_shape) - 2
    out = []
    for i in range(ns):
        X = x_shape[2 + i]
        if global_pool:
            out.append((X, X, 1, 0, 1))
            continue
        k = kernel[i]
        s = stride[i] if stride else 1
        p = pad[i] if pad else 0
        if conv == "valid":
            o = (X + 2 * p - k) // s + 1
        elif conv == "full":
            o = int(math.ceil((X + 2 * p - k) / s)) + 1
        else:
            o = int(math.ceil(X / s))
            p = max((o - 1) * s + k - X, 0) // 2
        out.append((X, k, s, p, o))
    return out


def _windows(x_shape, geo):
    """Yield (output index, tuple of slices into data[n, c], padded window size)."""
    N, C = x_shape[:2]
    for n, c in itertools.product(range(N), range(C)):
        for o in itertools.product(*[range(g[4]) for g in geo]):
            sl, full = [], 1
            for oi, (X, k, s, p, _) in zip(o, geo):
                a = oi * s - p
                b = min(a + k, X + p)
                full *= b - a
                sl.append(slice(max(a, 0), min(b, X)))
            yield (n, c) + o, (n, c) + tuple(sl), full


# Max pooling's rule, MXNet 1.9.1's (checked on it): the maximum starts at the
# dtype's lowest finite value and takes each element strictly greater (NaN
# never; a window of NaN or -inf gives the floor); the gradient goes to the
# first element that raised it, else to the window's first.


def mx_max(w, floor):
    """(value, flat index) of max pooling over the window ``w`` (row-major)
    starting at ``floor``."""
    best, at = floor, 0
    for i, v in enumerate(np.ravel(w)):
        if v > best:
            best, at = v, i
    return best, at


def np_pool(x, kernel=(), stride=(), pad=(), pool_type="max", conv="valid", p=2, cip=True,
            global_pool=False):
    floor = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.finfo(np.float64).min
    x = x.astype(np.float64)
    geo = _geometry(x.shape, kernel, stride, pad, conv, global_pool)
    out = np.zeros(x.shape[:2] + tuple(g[4] for g in geo))
    for oidx, sl, full in _windows(x.shape, geo):
        w = x[sl]
        if w.size == 0:
            continue
        if pool_type == "max":
            out[oidx] = mx_max(w, floor)[0]
        elif pool_type == "avg":
            out[oidx] = w.sum() / (full if cip else w.size)
        elif pool_type == "sum":
            out[oidx] = w.sum()
        else:
            out[oidx] = (w ** p).sum() ** (1.0 / p)
    return out


def np_pool_grad(og, x, kernel=(), stride=(), pad=(), pool_type="max", conv="valid", p=2,
                 cip=True, global_pool=False):
    y = np_pool(x, kernel, stride, pad, pool_type, conv, p, cip, global_pool)
    floor = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.finfo(np.float64).min
    x = x.astype(np.float64)
    geo = _geometry(x.shape, kernel, stride, pad, conv, global_pool)
    dx = np.zeros(x.shape)
    for oidx, sl, full in _windows(x.shape, geo):
        w = x[sl]
        if w.size == 0:
            continue
        g = og[oidx]
        view = dx[sl]
        if pool_type == "max":
            pos = np.unravel_index(mx_max(w, floor)[1], w.shape)   # first maximum
            view[pos] += g
        elif pool_type == "avg":
            view += g / (full if cip else w.size)
        elif pool_type == "sum":
            view += g
        else:
            view += g * (w / y[oidx]) ** (p - 1) if y[oidx] != 0 else 0
    return dx


def pool(**kw):
    return nbdl.sym.Pooling(nbdl.sym.var("x"), **kw)


def _ref_kw(kw):
    return dict(kernel=kw.get("kernel", ()), stride=kw.get("stride", ()), pad=kw.get("pad", ()),
                pool_type=kw.get("pool_type", "max"), conv=kw.get("pooling_convention", "valid"),
                p=kw.get("p_value", 2), cip=kw.get("count_include_pad", True),
                global_pool=kw.get("global_pool", False))


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-5)


CASES = [
    ((2, 3, 7), dict(kernel=(3,), stride=(2,))),
    ((1, 2, 5), dict(kernel=(2,), pad=(1,), pool_type="avg")),
    ((2, 1, 5, 6), dict(kernel=(2, 3), stride=(2, 1))),
    ((1, 2, 5, 5), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg")),
    ((1, 2, 5, 5), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                        count_include_pad=False)),
    ((1, 1, 4, 5), dict(kernel=(2, 2), stride=(2, 2), pooling_convention="full",
                        pool_type="avg")),
    ((1, 2, 5, 4), dict(kernel=(3, 2), stride=(2, 2), pooling_convention="same")),
    ((1, 2, 4, 3), dict(kernel=(2, 2), pool_type="sum")),
    ((2, 2, 4, 3), dict(kernel=(2, 2), pool_type="lp")),
    ((1, 2, 4, 3), dict(kernel=(2, 1), pool_type="lp", p_value=1)),
    ((1, 1, 3, 4, 3), dict(kernel=(2, 2, 2), stride=(1, 2, 1))),
    ((1, 2, 3, 3, 4), dict(kernel=(2, 3, 2), pad=(1, 0, 1), pool_type="avg")),
    ((1, 1, 1, 1), dict(kernel=(1, 1))),
    ((2, 3, 4, 5), dict(global_pool=True, pool_type="max")),
    ((2, 3, 4, 5), dict(global_pool=True, pool_type="avg")),
    ((1, 2, 3, 2, 2), dict(global_pool=True, pool_type="sum")),
    ((2, 1, 5), dict(global_pool=True, pool_type="lp", p_value=3)),
    # the 2-D path's unrolled windows: 2x2 stride 2 max (disjoint, written directly; 'full'
    # adds clipped border windows), 3x3 max inside and across the padding
    ((2, 3, 6, 8), dict(kernel=(2, 2), stride=(2, 2))),
    ((1, 2, 5, 7), dict(kernel=(2, 2), stride=(2, 2), pooling_convention="full")),
    ((1, 2, 6, 5), dict(kernel=(2, 2), stride=(2, 2), pad=(1, 1))),
    ((2, 2, 7, 6), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))),
    ((1, 1, 5, 6), dict(kernel=(3, 3))),
]


def _data(rng, shape, kw, dtype):
    if kw.get("pool_type") == "lp" and kw.get("p_value", 2) % 2:
        return rng.uniform(0.1, 2, shape).astype(dtype)
    # a permutation: no ties, so max's argmax is unambiguous
    return (rng.permutation(int(np.prod(shape))).reshape(shape) / 7.0 - 1).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,kw", CASES)
def test_forward_grid(dtype, shape, kw, rng):
    x = _data(rng, shape, kw, dtype)
    outs = check_symbolic_forward(pool(**kw), {"x": x}, [np_pool(x, **_ref_kw(kw))],
                                  **tol(dtype))
    assert outs[0].dtype == dtype


@pytest.mark.parametrize("shape,kw", CASES)
def test_backward_formula(shape, kw, rng):
    x = _data(rng, shape, kw, np.float64)
    y = np_pool(x, **_ref_kw(kw))
    og = rng.normal(size=y.shape)
    check_symbolic_backward(pool(**kw), {"x": x}, [og], {"x": np_pool_grad(og, x, **_ref_kw(kw))})


@pytest.mark.parametrize("shape,kw", [
    ((1, 2, 5, 4), dict(kernel=(2, 2), stride=(1, 2), pad=(1, 0), pool_type="avg")),
    ((1, 2, 5, 4), dict(kernel=(3, 2), stride=(2, 1), pool_type="avg", count_include_pad=False,
                        pad=(1, 1))),
    ((2, 1, 5), dict(kernel=(3,), stride=(2,), pool_type="sum", pooling_convention="full")),
    ((1, 1, 4, 4), dict(kernel=(2, 2), stride=(1, 1), pool_type="max")),
    ((1, 2, 3, 4), dict(kernel=(2, 2), pool_type="lp", p_value=2)),
    ((1, 2, 3, 3), dict(kernel=(2, 2), pool_type="lp", p_value=3)),
    ((1, 2, 2, 3, 2), dict(kernel=(2, 2, 1), pool_type="avg")),
    ((2, 2, 3, 2), dict(global_pool=True, pool_type="lp")),
    ((2, 2, 3, 2), dict(global_pool=True, pool_type="max")),
])
def test_numeric_gradient(shape, kw, rng):
    check_numeric_gradient(pool(**kw), {"x": _data(rng, shape, kw, np.float64)})


def test_max_routes_to_first_argmax():
    x = np.array([[[[1.0, 5.0, 5.0], [2.0, 0.0, 3.0]]]])
    check_symbolic_backward(pool(kernel=(2, 2)), {"x": x}, [np.array([[[[10.0, 20.0]]]])],
                            {"x": np.array([[[[0.0, 30.0, 0.0], [0.0, 0.0, 0.0]]]])})


@pytest.mark.parametrize("layout,shape,kw", [
    ("NWC", (2, 5, 3), dict(kernel=(2,), stride=(2,), pool_type="avg", pad=(1,))),
    ("NHWC", (1, 4, 5, 2), dict(kernel=(2, 3), stride=(2, 1))),
    ("NHWC", (2, 3, 4, 3), dict(global_pool=True, pool_type="avg")),
    ("NDHWC", (1, 3, 2, 3, 2), dict(kernel=(2, 1, 2), pool_type="lp")),
])
def test_channels_last(layout, shape, kw, rng):
    x = _data(rng, shape, kw, np.float64)
    perm = (0, x.ndim - 1) + tuple(range(1, x.ndim - 1))
    back = (0,) + tuple(range(2, x.ndim)) + (1,)
    xf = x.transpose(perm)
    y = np_pool(xf, **_ref_kw(kw)).transpose(back)
    check_symbolic_forward(pool(layout=layout, **kw), {"x": x}, [y])
    og = rng.normal(size=y.shape)
    dx = np_pool_grad(og.transpose(perm), xf, **_ref_kw(kw)).transpose(back)
    check_symbolic_backward(pool(layout=layout, **kw), {"x": x}, [og], {"x": dx})


def test_empty_batch(rng):
    x = np.zeros((0, 2, 4, 4), np.float32)
    outs = check_symbolic_forward(pool(kernel=(2, 2)), {"x": x}, [np.zeros((0, 2, 3, 3))])
    assert outs[0].shape == (0, 2, 3, 3)


def test_window_in_padding_only():
    # 'full' with a large pad: the last window holds only padding -> 0
    x = np.array([[[3.0]]])
    check_symbolic_forward(pool(kernel=(2,), stride=(2,), pad=(1,), pooling_convention="full"),
                           {"x": x}, [np.array([[[3.0, 0.0]]])])


def test_shape_inference_and_mxnet_strings():
    s = nbdl.sym.Pooling(nbdl.sym.var("data"), kernel="(3, 3)", stride="(2, 2)", pad="(1, 1)",
                         pool_type="avg", pooling_convention="full", global_pool="False",
                         cudnn_off="False", count_include_pad="True")
    _, outs, _ = s.infer_shape(data=(2, 3, 8, 9))
    assert outs == [(2, 3, 5, 5)]
    _, outs, _ = pool(kernel=(2, 2), layout="NHWC").infer_shape(x=(2, 6, 4, 3))
    assert outs == [(2, 5, 3, 3)]
    _, outs, _ = pool(global_pool=True).infer_shape(x=(2, 6, 4, 3))
    assert outs == [(2, 6, 1, 1)]
    _, outs, _ = pool(kernel=(3,), stride=(2,), pooling_convention="same").infer_shape(x=(1, 1, 7))
    assert outs == [(1, 1, 4)]
    _, touts, _ = pool(kernel=(2,)).infer_type(x=np.float64)
    assert touts == [np.float64]


def _call(opname, shapes, req, dtype, attrs, device):
    op = get_op(opname)
    parsed, _ = op.parse_attrs(attrs)
    ins, outs = op.infer_shape(parsed, list(shapes), [None])
    return op, Call(op, parsed, ins, [np.dtype(dtype)] * len(ins), outs, [np.dtype(dtype)],
                    req=list(req), device=device)


def _run(launch, *arrays):
    views = launch.views or [None] * len(arrays)
    launch.fn(*[a if v is None else a.reshape(v) for a, v in zip(arrays, views)], *launch.scalars)


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.cuda)])
@pytest.mark.parametrize("kw", [dict(kernel=(2, 2), pool_type="avg", pad=(1, 0)),
                                dict(global_pool=True, pool_type="max"),
                                dict(kernel=(2, 2), stride=(2, 2), pooling_convention="full")])
def test_req_null_and_add(device, kw, rng):
    dev = cpu() if device == "cpu" else gpu()
    x = _data(rng, (1, 2, 5, 4), kw, np.float64)
    y = np_pool(x, **_ref_kw(kw))
    for req, base, want in ((REQ_ADD, 1.0, y + 1), (REQ_NULL, -9.0, np.full(y.shape, -9.0))):
        op, call = _call("Pooling", [x.shape], [req], np.float64, kw, dev)
        arrays = [dev.from_numpy(x), dev.from_numpy(np.full(y.shape, base))]
        _run(op.prepare(call), *arrays)
        assert_almost_equal(dev.to_numpy(arrays[1]), want)
    og = rng.normal(size=y.shape)
    dx = np_pool_grad(og, x, **_ref_kw(kw))
    for req, base, want in ((REQ_ADD, 1.0, dx + 1), (REQ_NULL, -9.0, np.full(x.shape, -9.0)),
                            (REQ_WRITE, -9.0, dx)):
        op, call = _call("_backward_Pooling", [y.shape, x.shape, y.shape], [req], np.float64, kw,
                         dev)
        arrays = [dev.from_numpy(a) for a in (og, x, y, np.full(x.shape, base))]
        _run(op.prepare(call), *arrays)
        assert_almost_equal(dev.to_numpy(arrays[3]), want)


@pytest.mark.parametrize("pool_type", ["max", "avg", "sum", "lp"])
@pytest.mark.parametrize("shape,layout", [((3, 4, 1, 1), "NCHW"), ((2, 3, 2, 3), "NCHW"),
                                          ((2, 1, 1, 4), "NHWC"), ((2, 2, 3, 3), "NHWC")])
@pytest.mark.parametrize("parallel", [False, True])
def test_global_pooling_rows_and_1x1_maps(monkeypatch, pool_type, shape, layout, parallel, rng):
    """Global pooling's CPU paths: channels-first rows (a 1x1 map copied),
    channels-last per (sample, channel), serial and parallel, each req."""
    if parallel:
        monkeypatch.setenv("NBDL_PARALLEL_MIN", "1")
    kw = dict(global_pool=True, pool_type=pool_type, layout=layout)
    x = _data(rng, shape, kw, np.float64)
    perm, back = (0, 3, 1, 2), (0, 2, 3, 1)
    xf = x.transpose(perm) if layout == "NHWC" else x
    y = np_pool(xf, **_ref_kw(kw))
    og = rng.normal(size=y.shape)
    dx = np_pool_grad(og, xf, **_ref_kw(kw))
    if layout == "NHWC":
        y, og, dx = y.transpose(back), og.transpose(back), dx.transpose(back)
    dev = cpu()
    for req, base, want in ((REQ_WRITE, -9.0, y), (REQ_ADD, 1.0, y + 1),
                            (REQ_NULL, -9.0, np.full(y.shape, -9.0))):
        op, call = _call("Pooling", [x.shape], [req], np.float64, kw, dev)
        arrays = [x, np.full(y.shape, base)]
        _run(op.prepare(call), *arrays)
        assert_almost_equal(arrays[1], want)
    for req, base, want in ((REQ_WRITE, -9.0, dx), (REQ_ADD, 1.0, dx + 1),
                            (REQ_NULL, -9.0, np.full(x.shape, -9.0))):
        op, call = _call("_backward_Pooling", [y.shape, x.shape, y.shape], [req], np.float64, kw,
                         dev)
        arrays = [og, x, y, np.full(x.shape, base)]
        _run(op.prepare(call), *arrays)
        assert_almost_equal(arrays[3], want)


@pytest.mark.parametrize("pool_type", ["max", "avg", "sum"])
@pytest.mark.parametrize("conv,stride", [("valid", 1), ("full", 2)])
def test_window_of_the_whole_map_runs_as_global_pooling(pool_type, conv, stride, rng):
    """A 2-D pooling whose one window is the whole unpadded map (SqueezeNet's
    AvgPool2D(13)) runs global pooling's row kernels: the numpy reference's
    values and gradients, NaN rule included, each req."""
    kw = dict(kernel=(3, 4), stride=(stride, stride), pool_type=pool_type,
              pooling_convention=conv)
    x = _nan_data(rng, (2, 3, 3, 4), np.float32) if pool_type == "max" else \
        rng.normal(size=(2, 3, 3, 4)).astype(np.float32)
    y = np_pool(x, **_ref_kw(kw))
    assert y.shape == (2, 3, 1, 1)
    og = rng.normal(size=y.shape).astype(np.float32)
    dx = np_pool_grad(og, x, **_ref_kw(kw))
    dev = cpu()
    for req, base, want in ((REQ_WRITE, -9.0, y), (REQ_ADD, 1.0, y + 1)):
        op, call = _call("Pooling", [x.shape], [req], np.float32, kw, dev)
        launch = op.prepare(call)
        assert launch.fn.py_func.__name__ == "global_rows_forward"
        arrays = [x, np.full(y.shape, base, np.float32)]
        _run(launch, *arrays)
        assert_almost_equal(arrays[1], want, rtol=1e-5, atol=1e-6)
    for req, base, want in ((REQ_WRITE, -9.0, dx), (REQ_ADD, 1.0, dx + 1)):
        op, call = _call("_backward_Pooling", [y.shape, x.shape, y.shape], [req], np.float32, kw,
                         dev)
        launch = op.prepare(call)
        assert launch.fn.py_func.__name__ == "global_rows_backward"
        arrays = [og, x, y, np.full(x.shape, base, np.float32)]
        _run(launch, *arrays)
        assert_almost_equal(arrays[3], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("k,stride,pad,conv", [
    (k, s, p, c) for k in (2, 3)
    for s, p, c in ((1, 0, "valid"), (1, 1, "valid"), (2, 1, "valid"), (2, 1, "full"),
                    (3, 2, "full"), (2, 0, "full"))
    if p < k])
def test_max_windows_clamped_into_the_data(k, stride, pad, conv, rng):
    """2x2/3x3 max pooling's forward clamps border windows into the data
    (repeating border elements): equal to the clipped windows' max, windows
    wholly in the padding give 0, each req; Pooling_v1's zero padding keeps
    its own path (a padding zero takes part)."""
    kw = dict(kernel=(k, k), stride=(stride, stride), pad=(pad, pad), pooling_convention=conv)
    x = rng.normal(size=(2, 3, 5, 4))
    y = np_pool(x, **_ref_kw(kw))
    dev = cpu()
    for req, base, want in ((REQ_WRITE, -9.0, y), (REQ_ADD, 1.0, y + 1)):
        op, call = _call("Pooling", [x.shape], [req], np.float64, kw, dev)
        arrays = [x, np.full(y.shape, base)]
        _run(op.prepare(call), *arrays)
        assert_almost_equal(arrays[1], want)
    xn = -np.abs(x) - 1
    count = np_pool(np.ones_like(x), **dict(_ref_kw(kw), pool_type="sum"))
    want = np.where(count < k * k, 0.0, np_pool(xn, **_ref_kw(kw)))
    v1 = nbdl.sym.Pooling_v1(nbdl.sym.var("x"), **kw)
    check_symbolic_forward(v1, {"x": xn}, [want])


@pytest.mark.parametrize("k,stride,pad,conv", [
    (k, s, p, c) for k in (2, 3)
    for s, p, c in ((1, 0, "valid"), (1, 1, "valid"), (2, 1, "valid"), (2, 1, "full"),
                    (3, 2, "full"), (2, 0, "full"), (2, 0, "valid"))
    if p < k])
def test_max_pooling_by_rows(monkeypatch, k, stride, pad, conv, rng):
    """``pooling_rows`` (column maxima, then windows along them), which wide
    maps take in parallel: the serial twin and the parallel kernel, with one
    and several scratch planes a thread, against the reference with NaN,
    -inf and each req; and through an executor once ``prepare`` picks it
    (the temp rule gives the scratch it runs on)."""
    from nbdl.kernels.cpu import pooling as cpu_pooling
    from nbdl.kernels.cpu.pooling_rows import (max_rows_forward, max_rows_forward_parallel,
                                               scratch_len)
    kw = dict(kernel=(k, k), stride=(stride, stride), pad=(pad, pad), pooling_convention=conv)
    x = rng.normal(size=(2, 5, 7, 9)).astype(np.float32)
    x[rng.uniform(size=x.shape) < 0.1] = np.nan
    x[rng.uniform(size=x.shape) < 0.05] = -np.inf
    y = np_pool(x, **_ref_kw(kw)).astype(np.float32)
    planes = x.reshape(10, 7, 9)
    oh, ow = y.shape[2:]
    for fn in (max_rows_forward, max_rows_forward_parallel):
        for nt in (1, 3):
            scratch = np.full((nt, 2, oh, scratch_len(9, ow, k, stride, pad)), 5.0, np.float32)
            for req, base, want in ((REQ_WRITE, -9.0, y), (REQ_ADD, 1.0, y + 1)):
                out = np.full(y.shape, base, np.float32)
                fn(planes, out.reshape(10, oh, ow), scratch, k, stride, stride, pad, pad,
                   np.float32(0), req)
                np.testing.assert_array_equal(out, want)
    monkeypatch.setattr(cpu_pooling, "ROWS_MIN_WIDTH", 1)
    monkeypatch.setenv("NBDL_PARALLEL_MIN", "1")
    monkeypatch.setenv("NBDL_NUM_THREADS", "2")
    op, call = _call("Pooling", [x.shape], [REQ_WRITE], np.float32, kw, cpu())
    if cpu_pooling._threads() > 1:
        assert op.prepare(call).fn is max_rows_forward_parallel
        assert [s for s, _ in op.temps(call)] == [(cpu_pooling._threads(), 2, oh,
                                                   scratch_len(9, ow, k, stride, pad))]
    ex = pool(**kw).simple_bind(cpu(), x=x.shape, grad_req="null")
    ex.arg_dict["x"][:] = x
    for _ in range(3):      # the serial twin first, then the parallel kernel
        np.testing.assert_array_equal(ex.forward()[0].asnumpy(), y)


def _first_greater_grad(og, x, stride, pad):
    """3x3 max pooling's gradient by the rule written out: each output's
    gradient goes to the first window element strictly greater than the
    floor and every earlier one (row-major; NaN never), else to the
    window's first element."""
    dx = np.zeros_like(x)
    (sh, sw), (ph, pw) = stride, pad
    H, W = x.shape[2:]
    for n, c, oh, ow in itertools.product(*[range(d) for d in og.shape]):
        best, at = np.finfo(x.dtype).min, None
        for h in range(max(oh * sh - ph, 0), min(oh * sh - ph + 3, H)):
            for w in range(max(ow * sw - pw, 0), min(ow * sw - pw + 3, W)):
                if at is None:
                    at = (h, w)
                if x[n, c, h, w] > best:
                    best, at = x[n, c, h, w], (h, w)
        if at is not None:
            dx[(n, c) + at] += og[n, c, oh, ow]
    return dx


@pytest.mark.parametrize("stride,pad", [((1, 1), (0, 0)), ((2, 2), (1, 1)), ((3, 2), (1, 0)),
                                        ((1, 2), (1, 1))])
def test_max3x3_backward_ties_nan_and_req(stride, pad, rng):
    """The unrolled 3x3 max gradient (windows inside the data) and the
    clipped border windows agree with the rule written out: ties (small
    integers), NaN, and each req."""
    x = np.round(rng.uniform(0, 3, size=(2, 3, 9, 8)))
    x[rng.uniform(size=x.shape) < 0.05] = np.nan
    kw = dict(kernel=(3, 3), stride=stride, pad=pad, pool_type="max")
    oh = (9 + 2 * pad[0] - 3) // stride[0] + 1
    ow = (8 + 2 * pad[1] - 3) // stride[1] + 1
    og = rng.normal(size=(2, 3, oh, ow))
    dx = _first_greater_grad(og, x, stride, pad)
    dev = cpu()
    for req, base, want in ((REQ_WRITE, -9.0, dx), (REQ_ADD, 1.0, dx + 1),
                            (REQ_NULL, -9.0, np.full(x.shape, -9.0))):
        op, call = _call("_backward_Pooling", [og.shape, x.shape, og.shape], [req], np.float64,
                         kw, dev)
        arrays = [og, x, og, np.full(x.shape, base)]
        _run(op.prepare(call), *arrays)
        assert_almost_equal(arrays[3], want)


def _nan_data(rng, shape, dtype):
    """Small integers (ties), with NaN, -inf and whole windows of NaN."""
    x = np.round(rng.uniform(-3, 3, size=shape)).astype(dtype)
    u = rng.uniform(size=shape)
    x[u < 0.15] = np.nan
    x[(u >= 0.15) & (u < 0.2)] = -np.inf
    x[..., :2, :2] = np.nan
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,kw", [
    ((2, 3, 6, 7), dict(kernel=(2, 2), stride=(2, 2))),                 # disjoint 2x2
    ((2, 3, 6, 7), dict(kernel=(2, 2), stride=(1, 1), pad=(1, 1))),     # clamped 2x2
    ((2, 3, 9, 8), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))),     # ResNet's stem
    ((1, 2, 7, 7), dict(kernel=(3, 3))),                                # 3x3 inside
    ((1, 2, 6, 5), dict(kernel=(3, 2), stride=(2, 1), pad=(1, 1))),     # generic 2-D
    ((1, 2, 9), dict(kernel=(3,), stride=(2,), pad=(1,))),              # 1-D
    ((1, 2, 3, 4, 4), dict(kernel=(2, 2, 2), pad=(1, 0, 1))),          # flat 3-D
    ((2, 3, 3, 4), dict(global_pool=True)),                             # global rows
    ((2, 3, 1, 1), dict(global_pool=True)),                             # global 1x1
])
def test_max_pooling_nan_and_inf_as_mxnet(shape, kw, dtype, rng):
    """NaN never wins a max and -inf counts as float32's lowest value
    (MXNet 1.9.1's rule, ``mx_max``), on every CPU path; the gradient goes
    where the rule's first maximum is (a window's first element when all
    of it is NaN)."""
    kw = dict(kw, pool_type="max")
    x = _data(rng, shape, kw, dtype) if len(shape) < 4 else _nan_data(rng, shape, dtype)
    if len(shape) < 4:
        x[..., ::3] = np.nan
        x[..., 1] = -np.inf
    y = np_pool(x, **_ref_kw(kw))
    outs = check_symbolic_forward(pool(**kw), {"x": x}, [y], **tol(dtype))
    assert not np.isnan(outs[0]).any()
    og = rng.normal(size=y.shape).astype(dtype)
    check_symbolic_backward(pool(**kw), {"x": x}, [og], {"x": np_pool_grad(og, x, **_ref_kw(kw))},
                            **tol(dtype))


@pytest.mark.parametrize("layout", ["NHWC", "NWC"])
def test_max_pooling_nan_channels_last(layout, rng):
    """The flat channels-last path and the global one follow the same rule."""
    shape = (2, 5, 4, 3) if layout == "NHWC" else (2, 7, 3)
    x = np.round(rng.uniform(-3, 3, size=shape))
    x[rng.uniform(size=shape) < 0.2] = np.nan
    x[0, :2] = np.nan
    perm = (0, x.ndim - 1) + tuple(range(1, x.ndim - 1))
    back = (0,) + tuple(range(2, x.ndim)) + (1,)
    for kw in (dict(kernel=(2,) * (x.ndim - 2), pool_type="max"),
               dict(global_pool=True, pool_type="max")):
        y = np_pool(x.transpose(perm), **_ref_kw(kw)).transpose(back)
        check_symbolic_forward(pool(layout=layout, **kw), {"x": x}, [y])
        og = rng.normal(size=y.shape)
        dx = np_pool_grad(og.transpose(perm), x.transpose(perm), **_ref_kw(kw)).transpose(back)
        check_symbolic_backward(pool(layout=layout, **kw), {"x": x}, [og], {"x": dx})


def test_max_pooling_values_mxnet_gives():
    """Outputs and gradients MXNet 1.9.1 gave for these inputs (float32; in
    float64 the floor is float64's lowest value)."""
    low = np.finfo(np.float32).min
    x = np.full((1, 1, 4, 4), np.nan, np.float32)
    x[0, 0, 0, 0] = 1.0
    check_symbolic_forward(pool(kernel=(2, 2), stride=(2, 2)), {"x": x},
                           [np.array([1.0, low, low, low], np.float32).reshape(1, 1, 2, 2)])
    want = np.zeros(16, np.float32)
    want[[0, 2, 8, 10]] = 1          # all-NaN windows: their first element
    check_symbolic_backward(pool(kernel=(2, 2), stride=(2, 2)), {"x": x},
                            [np.ones((1, 1, 2, 2), np.float32)], {"x": want.reshape(x.shape)})
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    x[0, 0, 1, 1] = x[0, 0, 0, 0] = np.nan
    check_symbolic_forward(pool(kernel=(2, 2), stride=(2, 2)), {"x": x},
                           [np.array([4, 7, 13, 15], np.float32).reshape(1, 1, 2, 2)])
    want = np.zeros(16, np.float32)
    want[[4, 7, 13, 15]] = 1
    check_symbolic_backward(pool(kernel=(2, 2), stride=(2, 2)), {"x": x},
                            [np.ones((1, 1, 2, 2), np.float32)], {"x": want.reshape(x.shape)})
    x = np.full((1, 1, 2, 2), -np.inf, np.float32)
    check_symbolic_forward(pool(kernel=(2, 2), stride=(2, 2)), {"x": x},
                           [np.full((1, 1, 1, 1), low, np.float32)])
    x = np.array([1, np.nan, 3, 2], np.float32).reshape(1, 1, 2, 2)
    check_symbolic_forward(pool(global_pool=True), {"x": x}, [np.full((1, 1, 1, 1), 3.0)])
    x = np.array([np.nan, 1, 3, 2, 5], np.float32).reshape(1, 1, 5)
    check_symbolic_forward(pool(kernel=(2,), stride=(1,)), {"x": x},
                           [np.array([1, 3, 3, 5], np.float32).reshape(1, 1, 4)])
    x = np.full((1, 1, 2, 2), np.nan)
    check_symbolic_forward(pool(kernel=(2, 2), stride=(2, 2)), {"x": x},
                           [np.full((1, 1, 1, 1), np.finfo(np.float64).min)])


@pytest.mark.parametrize("kw", [dict(kernel=(3, 2), stride=(2, 1), pad=(1, 1), pool_type="avg"),
                                dict(kernel=(2, 2), pool_type="max"),
                                dict(kernel=(2, 2), stride=(2, 2), pool_type="max"),
                                dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max"),
                                dict(global_pool=True, pool_type="avg")])
def test_parallel_variant(monkeypatch, kw, rng):
    monkeypatch.setenv("NBDL_PARALLEL_MIN", "1")
    x = _data(rng, (2, 3, 5, 4), kw, np.float32)
    y = np_pool(x, **_ref_kw(kw))
    check_symbolic_forward(pool(**kw), {"x": x}, [y], rtol=1e-5, atol=1e-5)
    og = rng.normal(size=y.shape).astype(np.float32)
    check_symbolic_backward(pool(**kw), {"x": x}, [og], {"x": np_pool_grad(og, x, **_ref_kw(kw))},
                            rtol=1e-4, atol=1e-5)


@pytest.mark.cuda
@pytest.mark.parametrize("shape,kw", [
    ((1, 2, 3, 3), dict(kernel=(2, 2), pool_type="max")),
    ((1, 1, 4, 3), dict(kernel=(2, 2), stride=(2, 1), pad=(1, 0), pool_type="avg",
                        count_include_pad=False)),
    ((1, 1, 5), dict(kernel=(2,), pool_type="lp")),
    ((1, 2, 2, 3, 2), dict(kernel=(2, 2, 2), pool_type="sum")),
    ((1, 3, 2, 2), dict(global_pool=True, pool_type="max", layout="NHWC")),
    ((2, 2, 3), dict(global_pool=True, pool_type="lp")),
])
def test_cuda_matches_cpu(shape, kw, rng):
    check_consistency(pool(**kw), {"x": _data(rng, shape, kw, np.float32)},
                      devices=[cpu(), gpu()], rtol=1e-5, atol=1e-5)


@pytest.mark.cuda
@pytest.mark.parametrize("kw", [dict(kernel=(2, 2), stride=(1, 1), pad=(1, 1)),
                                dict(global_pool=True), dict(global_pool=True, layout="NHWC")])
def test_cuda_max_pooling_nan_rule(kw, rng):
    """The CUDA kernels (the shared per-window functions) follow max
    pooling's NaN and -inf rule: outputs and gradients equal to the rule's."""
    x = _nan_data(rng, (2, 3, 4, 5), np.float32)
    if kw.get("layout") == "NHWC":
        x = x.transpose(0, 2, 3, 1).copy()
    kw = dict(kw, pool_type="max")
    xf = x.transpose(0, 3, 1, 2) if kw.get("layout") == "NHWC" else x
    y = np_pool(xf, **_ref_kw(kw))
    og = rng.normal(size=y.shape).astype(np.float32)
    dx = np_pool_grad(og, xf, **_ref_kw(kw))
    if kw.get("layout") == "NHWC":
        y, og, dx = y.transpose(0, 2, 3, 1), og.transpose(0, 2, 3, 1), dx.transpose(0, 2, 3, 1)
    ex = pool(**kw).bind(gpu(), {"x": nbdl.nd.array(x, ctx=gpu())},
                         args_grad={"x": nbdl.nd.zeros(x.shape, ctx=gpu())})
    ex.forward(is_train=True)
    assert_almost_equal(ex.outputs[0].asnumpy(), y)
    ex.backward(nbdl.nd.array(og, ctx=gpu()))
    assert_almost_equal(ex.grad_dict["x"].asnumpy(), dx)


def test_kernel_larger_than_data():
    with pytest.raises(nbdl.ShapeError, match=r"Pooling.*kernel=\(4, 4\).*\(1, 1, 3, 3\)"):
        pool(kernel=(4, 4)).infer_shape(x=(1, 1, 3, 3))


def test_data_rank_mismatch():
    with pytest.raises(nbdl.ShapeError, match=r"Pooling.*4 dimensions.*\(2, 3, 5\)"):
        pool(kernel=(2, 2)).infer_shape(x=(2, 3, 5))
    with pytest.raises(nbdl.ShapeError, match=r"Pooling.*layout=NCW.*\(1, 1, 3, 3\)"):
        pool(kernel=(2, 2), layout="NCW").infer_shape(x=(1, 1, 3, 3))


@pytest.mark.parametrize("attrs,match", [
    ({}, "kernel"), ({"kernel": (2, 2), "stride": (1,)}, "stride"),
    ({"kernel": (2,), "pad": (-1,)}, "pad"), ({"kernel": (0,)}, "kernel"),
    ({"kernel": (2,), "p_value": 0}, "p_value"), ({"kernel": (2,), "pool_type": "median"},
                                                  "pool_type"),
    ({"kernel": (2,), "pooling_convention": "round"}, "pooling_convention"),
    ({"kernel": (2,), "layout": "CHW"}, "layout"), ({"kernel": (2, 2, 2, 2)}, "kernel")])
def test_bad_attrs(attrs, match):
    with pytest.raises(nbdl.AttrError, match=match):
        pool(**attrs)


def test_integer_data_rejected():
    with pytest.raises(nbdl.DTypeError, match="Pooling"):
        nbdl.nd.Pooling(nbdl.nd.array(np.ones((1, 1, 2, 2), np.int32), dtype=np.int32),
                        kernel=(2, 2))


def test_eager_and_autograd(rng):
    x = nbdl.nd.array(_data(rng, (1, 2, 4, 4), {}, np.float32))
    x.attach_grad()
    with nbdl.autograd.record():
        y = nbdl.nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="avg")
    y.backward()
    assert_almost_equal(x.grad.asnumpy(), np.full((1, 2, 4, 4), 0.25))


# -- Pooling_v1 (MXNet's legacy operator) ----------------------------------------------------

def np_pool_v1(x, kernel, stride, pad, pool_type, conv):
    """Zero-pad the data so every window lies in it (pad before, as many zeros
    after as the last window needs), then max / sum / sum / K over each window."""
    n, c, h, w = x.shape
    out_hw = []
    for size, k, s, p in zip((h, w), kernel, stride, pad):
        span = size + 2 * p - k
        out_hw.append((span // s if conv == "valid" else -(-span // s)) + 1)
    need = [(o - 1) * s + k for o, s, k in zip(out_hw, stride, kernel)]
    xp = np.zeros((n, c, max(need[0], h + 2 * pad[0]), max(need[1], w + 2 * pad[1])))
    xp[:, :, pad[0]:pad[0] + h, pad[1]:pad[1] + w] = x
    out = np.zeros((n, c) + tuple(out_hw))
    for i in range(out_hw[0]):
        for j in range(out_hw[1]):
            win = xp[:, :, i * stride[0]:i * stride[0] + kernel[0],
                     j * stride[1]:j * stride[1] + kernel[1]]
            if pool_type == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                out[:, :, i, j] = win.sum(axis=(2, 3)) / (np.prod(kernel) if pool_type == "avg"
                                                          else 1)
    return out


@pytest.mark.cuda
@pytest.mark.parametrize("pool_type", ["max", "avg", "sum"])
@pytest.mark.parametrize("conv", ["valid", "full"])
def test_pooling_v1(pool_type, conv, rng):
    x = rng.normal(size=(2, 2, 5, 6)) - 0.5      # negative borders: the padding zeros win max
    kw = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type=pool_type,
              pooling_convention=conv)
    y = nbdl.sym.Pooling_v1(nbdl.sym.var("x"), **kw)
    check_symbolic_forward(y, {"x": x}, [np_pool_v1(x, (3, 3), (2, 2), (1, 1), pool_type, conv)])
    check_numeric_gradient(y, {"x": x})
    check_consistency(y, {"x": x.astype(np.float32)})


def test_pooling_v1_global_and_max_gradient_through_padding():
    x = -np.arange(1.0, 17.0).reshape(1, 1, 4, 4)
    y = nbdl.sym.Pooling_v1(nbdl.sym.var("x"), kernel=(3, 3), stride=(2, 2), pad=(1, 1))
    outs = check_symbolic_forward(y, {"x": x}, [np.array([[[[0.0, 0.0], [0.0, -6.0]]]])])
    # windows whose max is a padding zero pass no gradient; the inner one gives it to -6
    want = np.zeros_like(x)
    want[0, 0, 1, 1] = 1.0
    check_symbolic_backward(y, {"x": x}, [np.ones_like(outs[0])], {"x": want})
    g = nbdl.sym.Pooling_v1(nbdl.sym.var("x"), global_pool=True, pool_type="avg")
    check_symbolic_forward(g, {"x": x}, [np.full((1, 1, 1, 1), x.mean())])


def test_convolution_v1_is_convolution():
    from nbdl.ops.registry import get_op
    assert get_op("Convolution_v1") is get_op("Convolution")
