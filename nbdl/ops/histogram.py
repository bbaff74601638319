"""_histogram: counts of values per bin (rules only; kernels in
nbdl.kernels.*.histogram, per-value math in nbdl.kernels.shared.histogram).

MXNet 1.9.1's ``_histogram(data, [bins], bin_cnt=, range=)``: either
``bin_cnt`` equal bins over ``range`` (both given; a range of one value
widened by 0.5 on each side, as MXNet), or the edges given as the input
``bins``.  Outputs: the counts
(int64, one per bin) and the bin edges (the data's dtype).  A value belongs
to ``[edge_i, edge_i+1)``, the last bin also taking its right edge; values
outside the edges are not counted; NaN is not counted.  Bins are found as
numpy's ``histogram`` finds them, so counts match it exactly.
``nd.histogram(a, bins=10, range=None)`` / ``sym.histogram`` are MXNet's
front ends (without a range, ``nd.histogram`` counts with numpy, as MXNet's
does).  No gradient."""
import numpy as np

from ..dtype import FLOATS, INTEGERS
from ..errors import AttrError
from .attrs import Attr
from .registry import OpDef, kernel_paths, register, shape_error

_ATTRS = {"bin_cnt": Attr("int", None, optional=True, doc="The number of equal bins."),
          "range": Attr("floats", None, optional=True,
                        doc="(min, max) of the equal bins (with bin_cnt).")}


def _inputs(attrs):
    cnt, rng = attrs["bin_cnt"], attrs["range"]
    if (cnt is None) != (rng is None):
        raise AttrError("_histogram: bin_cnt and range are given both or neither (neither: "
                        "the edges are the input 'bins')")
    if cnt is not None and cnt < 1:
        raise AttrError(f"_histogram: bin_cnt={cnt} is invalid: it must be >= 1")
    if rng is not None and (len(rng) != 2 or not rng[0] <= rng[1]):
        raise AttrError(f"_histogram: range={rng} is invalid: expected (min, max) with "
                        f"min <= max")
    return ["data"] if cnt is not None else ["data", "bins"]


def _shape(attrs, in_shapes, out_shapes):
    cnt = attrs["bin_cnt"]
    if cnt is None:
        bins = in_shapes[1]
        if bins is None:
            return in_shapes, out_shapes
        if len(bins) != 1 or bins[0] < 2:
            raise shape_error("_histogram", f"bins must be a 1-D array of at least 2 edges, got "
                              f"shape {tuple(bins)}", in_shapes)
        cnt = bins[0] - 1
    return in_shapes, [(cnt,), (cnt + 1,)]


def _type(attrs, in_types, out_types):
    d = in_types[0]
    ins = list(in_types)
    if len(ins) > 1 and ins[1] is None:
        ins[1] = d
    return ins, [np.dtype(np.int64), d]


register(OpDef(
    name="_histogram", input_names=_inputs, attrs=_ATTRS, num_outputs=2,
    infer_shape=_shape, infer_type=_type,
    kernels=kernel_paths("histogram", "prepare_histogram"),
    dtypes=FLOATS + INTEGERS + (np.dtype(np.int64),), half_mirrors=True,
    doc="Counts per bin (int64) and the bin edges: bin_cnt equal bins over range, or the "
        "edges given as bins."), aliases=("_npi_histogram",))
