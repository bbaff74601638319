"""_contrib_MultiBoxPrior, _contrib_MultiBoxTarget, _contrib_MultiBoxDetection,
_contrib_Proposal and _contrib_MultiProposal against plain-Python references
written here, with zero gradients, CPU vs the CUDA simulator and the errors."""
import math

import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.errors import AttrError, DTypeError, ShapeError
from nbdl.ops.detection_multibox import DetectionInputError
from nbdl.testing import check_consistency

# an SSD head as MXNet 1.9.1 writes it (sym.tojson()): prior -> detection -> box_nms
SSD_JSON = (
    '{"nodes": [{"op": "null", "name": "cls_prob", "inputs": []}, {"op": "null", "name": '
    '"loc_pred", "inputs": []}, {"op": "null", "name": "data", "inputs": []}, {"op": '
    '"_contrib_MultiBoxPrior", "name": "prior", "attrs": {"clip": "True", "ratios": "(1, 2)", '
    '"sizes": "(0.5, 0.25)"}, "inputs": [[2, 0, 0]]}, {"op": "_contrib_MultiBoxDetection", '
    '"name": "det", "attrs": {"force_suppress": "False", "nms_threshold": "0.45", "nms_topk": '
    '"20"}, "inputs": [[0, 0, 0], [1, 0, 0], [3, 0, 0]]}, {"op": "_contrib_box_nms", "name": '
    '"nms", "attrs": {"id_index": "0", "overlap_thresh": "0.3", "topk": "10"}, "inputs": '
    '[[4, 0, 0]]}], "arg_nodes": [0, 1, 2], "node_row_ptr": [0, 1, 2, 3, 4, 5, 7], "heads": '
    '[[5, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}}')

sym, nd = nbdl.sym, nbdl.nd


# -- MultiBoxPrior --------------------------------------------------------------------------------

def ref_prior(H, W, sizes=(1.0,), ratios=(1.0,), clip=False, steps=(-1, -1),
              offsets=(0.5, 0.5)):
    sy, sx = (1.0 / H, 1.0 / W) if steps[0] <= 0 else steps
    out = []
    for r in range(H):
        for c in range(W):
            cy, cx = (r + offsets[0]) * sy, (c + offsets[1]) * sx
            shapes = [(s, ratios[0]) for s in sizes] + [(sizes[0], q) for q in ratios[1:]]
            for s, q in shapes:
                w, h = s * H / W * math.sqrt(q) / 2, s / math.sqrt(q) / 2
                out.append([cx - w, cy - h, cx + w, cy + h])
    out = np.array(out)[None]
    return np.clip(out, 0, 1) if clip else out


@pytest.mark.parametrize("kw", [{}, {"sizes": (0.5, 0.25), "ratios": (1, 2, 0.5)},
                                {"sizes": (0.9,), "ratios": (1, 3), "clip": True,
                                 "steps": (0.3, 0.2), "offsets": (0.2, 0.7)}])
def test_multibox_prior(kw):
    out = nd.contrib.MultiBoxPrior(nd.zeros((2, 3, 3, 5)), **kw)
    want = ref_prior(3, 5, **kw)
    assert out.shape == want.shape and out.dtype == np.float32
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_multibox_prior_symbol_json_strings_zero_grad_and_errors():
    s = sym.contrib.MultiBoxPrior(sym.var("data"), sizes="(0.3,0.2)", ratios="[1,2]")
    assert s.infer_shape(data=(1, 8, 2, 2))[1] == [(1, 12, 4)]
    x = nd.zeros((1, 1, 2, 2))
    x.attach_grad()
    with autograd.record():
        y = nd.contrib.MultiBoxPrior(x, sizes=(0.3, 0.2))
    y.backward()
    assert (x.grad.asnumpy() == 0).all()
    with pytest.raises(ShapeError, match=r"_contrib_MultiBoxPrior: data must be 4-d"):
        nd.contrib.MultiBoxPrior(nd.zeros((2, 3)))
    with pytest.raises(AttrError, match=r"_contrib_MultiBoxPrior: offsets=\(1.5, 0.5\)"):
        nd.contrib.MultiBoxPrior(nd.zeros((1, 1, 2, 2)), offsets=(1.5, 0.5))


def test_multibox_ops_are_float32_only():
    # MXNet 1.9.1's legacy MultiBox operators take float32 only
    with pytest.raises(DTypeError, match="_contrib_MultiBoxPrior: argument 'data' has dtype "
                                         "float16"):
        nd.contrib.MultiBoxPrior(nd.zeros((1, 1, 2, 3), dtype=np.float16))
    with pytest.raises(DTypeError, match="_contrib_MultiBoxDetection: argument 'cls_prob' has "
                                         "dtype float64"):
        nd.contrib.MultiBoxDetection(*[nd.zeros(s, dtype=np.float64)
                                       for s in ((1, 2, 3), (1, 12), (1, 3, 4))])


# -- MultiBoxTarget -------------------------------------------------------------------------------

def ref_iou(a, g):
    iw = max(0.0, min(a[2], g[2]) - max(a[0], g[0]))
    ih = max(0.0, min(a[3], g[3]) - max(a[1], g[1]))
    u = (a[2] - a[0]) * (a[3] - a[1]) + (g[2] - g[0]) * (g[3] - g[1]) - iw * ih
    return 0.0 if u == 0 else iw * ih / u


def ref_target(anchors, labels, cls_preds, overlap_threshold=0.5, ignore_label=-1.0,
               negative_mining_ratio=-1.0, negative_mining_thresh=0.5,
               variances=(0.1, 0.1, 0.2, 0.2)):
    B, A = labels.shape[0], anchors.shape[0]
    loc, mask, cls = np.zeros((B, A * 4)), np.zeros((B, A * 4)), np.full((B, A), ignore_label)
    for b in range(B):
        gts = []
        for row in labels[b]:
            if row[0] == -1:
                break
            gts.append(row)
        if not gts:
            continue
        ov = np.array([[ref_iou(a, g[1:5]) for g in gts] for a in anchors])
        match, flag = {}, {}
        free = set(range(len(gts)))
        while free:                                   # best remaining pair, gts each once
            best = (1e-6, None, None)
            for j in range(A):
                if flag.get(j) == 1:
                    continue
                for k in sorted(free):
                    if ov[j, k] > best[0]:
                        best = (ov[j, k], j, k)
            if best[1] is None:
                break
            match[best[1]], flag[best[1]] = best[2], 1
            free.discard(best[2])
        best_iou = {}
        for j in range(A):
            if flag.get(j) != 1:
                k = int(np.argmax(ov[j]))
                best_iou[j] = ov[j, k]
                if overlap_threshold > 0 and ov[j, k] > overlap_threshold:
                    match[j], flag[j] = k, 1
        npos = sum(1 for v in flag.values() if v == 1)
        if negative_mining_ratio > 0:
            nneg = min(int(npos * negative_mining_ratio), A - npos)
            cand = []
            for j in range(A):
                if flag.get(j) != 1 and best_iou[j] < negative_mining_thresh:
                    p = cls_preds[b, :, j]
                    prob = math.exp(p[0] - p.max()) / np.exp(p - p.max()).sum()
                    cand.append((prob, j))
            cand.sort(key=lambda t: t[0])
            for _, j in cand[:nneg]:
                flag[j] = 0
        else:
            for j in range(A):
                flag.setdefault(j, 0)
        for j in range(A):
            if flag.get(j) == 1:
                a, g = anchors[j], gts[match[j]]
                aw, ah, gw, gh = a[2] - a[0], a[3] - a[1], g[3] - g[1], g[4] - g[2]
                ax, ay = (a[0] + a[2]) / 2, (a[1] + a[3]) / 2
                gx, gy = (g[1] + g[3]) / 2, (g[2] + g[4]) / 2
                loc[b, 4 * j:4 * j + 4] = [(gx - ax) / aw / variances[0],
                                           (gy - ay) / ah / variances[1],
                                           math.log(gw / aw) / variances[2],
                                           math.log(gh / ah) / variances[3]]
                mask[b, 4 * j:4 * j + 4] = 1
                cls[b, j] = g[0] + 1
            elif flag.get(j) == 0:
                cls[b, j] = 0
    return loc, mask, cls


def target_inputs(seed=0):
    rng = np.random.RandomState(seed)
    anchors = ref_prior(4, 4, sizes=(0.5, 0.25), ratios=(1, 2))[0].astype(np.float32)
    labels = -np.ones((2, 4, 5), np.float32)
    labels[0, :2] = [[0, 0.1, 0.1, 0.5, 0.6], [2, 0.5, 0.4, 0.9, 0.9]]
    labels[1, :3] = [[1, 0.0, 0.0, 0.3, 0.3], [0, 0.3, 0.3, 0.8, 0.7], [1, 0.6, 0.1, 0.95, 0.5]]
    cls_preds = rng.normal(0, 1, (2, 4, anchors.shape[0])).astype(np.float32)
    return anchors, labels, cls_preds


@pytest.mark.parametrize("kw", [
    {}, {"negative_mining_ratio": 3, "negative_mining_thresh": 0.5},
    {"overlap_threshold": 0.3, "ignore_label": -2, "variances": (0.2, 0.2, 0.1, 0.1)}])
def test_multibox_target(kw):
    anchors, labels, cls_preds = target_inputs()
    outs = nd.contrib.MultiBoxTarget(nd.array(anchors[None]), nd.array(labels),
                                     nd.array(cls_preds), **kw)
    want = ref_target(anchors.astype(np.float64), labels.astype(np.float64),
                      cls_preds.astype(np.float64), **kw)
    for got, w in zip(outs, want):
        np.testing.assert_allclose(got.asnumpy(), w, rtol=1e-4, atol=1e-5)
    cls = outs[2].asnumpy()
    assert (cls > 0).any() and (cls == 0).any()


def test_multibox_target_no_labels_zero_grad_and_errors():
    anchors, labels, cls_preds = target_inputs()
    a, lab, p = nd.array(anchors[None]), nd.array(-np.ones((2, 3, 5))), nd.array(cls_preds)
    p.attach_grad()
    with autograd.record():
        loc, mask, cls = nd.contrib.MultiBoxTarget(a, lab, p)
    np.testing.assert_array_equal(cls.asnumpy(), -1)
    assert (loc.asnumpy() == 0).all() and (mask.asnumpy() == 0).all()
    cls.backward()
    assert (p.grad.asnumpy() == 0).all()
    bad = labels.copy()
    bad[0, 2] = [-1, 0.1, -1, -1, -1]
    with pytest.raises(DetectionInputError, match="_contrib_MultiBoxTarget: a label row"):
        nd.contrib.MultiBoxTarget(a, nd.array(bad), p)
    with pytest.raises(ShapeError, match=r"_contrib_MultiBoxTarget: cls_pred has 5 anchors"):
        nd.contrib.MultiBoxTarget(a, lab, nd.zeros((2, 4, 5)))
    with pytest.raises(AttrError, match="variances"):
        nd.contrib.MultiBoxTarget(a, lab, p, variances=(0.1, 0.2))


# -- MultiBoxDetection ------------------------------------------------------------------------------

def ref_detection(cls_prob, loc_pred, anchors, clip=True, threshold=0.01, nms_threshold=0.5,
                  force_suppress=False, nms_topk=-1, variances=(0.1, 0.1, 0.2, 0.2)):
    B, C, A = cls_prob.shape
    out = -np.ones((B, A, 6))
    for b in range(B):
        rows = []
        for i in range(A):
            k = 1 + int(np.argmax(cls_prob[b, 1:, i]))
            score = cls_prob[b, k, i]
            if score < threshold:
                continue
            a, p = anchors[i], loc_pred[b, 4 * i:4 * i + 4]
            aw, ah = a[2] - a[0], a[3] - a[1]
            ax, ay = (a[0] + a[2]) / 2, (a[1] + a[3]) / 2
            ox, oy = p[0] * variances[0] * aw + ax, p[1] * variances[1] * ah + ay
            ow, oh = math.exp(p[2] * variances[2]) * aw / 2, math.exp(p[3] * variances[3]) * ah / 2
            box = [ox - ow, oy - oh, ox + ow, oy + oh]
            if clip:
                box = [min(max(v, 0.0), 1.0) for v in box]
            rows.append([k - 1, score] + box)
        if not rows:
            continue
        if 0 < nms_threshold <= 1:
            order = sorted(range(len(rows)), key=lambda i: -rows[i][1])
            keep = order if nms_topk <= 0 else order[:nms_topk]
            sorted_rows = [list(rows[i]) for i in keep] + [[-1] + rows[i][1:] for i in
                                                           range(len(keep), len(rows))]
            for i in range(len(keep)):
                if sorted_rows[i][0] < 0:
                    continue
                for j in range(i + 1, len(keep)):
                    if sorted_rows[j][0] >= 0 and (force_suppress or
                                                   sorted_rows[i][0] == sorted_rows[j][0]):
                        if ref_iou(sorted_rows[i][2:], sorted_rows[j][2:]) >= nms_threshold:
                            sorted_rows[j][0] = -1
            rows = sorted_rows
        out[b, :len(rows)] = rows
    return out


@pytest.mark.parametrize("kw", [{}, {"force_suppress": True},
                                {"clip": False, "threshold": 0.3, "nms_threshold": 0.3},
                                {"nms_threshold": 0}])
def test_multibox_detection(kw):
    rng = np.random.RandomState(1)
    anchors = ref_prior(3, 3, sizes=(0.5, 0.25), ratios=(1, 2))[0].astype(np.float32)
    A = anchors.shape[0]
    prob = rng.uniform(0, 1, (2, 4, A)).astype(np.float32)
    prob /= prob.sum(1, keepdims=True)
    loc = rng.normal(0, 1, (2, A * 4)).astype(np.float32)
    out = nd.contrib.MultiBoxDetection(nd.array(prob), nd.array(loc), nd.array(anchors[None]),
                                       **kw).asnumpy()
    want = ref_detection(prob.astype(np.float64), loc.astype(np.float64),
                         anchors.astype(np.float64), **kw)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)


def test_multibox_detection_topk_rows_and_errors():
    # nms_topk: rows past the first nms_topk valid ones keep their values with class -1
    prob = np.array([[[0.1, 0.5, 0.2], [0.9, 0.5, 0.8]]], np.float32)
    anchors = np.array([[[0, 0, 0.1, 0.1], [0.5, 0.5, 0.6, 0.6], [0.2, 0.2, 0.3, 0.3]]],
                       np.float32)
    out = nd.contrib.MultiBoxDetection(nd.array(prob), nd.zeros((1, 12)), nd.array(anchors),
                                       nms_topk=2).asnumpy()
    np.testing.assert_allclose(out[0, :, :2], [[0, 0.9], [0, 0.8], [-1, 0.8]], rtol=1e-6)
    np.testing.assert_allclose(out[0, 2, 2:], anchors[0, 2], rtol=1e-6)
    with pytest.raises(ShapeError, match=r"_contrib_MultiBoxDetection: loc_pred must be"):
        nd.contrib.MultiBoxDetection(nd.array(prob), nd.zeros((1, 8)), nd.array(anchors))


def test_ssd_head_from_mxnet_json():
    s = sym.load_json(SSD_JSON)
    assert s.list_outputs() == ["nms_output0"]
    rng = np.random.RandomState(4)
    prob = rng.uniform(0, 1, (1, 3, 12)).astype(np.float32)
    prob /= prob.sum(1, keepdims=True)
    loc = rng.normal(0, 1, (1, 48)).astype(np.float32)
    ex = s.bind(nbdl.cpu(), {"data": nd.zeros((1, 2, 2, 2)), "cls_prob": nd.array(prob),
                             "loc_pred": nd.array(loc)})
    out = ex.forward()[0].asnumpy()
    anchors = np.clip(ref_prior(2, 2, (0.5, 0.25), (1, 2)), 0, 1)[0]
    det = ref_detection(prob.astype(np.float64), loc.astype(np.float64), anchors,
                        nms_threshold=0.45, nms_topk=20)
    assert (out[0, :, 0] >= 0).sum() > 1
    # box_nms itself is checked against its reference in test_detection_box.py
    want = nd.contrib.box_nms(nd.array(det.astype(np.float32)), overlap_thresh=0.3, topk=10,
                              id_index=0).asnumpy()
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)


# -- Proposal / MultiProposal ---------------------------------------------------------------------

def ref_base_anchors(stride, ratios, scales):
    out = []
    for r in ratios:
        for s in scales:
            w = h = float(stride)
            xc = yc = (stride - 1) / 2
            ws = math.floor(math.sqrt(math.floor(w * h / r)) + 0.5) * s
            hs = math.floor(ws / s * r + 0.5) * s
            out.append([xc - (ws - 1) / 2, yc - (hs - 1) / 2, xc + (ws - 1) / 2,
                        yc + (hs - 1) / 2])
    return np.array(out)


def ref_proposal(cls_prob, bbox_pred, im_info, rpn_pre_nms_top_n=6000, rpn_post_nms_top_n=300,
                 threshold=0.7, rpn_min_size=16, scales=(4, 8, 16, 32), ratios=(0.5, 1, 2),
                 feature_stride=16, output_score=False, iou_loss=False):
    B, C, H, W = cls_prob.shape
    A = C // 2
    base = ref_base_anchors(feature_stride, ratios, scales)
    rois, scores = [], []
    for b in range(B):
        ih, iw, scale = im_info[b]
        rh, rw = int(ih / feature_stride), int(iw / feature_stride)
        props = []
        for j in range(H):
            for k in range(W):
                for i in range(A):
                    x1, y1, x2, y2 = base[i] + [k * feature_stride, j * feature_stride] * 2
                    d = bbox_pred[b, 4 * i:4 * i + 4, j, k]
                    if iou_loss:
                        box = [x1 + d[0], y1 + d[1], x2 + d[2], y2 + d[3]]
                    else:
                        w, h = x2 - x1 + 1, y2 - y1 + 1
                        cx, cy = x1 + (w - 1) / 2, y1 + (h - 1) / 2
                        pcx, pcy = d[0] * w + cx, d[1] * h + cy
                        pw, ph = math.exp(d[2]) * w, math.exp(d[3]) * h
                        box = [pcx - (pw - 1) / 2, pcy - (ph - 1) / 2, pcx + (pw - 1) / 2,
                               pcy + (ph - 1) / 2]
                    box = [min(max(box[0], 0), iw - 1), min(max(box[1], 0), ih - 1),
                           min(max(box[2], 0), iw - 1), min(max(box[3], 0), ih - 1)]
                    s = cls_prob[b, A + i, j, k] if j < rh and k < rw else -1.0
                    ms = rpn_min_size * scale
                    if box[2] - box[0] + 1 < ms or box[3] - box[1] + 1 < ms:
                        box = [box[0] - ms / 2, box[1] - ms / 2, box[2] + ms / 2, box[3] + ms / 2]
                        s = -1.0
                    props.append(box + [s])
        pre = min(rpn_pre_nms_top_n if rpn_pre_nms_top_n > 0 else len(props), len(props))
        post = min(rpn_post_nms_top_n, pre)
        props = sorted(props, key=lambda p: -p[4])[:pre]
        area = [(p[2] - p[0] + 1) * (p[3] - p[1] + 1) for p in props]
        keep, supp = [], [False] * pre
        for i in range(pre):
            if len(keep) >= post:
                break
            if supp[i]:
                continue
            keep.append(i)
            for j in range(i + 1, pre):
                if supp[j]:
                    continue
                w = max(0.0, min(props[i][2], props[j][2]) - max(props[i][0], props[j][0]) + 1)
                h = max(0.0, min(props[i][3], props[j][3]) - max(props[i][1], props[j][1]) + 1)
                if w * h / (area[i] + area[j] - w * h) > threshold:
                    supp[j] = True
        for i in range(rpn_post_nms_top_n):
            p = props[keep[i % len(keep)]]
            rois.append([b] + p[:4])
            scores.append([p[4]])
    return np.array(rois), np.array(scores)


PROPOSAL_CASES = [
    {"scales": (2, 4), "ratios": (1,), "feature_stride": 16, "rpn_pre_nms_top_n": 30,
     "rpn_post_nms_top_n": 12, "rpn_min_size": 4, "threshold": 0.5},
    {"scales": (8,), "ratios": (0.5, 2), "feature_stride": 8, "rpn_pre_nms_top_n": -1,
     "rpn_post_nms_top_n": 50, "output_score": True},
    {"scales": (2, 4), "ratios": (1,), "rpn_post_nms_top_n": 10, "iou_loss": True,
     "output_score": True}]


def proposal_inputs(A, seed=2):
    rng = np.random.RandomState(seed)
    cls = rng.uniform(0, 1, (2, 2 * A, 4, 5)).astype(np.float32)
    bbox = rng.normal(0, 0.2, (2, 4 * A, 4, 5)).astype(np.float32)
    info = np.array([[30, 40, 1.0], [25, 35, 0.5]], np.float32)
    return cls, bbox, info


@pytest.mark.parametrize("case", range(len(PROPOSAL_CASES)))
def test_multi_proposal_and_proposal(case):
    kw = PROPOSAL_CASES[case]
    A = len(kw["scales"]) * len(kw["ratios"])
    cls, bbox, info = proposal_inputs(A)
    want_rois, want_scores = ref_proposal(cls.astype(np.float64), bbox.astype(np.float64),
                                          info.astype(np.float64), **kw)
    for op, n in ((nd.contrib.MultiProposal, 2), (nd.contrib.Proposal, 1)):
        out = op(nd.array(cls[:n]), nd.array(bbox[:n]), nd.array(info[:n]), **kw)
        rois = out[0] if kw.get("output_score") else out
        P = kw["rpn_post_nms_top_n"]
        assert rois.shape == (n * P, 5)
        np.testing.assert_allclose(rois.asnumpy(), want_rois[:n * P], rtol=1e-4, atol=1e-3)
        if kw.get("output_score"):
            np.testing.assert_allclose(out[1].asnumpy(), want_scores[:n * P], rtol=1e-5,
                                       atol=1e-6)


def test_proposal_errors_and_zero_grad():
    cls, bbox, info = proposal_inputs(2)
    kw = PROPOSAL_CASES[0]
    with pytest.raises(ShapeError, match=r"_contrib_Proposal: one image per call"):
        nd.contrib.Proposal(nd.array(cls), nd.array(bbox), nd.array(info), **kw)
    with pytest.raises(ShapeError, match=r"_contrib_MultiProposal: cls_prob has 4 channels, "
                                         r"expected 2 \* len\(scales\) \* len\(ratios\) = 6"):
        nd.contrib.MultiProposal(nd.array(cls), nd.array(bbox), nd.array(info), scales=(1, 2, 3),
                                 ratios=(1,))
    with pytest.raises(DetectionInputError, match="im_info"):
        nd.contrib.MultiProposal(nd.array(cls), nd.array(bbox), nd.array(info * 4), **kw)
    with pytest.raises(DTypeError, match="_contrib_MultiProposal.*float64"):
        nd.contrib.MultiProposal(nd.array(cls, dtype=np.float64), nd.array(bbox, dtype=np.float64),
                                 nd.array(info, dtype=np.float64), **kw)
    c = nd.array(cls)
    c.attach_grad()
    with autograd.record():
        y = nd.contrib.MultiProposal(c, nd.array(bbox), nd.array(info), **kw)
    y.backward()
    assert (c.grad.asnumpy() == 0).all()


# -- CPU vs the CUDA simulator ----------------------------------------------------------------------

@pytest.mark.cuda
def test_multibox_and_proposal_cpu_vs_cuda():
    rng = np.random.RandomState(3)
    check_consistency(sym.contrib.MultiBoxPrior(sym.var("data"), sizes=(0.5, 0.2), ratios=(1, 2),
                                                clip=True), {"data": np.zeros((1, 1, 2, 3),
                                                                              np.float32)},
                      grad=False)
    anchors, labels, cls_preds = target_inputs()
    tgt = sym.contrib.MultiBoxTarget(sym.var("anchor"), sym.var("label"), sym.var("cls_pred"),
                                     negative_mining_ratio=2)
    check_consistency(sym.Group([tgt[0], tgt[1], tgt[2]]),
                      {"anchor": anchors[None, :8], "label": labels,
                       "cls_pred": cls_preds[:, :, :8]}, grad=False)
    A = 6
    prob = rng.uniform(0, 1, (1, 3, A)).astype(np.float32)
    det = sym.contrib.MultiBoxDetection(sym.var("cls_prob"), sym.var("loc_pred"),
                                        sym.var("anchor"), nms_threshold=0.3)
    check_consistency(det, {"cls_prob": prob / prob.sum(1, keepdims=True),
                            "loc_pred": rng.normal(0, 1, (1, 4 * A)).astype(np.float32),
                            "anchor": anchors[None, :A]}, grad=False)
    cls, bbox, info = proposal_inputs(1)
    cls, bbox = cls[:, :, :2, :3], bbox[:, :, :2, :3]
    prop = sym.contrib.MultiProposal(sym.var("cls_prob"), sym.var("bbox_pred"), sym.var("im_info"),
                                     scales=(2,), ratios=(1,), rpn_post_nms_top_n=4,
                                     rpn_min_size=2, output_score=True)
    check_consistency(sym.Group([prop[0], prop[1]]),
                      {"cls_prob": cls, "bbox_pred": bbox,
                       "im_info": np.array([[30, 40, 1.0], [20, 30, 1.0]], np.float32)},
                      grad=False)
