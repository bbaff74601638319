"""Views and scalars of the linear-algebra kernels, shared by the CPU and
CUDA ``prepare`` functions of ``nbdl.kernels.*.linalg``: each ``plan(name,
call)`` returns ``(views, scalars)`` for the kernel of that name, whose
arguments are the op's inputs, outputs and temps in that order.

Matrices are viewed as ``(B, rows, cols)`` (gemm/gemm2 as ``(P, rows, Q,
cols)``, see ``ops.linalg.gemm_view``), vectors as ``(B, n)`` and
per-matrix scalars as ``(B,)``; flags are ints, float attributes come in
the output's dtype.
"""
import numpy as np

from ...ops.linalg import batch, gemm_view
from ...ops.registry import REQ_NULL

# The routines both devices have a kernel for: ``<name>_kernel`` in each module.
KERNEL_NAMES = ("gemm", "gemm2", "trmm", "trsm", "syrk", "potrf", "potri", "inverse", "det",
                "slogdet", "sumlogdiag", "gelqf", "syevd", "potrf_backward", "potri_backward",
                "gelqf_backward", "syevd_backward", "sumlogdiag_backward", "det_backward",
                "slogdet_backward", "extractdiag", "makediag", "extracttrian", "maketrian")


def prepares(launch):
    """``{"prepare_<name>": prepare}`` for every routine of ``KERNEL_NAMES``:
    ``prepare(call)`` plans the call's views and scalars (``plan``) and
    returns ``launch(name, call, views, scalars)``, the device's Launch.

    Parameters
    ----------
    launch : callable
        The device's ``launch(name, call, views, scalars)``.

    Returns
    -------
    dict
        The prepare functions by the names the op table gives them.
    """
    out = {}
    for name in KERNEL_NAMES:
        def prepare(call, name=name):
            views, scalars = plan(name, call)
            return launch(name, call, views, scalars)
        prepare.__name__ = prepare.__qualname__ = f"prepare_{name}"
        prepare.__doc__ = f"Launch of the {name} kernel (views from linalg_plan.plan)."
        out[prepare.__name__] = prepare
    return out


def mat(shape):
    """``(B, rows, cols)`` of a batch of matrices."""
    return (batch(shape), int(shape[-2]), int(shape[-1]))


def vec(shape):
    """``(B, n)`` of a batch of vectors (the last axis)."""
    return (batch(shape, 1), int(shape[-1]))


def piv(shape):
    """``(B, n)`` of the pivots (or any per-row vector) of a batch of square
    matrices."""
    return (batch(shape), int(shape[-1]))


def scal(shape, n_matrix_axes=2):
    """``(B,)`` of one scalar per matrix of an input of shape ``shape``."""
    return (batch(shape, n_matrix_axes),)


def _wants(call, i):
    return int(call.req[i] != REQ_NULL)


def plan(name, call):  # noqa: C901  (one branch per kernel)
    """``(views, scalars)`` of kernel ``name`` for ``call``.

    Parameters
    ----------
    name : str
        The kernel: the op name without ``_linalg_`` (``gemm2``,
        ``potrf_backward`` ...).
    call : nbdl.ops.registry.Call
        The prepared call.
    """
    t = np.dtype(call.out_dtypes[0]).type
    at, ins, outs = call.attrs, call.in_shapes, call.out_shapes
    if name in ("gemm", "gemm2"):
        views = [gemm_view(at, s) for s in list(ins) + list(outs)]
        beta = t(at["beta"]) if name == "gemm" else t(0)
        return views, (t(at["alpha"]), beta, int(at["transpose_a"]), int(at["transpose_b"]))
    if name in ("trmm", "trsm"):
        return ([mat(ins[0]), mat(ins[1]), mat(outs[0])],
                (t(at["alpha"]), int(at["rightside"]), int(at["lower"]), int(at["transpose"])))
    if name == "syrk":
        return [mat(ins[0]), mat(outs[0])], (t(at["alpha"]), t(0), int(at["transpose"]))
    a = ins[-1]
    if name == "potrf":
        return [mat(a), mat(outs[0]), scal(a)], (int(at["lower"]),)
    if name == "potri":
        return [mat(a), mat(outs[0]), mat(a)], (int(at["lower"]),)
    if name == "inverse":
        return [mat(a), mat(a), mat(a), piv(a)], ()
    if name == "det":
        return [mat(a), scal(a), mat(a), piv(a)], ()
    if name == "slogdet":
        return [mat(a), scal(a), scal(a), mat(a), piv(a)], (_wants(call, 0), _wants(call, 1))
    if name == "sumlogdiag":
        return [mat(a), scal(a)], ()
    if name == "gelqf":
        b, m, n = mat(a)
        return ([mat(a), mat(a), (b, m, m), mat(a), (b, m)],
                (_wants(call, 0), _wants(call, 1)))
    if name == "syevd":
        return ([mat(a), mat(a), piv(a), mat(a), piv(a)],
                (_wants(call, 0), _wants(call, 1), float(np.finfo(t).eps), 100))
    if name == "potrf_backward":
        return [mat(a)] * 3, (int(at["lower"]),)
    if name == "potri_backward":
        return [mat(a)] * 5, (int(at["lower"]),)
    if name == "gelqf_backward":
        q, ll = ins[0], ins[1]
        return [mat(q), mat(ll), mat(q), mat(ll), mat(q), mat(ll)], ()
    if name == "syevd_backward":
        u = ins[0]
        tiny = t(1e-30) if t == np.float32 else t(1e-100)
        return [mat(u), vec(ins[1]), mat(u), vec(ins[1]), mat(u), mat(u), mat(u)], (tiny,)
    if name == "sumlogdiag_backward":
        return [scal(a), mat(a), mat(a)], ()
    if name in ("det_backward", "slogdet_backward"):
        return [scal(a), scal(a), mat(a), mat(a), mat(a), piv(a)], ()
    k = int(at.get("offset", 0))
    lower = int(at.get("lower", True))
    if name == "extractdiag":
        return [mat(ins[0]), vec(outs[0])], (k,)
    if name == "makediag":
        return [vec(ins[0]), mat(outs[0])], (k,)
    if name == "extracttrian":
        return [mat(ins[0]), vec(outs[0])], (k, lower)
    if name == "maketrian":
        return [vec(ins[0]), mat(outs[0])], (k, lower)
    raise KeyError(f"no linalg kernel plan named {name!r}")


def all_null(call):
    """True when no output of ``call`` is wanted (the kernel is skipped)."""
    return all(r == REQ_NULL for r in call.req)
