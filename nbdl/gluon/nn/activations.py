"""Activation layers (Gluon 2.0): LeakyReLU, PReLU, ELU, SELU, GELU, Swish,
SiLU.  The first five are MXNet's ``LeakyReLU`` op (``act_type`` leaky,
prelu, elu, selu, gelu); Swish and SiLU are ``x * sigmoid(beta * x)``."""
import math

from ...errors import NbdlError
from .._trace import call_op
from ..hybrid_block import HybridBlock
from ..parameter import Parameter


class _FixedSlope(HybridBlock):
    """An activation of the ``LeakyReLU`` op (``_act_type``) with the fixed
    slope ``self._alpha`` (shown as MXNet shows it: ``ELU(1.0)``)."""

    def forward(self, x):
        return call_op("LeakyReLU", [x], act_type=self._act_type, slope=self._alpha,
                       name=self._fwd_name())

    def __repr__(self):
        return f"{type(self).__name__}({self._alpha})"


class LeakyReLU(_FixedSlope):
    """``x`` where ``x >= 0``, ``alpha * x`` elsewhere."""

    _act_type = "leaky"

    def __init__(self, alpha, **kwargs):
        super().__init__(**kwargs)
        if alpha < 0:
            raise NbdlError(f"LeakyReLU: alpha must be non-negative, got {alpha}")
        self._alpha = float(alpha)


class PReLU(HybridBlock):
    """LeakyReLU with a learned slope ``alpha`` per channel (axis 1), or one
    shared slope with ``in_channels=1``."""

    def __init__(self, alpha_initializer=None, in_channels=1, **kwargs):
        super().__init__(**kwargs)
        from ... import initializer
        if alpha_initializer is None:
            alpha_initializer = initializer.Constant(0.25)
        if int(in_channels) < 1:
            raise NbdlError(f"PReLU: in_channels must be positive, got {in_channels}")
        self.alpha = Parameter("alpha", shape=(int(in_channels),), init=alpha_initializer)

    def forward(self, x):
        return call_op("LeakyReLU", [x, self.alpha.data()], act_type="prelu",
                       name=self._fwd_name())

    def __repr__(self):
        return f"PReLU(in_channels={self.alpha.shape[0]})"


class ELU(_FixedSlope):
    """``x`` where ``x > 0``, ``alpha * (exp(x) - 1)`` elsewhere."""

    _act_type = "elu"

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self._alpha = float(alpha)


class SELU(HybridBlock):
    """Scaled ELU with the self-normalizing constants (alpha 1.6733, scale
    1.0507)."""

    def forward(self, x):
        return call_op("LeakyReLU", [x], act_type="selu", name=self._fwd_name())

    def __repr__(self):
        return "SELU()"


def _leaky_relu_act_types():
    """The act_type values the LeakyReLU op accepts (none while it is not
    registered)."""
    from ...ops.registry import get_op
    try:
        return tuple(get_op("LeakyReLU").attrs["act_type"].choices or ())
    except NbdlError:
        return ()


class GELU(HybridBlock):
    """``x * Phi(x)``: with ``approximation='erf'`` the exact form (MXNet's
    LeakyReLU 'gelu'); with 'tanh' ``0.5 x (1 + tanh(sqrt(2/pi) (x +
    0.044715 x^3)))``."""

    def __init__(self, approximation="erf", **kwargs):
        super().__init__(**kwargs)
        if approximation not in ("erf", "tanh"):
            raise NbdlError(f"GELU: approximation must be 'erf' or 'tanh', got "
                            f"{approximation!r}")
        self._approximation = approximation

    def forward(self, x):
        choices = _leaky_relu_act_types()
        if self._approximation == "erf":
            act = "gelu_erf" if "gelu_erf" in choices and "gelu" not in choices else "gelu"
            return call_op("LeakyReLU", [x], act_type=act)
        if "gelu_tanh" in choices:
            return call_op("LeakyReLU", [x], act_type="gelu_tanh")
        return _gelu_tanh(x)

    def __repr__(self):
        return f"GELU(approximation={self._approximation!r})"


def _gelu_tanh(x):
    """The tanh form from elementwise ops (where LeakyReLU has no such act_type)."""
    cube = call_op("elemwise_mul", [call_op("elemwise_mul", [x, x]), x])
    inner = call_op("elemwise_add", [x, call_op("_mul_scalar", [cube], scalar=0.044715,
                                                 is_int=False)])
    t = call_op("tanh", [call_op("_mul_scalar", [inner], scalar=math.sqrt(2 / math.pi),
                                 is_int=False)])
    half = call_op("_mul_scalar", [call_op("_plus_scalar", [t], scalar=1.0, is_int=False)],
                   scalar=0.5, is_int=False)
    return call_op("elemwise_mul", [x, half])


class Swish(HybridBlock):
    """``x * sigmoid(beta * x)``."""

    def __init__(self, beta=1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = float(beta)

    def forward(self, x):
        scaled = x if self._beta == 1.0 else call_op("_mul_scalar", [x], scalar=self._beta,
                                                      is_int=False)
        return call_op("elemwise_mul", [x, call_op("sigmoid", [scaled])])

    def __repr__(self):
        return f"Swish(beta={self._beta})"


class SiLU(HybridBlock):
    """``x * sigmoid(x)`` (Swish with beta 1)."""

    def forward(self, x):
        return call_op("elemwise_mul", [x, call_op("sigmoid", [x])])

    def __repr__(self):
        return "SiLU()"

