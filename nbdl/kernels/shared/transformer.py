"""Geometry of the interleaved attention products (``nbdl.ops.transformer``),
shared by the CPU and CUDA kernels.

Every operand is viewed 5-D, ``(seq, batch, heads, parts, head_dim)``: the
interleaved ``queries_keys_values`` has 3 parts (q, k, v), ``keys_values`` 2
(k, v), ``queries`` and the valatt output 1.  The products then run per
attention batch item ``i = b * heads + h`` on the ``(seq, head_dim)`` slice
``operand[:, b, h, part, :]``:

- a *qk* product ``out[i] = scale * x_i . y_i^T`` (x the queries' slice, y
  the keys'), with ``scale = 1 / sqrt(head_dim)`` in the data's dtype;
- a *valatt* product ``out_i = att[i] . v_i``, written back to the
  interleaved output.
"""
import math
from collections import namedtuple

import numpy as np

QK = namedtuple("QK", "x5 px y5 py bh sx sy d heads scale")
ValAtt = namedtuple("ValAtt", "v5 pv att out5 bh sq sk d heads")


def _five(shape, parts, heads):
    s, b, e = shape
    return (s, b, heads, parts, e // (parts * heads))


def qk_plan(kind, heads, in_shapes, dtype):
    """``QK`` for ``selfatt_qk`` (one input) or ``encdec_qk`` (queries,
    keys_values): the views, parts, sizes and scale."""
    if kind == "selfatt_qk":
        x5 = y5 = _five(in_shapes[0], 3, heads)
        px, py = 0, 1
    else:
        x5, y5 = _five(in_shapes[0], 1, heads), _five(in_shapes[1], 2, heads)
        px = py = 0
    d = x5[4]
    scale = np.dtype(dtype).type(1.0 / math.sqrt(d)) if d else np.dtype(dtype).type(1.0)
    return QK(x5, px, y5, py, x5[1] * heads, x5[0], y5[0], d, heads, scale)


def valatt_plan(kind, heads, in_shapes):
    """``ValAtt`` for ``selfatt_valatt`` (qkv, attention) or
    ``encdec_valatt`` (keys_values, attention)."""
    parts = 3 if kind == "selfatt_valatt" else 2
    v5 = _five(in_shapes[0], parts, heads)
    att = tuple(in_shapes[1])
    sk, b, _, _, d = v5
    sq = att[1]
    return ValAtt(v5, parts - 1, att, (sq, b, heads, 1, d), b * heads, sq, sk, d, heads)


def call_plan(call, backward=False):
    """``(kind, QK or ValAtt)`` of a ``_contrib_interleaved_matmul_<kind>``
    call or of its ``_backward_`` op (whose first input is the head gradient)."""
    kind = call.op.name.rsplit("matmul_", 1)[1]
    ins = call.in_shapes[1:] if backward else call.in_shapes
    if kind.endswith("_qk"):
        return kind, qk_plan(kind, call.attrs["heads"], ins, call.out_dtypes[0])
    return kind, valatt_plan(kind, call.attrs["heads"], ins)


__all__ = ["QK", "ValAtt", "call_plan", "qk_plan", "valatt_plan"]
