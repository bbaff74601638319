"""Detection ops' prepare-time constants (host code shared by the CPU and
CUDA ``prepare`` functions): MultiBoxPrior's anchor half sizes and the RPN's
base anchors, computed in float32 as MXNet's C++ does."""
import math

import numpy as np

from ...ops.registry import REQ_NULL
from . import half_mirror


def prior_halves(sizes, ratios, H, W):
    """MultiBoxPrior's half width / half height of each anchor of a location
    (float32, MXNet's order: every size at the first ratio, then every other
    ratio at the first size)."""
    f = np.float32
    hw, hh = [], []
    r0 = f(math.sqrt(f(ratios[0])))
    for s in sizes:
        hw.append(f(f(f(f(f(s) * f(H)) / f(W)) * r0) / f(2)))
        hh.append(f(f(f(s) / r0) / f(2)))
    for r in ratios[1:]:
        rr = f(math.sqrt(f(r)))
        s = f(sizes[0])
        hw.append(f(f(f(f(s * f(H)) / f(W)) * rr) / f(2)))
        hh.append(f(f(s / rr) / f(2)))
    return tuple(hw), tuple(hh)


def proposal_anchors(feature_stride, ratios, scales):
    """The RPN's base anchors (A*4 float32 values, ratio-major), as MXNet's
    ``GenerateAnchors``."""
    f = np.float32
    base = [f(0.0), f(0.0), f(feature_stride - 1.0), f(feature_stride - 1.0)]
    out = []
    for r in ratios:
        for s in scales:
            w = f(base[2] - base[0] + f(1.0))
            h = f(base[3] - base[1] + f(1.0))
            xc = f(base[0] + 0.5 * (w - 1.0))
            yc = f(base[1] + 0.5 * (h - 1.0))
            size = f(w * h)
            size_ratios = f(math.floor(f(size / f(r))))
            nw = f(f(math.floor(f(f(math.sqrt(size_ratios)) + f(0.5)))) * f(s))
            nh = f(f(math.floor(f(f(f(nw / f(s)) * f(r)) + f(0.5)))) * f(s))
            out += [f(xc - f(0.5) * f(nw - f(1.0))), f(yc - f(0.5) * f(nh - f(1.0))),
                    f(xc + f(0.5) * f(nw - f(1.0))), f(yc + f(0.5) * f(nh - f(1.0)))]
    return tuple(out)


# -- layouts and scratch (the same on both devices) -------------------------------------------

I32 = np.dtype(np.int32)
F32 = np.dtype(np.float32)


def size_of(shape):
    """Number of elements of ``shape``."""
    n = 1
    for d in shape:
        n *= int(d)
    return n


def scratch_for(call, i, shape, dtype):
    """A stand-in buffer for output ``i`` when nobody reads it (``REQ_NULL``:
    its view overlaps other entries, so a kernel that always writes it works
    here instead); an empty one otherwise."""
    if call.req is not None and call.req[i] == REQ_NULL:
        return (tuple(shape), np.dtype(dtype))
    return ((0,) * len(shape), np.dtype(dtype))


def nms_layout(call):
    """(B, N, W): data viewed as (batch, boxes, box width)."""
    d = call.in_shapes[0]
    return size_of(d[:-2]), int(d[-2]), int(d[-1])


def temp_box_nms(call):
    """box_nms's scratch: sort order and merge buffer (B, N) int32, scores and areas (B, N), stand-ins
    for unread outputs."""
    B, N, W = nms_layout(call)
    dt = call.in_dtypes[0]
    return [((B, N), I32), ((B, N), I32), ((B, N), dt), ((B, N), dt),
            scratch_for(call, 0, (B, N, W), dt), scratch_for(call, 1, (B, N), dt)]


def encode_layout(call):
    """(B, N, M): anchors (B, N, 4), refs (B, M, 4)."""
    a, r = call.in_shapes[2], call.in_shapes[3]
    return int(a[0]), int(a[1]), int(r[1])


def temp_box_encode(call):
    """box_encode's stand-ins for unread outputs."""
    B, N, _ = encode_layout(call)
    dt = call.in_dtypes[2]
    return [scratch_for(call, 0, (B * N, 4), dt), scratch_for(call, 1, (B * N, 4), dt)]


def matching_layout(call):
    """(B, N, M): the score matrices."""
    d = call.in_shapes[0]
    return size_of(d[:-2]), int(d[-2]), int(d[-1])


def temp_bipartite(call):
    """bipartite_matching's scratch: sort order and merge buffer (B, N*M) int32, stand-ins for unread
    outputs."""
    B, N, M = matching_layout(call)
    dt = call.in_dtypes[0]
    return [((B, N * M), I32), ((B, N * M), I32),
            scratch_for(call, 0, (B, N), dt), scratch_for(call, 1, (B, M), dt)]


def temp_multibox_target(call):
    """MultiBoxTarget's scratch (see ``mbox_target_batch``), a status per batch item, stand-ins for
    unread outputs."""
    A = int(call.in_shapes[0][1])
    B, L = int(call.in_shapes[1][0]), int(call.in_shapes[1][1])
    dt = call.in_dtypes[0]
    return [((B, A, L), dt), ((B, A), F32), ((B, A), I32), ((B, A), I32), ((B, L), I32),
            ((B, A), F32), ((B, A), I32), ((B, A), I32), ((B,), I32),
            scratch_for(call, 0, (B, A * 4), dt), scratch_for(call, 1, (B, A * 4), dt),
            scratch_for(call, 2, (B, A), dt)]


def temp_multibox_detection(call):
    """MultiBoxDetection's scratch: the unsorted rows (B, A, 6), sort keys (B, A), order and merge
    buffer (B, A) int32."""
    B, _, A = (int(x) for x in call.in_shapes[0])
    dt = call.in_dtypes[0]
    return [((B, A, 6), dt), ((B, A), dt), ((B, A), I32), ((B, A), I32)]


def proposal_sizes(call):
    """(B, A, H, W, count, pre, post) of a (Multi)Proposal call."""
    B, C, H, W = (int(x) for x in call.in_shapes[0])
    A = C // 2
    cnt = A * H * W
    a = call.attrs
    pre = a["rpn_pre_nms_top_n"] if a["rpn_pre_nms_top_n"] > 0 else cnt
    pre = min(pre, cnt)
    post = min(a["rpn_post_nms_top_n"], pre)
    return B, A, H, W, cnt, pre, post


def temp_proposal(call):
    """(Multi)Proposal's scratch (see ``proposal_batch``), a status per image, stand-ins for unread
    outputs."""
    B, A, H, W, cnt, pre, post = proposal_sizes(call)
    P = call.attrs["rpn_post_nms_top_n"]
    return [((B, cnt, 5), F32), ((B, cnt), F32), ((B, cnt), I32), ((B, cnt), I32),
            ((B, pre, 5), F32), ((B, pre), F32), ((B, pre), I32), ((B, pre), I32),
            ((B,), I32), scratch_for(call, 0, (B * P, 5), F32),
            scratch_for(call, 1, (B * P,), F32)]


# -- float16: computed in float32 mirrors (shared with other op families) -----------------------

F16 = half_mirror.F16
has_half = half_mirror.has_half
as_f32 = half_mirror.as_f32
with_half = half_mirror.with_half
half_launch = half_mirror.half_launch


# op (its kernels' suffix) -> its float32 temp rule (None: no scratch)
_RULES = {
    "box_nms": temp_box_nms, "box_nms_backward": None, "box_iou": None,
    "bipartite": temp_bipartite, "box_encode": temp_box_encode, "box_decode": None,
    "multibox_prior": None, "multibox_target": temp_multibox_target,
    "multibox_detection": temp_multibox_detection, "proposal": temp_proposal,
}


def device_table(module_globals, copy):
    """The names a device's detection module gives the op table:
    ``temp_<op>`` (the temp rule, with float32 mirrors for float16 calls)
    and ``prepare_<op>`` (the module's ``_prepare_<op>``, a float16 call
    running the float32 kernel on the mirrors) for every detection op.

    Parameters
    ----------
    module_globals : dict
        The device module's namespace (its ``_prepare_<op>`` functions).
    copy : callable
        The device's converting copy ``copy(dst, src)``.

    Returns
    -------
    dict
    """
    out = {}
    for op, rule in _RULES.items():
        out[f"temp_{op}"] = with_half(rule)
        out[f"prepare_{op}"] = half_mirror.with_half_prepare(module_globals[f"_prepare_{op}"],
                                                             rule, copy)
    return out
