"""``nbdl.nd.contrib``: MXNet's ``mx.nd.contrib`` spellings.  ``contrib.X`` is
the op ``_contrib_X`` of the op table (``nd.contrib.index_copy`` runs
``_contrib_index_copy``), except ``boolean_mask``, whose output shape depends
on its mask's values: it reads the mask and takes the selected rows eagerly,
and ``isinf`` / ``isfinite`` / ``isnan`` / ``rand_zipfian``, which MXNet
writes (as here) with other ops.
"""
import math

import numpy as np

from ..errors import AttrError
from ..ops.index_contrib import boolean_mask_rows
from ..symbol.contrib import zipfian_from
from ..ops.registry import op_namespace
from . import namespace as _namespace
from . import random as _random
from .creation import array
from ..array import NDArray

PREFIX = "_contrib_"


def boolean_mask(data, index, axis=0, out=None, name=None):
    """The rows of ``data`` whose entry in the 1-d ``index`` is non-zero.

    Parameters
    ----------
    data : NDArray
        The array to select rows from (along axis 0).
    index : NDArray
        A 1-d mask with ``data.shape[0]`` entries (any dtype; non-zero selects).
    axis : int
        Only 0, as MXNet 1.9.1.
    out : NDArray, optional
        Not supported (the output shape is only known after reading the mask).
    name : str, optional
        Ignored, as in MXNet's imperative mode.

    Under ``autograd.record()`` the gradient of data is the head gradient in
    the selected rows and zero elsewhere (it is recorded as ``take``).
    """
    if int(axis) != 0:
        raise AttrError(f"boolean_mask: axis={axis} is not supported (only 0, as MXNet)")
    if out is not None:
        raise AttrError("boolean_mask: out= is not supported (the output shape depends on "
                        "index's values)")
    if not isinstance(data, NDArray) or not isinstance(index, NDArray):
        raise AttrError(f"boolean_mask: data and index must be NDArrays, got "
                        f"{type(data).__name__} and {type(index).__name__}")
    rows = boolean_mask_rows(index.asnumpy(), data.shape)
    pos = array(rows.astype(np.int64), device=data.device, dtype=np.int64)
    return _namespace.function_for("take")(data, pos, axis=0)


_namespace.register_eager("_contrib_boolean_mask", boolean_mask)


def isinf(data):
    """1 where ``data`` is +inf or -inf, 0 elsewhere (NaN included), in
    ``data``'s dtype (MXNet's ``mx.nd.contrib.isinf``).

    Parameters
    ----------
    data : NDArray
        The array to test.
    """
    return data.abs() == np.inf


def isnan(data):
    """1 where ``data`` is NaN, 0 elsewhere, in ``data``'s dtype (MXNet's
    ``mx.nd.contrib.isnan``).

    Parameters
    ----------
    data : NDArray
        The array to test.
    """
    return data != data


def isfinite(data):
    """1 where ``data`` is neither infinite nor NaN, 0 elsewhere, in
    ``data``'s dtype (MXNet's ``mx.nd.contrib.isfinite``).

    Parameters
    ----------
    data : NDArray
        The array to test.
    """
    return _namespace.function_for("broadcast_logical_and")(data == data, data.abs() != np.inf)


def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
    """Draw ``num_sampled`` classes (with replacement) from the approximately
    log-uniform distribution ``P(c) = log((c + 2) / (c + 1)) / log(range_max
    + 1)`` over ``[0, range_max)``, and the expected counts of
    ``true_classes`` and of the samples (MXNet's ``nd.contrib.rand_zipfian``).

    Parameters
    ----------
    true_classes : NDArray
        The target classes (1-d).
    num_sampled : int
        How many classes to draw.
    range_max : int
        The number of classes.
    ctx : Context, optional
        Device of the outputs (default: the current one).

    Returns
    -------
    (NDArray, NDArray, NDArray)
        The int64 samples, the float64 expected counts of ``true_classes``
        and of the samples.
    """
    rand = _random.uniform(0, math.log(range_max + 1), shape=(num_sampled,), dtype="float64",
                           ctx=ctx)
    return zipfian_from(rand, true_classes.as_in_context(rand.context), num_sampled, range_max)


__getattr__, __dir__ = op_namespace(PREFIX, "nbdl.nd.contrib", _namespace.function_for, globals())
