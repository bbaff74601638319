"""MXNet 1.9.1's bounding-box contrib ops (rules only; kernels in
``nbdl.kernels.*.detection``): _contrib_box_nms (alias
_contrib_box_non_maximum_suppression), _contrib_box_iou,
_contrib_bipartite_matching, _contrib_box_encode and _contrib_box_decode.

Gradients as MXNet: box_nms sends the head gradient of each kept output row
back to the input row it came from (``_backward_contrib_box_nms``, through
the hidden index output) and zeros elsewhere; box_iou, bipartite_matching,
box_encode and box_decode have zero gradients.
"""
import numpy as np

from .ir import backward_node, make_node
from .registry import Attr, OpDef, register, shape_error

KERNELS = "nbdl.kernels.{}.detection:{}"
BOX_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))
FORMATS = ("corner", "center")


def kernels(prepare):
    """The op's kernel paths: ``prepare`` in this family's CPU and CUDA modules."""
    return {"cpu": KERNELS.format("cpu", prepare), "cuda": KERNELS.format("cuda", prepare)}


def temps(rule):
    """The op's temp rule paths: ``rule`` in this family's CPU and CUDA modules (their
    scratch plus float32 mirrors of float16 arrays)."""
    return {"cpu": KERNELS.format("cpu", rule), "cuda": KERNELS.format("cuda", rule)}


def zero_grads(node, out_grads):
    """Zero gradients for every input (MXNet's zero-gradient detection ops)."""
    return [make_node("zeros_like", [e], name=f"{node.name}_backward_{i}").output(0)
            for i, e in enumerate(node.inputs)]


def same_type_all(n_in, n_out):
    """Every input and output has one dtype (MXNet's ElemwiseType<n_in, n_out>)."""
    def rule(attrs, in_types, out_types):
        t = next((x for x in list(in_types) + list(out_types) if x is not None), None)
        return [t] * n_in, [t] * n_out
    return rule


def fix_shape(where, name, have, want, in_shapes):
    """``want`` (a tuple), after checking a known ``have`` against it."""
    if have is not None and tuple(have) != tuple(want):
        raise shape_error(where, f"{name} has shape {tuple(have)}, expected {tuple(want)}",
                          in_shapes)
    return tuple(want)


# -- _contrib_box_nms ----------------------------------------------------------------------

NMS_ATTRS = {
    "overlap_thresh": Attr("float", 0.5), "valid_thresh": Attr("float", 0.0),
    "topk": Attr("int", -1), "coord_start": Attr("int", 2), "score_index": Attr("int", 1),
    "id_index": Attr("int", -1), "background_id": Attr("int", -1),
    "force_suppress": Attr("bool", False),
    "in_format": Attr("str", "corner", choices=FORMATS),
    "out_format": Attr("str", "corner", choices=FORMATS)}


def nms_check(attrs, d, in_shapes, where="_contrib_box_nms"):
    """The layout checks of MXNet's BoxNMSShape on data shape ``d``."""
    if len(d) < 2:
        raise shape_error(where, f"data must have at least 2 dims (num_box, box_width), got "
                                 f"shape {tuple(d)}", in_shapes)
    w = d[-1]
    cs, si, ii = attrs["coord_start"], attrs["score_index"], attrs["id_index"]
    need = 6 if ii >= 0 else 5
    if w < need:
        raise shape_error(where, f"the last dimension of data must have at least {need} "
                                 f"elements (score, 4 coordinates{', id' if ii >= 0 else ''}), "
                                 f"got {w}", in_shapes)
    if not 0 <= si < w:
        raise shape_error(where, f"score_index={si} is out of range [0, {w})", in_shapes)
    if cs <= si <= cs + 3:
        raise shape_error(where, f"score_index={si} overlaps the coordinates "
                                 f"[{cs}, {cs + 3}]", in_shapes)
    if cs < 0 or cs + 3 >= w:
        raise shape_error(where, f"coord_start={cs}: coordinates [{cs}, {cs + 3}] are out of "
                                 f"range [0, {w})", in_shapes)
    if ii >= 0:
        if ii >= w:
            raise shape_error(where, f"id_index={ii} is out of range [0, {w})", in_shapes)
        if cs <= ii <= cs + 3:
            raise shape_error(where, f"id_index={ii} overlaps the coordinates "
                                     f"[{cs}, {cs + 3}]", in_shapes)
        if ii == si:
            raise shape_error(where, f"id_index={ii} is score_index", in_shapes)


def _nms_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    nms_check(attrs, d, in_shapes)
    return [tuple(d)], [tuple(d), tuple(d[:-1]) + (1,)]


def _nms_grad(node, out_grads):
    g = backward_node("_backward_contrib_box_nms", [out_grads[0], node.output(1)], node, {})
    return [g.output(0)]


register(OpDef(
    name="_contrib_box_nms", attrs=NMS_ATTRS, num_outputs=2, num_visible_outputs=1,
    infer_shape=_nms_shape, infer_type=same_type_all(1, 2), gradient=_nms_grad,
    temp=temps("temp_box_nms"),
    kernels=kernels("prepare_box_nms"), dtypes=BOX_DTYPES,
    doc="Non-maximum suppression over (..., N, W) boxes [id, score, x0, y0, x1, y1, ...]: "
        "per batch item, boxes with score > valid_thresh (and id != background_id when "
        "id_index >= 0) sorted by descending score (stable), the first topk kept, a box "
        "suppressed when its IoU with a kept higher-scoring box (same id unless "
        "force_suppress) exceeds overlap_thresh; kept rows first, the rest -1.  The hidden "
        "second output holds each output row's flat input row index (-1 for padding)."),
    aliases=("_contrib_box_non_maximum_suppression",))


def _nms_backward_shape(attrs, in_shapes, out_shapes):
    g = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
    if g is None:
        return in_shapes, out_shapes
    return [tuple(g), tuple(g[:-1]) + (1,)], [tuple(g)]


register(OpDef(
    name="_backward_contrib_box_nms", input_names=("out_grad", "index"),
    infer_shape=_nms_backward_shape, infer_type=same_type_all(2, 1),
    kernels=kernels("prepare_box_nms_backward"), temp=temps("temp_box_nms_backward"),
    dtypes=BOX_DTYPES, hidden=True,
    doc="box_nms's gradient: in_grad[index[i]] = out_grad[i] for index[i] >= 0, 0 elsewhere."))


# -- _contrib_box_iou -----------------------------------------------------------------------

def _iou_shape(attrs, in_shapes, out_shapes):
    lhs, rhs = in_shapes
    where = "_contrib_box_iou"
    for name, s in (("lhs", lhs), ("rhs", rhs)):
        if s is not None and (len(s) < 2 or s[-1] != 4):
            raise shape_error(where, f"{name} must have at least 2 dims and a last dimension "
                                     f"of 4, got shape {tuple(s)}", in_shapes)
    if lhs is None or rhs is None:
        return in_shapes, out_shapes
    return in_shapes, [tuple(lhs[:-1]) + tuple(rhs[:-1])]


register(OpDef(
    name="_contrib_box_iou", input_names=("lhs", "rhs"),
    attrs={"format": Attr("str", "corner", choices=FORMATS)},
    infer_shape=_iou_shape, infer_type=same_type_all(2, 1), gradient=zero_grads,
    kernels=kernels("prepare_box_iou"), temp=temps("temp_box_iou"), dtypes=BOX_DTYPES,
    doc="Intersection over union of every lhs box (..., 4) with every rhs box (..., 4): "
        "shape lhs.shape[:-1] + rhs.shape[:-1]; 0 for disjoint boxes.  Zero gradient."))


# -- _contrib_bipartite_matching ------------------------------------------------------------

def _matching_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    if len(d) < 2:
        raise shape_error("_contrib_bipartite_matching", f"data must have at least 2 dims "
                                                         f"(N, M), got shape {tuple(d)}",
                          in_shapes)
    return in_shapes, [tuple(d[:-1]), tuple(d[:-2]) + (d[-1],)]


register(OpDef(
    name="_contrib_bipartite_matching",
    attrs={"is_ascend": Attr("bool", False), "threshold": Attr("float"),
           "topk": Attr("int", -1)},
    num_outputs=2, infer_shape=_matching_shape, infer_type=same_type_all(1, 2),
    gradient=zero_grads,
    temp=temps("temp_bipartite"),
    kernels=kernels("prepare_bipartite"), dtypes=BOX_DTYPES,
    doc="Greedy bipartite matching of an (..., N, M) score matrix: pairs taken in "
        "descending score order (ascending with is_ascend; stable) while both row and "
        "column are free, stopping at the first free pair that fails threshold (or after "
        "topk + 1 matches, as MXNet's loop does); outputs the matched column of each row "
        "and the matched row of each column, -1 when unmatched.  Zero gradient."))


# -- _contrib_box_encode / _contrib_box_decode -----------------------------------------------

def _encode_shape(attrs, in_shapes, out_shapes):
    s, m, a, r, means, stds = in_shapes
    where = "_contrib_box_encode"
    if s is not None and len(s) != 2:
        raise shape_error(where, f"samples must be 2-d (B, N), got shape {tuple(s)}", in_shapes)
    if m is not None and len(m) < 2:
        raise shape_error(where, f"matches must be 2-d (B, N), got shape {tuple(m)}", in_shapes)
    for name, x in (("anchors", a), ("refs", r)):
        if x is not None and (len(x) != 3 or x[-1] != 4):
            raise shape_error(where, f"{name} must be (B, *, 4), got shape {tuple(x)}",
                              in_shapes)
    a = a if a is not None else out_shapes[0] if out_shapes[0] is not None else out_shapes[1]
    means = fix_shape(where, "means", means, (4,), in_shapes)
    stds = fix_shape(where, "stds", stds, (4,), in_shapes)
    if a is not None:
        bn = (a[0], a[1])
        for name, x in (("samples", s), ("matches", m)):
            if x is not None and tuple(x) != bn:
                raise shape_error(where, f"{name} has shape {tuple(x)}, expected {bn} from "
                                         f"anchors {tuple(a)}", in_shapes)
        if r is not None and r[0] != a[0]:
            raise shape_error(where, f"refs has batch {r[0]}, anchors {a[0]}", in_shapes)
        s = s if s is not None else bn
        m = m if m is not None else bn
    return [s, m, a, r, means, stds], [a, a] if a is not None else out_shapes


register(OpDef(
    name="_contrib_box_encode",
    input_names=("samples", "matches", "anchors", "refs", "means", "stds"),
    num_outputs=2, infer_shape=_encode_shape, infer_type=same_type_all(6, 2),
    gradient=zero_grads, kernels=kernels("prepare_box_encode"), dtypes=BOX_DTYPES,
    temp=temps("temp_box_encode"),
    doc="Regression targets of corner anchors (B, N, 4) against their matched corner refs "
        "(B, M, 4): ((dx / w - means) / stds, (log(w_ref / w) - means) / stds) for "
        "samples > 0.5, 0 elsewhere; the second output is the 0/1 mask.  A positive "
        "sample whose match is outside [0, M) raises IndexOutOfRange.  Zero gradient."))


def _decode_shape(attrs, in_shapes, out_shapes):
    d, a = in_shapes
    where = "_contrib_box_decode"
    d = d if d is not None else out_shapes[0]
    if d is not None and (len(d) != 3 or d[-1] != 4):
        raise shape_error(where, f"data must be (B, N, 4), got shape {tuple(d)}", in_shapes)
    if a is not None and (len(a) != 3 or a[-1] != 4 or a[0] != 1):
        raise shape_error(where, f"anchors must be (1, N, 4), got shape {tuple(a)}", in_shapes)
    if d is not None and a is not None and a[1] != d[1]:
        raise shape_error(where, f"anchors has {a[1]} boxes for data's {d[1]}", in_shapes)
    if d is None:
        return in_shapes, out_shapes
    return [tuple(d), a if a is not None else (1, d[1], 4)], [tuple(d)]


register(OpDef(
    name="_contrib_box_decode", input_names=("data", "anchors"),
    attrs={"std0": Attr("float", 1.0), "std1": Attr("float", 1.0), "std2": Attr("float", 1.0),
           "std3": Attr("float", 1.0), "clip": Attr("float", -1.0),
           "format": Attr("str", "center", choices=FORMATS)},
    infer_shape=_decode_shape, infer_type=same_type_all(2, 1), gradient=zero_grads,
    kernels=kernels("prepare_box_decode"), temp=temps("temp_box_decode"), dtypes=BOX_DTYPES,
    doc="Corner boxes from (B, N, 4) offsets and (1, N, 4) anchors (format: the anchors' "
        "encoding): centre x * std0 * w + x_a, size exp(min(d * std, clip)) * w_a (clip "
        "applied when > 0).  Zero gradient."))


__all__ = ["kernels", "temps", "zero_grads", "same_type_all", "nms_check", "FORMATS", "BOX_DTYPES"]
