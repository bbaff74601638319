"""sort and argsort along an axis (rules only).  Both are ``topk`` with
``k=0`` (every element), so they run topk's kernels (``nbdl.kernels.*.topk``:
the CPU's stable merge sort, the GPU's ranking) on the topk attributes that
``as_topk_attrs`` makes of theirs.

- ``sort(data, axis=-1, is_ascend=True)``: the sorted values (visible) and
  the positions they came from (hidden, int64, for the gradient); gradient
  as topk's: ``_backward_topk`` scatters the head gradient back.
- ``argsort(data, axis=-1, is_ascend=True, dtype='float32')``: the positions;
  no gradient (piecewise constant).

``axis=None`` sorts the flattened array.  Equal values keep their order
(stable); NaN sorts above every number (last when ascending, first when
descending, as numpy's ascending sort), where MXNet 1.9.1's order around a
NaN is whatever its comparison sort leaves.
"""
import numpy as np

from ..errors import DTypeError
from .attrs import Attr
from .ir import backward_node
from .registry import OpDef, kernel_paths, register, shape_error
from .topk import topk_geometry

SORT_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64,
                                           np.float16))     # float16 through float32 mirrors
INDEX_DTYPES = SORT_DTYPES + (np.dtype(np.uint8), np.dtype(np.float16))
SORT_INDEX_DTYPE = "int64"

_AXIS = Attr("int", -1, optional=True, doc="Axis to sort along; None: the flattened array.")
SORT_ATTRS = {"axis": _AXIS,
              "is_ascend": Attr("bool", True, doc="Ascending (True) or descending order.")}
ARGSORT_ATTRS = dict(SORT_ATTRS, dtype=Attr(
    "str", "float32", choices=("float16", "float32", "float64", "int32", "int64", "uint8"),
    doc="dtype of the positions."))


def as_topk_attrs(name, attrs):
    """topk's attributes for a sort (``name='sort'``) or argsort call."""
    sort = name in ("sort", "_backward_sort")
    return {"axis": attrs["axis"], "k": 0, "is_ascend": bool(attrs["is_ascend"]),
            "ret_typ": "value" if sort else "indices",
            "dtype": SORT_INDEX_DTYPE if sort else attrs["dtype"]}


def _shape(name):
    def rule(attrs, in_shapes, out_shapes):
        d = in_shapes[0]
        if d is None:
            return in_shapes, out_shapes
        *_, out = topk_geometry(as_topk_attrs(name, attrs), d, in_shapes, name)
        for got in out_shapes:
            if got is not None and tuple(got) != out:
                raise shape_error(name, f"output shape {tuple(got)} does not match {out}",
                                  in_shapes)
        return [tuple(d)], [out] * len(out_shapes)
    return rule


def _check(name, d):
    if d is not None and np.dtype(d) not in SORT_DTYPES:
        raise DTypeError(f"{name}: data has dtype {np.dtype(d)}; {name} supports "
                         f"{', '.join(str(t) for t in SORT_DTYPES)}")


def _sort_type(attrs, in_types, out_types):
    d = in_types[0] if in_types[0] is not None else out_types[0]
    _check("sort", d)
    if d is None:
        return in_types, out_types
    return [d], [d, np.dtype(SORT_INDEX_DTYPE)]


def _argsort_type(attrs, in_types, out_types):
    _check("argsort", in_types[0])
    return list(in_types), [np.dtype(attrs["dtype"])]


def _sort_grad(node, out_grads):
    g = backward_node("_backward_topk", [out_grads[0], node.output(1), node.inputs[0]], node,
                      as_topk_attrs("sort", node.attrs))
    return [g.output(0)]


_TEMP = kernel_paths("topk", "temp_sort")
_KERNELS = kernel_paths("topk", "prepare_sort")

register(OpDef(
    name="sort", attrs=dict(SORT_ATTRS),
    num_outputs=2, num_visible_outputs=1, output_names=("output", "indices"),
    infer_shape=_shape("sort"), infer_type=_sort_type, gradient=_sort_grad,
    half_mirrors=True,
    temp=_TEMP, kernels=_KERNELS, dtypes=INDEX_DTYPES,
    doc="The values sorted along ``axis`` (flattened when None), ascending unless "
        "``is_ascend=False``; stable, NaN above every number.\n\nParameters\n----------\n"
        "data : NDArray\n    The input.\naxis : int or None\n    Axis to sort along.\n"
        "is_ascend : bool\n    Ascending order."), aliases=("_npi_sort",))

register(OpDef(
    name="argsort", attrs=dict(ARGSORT_ATTRS),
    infer_shape=_shape("argsort"), infer_type=_argsort_type,
    gradient=lambda node, out_grads: [None],   # positions are piecewise constant
    half_mirrors=True,
    temp=_TEMP, kernels=_KERNELS, dtypes=INDEX_DTYPES,
    doc="The positions that sort ``data`` along ``axis`` (flattened when None), as "
        "``dtype`` (float32 by default, as MXNet).\n\nParameters\n----------\n"
        "data : NDArray\n    The input.\naxis : int or None\n    Axis to sort along.\n"
        "is_ascend : bool\n    Ascending order.\ndtype : str\n    dtype of the positions."),
    aliases=("_npi_argsort",))
