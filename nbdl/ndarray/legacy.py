"""MXNet 1.x's NDArray functions that are Python, not operators:
``concatenate`` (deprecated there for ``concat``), ``moveaxis``,
``onehot_encode``, ``histogram`` and ``split_v2``."""
import numpy as np

from ..errors import ArgumentError, DTypeError, ShapeError
from .creation import array
from .invoke import invoke
from ..array import NDArray


def concatenate(arrays, axis=0, always_copy=True):
    """Join ``arrays`` along ``axis`` (MXNet 1.x's deprecated ``concatenate``;
    ``concat`` is the op).

    Parameters
    ----------
    arrays : list of NDArray
        Arrays of one dtype whose shapes agree except along ``axis``.
    axis : int
        The axis to join along.
    always_copy : bool
        When False and ``arrays`` holds one array, that array is returned.

    Returns
    -------
    NDArray
        On the device of ``arrays[0]``.
    """
    if not isinstance(arrays, (list, tuple)) or not arrays:
        raise ArgumentError("concatenate: arrays must be a non-empty list of NDArrays")
    if not all(isinstance(a, NDArray) for a in arrays):
        raise ArgumentError(f"concatenate: arrays must be NDArrays, got "
                            f"{[type(a).__name__ for a in arrays]}")
    if not always_copy and len(arrays) == 1:
        return arrays[0]
    first = arrays[0]
    nd_ = len(first.shape)
    if not -nd_ <= axis < nd_:
        raise ArgumentError(f"concatenate: axis {axis} is out of range for {nd_}-d arrays")
    ax = axis % nd_
    for a in arrays[1:]:
        if a.dtype != first.dtype:
            raise DTypeError(f"concatenate: dtypes differ: {[str(b.dtype) for b in arrays]}")
        if len(a.shape) != nd_ or a.shape[:ax] != first.shape[:ax] \
                or a.shape[ax + 1:] != first.shape[ax + 1:]:
            raise ShapeError(f"concatenate: shapes {[b.shape for b in arrays]} differ outside "
                             f"axis {axis}")
    dev = first.context
    parts = [a if a.context == dev else a.as_in_context(dev) for a in arrays]
    return invoke("Concat", parts, {"dim": ax, "num_args": len(parts)})


def _axes(v, n, name):
    axes = [v] if isinstance(v, int) else list(v)
    for a in axes:
        if not isinstance(a, int) or not -n <= a < n:
            raise ArgumentError(f"moveaxis: {name} {v!r} is not an axis of a {n}-d array")
    axes = [a % n for a in axes]
    if len(set(axes)) != len(axes):
        raise ArgumentError(f"moveaxis: repeated axis in {name} {v!r}")
    return axes


def moveaxis(tensor, source, destination):
    """``tensor`` with the axes ``source`` moved to the positions
    ``destination``, the other axes in their order (a ``transpose``), as
    numpy's ``moveaxis``.

    Parameters
    ----------
    tensor : NDArray
        The array.
    source : int or sequence of int
        The axes to move (negative counts from the end).
    destination : int or sequence of int
        Their positions in the result, as many as ``source``.
    """
    n = len(tensor.shape)
    src, dst = _axes(source, n, "source"), _axes(destination, n, "destination")
    if len(src) != len(dst):
        raise ArgumentError(f"moveaxis: source {source!r} and destination {destination!r} "
                            f"need the same number of axes")
    order = [i for i in range(n) if i not in src]
    for d, s_ in sorted(zip(dst, src)):
        order.insert(d, s_)
    return invoke("transpose", [tensor], {"axes": tuple(order)})


def onehot_encode(indices, out):
    """Write the one-hot rows of ``indices`` into ``out`` and return it
    (MXNet 1.x's ``onehot_encode``; ``one_hot`` is the op).

    Parameters
    ----------
    indices : NDArray
        1-d class indices, ``out.shape[0]`` of them.
    out : NDArray
        The 2-d (rows, classes) array to fill: 1 at ``(i, indices[i])``, 0
        elsewhere (a row whose index is outside ``[0, classes)`` is all 0).
    """
    if not isinstance(indices, NDArray) or not isinstance(out, NDArray):
        raise ArgumentError("onehot_encode: indices and out must be NDArrays")
    if len(out.shape) != 2 or len(indices.shape) != 1 or indices.shape[0] != out.shape[0]:
        raise ShapeError(f"onehot_encode: indices must be 1-d with out.shape[0] entries and out "
                         f"2-d; got indices {indices.shape}, out {out.shape}")
    res = invoke("one_hot", [indices], {"depth": out.shape[1], "dtype": np.dtype(out.dtype).name})
    out[:] = res
    return out


def histogram(a, bins=10, range=None):  # noqa: A002  (MXNet's argument name)
    """Counts of ``a``'s values per bin and the bin edges (MXNet 1.x's
    ``nd.histogram``): ``bins`` equal bins over ``range``, or the edges given
    as an NDArray.  With an integer ``bins`` and no ``range`` numpy counts
    (over the data's min and max), as MXNet's front end does.

    Parameters
    ----------
    a : NDArray
        The values.
    bins : int or NDArray
        The number of equal bins, or the bin edges (increasing).
    range : (float, float), optional
        (min, max) of the equal bins.

    Returns
    -------
    (NDArray, NDArray)
        The counts (int64) and the edges.
    """
    if isinstance(bins, NDArray):
        return invoke("_histogram", [a, bins], {})
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if range is None:
            counts, edges = np.histogram(a.asnumpy(), bins=int(bins))
            return array(counts, ctx=a.context), array(edges, ctx=a.context)
        return invoke("_histogram", [a], {"bin_cnt": int(bins), "range": tuple(range)})
    raise ArgumentError(f"histogram: bins must be an int or an NDArray, got {type(bins).__name__}")
def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """``ary.split_v2(indices_or_sections, axis, squeeze_axis)``: MXNet 1.x's
    ``nd.split_v2`` (the ``_split_v2`` op).

    Parameters
    ----------
    ary : NDArray
        The array to split.
    indices_or_sections, axis, squeeze_axis
        As for ``NDArray.split_v2``.

    Returns
    -------
    list of NDArray
        The pieces (a single NDArray when there is one).
    """
    return ary.split_v2(indices_or_sections, axis, squeeze_axis)
