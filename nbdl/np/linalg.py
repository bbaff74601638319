"""Matrix products with numpy's semantics: ``dot`` and ``matmul``; and
Gluon 2.0's ``np.linalg`` functions ``inv``, ``det``, ``slogdet`` and
``cholesky`` (the ``_linalg_*`` ops, batched over leading axes; ``det`` /
``slogdet`` of one matrix are 0-d on NDArrays, ``(1,)`` on Symbols).

``dot(a, b)``: a scalar operand multiplies; otherwise the last axis of ``a``
contracts with the second-to-last of ``b`` (its only axis when 1-D).
MXNet's ``dot`` op contracts with ``b``'s *first* axis, which is the same
for a ``b`` of at most two axes; a ``b`` of more axes is first transposed
to put its second-to-last axis in front.  vector . vector is 0-d on
NDArrays and ``(1,)`` on Symbols.

``matmul(a, b)``: 1-D operands are promoted (a row / a column) and the
added axis removed again, leading (batch) axes broadcast, then ``dot`` (2-D)
or ``batch_dot`` (equal batch axes).

On Symbols both depend on the operands' ranks, which are read from the
input variables' declared shapes (``var(shape=...)``) when there are any;
the graph built never depends on sizes, so it stays valid when bound with
other shapes.  Without ranks, ``dot`` is MXNet's op as is (numpy's result
whenever ``b`` has at most two axes), and ``matmul`` is
``sum(expand_dims(a, -1) * expand_dims(b, -3), axis=-2)`` — numpy's result
for operands of two or more axes, batch axes broadcasting, but it
materialises the ``(..., M, K, N)`` products (also used, with ranks known,
when the batch axes differ): declare shapes where the operands are large.
"""
from .._docs import shared_doc
from ..errors import ShapeError
from ._dispatch import (apply, broadcast_nd, broadcast_shapes, is_scalar, operands, reshape_nd,
                        static_shape)
from .math import multiply


def _dot_rhs_perm(ndim):
    """Axes that move b's second-to-last axis to the front."""
    return (ndim - 2,) + tuple(range(ndim - 2)) + (ndim - 1,)


def dot(a, b):
    """numpy's ``dot``."""
    if is_scalar(a) or is_scalar(b):
        return multiply(a, b)
    (x, y), on_symbols = operands([a, b], "dot")
    xs, ys = static_shape(x), static_shape(y)
    if xs is None or ys is None:
        return apply("dot", [x, y], on_symbols=on_symbols)
    if len(xs) == 0 or len(ys) == 0:
        return multiply(x, y)
    k_b = ys[0] if len(ys) == 1 else ys[-2]
    if xs[-1] != k_b:
        raise ShapeError(f"dot: shapes {xs} and {ys} not aligned: {xs[-1]} (dim {len(xs) - 1}) "
                         f"!= {k_b} (dim {max(len(ys) - 2, 0)})")
    if len(ys) > 2:
        y = apply("transpose", [y], {"axes": _dot_rhs_perm(len(ys))}, on_symbols)
    out = apply("dot", [x, y], on_symbols=on_symbols)
    if not on_symbols and len(xs) == 1 and len(ys) == 1:
        out = reshape_nd(out, ())
    return out


def _check_core(xs, ys):
    if len(xs) == 0 or len(ys) == 0:
        raise ShapeError(f"matmul: input operand does not have enough dimensions (shapes {xs} "
                         f"and {ys}); use multiply for scalars")
    k_b = ys[0] if len(ys) == 1 else ys[-2]
    if xs[-1] != k_b:
        raise ShapeError(f"matmul: input operand 1 has a mismatch in its core dimension 0 "
                         f"(size {k_b} is different from {xs[-1]}); shapes {xs} and {ys}")


def _matmul_nd(x, y):
    """NDArrays: promote 1-D operands, broadcast the batch axes, dot/batch_dot."""
    xs, ys = tuple(x.shape), tuple(y.shape)
    _check_core(xs, ys)
    squeeze_front, squeeze_back = len(xs) == 1, len(ys) == 1
    if squeeze_front:
        xs = (1,) + xs
        x = reshape_nd(x, xs)
    if squeeze_back:
        ys = ys + (1,)
        y = reshape_nd(y, ys)
    batch = broadcast_shapes([xs[:-2], ys[:-2]], "matmul")
    if not batch:
        out = apply("dot", [x, y], on_symbols=False)
    else:
        x = broadcast_nd(x, batch + xs[-2:])
        y = broadcast_nd(y, batch + ys[-2:])
        out = apply("batch_dot", [x, y], on_symbols=False)
    final = batch + (() if squeeze_front else (xs[-2],)) + (() if squeeze_back else (ys[-1],))
    return reshape_nd(out, final)


def _mul_sum(x, y):
    """Symbols of any rank >= 2: ``sum(expand_dims(x, -1) * expand_dims(y, -3), -2)``."""
    lhs = apply("expand_dims", [x], {"axis": -1}, on_symbols=True)    # (..., M, K, 1)
    rhs = apply("expand_dims", [y], {"axis": -3}, on_symbols=True)    # (..., 1, K, N)
    prod = apply("broadcast_mul", [lhs, rhs], on_symbols=True)
    return apply("sum", [prod], {"axis": (-2,)}, on_symbols=True)


def _matmul_symbols(x, y, xs, ys):
    """Symbols: the graph depends on the ranks only (never on sizes), so it stays
    valid when bound with other shapes later."""
    if xs is None or ys is None:
        return _mul_sum(x, y)
    _check_core(xs, ys)
    squeeze_front, squeeze_back = len(xs) == 1, len(ys) == 1
    rx, ry = max(len(xs), 2), max(len(ys), 2)
    if squeeze_front:
        x = apply("expand_dims", [x], {"axis": 0}, on_symbols=True)
    if squeeze_back:
        y = apply("expand_dims", [y], {"axis": -1}, on_symbols=True)
    if ry == 2:           # (..., M, K) . (K, N): MXNet's dot contracts rhs's first axis
        out = apply("dot", [x, y], on_symbols=True)
    elif rx == 2:         # (M, K) @ (..., K, N): K to the front of y, dot, M back in place
        yt = apply("transpose", [y], {"axes": _dot_rhs_perm(ry)}, on_symbols=True)
        out = apply("dot", [x, yt], on_symbols=True)                  # (M, ..., N)
        back = tuple(range(1, ry - 1)) + (0, ry - 1)
        out = apply("transpose", [out], {"axes": back}, on_symbols=True)
    elif rx == ry and xs[:-2] == ys[:-2]:
        out = apply("batch_dot", [x, y], on_symbols=True)
    else:                 # batch axes that broadcast
        return _mul_sum(x, y)
    if squeeze_back:
        out = apply("squeeze", [out], {"axis": (-1,)}, on_symbols=True)
    if squeeze_front:
        out = apply("squeeze", [out], {"axis": (-1 if squeeze_back else -2,)}, on_symbols=True)
    return out


def matmul(a, b):
    """numpy's ``matmul`` (the ``@`` operator)."""
    if is_scalar(a) or is_scalar(b):
        raise ShapeError("matmul: scalar operands are not allowed, use multiply")
    (x, y), on_symbols = operands([a, b], "matmul")
    if not on_symbols:
        return _matmul_nd(x, y)
    return _matmul_symbols(x, y, static_shape(x), static_shape(y))


# the argument of inv, det, slogdet and cholesky
_SQUARE = """
Parameters
----------
a : ndarray or Symbol
    Square matrices on the last two axes.
"""


def _scalar_per_matrix(out, x):
    """Eagerly, one matrix's determinant is 0-d (numpy); the op gives (1,)."""
    if len(x.shape) == 2:
        return reshape_nd(out, ())
    return out


@shared_doc(square=_SQUARE)
def inv(a):
    """The inverse of each square matrix of ``a`` (``_linalg_inverse``).

    {square}
    """
    (x,), on_symbols = operands([a], "linalg.inv")
    return apply("_linalg_inverse", [x], on_symbols=on_symbols)


@shared_doc(square=_SQUARE)
def det(a):
    """The determinant of each square matrix of ``a`` (``_linalg_det``).

    {square}
    """
    (x,), on_symbols = operands([a], "linalg.det")
    out = apply("_linalg_det", [x], on_symbols=on_symbols)
    return out if on_symbols else _scalar_per_matrix(out, x)


@shared_doc(square=_SQUARE)
def slogdet(a):
    """``(sign, logabsdet)`` of each square matrix's determinant
    (``_linalg_slogdet``).

    {square}
    """
    (x,), on_symbols = operands([a], "linalg.slogdet")
    sign, logabs = apply("_linalg_slogdet", [x], on_symbols=on_symbols)
    if on_symbols:
        return sign, logabs
    return _scalar_per_matrix(sign, x), _scalar_per_matrix(logabs, x)


@shared_doc(square=_SQUARE)
def cholesky(a):
    """The lower Cholesky factor of each symmetric positive definite matrix
    (``_linalg_potrf``, lower=True; raises NotPositiveDefinite otherwise).

    {square}
    """
    (x,), on_symbols = operands([a], "linalg.cholesky")
    return apply("_linalg_potrf", [x], {"lower": True}, on_symbols=on_symbols)
