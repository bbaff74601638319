"""Matrix products: ``FullyConnected``, ``dot``, ``batch_dot`` and their
hidden backward ops (rules only; kernels in ``nbdl.kernels.*.matrix``).

Every kernel works on 2-D (or batched 2-D) views, so the rules here also
compute the ``(M, K) x (K, N)`` geometry that ``prepare`` asks the executor
to view the arrays with (``fc_dims``, ``dot_dims``, ``batch_dot_dims``).
A kernel that must honour ``REQ_ADD`` computes its product into a planned
temp (``np.dot`` overwrites its ``out``) and adds; with any other req those
temps are requested with zero size.
"""
import math

from ..errors import AttrError
from .ir import backward_node, make_node
from .attrs import Attr
from .partial_shape import accepts_partial, is_full, merge, show
from .partial_shape import prod as prod_dims
from .registry import REQ_ADD, OpDef, kernel_paths, register, shape_error
from .rules import output_shape, same_type, size_of



def _add_temp(call, out_index, shape, dtype, gemm_adds):
    """Scratch for an ADD output when the device's GEMM cannot accumulate
    (``gemm_adds`` False: the CPU's ``np.dot``); an empty buffer of the same
    rank otherwise, so the kernel's signature is fixed."""
    if call.req[out_index] == REQ_ADD and not gemm_adds:
        return (tuple(shape), dtype)
    return ((0,) * len(shape), dtype)


def _temps(which):
    # Whether ADD outputs need scratch depends on the device's GEMM.
    return {"cpu": f"nbdl.kernels.cpu.matrix:temp_{which}",
            "cuda": f"nbdl.kernels.cuda.matrix:temp_{which}"}


# ---------------------------------------------------------------- FullyConnected

def fc_dims(attrs, dshape):
    """(M, K) of the data viewed as a matrix: flatten=True keeps the first
    axis, flatten=False keeps the last."""
    if attrs["flatten"]:
        return int(dshape[0]), size_of(dshape[1:])
    return size_of(dshape[:-1]), int(dshape[-1])


def _fc_out_shape(attrs, dshape):
    n = attrs["num_hidden"]
    return (int(dshape[0]), n) if attrs["flatten"] else tuple(dshape[:-1]) + (n,)


def _fc_check_attrs(attrs):
    if attrs["num_hidden"] < 1:
        raise AttrError(f"FullyConnected: num_hidden must be >= 1, got {attrs['num_hidden']}")


def _fc_partial_shape(attrs, in_shapes, out_shapes, where):
    """FullyConnected on partial shapes, as MXNet's FullyConnectedShape: the
    weight from data's known feature dims, the output from data's batch dim
    (and the data's batch dim from the output's)."""
    ins, outs = list(in_shapes), list(out_shapes)
    n = attrs["num_hidden"]
    data = tuple(ins[0])
    if not data:
        raise shape_error(where, "argument 'data' must have at least one axis", in_shapes)
    k = prod_dims(data[1:]) if attrs["flatten"] else data[-1]
    ins[1] = merge((n, k), ins[1], where, "argument 'weight'")
    if not attrs["no_bias"] and ins[2] is None:
        ins[2] = (n,)
    out = (data[0], n) if attrs["flatten"] else data[:-1] + (n,)
    outs[0] = merge(out, outs[0], where, "the output")
    ins[0] = merge(data, (outs[0][0],) + (-1,) * (len(data) - 1), where, "argument 'data'")
    return ins, outs


@accepts_partial
def fc_infer_shape(attrs, in_shapes, out_shapes):
    _fc_check_attrs(attrs)
    if any(s is not None and not is_full(s) for s in list(in_shapes) + list(out_shapes)):
        if in_shapes[0] is not None:
            where = f"FullyConnected (num_hidden={attrs['num_hidden']}, flatten={attrs['flatten']})"
            return _fc_partial_shape(attrs, in_shapes, out_shapes, where)
        in_shapes = [s if s is None or is_full(s) else None for s in in_shapes]
        out_shapes = [s if s is None or is_full(s) else None for s in out_shapes]
    ins, outs = list(in_shapes), list(out_shapes)
    n = attrs["num_hidden"]
    where = f"FullyConnected (num_hidden={n}, flatten={attrs['flatten']})"
    if not attrs["no_bias"]:
        b = ins[2]
        if b is None:
            ins[2] = (n,)
        elif tuple(b) not in ((n,), (n, 1)):
            raise shape_error(where, f"argument 'bias' has shape {tuple(b)}, expected ({n},)", in_shapes)
    data, w = ins[0], ins[1]
    if w is not None and (len(w) != 2 or w[0] != n):
        raise shape_error(where, f"argument 'weight' has shape {tuple(w)}, expected ({n}, in_units)",
                          in_shapes)
    if data is None:
        if not attrs["flatten"] and w is not None and outs[0] is not None:
            ins[0] = tuple(outs[0][:-1]) + (w[1],)  # (..., K) from out (..., N) and weight (N, K)
        return ins, outs
    if len(data) == 0:
        raise shape_error(where, "argument 'data' must have at least one axis", in_shapes)
    want = (n, fc_dims(attrs, data)[1])
    if w is not None and tuple(w) != want:
        raise shape_error(where, f"argument 'weight' has shape {tuple(w)} but data of shape "
                          f"{tuple(data)} needs weight {want}", in_shapes)
    ins[1] = want
    oshape = _fc_out_shape(attrs, data)
    if outs[0] is not None and tuple(outs[0]) != oshape:
        raise shape_error(where, f"output has shape {tuple(outs[0])} but data of shape "
                          f"{tuple(data)} gives {oshape}", in_shapes)
    outs[0] = oshape
    return ins, outs


def _fc_attrs(attrs):
    return {"num_hidden": attrs["num_hidden"], "no_bias": attrs["no_bias"],
            "flatten": attrs["flatten"]}


def fc_gradient(node, out_grads):
    data, weight = node.inputs[0], node.inputs[1]
    back = backward_node("_backward_FullyConnected", [out_grads[0], data, weight], node,
                         _fc_attrs(node.attrs))
    return [back.output(i) for i in range(back.num_outputs)]


def fc_temp(call, gemm_adds=False):
    m, k = fc_dims(call.attrs, call.in_shapes[0])
    return [_add_temp(call, 0, (m, call.attrs["num_hidden"]), call.out_dtypes[0], gemm_adds)]


_FC_ATTRS = {"num_hidden": Attr("int"), "no_bias": Attr("bool", False),
             "flatten": Attr("bool", True)}

register(OpDef(
    name="FullyConnected",
    input_names=lambda a: ["data", "weight"] if a["no_bias"] else ["data", "weight", "bias"],
    attrs=_FC_ATTRS,
    infer_shape=fc_infer_shape, infer_type=same_type,
    gradient=fc_gradient, temp=_temps("fc"),
    half_mirrors=True,
    flops=lambda a, ins, outs: 2 * math.prod(outs[0]) * ins[1][1],
    kernels=kernel_paths("matrix", "prepare_fc"),
    supports_add=True,
    doc="``out = dot(data, weight.T) + bias``; data is flattened to 2-D over all "
        "but the first axis (flatten=True) or applied over the last axis."))


def fc_backward_infer_shape(attrs, in_shapes, out_shapes):
    ins, outs = list(in_shapes), list(out_shapes)
    n = attrs["num_hidden"]
    for i_in, i_out in ((1, 0), (2, 1)):  # data <-> data_grad, weight <-> weight_grad
        ins[i_in] = ins[i_in] if ins[i_in] is not None else outs[i_out]
        outs[i_out] = ins[i_in]
    if ins[1] is not None:
        w_want = (n, fc_dims(attrs, ins[1])[1])
        if ins[2] is not None and tuple(ins[2]) != w_want:
            raise shape_error("_backward_FullyConnected", f"weight {tuple(ins[2])} does not fit data "
                              f"{tuple(ins[1])} (needs {w_want})", in_shapes)
        ins[2] = outs[1] = w_want
        ins[0] = ins[0] if ins[0] is not None else _fc_out_shape(attrs, ins[1])
    if not attrs["no_bias"]:
        outs[2] = (n,)
    return ins, outs


def fc_backward_gradient(node, out_grads):
    """The backward is bilinear in (out_grad, data|weight): with heads
    (g_dx, g_dw[, g_db]) of (data_grad, weight_grad[, bias_grad]),
    d/d out_grad = FC(g_dx, weight) + FC(data, g_dw[, g_db]),
    d/d data = out_grad . g_dw and d/d weight = out_grad^T . g_dx, the
    last two as the data and weight gradients of another
    ``_backward_FullyConnected`` (so every order is built from these ops)."""
    og, data, weight = node.inputs
    g_dx, g_dw = out_grads[0], out_grads[1]
    attrs = _fc_attrs(node.attrs)
    name = f"{node.name}_backward"
    plain = dict(attrs, no_bias=True)
    a = make_node("FullyConnected", [g_dx, weight], plain, name=f"{name}_ograd_data")
    b_in = [data, g_dw] + ([] if attrs["no_bias"] else [out_grads[2]])
    b = make_node("FullyConnected", b_in, attrs, name=f"{name}_ograd_weight")
    d_og = make_node("elemwise_add", [a.output(0), b.output(0)], name=f"{name}_ograd")
    d_data = make_node("_backward_FullyConnected", [og, data, g_dw], plain,
                       name=f"{name}_data").output(0)
    d_weight = make_node("_backward_FullyConnected", [og, g_dx, weight], plain,
                         name=f"{name}_weight").output(1)
    return [d_og.output(0), d_data, d_weight]


def fc_backward_temp(call, gemm_adds=False):
    m, k = fc_dims(call.attrs, call.in_shapes[1])
    n = call.attrs["num_hidden"]
    dt = call.out_dtypes[0]
    return [_add_temp(call, 0, (m, k), dt, gemm_adds), _add_temp(call, 1, (n, k), dt, gemm_adds)]


register(OpDef(
    name="_backward_FullyConnected",
    input_names=("out_grad", "data", "weight"),
    num_outputs=lambda a: 2 if a["no_bias"] else 3,
    output_names=lambda a: ["data_grad", "weight_grad"] + ([] if a["no_bias"] else ["bias_grad"]),
    attrs=dict(_FC_ATTRS),
    infer_shape=fc_backward_infer_shape, infer_type=same_type,
    gradient=fc_backward_gradient, temp=_temps("fc_backward"),
    half_mirrors=True,
    kernels=kernel_paths("matrix", "prepare_fc_backward"),
    supports_add=True, hidden=True,
    doc="Gradients of FullyConnected: data_grad = g.W, weight_grad = g^T.x, bias_grad = sum(g)."))


# ---------------------------------------------------------------- dot

def dot_dims(lshape, rshape, ta, tb, where="dot"):
    """MXNet's dot geometry.  Returns ``(M, K, N, out_shape)``: lhs is viewed
    as (M, K) (or (K, M) when transpose_a), rhs as (K, N) (or (N, K)); the
    output keeps lhs's non-contracted axes then rhs's."""
    lshape, rshape = tuple(lshape), tuple(rshape)
    if len(lshape) == 0 or len(rshape) == 0:
        raise shape_error(where, f"operands must have at least one axis, got lhs {lshape} X rhs {rshape}")
    if len(lshape) == 1 and len(rshape) == 1:
        if ta or tb:
            raise shape_error(where, f"cannot transpose vectors (lhs {lshape} X rhs {rshape})")
        if lshape[0] != rshape[0]:
            raise shape_error(where, f"inner dimensions disagree: lhs {lshape} X rhs {rshape}")
        return 1, lshape[0], 1, (1,)
    l_keep, k = (lshape[1:], lshape[0]) if ta else (lshape[:-1], lshape[-1])
    r_keep, k2 = (rshape[:-1], rshape[-1]) if tb else (rshape[1:], rshape[0])
    if k != k2:
        raise shape_error(where, f"inner dimensions disagree: lhs {lshape} X rhs {rshape} "
                          f"(transpose_a={bool(ta)}, transpose_b={bool(tb)}): {k} != {k2}")
    out = (l_keep if len(lshape) > 1 else ()) + (r_keep if len(rshape) > 1 else ())
    return size_of(l_keep), k, size_of(r_keep), out


def batch_dot_dims(lshape, rshape, ta, tb, where="batch_dot"):
    """``(B, M, K, N, out_shape)``: the leading ndim-2 axes are the batch."""
    lshape, rshape = tuple(lshape), tuple(rshape)
    if len(lshape) < 3 or len(lshape) != len(rshape) or lshape[:-2] != rshape[:-2]:
        raise shape_error(where, f"operands must be N-D (N >= 3) with equal batch axes, got "
                          f"lhs {lshape} X rhs {rshape}")
    m, k = (lshape[-1], lshape[-2]) if ta else (lshape[-2], lshape[-1])
    n, k2 = (rshape[-2], rshape[-1]) if tb else (rshape[-1], rshape[-2])
    if k != k2:
        raise shape_error(where, f"inner dimensions disagree: lhs {lshape} X rhs {rshape} "
                          f"(transpose_a={bool(ta)}, transpose_b={bool(tb)}): {k} != {k2}")
    return size_of(lshape[:-2]), m, k, n, lshape[:-2] + (m, n)


def _partial_dot_out(opname, lshape, rshape, ta, tb):
    """The output shape of dot / batch_dot on partial shapes (unknown dims
    pass to the output; the inner dims are compared where both are known),
    as MXNet's DotShape / BatchDotShape; None where MXNet infers nothing
    (batch_dot with lhs's last or rhs's second-last dim unknown)."""
    lshape, rshape = tuple(lshape), tuple(rshape)
    if opname == "batch_dot":
        if len(lshape) < 3 or len(lshape) != len(rshape):
            batch_dot_dims(lshape, rshape, ta, tb)      # raises the full rule's error
        if lshape[-1] < 0 or rshape[-2] < 0:
            return None
        lead = merge(lshape[:-2], rshape[:-2], opname, "the batch axes")
        m, k = (lshape[-1], lshape[-2]) if ta else (lshape[-2], lshape[-1])
        n, k2 = (rshape[-2], rshape[-1]) if tb else (rshape[-1], rshape[-2])
        out = lead + (m, n)
    elif len(lshape) == 1 and len(rshape) == 1:
        k, k2, out = lshape[0], rshape[0], (1,)
    else:
        l_keep, k = (lshape[1:], lshape[0]) if ta else (lshape[:-1], lshape[-1])
        r_keep, k2 = (rshape[:-1], rshape[-1]) if tb else (rshape[1:], rshape[0])
        out = (l_keep if len(lshape) > 1 else ()) + (r_keep if len(rshape) > 1 else ())
    if k >= 0 and k2 >= 0 and k != k2:
        raise shape_error(opname, f"inner dimensions disagree: lhs {show(lshape)} X rhs "
                          f"{show(rshape)} (transpose_a={bool(ta)}, transpose_b={bool(tb)})")
    return out


def _dot_infer_shape(dims, opname):
    @accepts_partial
    def rule(attrs, in_shapes, out_shapes):
        ins, outs = list(in_shapes), list(out_shapes)
        if ins[0] is None or ins[1] is None:
            return ins, outs
        if not (is_full(ins[0]) and is_full(ins[1]) and (outs[0] is None or is_full(outs[0]))):
            oshape = _partial_dot_out(opname, ins[0], ins[1], attrs["transpose_a"],
                                      attrs["transpose_b"])
            return ins, [merge(oshape, outs[0], opname, "the output")]
        oshape = dims(ins[0], ins[1], attrs["transpose_a"], attrs["transpose_b"])[-1]
        return ins, output_shape(opname, outs, oshape, in_shapes)
    return rule


def _dot_backward_infer_shape(forward_rule):
    def rule(attrs, in_shapes, out_shapes):
        ins, outs = list(in_shapes), list(out_shapes)
        for i_in, i_out in ((1, 0), (2, 1)):  # lhs <-> lhs_grad, rhs <-> rhs_grad
            ins[i_in] = ins[i_in] if ins[i_in] is not None else outs[i_out]
            outs[i_out] = ins[i_in]
        if ins[0] is None and ins[1] is not None and ins[2] is not None:
            ins[0] = forward_rule(attrs, [ins[1], ins[2]], [None])[1][0]
        return ins, outs
    return rule


def _dot_gradient(backward_op):
    def gradient(node, out_grads):
        back = backward_node(backward_op, [out_grads[0], node.inputs[0], node.inputs[1]], node,
                             {"transpose_a": node.attrs["transpose_a"],
                              "transpose_b": node.attrs["transpose_b"]})
        return [back.output(0), back.output(1)]
    return gradient


def dot_temp(call, gemm_adds=False):
    m, k, n, _ = dot_dims(call.in_shapes[0], call.in_shapes[1],
                          call.attrs["transpose_a"], call.attrs["transpose_b"])
    return [_add_temp(call, 0, (m, n), call.out_dtypes[0], gemm_adds)]


def dot_backward_temp(call, gemm_adds=False):
    _, lshape, rshape = call.in_shapes
    ta, tb = call.attrs["transpose_a"], call.attrs["transpose_b"]
    m, k, n, _ = dot_dims(lshape, rshape, ta, tb)
    dt = call.out_dtypes[0]
    return [_add_temp(call, 0, (k, m) if ta else (m, k), dt, gemm_adds),
            _add_temp(call, 1, (n, k) if tb else (k, n), dt, gemm_adds)]


def batch_dot_temp(call, gemm_adds=False):
    b, m, k, n, _ = batch_dot_dims(call.in_shapes[0], call.in_shapes[1],
                                   call.attrs["transpose_a"], call.attrs["transpose_b"])
    return [_add_temp(call, 0, (m, n), call.out_dtypes[0], gemm_adds)]  # one batch item at a time


def batch_dot_backward_temp(call, gemm_adds=False):
    _, lshape, rshape = call.in_shapes
    dt = call.out_dtypes[0]
    return [_add_temp(call, 0, tuple(lshape[-2:]), dt, gemm_adds),
            _add_temp(call, 1, tuple(rshape[-2:]), dt, gemm_adds)]


_DOT_ATTRS = {"transpose_a": Attr("bool", False), "transpose_b": Attr("bool", False),
              "forward_stype": Attr("str", None, optional=True)}

_dot_rule = _dot_infer_shape(dot_dims, "dot")
_batch_dot_rule = _dot_infer_shape(batch_dot_dims, "batch_dot")

register(OpDef(
    name="dot", input_names=("lhs", "rhs"), attrs=_DOT_ATTRS,
    infer_shape=_dot_rule, infer_type=same_type,
    gradient=_dot_gradient("_backward_dot"), temp=_temps("dot"),
    half_mirrors=True,
    flops=lambda a, ins, outs: 2 * math.prod(outs[0]) * ins[0][0 if a["transpose_a"] else -1],
    kernels=kernel_paths("matrix", "prepare_dot"),
    supports_add=True,
    doc="MXNet's dot: contracts lhs's last axis (first when transpose_a) with rhs's "
        "first axis (last when transpose_b); vector . vector gives shape (1,)."))

register(OpDef(
    name="_backward_dot", input_names=("out_grad", "lhs", "rhs"), num_outputs=2,
    output_names=("lhs_grad", "rhs_grad"), attrs=dict(_DOT_ATTRS),
    infer_shape=_dot_backward_infer_shape(_dot_rule), infer_type=same_type,
    temp=_temps("dot_backward"),
    half_mirrors=True,
    kernels=kernel_paths("matrix", "prepare_dot_backward"),
    supports_add=True, hidden=True))

register(OpDef(
    name="batch_dot", input_names=("lhs", "rhs"), attrs=dict(_DOT_ATTRS),
    infer_shape=_batch_dot_rule, infer_type=same_type,
    gradient=_dot_gradient("_backward_batch_dot"), temp=_temps("batch_dot"),
    half_mirrors=True,
    flops=lambda a, ins, outs: 2 * math.prod(outs[0]) * ins[0][-2 if a["transpose_a"] else -1],
    kernels=kernel_paths("matrix", "prepare_batch_dot"),
    supports_add=True,
    doc="Batched matrix product over the leading axes: (B, M, K) x (B, K, N) -> (B, M, N)."))

register(OpDef(
    name="_backward_batch_dot", input_names=("out_grad", "lhs", "rhs"), num_outputs=2,
    output_names=("lhs_grad", "rhs_grad"), attrs=dict(_DOT_ATTRS),
    infer_shape=_dot_backward_infer_shape(_batch_dot_rule), infer_type=same_type,
    temp=_temps("batch_dot_backward"),
    half_mirrors=True,
    kernels=kernel_paths("matrix", "prepare_batch_dot_backward"),
    supports_add=True, hidden=True))

__all__ = ["fc_dims", "dot_dims", "batch_dot_dims", "size_of", "same_type"]
