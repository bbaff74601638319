"""_contrib_DeformableConvolution (v1) and _contrib_ModulatedDeformableConvolution
(v2): a direct-loop numpy reference with MXNet's two bilinear sampling rules,
zero offsets against Convolution, numeric gradients of every input, req
handling, the batch-parallel variant, CUDA (simulator) against the CPU, shape
inference and errors."""
import itertools
import math

import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.ops.registry import REQ_NULL, REQ_WRITE, Call, get_op, pick_args
from nbdl.testing import (assert_almost_equal, check_consistency, check_numeric_gradient,
                          check_symbolic_backward, check_symbolic_forward, run_symbol)

V1, V2 = "_contrib_DeformableConvolution", "_contrib_ModulatedDeformableConvolution"


# -- reference -------------------------------------------------------------------------------

def sample(img, y, x, v1):
    """Bilinear sample of img (H, W) at (y, x) with MXNet's rules: v1 is zero
    outside [0, H) x [0, W) and clamps to the last row/column; v2 is zero
    outside (-1, H) x (-1, W) and interpolates the zero-padded image."""
    h, w = img.shape
    if v1:
        if not (0 <= y < h and 0 <= x < w):
            return 0.0
        y, x = min(y, h - 1.0), min(x, w - 1.0)
    elif not (-1 < y < h and -1 < x < w):
        return 0.0
    y0, x0 = math.floor(y), math.floor(x)
    ly, lx = y - y0, x - x0
    val = 0.0
    for yy, wy in ((y0, 1 - ly), (y0 + 1, ly)):
        for xx, wx in ((x0, 1 - lx), (x0 + 1, lx)):
            if 0 <= yy < h and 0 <= xx < w:
                val += wy * wx * float(img[yy, xx])
    return val


def ref_deform(x, off, mask, w, b, kernel, stride=(1, 1), pad=(0, 0), dilate=(1, 1),
               groups=1, dg=1, v1=True):
    """out[n, f, oh, ow] = b[f] + sum over the channels c of f's group and the
    taps (i, j) of w[f, c, i, j] * mask * sample(x[n, c], oh*sh - ph + i*dh +
    offset_y, ow*sw - pw + j*dw + offset_x); offsets and mask of c's
    deformable group, offset channels (dg, i, j, [y, x])."""
    n_, c_, h_, w_ = x.shape
    f_ = w.shape[0]
    kh, kw = kernel
    cg, fg, cpd = c_ // groups, f_ // groups, c_ // dg
    oh_ = (h_ + 2 * pad[0] - dilate[0] * (kh - 1) - 1) // stride[0] + 1
    ow_ = (w_ + 2 * pad[1] - dilate[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n_, f_, oh_, ow_))
    for n, f, oh, ow in itertools.product(range(n_), range(f_), range(oh_), range(ow_)):
        g = f // fg
        acc = 0.0 if b is None else float(b[f])
        for cl in range(cg):
            c = g * cg + cl
            d = c // cpd
            for i, j in itertools.product(range(kh), range(kw)):
                k = d * kh * kw + i * kw + j
                y = oh * stride[0] - pad[0] + i * dilate[0] + float(off[n, 2 * k, oh, ow])
                xx = ow * stride[1] - pad[1] + j * dilate[1] + float(off[n, 2 * k + 1, oh, ow])
                v = sample(x[n, c], y, xx, v1)
                if mask is not None:
                    v *= float(mask[n, k, oh, ow])
                acc += float(w[f, cl, i, j]) * v
        out[n, f, oh, ow] = acc
    return out


# -- helpers --------------------------------------------------------------------------------

def deform(modulated, **kw):
    names = ["x", "o"] + (["m"] if modulated else []) + ["w"] + ([] if kw.get("no_bias") else ["b"])
    op = nbdl.sym._contrib_ModulatedDeformableConvolution if modulated else \
        nbdl.sym._contrib_DeformableConvolution
    return op(*[nbdl.sym.var(n) for n in names], **kw)


def out_hw(xs, k, s, p, d):
    return tuple((xs[2 + a] + 2 * p[a] - d[a] * (k[a] - 1) - 1) // s[a] + 1 for a in range(2))


def inputs(rng, modulated, xs, k, s, p, d, nf, g, dg, bias, dtype, smooth=False):
    """Random data/weight/bias, offsets (with ``smooth``: fractional parts in
    [0.2, 0.8], away from the kinks of bilinear sampling) and a mask."""
    oh, ow = out_hw(xs, k, s, p, d)
    taps = dg * k[0] * k[1]
    oshape = (xs[0], 2 * taps, oh, ow)
    off = rng.uniform(-2, 2, oshape)
    if smooth:
        off = np.floor(rng.uniform(-1.5, 1.5, oshape)) + rng.uniform(0.2, 0.8, oshape)
    loc = {"x": rng.uniform(-1, 1, xs), "o": off, "w": rng.uniform(-1, 1, (nf, xs[1] // g) + k)}
    if modulated:
        loc["m"] = rng.uniform(0.2, 1.5, (xs[0], taps, oh, ow))
    if bias:
        loc["b"] = rng.uniform(-1, 1, nf)
    return {n: a.astype(dtype) for n, a in loc.items()}


def attrs_of(k, s, p, d, nf, g, dg, bias):
    return dict(kernel=k, stride=s, pad=p, dilate=d, num_filter=nf, num_group=g,
                num_deformable_group=dg, no_bias=not bias)


def tol(dtype):
    return dict(rtol=1e-6, atol=1e-8) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-4)


# -- forward against the reference ---------------------------------------------------------

# (data shape, kernel, stride, pad, dilate, num_filter, num_group, num_deformable_group, bias)
CASES = [
    ((2, 2, 4, 5), (3, 3), (1, 1), (1, 1), (1, 1), 3, 1, 1, True),
    ((1, 4, 5, 4), (2, 3), (2, 1), (0, 1), (1, 2), 4, 2, 2, False),    # groups, dg, odd sizes
    ((2, 4, 3, 3), (1, 1), (1, 1), (0, 0), (1, 1), 2, 1, 2, True),     # 1x1 taps still sample
    ((1, 6, 5, 5), (3, 2), (2, 2), (2, 1), (2, 1), 6, 3, 3, True),     # depthwise-like, big pad
    ((1, 1, 1, 1), (1, 1), (1, 1), (0, 0), (1, 1), 1, 1, 1, True),     # size 1
]


@pytest.mark.parametrize("modulated", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_forward_matches_reference(case, dtype, modulated, rng):
    xs, k, s, p, d, nf, g, dg, bias = case
    loc = inputs(rng, modulated, xs, k, s, p, d, nf, g, dg, bias, dtype)
    ref = ref_deform(loc["x"], loc["o"], loc.get("m"), loc["w"], loc.get("b"), k, s, p, d, g, dg,
                     v1=not modulated)
    outs = check_symbolic_forward(deform(modulated, **attrs_of(k, s, p, d, nf, g, dg, bias)),
                                  loc, [ref], **tol(dtype))
    assert outs[0].dtype == dtype


def test_boundary_rules_by_hand():
    """A 1x1 kernel: output (0, 0) samples x (3x3) at (y, x) = its offset.
    v1 and v2 differ at the border exactly as MXNet's two im2col kernels do."""
    x = nbdl.nd.array(np.arange(1.0, 10.0).reshape(1, 1, 3, 3))
    w = nbdl.nd.ones((1, 1, 1, 1))
    points = [(0.5, 0.5), (2.5, 1.0), (1.0, 2.25), (-0.5, 1.0), (1.0, -0.25), (3.0, 0.0),
              (-1.0, 0.0), (2.0, 2.0)]
    # v1: zero unless 0 <= y < 3 and 0 <= x < 3, clamped to the last row/column
    # past it; v2: zero unless -1 < y < 3 and -1 < x < 3, bilinear over zero padding
    want_v1 = [3.0, 8.0, 6.0, 0.0, 0.0, 0.0, 0.0, 9.0]
    want_v2 = [3.0, 4.0, 4.5, 1.0, 3.0, 0.0, 0.0, 9.0]
    mask = nbdl.nd.ones((1, 1, 3, 3))
    for (y, xx), e1, e2 in zip(points, want_v1, want_v2):
        off = np.zeros((1, 2, 3, 3))
        off[0, :, 0, 0] = (y, xx)
        off = nbdl.nd.array(off)
        a = nbdl.nd.DeformableConvolution(x, off, w, kernel=(1, 1), num_filter=1, no_bias=True)
        b = nbdl.nd.ModulatedDeformableConvolution(x, off, mask, w, kernel=(1, 1), num_filter=1,
                                                   no_bias=True)
        assert a.asnumpy()[0, 0, 0, 0] == pytest.approx(e1), ("v1", y, xx)
        assert b.asnumpy()[0, 0, 0, 0] == pytest.approx(e2), ("v2", y, xx)
        for v1, e in ((True, e1), (False, e2)):   # the reference agrees
            assert sample(np.arange(1.0, 10.0).reshape(3, 3), y, xx, v1) == pytest.approx(e)


@pytest.mark.parametrize("modulated", [False, True])
def test_zero_offsets_equal_convolution(modulated, rng):
    """Offsets 0 (and mask 1) make both ops Convolution: forward and the
    data, weight and bias gradients."""
    xs, k, s, p, d, nf, g = (2, 4, 5, 4), (3, 2), (2, 1), (1, 1), (1, 2), 6, 2
    loc = inputs(rng, modulated, xs, k, s, p, d, nf, g, 2, True, np.float64)
    loc["o"][:] = 0
    if modulated:
        loc["m"][:] = 1
    attrs = dict(kernel=k, stride=s, pad=p, dilate=d, num_filter=nf, num_group=g)
    conv = nbdl.sym.Convolution(nbdl.sym.var("x"), nbdl.sym.var("w"), nbdl.sym.var("b"), **attrs)
    conv_loc = {n: loc[n] for n in ("x", "w", "b")}
    og = rng.normal(size=(2, nf) + out_hw(xs, k, s, p, d))
    (want,), grads, _ = run_symbol(conv, conv_loc, out_grads=[og])
    sym = deform(modulated, num_deformable_group=2, **attrs)
    check_symbolic_forward(sym, loc, [want])
    check_symbolic_backward(sym, loc, [og], {n: grads[n] for n in ("x", "w", "b")})


# -- gradients -------------------------------------------------------------------------------

@pytest.mark.parametrize("modulated,case", [
    (False, ((1, 2, 3, 4), (2, 2), (1, 1), (1, 0), (1, 2), 2, 2, 2, True)),
    (True, ((1, 2, 3, 4), (2, 2), (1, 1), (1, 0), (1, 2), 2, 2, 2, True)),
    (True, ((2, 2, 3, 3), (2, 1), (2, 1), (0, 1), (1, 1), 2, 1, 1, False)),
])
def test_numeric_gradient(modulated, case, rng):
    xs, k, s, p, d, nf, g, dg, bias = case
    loc = inputs(rng, modulated, xs, k, s, p, d, nf, g, dg, bias, np.float64, smooth=True)
    check_numeric_gradient(deform(modulated, **attrs_of(k, s, p, d, nf, g, dg, bias)), loc)


def _call(opname, shapes, n_out, req, dtype, attrs, device=None):
    op = get_op(opname)
    parsed, _ = op.parse_attrs(attrs)
    ins, outs = op.infer_shape(parsed, list(shapes), [None] * n_out)
    call = Call(op, parsed, ins, [np.dtype(dtype)] * len(ins), outs, [np.dtype(dtype)] * n_out,
                req=list(req), device=device)
    return op, call


def _run(op, call, dev, arrays, outs):
    temps = [np.zeros(s, dt) for s, dt in op.temps(call)]
    launch = op.prepare(call)
    arrs = [dev.from_numpy(np.ascontiguousarray(a)) for a in list(arrays) + list(outs) + temps]
    views = launch.views or [None] * len(arrs)
    launch.fn(*pick_args(launch.args, [a if v is None else a.reshape(v) for a, v in zip(arrs, views)]),
              *launch.scalars)
    return [dev.to_numpy(a) for a in arrs[len(arrays):len(arrays) + len(outs)]]


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.cuda)])
def test_backward_req_null(device, rng):
    """Outputs with REQ_NULL are left alone; the others match a full run."""
    dev = cpu() if device == "cpu" else gpu()
    attrs = dict(kernel=(2, 2), num_filter=2, num_deformable_group=2)
    loc = inputs(rng, True, (1, 2, 3, 3), (2, 2), (1, 1), (0, 0), (1, 1), 2, 1, 2, True,
                 np.float64)
    og = rng.normal(size=(1, 2, 2, 2))
    ins = [og, loc["x"], loc["o"], loc["m"], loc["w"]]
    shapes = [a.shape for a in ins]
    shapes_out = [a.shape for a in ins[1:]] + [(2,)]
    full_op, full_call = _call("_backward_ModulatedDeformableConvolution", shapes, 5,
                               [REQ_WRITE] * 5, np.float64, attrs, dev)
    full = _run(full_op, full_call, dev, ins, [np.full(o, 2.0) for o in shapes_out])
    for req in ([REQ_NULL, REQ_WRITE, REQ_NULL, REQ_WRITE, REQ_NULL],
                [REQ_WRITE, REQ_NULL, REQ_WRITE, REQ_NULL, REQ_WRITE]):
        op, call = _call("_backward_ModulatedDeformableConvolution", shapes, 5, req, np.float64,
                         attrs, dev)
        got = _run(op, call, dev, ins, [np.full(o, 2.0) for o in shapes_out])
        for r, a, e in zip(req, got, full):
            if r == REQ_NULL:
                assert np.all(a == 2.0)
            else:
                assert_almost_equal(a, e)


def test_parallel_variant(monkeypatch, rng):
    """The prange-over-batch-chunks variant (forced by a zero threshold)."""
    import numba
    from nbdl.kernels.cpu._blas_threads import BLAS_THREAD_CONTROL
    from nbdl.kernels.cpu.deformable_convolution import choose_threads
    from nbdl.ops.deformable_convolution import geometry
    if not BLAS_THREAD_CONTROL:
        pytest.skip("BLAS threads cannot be controlled: the serial variant is always used")
    monkeypatch.setenv("NBDL_CONV_PARALLEL_MIN_FLOPS", "0")
    numba.set_num_threads(2)
    case = ((3, 2, 4, 4), (3, 3), (1, 1), (1, 1), (1, 1), 2, 1, 1, True)
    xs, k, s, p, d, nf, g, dg, bias = case
    attrs = attrs_of(k, s, p, d, nf, g, dg, bias)
    assert choose_threads(geometry(get_op(V2).parse_attrs(attrs)[0], xs)) == 2
    loc = inputs(rng, True, *case, np.float64)
    sym = deform(True, **attrs)
    check_symbolic_forward(sym, loc, [ref_deform(loc["x"], loc["o"], loc["m"], loc["w"], loc["b"],
                                                 k, s, p, d, g, dg, v1=False)])
    monkeypatch.setenv("NBDL_CONV_PARALLEL_MIN_FLOPS", str(1 << 40))   # serial reference
    og = rng.normal(size=(3, 2, 4, 4))
    want = check_symbolic_backward(sym, loc, [og], {n: None for n in loc})
    monkeypatch.setenv("NBDL_CONV_PARALLEL_MIN_FLOPS", "0")
    check_symbolic_backward(sym, loc, [og], want)


@pytest.mark.cuda
@pytest.mark.parametrize("modulated,case", [
    (False, ((1, 2, 3, 3), (2, 2), (1, 1), (0, 0), (1, 1), 2, 2, 2, True)),
    (True, ((1, 2, 3, 3), (2, 2), (1, 1), (1, 0), (1, 1), 2, 1, 2, False)),
])
def test_cuda_matches_cpu(modulated, case, rng):
    xs, k, s, p, d, nf, g, dg, bias = case
    loc = inputs(rng, modulated, xs, k, s, p, d, nf, g, dg, bias, np.float32)
    check_consistency(deform(modulated, **attrs_of(k, s, p, d, nf, g, dg, bias)), loc,
                      devices=[cpu(), gpu()], rtol=1e-4, atol=1e-5)


def test_empty_batch(rng):
    loc = inputs(rng, True, (0, 2, 4, 4), (3, 3), (1, 1), (0, 0), (1, 1), 3, 1, 1, True,
                 np.float32)
    outs = check_symbolic_forward(deform(True, kernel=(3, 3), num_filter=3), loc,
                                  [np.zeros((0, 3, 2, 2), np.float32)])
    assert outs[0].shape == (0, 3, 2, 2)


# -- names, inference, attributes, errors ----------------------------------------------------

def test_names_aliases_and_inference():
    x = nbdl.sym.var("data")
    s = nbdl.sym.DeformableConvolution(x, kernel=(3, 3), pad=(1, 1), num_filter=4,
                                       num_deformable_group=2, name="dc")
    assert s.list_arguments() == ["data", "dc_offset", "dc_weight", "dc_bias"]
    args, outs, _ = s.infer_shape(data=(2, 6, 5, 7))
    assert args == [(2, 6, 5, 7), (2, 36, 5, 7), (4, 6, 3, 3), (4,)] and outs == [(2, 4, 5, 7)]
    m = nbdl.sym._npx_modulated_deformable_convolution(x, kernel=(3, 3), stride=(2, 2),
                                                       num_filter=4, num_group=2, no_bias=True,
                                                       name="mdc")
    assert m.list_arguments() == ["data", "mdc_offset", "mdc_mask", "mdc_weight"]
    args, outs, _ = m.infer_shape(data=(1, 4, 7, 7))
    assert args == [(1, 4, 7, 7), (1, 18, 3, 3), (1, 9, 3, 3), (4, 2, 3, 3)]
    assert outs == [(1, 4, 3, 3)]
    for alias, name in (("ModulatedDeformableConvolution", V2), ("_npx_deformable_convolution", V1)):
        assert get_op(alias).name == name
    assert get_op(V2).attrs["im2col_step"].default == 64


def test_eager_nd_and_npx_spellings(rng):
    loc = inputs(rng, True, (1, 2, 4, 4), (3, 3), (1, 1), (1, 1), (1, 1), 2, 1, 1, True,
                 np.float32)
    nd = {n: nbdl.nd.array(a) for n, a in loc.items()}
    ref = ref_deform(loc["x"], loc["o"], loc["m"], loc["w"], loc["b"], (3, 3), pad=(1, 1),
                     v1=False)
    a = nbdl.nd.ModulatedDeformableConvolution(nd["x"], nd["o"], nd["m"], nd["w"], nd["b"],
                                               kernel=(3, 3), pad=(1, 1), num_filter=2)
    b = nbdl.npx.modulated_deformable_convolution(nd["x"], nd["o"], nd["m"], nd["w"], nd["b"],
                                                  pad=(1, 1))
    assert_almost_equal(a.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    assert_almost_equal(b.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    ref1 = ref_deform(loc["x"], loc["o"], None, loc["w"], None, (3, 3), pad=(1, 1))
    c = nbdl.npx.deformable_convolution(nd["x"], nd["o"], nd["w"], pad=(1, 1))
    assert_almost_equal(c.asnumpy(), ref1, rtol=1e-4, atol=1e-5)


def test_mxnet_string_attrs():
    s = deform(True, kernel="(3, 3)", stride="(1, 1)", pad="(1, 1)", num_filter="4",
               num_deformable_group="1", no_bias="True", workspace="512", im2col_step="4",
               layout="NCHW")
    _, outs, _ = s.infer_shape(x=(8, 2, 5, 5))
    assert outs == [(8, 4, 5, 5)]


@pytest.mark.parametrize("modulated,attrs,match", [
    (False, dict(kernel=(3, 3, 3), num_filter=2), "2 axes"),
    (False, dict(kernel=(3,), num_filter=2), "2 axes"),
    (True, dict(kernel=(3, 3), num_filter=2, layout="NCDHW"), "layout"),
    (False, dict(kernel=(3, 3), num_filter=2, layout="NHWC"), "layout"),
    (False, dict(kernel=(3, 3), num_filter=2, num_deformable_group=0), "num_deformable_group"),
    (True, dict(kernel=(3, 3), num_filter=2, im2col_step=0), "im2col_step"),
    (False, dict(kernel=(3, 3), num_filter=3, num_group=2), "num_filter"),
    (True, dict(kernel=(3, 3), num_filter=2, stride=(1,)), "stride"),
])
def test_bad_attrs(modulated, attrs, match):
    with pytest.raises(nbdl.AttrError, match=match):
        deform(modulated, **attrs)


def test_shape_errors():
    with pytest.raises(nbdl.ShapeError, match=r"DeformableConvolution.*data.*\(1, 2, 5\)"):
        deform(False, kernel=(3, 3), num_filter=2).infer_shape(x=(1, 2, 5))
    with pytest.raises(nbdl.ShapeError, match=r"3 channels.*num_deformable_group=2"):
        deform(False, kernel=(1, 1), num_filter=2, num_deformable_group=2).infer_shape(
            x=(1, 3, 4, 4))
    with pytest.raises(nbdl.ShapeError, match=r"num_filter=3.*num_deformable_group=2"):
        deform(False, kernel=(1, 1), num_filter=3, num_deformable_group=2).infer_shape(
            x=(1, 4, 4, 4))
    with pytest.raises(nbdl.ShapeError, match=r"'offset'.*\(1, 18, 4, 4\).*\(1, 18, 2, 2\)"):
        deform(False, kernel=(3, 3), num_filter=2).infer_shape(x=(1, 2, 4, 4), o=(1, 18, 4, 4))
    with pytest.raises(nbdl.ShapeError, match=r"'mask'.*\(1, 18, 2, 2\).*\(1, 9, 2, 2\)"):
        deform(True, kernel=(3, 3), num_filter=2).infer_shape(x=(1, 2, 4, 4), m=(1, 18, 2, 2))
    with pytest.raises(nbdl.ShapeError, match=r"weight.*\(2, 3, 3, 3\).*\(2, 2, 3, 3\)"):
        deform(True, kernel=(3, 3), num_filter=2).infer_shape(x=(1, 2, 4, 4), w=(2, 3, 3, 3))
    with pytest.raises(nbdl.ShapeError, match=r"batch size 6.*im2col_step=4"):
        deform(True, kernel=(1, 1), num_filter=2, im2col_step=4).infer_shape(x=(6, 2, 4, 4))
    with pytest.raises(nbdl.ShapeError, match=r"smaller than the dilated kernel"):
        deform(True, kernel=(3, 3), num_filter=2).infer_shape(x=(1, 2, 2, 5))
