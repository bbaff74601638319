"""_contrib_box_nms (and its alias _contrib_box_non_maximum_suppression),
_contrib_box_iou, _contrib_bipartite_matching, _contrib_box_encode and
_contrib_box_decode against plain-Python references written here, with the
gradients, CPU vs the CUDA simulator and the errors."""
import math

import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.errors import DTypeError, ShapeError
from nbdl.ops.indexing import IndexOutOfRange
from nbdl.testing import check_consistency, check_numeric_gradient

sym, nd = nbdl.sym, nbdl.nd


def rand_boxes(rng, n):
    xy = rng.uniform(0, 0.8, (n, 2))
    wh = rng.uniform(0.05, 0.4, (n, 2))
    return np.concatenate([xy, xy + wh], 1)


# -- references ---------------------------------------------------------------------------------

def ref_area(b, center=False):
    w, h = (b[2], b[3]) if center else (b[2] - b[0], b[3] - b[1])
    return 0.0 if w < 0 or h < 0 else w * h


def ref_iou(a, b, center=False):
    if center:
        a = [a[0] - a[2] / 2, a[1] - a[3] / 2, a[0] + a[2] / 2, a[1] + a[3] / 2]
        b = [b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2]
    iw = max(min(a[2], b[2]) - max(a[0], b[0]), 0.0)
    ih = max(min(a[3], b[3]) - max(a[1], b[1]), 0.0)
    inter = iw * ih
    if inter <= 0:
        return 0.0
    return inter / (ref_area(a) + ref_area(b) - inter)


def ref_nms(rows, thresh=0.5, valid=0.0, topk=-1, cs=2, si=1, ii=-1, bg=-1, force=False,
            center_in=False, center_out=False):
    """Plain greedy NMS of one batch item (a list of rows)."""
    n, w = rows.shape
    valid = np.float32(valid)                        # MXNet's float parameter
    cand = [j for j in range(n) if rows[j, si] > valid and (ii < 0 or rows[j, ii] != bg)]
    cand.sort(key=lambda j: -rows[j, si])           # Python's sort is stable
    if topk >= 0:
        cand = cand[:topk]
    kept = []
    for j in cand:
        ok = True
        for k in kept:
            if ii >= 0 and not force and int(rows[k, ii]) != int(rows[j, ii]):
                continue
            if ref_iou(rows[k, cs:cs + 4], rows[j, cs:cs + 4], center_in) > thresh:
                ok = False
                break
        if ok:
            kept.append(j)
    out = -np.ones_like(rows)
    for i, j in enumerate(kept):
        out[i] = rows[j]
        if center_in != center_out and out[i, cs] >= 0:
            x0, y0, x1, y1 = out[i, cs:cs + 4]
            if center_out:
                out[i, cs:cs + 4] = [(x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0]
            else:
                out[i, cs:cs + 4] = [x0 - x1 / 2, y0 - y1 / 2, x0 + x1 / 2, y0 + y1 / 2]
    return out, kept


def nms_data(rng, B=2, N=10, W=6):
    d = np.zeros((B, N, W), np.float32)
    for b in range(B):
        d[b, :, 0] = rng.randint(0, 3, N)
        d[b, :, 1] = np.round(rng.uniform(0, 1, N), 1)      # rounded: ties
        xy = rng.uniform(0, 0.4, (N, 2))
        d[b, :, 2:6] = np.concatenate([xy, xy + rng.uniform(0.2, 0.5, (N, 2))], 1)
    return d


# -- box_nms ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [
    {}, {"id_index": 0, "overlap_thresh": 0.3}, {"id_index": 0, "force_suppress": True, "topk": 4},
    {"valid_thresh": 0.4, "out_format": "center"},
    {"id_index": 0, "background_id": 1, "overlap_thresh": 0.2}])
def test_box_nms_matches_reference(kw):
    rng = np.random.RandomState(1)
    d = nms_data(rng)
    out = nd.contrib.box_nms(nd.array(d), **kw).asnumpy()
    args = {"thresh": kw.get("overlap_thresh", 0.5), "valid": kw.get("valid_thresh", 0.0),
            "topk": kw.get("topk", -1), "ii": kw.get("id_index", -1),
            "bg": kw.get("background_id", -1), "force": kw.get("force_suppress", False),
            "center_out": kw.get("out_format") == "center"}
    n_kept = []
    for b in range(d.shape[0]):
        want, kept = ref_nms(d[b].astype(np.float64), **args)
        np.testing.assert_allclose(out[b], want, rtol=1e-6, atol=1e-6)
        n_kept.append(len(kept))
    assert 0 < min(n_kept) and sum(n_kept) < d.shape[0] * d.shape[1] - 2


def test_box_nms_center_input_alias_and_batch_dims():
    rng = np.random.RandomState(2)
    d = nms_data(rng, B=3, N=5, W=7)
    c = d.copy()
    c[..., 2:4] = (d[..., 2:4] + d[..., 4:6]) / 2
    c[..., 4:6] = d[..., 4:6] - d[..., 2:4]
    c = c.reshape(3, 1, 5, 7)
    out = nd.contrib.box_non_maximum_suppression(nd.array(c), in_format="center",
                                                 overlap_thresh=0.1)
    assert out.shape == (3, 1, 5, 7)
    for b in range(3):
        want, _ = ref_nms(c[b, 0].astype(np.float64), thresh=0.1, center_in=True)
        np.testing.assert_allclose(out.asnumpy()[b, 0], want, rtol=1e-5, atol=1e-6)


def test_box_nms_mxnet_doc_example_and_gradient():
    x = nd.array([[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
                  [0, 0.3, 0.1, 0.1, 0.14, 0.14], [2, 0.6, 0.5, 0.5, 0.7, 0.8]])
    x.attach_grad()
    with autograd.record():
        y = nd.contrib.box_nms(x, overlap_thresh=0.1, id_index=0, force_suppress=True)
    np.testing.assert_allclose(y.asnumpy(), [[2, 0.6, 0.5, 0.5, 0.7, 0.8],
                                             [0, 0.5, 0.1, 0.1, 0.2, 0.2]] + [[-1] * 6] * 2,
                               rtol=1e-6)
    y.backward(nd.array(np.repeat([[0.1], [0.2], [0.3], [0.4]], 6, 1)))
    np.testing.assert_allclose(x.grad.asnumpy(), np.array([[0.2] * 6, [0] * 6, [0] * 6,
                                                           [0.1] * 6]), rtol=1e-6)


def test_box_nms_numeric_gradient():
    # scores far apart and IoUs far from the threshold: small steps move no box across
    x = np.array([[0, 0.9, 0.1, 0.1, 0.3, 0.3], [1, 0.7, 0.12, 0.1, 0.3, 0.32],
                  [0, 0.5, 0.5, 0.5, 0.7, 0.8], [2, 0.3, 0.6, 0.1, 0.9, 0.3]])
    check_numeric_gradient(sym.contrib.box_nms(sym.var("data"), overlap_thresh=0.5) * 1,
                           {"data": x}, numeric_eps=1e-4, rtol=1e-3, atol=1e-4)


def test_box_nms_topk_zero_copies_and_all_filtered():
    d = nms_data(np.random.RandomState(3), B=1, N=4)
    np.testing.assert_array_equal(nd.contrib.box_nms(nd.array(d), topk=0).asnumpy(), d)
    out = nd.contrib.box_nms(nd.array(d), valid_thresh=2.0).asnumpy()
    np.testing.assert_array_equal(out, -np.ones_like(d))


def test_box_nms_symbol_and_hidden_index_output():
    s = sym.contrib.box_nms(sym.var("data"), overlap_thresh=0.3)
    assert s.list_outputs() == [s.name + "_output"] or len(s.list_outputs()) == 1
    _, out_shapes, _ = s.infer_shape(data=(2, 7, 6))
    assert out_shapes == [(2, 7, 6)]


def test_box_nms_bound_without_reading_the_index():
    # the hidden index output is unread (REQ_NULL): the kernel writes scratch instead
    d = nms_data(np.random.RandomState(13), B=2, N=6)
    s = sym.contrib.box_nms(sym.var("data"), overlap_thresh=0.3) * 2
    ex = s.simple_bind(nbdl.cpu(), data=d.shape, grad_req="null")
    out = ex.forward(data=nd.array(d))[0].asnumpy()
    want = nd.contrib.box_nms(nd.array(d), overlap_thresh=0.3).asnumpy() * 2
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_box_nms_errors():
    with pytest.raises(ShapeError, match=r"_contrib_box_nms: the last dimension of data must "
                                         r"have at least 6 elements.*\(2, 5\)"):
        nd.contrib.box_nms(nd.zeros((2, 5)), id_index=0)
    with pytest.raises(ShapeError, match="_contrib_box_nms: score_index=3 overlaps"):
        nd.contrib.box_nms(nd.zeros((2, 6)), score_index=3)
    with pytest.raises(ShapeError, match="_contrib_box_nms: data must have at least 2 dims"):
        nd.contrib.box_nms(nd.zeros((6,)))
    with pytest.raises(DTypeError, match="_contrib_box_nms.*argument 'data' has dtype int32"):
        nd.contrib.box_nms(nd.zeros((2, 6), dtype=np.int32))


def test_box_ops_float16():
    # float16 is computed in float32 and rounded once per output value
    rng = np.random.RandomState(12)
    d = nms_data(rng, B=1, N=6).astype(np.float16)
    x = nd.array(d, dtype=np.float16)
    x.attach_grad()
    with autograd.record():
        y = nd.contrib.box_nms(x, overlap_thresh=0.3)
    assert y.dtype == np.float16
    want, kept = ref_nms(d[0].astype(np.float64), thresh=0.3)
    np.testing.assert_allclose(y.asnumpy()[0], want, rtol=1e-3)
    y.backward(nd.ones(y.shape, dtype=np.float16))
    g = np.zeros(d.shape[1:])
    g[kept] = 1
    np.testing.assert_array_equal(x.grad.asnumpy()[0], g)
    lhs, rhs = rand_boxes(rng, 3).astype(np.float16), rand_boxes(rng, 2).astype(np.float16)
    out = nd.contrib.box_iou(nd.array(lhs, dtype=np.float16), nd.array(rhs, dtype=np.float16))
    assert out.dtype == np.float16
    want = [[ref_iou(a, b) for b in rhs.astype(np.float64)] for a in lhs.astype(np.float64)]
    np.testing.assert_allclose(out.asnumpy(), want, rtol=2e-3, atol=1e-3)
    r, c = nd.contrib.bipartite_matching(nd.array([[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]],
                                                  dtype=np.float16), threshold=1e-12)
    assert r.dtype == np.float16
    np.testing.assert_array_equal(r.asnumpy(), [1, -1, 0])
    np.testing.assert_array_equal(c.asnumpy(), [2, 0])


# -- box_iou ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["corner", "center"])
def test_box_iou(fmt):
    rng = np.random.RandomState(4)
    lhs, rhs = rand_boxes(rng, 6).reshape(2, 3, 4), rand_boxes(rng, 4)
    rhs[0] = [5, 5, 6, 6]                      # disjoint from everything
    out = nd.contrib.box_iou(nd.array(lhs), nd.array(rhs), format=fmt).asnumpy()
    assert out.shape == (2, 3, 4)
    want = np.array([[ref_iou(a, b, fmt == "center") for b in rhs] for a in lhs.reshape(6, 4)])
    np.testing.assert_allclose(out.reshape(6, 4), want, rtol=1e-5, atol=1e-7)
    assert (out[..., 0] == 0).all() or fmt == "center"


def test_box_iou_zero_gradient_and_errors():
    a, b = nd.array(rand_boxes(np.random.RandomState(5), 3)), nd.array([[0.1, 0.1, 0.5, 0.5]])
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = nd.contrib.box_iou(a, b)
    y.backward()
    assert (a.grad.asnumpy() == 0).all() and (b.grad.asnumpy() == 0).all()
    with pytest.raises(ShapeError, match=r"_contrib_box_iou: rhs must have .* last dimension "
                                         r"of 4, got shape \(2, 5\)"):
        nd.contrib.box_iou(nd.zeros((3, 4)), nd.zeros((2, 5)))


# -- bipartite_matching -------------------------------------------------------------------------

def ref_matching(s, threshold, is_ascend=False, topk=-1):
    n, m = s.shape
    flat = s.ravel()
    order = sorted(range(n * m), key=lambda j: flat[j] if is_ascend else -flat[j])
    rows, cols, count = -np.ones(n), -np.ones(m), 0
    for j in order:
        r, c = divmod(j, m)
        if rows[r] == -1 and cols[c] == -1:
            if (flat[j] > threshold) if not is_ascend else (flat[j] < threshold):
                rows[r], cols[c] = c, r
                count += 1
                if topk > 0 and count > topk:
                    break
            else:
                break
    return rows, cols


@pytest.mark.parametrize("kw", [{"threshold": 0.3}, {"threshold": 0.6, "is_ascend": True},
                                {"threshold": 0.1, "topk": 1}])
def test_bipartite_matching(kw):
    s = np.round(np.random.RandomState(6).uniform(0, 1, (2, 5, 4)), 1).astype(np.float32)
    rows, cols = nd.contrib.bipartite_matching(nd.array(s), **kw)
    assert rows.shape == (2, 5) and cols.shape == (2, 4)
    for b in range(2):
        r, c = ref_matching(s[b], **kw)
        np.testing.assert_array_equal(rows.asnumpy()[b], r)
        np.testing.assert_array_equal(cols.asnumpy()[b], c)


def test_bipartite_matching_doc_example_zero_grad_and_errors():
    x = nd.array([[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]])
    x.attach_grad()
    with autograd.record():
        r, c = nd.contrib.bipartite_matching(x, threshold=1e-12)
    np.testing.assert_array_equal(r.asnumpy(), [1, -1, 0])
    np.testing.assert_array_equal(c.asnumpy(), [2, 0])
    r.backward()
    assert (x.grad.asnumpy() == 0).all()
    with pytest.raises(ShapeError, match="_contrib_bipartite_matching: data must have at least 2"):
        nd.contrib.bipartite_matching(nd.zeros((3,)), threshold=0.1)


# -- box_encode / box_decode --------------------------------------------------------------------

def ref_encode(samples, matches, anchors, refs, means, stds):
    t, m = np.zeros(anchors.shape), np.zeros(anchors.shape)
    for b in range(anchors.shape[0]):
        for i in range(anchors.shape[1]):
            if samples[b, i] <= 0.5:
                continue
            a, r = anchors[b, i], refs[b, int(matches[b, i])]
            aw, ah, rw, rh = a[2] - a[0], a[3] - a[1], r[2] - r[0], r[3] - r[1]
            ax, ay, rx, ry = a[0] + aw / 2, a[1] + ah / 2, r[0] + rw / 2, r[1] + rh / 2
            t[b, i] = (np.array([(rx - ax) / aw, (ry - ay) / ah, math.log(rw / aw),
                                 math.log(rh / ah)]) - means) / stds
            m[b, i] = 1
    return t, m


def encode_inputs(rng, B=2, N=6, M=3):
    return (rng.choice([-1.0, 0.0, 1.0], (B, N)), rng.randint(0, M, (B, N)).astype(np.float64),
            rand_boxes(rng, B * N).reshape(B, N, 4), rand_boxes(rng, B * M).reshape(B, M, 4),
            np.array([0, 0.1, 0, 0.2]), np.array([0.1, 0.1, 0.2, 0.2]))


def test_box_encode():
    ins = encode_inputs(np.random.RandomState(7))
    t, m = nd.contrib.box_encode(*[nd.array(x) for x in ins])
    want_t, want_m = ref_encode(*ins)
    np.testing.assert_allclose(t.asnumpy(), want_t, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(m.asnumpy(), want_m)


def test_box_encode_errors():
    ins = [nd.array(x) for x in encode_inputs(np.random.RandomState(8))]
    with pytest.raises(ShapeError, match=r"_contrib_box_encode: means has shape \(3,\)"):
        nd.contrib.box_encode(*ins[:4], nd.zeros((3,)), ins[5])
    bad = nd.array(np.full((2, 6), 7.0))
    with pytest.raises(IndexOutOfRange, match="_contrib_box_encode"):
        nd.contrib.box_encode(nd.ones((2, 6)), bad, *ins[2:])


def ref_decode(x, anchors, stds=(1, 1, 1, 1), clip=-1.0, fmt="center"):
    out = np.zeros(x.shape)
    for b in range(x.shape[0]):
        for i in range(x.shape[1]):
            a = anchors[0, i]
            if fmt == "corner":
                aw, ah = a[2] - a[0], a[3] - a[1]
                ax, ay = a[0] + aw / 2, a[1] + ah / 2
            else:
                ax, ay, aw, ah = a
            dw, dh = x[b, i, 2] * stds[2], x[b, i, 3] * stds[3]
            if clip > 0:
                dw, dh = min(dw, clip), min(dh, clip)
            ox, oy = x[b, i, 0] * stds[0] * aw + ax, x[b, i, 1] * stds[1] * ah + ay
            ow, oh = math.exp(dw) * aw / 2, math.exp(dh) * ah / 2
            out[b, i] = [ox - ow, oy - oh, ox + ow, oy + oh]
    return out


@pytest.mark.parametrize("kw", [{}, {"format": "corner", "std0": 0.1, "std1": 0.1, "std2": 0.2,
                                     "std3": 0.2}, {"clip": 0.3}])
def test_box_decode(kw):
    rng = np.random.RandomState(9)
    x, anchors = rng.normal(0, 0.5, (2, 5, 4)), rand_boxes(rng, 5).reshape(1, 5, 4)
    out = nd.contrib.box_decode(nd.array(x), nd.array(anchors), **kw).asnumpy()
    stds = tuple(kw.get(f"std{i}", 1.0) for i in range(4))
    want = ref_decode(x, anchors, stds, kw.get("clip", -1.0), kw.get("format", "center"))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_box_decode_float64_zero_grad_and_errors():
    rng = np.random.RandomState(10)
    x = nd.array(rng.normal(0, 0.5, (1, 3, 4)), dtype=np.float64)
    a = nd.array(rand_boxes(rng, 3).reshape(1, 3, 4), dtype=np.float64)
    x.attach_grad()
    with autograd.record():
        y = nd.contrib.box_decode(x, a)
    assert y.dtype == np.float64
    y.backward()
    assert (x.grad.asnumpy() == 0).all()
    with pytest.raises(ShapeError, match=r"_contrib_box_decode: anchors has 4 boxes for data's 3"):
        nd.contrib.box_decode(x, nd.zeros((1, 4, 4), dtype=np.float64))


# -- CPU vs the CUDA simulator ------------------------------------------------------------------

@pytest.mark.cuda
def test_box_ops_cpu_vs_cuda():
    rng = np.random.RandomState(11)
    d = nms_data(rng, B=2, N=5)
    check_consistency(sym.contrib.box_nms(sym.var("data"), id_index=0, overlap_thresh=0.2),
                      {"data": d}, grad=True)
    check_consistency(sym.contrib.box_iou(sym.var("lhs"), sym.var("rhs"), format="center"),
                      {"lhs": rand_boxes(rng, 3).astype(np.float32),
                       "rhs": rand_boxes(rng, 2).astype(np.float32)}, grad=False)
    check_consistency(sym.contrib.box_iou(sym.var("lhs"), sym.var("rhs")),        # float16
                      {"lhs": rand_boxes(rng, 3).astype(np.float16),
                       "rhs": rand_boxes(rng, 2).astype(np.float16)}, grad=False, rtol=1e-3,
                      atol=1e-3)
    check_consistency(sym.contrib.bipartite_matching(sym.var("data"), threshold=0.2)[1],
                      {"data": rng.uniform(0, 1, (2, 3, 4)).astype(np.float32)}, grad=False)
    names = ["samples", "matches", "anchors", "refs", "means", "stds"]
    ins = encode_inputs(rng, B=1, N=3, M=2)
    check_consistency(sym.contrib.box_encode(*[sym.var(n) for n in names])[0],
                      {n: v.astype(np.float32) for n, v in zip(names, ins)}, grad=False)
    check_consistency(sym.contrib.box_decode(sym.var("data"), sym.var("anchors"), clip=0.2),
                      {"data": rng.normal(0, 0.5, (1, 3, 4)).astype(np.float32),
                       "anchors": rand_boxes(rng, 3).reshape(1, 3, 4).astype(np.float32)},
                      grad=False)
