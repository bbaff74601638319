"""MXNet 1.9.1's SSD and Faster R-CNN contrib ops (rules only; kernels in
``nbdl.kernels.*.detection``): _contrib_MultiBoxPrior, _contrib_MultiBoxTarget,
_contrib_MultiBoxDetection, _contrib_Proposal and _contrib_MultiProposal.

All five are float32 only, as in MXNet 1.9.1 (legacy operators without a
type rule: MXNet refuses float16 and float64 inputs).  All five have zero
gradients in MXNet (MultiBoxTarget's legacy backward
writes only cls_pred's; nbdl gives every input a zero gradient).  The tuple
attributes (sizes, ratios, steps, offsets, variances, scales) hold floats and
are kept as MXNet's strings (``"(0.1, 0.1, 0.2, 0.2)"``), parsed by
``floats``.
"""
import ast

import numpy as np

from ..errors import AttrError, NbdlError
from .detection_box import fix_shape, kernels, same_type_all, temps, zero_grads
from .registry import Attr, OpDef, register, shape_error

F32 = (np.dtype(np.float32),)


class DetectionInputError(NbdlError, ValueError):
    """Input values a detection op cannot use (MXNet's CHECK failures in
    MultiBoxTarget and Proposal): badly padded labels, too few negative
    candidates, an im_info larger than the feature map."""


LABEL_PADDING_MSG = ("_contrib_MultiBoxTarget: a label row with class -1 has a coordinate "
                     "!= -1 (pad labels with whole rows of -1)")
NEG_MINING_MSG = ("_contrib_MultiBoxTarget: fewer negative candidates (IoU < "
                  "negative_mining_thresh) than negative_mining_ratio asks for")
REAL_SIZE_MSG = ("Proposal: im_info's height or width divided by feature_stride exceeds "
                 "the feature map")


def floats(attrs, name, where):
    """Attribute ``name`` (a string like ``"(1.0, 0.5)"``, a number or a
    sequence) as a tuple of floats; raises AttrError naming ``where``."""
    v = attrs[name]
    if isinstance(v, str):
        s = v.strip()
        try:
            v = ast.literal_eval(s) if s not in ("", "()", "[]") else ()
        except (ValueError, SyntaxError):
            raise AttrError(f"{where}: {name}={attrs[name]!r} is not a tuple of floats") from None
    if isinstance(v, (int, float)):
        v = (v,)
    try:
        return tuple(float(x) for x in v)
    except (TypeError, ValueError):
        raise AttrError(f"{where}: {name}={attrs[name]!r} is not a tuple of floats") from None


# -- _contrib_MultiBoxPrior -----------------------------------------------------------------

def prior_params(attrs, where="_contrib_MultiBoxPrior"):
    """(sizes, ratios, steps, offsets) checked as MXNet's constructor does."""
    sizes, ratios = floats(attrs, "sizes", where), floats(attrs, "ratios", where)
    steps, offsets = floats(attrs, "steps", where), floats(attrs, "offsets", where)
    if not sizes or not ratios:
        raise AttrError(f"{where}: sizes and ratios must not be empty (sizes={sizes}, "
                        f"ratios={ratios})")
    if len(steps) != 2 or len(offsets) != 2:
        raise AttrError(f"{where}: steps and offsets must hold 2 values (y, x), got "
                        f"steps={steps}, offsets={offsets}")
    if not all(0.0 <= o <= 1.0 for o in offsets):
        raise AttrError(f"{where}: offsets={offsets} must lie in [0, 1]")
    if steps[0] * steps[1] < 0:
        raise AttrError(f"{where}: steps={steps}: give both step_y and step_x or neither")
    return sizes, ratios, steps, offsets


def _prior_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    where = "_contrib_MultiBoxPrior"
    sizes, ratios, _, _ = prior_params(attrs)
    if len(d) < 4 or d[2] <= 0 or d[3] <= 0:
        raise shape_error(where, f"data must be 4-d (batch, channel, y, x) with positive y "
                                 f"and x, got shape {tuple(d)}", in_shapes)
    return in_shapes, [(1, d[2] * d[3] * (len(sizes) + len(ratios) - 1), 4)]


register(OpDef(
    name="_contrib_MultiBoxPrior",
    attrs={"sizes": Attr("str", "(1.0,)"), "ratios": Attr("str", "(1.0,)"),
           "clip": Attr("bool", False), "steps": Attr("str", "(-1.0, -1.0)"),
           "offsets": Attr("str", "(0.5, 0.5)")},
    infer_shape=_prior_shape, infer_type=same_type_all(1, 1), gradient=zero_grads,
    kernels=kernels("prepare_multibox_prior"), shape_inputs=(0,), dtypes=F32,
    temp=temps("temp_multibox_prior"),
    doc="SSD anchor boxes (1, H*W*(len(sizes)+len(ratios)-1), 4) in corner format for a "
        "(B, C, H, W) feature map: per location every size at the first ratio, then every "
        "other ratio at the first size; steps -1 means 1/H, 1/W; clip clips to [0, 1].  "
        "data is read for its shape only.  Zero gradient."),
    aliases=("_npx_multibox_prior",))


# -- _contrib_MultiBoxTarget ----------------------------------------------------------------

def variances(attrs, where):
    """The 4 variances (x, y, w, h) of attribute ``variances``; AttrError otherwise.

    Parameters
    ----------
    attrs : dict
        The parsed attributes.
    where : str
        The op name for the message."""
    v = floats(attrs, "variances", where)
    if len(v) != 4:
        raise AttrError(f"{where}: variances={v} must hold 4 values")
    return v


def _target_shape(attrs, in_shapes, out_shapes):
    a, lab, p = in_shapes
    where = "_contrib_MultiBoxTarget"
    variances(attrs, where)
    if a is not None and (len(a) != 3 or a[0] != 1 or a[1] <= 0 or a[2] != 4):
        raise shape_error(where, f"anchor must be (1, num_anchors > 0, 4), shared across the "
                                 f"batch; got shape {tuple(a)}", in_shapes)
    if lab is not None and (len(lab) != 3 or lab[1] <= 0 or lab[2] < 5):
        raise shape_error(where, f"label must be (batch, num_labels > 0, width >= 5), got "
                                 f"shape {tuple(lab)}", in_shapes)
    if p is not None and len(p) != 3:
        raise shape_error(where, f"cls_pred must be (batch, num_classes, num_anchors), got "
                                 f"shape {tuple(p)}", in_shapes)
    if a is not None and p is not None and p[2] != a[1]:
        raise shape_error(where, f"cls_pred has {p[2]} anchors, anchor {a[1]}", in_shapes)
    if lab is not None and p is not None and p[0] != lab[0]:
        raise shape_error(where, f"cls_pred has batch {p[0]}, label {lab[0]}", in_shapes)
    if a is None or lab is None:
        return in_shapes, out_shapes
    return in_shapes, [(lab[0], a[1] * 4), (lab[0], a[1] * 4), (lab[0], a[1])]


register(OpDef(
    name="_contrib_MultiBoxTarget", input_names=("anchor", "label", "cls_pred"),
    num_outputs=3, output_names=("loc_target", "loc_mask", "cls_target"),
    attrs={"overlap_threshold": Attr("float", 0.5), "ignore_label": Attr("float", -1.0),
           "negative_mining_ratio": Attr("float", -1.0),
           "negative_mining_thresh": Attr("float", 0.5),
           "minimum_negative_samples": Attr("int", 0),
           "variances": Attr("str", "(0.1, 0.1, 0.2, 0.2)")},
    infer_shape=_target_shape, infer_type=same_type_all(3, 3), gradient=zero_grads,
    temp=temps("temp_multibox_target"), kernels=kernels("prepare_multibox_target"),
    dtypes=F32,
    doc="SSD training targets: each ground truth (label rows [cls, x0, y0, x1, y1], "
        "padded with -1) matched greedily to its best anchor, then every other anchor "
        "with IoU > overlap_threshold to its best ground truth; negatives are all others, "
        "or with negative_mining_ratio > 0 the ratio * positives anchors of IoU < "
        "negative_mining_thresh with the lowest background softmax probability.  Outputs "
        "loc_target (B, A*4, variance-scaled centre offsets), loc_mask and cls_target (B, A; "
        "class + 1, 0 for negatives, ignore_label otherwise).  Zero gradient."),
    aliases=("_npx_multibox_target",))


# -- _contrib_MultiBoxDetection -------------------------------------------------------------

def _detection_shape(attrs, in_shapes, out_shapes):
    c, loc, a = in_shapes
    where = "_contrib_MultiBoxDetection"
    variances(attrs, where)
    for name, s, nd in (("cls_prob", c, 3), ("loc_pred", loc, 2), ("anchor", a, 3)):
        if s is not None and len(s) != nd:
            raise shape_error(where, f"{name} must be {nd}-d, got shape {tuple(s)}", in_shapes)
    if a is not None and (a[1] <= 0 or a[2] != 4):
        raise shape_error(where, f"anchor must be (1, num_anchors > 0, 4), got shape "
                                 f"{tuple(a)}", in_shapes)
    if c is not None and a is not None and c[2] != a[1]:
        raise shape_error(where, f"cls_prob has {c[2]} anchors, anchor {a[1]}", in_shapes)
    if c is not None and loc is not None and (c[2] * 4 != loc[1] or loc[0] != c[0]):
        raise shape_error(where, f"loc_pred must be (batch, 4 * num_anchors) = "
                                 f"{(c[0], c[2] * 4)}, got {tuple(loc)}", in_shapes)
    if a is not None and a[0] != 1:
        raise shape_error(where, f"anchor must be (1, num_anchors, 4), got shape {tuple(a)}",
                          in_shapes)
    if c is None or a is None:
        return in_shapes, out_shapes
    return in_shapes, [(c[0], a[1], 6)]


register(OpDef(
    name="_contrib_MultiBoxDetection", input_names=("cls_prob", "loc_pred", "anchor"),
    attrs={"clip": Attr("bool", True), "threshold": Attr("float", 0.01),
           "background_id": Attr("int", 0), "nms_threshold": Attr("float", 0.5),
           "force_suppress": Attr("bool", False),
           "variances": Attr("str", "(0.1, 0.1, 0.2, 0.2)"), "nms_topk": Attr("int", -1)},
    infer_shape=_detection_shape, infer_type=same_type_all(3, 1), gradient=zero_grads,
    temp=temps("temp_multibox_detection"), kernels=kernels("prepare_multibox_detection"),
    dtypes=F32,
    doc="SSD detections (B, A, 6) [class, score, x0, y0, x1, y1]: per anchor the best "
        "non-background class (class 0 is background whatever background_id says, as in "
        "MXNet) if its probability reaches threshold, the box decoded from loc_pred with "
        "variances (clipped to [0, 1] with clip); valid rows first, sorted by score "
        "(stable), the first nms_topk kept, then NMS (IoU >= nms_threshold, same class "
        "unless force_suppress) marks suppressed rows' class -1.  Zero gradient."),
    aliases=("_npx_multibox_detection",))


# -- _contrib_Proposal / _contrib_MultiProposal -----------------------------------------------

PROPOSAL_ATTRS = {
    "rpn_pre_nms_top_n": Attr("int", 6000), "rpn_post_nms_top_n": Attr("int", 300),
    "threshold": Attr("float", 0.7), "rpn_min_size": Attr("int", 16),
    "scales": Attr("str", "(4.0, 8.0, 16.0, 32.0)"), "ratios": Attr("str", "(0.5, 1.0, 2.0)"),
    "feature_stride": Attr("int", 16), "output_score": Attr("bool", False),
    "iou_loss": Attr("bool", False)}


def proposal_shape(name, multi):
    """Shape rule of _contrib_Proposal (``multi=False``: one image) or
    _contrib_MultiProposal."""
    def rule(attrs, in_shapes, out_shapes):
        c = in_shapes[0]
        if c is None:
            return in_shapes, out_shapes
        scales, ratios = floats(attrs, "scales", name), floats(attrs, "ratios", name)
        if len(c) != 4:
            raise shape_error(name, f"cls_prob must be (batch, 2 * anchors, H, W), got shape "
                                    f"{tuple(c)}", in_shapes)
        if c[1] != 2 * len(scales) * len(ratios):
            raise shape_error(name, f"cls_prob has {c[1]} channels, expected 2 * "
                                    f"len(scales) * len(ratios) = "
                                    f"{2 * len(scales) * len(ratios)}", in_shapes)
        if not multi and c[0] != 1:
            raise shape_error(name, f"one image per call (batch 1, as MXNet; use "
                                    f"MultiProposal for more), got cls_prob {tuple(c)}",
                              in_shapes)
        if c[2] * c[3] == 0 or attrs["rpn_post_nms_top_n"] <= 0:
            raise shape_error(name, "the feature map must be non-empty and "
                                    f"rpn_post_nms_top_n={attrs['rpn_post_nms_top_n']} "
                                    "positive", in_shapes)
        bbox = fix_shape(name, "bbox_pred", in_shapes[1], (c[0], c[1] * 2, c[2], c[3]),
                          in_shapes)
        info = fix_shape(name, "im_info", in_shapes[2], (c[0], 3), in_shapes)
        n = c[0] * attrs["rpn_post_nms_top_n"]
        return [tuple(c), bbox, info], [(n, 5), (n, 1)]
    return rule


for _name, _multi in (("_contrib_Proposal", False), ("_contrib_MultiProposal", True)):
    register(OpDef(
        name=_name, input_names=("cls_prob", "bbox_pred", "im_info"), num_outputs=2,
        num_visible_outputs=lambda attrs: 2 if attrs["output_score"] else 1,
        output_names=("output", "score"), attrs=dict(PROPOSAL_ATTRS),
        infer_shape=proposal_shape(_name, _multi), infer_type=same_type_all(3, 2),
        gradient=zero_grads, temp=temps("temp_proposal"), kernels=kernels("prepare_proposal"),
        dtypes=F32,
        doc="Faster R-CNN region proposals (float32): anchors from scales x ratios at every "
            "feature_stride, shifted by bbox_pred (or added, iou_loss), clipped to im_info's "
            "(height, width), boxes under rpn_min_size * scale (and padded positions) scored "
            "-1; stable sort by foreground score, the first rpn_pre_nms_top_n, greedy NMS "
            "(IoU > threshold, +1 pixel areas) to rpn_post_nms_top_n rows [image, x0, y0, x1, "
            "y1] repeating the kept ones cyclically; score output with output_score.  "
            + ("Any batch size." if _multi else "Batch 1 only.") + "  Zero gradient."))


__all__ = ["DetectionInputError", "floats", "prior_params", "variances", "proposal_shape"]
