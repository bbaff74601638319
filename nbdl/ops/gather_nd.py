"""gather_nd, scatter_nd and _backward_gather_nd (rules only; kernels in
``nbdl.kernels.*.gather_nd``).

``indices`` has shape ``(M, Y0, .., Yk)``: column ``y`` is one index tuple
into the first ``M`` axes of the array of shape ``(X0, .., X_{N-1})``, so
gather_nd's output is ``(Y0, .., Yk, X_M, .., X_{N-1})``.  scatter_nd writes
``data`` of that shape into a zero array of shape ``shape`` (a repeated index
keeps one of its values); _backward_gather_nd adds instead (repeated indices
accumulate), which is gather_nd's gradient.  An index ``j`` in ``[-X, 0)``
counts from the end; one outside ``[-X, X)`` raises ``IndexOutOfRange``
(MXNet raises for gather_nd and does not check scatter_nd).

Indices may be float (truncated toward zero) or integer arrays.
"""
from .indexing import INDEX_DTYPES, IndexOutOfRange  # noqa: F401  (re-exported)
from .ir import backward_node
from .registry import FLOAT_DTYPES, Attr, OpDef, register, shape_error
from .rules import data_type, known_shape, size_of
from .shape import MOVE_DTYPES

# Adding ops accumulate with atomics on a GPU: dtypes CUDA has atomic adds for.
ADD_DTYPES = FLOAT_DTYPES + tuple(d for d in MOVE_DTYPES if d.name in ("int32", "int64"))

MAX_INDEX_DIMS = 8   # M, the length of one index tuple (the kernels take M sizes as scalars)

KERNELS = "nbdl.kernels.{}.gather_nd:{}"


def kernels(prepare):
    """The op's kernel paths: ``prepare`` in this family's CPU and CUDA modules."""
    return {"cpu": KERNELS.format("cpu", prepare), "cuda": KERNELS.format("cuda", prepare)}


def nd_layout(where, indices, full, in_shapes=None):
    """Check ``indices`` against the full array shape; returns
    ``(M, Y, inner, the sliced shape)`` where the sliced shape is
    ``indices.shape[1:] + full[M:]``."""
    shapes = in_shapes or [full, indices]
    if len(indices) < 1:
        raise shape_error(where, "indices must have at least 1 dimension (M, ...)", shapes)
    m = indices[0]
    if m < 1 or m > len(full):
        raise shape_error(where, f"indices.shape[0]={m} must be between 1 and the array's "
                                 f"{len(full)} dims", shapes)
    if m > MAX_INDEX_DIMS:
        raise shape_error(where, f"indices.shape[0]={m} exceeds the {MAX_INDEX_DIMS} index "
                                 "dims nbdl supports", shapes)
    sliced = tuple(indices[1:]) + tuple(full[m:])
    return m, size_of(indices[1:]), size_of(full[m:]), sliced


# -- gather_nd -------------------------------------------------------------------------

def _gather_nd_shape(attrs, in_shapes, out_shapes):
    d, idx = in_shapes
    if d is None or idx is None:
        return in_shapes, out_shapes
    out = nd_layout("gather_nd", tuple(idx), tuple(d), in_shapes)[3]
    if out_shapes[0] is not None and tuple(out_shapes[0]) != out:
        raise shape_error("gather_nd", f"output shape {tuple(out_shapes[0])} does not match "
                                       f"{out}", in_shapes)
    return in_shapes, [out]


def _gather_nd_grad(node, out_grads):
    g = backward_node("_gather_nd_backward", [out_grads[0], node.inputs[1], node.inputs[0]],
                      node, {})
    return [g.output(0), None]


register(OpDef(
    name="gather_nd", input_names=("data", "indices"),
    infer_shape=_gather_nd_shape, infer_type=data_type,
    gradient=_gather_nd_grad,
    half_mirrors=True,
    kernels=kernels("prepare_gather_nd"), supports_add=True,
    dtypes=MOVE_DTYPES, int_inputs=(1,),
    doc="out[y, ...] = data[indices[0, y], .., indices[M-1, y], ...]."))


# -- scatter_nd / _backward_gather_nd -----------------------------------------------------

def _scatter_shape(name):
    def rule(attrs, in_shapes, out_shapes):
        d, idx = in_shapes
        full = tuple(attrs["shape"])
        if not full or any(n is None or n < 0 for n in full):
            raise shape_error(name, f"shape={attrs['shape']} must be a non-empty tuple of sizes",
                              in_shapes)
        if idx is None:
            return in_shapes, [full]
        want = nd_layout(name, tuple(idx), full, in_shapes)[3]
        if d is not None and tuple(d) != want:
            raise shape_error(name, f"data has shape {tuple(d)}, but indices {tuple(idx)} and "
                                    f"shape={full} need {want}", in_shapes)
        return [want, tuple(idx)], [full]
    return rule


def _scatter_grad(node, out_grads):
    g = backward_node("gather_nd", [out_grads[0], node.inputs[1]], node, {})
    return [g.output(0), None]


for _name, _doc in (("scatter_nd", "A zero array of ``shape`` with out[indices[:, y]] = "
                                   "data[y] (a repeated index keeps one of its values)."),
                    ("_backward_gather_nd", "A zero array of ``shape`` with data[y] added at "
                                            "indices[:, y] (repeated indices accumulate).")):
    register(OpDef(
        name=_name, input_names=("data", "indices"),
        attrs={"shape": Attr("tuple")},
        infer_shape=_scatter_shape(_name), infer_type=data_type,
        gradient=_scatter_grad,
        half_mirrors=True,
        kernels=kernels("prepare_scatter_nd" if _name == "scatter_nd" else "prepare_add_nd"),
        supports_add=_name != "scatter_nd",
        dtypes=MOVE_DTYPES if _name == "scatter_nd" else ADD_DTYPES, int_inputs=(1,), doc=_doc))


def _gather_nd_backward_shape(attrs, in_shapes, out_shapes):
    og, idx, d = in_shapes
    d = known_shape(d, out_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    if idx is not None:
        og = nd_layout("_gather_nd_backward", tuple(idx), tuple(d), in_shapes)[3]
    return [og, idx, tuple(d)], [tuple(d)]


def _gather_nd_backward_type(attrs, in_types, out_types):
    g = next((t for t in (in_types[0], in_types[2], out_types[0]) if t is not None), None)
    if g is None:
        return in_types, out_types
    return [g, in_types[1], g], [g]


register(OpDef(
    name="_gather_nd_backward", input_names=("out_grad", "indices", "data"), hidden=True,
    infer_shape=_gather_nd_backward_shape, infer_type=_gather_nd_backward_type,
    gradient=lambda node, out_grads: [
        backward_node("gather_nd", [out_grads[0], node.inputs[1]], node, {}).output(0), None, None],
    half_mirrors=True,
    kernels=kernels("prepare_add_nd"), supports_add=True, shape_inputs=(2,), int_inputs=(1,),
    dtypes=ADD_DTYPES,
    doc="gather_nd's gradient: _backward_gather_nd with data's shape (data is read for "
        "its shape only)."))
