"""SwapAxis: exchange two axes (rules only; kernels in nbdl.kernels.*.swapaxis).

MXNet's ``SwapAxis`` (alias ``swapaxes``) with attributes ``dim1`` and
``dim2`` (both 0 by default; negative counts from the end).  Unlike
``transpose`` it needs no rank when the graph is built, which is what lets
``nbdl.np.swapaxes`` work on Symbols whose shapes are not known yet.  The
kernels are the transpose kernels, given the permutation once the input's
rank is known at prepare time; the gradient is the same swap.
"""
from .ir import backward_node
from .attrs import Attr
from .registry import OpDef, kernel_paths, register, shape_error
from .shape import MOVE_DTYPES, same_type


def swap_permutation(attrs, ndim, in_shapes=None, where="SwapAxis"):
    """The transpose axes equivalent to swapping dim1 and dim2."""
    dims = []
    for name in ("dim1", "dim2"):
        d = attrs[name]
        if not -ndim <= d < ndim:
            raise shape_error(where, f"{name}={d} is out of range for an input of {ndim} "
                              f"dimension(s)", in_shapes)
        dims.append(d + ndim if d < 0 else d)
    perm = list(range(ndim))
    perm[dims[0]], perm[dims[1]] = perm[dims[1]], perm[dims[0]]
    return tuple(perm)


def _swap_shape(attrs, in_shapes, out_shapes):
    d, o = in_shapes[0], out_shapes[0]
    known = d if d is not None else o
    if known is None:
        return in_shapes, out_shapes
    perm = swap_permutation(attrs, len(known), in_shapes)
    swapped = tuple(known[p] for p in perm)  # a swap is its own inverse
    if d is not None and o is not None and tuple(o) != swapped:
        raise shape_error("SwapAxis", f"output shape {tuple(o)} does not match {swapped} "
                          f"(dim1={attrs['dim1']}, dim2={attrs['dim2']})", in_shapes)
    return ([tuple(d)] if d is not None else [swapped]), ([swapped] if d is not None else [tuple(o)])


def _swap_grad(node, out_grads):
    return [backward_node("SwapAxis", [out_grads[0]], node,
                          {"dim1": node.attrs["dim1"], "dim2": node.attrs["dim2"]}).output(0)]


register(OpDef(
    name="SwapAxis",
    attrs={"dim1": Attr("int", 0, doc="The first axis."),
           "dim2": Attr("int", 0, doc="The second axis.")},
    infer_shape=_swap_shape, infer_type=same_type,
    gradient=_swap_grad,
    half_mirrors=True,
    kernels=kernel_paths("swapaxis", "prepare_swapaxis"),
    supports_add=True, dtypes=MOVE_DTYPES,
    doc="Exchange axes dim1 and dim2 (copies the data)."), aliases=("swapaxes",))
