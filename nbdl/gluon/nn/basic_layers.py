"""Containers and basic layers: Sequential, HybridSequential, Dense,
Activation, Dropout, Flatten, Lambda, HybridLambda, Identity, Concatenate."""
import inspect
import warnings

from ...errors import NbdlError
from .._trace import call_op
from ..block import Block
from ..hybrid_block import HybridBlock
from ..parameter import Parameter


class _SequentialMixin:
    """What Sequential and HybridSequential share.

    Parameters
    ----------
    prefix, params : optional
        Gluon 1.x's ``prefix`` and ``params`` (see ``Block``), also by position.
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def add(self, *blocks):
        """Append blocks, run in the order added; returns this container.

        Parameters
        ----------
        *blocks : Block
            The blocks (HybridBlocks in a HybridSequential).
        """
        for b in blocks:
            self.register_child(b)
        return self

    def forward(self, x, *args):
        """Run the children in order, each on the previous one's output (a
        child returning a tuple passes its first item as the next input and the
        rest as extra arguments).

        Parameters
        ----------
        x : NDArray or Symbol
            The first child's input.
        *args
            Extra arguments of the first child.
        """
        for block in self._children.values():
            x = block(x, *args)
            args = ()
            if isinstance(x, (tuple, list)):
                x, args = x[0], tuple(x[1:])
        return (x,) + args if args else x

    def __getitem__(self, key):
        layers = list(self._children.values())
        if isinstance(key, slice):
            net = type(self)(prefix=self._prefix) if self._legacy else type(self)()
            net.add(*layers[key])
            return net
        return layers[key]

    def __len__(self):
        return len(self._children)


class Sequential(_SequentialMixin, Block):
    """Stacks Blocks sequentially (``prefix``, ``params``: see ``_SequentialMixin``)."""

    def hybridize(self, active=True, **kwargs):
        """Hybridize the children; warns, as Gluon does, when every child is
        a HybridBlock (a HybridSequential would trace them as one graph).

        Parameters
        ----------
        active : bool, default True
            Whether to hybridize.
        **kwargs
            As for ``HybridBlock.hybridize``.
        """
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn(f"All children of this Sequential layer '{self.prefix}' are "
                          f"HybridBlocks. Consider using HybridSequential for the best "
                          f"performance.", stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(_SequentialMixin, HybridBlock):
    """Stacks HybridBlocks sequentially, hybridizable as a whole (``prefix``,
    ``params``: see ``_SequentialMixin``)."""


def _act(x, activation, name=None):
    return (x if activation is None
            else call_op("Activation", [x], act_type=activation, name=name))


class Dense(HybridBlock):
    """``out = activation(dot(x, weight.T) + bias)``."""

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype="float32",
                 weight_initializer=None, bias_initializer="zeros", in_units=0, **kwargs):
        super().__init__(**kwargs)
        if int(units) < 0:
            # 0 is accepted, as MXNet: an unknown size, to be set before initialisation
            raise NbdlError(f"Dense: units must be >= 0, got {units}")
        self._units, self._in_units = int(units), int(in_units)
        self._flatten, self._use_bias, self._act_type = flatten, use_bias, activation
        self.weight = Parameter("weight", shape=(units, in_units), init=weight_initializer,
                                dtype=dtype, allow_deferred_init=True)
        if use_bias:
            self.bias = Parameter("bias", shape=(units,), init=bias_initializer, dtype=dtype,
                                  allow_deferred_init=True)
        else:
            self.bias = None

    def forward(self, x):
        inputs = [x, self.weight.data()] + ([self.bias.data()] if self._use_bias else [])
        out = call_op("FullyConnected", inputs, num_hidden=self._units,
                      no_bias=not self._use_bias, flatten=self._flatten, name=self._fwd_name())
        # MXNet 1.x's Dense applies its activation as a child block ``<act>_``
        return _act(out, self._act_type, self._fwd_name(f"{self._act_type}_fwd"))

    def __repr__(self):
        shape = self.weight.shape
        return (f"Dense({shape[1] if shape and shape[1] else None} -> {self._units}, "
                f"{'linear' if self._act_type is None else self._act_type})")


class Activation(HybridBlock):
    """An activation function applied elementwise.

    Parameters
    ----------
    activation : str
        ``'relu'``, ``'sigmoid'``, ``'tanh'``, ``'softrelu'`` or
        ``'softsign'`` (``Activation``'s ``act_type``).
    **kwargs
        HybridBlock's arguments (``prefix``, ``params``).
    """
    def __init__(self, activation, **kwargs):
        object.__setattr__(self, "_act_type", activation)   # the 1.x alias (relu0_)
        super().__init__(**kwargs)

    def _alias(self):
        return self._act_type if isinstance(self._act_type, str) else "activation"

    def forward(self, x):
        return _act(x, self._act_type, self._fwd_name())

    def __repr__(self):
        return f"Activation({self._act_type})"


class Dropout(HybridBlock):
    """Drops elements with probability ``rate`` while training."""

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate < 1:
            raise NbdlError(f"Dropout: rate must be in [0, 1), got {rate}")
        self._rate, self._axes = rate, tuple(axes)

    def forward(self, x):
        if self._rate == 0:
            return x
        return call_op("Dropout", [x], p=self._rate, axes=self._axes, name=self._fwd_name())

    def __repr__(self):
        return f"Dropout(p = {self._rate}, axes={self._axes})"


class Flatten(HybridBlock):
    """Flattens every axis but the first: (N, d1, d2, ...) -> (N, d1*d2*...)."""
    def forward(self, x):
        return call_op("Flatten", [x])

    def __repr__(self):
        return "Flatten"


class Identity(HybridBlock):
    """Returns its input (a placeholder block, e.g. in a HybridConcatenate)."""
    def forward(self, x):
        return x

    def __repr__(self):
        return "Identity"


def _resolve(function, where):
    if isinstance(function, str):
        from ... import ndarray, symbol
        fn_nd, fn_sym = getattr(ndarray, function, None), getattr(symbol, function, None)
        if fn_nd is None:
            raise NbdlError(f"{where}: no function named {function!r}")

        def f(x, *args):
            from ...symbol import Symbol
            return (fn_sym if isinstance(x, Symbol) else fn_nd)(x, *args)
        return f
    if callable(function):
        return function
    raise NbdlError(f"{where}: expected a function or a function name, got {function!r}")


def _first_param(function):
    try:
        params = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return None
    return params[0] if params else None


class Lambda(Block):
    """Wraps a function (or the name of an ``nbdl.nd`` function) as a Block."""

    def __init__(self, function, **kwargs):
        super().__init__(**kwargs)
        self._func = _resolve(function, "Lambda")
        self._name = function if isinstance(function, str) else getattr(function, "__name__", "")

    def forward(self, *args):
        return self._func(*args)

    def __repr__(self):
        return f"Lambda({self._name})"


class HybridLambda(HybridBlock):
    """Wraps a function that works on NDArrays and Symbols alike (or an op
    name): ``function(x, *args)`` (Gluon 2.0), or, when its first parameter
    is named ``F``, ``function(F, x, *args)`` with ``F`` ``nbdl.nd`` or
    ``nbdl.sym`` (Gluon 1.x).

    Parameters
    ----------
    function : callable or str
        The function, or the name of an ``nbdl.nd``/``nbdl.sym`` function.
    **kwargs
        Gluon 1.x's ``prefix`` and ``params`` (see ``Block``).
    """

    def __init__(self, function, **kwargs):
        super().__init__(**kwargs)
        self._func = _resolve(function, "HybridLambda")
        self._name = function if isinstance(function, str) else getattr(function, "__name__", "")
        self._takes_F = callable(function) and _first_param(function) == "F"

    def forward(self, x, *args):
        if self._takes_F:
            from ... import ndarray, symbol
            from ...symbol import Symbol
            return self._func(symbol if isinstance(x, Symbol) else ndarray, x, *args)
        return self._func(x, *args)

    def __repr__(self):
        return f"HybridLambda({self._name})"


class _ConcatMixin:
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self._axis = axis

    def add(self, *blocks):
        """Append blocks, each run on the same input; returns this container.

        Parameters
        ----------
        *blocks : Block
            The blocks.
        """
        for b in blocks:
            self.register_child(b)
        return self

    def forward(self, x):
        """Every child on ``x``, their outputs concatenated along ``axis``.

        Parameters
        ----------
        x : NDArray or Symbol
            The input every child gets.
        """
        outs = [block(x) for block in self._children.values()]
        return call_op("Concat", outs, dim=self._axis)


class Concatenate(_ConcatMixin, Sequential):
    """Runs each child on the input and concatenates their outputs along ``axis``."""


class HybridConcatenate(_ConcatMixin, HybridSequential):
    """The hybridizable Concatenate."""
