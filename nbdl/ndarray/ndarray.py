"""NDArray: a contiguous device array (numpy on the CPU, a ``numba.cuda``
device array on a GPU) and the device it lives on, with MXNet 1.x's API.

Arithmetic, comparisons and the fluent methods (``x.sum()``, ``x.T``) run ops
from the op table through ``invoke``, so eager code and bound graphs share one
kernel path.  What is done here directly is data movement only: basic-slicing
views, reshape views, slice copies, ``__setitem__`` assignment and transfers
between devices.

Views.  As in MXNet, ``x[1:3]``, ``x[1]`` (on a 2-D array) and ``x.reshape``
share memory with ``x`` whenever the selected elements are contiguous;
any other basic index (``x[:, 2]``, step slices) returns a copy.  MXNet 1.x
has no 0-d arrays, so indexing with integers only (``x[1, 2]``) gives shape
``(1,)``.
"""
import contextlib

import numpy as np

from ..device import Device, as_device, cpu, gpu
from ..errors import ArgumentError, ShapeError


def _arith(same_shape_op, broadcast_op, scalar_op):
    """``self <op> other``: a Python int or float goes straight to the
    scalar op's cached call (``invoke.scalar_op``), anything else through
    ``NDArray._binary``."""
    def method(self, other):
        t = type(other)
        if t is float or t is int:
            return _scalar_op(scalar_op, self, other)
        return self._binary(other, same_shape_op, broadcast_op, scalar_op)
    return method


def _rarith(broadcast_op, rscalar_op):
    """``other <op> self`` (reflected), as ``_arith``."""
    def method(self, other):
        t = type(other)
        if t is float or t is int:
            return _scalar_op(rscalar_op, self, other)
        return self._rbinary(other, broadcast_op, rscalar_op)
    return method


class NDArray:
    """An n-dimensional array on a device.

    ``NDArray(data, device)`` wraps an existing C-contiguous device array
    without copying; use ``nbdl.nd.array`` / ``zeros`` / ... to create one."""

    # numpy defers to our reflected operators (``np_scalar * x``) instead of
    # turning an NDArray into an object array.
    __array_ufunc__ = None
    __array_priority__ = 1000.0

    def __init__(self, data, device=None):
        if device is None:
            device = cpu() if isinstance(data, np.ndarray) else gpu(0)
        elif not isinstance(device, Device):
            device = as_device(device)
        self._data = data
        self._device = device

    # -- metadata ---------------------------------------------------------
    @property
    def shape(self):
        s = self._data.shape
        return s if type(s) is tuple else tuple(int(d) for d in s)

    @property
    def dtype(self):
        """The numpy scalar type (``numpy.float32``), as MXNet returns it."""
        return self._data.dtype.type

    @property
    def size(self):
        n = 1
        for d in self._data.shape:
            n *= d
        return int(n)

    @property
    def ndim(self):
        return len(self._data.shape)

    @property
    def device(self):
        return self._device

    context = ctx = device

    @property
    def stype(self):
        return "default"

    def __len__(self):
        if not self._data.shape:
            raise TypeError("len() of a 0-d NDArray")
        return int(self._data.shape[0])

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        shape_info = "x".join(str(d) for d in self.shape)
        return f"\n{self.asnumpy()}\n<{type(self).__name__} {shape_info} @{self._device}>"

    def __hash__(self):
        return id(self)

    def __bool__(self):
        n = self.size
        if n == 0:
            return False
        if n == 1:
            return bool(self.asnumpy().reshape(-1)[0])
        raise ValueError("The truth value of an NDArray with multiple elements is ambiguous.")

    # -- host access ------------------------------------------------------
    def asnumpy(self):
        """A numpy copy of the data (never a view)."""
        if isinstance(self._data, np.ndarray):
            return self._data.copy()
        with _scope(self._device):
            return self._data.copy_to_host()

    def __array__(self, dtype=None, copy=None):
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def asscalar(self):
        if self.size != 1:
            raise ShapeError(f"asscalar: the array has shape {self.shape}, not a single element")
        return self.asnumpy().reshape(-1)[0]

    def item(self):
        return self.asscalar().item()

    def tolist(self):
        return self.asnumpy().tolist()

    def wait_to_read(self):
        if self._device.device_type != "cpu":
            from numba import cuda
            with _scope(self._device):
                cuda.synchronize()

    wait_to_write = wait_to_read

    # -- autograd ---------------------------------------------------------
    _ag = None          # (tape node, output index) when produced by a recorded op
    _ag_var = None      # autograd.Variable when marked with attach_grad
    _fresh_grad = False  # set when autograd writes this array as a gradient

    def attach_grad(self, grad_req="write", stype=None):
        """Allocate a zero gradient buffer and make this array a variable
        that ``backward`` computes gradients for."""
        from .. import autograd
        if stype not in (None, "default"):
            raise ShapeError(f"attach_grad: storage type {stype!r} is not supported (dense only)")
        grad = NDArray(self._device.zeros(self.shape, self._data.dtype), self._device)
        autograd.mark_variables([self], [grad], grad_req)

    @property
    def grad(self):
        """The gradient buffer (None unless ``attach_grad`` was called)."""
        v = self._ag_var
        return v.grad if v is not None else None

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        from .. import autograd
        autograd.backward([self], [out_grad] if out_grad is not None else None,
                          retain_graph=retain_graph, train_mode=train_mode)

    def detach(self):
        """The same data, cut from the recorded graph."""
        return NDArray(self._data, self._device)

    # -- copies and devices -----------------------------------------------
    def copy(self):
        """A copy on the same device (the ``_copy`` op)."""
        return _invoke("_copy", [self], {})

    def __deepcopy__(self, memo):
        return self.copy()

    def __getstate__(self):
        return {"data": self.asnumpy(), "device": str(self._device)}

    def __setstate__(self, state):
        dev = as_device(state["device"])
        self._device = dev
        self._data = dev.from_numpy(state["data"])

    def copyto(self, other):
        """Copy into ``other`` (an NDArray: same shape, cast when the dtypes
        differ) or onto a new array on device ``other``."""
        if isinstance(other, NDArray):
            if other is self:
                return other
            if other.shape != self.shape:
                raise ShapeError(f"copyto: source shape {self.shape} does not match "
                                 f"destination shape {other.shape}")
            src = self if other.dtype == self.dtype else self.astype(other.dtype)
            if src._device == other._device:
                _invoke("_copy", [src], {}, out=other)
            else:
                _transfer_into(src._data, src._device, other._data, other._device)
            return other
        if isinstance(other, (Device, str)):
            dev = as_device(other)
            if dev == self._device:
                return self.copy()
            return NDArray(_transfer(self._data, self._device, dev), dev)
        raise ArgumentError(f"copyto: expected an NDArray or a Device, got {type(other).__name__}")

    def as_in_context(self, context):
        """``self`` when it already lives on ``context``, else a copy there."""
        dev = as_device(context)
        return self if dev == self._device else self.copyto(dev)

    as_in_ctx = to_device = as_in_context

    def astype(self, dtype, copy=True):
        """Cast with the ``Cast`` op (``copy=False`` returns ``self`` when the
        dtype already matches)."""
        from ..dtype import as_dtype
        dt = as_dtype(dtype)
        if dt == self._data.dtype:
            return self.copy() if copy else self
        return _invoke("Cast", [self], {"dtype": dt.name})

    # -- views ------------------------------------------------------------
    def reshape(self, *shape, **kwargs):
        """A view with a new shape (shares memory).  MXNet's special codes
        (``0`` keep, ``-1`` infer, ``-2``, ``-3``, ``-4``; ``reverse=True``)
        are resolved by the ``Reshape`` op's shape rule."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if "shape" in kwargs:
            if shape:
                raise ArgumentError("reshape: shape given both by position and by keyword")
            shape = tuple(kwargs.pop("shape"))
        reverse = bool(kwargs.pop("reverse", False))
        if kwargs:
            raise ArgumentError(f"reshape: unexpected keyword arguments {sorted(kwargs)}")
        target = _resolve_shape(self.shape, tuple(int(d) for d in shape), reverse)
        if self._recorded():
            # under autograd.record() the reshape is an op of the graph (as
            # MXNet 1.x records it), so gradients flow through it
            return _invoke("Reshape", [self], {"shape": target})
        return NDArray(_reshape_storage(self._data, target, self._device), self._device)

    def _recorded(self):
        """Whether an operation on this array is taped right now."""
        from ..autograd import state as _ag_state
        return _ag_state.is_recording() and (self._ag is not None or self._ag_var is not None)

    def reshape_like(self, other):
        return self.reshape(other.shape)

    def __getitem__(self, key):
        if self._recorded():
            return _record_index(self, key)
        return self._getitem(key)

    def _getitem(self, key):
        data, dev = self._data, self._device
        if not data.shape:
            if key == () or key is Ellipsis:
                return NDArray(data, dev)
            raise IndexError("too many indices for a 0-d NDArray")
        view_key, _, out_shape = _parse_key(key, self.shape)
        if _prod(out_shape) == 0:
            return NDArray(dev.empty(out_shape, data.dtype), dev)
        with _scope(dev):
            v = data[view_key]
            if not _c_contiguous(v):
                # Not a contiguous block: copy (data movement on the device).
                c = dev.empty(tuple(v.shape), data.dtype)
                c[:] = _sim_unwrap(v)
                v = c
            return NDArray(v.reshape(out_shape), dev)

    def __setitem__(self, key, value):
        """Assign a scalar, an array-like or an NDArray (broadcast as numpy
        does) to a basic index; writes into this array's storage."""
        data, dev = self._data, self._device
        if not data.shape:
            if not (key == () or key is Ellipsis):
                raise IndexError("too many indices for a 0-d NDArray")
            set_key, lhs_shape = (), ()
        else:
            _, set_key, out_shape = _parse_key(key, self.shape)
            lhs_shape = _lhs_shape(set_key, self.shape)
            if _prod(out_shape) == 0:
                return
        if isinstance(value, NDArray):
            if value._device != dev:
                src = value.asnumpy() if dev.device_type == "cpu" else value.as_in_context(dev)._data
            elif _overlaps(value._data, data):
                src = value.copy()._data
            else:
                src = value._data
        elif _is_scalar(value):
            src = value
        else:
            src = np.asarray(value, dtype=data.dtype)
            if not isinstance(data, np.ndarray):
                src = np.ascontiguousarray(src)  # numba uploads contiguous arrays only
        if not _is_scalar(src):
            src = _squeeze_leading(src, len(lhs_shape))
        with _scope(dev):
            data[set_key] = _sim_unwrap(src)

    @property
    def T(self):
        """Transpose (``self`` when ``ndim < 2``, as in MXNet)."""
        if self.ndim < 2:
            return self
        return _invoke("transpose", [self], {})

    def transpose(self, *axes, **kwargs):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        if len(axes) == 1 and axes[0] is None:
            axes = ()
        if axes:
            kwargs["axes"] = tuple(int(a) for a in axes)
        return _invoke("transpose", [self], kwargs)

    def flatten(self, **kwargs):
        return _invoke("Flatten", [self], kwargs)

    def zeros_like(self):
        from .creation import zeros_like
        return zeros_like(self)

    def ones_like(self):
        from .creation import ones_like
        return ones_like(self)

    # -- arithmetic (through the op table) --------------------------------
    def _binary(self, other, same_shape_op, broadcast_op, scalar_op, out=None):
        if isinstance(other, NDArray):
            so, ss = other._data.shape, self._data.shape
            if type(so) is not tuple or type(ss) is not tuple:   # (device arrays may differ)
                so, ss = other.shape, self.shape
            name = same_shape_op if same_shape_op and so == ss else broadcast_op
            return _invoke(name, [self, other], {}, out=out)
        if _is_scalar(other):
            if out is None:
                return _scalar_op(scalar_op, self, other)
            return _invoke(scalar_op, [self], {"scalar": float(other)}, out=out)
        return NotImplemented

    def _rbinary(self, other, broadcast_op, rscalar_op):
        if isinstance(other, NDArray):  # only reached for NDArray subclasses
            return _invoke(broadcast_op, [other, self], {})
        if _is_scalar(other):
            return _scalar_op(rscalar_op, self, other)
        return NotImplemented

    def _inplace(self, other, same_shape_op, broadcast_op, scalar_op):
        r = self._binary(other, same_shape_op, broadcast_op, scalar_op, out=self)
        return NotImplemented if r is NotImplemented else self

    __add__ = _arith("elemwise_add", "broadcast_add", "_plus_scalar")
    __radd__ = _rarith("broadcast_add", "_plus_scalar")
    def __iadd__(self, o): return self._inplace(o, "elemwise_add", "broadcast_add", "_plus_scalar")
    __sub__ = _arith("elemwise_sub", "broadcast_sub", "_minus_scalar")
    __rsub__ = _rarith("broadcast_sub", "_rminus_scalar")
    def __isub__(self, o): return self._inplace(o, "elemwise_sub", "broadcast_sub", "_minus_scalar")
    __mul__ = _arith("elemwise_mul", "broadcast_mul", "_mul_scalar")
    __rmul__ = _rarith("broadcast_mul", "_mul_scalar")
    def __imul__(self, o): return self._inplace(o, "elemwise_mul", "broadcast_mul", "_mul_scalar")
    __truediv__ = _arith("elemwise_div", "broadcast_div", "_div_scalar")
    __rtruediv__ = _rarith("broadcast_div", "_rdiv_scalar")
    def __itruediv__(self, o): return self._inplace(o, "elemwise_div", "broadcast_div", "_div_scalar")
    __mod__ = _arith(None, "broadcast_mod", "_mod_scalar")
    __rmod__ = _rarith("broadcast_mod", "_rmod_scalar")
    def __imod__(self, o): return self._inplace(o, None, "broadcast_mod", "_mod_scalar")
    __pow__ = _arith(None, "broadcast_power", "_power_scalar")
    __rpow__ = _rarith("broadcast_power", "_rpower_scalar")
    def __ipow__(self, o): return self._inplace(o, None, "broadcast_power", "_power_scalar")

    def __neg__(self):
        return _invoke("negative", [self], {})

    def __abs__(self):
        return _invoke("abs", [self], {})

    # Comparisons give 0/1 arrays of the input dtype, as in MXNet.  A scalar
    # on the left (``1 < x``) reaches the mirrored method (``x > 1``).
    def __eq__(self, o): return self._binary(o, None, "broadcast_equal", "_equal_scalar")
    def __ne__(self, o): return self._binary(o, None, "broadcast_not_equal", "_not_equal_scalar")
    def __gt__(self, o): return self._binary(o, None, "broadcast_greater", "_greater_scalar")
    def __ge__(self, o): return self._binary(o, None, "broadcast_greater_equal", "_greater_equal_scalar")
    def __lt__(self, o): return self._binary(o, None, "broadcast_lesser", "_lesser_scalar")
    def __le__(self, o): return self._binary(o, None, "broadcast_lesser_equal", "_lesser_equal_scalar")


def _fluent(op_name):
    def method(self, *args, **kwargs):
        return _namespace.function_for(op_name)(self, *args, **kwargs)
    method.__name__ = op_name
    method.__doc__ = f"``nbdl.nd.{op_name}(self, *args, **kwargs)``."
    return method


# MXNet's fluent methods: ``x.sum(axis=1)`` is ``nd.sum(x, axis=1)``; the
# positional arguments after ``self`` are the op's attributes in order.
for _name in ("sum", "mean", "max", "min", "prod", "nansum", "nanprod", "norm", "argmax",
              "argmin", "argmax_channel", "exp", "expm1", "log", "log1p", "log2", "log10",
              "sqrt", "rsqrt", "square", "reciprocal", "sign", "round", "rint", "floor", "ceil",
              "trunc", "fix", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
              "tanh", "relu", "sigmoid", "softmax", "log_softmax", "clip", "abs", "tile", "repeat",
              "expand_dims", "squeeze", "swapaxes", "flip", "broadcast_to", "broadcast_like",
              "one_hot", "pick", "take", "slice", "slice_axis", "split", "topk", "sort", "argsort",
              "diag", "pad"):
    setattr(NDArray, _name, _fluent(_name))
del _name


# -- helpers -----------------------------------------------------------------

_SCALAR_TYPES = (int, float, np.integer, np.floating, np.bool_)


def _is_scalar(v):
    return isinstance(v, _SCALAR_TYPES)


def _is_index(k):
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _scope(device):
    """The CUDA context of ``device`` (nothing to enter on the CPU)."""
    if device.device_type == "cpu":
        return contextlib.nullcontext()
    from numba import cuda
    return cuda.gpus[device.device_id]


def _c_contiguous(a):
    if isinstance(a, np.ndarray):
        return a.flags.c_contiguous
    return a.is_c_contiguous()


def _sim_unwrap(a):
    """The numpy array inside a CUDA-simulator array (numpy would read one
    element by element, and not at all when 0-d); anything else as is."""
    host = getattr(a, "_ary", None)
    return host if isinstance(host, np.ndarray) and not isinstance(a, np.ndarray) else a


def _buffer(a):
    """(address, nbytes) of a storage array."""
    if isinstance(a, np.ndarray):
        return a.__array_interface__["data"][0], a.nbytes
    host = getattr(a, "_ary", None)  # numba's CUDA simulator wraps a numpy array
    if isinstance(host, np.ndarray):
        return host.__array_interface__["data"][0], host.nbytes
    return a.__cuda_array_interface__["data"][0], a.size * a.dtype.itemsize


def _overlaps(a, b):
    """Whether two storage arrays of one device share any byte."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.size > 0 and b.size > 0 and np.may_share_memory(a, b)
    (pa, na), (pb, nb) = _buffer(a), _buffer(b)
    return na > 0 and nb > 0 and pa < pb + nb and pb < pa + na


def _same_buffer(a, b):
    return _buffer(a) == _buffer(b)


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
                f"NDArray indexing takes integers, slices, '...' and None; got "
                f"{type(k).__name__} (advanced indexing is not supported: use nd.take, "
                f"nd.pick or nd.gather_nd)")
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


def _squeeze_leading(src, ndim):
    """Drop leading size-1 axes of an assigned value beyond the target's
    rank (``x[1, 2] = nd.array([5])`` assigns a (1,) array to one element)."""
    shape = tuple(src.shape)
    extra = len(shape) - ndim
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
        from ..ops.registry import get_op
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


# Imported last: both modules use NDArray.
def _record_index(src, key):
    """``src[key]`` taped for autograd: the gradient of the result lands in
    the indexed part of a zero gradient of ``src``."""
    from ..autograd import state as _ag_state
    from ..autograd.tape import record_custom
    with _ag_state.pause():
        out = src._getitem(key)
        out = NDArray(out._data.copy() if isinstance(out._data, np.ndarray) else out._data,
                      out._device)

    def backward(out_grads, shape=tuple(src.shape), dtype=src._data.dtype, dev=src._device):
        g = NDArray(dev.zeros(shape, dtype), dev)
        if out_grads[0] is not None:
            g[key] = out_grads[0]
        return [g]
    record_custom([src], [out], backward, name="_index")
    return out


from .invoke import invoke as _invoke, scalar_op as _scalar_op  # noqa: E402
from . import namespace as _namespace  # noqa: E402
