"""Views and scalars of the detection kernels (host code shared by the CPU
and CUDA ``prepare`` functions).  Each ``*_args(call)`` returns
``(views, scalars)``: the shape each array argument is viewed with (inputs,
outputs, temps; None: its own) and the kernel's trailing scalars, typed as
MXNet computes: the data's dtype for box math, float32 for MXNet's float
parameters compared with float data."""
import numpy as np

from ...ops.detection_box import FORMATS
from ...ops.detection_multibox import floats, prior_params, variances
from . import detection_plan as plan

F32 = np.float32


def _t(call, i=0):
    return np.dtype(call.in_dtypes[i]).type


def _fmt(name):
    return FORMATS.index(name)


def _none(call):
    return [None] * len(call.op.temps(call))


def box_nms_args(call):
    """(views, scalars) of the box_nms kernels for ``call``."""
    a = call.attrs
    B, N, W = plan.nms_layout(call)
    t = _t(call)
    topk = N if a["topk"] < 0 else min(N, a["topk"])
    views = [(B, N, W), (B, N, W), (B, N)] + _none(call)
    scalars = (int(topk), t(F32(a["valid_thresh"])), t(F32(a["overlap_thresh"])),
               int(a["coord_start"]), int(a["score_index"]), int(a["id_index"]),
               t(a["background_id"]), bool(a["force_suppress"]), _fmt(a["in_format"]),
               _fmt(a["out_format"]), t(0), t(0.5), int(call.req[0]), int(call.req[1]))
    return views, scalars


def box_iou_args(call):
    """(views, scalars) of the box_iou kernels for ``call``."""
    lhs, rhs = call.in_shapes
    L, R = plan.size_of(lhs[:-1]), plan.size_of(rhs[:-1])
    t = _t(call)
    return ([(L, 4), (R, 4), (L, R)],
            (_fmt(call.attrs["format"]), t(0), t(0.5), int(call.req[0])))


def bipartite_args(call):
    """(views, scalars) of the bipartite kernels for ``call``."""
    a = call.attrs
    B, N, M = plan.matching_layout(call)
    t = _t(call)
    views = [(B, N * M), (B, N), (B, M)] + _none(call)
    return views, (N, M, t(F32(a["threshold"])), bool(a["is_ascend"]), int(a["topk"]),
                   int(call.req[0]), int(call.req[1]))


def box_encode_args(call):
    """(views, scalars) of the box_encode kernels for ``call``."""
    B, N, M = plan.encode_layout(call)
    t = _t(call, 2)
    views = [(B * N,), (B * N,), (B * N, 4), (B, M, 4), (4,), (4,), (B * N, 4), (B * N, 4)]
    return views + _none(call), (N, t(0), t(0.5), t(1), int(call.req[0]), int(call.req[1]))


def box_decode_args(call):
    """(views, scalars) of the box_decode kernels for ``call``."""
    a = call.attrs
    B, N = int(call.in_shapes[0][0]), int(call.in_shapes[0][1])
    t = _t(call)
    return ([(B * N, 4), (N, 4), (B * N, 4)],
            (N, t(F32(a["std0"])), t(F32(a["std1"])), t(F32(a["std2"])), t(F32(a["std3"])),
             t(F32(a["clip"])), bool(a["clip"] > 0), _fmt(a["format"]), t(0.5),
             int(call.req[0])))


def prior_args(call):
    """(views, scalars) of the prior kernels for ``call``."""
    sizes, ratios, steps, offsets = prior_params(call.attrs)
    H, W = int(call.in_shapes[0][2]), int(call.in_shapes[0][3])
    if steps[0] <= 0 or steps[1] <= 0:
        sy, sx = F32(1.0) / F32(H), F32(1.0) / F32(W)
    else:
        sy, sx = F32(steps[0]), F32(steps[1])
    hw, hh = plan.prior_halves(sizes, ratios, H, W)
    t = np.dtype(call.out_dtypes[0]).type
    n = int(call.out_shapes[0][1])
    return ([(plan.size_of(call.in_shapes[0]),), (n, 4)],
            (W, sy, sx, F32(offsets[0]), F32(offsets[1]), hw, hh, bool(call.attrs["clip"]),
             t(0), t(1), int(call.req[0])))


def mbox_target_args(call):
    """(views, scalars) of the mbox_target kernels for ``call``."""
    a = call.attrs
    A = int(call.in_shapes[0][1])
    t = _t(call)
    vx, vy, vw, vh = (F32(v) for v in variances(a, "_contrib_MultiBoxTarget"))
    views = [(A, 4), None, None, None, None, None] + _none(call)
    return views, (F32(a["overlap_threshold"]), t(F32(a["ignore_label"])),
                   F32(a["negative_mining_ratio"]), F32(a["negative_mining_thresh"]),
                   int(a["minimum_negative_samples"]), vx, vy, vw, vh, t(0),
                   int(call.req[0]), int(call.req[1]), int(call.req[2]))


def mbox_detection_args(call):
    """(views, scalars) of the mbox_detection kernels for ``call``."""
    a = call.attrs
    A = int(call.in_shapes[0][2])
    t = _t(call)
    vx, vy, vw, vh = (F32(v) for v in variances(a, "_contrib_MultiBoxDetection"))
    views = [None, None, (A, 4), None] + _none(call)
    return views, (bool(a["clip"]), t(F32(a["threshold"])), t(F32(a["nms_threshold"])),
                   bool(a["force_suppress"]), int(a["nms_topk"]), vx, vy, vw, vh, t(0), t(1),
                   t(0.5), int(call.req[0]))


def proposal_args(call):
    """(views, scalars) of the proposal kernels for ``call``."""
    a = call.attrs
    B, A, H, W, cnt, pre, post = plan.proposal_sizes(call)
    P = int(a["rpn_post_nms_top_n"])
    base = plan.proposal_anchors(a["feature_stride"], floats(a, "ratios", call.op.name),
                                 floats(a, "scales", call.op.name))
    views = [None, None, None, (B * P, 5), (B * P,)] + _none(call)
    return views, (base, int(a["feature_stride"]), int(pre), int(post), P,
                   F32(a["threshold"]), int(a["rpn_min_size"]), bool(a["iou_loss"]),
                   int(call.req[0]), int(call.req[1]))
