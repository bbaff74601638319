"""Batchify functions: turn a list of samples into a batch (Gluon 2.0's
``gluon.data.batchify``): ``Stack``, ``Pad``, ``Append``, ``Group`` (alias
``Tuple``), ``AsList`` and ``default_batchify_fn``.

Each of nbdl's batchify objects works in two halves: ``_host(samples)``
builds the batch as numpy arrays (nested in tuples/lists), and ``to_nd``
wraps those arrays as NDArrays.  Calling the object does both.  DataLoader
worker processes run only the first half and send numpy arrays back, and
the main process runs the second, so a batch is the same whichever process
made it.  Any other callable is run whole, wherever it runs.

Batches are made on the CPU (``nbdl.cpu()``); move them with
``split_and_load`` or ``as_in_context``.  ``use_shared_mem`` is accepted for
compatibility and has no effect (workers send arrays over pipes).
"""
import math

import numpy as np

from ...device import cpu
from ...dtype import as_dtype
from ...errors import ShapeError
from ...ndarray import NDArray
from ...ndarray.creation import share_numpy as from_numpy
from .dataset import DataError


class _Opaque:
    """A value made by a foreign batchify function; ``to_nd`` returns it
    untouched (so numpy arrays it returns stay numpy arrays)."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def host_batch(fn, samples):
    """The host half of ``fn(samples)``: numpy arrays for nbdl's batchify
    objects, the wrapped result of calling ``fn`` for any other callable."""
    host = getattr(fn, "_host", None)
    if host is not None:
        return host(samples)
    return _Opaque(fn(samples))


def to_nd(tree, device=None):
    """Wrap the numpy arrays of a host batch as NDArrays (same dtype) on
    ``device`` (default: the CPU), keeping tuples as tuples, lists as lists."""
    if isinstance(tree, _Opaque):
        return tree.value
    if isinstance(tree, np.ndarray):
        return from_numpy(tree, ctx=cpu() if device is None else device)
    if isinstance(tree, tuple):
        return tuple(to_nd(t, device) for t in tree)
    if isinstance(tree, list):
        return [to_nd(t, device) for t in tree]
    return tree


class _Batchify:
    """Calling a batchify object makes its host batch and wraps it."""

    def __call__(self, data):
        return to_nd(self._host(data))


def _host_array(x, who, i):
    """Sample ``i`` as a numpy array."""
    if isinstance(x, NDArray):
        return x.asnumpy()
    if isinstance(x, np.ndarray):
        return x
    try:
        a = np.asarray(x)
    except ValueError as e:
        raise DataError(f"{who}: sample {i} ({type(x).__name__}) is not a regular array: {e}") \
            from None
    if a.dtype == object:
        raise DataError(f"{who}: sample {i} of type {type(x).__name__} cannot be converted to "
                        f"a numeric array")
    return a


def _check_batch(data, who):
    if isinstance(data, (NDArray, np.ndarray)) or not hasattr(data, "__len__"):
        raise DataError(f"{who}: expected a list of samples, got {type(data).__name__}")
    if len(data) == 0:
        raise DataError(f"{who}: the batch has no samples")


def _stack_host(data, who):
    _check_batch(data, who)
    arrs = [_host_array(x, who, i) for i, x in enumerate(data)]
    first = arrs[0].shape
    for i, a in enumerate(arrs):
        if a.shape != first:
            raise ShapeError(f"{who}: cannot stack sample 0 of shape {first} with sample {i} "
                             f"of shape {a.shape}; use batchify.Pad or batchify.Append for "
                             f"samples of different shapes")
    return np.stack(arrs)


class Stack(_Batchify):
    """Stack samples (NDArrays, numpy arrays, lists or scalars) of one shape
    along a new first axis, keeping their dtype."""

    def __init__(self, use_shared_mem=False):
        self._use_shared_mem = use_shared_mem

    def _host(self, data):
        return _stack_host(data, "Stack")


class Pad(_Batchify):
    """Pad samples to the largest size along every axis and stack them.

    ``val`` (default 0) fills the padding; ``dtype`` is the batch's dtype
    (default: the samples' common dtype); with ``round_to`` every padded
    size is rounded up to a multiple of it.  Samples must have the same
    number of dimensions.  ``Pad()([[1, 2, 3], [4]])`` is
    ``[[1, 2, 3], [4, 0, 0]]``."""

    def __init__(self, val=None, dtype=None, round_to=None, use_shared_mem=False):
        if round_to is not None and (isinstance(round_to, bool) or
                                     not isinstance(round_to, (int, np.integer)) or round_to < 1):
            raise DataError(f"Pad: round_to must be a positive integer or None, got {round_to!r}")
        self._pad_val = 0 if val is None else val
        self._dtype = None if dtype is None else as_dtype(dtype)
        self._round_to = None if round_to is None else int(round_to)
        self._use_shared_mem = use_shared_mem

    def _host(self, data):
        _check_batch(data, "Pad")
        if isinstance(data[0], tuple):
            raise DataError("Pad: samples are tuples; Pad batches one field, use "
                            "batchify.Group(Pad(), Pad(), ...) for several")
        arrs = [_host_array(x, "Pad", i) for i, x in enumerate(data)]
        ndim = arrs[0].ndim
        for i, a in enumerate(arrs):
            if a.ndim != ndim:
                raise ShapeError(f"Pad: sample 0 has shape {arrs[0].shape} and sample {i} has "
                                 f"shape {a.shape}; samples must have the same number of "
                                 f"dimensions")
        dtype = self._dtype if self._dtype is not None else np.result_type(*arrs)
        size = [max(a.shape[axis] for a in arrs) for axis in range(ndim)]
        if self._round_to is not None:
            size = [self._round_to * math.ceil(s / self._round_to) for s in size]
        out = np.full((len(arrs),) + tuple(size), self._pad_val, dtype=dtype)
        for i, a in enumerate(arrs):
            out[(i,) + tuple(slice(0, d) for d in a.shape)] = a
        return out


class Append(_Batchify):
    """A list of the samples as separate arrays (any shapes), each with a
    new batch axis of size 1 at ``batch_axis`` when ``expand``.  NDArray
    samples keep their dtype; others become float32, as ``nd.array`` makes
    them."""

    def __init__(self, expand=True, batch_axis=0, use_shared_mem=False):
        self._expand = bool(expand)
        self._batch_axis = int(batch_axis)
        self._use_shared_mem = use_shared_mem

    def _host(self, data):
        _check_batch(data, "Append")
        out = []
        for i, x in enumerate(data):
            a = x.asnumpy() if isinstance(x, NDArray) else \
                np.array(_host_array(x, "Append", i), dtype=np.float32)
            if self._expand:
                if not -a.ndim - 1 <= self._batch_axis <= a.ndim:
                    raise ShapeError(f"Append: batch_axis {self._batch_axis} is out of range "
                                     f"for sample {i} of shape {a.shape}")
                a = np.expand_dims(a, self._batch_axis)
            out.append(a)
        return out


class Group(_Batchify):
    """Batch each field of tuple samples with its own function:
    ``Group(Stack(), Pad())`` (or ``Group([Stack(), Pad()])``) turns samples
    ``(x, y)`` into the tuple ``(Stack()(xs), Pad()(ys))``."""

    def __init__(self, fn, *args):
        if isinstance(fn, (list, tuple)):
            if args:
                raise DataError("Group: give the functions either as one list or as separate "
                                "arguments, not both")
            fns = tuple(fn)
        else:
            fns = (fn,) + args
        for i, f in enumerate(fns):
            if not callable(f):
                raise DataError(f"Group: batchify function {i} is not callable "
                                f"({type(f).__name__})")
        self._fn = fns

    def _host(self, data):
        _check_batch(data, "Group")
        for i, sample in enumerate(data):
            if not hasattr(sample, "__len__") or len(sample) != len(self._fn):
                n = len(sample) if hasattr(sample, "__len__") else "no"
                raise DataError(f"Group: sample {i} has {n} fields, expected {len(self._fn)} "
                                f"(one per batchify function)")
        return tuple(host_batch(f, [sample[k] for sample in data]) for k, f in enumerate(self._fn))


Tuple = Group


class AsList:
    """The samples as a plain list, unchanged."""

    def __call__(self, data):
        return list(data)


class _DefaultBatchify(_Batchify):
    """Stack samples into one NDArray; tuple samples give a list with one
    stacked NDArray per field (Gluon's ``default_batchify_fn``)."""

    def _host(self, data):
        _check_batch(data, "default_batchify_fn")
        if isinstance(data[0], tuple):
            width = len(data[0])
            for i, sample in enumerate(data):
                if not isinstance(sample, tuple) or len(sample) != width:
                    raise DataError(f"default_batchify_fn: sample 0 is a {width}-tuple but sample "
                                    f"{i} is {_describe(sample)}")
            return [self._host(list(field)) for field in zip(*data)]
        return _stack_host(data, "default_batchify_fn")


def _describe(sample):
    if isinstance(sample, tuple):
        return f"a {len(sample)}-tuple"
    return f"a {type(sample).__name__}"


default_batchify_fn = _DefaultBatchify()
# Gluon's name for the batchify function its worker processes use.
default_mp_batchify_fn = default_batchify_fn
