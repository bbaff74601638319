"""Detection ops' math, written once for both devices (plain Python; imports
neither device).

Every function below is a per-box, per-pair or per-batch-item routine over
arrays and scalars.  ``compile_with(jit)`` compiles all of them with one
decorator (``njit(cache=True)`` in ``kernels.cpu.detection``,
``cuda.jit(device=True)`` in ``kernels.cuda.detection``), each calling the
others' compiled versions, so the CPU and CUDA kernels run the same code.
The per-batch routines are sequential (the CUDA kernels run one thread per
batch item, sorting included): ``stable_sort`` is a bottom-up merge sort in
caller-provided scratch, stable like the ``std::stable_sort`` MXNet's CPU
kernels use.

Arithmetic follows MXNet 1.9.1's CPU kernels: the box ops compute in the
data's dtype (``zero``/``half`` are passed in that dtype so float32 stays
float32); MultiBoxTarget's location targets and the Proposal ops compute in
float32 with the float64 sub-expressions MXNet's C++ has (``x + 0.5 * (w -
1.0)``).
"""
import math
import types

import numpy as np

# error codes returned by the per-batch routines (host code raises on them)
OK = 0
ERR_LABEL_PADDING = 1      # MultiBoxTarget: a label row with class -1 but other fields != -1
ERR_NEG_MINING = 2         # MultiBoxTarget: fewer negative candidates than requested
ERR_REAL_SIZE = 3          # Proposal: im_info asks for more rows/columns than the feature map

CORNER, CENTER = 0, 1


def stable_sort(keys, idx, tmp, n, desc):
    """Sort ``idx[:n]`` (positions into ``keys``) by ``keys[idx[i]]``, stable;
    ``desc``: descending.  ``tmp[:n]`` is scratch (same dtype as ``idx``)."""
    width = 1
    flips = 0
    while width < n:
        i = 0
        while i < n:
            mid = i + width
            if mid > n:
                mid = n
            hi = i + 2 * width
            if hi > n:
                hi = n
            a = i
            c = mid
            k = i
            while a < mid and c < hi:
                if flips % 2 == 0:
                    ia = idx[a]
                    ic = idx[c]
                else:
                    ia = tmp[a]
                    ic = tmp[c]
                ka = keys[ia]
                kc = keys[ic]
                right = (kc > ka) if desc else (kc < ka)
                if right:
                    v = ic
                    c += 1
                else:
                    v = ia
                    a += 1
                if flips % 2 == 0:
                    tmp[k] = v
                else:
                    idx[k] = v
                k += 1
            while a < mid:
                if flips % 2 == 0:
                    tmp[k] = idx[a]
                else:
                    idx[k] = tmp[a]
                a += 1
                k += 1
            while c < hi:
                if flips % 2 == 0:
                    tmp[k] = idx[c]
                else:
                    idx[k] = tmp[c]
                c += 1
                k += 1
            i += 2 * width
        flips += 1
        width *= 2
    if flips % 2 == 1:
        for i in range(n):
            idx[i] = tmp[i]


def intersect_1d(a, b, o, fmt, zero, half):
    """Overlap of boxes rows ``a`` and ``b`` along one axis: coordinates
    ``o`` and ``o + 2`` (MXNet's ``Intersect``), 0 when they do not meet."""
    a1 = a[o]
    a2 = a[o + 2]
    b1 = b[o]
    b2 = b[o + 2]
    if fmt == CORNER:
        left = a1 if a1 > b1 else b1
        right = a2 if a2 < b2 else b2
    else:
        aw = a2 * half
        bw = b2 * half
        al = a1 - aw
        ar = a1 + aw
        bl = b1 - bw
        br = b1 + bw
        left = bl if bl > al else al
        right = br if br < ar else ar
    w = right - left
    return w if w > zero else zero


def box_area(a, o, fmt, zero):
    """Area of the box at ``a[o:o + 4]`` (0 for a negative width or height)."""
    if fmt == CORNER:
        w = a[o + 2] - a[o]
        h = a[o + 3] - a[o + 1]
    else:
        w = a[o + 2]
        h = a[o + 3]
    if w < zero or h < zero:
        return zero
    return w * h


def box_iou_pair(a, b, fmt, zero, half):
    """IoU of 4-vectors ``a`` and ``b`` (MXNet's ``compute_overlap``)."""
    inter = intersect_1d(a, b, 0, fmt, zero, half) * intersect_1d(a, b, 1, fmt, zero, half)
    if inter <= zero:
        return zero
    return inter / (box_area(a, 0, fmt, zero) + box_area(b, 0, fmt, zero) - inter)


def convert_row(r, o, to_center, half):
    """Corner <-> center conversion of ``r[o:o + 4]`` in place; a row whose
    first coordinate is negative is left alone (MXNet's -1 padding test)."""
    x = r[o]
    if x < 0:
        return
    y = r[o + 1]
    c = r[o + 2]
    d = r[o + 3]
    if to_center:
        r[o] = (x + c) * half
        r[o + 1] = (y + d) * half
        r[o + 2] = c - x
        r[o + 3] = d - y
    else:
        w = c * half
        h = d * half
        r[o] = x - w
        r[o + 1] = y - h
        r[o + 2] = x + w
        r[o + 3] = y + h


def nms_batch(data, out, rec, order, tmp, scores, areas, b, topk, valid_thresh, thresh,
              cs, si, ii, bg, force, in_fmt, out_fmt, zero, half):
    """box_nms of batch item ``b``: data/out (B, N, W), rec (B, N) (the
    kept row's flat index ``b * N + j``, -1 after the kept rows), scratch
    order/tmp (B, N) int32, scores/areas (B, N) in the data's dtype."""
    N = data.shape[1]
    W = data.shape[2]
    nv = 0
    for j in range(N):
        s = data[b, j, si]
        ok = s > valid_thresh
        if ii >= 0 and not (data[b, j, ii] != bg):
            ok = False
        scores[b, j] = s
        if ok:
            order[b, nv] = j
            nv += 1
    stable_sort(scores[b], order[b], tmp[b], nv, True)
    k = nv if nv < topk else topk
    for t in range(k):
        areas[b, t] = box_area(data[b, order[b, t]], cs, in_fmt, zero)
        tmp[b, t] = 0
    for r in range(k):
        if tmp[b, r] != 0:
            continue
        jr = order[b, r]
        for p in range(r + 1, k):
            if tmp[b, p] != 0:
                continue
            jp = order[b, p]
            if not force and ii >= 0:
                if int(data[b, jr, ii]) != int(data[b, jp, ii]):
                    continue
            inter = (intersect_1d(data[b, jr], data[b, jp], cs, in_fmt, zero, half)
                     * intersect_1d(data[b, jr], data[b, jp], cs + 1, in_fmt, zero, half))
            iou = inter / (areas[b, r] + areas[b, p] - inter)
            if iou > thresh:
                tmp[b, p] = 1
    for j in range(N):
        rec[b, j] = -1
        for c in range(W):
            out[b, j, c] = -1
    cnt = 0
    for t in range(k):
        if tmp[b, t] == 0:
            j = order[b, t]
            for c in range(W):
                out[b, cnt, c] = data[b, j, c]
            rec[b, cnt] = b * N + j
            cnt += 1
    if in_fmt != out_fmt:
        for j in range(N):
            convert_row(out[b, j], cs, out_fmt == CENTER, half)


def bipartite_batch(score, rows, cols, order, tmp, b, N, M, threshold, is_ascend, topk):
    """bipartite_matching of batch item ``b``: score (B, N*M), rows (B, N),
    cols (B, M) (-1 = unmatched), scratch order/tmp (B, N*M) int32."""
    S = N * M
    for i in range(N):
        rows[b, i] = -1
    for i in range(M):
        cols[b, i] = -1
    for i in range(S):
        order[b, i] = i
    stable_sort(score[b], order[b], tmp[b], S, not is_ascend)
    count = 0
    for t in range(S):
        j = order[b, t]
        r = j // M
        c = j - r * M
        if rows[b, r] == -1 and cols[b, c] == -1:
            s = score[b, j]
            if (not is_ascend and s > threshold) or (is_ascend and s < threshold):
                rows[b, r] = c
                cols[b, c] = r
                count += 1
                if topk > 0 and count > topk:
                    break
            else:
                break


def box_encode_one(samples, matches, anchors, refs, means, stds, targets, masks, i, n, zero,
                   half, one):
    """box_encode of anchor ``i`` of the flat (B*N) anchors: anchors/targets/
    masks (B*N, 4), refs (B, M, 4), samples/matches (B*N,)."""
    j = i // n
    valid = samples[i] > half
    for c in range(4):
        masks[i, c] = one if valid else zero
    if not valid:
        for c in range(4):
            targets[i, c] = zero
        return
    m = int(matches[i])
    rx0 = refs[j, m, 0]
    ry0 = refs[j, m, 1]
    rw = refs[j, m, 2] - rx0
    rh = refs[j, m, 3] - ry0
    rx = rx0 + rw * half
    ry = ry0 + rh * half
    ax0 = anchors[i, 0]
    ay0 = anchors[i, 1]
    aw = anchors[i, 2] - ax0
    ah = anchors[i, 3] - ay0
    ax = ax0 + aw * half
    ay = ay0 + ah * half
    targets[i, 0] = ((rx - ax) / aw - means[0]) / stds[0]
    targets[i, 1] = ((ry - ay) / ah - means[1]) / stds[1]
    targets[i, 2] = (math.log(rw / aw) - means[2]) / stds[2]
    targets[i, 3] = (math.log(rh / ah) - means[3]) / stds[3]


def box_decode_one(x, anchors, out, i, n, s0, s1, s2, s3, clip, has_clip, fmt, half):
    """box_decode of box ``i`` of the flat (B*N, 4) data; anchors (N, 4)."""
    a = i % n
    ax = anchors[a, 0]
    ay = anchors[a, 1]
    aw = anchors[a, 2]
    ah = anchors[a, 3]
    if fmt == CORNER:
        aw = aw - ax
        ah = ah - ay
        ax = ax + aw * half
        ay = ay + ah * half
    ox = x[i, 0] * s0 * aw + ax
    oy = x[i, 1] * s1 * ah + ay
    dw = x[i, 2] * s2
    dh = x[i, 3] * s3
    if has_clip:
        dw = dw if dw < clip else clip
        dh = dh if dh < clip else clip
    dw = math.exp(dw)
    dh = math.exp(dh)
    ow = dw * aw * half
    oh = dh * ah * half
    out[i, 0] = ox - ow
    out[i, 1] = oy - oh
    out[i, 2] = ox + ow
    out[i, 3] = oy + oh


def prior_location(out, loc, W, sy, sx, oy, ox, hw, hh):
    """MultiBoxPrior's anchors of feature location ``loc`` (row-major over
    (H, W)): out (H*W*K, 4); hw/hh: the K half widths/heights (float32)."""
    r = loc // W
    c = loc - r * W
    cy = (np.float32(r) + oy) * sy
    cx = (np.float32(c) + ox) * sx
    K = len(hw)
    for k in range(K):
        q = loc * K + k
        out[q, 0] = cx - hw[k]
        out[q, 1] = cy - hh[k]
        out[q, 2] = cx + hw[k]
        out[q, 3] = cy + hh[k]


_FUNCS = ("stable_sort", "intersect_1d", "box_area", "box_iou_pair", "convert_row", "nms_batch",
          "bipartite_batch", "box_encode_one", "box_decode_one", "prior_location", "clip01",
          "cmax", "cmin", "best_gt", "mbox_target_batch", "mbox_overlap", "mbox_detection_batch",
          "proposal_batch")


def compile_with(jit):
    """Every routine of this module compiled by ``jit``, calling each other's
    compiled versions; returns a namespace of them.

    Parameters
    ----------
    jit : callable
        The decorator (``njit(cache=True)``, ``cuda.jit(device=True)``).
    """
    from . import detection_multibox as mb
    ns = dict(globals())
    ns.update({k: v for k, v in vars(mb).items() if not k.startswith("__")})
    for name in _FUNCS:
        f = ns[name]
        g = types.FunctionType(f.__code__, ns, name, f.__defaults__)
        g.__qualname__ = f.__qualname__
        g.__doc__ = f.__doc__
        ns[name] = jit(g)
    return types.SimpleNamespace(**{n: ns[n] for n in _FUNCS})
