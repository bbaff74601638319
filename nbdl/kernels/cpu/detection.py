"""CPU kernels of the detection ops (box_nms, box_iou, bipartite_matching,
box_encode/decode, MultiBoxPrior/Target/Detection, (Multi)Proposal): the
routines of ``nbdl.kernels.shared.detection`` compiled with ``njit``, looped
over batch items, boxes or locations here."""
import numpy as np
from ..shared.jit import njit

from ...ops.detection_multibox import (LABEL_PADDING_MSG, NEG_MINING_MSG, REAL_SIZE_MSG,
                                       DetectionInputError)
from ...ops.indexing import IndexOutOfRange
from ...ops.registry import REQ_NULL, Launch
from ..shared import detection_plan as plan
from ..shared.detection import ERR_LABEL_PADDING, ERR_NEG_MINING, ERR_REAL_SIZE, compile_with
from ..shared.detection_args import (bipartite_args, box_decode_args, box_iou_args,
                                     box_nms_args, box_encode_args, mbox_detection_args,
                                     mbox_target_args, prior_args, proposal_args)

_K = compile_with(njit(cache=True, error_model="numpy"))
bipartite_batch = _K.bipartite_batch
box_decode_one = _K.box_decode_one
box_encode_one = _K.box_encode_one
box_iou_pair = _K.box_iou_pair
clip01 = _K.clip01
mbox_detection_batch = _K.mbox_detection_batch
mbox_target_batch = _K.mbox_target_batch
nms_batch = _K.nms_batch
prior_location = _K.prior_location
proposal_batch = _K.proposal_batch


@njit(cache=True, error_model="numpy")
def box_nms_kernel(data, out, rec, order, tmp, scores, areas, out_s, rec_s, topk, vt, th, cs,
                   si, ii, bg, force, in_fmt, out_fmt, zero, half, req0, req1):
    """box_nms over (B, N, W) data; out_s/rec_s stand in for unread outputs."""
    if req0 == REQ_NULL and req1 == REQ_NULL:
        return
    o = out_s if req0 == REQ_NULL else out
    r = rec_s if req1 == REQ_NULL else rec
    B, N, W = data.shape
    if topk < 1:
        for b in range(B):
            for j in range(N):
                r[b, j] = b * N + j
                for c in range(W):
                    o[b, j, c] = data[b, j, c]
        return
    for b in range(B):
        nms_batch(data, o, r, order, tmp, scores, areas, b, topk, vt, th, cs, si, ii, bg,
                  force, in_fmt, out_fmt, zero, half)


@njit(cache=True, error_model="numpy")
def box_nms_backward_kernel(og, rec, ig, req):
    """ig[rec[i]] = og[i] (rows; rec < 0: no source), zeros elsewhere."""
    if req == REQ_NULL:
        return
    n, w = ig.shape
    for i in range(n):
        for c in range(w):
            ig[i, c] = 0
    for i in range(n):
        j = int(rec[i])
        if j >= 0:
            for c in range(w):
                ig[j, c] = og[i, c]


@njit(cache=True, error_model="numpy")
def box_iou_kernel(lhs, rhs, out, fmt, zero, half, req):
    """out[i, j] = IoU of lhs row i and rhs row j."""
    if req == REQ_NULL:
        return
    for i in range(lhs.shape[0]):
        for j in range(rhs.shape[0]):
            out[i, j] = box_iou_pair(lhs[i], rhs[j], fmt, zero, half)


@njit(cache=True, error_model="numpy")
def bipartite_kernel(score, rows, cols, order, tmp, rows_s, cols_s, N, M, threshold,
                     is_ascend, topk, req0, req1):
    """bipartite_matching of every batch item of score (B, N*M)."""
    if req0 == REQ_NULL and req1 == REQ_NULL:
        return
    r = rows_s if req0 == REQ_NULL else rows
    c = cols_s if req1 == REQ_NULL else cols
    for b in range(score.shape[0]):
        bipartite_batch(score, r, c, order, tmp, b, N, M, threshold, is_ascend, topk)


@njit(cache=True, error_model="numpy")
def box_encode_kernel(samples, matches, anchors, refs, means, stds, targets, masks, t_s, m_s,
                      n, zero, half, one, req0, req1):
    """box_encode over the flat (B*N) anchors; raises IndexOutOfRange for a positive sample matched
    outside refs."""
    m = refs.shape[1]
    for i in range(samples.shape[0]):
        if samples[i] > half:
            j = int(matches[i])
            if j < 0 or j >= m:
                raise IndexOutOfRange("_contrib_box_encode: a positive sample's match is "
                                      "outside [0, refs.shape[1])")
    if req0 == REQ_NULL and req1 == REQ_NULL:
        return
    t = t_s if req0 == REQ_NULL else targets
    k = m_s if req1 == REQ_NULL else masks
    for i in range(samples.shape[0]):
        box_encode_one(samples, matches, anchors, refs, means, stds, t, k, i, n, zero, half,
                       one)


@njit(cache=True, error_model="numpy")
def box_decode_kernel(x, anchors, out, n, s0, s1, s2, s3, clip, has_clip, fmt, half, req):
    """box_decode over the flat (B*N, 4) offsets."""
    if req == REQ_NULL:
        return
    for i in range(x.shape[0]):
        box_decode_one(x, anchors, out, i, n, s0, s1, s2, s3, clip, has_clip, fmt, half)


@njit(cache=True, error_model="numpy")
def prior_kernel(like, out, W, sy, sx, oy, ox, hw, hh, clip, zero, one, req):
    """MultiBoxPrior's anchors of every location, clipped to [0, 1] with ``clip``."""
    if req == REQ_NULL:
        return
    for loc in range(out.shape[0] // len(hw)):
        prior_location(out, loc, W, sy, sx, oy, ox, hw, hh)
    if clip:
        for q in range(out.shape[0]):
            for c in range(4):
                out[q, c] = clip01(out[q, c], zero, one)


@njit(cache=True, error_model="numpy")
def mbox_target_kernel(anchors, labels, cls_preds, loc_t, loc_m, cls_t, overlaps, max_iou,
                       best, flags, gt_flags, neg_keys, neg_idx, neg_tmp, status, s0, s1, s2,
                       overlap_threshold, ignore_label, ratio, neg_thresh, min_neg, vx, vy,
                       vw, vh, zero, req0, req1, req2):
    """MultiBoxTarget of every batch item; raises DetectionInputError on MXNet's CHECK failures."""
    if req0 == REQ_NULL and req1 == REQ_NULL and req2 == REQ_NULL:
        return
    a = s0 if req0 == REQ_NULL else loc_t
    m = s1 if req1 == REQ_NULL else loc_m
    c = s2 if req2 == REQ_NULL else cls_t
    for b in range(labels.shape[0]):
        code = mbox_target_batch(anchors, labels, cls_preds, a, m, c, overlaps, max_iou, best,
                                 flags, gt_flags, neg_keys, neg_idx, neg_tmp, b,
                                 overlap_threshold, ignore_label, ratio, neg_thresh, min_neg,
                                 vx, vy, vw, vh, zero)
        if code == ERR_LABEL_PADDING:
            raise DetectionInputError(LABEL_PADDING_MSG)
        if code == ERR_NEG_MINING:
            raise DetectionInputError(NEG_MINING_MSG)


@njit(cache=True, error_model="numpy")
def mbox_detection_kernel(cls_prob, loc_pred, anchors, out, buf, keys, order, tmp, clip,
                          threshold, nms_threshold, force, nms_topk, vx, vy, vw, vh, zero, one,
                          half, req):
    """MultiBoxDetection of every batch item."""
    if req == REQ_NULL:
        return
    for b in range(cls_prob.shape[0]):
        mbox_detection_batch(cls_prob, loc_pred, anchors, out, buf, keys, order, tmp, b,
                             clip, threshold, nms_threshold, force, nms_topk, vx, vy, vw, vh,
                             zero, one, half)


@njit(cache=True, error_model="numpy")
def proposal_kernel(cls_prob, bbox_pred, im_info, out, out_score, props, keys, order, tmp,
                    ordered, area, supp, keep, status, out_s, score_s, base, stride, pre, post,
                    post_param, thresh, rpn_min_size, iou_loss, req0, req1):
    """(Multi)Proposal of every image; raises DetectionInputError when im_info exceeds the feature map."""
    if req0 == REQ_NULL and req1 == REQ_NULL:
        return
    o = out_s if req0 == REQ_NULL else out
    s = score_s if req1 == REQ_NULL else out_score
    for b in range(cls_prob.shape[0]):
        code = proposal_batch(cls_prob, bbox_pred, im_info, o, s, props, keys, order, tmp,
                              ordered, area, supp, keep, base, b, stride, pre, post,
                              post_param, thresh, rpn_min_size, iou_loss)
        if code == ERR_REAL_SIZE:
            raise DetectionInputError(REAL_SIZE_MSG)


def _launch(fn, args):
    views, scalars = args
    return Launch(fn, scalars, views=views)


def _prepare_box_nms(call):
    return _launch(box_nms_kernel, box_nms_args(call))


def _prepare_box_nms_backward(call):
    n = plan.size_of(call.in_shapes[0][:-1])
    w = int(call.in_shapes[0][-1])
    return Launch(box_nms_backward_kernel, (call.req[0],), views=[(n, w), (n,), (n, w)])


def _prepare_box_iou(call):
    return _launch(box_iou_kernel, box_iou_args(call))


def _prepare_bipartite(call):
    return _launch(bipartite_kernel, bipartite_args(call))


def _prepare_box_encode(call):
    return _launch(box_encode_kernel, box_encode_args(call))


def _prepare_box_decode(call):
    return _launch(box_decode_kernel, box_decode_args(call))


def _prepare_multibox_prior(call):
    return _launch(prior_kernel, prior_args(call))


def _prepare_multibox_target(call):
    return _launch(mbox_target_kernel, mbox_target_args(call))


def _prepare_multibox_detection(call):
    return _launch(mbox_detection_kernel, mbox_detection_args(call))


def _prepare_proposal(call):
    return _launch(proposal_kernel, proposal_args(call))


def _copy(dst, src):
    """float16 <-> float32 copy of two same-size host arrays."""
    np.copyto(dst.reshape(-1), src.reshape(-1), casting="unsafe")


# temp_<op> and prepare_<op> of every detection op (the names the op table gives)
globals().update(plan.device_table(globals(), _copy))
