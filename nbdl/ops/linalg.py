"""MXNet 1.9.1's linear-algebra operators (``src/operator/tensor/la_op.cc``):
``_linalg_gemm``, ``_linalg_gemm2``, ``_linalg_potrf``, ``_linalg_potri``,
``_linalg_trmm``, ``_linalg_trsm``, ``_linalg_syrk``, ``_linalg_gelqf``,
``_linalg_syevd``, ``_linalg_sumlogdiag``, ``_linalg_extractdiag``,
``_linalg_makediag``, ``_linalg_extracttrian``, ``_linalg_maketrian``,
``_linalg_inverse``, ``_linalg_det``, ``_linalg_slogdet``, plus
``khatri_rao`` (``src/operator/contrib/krprod.cc``).  Rules only; the
kernels are ``nbdl.kernels.{cpu,cuda}.linalg`` over the per-matrix routines
of ``nbdl.kernels.shared.linalg``.  This file holds the products, the
triangular ops, Cholesky and the inverse; ``linalg_factor.py`` the
factorisations (gelqf, syevd), the determinants, sumlogdiag, the
diagonal/triangle copies and khatri_rao.

Every op works on the trailing two axes and is batched over the leading
ones (gemm/gemm2: the rows are on ``axis``, the columns on the last axis).
Gradients follow la_op-inl.h: gemm, gemm2, syrk, trmm, trsm, inverse and
the diagonal/triangle copies are built from these ops; potrf, potri,
gelqf, syevd, sumlogdiag, det and slogdet have a backward op of their own.
Unlike MXNet, det and slogdet expose no LU/pivot outputs (their backward
ops factorise again).
"""
import numpy as np

from ..errors import NbdlError
from .attrs import Attr
from .ir import backward_node, make_node
from .registry import OpDef, register, shape_error
from .rules import known_shape, same_type, size_of


class NotPositiveDefinite(NbdlError, ValueError):
    """``_linalg_potrf`` met a matrix that is not positive definite."""


def kernels(name):
    """Kernel paths of ``prepare_<name>`` on both devices."""
    return {"cpu": f"nbdl.kernels.cpu.linalg:prepare_{name}",
            "cuda": f"nbdl.kernels.cuda.linalg:prepare_{name}"}


def batch(shape, core=2):
    """Number of matrices (``core`` trailing axes each) in ``shape``."""
    return size_of(tuple(shape)[:len(shape) - core])


def check_square(where, arg, s, in_shapes):
    """Raise a ShapeError unless ``s`` holds square matrices (>= 2 axes)."""
    if len(s) < 2:
        raise shape_error(where, f"argument {arg!r} must have at least 2 axes, got shape "
                          f"{tuple(s)}", in_shapes)
    if s[-1] != s[-2]:
        raise shape_error(where, f"argument {arg!r} must hold square matrices, got shape "
                          f"{tuple(s)}", in_shapes)


def assign_shape(where, outs, i, shape, in_shapes):
    """Set ``outs[i]`` to ``shape``, raising if it already holds another."""
    if outs[i] is not None and tuple(outs[i]) != tuple(shape):
        raise shape_error(where, f"output {i} has shape {tuple(outs[i])}, expected "
                          f"{tuple(shape)}", in_shapes)
    outs[i] = tuple(shape)


def grad_name(node, what):
    """Name of a gradient node made for ``node``."""
    return f"{node.name}_{what}"


# ---------------------------------------------------------------- gemm, gemm2

def gemm_axis(attrs, ndim, where="_linalg_gemm2", in_shapes=None):
    """The row axis, normalised; the column axis is always the last."""
    ax = attrs["axis"]
    a = ax + ndim if ax < 0 else ax
    if not 0 <= a < ndim - 1:
        raise shape_error(where, f"invalid row axis={ax} for operands of {ndim} axes", in_shapes)
    return a


def gemm_view(attrs, shape):
    """``(P, rows, Q, cols)``: the 4-D view every gemm kernel works on."""
    a = gemm_axis(attrs, len(shape))
    return (size_of(shape[:a]), int(shape[a]), size_of(shape[a + 1:-1]), int(shape[-1]))


def _gemm_shape(where):
    def rule(attrs, in_shapes, out_shapes):
        ins, outs = list(in_shapes), list(out_shapes)
        a, b = ins[0], ins[1]
        if a is None or b is None:
            return ins, outs
        if len(a) < 2 or len(a) != len(b):
            raise shape_error(where, f"A and B must have the same number (>= 2) of axes, got "
                              f"A {tuple(a)}, B {tuple(b)}", in_shapes)
        nd = len(a)
        ax = gemm_axis(attrs, nd, where, in_shapes)
        for i in range(nd - 1):
            if i != ax and a[i] != b[i]:
                raise shape_error(where, f"A {tuple(a)} and B {tuple(b)} differ on axis {i} "
                                  f"(only the row axis {ax} and the last may differ)", in_shapes)
        ta, tb = attrs["transpose_a"], attrs["transpose_b"]
        ka = a[ax] if ta else a[-1]
        kb = b[-1] if tb else b[ax]
        if ka != kb:
            raise shape_error(where, f"incompatible matrix dimensions: A {tuple(a)} x B "
                              f"{tuple(b)} (transpose_a={ta}, transpose_b={tb}): {ka} != {kb}",
                              in_shapes)
        out = list(a)
        out[ax] = a[-1] if ta else a[ax]
        out[-1] = b[ax] if tb else b[-1]
        assign_shape(where, outs, 0, out, in_shapes)
        if len(ins) > 2:
            if ins[2] is not None and tuple(ins[2]) != tuple(out):
                raise shape_error(where, f"argument 'C' has shape {tuple(ins[2])}, expected "
                                  f"{tuple(out)}", in_shapes)
            ins[2] = tuple(out)
        return ins, outs
    return rule


def _gemm2_node(node, lhs, rhs, ta, tb, what):
    return make_node("_linalg_gemm2", [lhs, rhs],
                     {"transpose_a": ta, "transpose_b": tb, "alpha": node.attrs["alpha"],
                      "axis": node.attrs["axis"]}, name=grad_name(node, what)).output(0)


def _gemm_ab_grads(node, g):
    a, b = node.inputs[0], node.inputs[1]
    ta, tb = node.attrs["transpose_a"], node.attrs["transpose_b"]
    da = (_gemm2_node(node, b, g, tb, True, "backward_A") if ta
          else _gemm2_node(node, g, b, False, not tb, "backward_A"))
    db = (_gemm2_node(node, g, a, True, ta, "backward_B") if tb
          else _gemm2_node(node, a, g, not ta, False, "backward_B"))
    return da, db


def _gemm_grad(node, out_grads):
    da, db = _gemm_ab_grads(node, out_grads[0])
    dc = make_node("_mul_scalar", [out_grads[0]], {"scalar": node.attrs["beta"]},
                   name=grad_name(node, "backward_C")).output(0)
    return [da, db, dc]


def _gemm2_grad(node, out_grads):
    return list(_gemm_ab_grads(node, out_grads[0]))


_GEMM2_ATTRS = {"transpose_a": Attr("bool", False), "transpose_b": Attr("bool", False),
                "alpha": Attr("float", 1.0), "axis": Attr("int", -2)}

register(OpDef(
    name="_linalg_gemm", input_names=("A", "B", "C"),
    attrs=dict(_GEMM2_ATTRS, beta=Attr("float", 1.0)),
    infer_shape=_gemm_shape("_linalg_gemm"), infer_type=same_type, gradient=_gemm_grad,
    kernels=kernels("gemm"),
    doc="``out = alpha * op(A) op(B) + beta * C`` per matrix (rows on ``axis``, columns "
        "on the last axis); op transposes when transpose_a / transpose_b."),
    aliases=("linalg_gemm",))

register(OpDef(
    name="_linalg_gemm2", input_names=("A", "B"), attrs=dict(_GEMM2_ATTRS),
    infer_shape=_gemm_shape("_linalg_gemm2"), infer_type=same_type, gradient=_gemm2_grad,
    kernels=kernels("gemm2"),
    doc="``out = alpha * op(A) op(B)`` per matrix (rows on ``axis``)."),
    aliases=("linalg_gemm2",))


# ---------------------------------------------------------------- trmm, trsm

def _tri_shape(where):
    def rule(attrs, in_shapes, out_shapes):
        ins, outs = list(in_shapes), list(out_shapes)
        a, b = ins[0], ins[1]
        right = attrs["rightside"]
        if a is not None and b is not None:
            if len(a) != len(b):
                raise shape_error(where, f"A {tuple(a)} and B {tuple(b)} must have the same "
                                  f"number of axes", in_shapes)
            check_square(where, "A", a, in_shapes)
            if tuple(a[:-2]) != tuple(b[:-2]):
                raise shape_error(where, f"A {tuple(a)} and B {tuple(b)} must agree on all but "
                                  f"the last two axes", in_shapes)
            n = a[-1]
            if (b[-1] if right else b[-2]) != n:
                raise shape_error(where, f"incompatible matrix dimensions: A {tuple(a)}, B "
                                  f"{tuple(b)} (rightside={right})", in_shapes)
            assign_shape(where, outs, 0, b, in_shapes)
            return ins, outs
        o = outs[0]
        if o is not None and len(o) >= 2:
            n = o[-1] if right else o[-2]
            if a is None:
                ins[0] = tuple(o[:-2]) + (n, n)
            if b is None:
                ins[1] = tuple(o)
        return ins, outs
    return rule


def keep_triangle(entry, lower, name):
    """Entries of ``entry`` outside its lower (upper) triangle zeroed, from
    registered ops: ``maketrian(extracttrian(x))``."""
    t = make_node("_linalg_extracttrian", [entry], {"offset": 0, "lower": lower},
                  name=name + "_extract").output(0)
    return make_node("_linalg_maketrian", [t], {"offset": 0, "lower": lower},
                     name=name + "_make").output(0)


def _tri_attrs(node, **over):
    at = {k: node.attrs[k] for k in ("transpose", "rightside", "lower", "alpha")}
    at.update(over)
    return at


def _gemm2(lhs, rhs, ta, tb, alpha, name):
    return make_node("_linalg_gemm2", [lhs, rhs], {"transpose_a": ta, "transpose_b": tb,
                                                   "alpha": alpha}, name=name).output(0)


def _trmm_grad(node, out_grads):
    g = out_grads[0]
    a, b = node.inputs
    tr, right, alpha = node.attrs["transpose"], node.attrs["rightside"], node.attrs["alpha"]
    if right == tr:
        da = _gemm2(g, b, tr, not tr, alpha, grad_name(node, "backward_A"))
    else:
        da = _gemm2(b, g, not tr, tr, alpha, grad_name(node, "backward_A"))
    da = keep_triangle(da, node.attrs["lower"], grad_name(node, "backward_A_tri"))
    db = make_node("_linalg_trmm", [a, g], _tri_attrs(node, transpose=not tr),
                   name=grad_name(node, "backward_B")).output(0)
    return [da, db]


def _trsm_grad(node, out_grads):
    g = out_grads[0]
    a = node.inputs[0]
    c = node.output(0)
    tr, right, alpha = node.attrs["transpose"], node.attrs["rightside"], node.attrs["alpha"]
    db = make_node("_linalg_trsm", [a, g], _tri_attrs(node, transpose=not tr),
                   name=grad_name(node, "backward_B")).output(0)
    scale = -1.0 / alpha
    if right == tr:
        da = _gemm2(db, c, tr, not tr, scale, grad_name(node, "backward_A"))
    else:
        da = _gemm2(c, db, not tr, tr, scale, grad_name(node, "backward_A"))
    return [keep_triangle(da, node.attrs["lower"], grad_name(node, "backward_A_tri")), db]


_TRI_ATTRS = {"transpose": Attr("bool", False), "rightside": Attr("bool", False),
              "lower": Attr("bool", True), "alpha": Attr("float", 1.0)}

register(OpDef(
    name="_linalg_trmm", input_names=("A", "B"), attrs=dict(_TRI_ATTRS),
    infer_shape=_tri_shape("_linalg_trmm"), infer_type=same_type, gradient=_trmm_grad,
    kernels=kernels("trmm"),
    doc="``out = alpha * op(A) B`` (``alpha * B op(A)`` when rightside) for the triangular "
        "A (its lower triangle, or upper when lower=False, is read)."),
    aliases=("linalg_trmm",))

register(OpDef(
    name="_linalg_trsm", input_names=("A", "B"), attrs=dict(_TRI_ATTRS),
    infer_shape=_tri_shape("_linalg_trsm"), infer_type=same_type, gradient=_trsm_grad,
    kernels=kernels("trsm"),
    doc="``out = alpha * op(A)^-1 B`` (``alpha * B op(A)^-1`` when rightside) for the "
        "triangular A."),
    aliases=("linalg_trsm",))


# ---------------------------------------------------------------- one-square-input ops

def _same_square(where):
    def rule(attrs, in_shapes, out_shapes):
        ins, outs = list(in_shapes), list(out_shapes)
        s = known_shape(ins[0], outs[0])
        if s is None:
            return ins, outs
        check_square(where, "A", s, in_shapes)
        ins[0] = tuple(s)
        assign_shape(where, outs, 0, s, in_shapes)
        return ins, outs
    return rule


def _potrf_grad(node, out_grads):
    return [backward_node("_backward_linalg_potrf", [out_grads[0], node.output(0)], node,
                          {"lower": node.attrs["lower"]}).output(0)]


def _potri_grad(node, out_grads):
    return [backward_node("_backward_linalg_potri", [out_grads[0], node.inputs[0], node.output(0)],
                          node, {"lower": node.attrs["lower"]}).output(0)]


def square_temps(call, *extra, index=0):
    """``(B, n, n)`` scratch of the output dtype for input ``index``, then one
    buffer per ``extra`` entry: ``"piv"`` an int64 ``(B, n)`` pivot array,
    ``"vec"`` a ``(B, n)`` vector, anything else another ``(B, n, n)``."""
    s = call.in_shapes[index]
    b, n = batch(s), int(s[-1])
    dt = call.out_dtypes[0]
    out = [((b, n, n), dt)]
    for e in extra:
        out.append({"piv": ((b, n), np.int64), "vec": ((b, n), dt)}.get(e, ((b, n, n), dt)))
    return out


_LOWER = {"lower": Attr("bool", True)}

register(OpDef(
    name="_linalg_potrf", input_names=("A",), attrs=dict(_LOWER),
    infer_shape=_same_square("_linalg_potrf"), infer_type=same_type, gradient=_potrf_grad,
    temp=lambda call: [((batch(call.in_shapes[0]),), np.int64)],
    kernels=kernels("potrf"),
    doc="Cholesky factor of each symmetric positive definite matrix: lower L with A = L L^T "
        "(upper U with A = U^T U when lower=False); the other triangle is zero.  A matrix "
        "that is not positive definite raises NotPositiveDefinite."),
    aliases=("linalg_potrf",))

register(OpDef(
    name="_backward_linalg_potrf", input_names=("out_grad", "L"), attrs=dict(_LOWER),
    infer_shape=_same_square("_backward_linalg_potrf"), infer_type=same_type,
    kernels=kernels("potrf_backward"), hidden=True,
    doc="Gradient of potrf: 0.5 L^-T copyLTU(L^T dL) L^-1 (symmetric)."))

register(OpDef(
    name="_linalg_potri", input_names=("A",), attrs=dict(_LOWER),
    infer_shape=_same_square("_linalg_potri"), infer_type=same_type, gradient=_potri_grad,
    temp=square_temps, kernels=kernels("potri"),
    doc="Inverse of A = L L^T (A = U^T U when lower=False) from its triangular Cholesky "
        "factor L (only that triangle is read)."),
    aliases=("linalg_potri",))

register(OpDef(
    name="_backward_linalg_potri", input_names=("out_grad", "A", "out"), attrs=dict(_LOWER),
    infer_shape=_same_square("_backward_linalg_potri"), infer_type=same_type,
    temp=square_temps, kernels=kernels("potri_backward"), hidden=True,
    doc="Gradient of potri: -tri(O (dO + dO^T) L^-T)."))


def _inverse_grad(node, out_grads):
    o = node.output(0)
    t = _gemm2(out_grads[0], o, False, True, 1.0, grad_name(node, "backward_tmp"))
    return [_gemm2(o, t, True, False, -1.0, grad_name(node, "backward"))]


register(OpDef(
    name="_linalg_inverse", input_names=("A",),
    infer_shape=_same_square("_linalg_inverse"), infer_type=same_type, gradient=_inverse_grad,
    temp=lambda call: square_temps(call, "piv"), kernels=kernels("inverse"),
    doc="Inverse of each square matrix (LU with partial pivoting; a singular matrix gives "
        "inf/NaN)."),
    aliases=("linalg_inverse", "_npi_inv"))


def _syrk_shape(attrs, in_shapes, out_shapes):
    ins, outs = list(in_shapes), list(out_shapes)
    a = ins[0]
    if a is None:
        return ins, outs
    if len(a) < 2:
        raise shape_error("_linalg_syrk", f"argument 'A' must have at least 2 axes, got "
                          f"{tuple(a)}", in_shapes)
    n = a[-1] if attrs["transpose"] else a[-2]
    assign_shape("_linalg_syrk", outs, 0, tuple(a[:-2]) + (n, n), in_shapes)
    return ins, outs


def _syrk_grad(node, out_grads):
    g, a = out_grads[0], node.inputs[0]
    alpha = node.attrs["alpha"]
    if node.attrs["transpose"]:
        x = _gemm2(a, g, False, False, alpha, grad_name(node, "backward_0"))
        y = _gemm2(a, g, False, True, alpha, grad_name(node, "backward_1"))
    else:
        x = _gemm2(g, a, False, False, alpha, grad_name(node, "backward_0"))
        y = _gemm2(g, a, True, False, alpha, grad_name(node, "backward_1"))
    return [backward_node("elemwise_add", [x, y], node, {}).output(0)]


register(OpDef(
    name="_linalg_syrk", input_names=("A",),
    attrs={"transpose": Attr("bool", False), "alpha": Attr("float", 1.0)},
    infer_shape=_syrk_shape, infer_type=same_type, gradient=_syrk_grad,
    kernels=kernels("syrk"),
    doc="``alpha * A A^T`` (``alpha * A^T A`` when transpose) per matrix."),
    aliases=("linalg_syrk",))

__all__ = ["NotPositiveDefinite", "batch", "gemm_view", "square_temps", "keep_triangle", "assign_shape",
           "check_square", "grad_name", "kernels"]
