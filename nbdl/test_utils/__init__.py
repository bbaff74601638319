"""MXNet 1.x's ``mxnet.test_utils`` helpers, with MXNet's names and signatures.

Research code's own tests import these (``from mxnet.test_utils import
assert_almost_equal, check_numeric_gradient, ...``).  They run on nbdl's
executor and share their machinery with ``nbdl.testing`` (nbdl's own
helpers, with nbdl's signatures), which this module fronts.

Tolerances follow MXNet: ``rtol``/``atol`` of None pick per-dtype defaults
(``default_rtols()`` / ``default_atols()``; the larger of the two operands'),
a number is used as given, and a dict maps dtype to tolerance.
``assert_almost_equal`` broadcasts its operands as numpy does unless
``use_broadcast=False``, and its message has MXNet's form ("Error ...
exceeds tolerance rtol=..., atol=... (mismatch ...%). Location of maximum
error: ..., a=..., b=...") with the worst mismatches listed in the message
itself (MXNet printed them to stdout).

Deviations: dense storage only (``rand_ndarray`` and friends refuse other
``stype``\\ s); operands that cannot be broadcast raise ``AssertionError``
(MXNet let numpy's ``ValueError`` out); numeric gradients are accumulated in
float64.

Like MXNet's module it has no ``__all__``: ``from mxnet.test_utils import *``
also brings ``mx`` (the package), ``np``, ``npt``, ``rnd``, ``array``,
``Symbol``, ``Context``, ``current_context`` and the stdlib modules MXNet's
module imports, which 1.x test files use without importing themselves.
"""
import errno  # noqa: F401  (this and the next imports: names MXNet's module has)
import json  # noqa: F401
import logging  # noqa: F401
import numbers  # noqa: F401
import os
import platform  # noqa: F401
import sys
import time  # noqa: F401
import traceback  # noqa: F401
from collections import OrderedDict  # noqa: F401
from contextlib import contextmanager

import numpy as np
import numpy.random as rnd
import numpy.testing as npt  # noqa: F401

from ..device import _state as _device_state
from ..device import Context, as_device, current_context  # noqa: F401
from ..errors import ArgumentError
from ..ndarray import NDArray, array as _nd_array
from ..ndarray import array  # noqa: F401  (MXNet's module exposes it)
from ..symbol import Symbol  # noqa: F401
from ..util import getenv, setenv, use_np  # noqa: F401  (MXNet re-exports these)
from ._compare import (almost_equal, assert_almost_equal,  # noqa: F401
                       assert_almost_equal_ignore_nan, same)
from ._extra import (assert_allclose, assert_almost_equal_with_err, collapse_sum_like,  # noqa: F401
                     is_aarch64_run, list_gpus, rand_coord_2d, retry, same_symbol_structure,
                     simple_forward)
from ._stats import (chi_square_check, gen_buckets_probs_with_ppf, mean_check,  # noqa: F401
                     var_check, verify_generator)
from ._symbolic import (check_consistency, check_numeric_gradient,  # noqa: F401
                        check_symbolic_backward, check_symbolic_forward)
from ._tols import (default_atols, default_dtype, default_numeric_eps,  # noqa: F401
                    default_rtols, effective_dtype, get_atol, get_etol, get_rtol,
                    get_tolerance, get_tols)

# ``mx``: MXNet's module does ``import mxnet as mx`` and star-importing code
# relies on it.  The package object is taken from sys.modules (it is being
# initialised when this module loads; a static import of the package would
# go upward through the layers).
mx = sys.modules[__name__.partition(".")[0]]


def _adopt():
    """The helpers defined in the private submodules are documented (``help``)
    and pickled as ``nbdl.test_utils.<name>``, where they are reached."""
    for value in list(globals().values()):
        if callable(value) and getattr(value, "__module__", "").startswith(__name__ + "._"):
            value.__module__ = __name__


_adopt()


def default_context():
    """The context tests run on: the current default device.

    Returns
    -------
    Context
    """
    return current_context()


def set_default_context(ctx):
    """Make ``ctx`` the default device of this thread (as ``with ctx:`` does,
    without an end).

    Parameters
    ----------
    ctx : Context or str
        The device, e.g. ``mx.cpu()`` or ``'gpu(0)'``.
    """
    _device_state.device = as_device(ctx)


def assert_exception(f, exception_type, *args, **kwargs):
    """Raise ``AssertionError`` unless ``f(*args, **kwargs)`` raises
    ``exception_type``.

    Parameters
    ----------
    f : callable
    exception_type : type or tuple of types
    *args, **kwargs
        Passed to ``f``.
    """
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise "
                         f"{getattr(exception_type, '__name__', exception_type)}")


def random_arrays(*shapes):
    """Standard-normal numpy arrays of ``default_dtype()``, one per shape
    (the array itself when one shape is given).

    Parameters
    ----------
    *shapes : tuple of int
    """
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, low=0.0, high=1.0, dtype=None):
    """Uniform numpy arrays on ``[low, high)``, one per shape (always a list).

    Parameters
    ----------
    *shapes : tuple of int
    low, high : float
    dtype : numpy dtype, optional
        Default ``default_dtype()``.
    """
    dtype = dtype or default_dtype()
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population, k):
    """``k`` elements of ``population`` (a list) in random order, without
    repetition.

    Parameters
    ----------
    population : list
    k : int
        0 <= k <= len(population).
    """
    if not 0 <= k <= len(population):
        raise ArgumentError(f"random_sample: k={k} is outside [0, {len(population)}] "
                            f"(the population's size)")
    copy = list(population)
    np.random.shuffle(copy)
    return copy[:k]


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    """A random 2-d shape with sizes in ``[1, dim]`` (``[0, dim]`` when
    ``allow_zero_size``).

    Parameters
    ----------
    dim0, dim1 : int
    allow_zero_size : bool
    """
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    """A random 3-d shape (see ``rand_shape_2d``).

    Parameters
    ----------
    dim0, dim1, dim2 : int
    allow_zero_size : bool
    """
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1), rnd.randint(low, dim2 + 1)


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random shape of ``num_dim`` sizes in ``[1, dim]`` (``[0, dim]``
    when ``allow_zero_size``).

    Parameters
    ----------
    num_dim : int
    dim : int
    allow_zero_size : bool
    """
    low = 0 if allow_zero_size else 1
    return tuple(int(d) for d in rnd.randint(low, dim + 1, size=num_dim))


def _dense_only(fn, stype):
    if stype not in (None, "default"):
        raise ArgumentError(f"{fn}: stype={stype!r} is not supported: nbdl has dense "
                            f"storage only (sparse storage is out of scope)")


def rand_ndarray(shape, stype="default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A random dense NDArray (standard normal values, as ``random_arrays``).

    Parameters
    ----------
    shape : tuple of int
    stype : str
        Only ``'default'``; sparse storage types raise ``ArgumentError``.
    density, modifier_func, shuffle_csr_indices, distribution
        Sparse-only options, ignored for dense arrays as in MXNet.
    dtype : numpy dtype, optional
        Default float32.
    ctx : Context, optional
        Default ``default_context()``.
    """
    _dense_only("rand_ndarray", stype)
    return _nd_array(random_arrays(tuple(shape)), ctx=ctx or default_context(), dtype=dtype)


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Reduce ``dat`` over ``axis`` one axis at a time with
    ``numpy_reduce_func`` (``np.sum``, ``np.max``...).

    Parameters
    ----------
    dat : numpy.ndarray
    axis : None, int or sequence of int
    keepdims : bool
    numpy_reduce_func : callable
    """
    if isinstance(axis, int):
        axis = [axis]
    else:
        axis = list(axis) if axis is not None else list(range(dat.ndim))
    axis = [a % dat.ndim if dat.ndim else a for a in axis]
    ret = dat
    for i in sorted(axis, reverse=True):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        shape = list(dat.shape)
        for i in axis:
            shape[i] = 1
        ret = np.asarray(ret).reshape(shape)
    return ret


@contextmanager
def environment(*args):
    """Set environment variables for the body of a ``with`` block and put
    back what was there (unset stays unset) afterwards, even on an error.

    Parameters
    ----------
    *args
        Either ``name, value`` or one dict ``{name: value}``; a value of
        None unsets the variable.
    """
    if len(args) == 1 and isinstance(args[0], dict):
        env = dict(args[0])
    elif len(args) == 2:
        env = {args[0]: args[1]}
    else:
        raise ArgumentError(f"environment: expected (name, value) or one dict, got "
                            f"{len(args)} arguments")
    for k, v in env.items():
        if not isinstance(k, str) or not (v is None or isinstance(v, str)):
            raise ArgumentError(f"environment: {k!r}={v!r}: names and values must be str "
                                f"(None to unset)")
    saved = {k: getenv(k) for k in env}
    for k, v in env.items():
        setenv(k, v)
    try:
        yield
    finally:
        for k, v in saved.items():
            setenv(k, v)


@contextmanager
def discard_stderr():
    """Discard what is written to stderr in the body of a ``with`` block:
    file descriptor 2 (native code's output included) goes to
    ``os.devnull``, and so does ``sys.stderr``."""
    old_stream = sys.stderr
    try:
        old_stream.flush()
    except (AttributeError, OSError, ValueError):
        pass
    saved = os.dup(2)
    null = open(os.devnull, "w")
    try:
        os.dup2(null.fileno(), 2)
        sys.stderr = null
        yield
    finally:
        sys.stderr = old_stream
        os.dup2(saved, 2)
        os.close(saved)
        null.close()


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """``assert_almost_equal`` over nested tuples of arrays (None skips).

    Parameters
    ----------
    t1, t2 : NDArray, tuple or None
    rtol, atol : None, float or dict
    """
    if t1 is None or t2 is None:
        return
    if isinstance(t1, (tuple, list)):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def compare_optimizer(opt1, opt2, shape, dtype, w_stype="default", g_stype="default",
                      rtol=1e-4, atol=1e-5, compare_states=True, ntensors=1):
    """One update of two optimizers from the same random weight and gradient
    gives the same states and weights.

    Parameters
    ----------
    opt1, opt2 : Optimizer
    shape : tuple of int, or list of shapes
        A list gives ``ntensors`` tensors, updated one at a time by ``opt1``
        and together (multi-tensor) by ``opt2``.
    dtype : numpy dtype
    w_stype, g_stype : str
        Only ``'default'`` (dense).
    rtol, atol : float
    compare_states : bool
        Also compare the optimizer states.
    ntensors : int
    """
    _dense_only("compare_optimizer", w_stype)
    _dense_only("compare_optimizer", g_stype)
    ctx = default_context()

    def pair(s):
        a = np.random.uniform(size=s).astype(dtype)
        return _nd_array(a, ctx=ctx, dtype=dtype), _nd_array(a, ctx=ctx, dtype=dtype)
    if not isinstance(shape, list):
        if ntensors != 1:
            raise ArgumentError(f"compare_optimizer: ntensors={ntensors} needs a list of shapes")
        w1, w2 = pair(shape)
        g1, g2 = pair(shape)
        s1 = opt1.create_state_multi_precision(0, w1)
        s2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(s1, s2)
        opt1.update_multi_precision(0, w1, g1, s1)
        opt2.update_multi_precision(0, w2, g2, s2)
        if compare_states:
            compare_ndarray_tuple(s1, s2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    ws = [pair(s) for s in shape]
    gs = [pair(s) for s in shape]
    w2 = [w[1] for w in ws]
    g2 = [g[1] for g in gs]
    s2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2[:ntensors], g2[:ntensors], s2)
    for i in range(ntensors):
        s1 = opt1.create_state_multi_precision(i, ws[i][0])
        opt1.update_multi_precision(i, ws[i][0], gs[i][0], s1)
        if compare_states:
            compare_ndarray_tuple(s1, s2[i], rtol, atol)
        compare_ndarray_tuple(ws[i][0], w2[i], rtol, atol)


def same_array(array1, array2):
    """Whether two NDArrays share memory (a write through one shows in the other).

    Parameters
    ----------
    array1, array2 : NDArray
    """
    if not isinstance(array1, NDArray) or not isinstance(array2, NDArray):
        raise ArgumentError("same_array: expects two NDArrays")
    array1[:] += 1
    shared = same(array1.asnumpy(), array2.asnumpy())
    array1[:] -= 1
    return shared and same(array1.asnumpy(), array2.asnumpy())
