"""The second half of the linear-algebra family (``nbdl/ops/linalg.py`` has
the first and the shared helpers): ``_linalg_gelqf``, ``_linalg_syevd``,
``_linalg_sumlogdiag``, ``_linalg_det``, ``_linalg_slogdet``, the diagonal
and triangle copies (``_linalg_extractdiag``, ``_linalg_makediag``,
``_linalg_extracttrian``, ``_linalg_maketrian``) and ``khatri_rao``, with
their backward ops.  Rules only; kernels in ``nbdl.kernels.*.linalg``.
"""
import numpy as np

from .attrs import Attr
from .ir import backward_node
from .linalg import assign_shape, batch, check_square, kernels, square_temps
from .registry import OpDef, register, shape_error
from .rules import known_shape, same_type, size_of


# ---------------------------------------------------------------- factorisations

def _gelqf_shape(attrs, in_shapes, out_shapes):
    ins, outs = list(in_shapes), list(out_shapes)
    where = "_linalg_gelqf"
    a = known_shape(ins[0], outs[0])
    if a is None:
        return ins, outs
    if len(a) < 2 or a[-2] > a[-1]:
        raise shape_error(where, f"argument 'A' must hold (m, n) matrices with m <= n, got "
                          f"shape {tuple(a)}", in_shapes)
    ins[0] = tuple(a)
    assign_shape(where, outs, 0, a, in_shapes)
    assign_shape(where, outs, 1, tuple(a[:-1]) + (a[-2],), in_shapes)
    return ins, outs


def _gelqf_grad(node, out_grads):
    return [backward_node("_backward_linalg_gelqf",
                          [out_grads[0], out_grads[1], node.output(0), node.output(1)],
                          node, {}).output(0)]


def _gelqf_temp(call):
    s = call.in_shapes[0]
    b, m, n = batch(s), int(s[-2]), int(s[-1])
    return [((b, m, n), call.out_dtypes[0]), ((b, m), call.out_dtypes[0])]


register(OpDef(
    name="_linalg_gelqf", input_names=("A",), num_outputs=2,   # outputs Q, L: output0/1 as MXNet
    infer_shape=_gelqf_shape, infer_type=same_type, gradient=_gelqf_grad,
    temp=_gelqf_temp, kernels=kernels("gelqf"),
    doc="LQ factorisation A = L Q of each (m, n) matrix, m <= n: Q (m, n) with orthonormal "
        "rows, L (m, m) lower triangular; signs as LAPACK's gelqf."),
    aliases=("linalg_gelqf",))


def _gelqf_backward_shape(attrs, in_shapes, out_shapes):
    ins, outs = list(in_shapes), list(out_shapes)
    q = ins[0] or ins[2] or outs[0]
    if q is None:
        return ins, outs
    lshape = tuple(q[:-1]) + (q[-2],)
    ins[0] = ins[2] = outs[0] = tuple(q)
    ins[1] = ins[3] = lshape
    return ins, outs


register(OpDef(
    name="_backward_linalg_gelqf", input_names=("dQ", "dL", "Q", "L"),
    infer_shape=_gelqf_backward_shape, infer_type=same_type,
    temp=lambda call: [((batch(call.in_shapes[3]), int(call.in_shapes[3][-1]),
                         int(call.in_shapes[3][-1])), call.out_dtypes[0])],
    kernels=kernels("gelqf_backward"), hidden=True,
    doc="Gradient of gelqf: L^-T (dQ + copyLTU(L^T dL - dQ Q^T) Q)."))


def _syevd_shape(attrs, in_shapes, out_shapes):
    ins, outs = list(in_shapes), list(out_shapes)
    where = "_linalg_syevd"
    a = known_shape(ins[0], outs[0])
    if a is None:
        return ins, outs
    check_square(where, "A", a, in_shapes)
    ins[0] = tuple(a)
    assign_shape(where, outs, 0, a, in_shapes)
    assign_shape(where, outs, 1, tuple(a[:-1]), in_shapes)
    return ins, outs


def _syevd_grad(node, out_grads):
    return [backward_node("_backward_linalg_syevd",
                          [out_grads[0], out_grads[1], node.output(0), node.output(1)],
                          node, {}).output(0)]


register(OpDef(
    name="_linalg_syevd", input_names=("A",), num_outputs=2,   # outputs U, L: output0/1
    infer_shape=_syevd_shape, infer_type=same_type, gradient=_syevd_grad,
    temp=lambda call: square_temps(call, "vec"), kernels=kernels("syevd"),
    doc="Eigendecomposition A = U^T diag(L) U of each symmetric matrix (lower triangle "
        "read): eigenvalues L ascending, eigenvectors the rows of U, each signed so that its "
        "largest-magnitude entry is positive."))


def _syevd_backward_shape(attrs, in_shapes, out_shapes):
    ins, outs = list(in_shapes), list(out_shapes)
    u = ins[0] or ins[2] or outs[0]
    if u is None:
        return ins, outs
    ins[0] = ins[2] = outs[0] = tuple(u)
    ins[1] = ins[3] = tuple(u[:-1])
    return ins, outs


register(OpDef(
    name="_backward_linalg_syevd", input_names=("dU", "dL", "U", "L"),
    infer_shape=_syevd_backward_shape, infer_type=same_type,
    temp=lambda call: square_temps(call, "sq", index=2), kernels=kernels("syevd_backward"),
    hidden=True, doc="Gradient of syevd: U^T Y U (la_op-inl.h's SyevdBackHelper)."))


# ---------------------------------------------------------------- reductions: sumlogdiag, det, slogdet

def reduced_shape(s):
    """Shape of a per-matrix scalar: the batch axes, or (1,) for one matrix."""
    return tuple(s[:-2]) if len(s) > 2 else (1,)


def _reduce_shape(where, n_out):
    def rule(attrs, in_shapes, out_shapes):
        ins, outs = list(in_shapes), list(out_shapes)
        a = ins[0]
        if a is None:
            return ins, outs
        check_square(where, "A", a, in_shapes)
        for i in range(n_out):
            assign_shape(where, outs, i, reduced_shape(a), in_shapes)
        return ins, outs
    return rule


def _reduce_backward_shape(n_scalar):
    def rule(attrs, in_shapes, out_shapes):
        ins, outs = list(in_shapes), list(out_shapes)
        a = ins[n_scalar] if ins[n_scalar] is not None else outs[0]
        if a is None:
            return ins, outs
        ins[n_scalar] = outs[0] = tuple(a)
        for i in range(n_scalar):
            ins[i] = reduced_shape(a)
        return ins, outs
    return rule


def _sumlogdiag_grad(node, out_grads):
    return [backward_node("_backward_linalg_sumlogdiag", [out_grads[0], node.inputs[0]], node,
                          {}).output(0)]


register(OpDef(
    name="_linalg_sumlogdiag", input_names=("A",),
    infer_shape=_reduce_shape("_linalg_sumlogdiag", 1), infer_type=same_type,
    gradient=_sumlogdiag_grad, kernels=kernels("sumlogdiag"),
    doc="Sum of the logarithms of each square matrix's diagonal."),
    aliases=("linalg_sumlogdiag",))

register(OpDef(
    name="_backward_linalg_sumlogdiag", input_names=("out_grad", "A"),
    infer_shape=_reduce_backward_shape(1), infer_type=same_type,
    kernels=kernels("sumlogdiag_backward"), hidden=True,
    doc="Gradient of sumlogdiag: diag(g / A_ii)."))


def _det_grad(node, out_grads):
    return [backward_node("_backward_linalg_det", [out_grads[0], node.output(0), node.inputs[0]],
                          node, {}).output(0)]


def _slogdet_grad(node, out_grads):
    return [backward_node("_backward_linalg_slogdet",
                          [out_grads[1], node.output(1), node.inputs[0]], node, {}).output(0)]


def _det_temp(call):
    return square_temps(call, "piv", index=len(call.in_shapes) - 1)


register(OpDef(
    name="_linalg_det", input_names=("A",),
    output_names=("output0",),      # MXNet's det has hidden LU/pivot outputs, so "output0"
    infer_shape=_reduce_shape("_linalg_det", 1), infer_type=same_type, gradient=_det_grad,
    temp=_det_temp, kernels=kernels("det"),
    doc="Determinant of each square matrix (LU with partial pivoting)."),
    aliases=("linalg_det", "_npi_det"))

register(OpDef(
    name="_linalg_slogdet", input_names=("A",), num_outputs=2,   # sign, logabsdet: output0/1
    infer_shape=_reduce_shape("_linalg_slogdet", 2), infer_type=same_type,
    gradient=_slogdet_grad, temp=_det_temp, kernels=kernels("slogdet"),
    doc="Sign and log of the absolute value of each square matrix's determinant."),
    aliases=("linalg_slogdet", "_npi_slogdet"))

register(OpDef(
    name="_backward_linalg_det", input_names=("out_grad", "det", "A"),
    infer_shape=_reduce_backward_shape(2), infer_type=same_type,
    temp=_det_temp, kernels=kernels("det_backward"), hidden=True,
    doc="Gradient of det: g * det * inverse(A)^T (zero where det is 0)."))

register(OpDef(
    name="_backward_linalg_slogdet", input_names=("out_grad", "logabsdet", "A"),
    infer_shape=_reduce_backward_shape(2), infer_type=same_type,
    temp=_det_temp, kernels=kernels("slogdet_backward"), hidden=True,
    doc="Gradient of slogdet's logabsdet: g * inverse(A)^T (zero where det is 0)."))


# ---------------------------------------------------------------- diagonal / triangle copies

def _abs_offset(attrs):
    return abs(int(attrs["offset"]))


def _diag_trian_shape(where, diag, extract):
    def rule(attrs, in_shapes, out_shapes):
        ins, outs = list(in_shapes), list(out_shapes)
        a = ins[0]
        if a is None:
            return ins, outs
        k = _abs_offset(attrs)
        if extract:
            check_square(where, "A", a, in_shapes)
            n = a[-1] - k
            if n <= 0:
                raise shape_error(where, f"offset={attrs['offset']} is out of range for "
                                  f"matrices of shape {tuple(a[-2:])}", in_shapes)
            out = tuple(a[:-2]) + ((n,) if diag else (n * (n + 1) // 2,))
        else:
            if len(a) < 1:
                raise shape_error(where, "argument 'A' must have at least 1 axis", in_shapes)
            n = int(a[-1])
            if diag:
                m = n
            else:
                m = int(np.floor(0.5 + (np.sqrt(8 * n + 1) - 1.0) * 0.5))
                if m * (m + 1) // 2 != n:
                    raise shape_error(where, f"the last axis of A ({n}) is not a triangular "
                                      f"number m*(m+1)/2", in_shapes)
            out = tuple(a[:-1]) + (m + k, m + k)
        assign_shape(where, outs, 0, out, in_shapes)
        return ins, outs
    return rule


def _copy_grad(target, with_lower):
    def gradient(node, out_grads):
        attrs = {"offset": node.attrs["offset"]}
        if with_lower:
            attrs["lower"] = node.attrs["lower"]
        return [backward_node(target, [out_grads[0]], node, attrs).output(0)]
    return gradient


_OFFSET = {"offset": Attr("int", 0)}
for _op, _diag, _extract, _target, _doc in [
        ("_linalg_extractdiag", True, True, "_linalg_makediag",
         "The ``offset``-th diagonal of each square matrix (>0 above, <0 below the main one)."),
        ("_linalg_makediag", True, False, "_linalg_extractdiag",
         "Square matrices with the last axis of A on their ``offset``-th diagonal."),
        ("_linalg_extracttrian", False, True, "_linalg_maketrian",
         "The lower (upper when lower=False or offset>0) triangle of each square matrix, "
         "packed row by row of the triangle, shifted by ``offset``."),
        ("_linalg_maketrian", False, False, "_linalg_extracttrian",
         "Square matrices whose triangle is unpacked from the last axis of A (extracttrian's "
         "inverse), zero elsewhere.")]:
    register(OpDef(
        name=_op, input_names=("A",),
        attrs=dict(_OFFSET) if _diag else dict(_OFFSET, lower=Attr("bool", True)),
        infer_shape=_diag_trian_shape(_op, _diag, _extract), infer_type=same_type,
        gradient=_copy_grad(_target, not _diag),
        kernels=kernels(_op[len("_linalg_"):]), doc=_doc),
        aliases=("linalg_" + _op[len("_linalg_"):],))


# ---------------------------------------------------------------- khatri_rao

def _kr_shape(attrs, in_shapes, out_shapes):
    ins, outs = list(in_shapes), list(out_shapes)
    if any(s is None for s in ins):
        return ins, outs
    for i, s in enumerate(ins):
        if len(s) != 2:
            raise shape_error("khatri_rao", f"argument 'arg{i}' must be a matrix, got shape "
                              f"{tuple(s)}", in_shapes)
        if s[1] != ins[0][1]:
            raise shape_error("khatri_rao", f"all inputs must have the same number of "
                              f"columns, got {[tuple(x) for x in ins]}", in_shapes)
    assign_shape("khatri_rao", outs, 0, (size_of(s[0] for s in ins), ins[0][1]), in_shapes)
    return ins, outs


def kr_temps(call):
    """Partial products of the first 2, 3, ... inputs (for three or more)."""
    rows, cols = int(call.in_shapes[0][0]), int(call.in_shapes[0][1])
    out = []
    for s in call.in_shapes[1:-1]:
        rows *= int(s[0])
        out.append(((rows, cols), call.out_dtypes[0]))
    return out


register(OpDef(
    name="khatri_rao", input_names=lambda a: [f"arg{i}" for i in range(a["num_args"])],
    key_var_num_args="num_args", attrs={"num_args": Attr("int")},
    infer_shape=_kr_shape, infer_type=same_type, temp=kr_temps, kernels=kernels("khatri_rao"),
    doc="Column-wise Khatri-Rao product of (M_i, N) matrices: (prod M_i, N); no gradient, "
        "as in MXNet."))


__all__ = ["reduced_shape", "kr_temps"]
