"""Gluon 2.0's Parameter: a named weight with one copy per device, its
gradient buffers, and deferred initialization.

A Parameter whose shape has unknown dimensions (0, or -1 as Gluon 2.0 writes
them; read back as 0) and ``allow_deferred_init=True`` defers
``initialize``: the Block infers the shape on its first forward pass, sets
``param.shape`` and calls ``param._finish_deferred_init()``.  Until then
``data()`` raises ``DeferredInitializationError``.

Which initializer fills the array: the ``init`` argument of ``initialize``,
else the parameter's own ``init``, else ``default_init`` by MXNet's name rule
(``bias``/``beta``/``running_mean`` zeros, ``gamma``/``running_var`` ones,
anything else its weight rule; see ``nbdl.initializer``).

While a HybridBlock traces its graph, ``data()`` returns the parameter's
Symbol variable (``var()``) instead of an array.
"""
import uuid
import weakref
import warnings

import numpy as np

from .. import initializer
from ..device import Device, as_device, cpu, current_device
from ..dtype import as_dtype
from ..errors import NbdlError
from ..ndarray import NDArray
from ..util import is_np_shape
from . import _trace

_GRAD_REQS = ("write", "add", "null")


class ParameterError(NbdlError, ValueError):
    """Misuse of a Parameter: bad shape, grad_req, device or an
    uninitialized parameter."""


class InvalidStorageTypeError(ParameterError, AssertionError):
    """A Parameter's ``stype``/``grad_stype`` that is no storage type (MXNet
    1.x asserts on it, hence also an ``AssertionError``)."""


class DeferredInitializationError(NbdlError, RuntimeError):
    """The parameter's initialization waits for its shape, which the first
    forward pass infers."""


def _normalize_shape(name, shape):
    if shape is None:
        return None
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        dims = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise ParameterError(f"Parameter {name!r}: shape must be a tuple of integers, got "
                             f"{shape!r}") from None
    if any(d < -1 for d in dims):
        raise ParameterError(f"Parameter {name!r}: shape {dims} has a negative dimension "
                             f"(unknown dimensions are 0 or -1)")
    return tuple(0 if d == -1 else d for d in dims)


def _shape_is_known(shape):
    return shape is not None and all(d > 0 for d in shape)


def _devices(device, what):
    if device is None:
        return [current_device()]
    if isinstance(device, (Device, str)):
        return [as_device(device)]
    if isinstance(device, (list, tuple)) and device:
        devs = [as_device(d) for d in device]
        if len(set(devs)) != len(devs):
            raise ParameterError(f"{what}: the device list {devs} names a device twice")
        return devs
    raise ParameterError(f"{what}: expected a Device or a non-empty list of Devices, got {device!r}")


def _one_device(device, ctx, name, what):
    if ctx is None:
        return device
    if device is not None and as_device(device) != as_device(ctx):
        raise ParameterError(f"Parameter {name!r}.{what}: ctx={ctx} and device={device} disagree")
    return ctx


def _place(host, device):
    """A new NDArray on ``device`` holding a copy of the numpy array ``host``."""
    return NDArray(device.from_numpy(np.array(host, copy=True)), device)


class ResetCtxAlias:
    """MXNet 1.x's ``reset_ctx`` spelling of a class's ``reset_device``
    (Parameter, ParameterDict, Block)."""

    def reset_ctx(self, ctx):
        """MXNet 1.x's name of ``reset_device``.

        Parameters
        ----------
        ctx : Device or list of Devices
            The new devices.
        """
        self.reset_device(ctx)


class Parameter(ResetCtxAlias):
    """A trainable (or constant) array of a Block.

    ``grad_req``: ``'write'`` (backward overwrites the gradient), ``'add'``
    (accumulates) or ``'null'`` (no gradient arrays).  ``lr_mult`` and
    ``wd_mult`` scale the optimizer's learning rate and weight decay."""

    def __init__(self, name="weight", grad_req="write", shape=None, dtype=np.float32,
                 lr_mult=1.0, wd_mult=1.0, init=None, allow_deferred_init=False,
                 differentiable=True, stype="default", grad_stype="default"):
        if not isinstance(name, str):
            raise ParameterError(f"Parameter name must be a str, got {name!r}")
        for what, st in (("stype", stype), ("grad_stype", grad_stype)):
            if st not in ("default", "row_sparse", "csr"):
                # not a storage type at all: MXNet 1.x asserts, so the error is
                # an AssertionError too
                raise InvalidStorageTypeError(
                    f"Parameter {name!r}: {what}={st!r} is not a storage type "
                    f"('default', 'row_sparse' or 'csr')")
            if st != "default":
                raise ParameterError(f"Parameter {name!r}: {what}={st!r} is not supported; nbdl "
                                     f"arrays are dense ('default')")
        self._name = name
        self._uuid = str(uuid.uuid4())
        self._var_name = None
        self._in_dict = False        # held by a block's ParameterDict under its 1.x name
        self._var = None
        self._var_key = None
        self._data = None
        self._grad = None
        self._device_list = None
        self._deferred_init = ()
        self._trainer_ref = None     # weak reference to the Trainer of this parameter
        self._differentiable = bool(differentiable)
        self._allow_deferred_init = bool(allow_deferred_init)
        self._stype = stype
        self._grad_stype = grad_stype
        self._shape = _normalize_shape(name, shape)
        try:
            self._dtype = as_dtype(dtype).type
        except NbdlError as e:
            raise ParameterError(f"Parameter {name!r}: {e}") from None
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.init = init
        self._grad_req = None
        self.grad_req = grad_req

    def __repr__(self):
        return (f"{type(self).__name__} {self.name} (shape={self.shape}, "
                f"dtype={np.dtype(self.dtype).name})")

    # -- attributes -----------------------------------------------------------
    @property
    def name(self):
        return self._name

    @property
    def shape(self):
        """The shape, unknown dimensions as 0 (None when nothing is known)."""
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        new = _normalize_shape(self._name, new_shape)
        old = self._shape
        if old is not None and new is not None and not (
                len(old) == len(new) and all(o in (0, n) for n, o in zip(new, old))):
            raise ParameterError(f"Parameter {self._name!r}: shape {new} is incompatible with "
                                 f"its shape {old}")
        self._shape = new

    @property
    def dtype(self):
        """The numpy scalar type (``numpy.float32``)."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self.cast(dtype)

    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in _GRAD_REQS:
            raise ParameterError(f"Parameter {self._name!r}: grad_req={req!r}: expected "
                                 f"'write', 'add' or 'null'")
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == "null":
            self._grad = None
            if self._data is not None:       # the same storage, no longer an autograd leaf
                self._data = [d.detach() for d in self._data]
        elif self._data is not None:
            self._init_grad()

    @property
    def stype(self):
        return self._stype

    @property
    def grad_stype(self):
        return self._grad_stype

    # -- initialization -------------------------------------------------------
    def initialize(self, init=None, device=None, default_init=initializer.Uniform(),
                   force_reinit=False, ctx=None):
        """Allocate and fill the data (and gradient) arrays on ``device`` (a
        Device or a list; default the current device).  With an unknown shape
        and ``allow_deferred_init`` this only records what to do."""
        if ctx is not None:
            if device is not None and _devices(ctx, "initialize") != _devices(device, "initialize"):
                raise ParameterError(f"Parameter {self._name!r}: ctx={ctx} and device={device} "
                                     f"disagree")
            device = ctx
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter {self._name!r} is already initialized, ignoring. Set "
                          f"force_reinit=True to re-initialize.", stacklevel=2)
            return
        devices = _devices(device, f"Parameter {self._name!r}.initialize")
        self._data = self._grad = None
        self._deferred_init = (init, devices, default_init, None)
        if not _shape_is_known(self._shape):
            if self._allow_deferred_init:
                return
            self._deferred_init = ()
            raise ParameterError(f"Cannot initialize Parameter {self._name!r} because it has an "
                                 f"unknown shape {self._shape}; give the full shape (in_units, "
                                 f"in_channels, ...) or allow_deferred_init=True")
        self._finish_deferred_init()

    def _finish_deferred_init(self):
        """Initialize now that the shape is known (a no-op when nothing is
        deferred)."""
        if not self._deferred_init:
            return
        init, devices, default_init, data = self._deferred_init
        if not _shape_is_known(self._shape):
            raise ParameterError(f"Cannot initialize Parameter {self._name!r}: its shape "
                                 f"{self._shape} is still unknown; specify in_units, "
                                 f"in_channels, etc. for the Block")
        if data is None:
            own = init if init is not None else self.init
            host = NDArray(np.zeros(self._shape, dtype=self._dtype), cpu())
            desc = initializer.InitDesc(self._var_name or self._name,
                                        {"__init__": own} if own is not None else {})
            initializer.create(default_init)(desc, host)
            data = host
        self._deferred_init = ()
        self._init_impl(data, devices)

    def _init_impl(self, data, devices):
        host = data.asnumpy() if isinstance(data, NDArray) else np.asarray(data)
        host = host.astype(self._dtype, copy=False)
        self._device_list = list(devices)
        self._data = [_place(host, d) for d in self._device_list]
        self._init_grad()

    def _init_grad(self):
        if self._grad_req == "null":
            self._grad = None
            return
        self._grad = [NDArray(d.device.zeros(d.shape, np.dtype(self._dtype)), d.device)
                      for d in self._data]
        from .. import autograd
        autograd.mark_variables(self._data, self._grad, self._grad_req)

    def _load_init(self, data, device=None, cast_dtype=False, dtype_source="current"):
        """Set the value from loaded ``data`` (an NDArray or numpy array),
        initializing the parameter if needed (what Block.load_parameters uses)."""
        shape = tuple(data.shape)
        if self._shape is not None:
            if len(self._shape) != len(shape) or any(o not in (0, n)
                                                     for o, n in zip(self._shape, shape)):
                raise ParameterError(f"Failed loading Parameter {self._name!r}: its shape "
                                     f"{self._shape} is incompatible with the saved {shape}")
        saved = np.dtype(data.dtype)
        if saved != np.dtype(self._dtype):
            if not cast_dtype:
                raise ParameterError(f"Failed loading Parameter {self._name!r}: it is "
                                     f"{np.dtype(self._dtype).name} but the saved array is "
                                     f"{saved.name}; pass cast_dtype=True to cast")
            if dtype_source not in ("current", "saved"):
                raise ParameterError(f"dtype_source={dtype_source!r}: expected 'current' or "
                                     f"'saved'")
            if dtype_source == "saved":
                self.cast(saved)
        self.shape = shape
        devices = None if device is None else _devices(device, f"Parameter {self._name!r}")
        if self._data is None:
            if self._deferred_init:
                if devices is not None and set(devices) != set(self._deferred_init[1]):
                    raise ParameterError(f"Failed to load Parameter {self._name!r} on {devices}: "
                                         f"it was initialized on {self._deferred_init[1]}")
                devices = self._deferred_init[1]
            elif devices is None:
                devices = [cpu()]
            self._deferred_init = ()
            self._init_impl(data, devices)
        else:
            if devices is not None and set(devices) != set(self._device_list):
                raise ParameterError(f"Failed to load Parameter {self._name!r} on {devices}: it "
                                     f"was initialized on {self._device_list}")
            self.set_data(data)

    # -- access ---------------------------------------------------------------
    def _check_and_get(self, arrays, device):
        if arrays is not None:
            if device is list:
                return arrays
            if device is None:
                if len(arrays) == 1:
                    return arrays[0]
                device = current_device()
            device = as_device(device)
            for d, a in zip(self._device_list, arrays):
                if d == device:
                    return a
            raise ParameterError(f"Parameter {self._name!r} was not initialized on {device}; it "
                                 f"was only initialized on {self._device_list}")
        if self._deferred_init:
            raise DeferredInitializationError(
                f"Parameter {self._name!r} has not been initialized yet because its "
                f"initialization was deferred; it happens during the first forward pass. Pass "
                f"one batch of data through the network before accessing Parameters, or give "
                f"in_units, in_channels, etc. to the layers to avoid deferring")
        raise ParameterError(f"Parameter {self._name!r} has not been initialized; call "
                             f"initialize() (block.initialize() initializes a Block's "
                             f"parameters and those of its children)")

    def data(self, device=None, ctx=None):
        """The array on ``device`` (default: the only device, else the current
        one); while a HybridBlock traces, the Symbol variable.

        Parameters
        ----------
        device : Device, optional
            Which copy.
        ctx : Device, optional
            MXNet 1.x's name of ``device``.
        """
        device = _one_device(device, ctx, self._name, "data")
        if _trace.tracing():
            return self.var()
        arrays = self._data
        if device is None and arrays is not None and len(arrays) == 1:
            return arrays[0]
        return self._check_and_get(arrays, device)

    def list_data(self):
        """The parameter's arrays, one a device, in ``list_device()`` order."""
        return self._check_and_get(self._data, list)

    def grad(self, device=None, ctx=None):
        """The gradient array on ``device`` (``ctx``: MXNet 1.x's name).

        Parameters
        ----------
        device : Device, optional
            Which copy (default: the only device, else the current one).
        ctx : Device, optional
            The same as ``device``.
        """
        device = _one_device(device, ctx, self._name, "grad")
        if self._data is not None and self._grad is None:
            raise ParameterError(f"Cannot get the gradient of Parameter {self._name!r} because "
                                 f"grad_req='null'")
        return self._check_and_get(self._grad, device)

    def list_grad(self):
        """The gradient arrays, one a device, in ``list_device()`` order (a
        ``ParameterError`` when ``grad_req`` is ``'null'``)."""
        if self._data is not None and self._grad is None:
            raise ParameterError(f"Cannot get the gradients of Parameter {self._name!r} because "
                                 f"grad_req='null'")
        return self._check_and_get(self._grad, list)

    def list_device(self):
        """The devices the parameter lives on (or will, once deferred
        initialization finishes)."""
        if self._data is None:
            if self._deferred_init:
                return list(self._deferred_init[1])
            raise ParameterError(f"Parameter {self._name!r} has not been initialized")
        return list(self._device_list)

    list_ctx = list_device

    # -- the trainer ------------------------------------------------------------
    @property
    def _trainer(self):
        """The Trainer this parameter was last given to (None if none, or
        once that Trainer is gone)."""
        return self._trainer_ref() if self._trainer_ref is not None else None

    def _set_trainer(self, trainer):
        """Record the Trainer of this parameter (MXNet 1.x's ``_set_trainer``),
        so that loading new values resets that trainer's kvstore.

        Parameters
        ----------
        trainer : Trainer or None
            The trainer (None: forget it).
        """
        self._trainer_ref = None if trainer is None else weakref.ref(trainer)

    # -- changes --------------------------------------------------------------
    def set_data(self, data):
        """Set the value on every device (``data``: an NDArray or array-like
        of the parameter's shape)."""
        if not isinstance(data, NDArray):
            data = np.asarray(data)
        self.shape = tuple(data.shape)
        if self._data is None:
            if not self._deferred_init:
                raise ParameterError(f"Parameter {self._name!r} has not been initialized; call "
                                     f"initialize() before set_data")
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        host = (data.asnumpy() if isinstance(data, NDArray) else data).astype(self._dtype,
                                                                              copy=False)
        trainer = self._trainer
        if trainer is not None and trainer._kv_initialized and trainer._update_on_kvstore \
                and self not in trainer._params_to_init:
            trainer._reset_kvstore()     # the store's copy would be stale
        for arr in self._data:
            arr[...] = host

    def zero_grad(self):
        """Set the gradient arrays to 0."""
        if self._grad is None:
            return
        for g in self._grad:
            g[...] = 0

    def _reduce(self):
        """The value averaged over the devices, on the CPU."""
        arrays = self._check_and_get(self._data, list)
        if len(arrays) == 1:
            return _place(arrays[0].asnumpy(), cpu())
        total = sum(a.asnumpy().astype(np.float64) for a in arrays) / len(arrays)
        return _place(total.astype(self._dtype), cpu())

    def reset_device(self, device):
        """Move the parameter (the device average of its value) to ``device``."""
        devices = _devices(device, f"Parameter {self._name!r}.reset_device")
        if self._data is not None:
            self._init_impl(self._reduce(), devices)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, devices, default_init, data)
        else:
            raise ParameterError(f"Cannot reset the device of Parameter {self._name!r}: it has "
                                 f"not been initialized")

    def cast(self, dtype):
        """Change the dtype of the data and gradients (values converted)."""
        try:
            new = as_dtype(dtype).type
        except NbdlError as e:
            raise ParameterError(f"Parameter {self._name!r}.cast: {e}") from None
        self._dtype = new
        self._var = None
        if self._data is None:
            return
        self._data = [_place(d.asnumpy().astype(new), d.device) for d in self._data]
        if self._grad is not None:
            self._grad = [_place(g.asnumpy().astype(new), g.device) for g in self._grad]
            from .. import autograd
            autograd.mark_variables(self._data, self._grad, self._grad_req)

    def var(self):
        """The Symbol variable standing for this parameter in a graph, named
        ``_var_name`` (the structural name a Block gives it) or ``name``."""
        name = self._var_name or self._name
        # an unknown dim is declared 0 outside NumPy-shape mode and -1 inside
        # it, as MXNet's Parameter.shape gives it (inside it a 0 is a size)
        shape = self._shape
        if shape is not None and is_np_shape():
            shape = tuple(-1 if d == 0 else d for d in shape)
        key = (name, shape, self._dtype, self.lr_mult, self.wd_mult)
        if self._var is None or self._var_key != key:
            from ..symbol import var
            init = self.init
            if init is not None and not isinstance(init, str):
                init = initializer.create(init).dumps()
            self._var = var(name, shape=shape, dtype=self._dtype, lr_mult=self.lr_mult,
                            wd_mult=self.wd_mult, init=init)
            self._var_key = key
        return self._var


class Constant(Parameter):
    """A parameter that never changes: ``grad_req`` is always ``'null'`` and
    the value given here is what ``initialize`` writes.

    ``Constant(value)`` (Gluon 2.0) or ``Constant(name, value)`` (Gluon 1.x).

    Parameters
    ----------
    name_or_value : str or NDArray or array-like
        The name, when ``value`` follows; otherwise the value (named
        ``'const'``).
    value : NDArray or array-like, optional
        The value, after a name.
    """

    def __init__(self, name_or_value, value=None):
        from ..ndarray import array
        if value is None:
            name, value = "const", name_or_value
        else:
            name = name_or_value
            if not isinstance(name, str):
                raise ParameterError(f"Constant(name, value): name must be a str, got {name!r}")
        if not isinstance(value, NDArray):
            value = array(value)
        self.value = value
        super().__init__(name=name, grad_req="null", shape=value.shape, dtype=value.dtype,
                         init=initializer.Constant(value.asnumpy()))

    @property
    def grad_req(self):
        return "null"

    @grad_req.setter
    def grad_req(self, req):
        if req != "null":
            warnings.warn(f"Constant parameter {self.name!r} does not support grad_req other "
                          f"than 'null'; {req!r} is ignored", stacklevel=2)
        self._grad_req = "null"


__all__ = ["Parameter", "Constant", "ParameterError", "DeferredInitializationError"]
