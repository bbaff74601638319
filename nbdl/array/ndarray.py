"""NDArray: a contiguous device array (numpy on the CPU, a ``numba.cuda``
device array on a GPU) and the device it lives on, with MXNet 1.x's API.

Arithmetic, comparisons and the fluent methods (``x.sum()``, ``x.T``) run ops
from the op table through ``nbdl.imperative.invoke`` (which makes results of
its inputs' class, this one), so eager code and bound graphs share one
kernel path.  What is done here directly is data movement only: basic-slicing
views, reshape views, slice copies, ``__setitem__`` assignment and transfers
between devices.

Views.  As in MXNet, ``x[1:3]``, ``x[1]`` (on a 2-D array) and ``x.reshape``
share memory with ``x`` whenever the selected elements are contiguous;
any other basic index (``x[:, 2]``, step slices) returns a copy.  MXNet 1.x
has no 0-d arrays, so indexing with integers only (``x[1, 2]``) gives shape
``(1,)``.
"""
import numpy as np

from ..device import Device, as_device, cpu
from ..dtype import as_dtype
from ..errors import ArgumentError, ShapeError, SparseStorageError
from ..imperative import engine as _engine
from ..imperative import state as _ag_state
from ..imperative.arguments import function_for as _function_for
from ..imperative.base import NDArrayBase
from ..imperative.invoke import invoke as _invoke, scalar_op as _scalar_op
from ..imperative.tape import mark_variables, record_custom
from ..ops.concat_slice import split_v2_attrs
from ..serialization.ndarray_file import load_raw_bytes
from .storage import (_advanced_positions, _c_contiguous, _fit_value, _is_advanced, _is_scalar,
                      _lhs_shape, _overlaps, _parse_key, _prod, _reshape_storage, _resolve_shape,
                      _scope, _sim_unwrap, _slice_is_contiguous, _transfer, _transfer_into)


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


class NDArray(NDArrayBase):
    """An n-dimensional array on a device.

    ``NDArray(data, device)`` wraps an existing C-contiguous device array
    without copying; use ``nbdl.nd.array`` / ``zeros`` / ... to create one.

    Parameters
    ----------
    data : numpy.ndarray or numba.cuda device array
        The storage.
    device : Device or str, optional
        Where it lives (default: the CPU for numpy data, else ``gpu(0)``).
    """

    # numpy defers to our reflected operators (``np_scalar * x``) instead of
    # turning an NDArray into an object array.
    __array_ufunc__ = None
    __array_priority__ = 1000.0

    # -- metadata ---------------------------------------------------------
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

    def tostype(self, stype):
        """This array in storage type ``stype`` (MXNet's ``NDArray.tostype``):
        ``'default'`` gives a dense copy; the sparse types (``'csr'``,
        ``'row_sparse'``) raise ``nd.sparse.SparseStorageError``, as nbdl's
        arrays are dense.

        Parameters
        ----------
        stype : str
            The storage type wanted.
        """
        if stype == "default":
            return self.copy()
        raise SparseStorageError.refused(f"nd.sparse.cast_storage(stype={stype!r})")

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
    def __array_function__(self, func, types, args, kwargs):
        # numpy's own behaviour (np.argmax(x) calls x.argmax, an NDArray, as
        # with MXNet); a ufunc it would apply to an NDArray runs on numpy
        try:
            return func._implementation(*args, **kwargs)
        except TypeError as e:
            if "does not support ufuncs" not in str(e):
                raise
        return func(*_host_args(args), **_host_args(kwargs))

    def __array__(self, dtype=None, copy=None):
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def asscalar(self):
        """The array's one element as a numpy scalar (a ``ShapeError`` for any
        other size)."""
        if self.size != 1:
            raise ShapeError(f"asscalar: the array has shape {self.shape}, not a single element")
        return self.asnumpy().reshape(-1)[0]

    def item(self):
        """The array's one element as a Python number."""
        return self.asscalar().item()

    def tolist(self):
        """The array as nested Python lists (``asnumpy().tolist()``)."""
        return self.asnumpy().tolist()

    def wait_to_read(self):
        """Block until pending writes to the array are done: kernels on the CPU
        run synchronously, so this waits only for a GPU's stream
        (``wait_to_write`` is the same)."""
        if self._device.device_type != "cpu":
            from numba import cuda
            with _scope(self._device):
                cuda.synchronize()

    wait_to_write = wait_to_read

    # -- autograd (the state is NDArrayBase's) ------------------------------
    def attach_grad(self, grad_req="write", stype=None):
        """Allocate a zero gradient buffer and make this array a variable
        that ``backward`` computes gradients for."""
        if stype not in (None, "default"):
            raise ShapeError(f"attach_grad: storage type {stype!r} is not supported (dense only)")
        grad = NDArray(self._device.zeros(self.shape, self._data.dtype), self._device)
        mark_variables([self], [grad], grad_req)

    @property
    def grad(self):
        """The gradient buffer (None unless ``attach_grad`` was called)."""
        v = self._ag_var
        return v.grad if v is not None else None

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        """``autograd.backward([self], [out_grad])``."""
        _engine.backward([self], [out_grad] if out_grad is not None else None,
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
        if "handle" in state and "data" not in state:
            # an MXNet 1.x pickle: the array's raw bytes (loaded on the CPU,
            # whatever device it was saved from)
            data = load_raw_bytes(state["handle"])
            dev = cpu()
            self._device = dev
            self._data = dev.from_numpy(np.zeros((0,), np.float32) if data is None else data)
            return
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
        return _ag_state.is_recording() and (self._ag is not None or self._ag_var is not None)

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key, shape):
        """Whether basic indexing with ``slc_key`` (ints, slices, ``None``,
        ``Ellipsis``) of a C-contiguous array of ``shape`` gives a
        C-contiguous block, as numpy's ``flags.contiguous`` says (dims of
        length 1 are ignored, an empty result is contiguous); MXNet 1.x's
        helper of the same name.

        Parameters
        ----------
        slc_key : int, slice, None, Ellipsis or tuple of them
            The index.
        shape : tuple of int
            The shape of the array indexed.
        """
        return _slice_is_contiguous(slc_key, shape)

    def __getitem__(self, key):
        if _is_advanced(key):
            # a gather of flat positions: ``take`` (recorded like any op)
            pos = _advanced_positions(key, self.shape)
            idx = NDArray(self._device.from_numpy(pos.reshape(-1)), self._device)
            return _invoke("take", [self.reshape(-1), idx], {"axis": 0}).reshape(pos.shape)
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
        does) to an index (basic, or advanced as numpy's); writes into this
        array's storage.  Under ``autograd.record()`` assigning to a recorded
        array, or a recorded value, raises (MXNet's rule)."""
        data, dev = self._data, self._device
        if key is not None and key is not Ellipsis and _recording() and (
                self._recorded() or getattr(value, "_ag", None) is not None
                or getattr(value, "_ag_var", None) is not None):
            raise ArgumentError("Inplace operations (+=, -=, x[:]=, etc) are not supported when "
                                "recording with autograd: assign outside autograd.record()")
        if not data.shape:
            if not (key == () or key is Ellipsis):
                raise IndexError("too many indices for a 0-d NDArray")
            set_key, lhs_shape = (), ()
            out_shape = ()
        elif _is_advanced(key):
            pos = _advanced_positions(key, self.shape)
            src = value.asnumpy() if isinstance(value, NDArray) else value
            if dev.device_type == "cpu":
                data.reshape(-1)[pos] = src         # a view: the storage is contiguous
            else:   # device arrays take no integer-array keys: assign on the host
                host = self.asnumpy()
                host.reshape(-1)[pos] = src
                _transfer_into(host, cpu(), data, dev)
            return
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
            src = _fit_value(src, out_shape, lhs_shape)
        with _scope(dev):
            data[set_key] = _sim_unwrap(src)

    @property
    def T(self):
        """Transpose (``self`` when ``ndim < 2``, as in MXNet)."""
        if self.ndim < 2:
            return self
        return _invoke("transpose", [self], {})

    def transpose(self, *axes, **kwargs):
        """The array with its axes permuted (``nd.transpose``).

        Parameters
        ----------
        *axes : int or tuple of int
            The new order of the axes, as ints or one tuple; none (or None)
            reverses them.
        **kwargs
            ``transpose``'s other arguments (``out``).
        """
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        if len(axes) == 1 and axes[0] is None:
            axes = ()
        if axes:
            kwargs["axes"] = tuple(int(a) for a in axes)
        return _invoke("transpose", [self], kwargs)

    def flatten(self, inplace=False, **kwargs):
        """(d0, d1, ..., dk) -> (d0, d1*...*dk).

        Parameters
        ----------
        inplace : bool
            MXNet 1.x's flag: True returns a view sharing this array's memory
            (``reshape``), False a new array.  Under ``autograd.record()`` the
            result is always the recorded op's new array (nbdl records no views)."""
        if inplace and self.shape and not _recording():
            return self.reshape((self.shape[0], -1))
        return _invoke("Flatten", [self], kwargs)

    def expand_dims(self, axis, inplace=False):
        """Insert a size-1 axis at ``axis``.

        Parameters
        ----------
        axis : int
            Position of the new axis (negative counts from the end of the result).
        inplace : bool
            True returns a view sharing this array's memory (a new array under
            ``autograd.record()``, where nbdl records no views), False a new array."""
        out = _function_for("expand_dims", NDArray)(self, axis=axis)
        return self.reshape(out.shape) if inplace and not _recording() else out

    def squeeze(self, axis=None, inplace=False):
        """Remove size-1 axes (all of them, or those in ``axis``).

        Parameters
        ----------
        axis : int or tuple of int, optional
            The axes to remove; each must have size 1.
        inplace : bool
            True returns a view sharing this array's memory (a new array under
            ``autograd.record()``, where nbdl records no views), False a new array."""
        out = _function_for("squeeze", NDArray)(self, axis=axis)
        return self.reshape(out.shape) if inplace and not _recording() else out

    def zeros_like(self):
        """Zeros of this array's shape, dtype and device."""
        dev = self._device
        return NDArray(dev.zeros(self.shape, self._data.dtype), dev)

    def ones_like(self):
        """Ones of this array's shape, dtype and device."""
        dev = self._device
        return NDArray(dev.from_numpy(np.ones(self.shape, self._data.dtype)), dev)

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

    def split_v2(self, indices_or_sections, axis=0, squeeze_axis=False):
        """Split along ``axis`` (MXNet 1.x's ``NDArray.split_v2``: the
        ``_split_v2`` op).

        Parameters
        ----------
        indices_or_sections : int or tuple of int
            An int: that many equal pieces (the axis must divide evenly); a
            tuple: the positions along ``axis`` where a new piece starts.
        axis : int
            The axis to split.
        squeeze_axis : bool
            Drop ``axis`` from the pieces (each must then have size 1 there).
        """
        return _invoke("_split_v2", [self], split_v2_attrs(indices_or_sections, axis, squeeze_axis,
                                                           self.shape))


def _recording():
    return _ag_state.is_recording()


def _fluent(op_name):
    def method(self, *args, **kwargs):
        return _function_for(op_name, NDArray)(self, *args, **kwargs)
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
              "swapaxes", "flip", "broadcast_to", "broadcast_like", "reshape_like",
              "one_hot", "pick", "take", "slice", "slice_axis", "split", "topk", "sort", "argsort",
              "diag", "pad", "shape_array", "size_array", "degrees", "radians", "arccosh",
              "arcsinh", "arctanh", "cbrt", "rcbrt", "softmin", "slice_like", "broadcast_axes"):
    setattr(NDArray, _name, _fluent(_name))
del _name


def _record_index(src, key):
    """``src[key]`` taped for autograd: the gradient of the result lands in
    the indexed part of a zero gradient of ``src``."""
    with _ag_state.pause():
        out = src._getitem(key)
        out = NDArray(out._data.copy() if isinstance(out._data, np.ndarray) else out._data,
                      out._device)

    def backward(out_grads, shape=tuple(src.shape), dtype=src._data.dtype, dev=src._device):
        g = NDArray(dev.zeros(shape, dtype), dev)
        if out_grads[0] is not None:
            with _ag_state.pause():
                g[key] = out_grads[0]
        return [g]
    record_custom([src], [out], backward, name="_index")
    return out


def _host_args(v):
    """``v`` with every NDArray (in lists, tuples and dicts too) as numpy."""
    if isinstance(v, NDArray):
        return v.asnumpy()
    if isinstance(v, (list, tuple)):
        return type(v)(_host_args(x) for x in v)
    return {k: _host_args(x) for k, x in v.items()} if isinstance(v, dict) else v


# MXNet's storage type codes (``__storage_type__`` attributes); nbdl stores 'default' only.
_STORAGE_TYPE_STR_TO_ID = {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}
py_slice = slice   # MXNet's name for the builtin (its module shadows ``slice`` with an op)
