"""CUDA kernels of the detection ops: the routines of
``nbdl.kernels.shared.detection`` compiled as device functions.

The per-pair and per-box ops (box_iou, box_encode, box_decode,
MultiBoxPrior, box_nms's gradient) run one thread per pair, box or
location.  box_nms, bipartite_matching, MultiBoxTarget, MultiBoxDetection and
(Multi)Proposal run **one thread per batch item**, each sorting its item
sequentially (a stable merge sort) and suppressing greedily: simple and
identical to the CPU kernels, not fast for large batches of boxes.  Input
errors (MultiBoxTarget's padding and negative-mining checks, Proposal's
im_info, box_encode's matches) are reported through a status buffer or
checked on the host, since a kernel cannot raise."""
import numpy as np
from numba import cuda

from ...ops.detection_multibox import (LABEL_PADDING_MSG, NEG_MINING_MSG, REAL_SIZE_MSG,
                                       DetectionInputError)
from ...ops.indexing import IndexOutOfRange
from ...ops.registry import REQ_NULL, Launch
from ..shared import detection_plan as plan
from ..shared.detection import ERR_LABEL_PADDING, ERR_NEG_MINING, ERR_REAL_SIZE, compile_with
from ..shared.detection_args import (bipartite_args, box_decode_args, box_iou_args,
                                     box_nms_args, box_encode_args, mbox_detection_args,
                                     mbox_target_args, prior_args, proposal_args)
from ._launch import grid1d

_K = compile_with(cuda.jit(device=True))
nms_batch = _K.nms_batch
box_iou_pair = _K.box_iou_pair
bipartite_batch = _K.bipartite_batch
box_encode_one = _K.box_encode_one
box_decode_one = _K.box_decode_one
prior_location = _K.prior_location
clip01 = _K.clip01
mbox_target_batch = _K.mbox_target_batch
mbox_detection_batch = _K.mbox_detection_batch
proposal_batch = _K.proposal_batch


def _run(kernel, n, *args):
    if n > 0:
        blocks, threads = grid1d(n)
        kernel[blocks, threads](*args)


def _host(a):
    return a.copy_to_host() if hasattr(a, "copy_to_host") else np.asarray(a)


@cuda.jit
def _box_nms(data, out, rec, order, tmp, scores, areas, out_s, rec_s, topk, vt, th, cs, si,
             ii, bg, force, in_fmt, out_fmt, zero, half, req0, req1):
    b = cuda.grid(1)
    if b >= data.shape[0]:
        return
    o = out_s if req0 == REQ_NULL else out
    r = rec_s if req1 == REQ_NULL else rec
    N = data.shape[1]
    if topk < 1:
        for j in range(N):
            r[b, j] = b * N + j
            for c in range(data.shape[2]):
                o[b, j, c] = data[b, j, c]
        return
    nms_batch(data, o, r, order, tmp, scores, areas, b, topk, vt, th, cs, si, ii, bg, force,
              in_fmt, out_fmt, zero, half)


@cuda.jit
def _zero2(a):
    w = a.shape[1]
    for e in range(cuda.grid(1), a.size, cuda.gridsize(1)):
        a[e // w, e % w] = 0


@cuda.jit
def _nms_scatter(og, rec, ig):
    for i in range(cuda.grid(1), og.shape[0], cuda.gridsize(1)):
        j = int(rec[i])
        if j >= 0:
            for c in range(og.shape[1]):
                ig[j, c] = og[i, c]


@cuda.jit
def _box_iou(lhs, rhs, out, fmt, zero, half):
    R = rhs.shape[0]
    for e in range(cuda.grid(1), lhs.shape[0] * R, cuda.gridsize(1)):
        i = e // R
        j = e - i * R
        out[i, j] = box_iou_pair(lhs[i], rhs[j], fmt, zero, half)


@cuda.jit
def _bipartite(score, rows, cols, order, tmp, rows_s, cols_s, N, M, threshold, is_ascend, topk,
               req0, req1):
    b = cuda.grid(1)
    if b >= score.shape[0]:
        return
    r = rows_s if req0 == REQ_NULL else rows
    c = cols_s if req1 == REQ_NULL else cols
    bipartite_batch(score, r, c, order, tmp, b, N, M, threshold, is_ascend, topk)


@cuda.jit
def _box_encode(samples, matches, anchors, refs, means, stds, targets, masks, t_s, m_s, n, zero,
                half, one, req0, req1):
    t = t_s if req0 == REQ_NULL else targets
    k = m_s if req1 == REQ_NULL else masks
    for i in range(cuda.grid(1), samples.shape[0], cuda.gridsize(1)):
        box_encode_one(samples, matches, anchors, refs, means, stds, t, k, i, n, zero, half,
                       one)


@cuda.jit
def _box_decode(x, anchors, out, n, s0, s1, s2, s3, clip, has_clip, fmt, half):
    for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        box_decode_one(x, anchors, out, i, n, s0, s1, s2, s3, clip, has_clip, fmt, half)


@cuda.jit
def _prior(out, W, sy, sx, oy, ox, hw, hh, clip, zero, one):
    K = len(hw)
    for loc in range(cuda.grid(1), out.shape[0] // K, cuda.gridsize(1)):
        prior_location(out, loc, W, sy, sx, oy, ox, hw, hh)
        if clip:
            for q in range(loc * K, loc * K + K):
                for c in range(4):
                    out[q, c] = clip01(out[q, c], zero, one)


@cuda.jit
def _mbox_target(anchors, labels, cls_preds, loc_t, loc_m, cls_t, overlaps, max_iou, best,
                 flags, gt_flags, neg_keys, neg_idx, neg_tmp, status, s0, s1, s2,
                 overlap_threshold, ignore_label, ratio, neg_thresh, min_neg, vx, vy, vw, vh,
                 zero, req0, req1, req2):
    b = cuda.grid(1)
    if b >= labels.shape[0]:
        return
    a = s0 if req0 == REQ_NULL else loc_t
    m = s1 if req1 == REQ_NULL else loc_m
    c = s2 if req2 == REQ_NULL else cls_t
    status[b] = mbox_target_batch(anchors, labels, cls_preds, a, m, c, overlaps, max_iou, best,
                                  flags, gt_flags, neg_keys, neg_idx, neg_tmp, b,
                                  overlap_threshold, ignore_label, ratio, neg_thresh, min_neg,
                                  vx, vy, vw, vh, zero)


@cuda.jit
def _mbox_detection(cls_prob, loc_pred, anchors, out, buf, keys, order, tmp, clip, threshold,
                    nms_threshold, force, nms_topk, vx, vy, vw, vh, zero, one, half):
    b = cuda.grid(1)
    if b >= cls_prob.shape[0]:
        return
    mbox_detection_batch(cls_prob, loc_pred, anchors, out, buf, keys, order, tmp, b, clip,
                         threshold, nms_threshold, force, nms_topk, vx, vy, vw, vh, zero, one,
                         half)


@cuda.jit
def _proposal(cls_prob, bbox_pred, im_info, out, out_score, props, keys, order, tmp, ordered,
              area, supp, keep, status, out_s, score_s, base, stride, pre, post, post_param,
              thresh, rpn_min_size, iou_loss, req0, req1):
    b = cuda.grid(1)
    if b >= cls_prob.shape[0]:
        return
    o = out_s if req0 == REQ_NULL else out
    s = score_s if req1 == REQ_NULL else out_score
    status[b] = proposal_batch(cls_prob, bbox_pred, im_info, o, s, props, keys, order, tmp,
                               ordered, area, supp, keep, base, b, stride, pre, post,
                               post_param, thresh, rpn_min_size, iou_loss)


def _raise_status(status, messages):
    codes = _host(status)
    for code, msg in messages:
        if (codes == code).any():
            raise DetectionInputError(msg)


def _prepare_box_nms(call):
    views, scalars = box_nms_args(call)
    B = views[0][0]

    def fn(*arrays):
        if scalars[-2] != REQ_NULL or scalars[-1] != REQ_NULL:
            _run(_box_nms, B, *arrays, *scalars)
    return Launch(fn, (), views=views)


def _prepare_box_nms_backward(call):
    n = plan.size_of(call.in_shapes[0][:-1])
    w = int(call.in_shapes[0][-1])
    req = call.req[0]

    def fn(og, rec, ig):
        if req != REQ_NULL:
            _run(_zero2, n * w, ig)
            _run(_nms_scatter, n, og, rec, ig)
    return Launch(fn, (), views=[(n, w), (n,), (n, w)])


def _prepare_box_iou(call):
    views, scalars = box_iou_args(call)
    n = views[2][0] * views[2][1]

    def fn(lhs, rhs, out):
        if scalars[-1] != REQ_NULL:
            _run(_box_iou, n, lhs, rhs, out, *scalars[:-1])
    return Launch(fn, (), views=views)


def _prepare_bipartite(call):
    views, scalars = bipartite_args(call)
    B = views[0][0]

    def fn(*arrays):
        if scalars[-2] != REQ_NULL or scalars[-1] != REQ_NULL:
            _run(_bipartite, B, *arrays, *scalars)
    return Launch(fn, (), views=views)


def _prepare_box_encode(call):
    views, scalars = box_encode_args(call)
    n = views[0][0]
    m = views[3][1]

    def fn(samples, matches, *rest):
        s, j = _host(samples), np.trunc(_host(matches).astype(np.float64))
        pos = s > 0.5
        if pos.any() and (j[pos].min() < 0 or j[pos].max() >= m):
            raise IndexOutOfRange("_contrib_box_encode: a positive sample's match is outside "
                                  "[0, refs.shape[1])")
        if scalars[-2] != REQ_NULL or scalars[-1] != REQ_NULL:
            _run(_box_encode, n, samples, matches, *rest, *scalars)
    return Launch(fn, (), views=views)


def _prepare_box_decode(call):
    views, scalars = box_decode_args(call)
    n = views[0][0]

    def fn(x, anchors, out):
        if scalars[-1] != REQ_NULL:
            _run(_box_decode, n, x, anchors, out, *scalars[:-1])
    return Launch(fn, (), views=views)


def _prepare_multibox_prior(call):
    views, scalars = prior_args(call)
    n = views[1][0] // len(scalars[5])

    def fn(like, out):
        if scalars[-1] != REQ_NULL:
            _run(_prior, n, out, *scalars[:-1])
    return Launch(fn, (), views=views)


def _prepare_multibox_target(call):
    views, scalars = mbox_target_args(call)
    B = int(call.in_shapes[1][0])

    def fn(*arrays):
        if all(r == REQ_NULL for r in scalars[-3:]):
            return
        _run(_mbox_target, B, *arrays, *scalars)
        _raise_status(arrays[14], ((ERR_LABEL_PADDING, LABEL_PADDING_MSG),
                                   (ERR_NEG_MINING, NEG_MINING_MSG)))
    return Launch(fn, (), views=views)


def _prepare_multibox_detection(call):
    views, scalars = mbox_detection_args(call)
    B = int(call.in_shapes[0][0])

    def fn(*arrays):
        if scalars[-1] != REQ_NULL:
            _run(_mbox_detection, B, *arrays, *scalars[:-1])
    return Launch(fn, (), views=views)


def _prepare_proposal(call):
    views, scalars = proposal_args(call)
    B = int(call.in_shapes[0][0])

    def fn(*arrays):
        if scalars[-2] == REQ_NULL and scalars[-1] == REQ_NULL:
            return
        _run(_proposal, B, *arrays, *scalars)
        _raise_status(arrays[13], ((ERR_REAL_SIZE, REAL_SIZE_MSG),))
    return Launch(fn, (), views=views)


@cuda.jit
def _convert(dst, src):
    for i in range(cuda.grid(1), dst.size, cuda.gridsize(1)):
        dst[i] = src[i]


def _copy(dst, src):
    """float16 <-> float32 copy of two same-size device arrays."""
    _run(_convert, dst.size, dst.reshape(dst.size), src.reshape(src.size))


# temp_<op> and prepare_<op> of every detection op (the names the op table gives)
globals().update(plan.device_table(globals(), _copy))
