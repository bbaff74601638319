"""SVMOutput's per-element gradient and scalars (plain Python: compiled by
``njit`` in ``kernels.cpu.svm_output``, by ``cuda.jit(device=True)`` in
``kernels.cuda.svm_output``)."""
import numpy as np

from ...ops.svm_output import svm_rows


def svm_scalars(call):
    """(margin, regularization_coefficient in the output's dtype, use_linear)."""
    t = np.dtype(call.out_dtypes[0]).type
    a = call.attrs
    return t(a["margin"]), t(a["regularization_coefficient"]), bool(a["use_linear"])


def svm_views(call):
    """(rows view of the output, flat label view)."""
    rows = svm_rows(call.in_shapes[0])
    return rows, (int(np.prod(call.in_shapes[1], dtype=np.int64)),)


def py_svm_grad(x, target, margin, coef, linear):
    """The SVM loss gradient at output value ``x``, the label's class or not."""
    zero = coef - coef
    if target:
        if margin > x:
            return -coef if linear else -(coef + coef) * (margin - x)
        return zero
    if margin > -x:
        return coef if linear else (coef + coef) * (margin + x)
    return zero
