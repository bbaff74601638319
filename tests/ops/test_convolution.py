import contextlib
import itertools

import numpy as np
import pytest
from numba import config as numba_config

import nbdl
from nbdl.device import cpu, gpu
from nbdl.ops.registry import REQ_ADD, REQ_NULL, REQ_WRITE, Call, get_op, pick_args
from nbdl.testing import (assert_almost_equal, check_consistency, check_numeric_gradient,
                          check_symbolic_backward, check_symbolic_forward)

from cuda_sim import race_check


# -- references: direct loops over batch, channels, kernel taps and output positions ------

def _params(kernel, stride, pad, dilate):
    nd = len(kernel)
    return (tuple(stride) or (1,) * nd, tuple(pad) or (0,) * nd, tuple(dilate) or (1,) * nd)


def ref_conv(x, w, b, kernel, stride=(), pad=(), dilate=(), groups=1):
    """out[n, f, o] = sum_{c in group, k} x[n, c, o*s - p + k*d] * w[f, c, k] + b[f]."""
    s, p, d = _params(kernel, stride, pad, dilate)
    x, w = x.astype(np.float64), w.astype(np.float64)
    n_, c_ = x.shape[:2]
    f_ = w.shape[0]
    cg, fg = c_ // groups, f_ // groups
    xs = x.shape[2:]
    ys = tuple((xs[i] + 2 * p[i] - d[i] * (kernel[i] - 1) - 1) // s[i] + 1 for i in range(len(kernel)))
    out = np.zeros((n_, f_) + ys)
    for n, f in itertools.product(range(n_), range(f_)):
        g = f // fg
        for o in itertools.product(*[range(v) for v in ys]):
            acc = 0.0 if b is None else float(b[f])
            for c in range(cg):
                for k in itertools.product(*[range(v) for v in kernel]):
                    pos = tuple(o[i] * s[i] - p[i] + k[i] * d[i] for i in range(len(k)))
                    if all(0 <= pos[i] < xs[i] for i in range(len(k))):
                        acc += x[(n, g * cg + c) + pos] * w[(f, c) + k]
            out[(n, f) + o] = acc
    return out


def ref_conv_grads(og, x, w, kernel, stride=(), pad=(), dilate=(), groups=1):
    """(data_grad, weight_grad, bias_grad) by scattering every product of ref_conv."""
    s, p, d = _params(kernel, stride, pad, dilate)
    og, x, w = og.astype(np.float64), x.astype(np.float64), w.astype(np.float64)
    dx, dw = np.zeros_like(x), np.zeros_like(w)
    n_, f_ = og.shape[:2]
    cg, fg = x.shape[1] // groups, f_ // groups
    xs, ys = x.shape[2:], og.shape[2:]
    for n, f in itertools.product(range(n_), range(f_)):
        g = f // fg
        for o in itertools.product(*[range(v) for v in ys]):
            gv = og[(n, f) + o]
            for c in range(cg):
                for k in itertools.product(*[range(v) for v in kernel]):
                    pos = tuple(o[i] * s[i] - p[i] + k[i] * d[i] for i in range(len(k)))
                    if all(0 <= pos[i] < xs[i] for i in range(len(k))):
                        dx[(n, g * cg + c) + pos] += gv * w[(f, c) + k]
                        dw[(f, c) + k] += gv * x[(n, g * cg + c) + pos]
    return dx, dw, og.sum(axis=tuple(i for i in range(og.ndim) if i != 1))


def ref_deconv(x, w, b, kernel, stride=(), pad=(), dilate=(), adj=(), groups=1):
    """out[n, g*Fg + f, i*s - p + k*d] += x[n, c, i] * w[c, f, k] (c in group g)."""
    s, p, d = _params(kernel, stride, pad, dilate)
    nd = len(kernel)
    adj = tuple(adj) or (0,) * nd
    x, w = x.astype(np.float64), w.astype(np.float64)
    n_, c_ = x.shape[:2]
    fg = w.shape[1]
    cg = c_ // groups
    xs = x.shape[2:]
    ys = tuple(s[i] * (xs[i] - 1) + d[i] * (kernel[i] - 1) + 1 - 2 * p[i] + adj[i] for i in range(nd))
    out = np.zeros((n_, fg * groups) + ys)
    for n, c in itertools.product(range(n_), range(c_)):
        g = c // cg
        for i in itertools.product(*[range(v) for v in xs]):
            for f in range(fg):
                for k in itertools.product(*[range(v) for v in kernel]):
                    pos = tuple(i[a] * s[a] - p[a] + k[a] * d[a] for a in range(nd))
                    if all(0 <= pos[a] < ys[a] for a in range(nd)):
                        out[(n, g * fg + f) + pos] += x[(n, c) + i] * w[(c, f) + k]
    if b is not None:
        out += b.reshape((1, -1) + (1,) * nd)
    return out


# -- helpers ---------------------------------------------------------------------------------

def conv(**kw):
    v = [nbdl.sym.var("x"), nbdl.sym.var("w")] + ([] if kw.get("no_bias") else [nbdl.sym.var("b")])
    return nbdl.sym.Convolution(*v, **kw)


def deconv(**kw):
    v = [nbdl.sym.var("x"), nbdl.sym.var("w")]
    if kw.get("no_bias") is False:
        v.append(nbdl.sym.var("b"))
    return nbdl.sym.Deconvolution(*v, **kw)


def tol(dtype):
    return dict(rtol=1e-6, atol=1e-8) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-4)


def conv_inputs(rng, xshape, wshape, bias, dtype):
    loc = {"x": rng.uniform(-1, 1, xshape).astype(dtype),
           "w": rng.uniform(-1, 1, wshape).astype(dtype)}
    if bias:
        loc["b"] = rng.uniform(-1, 1, (bias,)).astype(dtype)
    return loc


# (data shape, kernel, stride, pad, dilate, num_filter, num_group)
CONV_CASES = [
    ((2, 3, 7), (3,), (), (), (), 4, 1),
    ((1, 1, 1), (1,), (), (), (), 1, 1),
    ((2, 2, 5, 6), (3, 3), (1, 1), (1, 1), (), 3, 1),
    ((2, 4, 5, 5), (3, 2), (2, 1), (1, 0), (1, 2), 6, 2),
    ((3, 4, 4, 3), (1, 1), (), (), (), 4, 4),          # 1x1 direct, depthwise
    ((1, 3, 5, 4), (2, 3), (2, 2), (0, 1), (), 2, 1),  # odd sizes, stride 2
    ((1, 2, 3, 4, 3), (2, 2, 2), (1, 2, 1), (1, 0, 1), (), 3, 1),
    ((2, 4, 3, 3), (3, 3), (), (1, 1), (), 4, 4),     # depthwise 3x3
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_forward_backward(case, dtype, rng):
    xshape, k, s, p, d, nf, g = case
    attrs = dict(kernel=k, stride=s, pad=p, dilate=d, num_filter=nf, num_group=g)
    loc = conv_inputs(rng, xshape, (nf, xshape[1] // g) + k, nf, dtype)
    out = ref_conv(loc["x"], loc["w"], loc["b"], k, s, p, d, g)
    outs = check_symbolic_forward(conv(**attrs), loc, [out], **tol(dtype))
    assert outs[0].dtype == dtype
    og = rng.uniform(-1, 1, out.shape).astype(dtype)
    dx, dw, db = ref_conv_grads(og, loc["x"], loc["w"], k, s, p, d, g)
    check_symbolic_backward(conv(**attrs), loc, [og], {"x": dx, "w": dw, "b": db}, **tol(dtype))


DECONV_CASES = [
    # (data shape, kernel, stride, pad, dilate, adj, num_filter, num_group)
    ((2, 3, 4), (3,), (2,), (1,), (), (1,), 2, 1),
    ((1, 1, 1, 1), (1, 1), (), (), (), (), 1, 1),
    ((2, 2, 3, 4), (3, 3), (2, 2), (1, 1), (), (1, 0), 3, 1),
    ((1, 4, 3, 3), (2, 3), (1, 2), (0, 1), (2, 1), (), 2, 2),
    ((2, 2, 3, 3), (1, 1), (), (), (), (), 4, 2),       # 1x1 direct
    ((1, 2, 2, 3, 2), (2, 2, 2), (2, 1, 2), (0, 1, 1), (), (1, 0, 0), 2, 1),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", DECONV_CASES)
def test_deconv_forward_backward(case, dtype, rng):
    xshape, k, s, p, d, adj, nf, g = case
    attrs = dict(kernel=k, stride=s, pad=p, dilate=d, adj=adj, num_filter=nf, num_group=g,
                 no_bias=False)
    loc = conv_inputs(rng, xshape, (xshape[1], nf // g) + k, nf, dtype)
    out = ref_deconv(loc["x"], loc["w"], loc["b"], k, s, p, d, adj, g)
    check_symbolic_forward(deconv(**attrs), loc, [out], **tol(dtype))
    # deconv's gradients: d/dx <x, A^T og> etc. -- conv's forward and weight gradient
    og = rng.uniform(-1, 1, out.shape).astype(dtype)
    dx = ref_conv(og, loc["w"], None, k, s, p, d, g)
    _, dw_t, _ = ref_conv_grads(loc["x"], og, loc["w"], k, s, p, d, g)
    db = og.astype(np.float64).sum(axis=tuple(i for i in range(og.ndim) if i != 1))
    check_symbolic_backward(deconv(**attrs), loc, [og], {"x": dx, "w": dw_t, "b": db},
                            **tol(dtype))


def test_deconv_reference_is_conv_adjoint(rng):
    """<conv(y, w), x> == <y, deconv(x, w)>: the two loop references agree."""
    k, s, p, g = (3, 2), (2, 1), (1, 1), 2
    y = rng.normal(size=(2, 4, 6, 5))
    w = rng.normal(size=(6, 2) + k)
    cy = ref_conv(y, w, None, k, s, p, (), g)
    x = rng.normal(size=cy.shape)
    dx = ref_deconv(x, w, None, k, s, p, (), (1, 0), g)
    assert dx.shape == y.shape
    assert np.isclose((cy * x).sum(), (y * dx).sum())


@pytest.mark.parametrize("sym,loc_shapes", [
    (dict(op="conv", kernel=(2, 2), stride=(2, 1), pad=(1, 0), num_filter=2, num_group=1),
     ((2, 2, 3, 4), (2, 2, 2, 2), 2)),
    (dict(op="conv", kernel=(3,), dilate=(2,), num_filter=4, num_group=2), ((1, 2, 6), (4, 1, 3), 4)),
    (dict(op="conv", kernel=(1, 1, 2), num_filter=2, no_bias=True), ((1, 2, 2, 1, 3), (2, 2, 1, 1, 2), 0)),
    (dict(op="deconv", kernel=(3, 2), stride=(2, 2), pad=(1, 0), adj=(1, 1), num_filter=2,
          num_group=2, no_bias=False), ((1, 2, 2, 3), (2, 1, 3, 2), 2)),
    (dict(op="deconv", kernel=(2,), num_filter=3), ((2, 2, 3), (2, 3, 2), 0)),
])
def test_numeric_gradient(sym, loc_shapes, rng):
    attrs = dict(sym)
    make = conv if attrs.pop("op") == "conv" else deconv
    xs, ws, nb = loc_shapes
    check_numeric_gradient(make(**attrs), conv_inputs(rng, xs, ws, nb, np.float64))


# -- inference, attributes, errors -------------------------------------------------------------

def test_infer_weight_and_output():
    args, outs, _ = conv(kernel=(3, 3), pad=(1, 1), num_filter=8, num_group=2).infer_shape(
        x=(4, 6, 10, 9))
    assert args == [(4, 6, 10, 9), (8, 3, 3, 3), (8,)] and outs == [(4, 8, 10, 9)]
    args, outs, _ = deconv(kernel=(4, 4), stride=(2, 2), pad=(1, 1), num_filter=6,
                           num_group=3).infer_shape(x=(1, 3, 5, 7))
    assert args == [(1, 3, 5, 7), (3, 2, 4, 4)] and outs == [(1, 6, 10, 14)]


def test_default_names_and_no_bias_defaults():
    c = nbdl.sym.Convolution(nbdl.sym.var("data"), kernel=(3, 3), num_filter=2, name="c1")
    assert c.list_arguments() == ["data", "c1_weight", "c1_bias"]
    d = nbdl.sym.Deconvolution(nbdl.sym.var("data"), kernel=(3, 3), num_filter=2, name="d1")
    assert d.list_arguments() == ["data", "d1_weight"]   # MXNet: no_bias=True by default


@pytest.mark.parametrize("target,xs,k,s", [((10, 9), (5, 4), (4, 3), (2, 2)),
                                           ((7,), (3,), (3,), (3,)), ((8, 8), (4, 4), (3, 3), (2, 2))])
def test_deconv_target_shape(target, xs, k, s, rng):
    sym = deconv(kernel=k, stride=s, target_shape=target, num_filter=2, no_bias=True)
    _, outs, _ = sym.infer_shape(x=(1, 1) + xs)
    assert outs == [(1, 2) + target]
    loc = conv_inputs(rng, (1, 1) + xs, (1, 2) + k, 0, np.float64)
    nd = len(k)
    total = [s[i] * (xs[i] - 1) + k[i] - target[i] for i in range(nd)]
    pad, adj = tuple((t + 1) // 2 for t in total), tuple(t % 2 for t in total)
    ref = ref_deconv(loc["x"], loc["w"], None, k, s, pad, (), adj)
    check_symbolic_forward(sym, loc, [ref])


def test_mxnet_string_attrs_and_ignored_ones():
    sym = conv(kernel="(3, 3)", stride="(1, 1)", pad="(1, 1)", num_filter="4", no_bias="True",
               workspace="512", cudnn_tune="fastest", cudnn_off="False", layout="NCHW")
    _, outs, _ = sym.infer_shape(x=(1, 2, 5, 5))
    assert outs == [(1, 4, 5, 5)]


@pytest.mark.parametrize("attrs,match", [
    (dict(kernel=(3, 3), num_filter=2, layout="NHWC"), "layout"),
    (dict(kernel=(3,), num_filter=2, layout="NCHW"), "layout"),
    (dict(kernel=(3, 3), num_filter=2, stride=(1,)), "stride"),
    (dict(kernel=(3, 3, 3, 3), num_filter=2), "kernel"),
    (dict(kernel=(0, 3), num_filter=2), "kernel"),
    (dict(kernel=(3, 3), num_filter=3, num_group=2), "num_filter"),
    (dict(kernel=(3, 3)), "num_filter"),
    (dict(num_filter=2), "kernel"),
])
def test_bad_attrs(attrs, match):
    with pytest.raises(nbdl.AttrError, match=match):
        conv(**attrs)


def test_shape_errors():
    with pytest.raises(nbdl.ShapeError, match=r"Convolution.*data.*\(1, 2, 5\).*3 axes|"
                                              r"Convolution.*data.*\(1, 2, 5\)"):
        conv(kernel=(3, 3), num_filter=2).infer_shape(x=(1, 2, 5))
    with pytest.raises(nbdl.ShapeError, match=r"Convolution.*weight.*\(2, 3, 3, 3\).*\(2, 2, 3, 3\)"):
        conv(kernel=(3, 3), num_filter=2).infer_shape(x=(1, 2, 5, 5), w=(2, 3, 3, 3))
    with pytest.raises(nbdl.ShapeError, match=r"Convolution.*3 channels.*num_group=2"):
        conv(kernel=(1, 1), num_filter=2, num_group=2).infer_shape(x=(1, 3, 5, 5))
    with pytest.raises(nbdl.ShapeError, match=r"Convolution.*smaller than the dilated kernel"):
        conv(kernel=(3, 3), num_filter=2).infer_shape(x=(1, 2, 2, 5))
    with pytest.raises(nbdl.ShapeError, match=r"Deconvolution.*weight.*\(2, 3, 3\)"):
        deconv(kernel=(3,), num_filter=2).infer_shape(x=(1, 2, 5), w=(2, 3, 3))
    with pytest.raises(nbdl.AttrError, match=r"Deconvolution.*adj"):
        deconv(kernel=(3,), num_filter=2, adj=(2,), stride=(2,)).infer_shape(x=(1, 2, 5))


def test_empty_batch(rng):
    loc = conv_inputs(rng, (0, 2, 4, 4), (3, 2, 3, 3), 3, np.float32)
    outs = check_symbolic_forward(conv(kernel=(3, 3), num_filter=3), loc,
                                  [np.zeros((0, 3, 2, 2), np.float32)])
    assert outs[0].shape == (0, 3, 2, 2)


# -- req handling, the parallel variant, CUDA --------------------------------------------------

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
    arrs = [dev.from_numpy(a) for a in list(arrays) + list(outs) + temps]
    views = launch.views or [None] * len(arrs)
    launch.fn(*pick_args(launch.args, [a if v is None else a.reshape(v) for a, v in zip(arrs, views)]),
              *launch.scalars)
    return [dev.to_numpy(a) for a in arrs[len(arrays):len(arrays) + len(outs)]]


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.cuda)])
@pytest.mark.parametrize("transposed", [False, True])
def test_req_null_and_add(device, transposed, rng):
    dev = cpu() if device == "cpu" else gpu()
    name = "Deconvolution" if transposed else "Convolution"
    attrs = {"kernel": (2, 2), "stride": (2, 1), "pad": (1, 0), "num_filter": 2, "no_bias": False}
    x = rng.normal(size=(2, 2, 3, 3))
    w = rng.normal(size=(2, 2, 2, 2))
    b = rng.normal(size=2)
    if transposed:
        ref = ref_deconv(x, w, b, (2, 2), (2, 1), (1, 0))
    else:
        ref = ref_conv(x, w, b, (2, 2), (2, 1), (1, 0))
    op, call = _call(name, [x.shape, None, None], 1, [REQ_ADD], np.float64, attrs, dev)
    (got,) = _run(op, call, dev, [x, w, b], [np.ones(ref.shape)])
    assert_almost_equal(got, ref + 1)

    og = rng.normal(size=ref.shape)
    if transposed:
        dx = ref_conv(og, w, None, (2, 2), (2, 1), (1, 0))
        _, dw, _ = ref_conv_grads(x, og, w, (2, 2), (2, 1), (1, 0))
        db = og.sum(axis=(0, 2, 3))
    else:
        dx, dw, db = ref_conv_grads(og, x, w, (2, 2), (2, 1), (1, 0))
    for req in ([REQ_NULL, REQ_ADD, REQ_WRITE], [REQ_ADD, REQ_NULL, REQ_ADD],
                [REQ_WRITE, REQ_WRITE, REQ_NULL]):
        op, call = _call(f"_backward_{name}", [og.shape, x.shape, w.shape], 3, req, np.float64,
                         attrs, dev)
        got = _run(op, call, dev, [og, x, w], [np.full(x.shape, 2.0), np.full(w.shape, 2.0),
                                               np.full(2, 2.0)])
        for r, g, e in zip(req, got, (dx, dw, db)):
            if r == REQ_NULL:
                assert np.all(g == 2.0)
            else:
                assert_almost_equal(g, e + (2.0 if r == REQ_ADD else 0.0))


# Environment that forces each CPU kernel variant on float32 data (5, 4, 4, 3) (P = 12
# columns an image, 60 in all, 2 threads), and the (mode, nt, bs, tile) plan it must give;
# "images" lets NBDL_CONV_BLOCK_BYTES hold that many images' columns.
_PAR = dict(NBDL_CONV_PARALLEL_MIN_FLOPS="0")
_CHUNKS = dict(_PAR, NBDL_CONV_CHUNK_MIN_COLS="16")
_SPLIT = dict(_PAR, NBDL_CONV_CHUNK_MIN_COLS="1000")
PLAN_VARIANTS = {
    "chunks-blocks": (dict(_CHUNKS, NBDL_CONV_BLOCK_COLS="16"), 0, (1, 2, 2, 12)),
    "chunks-single": (dict(_CHUNKS, NBDL_CONV_BLOCK_COLS="12"), 0, (1, 2, 1, 12)),
    "chunks-tiles": (dict(_CHUNKS, NBDL_CONV_BLOCK_COLS="5"), 0, (1, 2, 1, 4)),
    "split-batch": (_SPLIT, 0, (2, 2, 5, 12)),
    "split-blocks": (_SPLIT, 2, (2, 2, 2, 12)),
    "split-single": (_SPLIT, 1, (2, 2, 1, 12)),
    # Convolution's forward: 5 images of 4 tiles of 3 columns (3 tiles would make 15
    # pairs, not even on 2 threads), two runs of 10 pairs, the first ending inside image 2
    # (its backward and Deconvolution: SPLIT)
    "tiles": (dict(_SPLIT, NBDL_CONV_BLOCK_COLS="5"), 0, (3, 2, 1, 3)),
    "serial-blocks": (dict(NBDL_CONV_BLOCK_COLS="16"), 0, (0, 1, 2, 12)),
    "serial-tiles": (dict(NBDL_CONV_BLOCK_COLS="5"), 0, (0, 1, 1, 4)),
}


@pytest.mark.parametrize("variant", sorted(PLAN_VARIANTS))
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("kernel,pad", [((3, 3), (1, 1)), ((1, 1), (0, 0))])
def test_kernel_variants(variant, transposed, kernel, pad, monkeypatch, two_threads, rng):
    """Every (serial | batch chunks | split GEMMs) x (one image | blocks of
    images | column tiles of one image) variant, and the forward's runs of
    (image, tile) pairs, im2col and 1x1 direct, groups, bias, against the
    references, with write, add and null requests (chunks of 2 and 3 images
    in blocks of 2, and 5 images in blocks of 2, also run one-image
    blocks)."""
    from nbdl.kernels.cpu.conv_plan import plan
    from nbdl.ops.convolution import geometry
    env, images, want = PLAN_VARIANTS[variant]
    name = "Deconvolution" if transposed else "Convolution"
    attrs = dict(kernel=kernel, pad=pad, num_filter=4, num_group=2, no_bias=False)
    xs = (5, 4, 4, 3)
    geom = geometry(get_op(name).parse_attrs(attrs)[0], xs, transposed)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    if kernel == (1, 1) and "NBDL_CONV_BLOCK_COLS" in env:
        # 1x1 direct blocks aim at a quarter of the columns: same blocks as 3x3
        monkeypatch.setenv("NBDL_CONV_BLOCK_COLS", str(4 * int(env["NBDL_CONV_BLOCK_COLS"])))
    if images:
        monkeypatch.setenv("NBDL_CONV_BLOCK_BYTES", str(images * geom["w"][2] * geom["P"] * 4))
    if variant == "tiles":     # TILES: an im2col Convolution's forward only
        assert plan(geom, 4) == (2, 2, 5, 12)
        if not transposed:
            assert plan(geom, 4, forward=True) == (want if kernel == (3, 3) else (2, 2, 5, 12))
    else:
        if kernel == (1, 1):     # a 1x1 direct convolution has no columns to tile
            want = want[:3] + (12,)
        assert plan(geom, 4) == want
        assert transposed or plan(geom, 4, forward=True) == want
    _check_against_references(transposed, attrs, xs, (4, 2) + kernel, rng)


@pytest.mark.parametrize("xs,want", [
    ((1, 128, 28, 28), "tiles"),      # batch 1, large enough images: (image, tile) runs
    ((32, 256, 2, 2), "split"),       # many tiny images: TILES would run 32 GEMMs of 4 columns
    ((32, 128, 4, 4), "split"),
    ((32, 64, 8, 8), "chunks")])
def test_forward_plan_keeps_tiles_for_large_images(xs, want, monkeypatch, two_threads):
    """TILES (Convolution's forward) needs images of a quarter of
    ``NBDL_CONV_BLOCK_COLS`` positions and up: for tiny ones a tile is one
    image and each GEMM a few columns wide (ResNet-18's 2x2 layers at batch
    32 ran 2.5 ms against SPLIT's 1.3)."""
    from nbdl.kernels.cpu.conv_plan import CHUNKS, SPLIT, TILES, plan
    from nbdl.ops.convolution import geometry
    for k in ("NBDL_CONV_BLOCK_COLS", "NBDL_CONV_CHUNK_MIN_COLS", "NBDL_CONV_BLOCK_BYTES"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("NBDL_CONV_PARALLEL_MIN_FLOPS", "0")
    attrs = dict(kernel=(3, 3), pad=(1, 1), num_filter=xs[1], num_group=1, no_bias=True)
    geom = geometry(get_op("Convolution").parse_attrs(attrs)[0], xs, False)
    mode = plan(geom, 4, forward=True)[0]
    assert mode == {"tiles": TILES, "split": SPLIT, "chunks": CHUNKS}[want]


@pytest.mark.parametrize("xs,nf,want", [
    ((1, 64, 13, 13), 16, "tiles"),   # SqueezeNet's squeeze layers: (image, tile) runs
    ((1, 16, 55, 55), 64, "tiles"),
    ((1, 512, 14, 14), 512, "split"),  # many filters: each thread half of them
    ((1, 64, 4, 4), 16, "split")])     # too few columns for two threads
def test_forward_plan_tiles_for_direct_convolutions_of_few_filters(xs, nf, want, monkeypatch,
                                                                 two_threads):
    """A 1x1 direct forward runs (image, tile) pairs when SPLIT would give
    each thread a GEMM of a few rows (``DIRECT_TILES_MAX_FILTERS``) and there
    are ``DIRECT_TILES_MIN_COLS`` columns a thread; its backward keeps
    SPLIT."""
    from nbdl.kernels.cpu.conv_plan import SPLIT, TILES, plan
    from nbdl.ops.convolution import geometry
    for k in ("NBDL_CONV_BLOCK_COLS", "NBDL_CONV_CHUNK_MIN_COLS", "NBDL_CONV_BLOCK_BYTES"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("NBDL_CONV_PARALLEL_MIN_FLOPS", "0")
    attrs = dict(kernel=(1, 1), num_filter=nf, num_group=1, no_bias=True)
    geom = geometry(get_op("Convolution").parse_attrs(attrs)[0], xs, False)
    assert plan(geom, 4, forward=True)[0] == {"tiles": TILES, "split": SPLIT}[want]
    assert plan(geom, 4)[0] == SPLIT


@pytest.mark.parametrize("groups", [1, 2])
def test_direct_convolution_tiles_against_references(groups, monkeypatch, two_threads, rng):
    """1x1 direct convolutions by (image, tile) pairs (two images of 144
    positions, tiles of 48: runs that end inside an image), bias, groups,
    write / add / null: as the references."""
    from nbdl.kernels.cpu.conv_plan import TILES, plan
    from nbdl.ops.convolution import geometry
    monkeypatch.setenv("NBDL_CONV_PARALLEL_MIN_FLOPS", "0")
    monkeypatch.setenv("NBDL_CONV_CHUNK_MIN_COLS", "100000")
    monkeypatch.setenv("NBDL_CONV_BLOCK_COLS", "48")
    attrs = dict(kernel=(1, 1), pad=(0, 0), num_filter=6, num_group=groups, no_bias=False)
    xs = (2, 4, 12, 12)
    geom = geometry(get_op("Convolution").parse_attrs(attrs)[0], xs, False)
    assert plan(geom, 4, forward=True) == (TILES, 2, 1, 48)
    _check_against_references(False, attrs, xs, (6, 4 // groups, 1, 1), rng)


def _check_against_references(transposed, attrs, xs, ws, rng, dt=np.float32):
    """Forward and backward through the executor, then the kernels directly
    with add and null requests, against the loop references (float64).  The
    variants are checked in float32: the parallel kernels' float32
    compilations are the ones networks use (float64 ones compiled only for
    these checks cost ~30 s of a cold test run; ``test_conv_forward_backward``
    checks float64)."""
    name = "Deconvolution" if transposed else "Convolution"
    kernel, groups = attrs["kernel"], attrs["num_group"]
    geo = (kernel, attrs.get("stride", ()), attrs.get("pad", ()), ())
    nf = attrs["num_filter"]
    loc = conv_inputs(rng, xs, ws, nf, dt)
    if transposed:
        ref = ref_deconv(loc["x"], loc["w"], loc["b"], *geo, (), groups)
        sym = deconv(**attrs)
    else:
        ref = ref_conv(loc["x"], loc["w"], loc["b"], *geo, groups)
        sym = conv(**attrs)
    check_symbolic_forward(sym, loc, [ref], **tol(dt))
    og = rng.normal(size=ref.shape).astype(dt)
    if transposed:
        dx = ref_conv(og, loc["w"], None, *geo, groups)
        _, dw, _ = ref_conv_grads(loc["x"], og, loc["w"], *geo, groups)
        db = og.astype(np.float64).sum(axis=tuple(i for i in range(og.ndim) if i != 1))
    else:
        dx, dw, db = ref_conv_grads(og, loc["x"], loc["w"], *geo, groups)
    check_symbolic_backward(sym, loc, [og], {"x": dx, "w": dw, "b": db}, **tol(dt))

    dev = cpu()
    args = [loc["x"], loc["w"], loc["b"]]
    op, call = _call(name, [xs, None, None], 1, [REQ_ADD], dt, attrs, dev)
    (got,) = _run(op, call, dev, args, [np.ones(ref.shape, dt)])
    assert_almost_equal(got, ref + 1, **tol(dt))
    for req in ([REQ_ADD, REQ_ADD, REQ_NULL], [REQ_NULL, REQ_WRITE, REQ_ADD],
                [REQ_ADD, REQ_NULL, REQ_WRITE]):
        op, call = _call(f"_backward_{name}", [og.shape, xs, ws], 3, req, dt, attrs, dev)
        got = _run(op, call, dev, [og, loc["x"], loc["w"]],
                   [np.full(xs, 2.0, dt), np.full(ws, 2.0, dt), np.full(nf, 2.0, dt)])
        for r, g, e in zip(req, got, (dx, dw, db)):
            if r == REQ_NULL:
                assert np.all(g == 2.0)
            else:
                assert_almost_equal(g, e + (2.0 if r == REQ_ADD else 0.0), **tol(dt))


# Kernel taps that read only padding are left out of the GEMMs (the weights
# compacted, their gradient spread back with zeros): (transposed, attrs, data, weight,
# taps kept of 9 / of 1).
PADDING_TAPS = [
    (False, dict(kernel=(3, 3), pad=(1, 1)), (4, 4, 1, 1), (4, 4, 3, 3), 1),
    (False, dict(kernel=(3, 3), pad=(1, 1), stride=(2, 2)), (4, 4, 2, 2), (4, 4, 3, 3), 4),
    (False, dict(kernel=(1, 1), pad=(3, 3), stride=(4, 4)), (4, 2, 1, 1), (4, 2, 1, 1), 0),
    (True, dict(kernel=(3, 3), pad=(1, 1)), (4, 4, 1, 1), (4, 4, 3, 3), 1),
]


@pytest.mark.parametrize("mode", ["serial", "chunks", "split"])
@pytest.mark.parametrize("case", PADDING_TAPS)
def test_padding_only_taps(case, mode, monkeypatch, two_threads, rng):
    from nbdl.kernels.cpu.conv_plan import kept_taps, plan
    from nbdl.ops.convolution import geometry
    transposed, attrs, xs, ws, kept = case
    attrs = dict(attrs, num_filter=4, num_group=1, no_bias=False)
    if mode != "serial":
        monkeypatch.setenv("NBDL_CONV_PARALLEL_MIN_FLOPS", "0")
        monkeypatch.setenv("NBDL_CONV_CHUNK_MIN_COLS", "1" if mode == "chunks" else "1000")
        monkeypatch.setenv("NBDL_CONV_BLOCK_COLS", "1")
    name = "Deconvolution" if transposed else "Convolution"
    geom = geometry(get_op(name).parse_attrs(attrs)[0], xs, transposed)
    assert len(kept_taps(geom)) == kept
    assert plan(geom, 4)[0] == {"serial": 0, "chunks": 1, "split": 2}[mode]
    _check_against_references(transposed, attrs, xs, ws, rng)


# (image D, H, W; output OD, OH, OW; kernel; stride; pad; dilation; taps with a shift);
# the last ones have output rows of 64 and more: im2col's ROWS layout
TABLE_CASES = [
    ((1, 5, 6), (1, 5, 6), (1, 3, 3), (1, 1, 1), (0, 1, 1), (1, 1, 1), 9),    # "same"
    ((1, 5, 6), (1, 3, 4), (1, 3, 3), (1, 1, 1), (0, 0, 0), (1, 1, 1), 0),    # "valid"
    ((1, 6, 6), (1, 3, 3), (1, 3, 3), (1, 2, 2), (0, 1, 1), (1, 1, 1), 0),    # stride 2
    ((1, 5, 5), (1, 5, 5), (1, 3, 3), (1, 1, 1), (0, 2, 2), (1, 2, 2), 9),    # dilated, same
    ((4, 3, 3), (4, 3, 3), (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 27),   # 3-D same
    ((1, 1, 7), (1, 1, 7), (1, 1, 3), (1, 1, 1), (0, 0, 1), (1, 1, 1), 3),    # 1-D same
    ((1, 1, 1), (1, 1, 1), (1, 3, 3), (1, 1, 1), (0, 1, 1), (1, 1, 1), 1),    # one tap kept
    ((1, 9, 139), (1, 5, 70), (1, 7, 7), (1, 2, 2), (0, 3, 3), (1, 1, 1), 0),  # a stem, 7x7/2
    ((1, 4, 66), (1, 4, 66), (1, 3, 3), (1, 1, 1), (0, 1, 1), (1, 1, 1), 9),   # same, wide
    ((2, 5, 131), (2, 3, 64), (1, 3, 5), (1, 2, 2), (0, 2, 0), (1, 2, 1), 0),  # 3-D, dilated, valid
    ((1, 3, 70), (1, 2, 68), (1, 2, 3), (1, 1, 1), (0, 0, 0), (1, 1, 1), 0),   # 2x3, "valid"
]


@pytest.mark.parametrize("variant", ["serial-blocks", "tiles", "split-single"])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("stride,pad", [((1, 2), (1, 2)), ((1, 1), (1, 2))])
def test_wide_outputs_rows_layout(variant, transposed, stride, pad, monkeypatch, two_threads,
                                  rng):
    """Output rows of 64 columns and more run im2col / col2im by rows
    (``conv_im2col``'s ROWS table), strided and not, with padding, through
    the serial, tiles and split variants: against the references."""
    from nbdl.kernels.cpu.conv_im2col import _ROW_MIN
    from nbdl.ops.convolution import geometry
    env = PLAN_VARIANTS[variant][0]
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("NBDL_CONV_BLOCK_COLS", "100")     # tiles that cut output rows
    attrs = dict(kernel=(3, 5), stride=stride, pad=pad, num_filter=4, num_group=2,
                 no_bias=False)
    xs = (2, 4, 3, 135)
    name = "Deconvolution" if transposed else "Convolution"
    geom = geometry(get_op(name).parse_attrs(attrs)[0], xs, transposed)
    assert geom["cols"][-1] >= _ROW_MIN
    _check_against_references(transposed, attrs, xs, (4, 2, 3, 5), rng)


@pytest.mark.parametrize("case", TABLE_CASES)
def test_im2col_table_shifts_and_channel_copies(case):
    """A tap gets a shift only where every offset it reads is q + shift, and
    im2col / col2im of one channel (shifted copies or gathers, or row copies
    in the ROWS layout of wide outputs) for column tiles that cut rows equal
    the table read element by element."""
    from nbdl.kernels.cpu.conv_im2col import (_HEAD, NO_SHIFT, ROWS, _col2im_channel,
                                              _im2col_channel, _make_table, table_size)
    img, out, kern, stride, pad, dil, shifted = case
    p, k = int(np.prod(out)), int(np.prod(kern))
    geo = out + kern + stride + pad + dil
    tbl = np.full(table_size(k, out, False), 7, np.int32)
    kv = _make_table(tbl, *img, geo, False)
    body = _HEAD + 3 * kv
    pts = tbl[body:body + kv * p].reshape(kv, p)
    shifts = tbl[_HEAD + kv:_HEAD + 2 * kv]
    assert int((shifts != NO_SHIFT).sum()) == shifted
    for r in range(kv):
        inside = np.flatnonzero(pts[r] >= 0)
        same = np.unique(pts[r, inside] - inside)
        if shifts[r] != NO_SHIFT:
            assert list(same) == [shifts[r]]
        else:
            assert len(same) > 1
    tables = [tbl]
    if out[2] >= 64:
        rows = np.full(table_size(k, out), 7, np.int32)
        assert len(rows) < len(tbl)
        assert _make_table(rows, *img, geo, True) == kv and rows[0] == ROWS
        np.testing.assert_array_equal(rows[_HEAD:_HEAD + kv], tbl[_HEAD:_HEAD + kv])  # taps
        tables.append(rows)
    rs = np.random.RandomState(3)
    src = rs.rand(int(np.prod(img))).astype(np.float32)
    want = np.where(pts >= 0, src[np.maximum(pts, 0)], 0)
    ow = out[2]
    for t in tables:
        for qa, qb in ((0, p), (1, p), (p // 3, p - 1), (ow + 5, min(p, 3 * ow - 7)), (2, 3)):
            if qb <= qa or qb > p:
                continue
            col = np.full((2 * kv, qb - qa + 2), -1, np.float32)
            _im2col_channel(src, col, 1, 2 - qa, t, kv, p, qa, qb)
            np.testing.assert_array_equal(col[kv:, 2:], want[:, qa:qb])
            assert np.all(col[:kv] == -1) and np.all(col[:, :2] == -1)
            dst = np.ones_like(src)
            _col2im_channel(col, dst, 1, 2 - qa, t, kv, p, qa, qb)
            ref = np.ones_like(src)
            for r in range(kv):
                for q in range(qa, qb):
                    if pts[r, q] >= 0:
                        ref[pts[r, q]] += want[r, q]
            np.testing.assert_allclose(dst, ref, rtol=1e-6)


def test_gemm_one_row(rng):
    """A one-row product goes through BLAS's gemv (``_gemm._row_gemv``): row-major
    and transposed ``b``, sub-block views with a leading dimension, a row of
    a larger ``c``, beta 0 (NaN in ``c`` not read) and 1, both dtypes, ``gemm``
    and ``gemm_c``; sizes past OpenBLAS's small-matrix limit too."""
    from nbdl.kernels.cpu._gemm import gemm, gemm_c
    for dt in (np.float32, np.float64):
        for k, n in ((7, 5), (1100, 1000)):
            a = rng.rand(3, k + 2).astype(dt)[1:2, 1:k + 1]         # (1, k) inside a block
            w = rng.rand(n, k + 3).astype(dt)[:, :k]               # (n, k), leading dim k+3
            bt = rng.rand(k, n + 4).astype(dt)[:, 2:n + 2]          # (k, n), leading dim n+4
            for b in (w.T, bt):
                want = a.astype(np.float64) @ b.astype(np.float64)
                for beta in (0.0, 1.0):
                    big = np.full((3, n), np.nan if beta == 0 else 1.0, dt)
                    gemm(a, b, big[1:2], 2.0, beta)
                    tol = 1e-4 if dt == np.float32 else 1e-10
                    assert_almost_equal(big[1], 2 * want[0] + beta, rtol=tol, atol=tol)
                    assert np.all(np.isnan(big[0])) == (beta == 0)
            ac, wc = np.ascontiguousarray(a), np.ascontiguousarray(w)
            for ta, aa in ((0, ac), (1, np.ascontiguousarray(ac.T))):
                for tb, bb in ((1, wc), (0, np.ascontiguousarray(wc.T))):
                    c = np.ones((1, n), dt)
                    gemm_c(aa, bb, c, ta, tb, 1.0, 1.0)
                    assert_almost_equal(c[0], (ac.astype(np.float64) @ wc.T)[0] + 1,
                                        rtol=1e-4, atol=1e-4)


def test_gemm_views():
    """_gemm.gemm on transposed and sub-block views, beta 0 and 1, both dtypes."""
    from nbdl.kernels.cpu._gemm import gemm
    r = np.random.RandomState(0)
    for dt in (np.float32, np.float64):
        a = r.rand(5, 7).astype(dt)
        b = r.rand(9, 10).astype(dt)[1:8, 2:6]          # (7, 4) with leading dimension 10
        c0 = r.rand(6, 4).astype(dt)
        for aa in (a, np.ascontiguousarray(a.T).T):      # row-major and transposed views
            for bb in (b, np.ascontiguousarray(b.T).T):
                c = c0.copy()
                gemm(aa, bb, c[1:], 2.0, 1.0)
                want = c0.copy()
                want[1:] += 2 * (a.astype(np.float64) @ b.astype(np.float64))
                assert_almost_equal(c, want, rtol=1e-5, atol=1e-5)
                ct = np.zeros((4, 5), dt)
                gemm(aa, bb, ct.T, 1.0, 0.0)                 # C a transposed view
                assert_almost_equal(ct.T, a @ b, rtol=1e-5, atol=1e-5)
                big = np.zeros((5, 9), dt)
                gemm(aa, bb, big[:, 3:7], 1.0, 0.0)      # C with leading dimension 9
                assert_almost_equal(big[:, 3:7], a @ b, rtol=1e-5, atol=1e-5)
                assert not big[:, :3].any() and not big[:, 7:].any()
        c = np.full((5, 4), 3.0, dt)
        gemm(a[:, :0], b[:0], c, 1.0, 1.0)               # K = 0: C = beta * C
        assert np.all(c == 3.0)


# (op, attrs, data shape, weight shape, bias size) of the CPU-vs-CUDA checks
# (also run on the GPU's im2col + GEMM road: test_convolution_cuda_gemm.py)
CUDA_CASES = [
    (conv, dict(kernel=(2, 2), stride=(2, 1), pad=(1, 0), num_filter=2, num_group=2),
     (1, 2, 3, 3), (2, 1, 2, 2), 2),
    (conv, dict(kernel=(2,), dilate=(2,), num_filter=2, no_bias=True), (2, 1, 4), (2, 1, 2), 0),
    (deconv, dict(kernel=(2, 2), stride=(2, 1), pad=(1, 0), adj=(1, 0), num_filter=2,
                  no_bias=False), (1, 2, 2, 2), (2, 2, 2, 2), 2),
    (conv, dict(kernel=(1, 2, 1), num_filter=1), (1, 1, 2, 2, 2), (1, 1, 1, 2, 1), 1),
]


@pytest.mark.cuda
@pytest.mark.parametrize("make,attrs,xs,ws,nb", CUDA_CASES)
def test_cuda_matches_cpu(make, attrs, xs, ws, nb, rng):
    check_consistency(make(**attrs), conv_inputs(rng, xs, ws, nb, np.float32),
                      devices=[cpu(), gpu()], rtol=1e-4, atol=1e-5)


@pytest.mark.cuda
@pytest.mark.parametrize("road", ["direct", "gemm"])
def test_cuda_sums_start_from_zero_not_from_memory(road, monkeypatch, rng):
    """The kernels' sums start from a typed zero, not from an array element:
    outputs written with REQ_WRITE may hold NaN bits (the planner's memory
    holds anything), and a NaN in w[0, 0, 0] belongs to filter 0 alone.  The
    bias and weight gradients used to start from ``db[0] - db[0]``: besides
    the NaN, every thread read the element thread 0 writes (a race the
    simulator's race checker reports, run here around the backward pass)."""
    monkeypatch.setenv("NBDL_CUDA_CONV", road)
    dev = gpu()
    attrs = {"kernel": (2, 2), "num_filter": 2, "no_bias": False}
    x, w, b = rng.normal(size=(2, 2, 3, 3)), rng.normal(size=(2, 2, 2, 2)), rng.normal(size=2)
    ref = ref_conv(x, w, b, (2, 2))
    w_nan = w.copy()
    w_nan[0, 0, 0, 0] = np.nan
    op, call = _call("Convolution", [x.shape, None, None], 1, [REQ_WRITE], np.float64, attrs, dev)
    (got,) = _run(op, call, dev, [x, w_nan, b], [np.full(ref.shape, np.nan)])
    assert np.isnan(got[:, 0]).all()
    assert_almost_equal(got[:, 1], ref[:, 1])
    og = rng.normal(size=ref.shape)
    op, call = _call("_backward_Convolution", [og.shape, x.shape, w.shape], 3, [REQ_WRITE] * 3,
                     np.float64, attrs, dev)
    nan_outs = [np.full(x.shape, np.nan), np.full(w.shape, np.nan), np.full(2, np.nan)]
    with (race_check() if numba_config.ENABLE_CUDASIM else contextlib.nullcontext()):
        got = _run(op, call, dev, [og, x, w], nan_outs)
    for g, e in zip(got, ref_conv_grads(og, x, w, (2, 2))):
        assert_almost_equal(g, e)
