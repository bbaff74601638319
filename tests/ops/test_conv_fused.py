"""Depthwise convolution's direct forward kernel and ``_nbdl_fused_conv``
(a convolution with an inference BatchNorm, a residual add and ReLU in its
output loop), against numpy references written here."""
import itertools

import numpy as np
import pytest

import nbdl
from nbdl.device import cpu
from nbdl.ops.ir import make_node, make_variable
from nbdl.ops.registry import REQ_ADD, REQ_WRITE, Call, get_op, pick_args
from nbdl.testing import (assert_almost_equal, check_consistency, check_symbolic_forward,
                          run_symbol)


def ref_conv(x, w, b, stride, pad, dilate, groups):
    """out[n, f, o] = sum over the group's channels c and taps k of
    x[n, c, o*s - p + k*d] w[f, c, k] (+ b[f]), any number of spatial axes."""
    nd = x.ndim - 2
    n, c = x.shape[:2]
    f, cg = w.shape[:2]
    k = w.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    out_sp = tuple((x.shape[2 + i] + 2 * pad[i] - dilate[i] * (k[i] - 1) - 1) // stride[i] + 1
                   for i in range(nd))
    out = np.zeros((n, f) + out_sp)
    fg = f // groups
    for tap in itertools.product(*[range(v) for v in k]):
        sl = tuple(slice(tap[i] * dilate[i], tap[i] * dilate[i] + stride[i] * (out_sp[i] - 1) + 1,
                         stride[i]) for i in range(nd))
        win = xp[(slice(None), slice(None)) + sl]          # (n, c, *out_sp)
        for g in range(groups):
            part = win[:, g * cg:(g + 1) * cg]
            wt = w[(slice(g * fg, (g + 1) * fg), slice(None)) + tap]   # (fg, cg)
            out[:, g * fg:(g + 1) * fg] += np.einsum("nc...,fc->nf...", part, wt)
    if b is not None:
        out += b.reshape((1, f) + (1,) * nd)
    return out


def _geo(kernel, stride, pad, dilate):
    nd = len(kernel)
    return (tuple(stride) or (1,) * nd, tuple(pad) or (0,) * nd, tuple(dilate) or (1,) * nd)


# (data shape, kernel, stride, pad, dilate, channel multiplier)
DEPTHWISE = [
    ((2, 3, 9, 8), (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((1, 4, 7, 9), (3, 3), (2, 2), (1, 1), (1, 1), 2),
    ((2, 2, 8, 7), (3, 5), (2, 1), (2, 1), (2, 2), 1),
    ((3, 2, 6), (3,), (1,), (0,), (1,), 1),
    ((1, 2, 4, 5, 6), (3, 3, 3), (1, 2, 1), (1, 1, 1), (1, 1, 1), 2),
    ((1, 3, 1, 1), (3, 3), (1, 1), (1, 1), (1, 1), 1),     # only the centre tap reads
    ((1, 2, 11, 10), (3, 3), (3, 2), (2, 3), (2, 3), 1),   # taps' phases carried past stride
    # 3x3, one filter a channel, rows under 16: sixteen channels at a time
    # (conv_depthwise_lanes), a last group of fewer, any stride and padding
    ((2, 19, 5, 6), (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((1, 17, 9, 9), (3, 3), (2, 2), (1, 1), (1, 1), 1),
    ((1, 3, 6, 7), (3, 3), (2, 1), (1, 1), (1, 1), 1),
    ((1, 3, 6, 6), (3, 3), (1, 1), (2, 2), (1, 1), 1),
    # rows of 16 and more: 3x3 summed a row at a time (stride 1, 2)
    ((2, 3, 5, 20), (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((1, 2, 7, 32), (3, 3), (2, 2), (1, 1), (1, 1), 1),
    ((1, 2, 5, 18), (3, 3), (1, 1), (0, 0), (1, 1), 1),
    ((1, 2, 6, 37), (3, 3), (2, 2), (1, 1), (1, 1), 2),
    ((1, 2, 4, 35), (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((1, 2, 5, 70), (3, 3), (2, 2), (1, 1), (1, 1), 1),
    ((1, 2, 9, 40), (3, 3), (2, 1), (1, 1), (1, 1), 1),    # unequal strides: strips
    # 3-D with a 1x3x3 kernel: more than one depth slice, so neither lanes nor rows
    ((1, 2, 3, 5, 6), (1, 3, 3), (1, 1, 1), (0, 1, 1), (1, 1, 1), 1),
    ((1, 2, 2, 4, 18), (1, 3, 3), (1, 1, 1), (0, 1, 1), (1, 1, 1), 1),
    ((1, 2, 3, 4, 40), (1, 3, 3), (1, 2, 2), (1, 1, 1), (1, 1, 1), 1),
]


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("case", DEPTHWISE)
def test_depthwise_forward(case, parallel, monkeypatch, two_threads, rng):
    xs, k, s, p, d, mult = case
    if parallel:
        monkeypatch.setenv("NBDL_PARALLEL_MIN", "1")
    c = xs[1]
    attrs = dict(kernel=k, stride=s, pad=p, dilate=d, num_filter=c * mult, num_group=c)
    x = rng.uniform(-1, 1, xs).astype(np.float32)
    w = rng.uniform(-1, 1, (c * mult, 1) + k).astype(np.float32)
    b = rng.uniform(-1, 1, c * mult).astype(np.float32)
    want = ref_conv(x, w, b, s, p, d, c)
    sym = nbdl.sym.Convolution(nbdl.sym.var("x"), nbdl.sym.var("w"), nbdl.sym.var("b"), **attrs)
    check_symbolic_forward(sym, {"x": x, "w": w, "b": b}, [want], rtol=1e-4, atol=1e-5)
    # REQ_ADD, straight through the prepared kernel
    op = get_op("Convolution")
    parsed, _ = op.parse_attrs(attrs)
    call = Call(op, parsed, [xs, w.shape, b.shape], [np.dtype(np.float32)] * 3, [want.shape],
                [np.dtype(np.float32)], req=[REQ_ADD], device=cpu())
    launch = op.prepare(call)
    assert launch.fn.py_func.__name__ == ("dw_forward_parallel" if parallel else "dw_forward")
    out = np.full(want.shape, 2.0, np.float32)
    arrays = [x, w, b, out] + [np.zeros(sh, dt) for sh, dt in op.temps(call)]
    launch.fn(*pick_args(launch.args, [a if v is None else a.reshape(v)
                                       for a, v in zip(arrays, launch.views)]), *launch.scalars)
    assert_almost_equal(out, want + 2.0, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("k,parallel", [((3, 3), True), ((1, 1), False)])
def test_depthwise_parallel_rule_counts_the_taps(k, parallel, monkeypatch, two_threads):
    """A depthwise forward goes parallel by its multiply-adds (outputs times
    taps) against NBDL_PARALLEL_MIN: MobileNet's 512 channels of 14x14 (100k
    outputs, under the 131k default) with a 3x3 kernel are 900k."""
    monkeypatch.delenv("NBDL_PARALLEL_MIN", raising=False)
    attrs = dict(kernel=k, num_filter=512, num_group=512, pad=(k[0] // 2, k[1] // 2))
    op = get_op("Convolution")
    parsed, _ = op.parse_attrs(attrs)
    xs = (1, 512, 14, 14)
    call = Call(op, parsed, [xs, (512, 1) + k, (512,)], [np.dtype(np.float32)] * 3, [xs],
                [np.dtype(np.float32)], req=[REQ_WRITE], device=cpu())
    name = op.prepare(call).fn.py_func.__name__
    assert name == ("dw_forward_parallel" if parallel else "dw_forward")


def _bn(y, gamma, beta, mm, mv, eps, fix_gamma):
    shape = (1, -1) + (1,) * (y.ndim - 2)
    g = np.ones_like(gamma) if fix_gamma else gamma
    return (y - mm.reshape(shape)) / np.sqrt(mv.reshape(shape) + eps) * g.reshape(shape) + \
        beta.reshape(shape)


def _fused(attrs):
    """A symbol of one ``_nbdl_fused_conv`` node (a hidden op: no ``sym.`` name)."""
    op = get_op("_nbdl_fused_conv")
    parsed, _ = op.parse_attrs(attrs)
    names = op.list_inputs(parsed) + op.list_aux(parsed)
    node = make_node(op, [make_variable(n).output(0) for n in names], attrs, name="fused")
    return nbdl.sym.Symbol([node.output(0)]), names


# (data shape, kernel, pad, stride, num_filter, num_group, env)
# (the cases without env also run the CPU-vs-CUDA check: marked cuda)
FUSED = [pytest.param(*c, marks=pytest.mark.cuda) for c in [
    ((2, 3, 6, 5), (3, 3), (1, 1), (1, 1), 4, 1, {}),                    # im2col + GEMM
    ((4, 3, 2, 2), (1, 1), (0, 0), (1, 1), 5, 1, {}),                    # 1x1, blocks of images
    ((2, 4, 5, 5), (3, 3), (1, 1), (2, 2), 4, 4, {}),                    # depthwise
    ((2, 18, 5, 6), (3, 3), (1, 1), (1, 1), 18, 18, {}),                 # depthwise, lanes
    ((1, 2, 3, 40), (3, 3), (1, 1), (1, 1), 2, 2, {}),                   # depthwise, rows
    ((1, 2, 6, 34), (3, 3), (1, 1), (2, 2), 4, 2, {}),                   # rows, stride 2
    ((2, 4, 5, 4), (3, 3), (1, 1), (1, 1), 6, 2, {})]] + [               # groups
    ((5, 4, 4, 3), (3, 3), (1, 1), (1, 1), 4, 2,                         # batch chunks
     dict(NBDL_CONV_PARALLEL_MIN_FLOPS="0", NBDL_CONV_CHUNK_MIN_COLS="16", NBDL_CONV_BLOCK_COLS="16")),
    ((5, 4, 4, 3), (3, 3), (1, 1), (1, 1), 4, 2,                         # split GEMM rows
     dict(NBDL_CONV_PARALLEL_MIN_FLOPS="0", NBDL_CONV_CHUNK_MIN_COLS="1000")),
    ((5, 4, 4, 3), (3, 3), (1, 1), (1, 1), 4, 2,                         # (image, tile) runs
     dict(NBDL_CONV_PARALLEL_MIN_FLOPS="0", NBDL_CONV_CHUNK_MIN_COLS="1000",
          NBDL_CONV_BLOCK_COLS="5")),
]


@pytest.mark.parametrize("variant", [
    dict(with_bn=True, with_sum=True, act_type="relu"),
    dict(with_bn=True, act_type="relu_nan", no_bias=True),
    dict(with_sum=True),
    dict(act_type="relu", bn_fix_gamma=False, with_bn=True)])
@pytest.mark.parametrize("xs,k,p,s,nf,g,env", FUSED)
def test_fused_conv(xs, k, p, s, nf, g, env, variant, monkeypatch, two_threads, rng):
    for key, val in env.items():
        monkeypatch.setenv(key, val)
    attrs = dict(kernel=k, pad=p, stride=s, num_filter=nf, num_group=g, bn_eps=1e-3, **variant)
    sym, names = _fused(attrs)
    loc = {"data": rng.uniform(-1, 1, xs).astype(np.float32),
           "weight": rng.uniform(-1, 1, (nf, xs[1] // g) + k).astype(np.float32),
           "bias": rng.uniform(-1, 1, nf).astype(np.float32),
           "gamma": rng.uniform(0.5, 1.5, nf).astype(np.float32),
           "beta": rng.uniform(-1, 1, nf).astype(np.float32)}
    aux = {"moving_mean": rng.uniform(-1, 1, nf).astype(np.float32),
           "moving_var": rng.uniform(0.5, 1.5, nf).astype(np.float32)}
    loc["data"].flat[3] = np.nan                       # NaN through the epilogue
    y = ref_conv(loc["data"], loc["weight"], None if variant.get("no_bias") else loc["bias"],
                 s, p, (1, 1), g)
    if "sum" in names:
        loc["sum"] = rng.uniform(-1, 1, y.shape).astype(np.float32)
    if variant.get("with_bn"):
        y = _bn(y, loc["gamma"], loc["beta"], aux["moving_mean"], aux["moving_var"], 1e-3,
                variant.get("bn_fix_gamma", True))
    if "sum" in names:
        y = y + loc["sum"]
    if variant.get("act_type") == "relu":
        y = np.where(y > 0, y, 0)
    elif variant.get("act_type") == "relu_nan":
        y = np.where(np.isnan(y) | (y > 0), y, 0)
    loc = {n: v for n, v in loc.items() if n in names}
    aux = {n: v for n, v in aux.items() if n in names}
    (got,), _, _ = run_symbol(sym, loc, aux)
    assert_almost_equal(got, y, rtol=1e-4, atol=1e-5, equal_nan=True)
    assert np.isnan(got).any() == (variant.get("act_type") != "relu")
    if not env:                                    # CPU vs CUDA (simulator), NaN-free
        loc["data"] = np.nan_to_num(loc["data"])
        check_consistency(sym, loc, aux_states=aux, grad=False, is_train=False, rtol=1e-4,
                          atol=1e-5)


def test_fused_conv_shapes():
    op = get_op("_nbdl_fused_conv")
    attrs, _ = op.parse_attrs(dict(kernel=(3, 3), pad=(1, 1), num_filter=4, with_bn=True,
                                   with_sum=True))
    names = op.list_inputs(attrs) + op.list_aux(attrs)
    assert names == ["data", "weight", "bias", "sum", "gamma", "beta", "moving_mean",
                     "moving_var"]
    ins, outs = op.infer_shape(attrs, [(2, 3, 5, 5)] + [None] * 7, [None])
    assert outs == [(2, 4, 5, 5)] and ins[3] == (2, 4, 5, 5) and ins[4:] == [(4,)] * 4
    with pytest.raises(nbdl.ShapeError, match=r"_nbdl_fused_conv.*'sum'.*\(2, 4, 5, 4\)"):
        op.infer_shape(attrs, [(2, 3, 5, 5), None, None, (2, 4, 5, 4)] + [None] * 4, [None])
