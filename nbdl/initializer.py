"""Weight initializers (MXNet's ``mx.init``; also importable as ``nbdl.init``).

An initializer is called as ``init(desc, arr)`` and writes into the NDArray
``arr`` in place.  ``desc`` is the parameter's name (an ``InitDesc`` or a
plain string).  When ``desc.attrs['__init__']`` names an initializer (a
parameter's own ``init``), that one fills the array; otherwise the name
decides, as in MXNet: names ending in ``weight`` get this initializer's
weight rule, ``bias``/``beta``/``moving_mean``/``running_mean`` get zeros,
``gamma``/``moving_var``/``running_var`` get ones, and any other name gets the
weight rule too (Gluon 2.0 names parameters freely, e.g. ``alpha``).

Random values are drawn on the host from ``nbdl.random``'s generator, so
``nbdl.random.seed(n)`` reproduces them.  ``init.dumps()`` gives MXNet's JSON
form (``'["uniform", {"scale": 0.07}]'``) and ``create`` accepts it back.
"""
import json
import numbers
import re

import numpy as np

from .errors import NbdlError


class InitializerError(NbdlError, ValueError):
    """An unknown initializer, bad initializer arguments, or an array an
    initializer cannot fill."""


_REGISTRY = {}


def register(klass):
    """Class decorator: make ``klass`` creatable by its lower-case name."""
    if not (isinstance(klass, type) and issubclass(klass, Initializer)):
        raise InitializerError(f"register: expected an Initializer subclass, got {klass!r}")
    _REGISTRY[klass.__name__.lower()] = klass
    return klass


def alias(*names):
    """Class decorator: register ``klass`` under extra names too."""
    def reg(klass):
        register(klass)
        for n in names:
            _REGISTRY[n.lower()] = klass
        return klass
    return reg


def create(init, /, **kwargs):
    """An Initializer from an instance (returned as is), a registered name
    (``'xavier'``, ``'zeros'``), or a ``dumps()`` string."""
    if isinstance(init, Initializer):
        if kwargs:
            raise InitializerError(f"create: keyword arguments {sorted(kwargs)} given with an "
                                   f"Initializer instance {init!r}")
        return init
    if isinstance(init, type) and issubclass(init, Initializer):
        return init(**kwargs)
    if not isinstance(init, str):
        raise InitializerError(f"create: expected an Initializer, a name or a JSON string, "
                               f"got {init!r}")
    text = init.strip()
    if text.startswith("["):
        try:
            name, args = json.loads(text)
        except (ValueError, TypeError) as e:
            raise InitializerError(f"create: {init!r} is not an initializer's JSON form "
                                   f"'[name, {{args}}]' ({e})") from None
        if not isinstance(args, dict):
            raise InitializerError(f"create: {init!r}: the arguments must be a JSON object")
        return create(name, **{**args, **kwargs})
    klass = _REGISTRY.get(text.lower())
    if klass is None:
        raise InitializerError(f"unknown initializer {init!r}; registered: "
                               f"{', '.join(sorted(_REGISTRY))}")
    try:
        return klass(**kwargs)
    except TypeError as e:
        raise InitializerError(f"initializer {init!r}: bad arguments {kwargs} ({e})") from None


class InitDesc(str):
    """A parameter name carrying attributes (``attrs['__init__']``) and the
    initializer that started the call (``global_init``)."""

    def __new__(cls, name, attrs=None, global_init=None):
        ret = super().__new__(cls, name)
        ret.attrs = dict(attrs or {})
        ret.global_init = global_init
        return ret


# Name endings (checked in order) that get a fixed value instead of the
# weight rule, following MXNet's Initializer.__call__.
_ZERO_SUFFIXES = ("bias", "beta", "moving_mean", "running_mean", "moving_inv_var", "moving_avg")
_ONE_SUFFIXES = ("gamma", "moving_var", "running_var")


class Initializer:
    """Base class.  Subclasses define ``_init_weight(name, arr)``; the
    constructor's keyword arguments are what ``dumps`` writes."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs

    def dumps(self):
        """``'["name", {kwargs}]'``: the JSON MXNet writes in ``__init__``."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        return type(self) is type(other) and self.dumps() == other.dumps()

    __hash__ = object.__hash__

    def __call__(self, desc, arr):
        from .ndarray import NDArray
        if not isinstance(arr, NDArray):
            raise InitializerError(f"{type(self).__name__}: expected an NDArray to fill for "
                                   f"{desc!r}, got {type(arr).__name__}")
        if not isinstance(desc, InitDesc):
            desc = InitDesc(str(desc))
        if desc.global_init is None:
            desc.global_init = self
        own = desc.attrs.get("__init__", "")
        if own:
            create(own)._init_weight(desc, arr)
        elif desc.endswith("weight"):
            self._init_weight(desc, arr)
        elif desc.endswith(_ZERO_SUFFIXES):
            self._init_zero(desc, arr)
        elif desc.endswith(_ONE_SUFFIXES):
            self._init_one(desc, arr)
        else:
            self._init_weight(desc, arr)

    def _init_zero(self, _, arr):
        _write(arr, np.zeros(arr.shape))

    def _init_one(self, _, arr):
        _write(arr, np.ones(arr.shape))

    def _init_bias(self, name, arr):
        self._init_zero(name, arr)

    def _init_gamma(self, name, arr):
        self._init_one(name, arr)

    def _init_beta(self, name, arr):
        self._init_zero(name, arr)

    def _init_weight(self, name, arr):
        raise InitializerError(f"{type(self).__name__} cannot initialize {name!r}: an "
                               f"Initializer subclass must define _init_weight(name, arr)")


def _write(arr, values):
    """Write host ``values`` into ``arr`` (any device), in ``arr``'s dtype."""
    values = np.asarray(values).astype(np.dtype(arr.dtype), copy=False)
    if arr.ndim == 0:
        arr[()] = values
    elif arr.size:
        arr[:] = values.reshape(arr.shape)


def _rng():
    from .random import generator
    return generator()


def _positive(cls, name, value, allow_zero=False):
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or \
            not (value > 0 or (allow_zero and value == 0)):
        rel = ">= 0" if allow_zero else "> 0"
        raise InitializerError(f"{cls}: {name} must be a number {rel}, got {value!r}")
    return float(value)


def _choice(cls, name, value, choices):
    if value not in choices:
        raise InitializerError(f"{cls}: {name}={value!r}: expected one of {', '.join(choices)}")
    return value


@alias("zeros")
class Zero(Initializer):
    """Fills with 0."""

    def _init_weight(self, _, arr):
        self._init_zero(_, arr)


@alias("ones")
class One(Initializer):
    """Fills with 1."""

    def _init_weight(self, _, arr):
        self._init_one(_, arr)


@register
class Constant(Initializer):
    """Fills with ``value``: a number, or an array broadcast to the shape."""

    def __init__(self, value):
        from .ndarray import NDArray
        if isinstance(value, NDArray):
            value = value.asnumpy()
        if isinstance(value, np.ndarray):
            dumped = value.tolist()
        elif isinstance(value, (numbers.Real, list, tuple)) and not isinstance(value, bool):
            dumped = value
        else:
            raise InitializerError(f"Constant: value must be a number or an array, got {value!r}")
        super().__init__(value=dumped)
        self.value = np.asarray(value)

    def _init_weight(self, name, arr):
        try:
            values = np.broadcast_to(self.value, arr.shape)
        except ValueError:
            raise InitializerError(f"Constant: value of shape {self.value.shape} does not "
                                   f"broadcast to {name!r} of shape {arr.shape}") from None
        _write(arr, values)


@register
class Uniform(Initializer):
    """Uniform samples from ``[-scale, scale)``."""

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = _positive("Uniform", "scale", scale, allow_zero=True)

    def _init_weight(self, _, arr):
        _write(arr, _rng().uniform(-self.scale, self.scale, arr.shape))


@register
class Normal(Initializer):
    """Normal samples with mean 0 and standard deviation ``sigma``."""

    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = _positive("Normal", "sigma", sigma, allow_zero=True)

    def _init_weight(self, _, arr):
        _write(arr, _rng().normal(0.0, self.sigma, arr.shape))


@register
class Orthogonal(Initializer):
    """``scale`` times a (semi-)orthogonal matrix: the SVD factor of a random
    ``(shape[0], prod(shape[1:]))`` matrix with uniform [-1, 1)
    (``rand_type='uniform'``) or standard normal entries."""

    def __init__(self, scale=1.414, rand_type="uniform"):
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = _positive("Orthogonal", "scale", scale)
        self.rand_type = _choice("Orthogonal", "rand_type", rand_type, ("uniform", "normal"))

    def _init_weight(self, name, arr):
        if arr.ndim < 2:
            raise InitializerError(f"Orthogonal cannot initialize {name!r} of shape {arr.shape}: "
                                   f"it needs at least 2 dimensions")
        nout = arr.shape[0]
        nin = int(np.prod(arr.shape[1:]))
        if self.rand_type == "uniform":
            tmp = _rng().uniform(-1.0, 1.0, (nout, nin))
        else:
            tmp = _rng().normal(0.0, 1.0, (nout, nin))
        u, _, v = np.linalg.svd(tmp, full_matrices=False)
        res = u if u.shape == tmp.shape else v
        _write(arr, self.scale * res.reshape(arr.shape))


def _fans(cls, name, shape):
    if len(shape) < 2:
        raise InitializerError(f"{cls} cannot initialize {name!r} of shape {shape}: it needs at "
                               f"least 2 dimensions (fan-in and fan-out)")
    hw = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
    return shape[1] * hw, shape[0] * hw


@register
class Xavier(Initializer):
    """Glorot initialization: samples of variance proportional to
    ``magnitude / factor`` where ``factor`` is the fan-in (``'in'``), the
    fan-out (``'out'``) or their mean (``'avg'``).  ``rnd_type='uniform'``
    draws from ``[-s, s)`` with ``s = sqrt(magnitude / factor)``;
    ``'gaussian'`` from a normal of standard deviation ``s``."""

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = _choice("Xavier", "rnd_type", rnd_type, ("uniform", "gaussian"))
        self.factor_type = _choice("Xavier", "factor_type", factor_type, ("avg", "in", "out"))
        self.magnitude = _positive("Xavier", "magnitude", magnitude)

    def _init_weight(self, name, arr):
        fan_in, fan_out = _fans(type(self).__name__, name, arr.shape)
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        if factor <= 0:
            raise InitializerError(f"{type(self).__name__} cannot initialize {name!r} of shape "
                                   f"{arr.shape}: its {self.factor_type} fan is 0")
        scale = np.sqrt(self.magnitude / factor)
        if self.rnd_type == "uniform":
            _write(arr, _rng().uniform(-scale, scale, arr.shape))
        else:
            _write(arr, _rng().normal(0.0, scale, arr.shape))


@register
class MSRAPrelu(Xavier):
    """He/Kaiming initialization for PReLU nets: Xavier with Gaussian draws
    and ``magnitude = 2 / (1 + slope**2)``."""

    def __init__(self, factor_type="avg", slope=0.25):
        slope = _positive("MSRAPrelu", "slope", slope, allow_zero=True)
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope ** 2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register
class LSTMBias(Initializer):
    """Fills an LSTM bias of shape ``(4 * hidden,)`` with 0 except the
    forget gate's quarter (the second of MXNet's gates i, f, g, o), which
    gets ``forget_bias``.

    Parameters
    ----------
    forget_bias : float, default 1.0
        The forget gate's bias (Jozefowicz et al. 2015 recommend 1.0).
    """

    def __init__(self, forget_bias=1.0):
        if not isinstance(forget_bias, numbers.Real) or isinstance(forget_bias, bool):
            raise InitializerError(f"LSTMBias: forget_bias must be a number, got "
                                   f"{forget_bias!r}")
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = float(forget_bias)

    def _init_weight(self, name, arr):
        if arr.ndim != 1 or arr.shape[0] % 4:
            raise InitializerError(f"LSTMBias: {str(name)!r} has shape {tuple(arr.shape)}; an "
                                   f"LSTM bias has shape (4 * num_hidden,)")
        values = np.zeros(arr.shape)
        n = arr.shape[0] // 4
        values[n:2 * n] = self.forget_bias
        _write(arr, values)


# The gates of each mode of the fused RNN op, in MXNet's order.
RNN_GATES = {"rnn_relu": ("",), "rnn_tanh": ("",), "lstm": ("_i", "_f", "_c", "_o"),
             "gru": ("_r", "_z", "_o")}


def fused_rnn_layout(mode, num_layers, bidirectional, num_input, num_hidden, prefix=""):
    """Where each unfused weight lies in the flat ``parameters`` vector of
    MXNet's fused ``RNN`` op: all weights (per layer and direction, the
    gates' ``i2h`` then ``h2h`` matrices), then all biases in the same order.

    Parameters
    ----------
    mode : {'rnn_relu', 'rnn_tanh', 'lstm', 'gru'}
    num_layers : int
    bidirectional : bool
    num_input : int
        Features of layer 0's input.
    num_hidden : int
    prefix : str, optional
        Put before every name (MXNet's ``mx.rnn`` names: ``lstm_l0_i2h_f_weight``).

    Returns
    -------
    layout : list of (name, start, shape)
    size : int
        The vector's length.
    """
    gates = RNN_GATES[mode]
    dirs = ("l", "r") if bidirectional else ("l",)
    h, b = int(num_hidden), len(dirs)
    out, p = [], 0
    for kind in ("weight", "bias"):
        for layer in range(num_layers):
            for d in dirs:
                for group in ("i2h", "h2h"):
                    for g in gates:
                        if kind == "bias":
                            shape = (h,)
                        elif group == "h2h":
                            shape = (h, h)
                        else:
                            shape = (h, int(num_input) if layer == 0 else b * h)
                        out.append((f"{prefix}{d}{layer}_{group}{g}_{kind}", p, shape))
                        p += int(np.prod(shape))
    return out, p


def fused_rnn_num_input(size, mode, num_layers, bidirectional, num_hidden):
    """Layer 0's input features given the fused parameter vector's ``size``
    (the inverse of ``fused_rnn_layout``'s size; MXNet's formula)."""
    b, m, h = 2 if bidirectional else 1, len(RNN_GATES[mode]), int(num_hidden)
    return size // b // h // m - (num_layers - 1) * (h + b * h + 2) - h - 2


@register
class FusedRNN(Initializer):
    """Initializes the flat ``parameters`` vector of a fused ``RNN`` op as
    the separate weights and biases it holds: each through ``init`` (or the
    initializer that started the call, by its name: weights by its weight
    rule, biases zero), an LSTM's forget-gate biases to ``forget_bias``.

    Parameters
    ----------
    init : Initializer or str or None
        For the weights and biases (None: the global initializer).
    num_hidden : int
    num_layers : int
    mode : {'rnn_relu', 'rnn_tanh', 'lstm', 'gru'}
    bidirectional : bool, default False
    forget_bias : float, default 1.0
    """

    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False,
                 forget_bias=1.0):
        if init is not None:
            init = create(init)
        if mode not in RNN_GATES:
            raise InitializerError(f"FusedRNN: mode must be one of {sorted(RNN_GATES)}, got "
                                   f"{mode!r}")
        super().__init__(init=None if init is None else init.dumps(), num_hidden=num_hidden,
                         num_layers=num_layers, mode=mode, bidirectional=bidirectional,
                         forget_bias=forget_bias)
        self._init = init
        self._geometry = (mode, int(num_layers), bool(bidirectional))
        self._num_hidden, self._forget_bias = int(num_hidden), float(forget_bias)

    def _init_weight(self, desc, arr):
        from .ndarray import zeros
        mode, layers, bidi = self._geometry
        num_input = fused_rnn_num_input(arr.size, mode, layers, bidi, self._num_hidden)
        layout, size = fused_rnn_layout(mode, layers, bidi, num_input, self._num_hidden)
        if num_input <= 0 or size != arr.size:
            raise InitializerError(f"FusedRNN: {str(desc)!r} has {arr.size} values, not the "
                                   f"size of a {layers}-layer {mode} parameter vector with "
                                   f"{self._num_hidden} hidden units")
        flat = np.zeros(size, dtype=np.float64)
        global_init = getattr(desc, "global_init", None) or self
        for name, start, shape in layout:
            if mode == "lstm" and name.endswith("_f_bias"):
                flat[start:start + shape[0]] = self._forget_bias
                continue
            piece = zeros(shape, dtype=arr.dtype)
            sub = InitDesc(name, global_init=global_init)
            if self._init is not None:
                self._init(sub, piece)
            elif global_init is not self:
                global_init(sub, piece)
            elif name.endswith("weight"):
                raise InitializerError(f"FusedRNN: {str(desc)!r} needs an init or a global "
                                       f"initializer for its weights")
            flat[start:start + piece.size] = piece.asnumpy().ravel()
        _write(arr, flat)


@register
class Mixed(Initializer):
    """The first initializer whose regular expression matches the name
    (``re.match``) fills the array: ``Mixed(['.*bias', '.*'], [Zero(), Xavier()])``.
    As in MXNet the chosen initializer is called with the plain name, so its
    naming rule still applies (``Mixed(['.*'], [Xavier()])`` gives biases zeros)."""

    def __init__(self, patterns, initializers):
        if not isinstance(patterns, (list, tuple)) or not isinstance(initializers, (list, tuple)):
            raise InitializerError("Mixed: patterns and initializers must be lists")
        if len(patterns) != len(initializers):
            raise InitializerError(f"Mixed: {len(patterns)} patterns but {len(initializers)} "
                                   f"initializers")
        try:
            self.map = [(re.compile(p), create(i)) for p, i in zip(patterns, initializers)]
        except (re.error, TypeError) as e:
            raise InitializerError(f"Mixed: bad pattern ({e})") from None
        # the sub-initializers are written as their own JSON strings, which
        # ``create`` accepts back
        super().__init__(patterns=list(patterns), initializers=[i.dumps() for _, i in self.map])

    def __call__(self, desc, arr):
        for pattern, init in self.map:
            if pattern.match(str(desc)):
                # a plain name: a desc whose __init__ is this Mixed would loop
                init(InitDesc(str(desc)), arr)
                return
        raise InitializerError(f"Mixed: parameter {str(desc)!r} matches none of the patterns "
                               f"{[p.pattern for p, _ in self.map]}; add a '.*' pattern last "
                               f"with a default initializer")

    def _init_weight(self, name, arr):
        self(name, arr)


@register
class Bilinear(Initializer):
    """Bilinear-upsampling weights for a ``Deconvolution``: each ``(h, w)``
    kernel of a 4-d ``(out, in, h, w)`` array is the outer product of the
    tent ``1 - |x / f - c|`` with ``f = ceil(w / 2)`` and
    ``c = (2f - 1 - f % 2) / (2f)``, as MXNet's (``w`` sets both axes)."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, name, arr):
        if arr.ndim != 4:
            raise InitializerError(f"Bilinear cannot initialize {str(name)!r} of shape "
                                   f"{arr.shape}: it needs a 4-d (out, in, h, w) weight")
        h, w = arr.shape[2], arr.shape[3]
        f = np.ceil(w / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        tx = 1 - np.abs(np.arange(w) / f - c)
        ty = 1 - np.abs(np.arange(h) / f - c)
        kernel = (ty[:, None] * tx[None, :]).astype(np.float32)
        _write(arr, np.broadcast_to(kernel, arr.shape))


class Load:
    """Fills parameters from saved arrays, falling back to ``default_init``
    for names not there.  ``arg:``/``aux:`` prefixes (``Module.save_params``
    files) are dropped from the saved names.

    Parameters
    ----------
    param : str or dict of str to NDArray
        A file written by ``nbdl.nd.save`` / MXNet's ``mx.nd.save`` (read as
        arrays only; nothing in it runs), or a name -> array dict.
    default_init : Initializer, optional
        For names not in ``param``; without it such a name is an error.
    verbose : bool
        Log where each parameter came from.
    """

    def __init__(self, param, default_init=None, verbose=False):
        from .ndarray import NDArray
        if isinstance(param, str):
            from .ndarray import load as _load
            param = _load(param)
        if not isinstance(param, dict):
            raise InitializerError(f"Load: param must be a file name or a dict of name -> "
                                   f"NDArray, got {type(param).__name__}")
        self.param = {}
        for name, arr in param.items():
            if not isinstance(arr, (NDArray, np.ndarray)):
                raise InitializerError(f"Load: param[{name!r}] must be an array, got "
                                       f"{type(arr).__name__}")
            key = name[4:] if name.startswith(("arg:", "aux:")) else name
            self.param[key] = arr
        self.default_init = default_init
        self.verbose = bool(verbose)

    def __call__(self, name, arr):
        import logging
        key = str(name)
        if key in self.param:
            src = self.param[key]
            if tuple(src.shape) != tuple(arr.shape):
                raise InitializerError(f"Load: parameter {key!r} has shape {tuple(arr.shape)} "
                                       f"but the loaded array has {tuple(src.shape)}")
            _write(arr, src.asnumpy() if hasattr(src, "asnumpy") else src)
            if self.verbose:
                logging.info("Initialized %s by loading", key)
            return
        if self.default_init is None:
            raise InitializerError(f"Load: parameter {key!r} is not in the loaded arrays and "
                                   f"no default_init was given")
        self.default_init(name, arr)
        if self.verbose:
            logging.info("Initialized %s by default", key)


__all__ = ["Initializer", "InitDesc", "InitializerError", "register", "alias", "create", "Zero",
           "One", "Constant", "Uniform", "Normal", "Orthogonal", "Xavier", "MSRAPrelu", "Mixed",
           "Bilinear", "LSTMBias", "Load"]
