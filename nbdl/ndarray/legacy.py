"""MXNet 1.x's NDArray functions that are Python, not operators:
``concatenate`` (deprecated there for ``concat``) and ``moveaxis``."""
from ..errors import ArgumentError, DTypeError, ShapeError
from .invoke import invoke
from .ndarray import NDArray


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


def moveaxis(tensor, source, destination):
    """``tensor`` with axis ``source`` moved to position ``destination``, the
    other axes in their order (a ``transpose``).

    Parameters
    ----------
    tensor : NDArray
        The array.
    source : int
        The axis to move (negative counts from the end).
    destination : int
        Its position in the result (negative counts from the end).
    """
    n = len(tensor.shape)
    for name, v in (("source", source), ("destination", destination)):
        if not isinstance(v, int) or not -n <= v < n:
            raise ArgumentError(f"moveaxis: {name} {v!r} is not an axis of a {n}-d array")
    axes = [i for i in range(n) if i != source % n]
    axes.insert(destination % n, source % n)
    return invoke("transpose", [tensor], {"axes": tuple(axes)})
