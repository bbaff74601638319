"""The storage side of NDArray: buffers and their overlap, device scopes and
transfers, basic-index keys and reshape targets (plain functions on numpy /
``numba.cuda`` arrays; ``ndarray`` and ``invoke`` use them)."""
import numpy as np

from ..errors import ShapeError
from ..ops.registry import get_op
from ..runner.buffers import (buffer as _buffer, device_scope as _scope,  # noqa: F401
                              overlaps as _overlaps, prod as _prod, same_buffer as _same_buffer)


_SCALAR_TYPES = (int, float, np.integer, np.floating, np.bool_)


def _is_scalar(v):
    return isinstance(v, _SCALAR_TYPES)


def _is_index(k):
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def _c_contiguous(a):
    if isinstance(a, np.ndarray):
        return a.flags.c_contiguous
    return a.is_c_contiguous()


def _sim_unwrap(a):
    """The numpy array inside a CUDA-simulator array (numpy would read one
    element by element, and not at all when 0-d); anything else as is."""
    host = getattr(a, "_ary", None)
    return host if isinstance(host, np.ndarray) and not isinstance(a, np.ndarray) else a


def _parse_key(key, shape):
    """A basic index -> (view_key, set_key, out_shape).

    ``view_key`` has one slice per axis (an integer ``i`` becomes ``i:i+1`` so
    that every device keeps the dimensions); ``set_key`` is the numpy key for
    assignment (integers kept, ``None`` dropped); ``out_shape`` the shape
    ``x[key]`` has (with ``None`` axes, and ``(1,)`` when every index is an
    integer since MXNet 1.x has no 0-d arrays)."""
    if not isinstance(key, tuple):
        key = (key,)
    ndim = len(shape)
    for k in key:
        if not (k is None or k is Ellipsis or isinstance(k, slice) or _is_index(k)):
            raise IndexError(
                f"NDArray indexing takes integers, slices, '...', None and (advanced "
                f"indexing) integer lists, arrays and NDArrays; got {type(k).__name__}")
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > ndim:
        raise IndexError(f"too many indices for an NDArray of shape {tuple(shape)}: "
                         f"{n_real} were indexed")
    fill = (slice(None),) * (ndim - n_real)
    if n_ell:
        pos = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:pos] + fill + key[pos + 1:]
    else:
        key = key + fill
    view_key, set_key, out_shape = [], [], []
    axis, all_int, has_none = 0, True, False
    for k in key:
        if k is None:
            out_shape.append(1)
            has_none = True
            continue
        dim = shape[axis]
        if isinstance(k, slice):
            out_shape.append(len(range(*k.indices(dim))))
            view_key.append(k)
            set_key.append(k)
            all_int = False
        else:
            i = int(k)
            j = i + dim if i < 0 else i
            if not 0 <= j < dim:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {dim}")
            view_key.append(slice(j, j + 1))
            set_key.append(j)
        axis += 1
    if all_int and not has_none:
        out_shape = [1]
    return tuple(view_key), tuple(set_key), tuple(out_shape)


def _lhs_shape(set_key, shape):
    out = []
    for k, d in zip(set_key, shape):
        if isinstance(k, slice):
            out.append(len(range(*k.indices(d))))
    return tuple(out)


def _fit_value(src, out_shape, lhs_shape):
    """An assigned value shaped for the storage's key: a value of the
    indexed shape ``out_shape`` (with ``None`` axes, or MXNet's ``(1,)`` for
    integer keys) is reshaped to the selection's ``lhs_shape``; otherwise
    leading size-1 axes beyond the target's rank are dropped
    (``x[1, 2] = nd.array([5])`` assigns a (1,) array to one element)."""
    shape = tuple(src.shape)
    if shape == tuple(out_shape) and shape != tuple(lhs_shape):
        return src.reshape(lhs_shape)
    extra = len(shape) - len(lhs_shape)
    if extra > 0 and all(d == 1 for d in shape[:extra]):
        return src.reshape(shape[extra:])
    return src


def _resolve_shape(shape, target, reverse):
    """Target shape of ``reshape``: plain shapes (positive dims and at most
    one -1) here, MXNet's codes by the ``Reshape`` op's own shape rule."""
    size = _prod(shape)
    if not reverse and all(d > 0 or d == -1 for d in target) and target.count(-1) <= 1:
        known = _prod(d for d in target if d != -1)
        if -1 in target:
            if known == 0 or size % known:
                raise ShapeError(f"reshape: cannot reshape an array of shape {shape} "
                                 f"(size {size}) into {target}")
            target = tuple(size // known if d == -1 else d for d in target)
    else:
        op = get_op("Reshape")
        attrs, _ = op.parse_attrs({"shape": target, "reverse": reverse})
        _, outs = op.infer_shape(attrs, [tuple(shape)], [None])
        if not outs or outs[0] is None:
            raise ShapeError(f"reshape: cannot reshape {shape} with {target}")
        target = tuple(outs[0])
    if _prod(target) != size:
        raise ShapeError(f"reshape: cannot reshape an array of shape {shape} (size {size}) "
                         f"into {target} (size {_prod(target)})")
    return target


def _reshape_storage(data, target, device):
    if tuple(data.shape) == target:
        return data
    with _scope(device):
        return data.reshape(target)


def _transfer(data, src, dst):
    """A copy of ``data`` (on ``src``) on device ``dst``."""
    if src.device_type == "cpu":
        return data.copy() if dst.device_type == "cpu" else dst.from_numpy(data)
    with _scope(src):
        host = data.copy_to_host()
    return host if dst.device_type == "cpu" else dst.from_numpy(host)


def _transfer_into(src_data, src, dst_data, dst):
    if src.device_type == "cpu" and dst.device_type == "cpu":
        np.copyto(dst_data, src_data)
    elif src.device_type == "cpu":
        with _scope(dst):
            dst_data.copy_to_device(src_data)
    elif dst.device_type == "cpu":
        with _scope(src):
            src_data.copy_to_host(dst_data)
    else:
        with _scope(src):
            host = src_data.copy_to_host()
        with _scope(dst):
            dst_data.copy_to_device(host)


def _slice_is_contiguous(slc_key, shape):
    """See ``NDArray._basic_indexing_slice_is_contiguous``."""
    key = slc_key if isinstance(slc_key, tuple) else (slc_key,)
    real = sum(1 for k in key if k is not None and k is not Ellipsis)
    fill = (slice(None),) * (len(shape) - real)
    if Ellipsis in key:
        i = key.index(Ellipsis)
        key = key[:i] + fill + key[i + 1:]
    else:
        key = key + fill
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    strides.reverse()
    axis, out = 0, []
    for k in key:
        if k is None:
            continue
        if isinstance(k, slice):
            start, stop, stride = k.indices(shape[axis])
            out.append((len(range(start, stop, stride)), stride * strides[axis]))
        axis += 1
    if any(n == 0 for n, _ in out):
        return True
    expected = 1
    for n, st in reversed(out):
        if n == 1:
            continue
        if st != expected:
            return False
        expected *= n
    return True


def _is_advanced(key):
    """Whether ``key`` is an advanced index: it holds an integer or boolean
    array, a list or an NDArray (a tuple inside a tuple key counts as a list)."""
    items = key if isinstance(key, tuple) else (key,)
    for i, k in enumerate(items):
        if isinstance(k, (list, np.ndarray)) or hasattr(k, "asnumpy"):
            return True
        if isinstance(k, tuple) and isinstance(key, tuple):
            return True
    return False


def _host_index(k):
    """One element of an advanced key as numpy reads it: NDArrays (of any
    dtype, as MXNet takes float index arrays) as int64 arrays."""
    if hasattr(k, "asnumpy"):
        return k.asnumpy().astype(np.int64)
    if isinstance(k, tuple):
        return np.asarray(k)
    return k


def _advanced_positions(key, shape):
    """The flat (C-order) positions ``x[key]`` selects, shaped as numpy's
    advanced indexing shapes the result (numpy's rules: broadcast index
    arrays, their axes first when slices separate them).

    Each axis's coordinate is read through ``key`` from a broadcast (not
    materialised) arange, so the work and memory are those of the result."""
    key = tuple(_host_index(k) for k in key) if isinstance(key, tuple) else _host_index(key)
    ndim = len(shape)
    pos, stride = None, 1
    for axis in range(ndim - 1, -1, -1):
        coord = np.arange(shape[axis], dtype=np.int64).reshape(
            [shape[axis] if i == axis else 1 for i in range(ndim)])
        part = np.broadcast_to(coord, shape)[key] * stride
        pos = part if pos is None else pos + part
        stride *= shape[axis]
    return np.asarray(pos, dtype=np.int64)
