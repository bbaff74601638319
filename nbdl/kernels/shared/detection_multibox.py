"""MultiBoxTarget, MultiBoxDetection and (Multi)Proposal per-batch routines
(plain Python, compiled for both devices by ``detection.compile_with``; see
that module's docstring)."""
import math

import numpy as np

from .detection import OK, ERR_LABEL_PADDING, ERR_NEG_MINING, ERR_REAL_SIZE, stable_sort


def clip01(v, zero, one):
    """MXNet's clip_zero_one: NaN stays NaN."""
    if v < zero:
        return zero
    if v > one:
        return one
    return v


def cmax(a, b):
    """``std::max(a, b)``: ``a`` unless ``a < b`` (so NaN handling follows MXNet's C++)."""
    # std::max(a, b): a unless a < b
    return b if a < b else a


def cmin(a, b):
    """``std::min(a, b)``: ``a`` unless ``b < a``."""
    # std::min(a, b): a unless b < a
    return b if b < a else a


def best_gt(overlaps, b, j, ng):
    """The ground-truth box anchor ``j`` of batch ``b`` overlaps most, and that
    overlap (float32); ``(-1, -1)`` when none overlaps above -1."""
    bgt = -1
    mi = np.float32(-1.0)
    for k in range(ng):
        v = np.float32(overlaps[b, j, k])
        if v > mi:
            bgt = k
            mi = v
    return bgt, mi


def mbox_target_batch(anchors, labels, cls_preds, loc_t, loc_m, cls_t, overlaps, max_iou,
                      best, flags, gt_flags, neg_keys, neg_idx, neg_tmp, b, overlap_threshold,
                      ignore_label, ratio, neg_thresh, min_neg, vx, vy, vw, vh, zero):
    """MultiBoxTarget of batch item ``b``: anchors (A, 4), labels (B, L, Wl),
    cls_preds (B, C, A), loc_t/loc_m (B, A*4), cls_t (B, A); scratch overlaps
    (B, A, L), max_iou (B, A) float32, best/flags/neg_idx/neg_tmp (B, A) and
    gt_flags (B, L) int32, neg_keys (B, A) float32.  Returns an error code."""
    A = anchors.shape[0]
    L = labels.shape[1]
    C = cls_preds.shape[1]
    for i in range(A * 4):
        loc_t[b, i] = zero
        loc_m[b, i] = zero
    for i in range(A):
        cls_t[b, i] = ignore_label
    ng = 0
    for i in range(L):
        if labels[b, i, 0] == -1:
            for c in range(1, 5):
                if labels[b, i, c] != -1:
                    return ERR_LABEL_PADDING
            break
        ng += 1
    if ng == 0:
        return OK
    for j in range(A):
        al = anchors[j, 0]
        at = anchors[j, 1]
        ar = anchors[j, 2]
        ab = anchors[j, 3]
        for k in range(ng):
            gl = labels[b, k, 1]
            gt = labels[b, k, 2]
            gr = labels[b, k, 3]
            gb = labels[b, k, 4]
            iw = (ar if ar < gr else gr) - (al if al > gl else gl)
            iw = zero if zero > iw else iw
            ih = (ab if ab < gb else gb) - (at if at > gt else gt)
            ih = zero if zero > ih else ih
            inter = iw * ih
            union = (ar - al) * (ab - at) + (gr - gl) * (gb - gt) - inter
            overlaps[b, j, k] = zero if union == zero else inter / union
        max_iou[b, j] = np.float32(-1.0)
        best[b, j] = -1
        flags[b, j] = -1
    for k in range(ng):
        gt_flags[b, k] = 0
    npos = 0
    # greedy bipartite stage: best remaining (anchor, gt) pair until every gt is matched
    while True:
        left = False
        for k in range(ng):
            if gt_flags[b, k] == 0:
                left = True
        if not left:
            break
        ba = -1
        bgt = -1
        mo = np.float32(1e-6)
        for j in range(A):
            if flags[b, j] == 1:
                continue
            for k in range(ng):
                if gt_flags[b, k] != 0:
                    continue
                v = np.float32(overlaps[b, j, k])
                if v > mo:
                    ba = j
                    bgt = k
                    mo = v
        if ba == -1:
            break
        max_iou[b, ba] = mo
        best[b, ba] = bgt
        npos += 1
        gt_flags[b, bgt] = 1
        flags[b, ba] = 1
    if overlap_threshold > 0:
        for j in range(A):
            if flags[b, j] == 1:
                continue
            bgt, mi = best_gt(overlaps, b, j, ng)
            if bgt != -1:
                max_iou[b, j] = mi
                best[b, j] = bgt
                if mi > overlap_threshold:
                    npos += 1
                    gt_flags[b, bgt] = 1
                    flags[b, j] = 1
    if ratio > 0:
        nneg = int(npos * ratio)
        if nneg > A - npos:
            nneg = A - npos
        if nneg > 0:
            cnt = 0
            for j in range(A):
                if flags[b, j] == 1:
                    continue
                if max_iou[b, j] < 0:
                    bgt, mi = best_gt(overlaps, b, j, ng)
                    if bgt != -1:
                        max_iou[b, j] = mi
                        best[b, j] = bgt
                if max_iou[b, j] < neg_thresh and flags[b, j] == -1:
                    mv = cls_preds[b, 0, j]
                    for k in range(1, C):
                        v = cls_preds[b, k, j]
                        if v > mv:
                            mv = v
                    s = zero
                    for k in range(C):
                        s += math.exp(cls_preds[b, k, j] - mv)
                    prob = math.exp(cls_preds[b, 0, j] - mv) / s
                    neg_keys[b, j] = np.float32(-prob)
                    neg_idx[b, cnt] = j
                    cnt += 1
            if cnt < nneg:
                return ERR_NEG_MINING
            stable_sort(neg_keys[b], neg_idx[b], neg_tmp[b], cnt, True)
            for i in range(nneg):
                flags[b, neg_idx[b, i]] = 0
    else:
        for j in range(A):
            if flags[b, j] != 1:
                flags[b, j] = 0
    for j in range(A):
        if flags[b, j] == 1:
            g = best[b, j]
            cls_t[b, j] = labels[b, g, 0] + 1
            for c in range(4):
                loc_m[b, j * 4 + c] = 1
            al = np.float32(anchors[j, 0])
            at = np.float32(anchors[j, 1])
            ar = np.float32(anchors[j, 2])
            ab = np.float32(anchors[j, 3])
            aw = ar - al
            ah = ab - at
            ax = np.float32((al + ar) * 0.5)
            ay = np.float32((at + ab) * 0.5)
            gl = np.float32(labels[b, g, 1])
            gt = np.float32(labels[b, g, 2])
            gr = np.float32(labels[b, g, 3])
            gb = np.float32(labels[b, g, 4])
            gw = gr - gl
            gh = gb - gt
            gx = np.float32((gl + gr) * 0.5)
            gy = np.float32((gt + gb) * 0.5)
            loc_t[b, j * 4] = (gx - ax) / aw / vx
            loc_t[b, j * 4 + 1] = (gy - ay) / ah / vy
            loc_t[b, j * 4 + 2] = math.log(gw / aw) / vw
            loc_t[b, j * 4 + 3] = math.log(gh / ah) / vh
        elif flags[b, j] == 0:
            cls_t[b, j] = zero
    return OK


def mbox_overlap(p, i, j, zero):
    """MultiBoxDetection's CalculateOverlap of rows i and j of p (rows of 6)."""
    w = cmax(zero, cmin(p[i, 4], p[j, 4]) - cmax(p[i, 2], p[j, 2]))
    h = cmax(zero, cmin(p[i, 5], p[j, 5]) - cmax(p[i, 3], p[j, 3]))
    inter = w * h
    u = ((p[i, 4] - p[i, 2]) * (p[i, 5] - p[i, 3]) + (p[j, 4] - p[j, 2]) * (p[j, 5] - p[j, 3])
         - inter)
    if u <= zero:
        return zero
    return inter / u


def mbox_detection_batch(cls_prob, loc_pred, anchors, out, buf, keys, order, tmp, b, clip,
                         threshold, nms_threshold, force, nms_topk, vx, vy, vw, vh, zero, one,
                         half):
    """MultiBoxDetection of batch item ``b``: cls_prob (B, C, A), loc_pred
    (B, A*4), anchors (A, 4), out (B, A, 6); scratch buf (B, A, 6) and keys
    (B, A) in the data's dtype, order/tmp (B, A) int32."""
    C = cls_prob.shape[1]
    A = cls_prob.shape[2]
    for i in range(A):
        for c in range(6):
            out[b, i, c] = -1
    for i in range(A):
        score = zero - one
        cid = 0
        for j in range(1, C):
            v = cls_prob[b, j, i]
            if v > score:
                score = v
                cid = j
        if cid > 0 and score < threshold:
            cid = 0
        buf[b, i, 0] = cid - 1
        buf[b, i, 1] = score
        al = anchors[i, 0]
        at = anchors[i, 1]
        ar = anchors[i, 2]
        ab = anchors[i, 3]
        aw = ar - al
        ah = ab - at
        ax = (al + ar) * half
        ay = (at + ab) * half
        ox = loc_pred[b, i * 4] * vx * aw + ax
        oy = loc_pred[b, i * 4 + 1] * vy * ah + ay
        ow = math.exp(loc_pred[b, i * 4 + 2] * vw) * aw * half
        oh = math.exp(loc_pred[b, i * 4 + 3] * vh) * ah * half
        x0 = ox - ow
        y0 = oy - oh
        x1 = ox + ow
        y1 = oy + oh
        if clip:
            x0 = cmax(zero, cmin(one, x0))
            y0 = cmax(zero, cmin(one, y0))
            x1 = cmax(zero, cmin(one, x1))
            y1 = cmax(zero, cmin(one, y1))
        buf[b, i, 2] = x0
        buf[b, i, 3] = y0
        buf[b, i, 4] = x1
        buf[b, i, 5] = y1
    vc = 0
    for i in range(A):
        if buf[b, i, 0] >= 0:
            for c in range(6):
                out[b, vc, c] = buf[b, i, c]
            vc += 1
    if vc < 1 or nms_threshold <= 0 or nms_threshold > 1:
        return
    for i in range(A):
        for c in range(6):
            buf[b, i, c] = out[b, i, c]
    for i in range(vc):
        keys[b, i] = out[b, i, 1]
        order[b, i] = i
    stable_sort(keys[b], order[b], tmp[b], vc, True)
    nkeep = vc
    if nms_topk > 0 and nms_topk < nkeep:
        nkeep = nms_topk
        for i in range(nkeep, vc):
            out[b, i, 0] = -1
    for i in range(nkeep):
        for c in range(6):
            out[b, i, c] = buf[b, order[b, i], c]
    for i in range(nkeep):
        if out[b, i, 0] < 0:
            continue
        for j in range(i + 1, nkeep):
            if out[b, j, 0] < 0:
                continue
            if force or out[b, i, 0] == out[b, j, 0]:
                if mbox_overlap(out[b], i, j, zero) >= nms_threshold:
                    out[b, j, 0] = -1


def proposal_batch(cls_prob, bbox_pred, im_info, out, out_score, props, keys, order, tmp,
                   ordered, area, supp, keep, base, b, stride, pre, post, post_param, thresh,
                   rpn_min_size, iou_loss):
    """(Multi)Proposal of image ``b`` (float32): cls_prob (B, 2A, H, W),
    bbox_pred (B, 4A, H, W), im_info (B, 3), out (B*P, 5), out_score (B*P,)
    with P = post_param; scratch props (B, A*H*W, 5), keys (B, A*H*W),
    ordered (B, pre, 5), area (B, pre) float32, order/tmp (B, A*H*W) and
    supp/keep (B, pre) int32; ``base`` the (A*4,) base anchors.  Returns an
    error code."""
    A = cls_prob.shape[1] // 2
    H = cls_prob.shape[2]
    W = cls_prob.shape[3]
    cnt = A * H * W
    im_h = np.float32(im_info[b, 0])
    im_w = np.float32(im_info[b, 1])
    real_h = int(im_h / np.float32(stride))
    real_w = int(im_w / np.float32(stride))
    if real_h > H or real_w > W:
        return ERR_REAL_SIZE
    min_size = np.float32(rpn_min_size) * np.float32(im_info[b, 2])
    for idx in range(cnt):
        i = idx % A
        k = (idx // A) % W
        j = idx // (W * A)
        x1 = base[i * 4] + np.float32(k * stride)
        y1 = base[i * 4 + 1] + np.float32(j * stride)
        x2 = base[i * 4 + 2] + np.float32(k * stride)
        y2 = base[i * 4 + 3] + np.float32(j * stride)
        sc = np.float32(cls_prob[b, A + i, j, k])
        dx = np.float32(bbox_pred[b, i * 4, j, k])
        dy = np.float32(bbox_pred[b, i * 4 + 1, j, k])
        dw = np.float32(bbox_pred[b, i * 4 + 2, j, k])
        dh = np.float32(bbox_pred[b, i * 4 + 3, j, k])
        if iou_loss:
            p1 = x1 + dx
            q1 = y1 + dy
            p2 = x2 + dw
            q2 = y2 + dh
        else:
            width = np.float32(x2 - x1 + 1.0)
            height = np.float32(y2 - y1 + 1.0)
            cx = np.float32(x1 + 0.5 * (width - 1.0))
            cy = np.float32(y1 + 0.5 * (height - 1.0))
            pcx = dx * width + cx
            pcy = dy * height + cy
            pw = np.float32(math.exp(dw)) * width
            ph = np.float32(math.exp(dh)) * height
            p1 = np.float32(pcx - 0.5 * (pw - 1.0))
            q1 = np.float32(pcy - 0.5 * (ph - 1.0))
            p2 = np.float32(pcx + 0.5 * (pw - 1.0))
            q2 = np.float32(pcy + 0.5 * (ph - 1.0))
        wm = im_w - np.float32(1.0)
        hm = im_h - np.float32(1.0)
        z = np.float32(0.0)
        p1 = cmax(cmin(p1, wm), z)
        q1 = cmax(cmin(q1, hm), z)
        p2 = cmax(cmin(p2, wm), z)
        q2 = cmax(cmin(q2, hm), z)
        if j >= real_h or k >= real_w:
            sc = np.float32(-1.0)
        iw = p2 - p1 + np.float32(1.0)
        ih = q2 - q1 + np.float32(1.0)
        if iw < min_size or ih < min_size:
            hs = min_size / np.float32(2.0)
            p1 -= hs
            q1 -= hs
            p2 += hs
            q2 += hs
            sc = np.float32(-1.0)
        props[b, idx, 0] = p1
        props[b, idx, 1] = q1
        props[b, idx, 2] = p2
        props[b, idx, 3] = q2
        props[b, idx, 4] = sc
        keys[b, idx] = sc
        order[b, idx] = idx
    stable_sort(keys[b], order[b], tmp[b], cnt, True)
    for i in range(pre):
        for c in range(5):
            ordered[b, i, c] = props[b, order[b, i], c]
        area[b, i] = ((ordered[b, i, 2] - ordered[b, i, 0] + np.float32(1.0))
                      * (ordered[b, i, 3] - ordered[b, i, 1] + np.float32(1.0)))
        supp[b, i] = 0
    n_out = 0
    for i in range(pre):
        if n_out >= post:
            break
        if supp[b, i] != 0:
            continue
        keep[b, n_out] = i
        n_out += 1
        ix1 = ordered[b, i, 0]
        iy1 = ordered[b, i, 1]
        ix2 = ordered[b, i, 2]
        iy2 = ordered[b, i, 3]
        for j in range(i + 1, pre):
            if supp[b, j] != 0:
                continue
            xx1 = cmax(ix1, ordered[b, j, 0])
            yy1 = cmax(iy1, ordered[b, j, 1])
            xx2 = cmin(ix2, ordered[b, j, 2])
            yy2 = cmin(iy2, ordered[b, j, 3])
            w = cmax(np.float32(0.0), xx2 - xx1 + np.float32(1.0))
            h = cmax(np.float32(0.0), yy2 - yy1 + np.float32(1.0))
            inter = w * h
            ovr = inter / (area[b, i] + area[b, j] - inter)
            if ovr > thresh:
                supp[b, j] = 1
    for i in range(post_param):
        q = b * post_param + i
        s = keep[b, i] if i < n_out else keep[b, i % n_out]
        out[q, 0] = b
        for c in range(4):
            out[q, c + 1] = ordered[b, s, c]
        out_score[q] = ordered[b, s, 4]
    return OK
