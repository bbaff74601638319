"""``nbdl.npx``: Gluon 2.0's operator extensions to ``nbdl.np`` (MXNet's
``mx.npx``): neural-network and indexing operators.

Each function runs one op of the table, eagerly on NDArrays (through
``nbdl.ndarray.invoke``, so autograd records it) or as a graph node on
Symbols, so one ``HybridBlock.forward`` serves both.
"""
from .indexing import gather_nd, one_hot, pick, reshape, shape_array, topk  # noqa: F401
from .nn import (activation, batch_dot, dropout, embedding, fully_connected,  # noqa: F401
                 layer_norm, log_softmax, relu, sigmoid, softmax)
from .nn import batch_norm, convolution, deconvolution, leaky_relu, pooling, rnn  # noqa: F401
from .nn import deformable_convolution, modulated_deformable_convolution  # noqa: F401
from .special import erf, erfinv, gamma, gammaln  # noqa: F401
from . import image  # noqa: F401  (npx.image.<op> is _image_<op>)
# MXNet 1.x's npx.set_np() / reset_np() / is_np_array(): nbdl.util's flags.
from ..util import (is_np_array, is_np_shape, np_array, np_shape, reset_np, set_np,  # noqa: F401
                    use_np, use_np_array, use_np_shape)

__all__ = ["relu", "sigmoid", "activation", "softmax", "log_softmax", "fully_connected",
           "dropout", "layer_norm", "embedding", "batch_dot", "one_hot", "pick", "topk", "gather_nd",
           "reshape", "convolution", "deconvolution", "pooling", "batch_norm", "leaky_relu", "rnn",
           "deformable_convolution", "modulated_deformable_convolution", "erf", "erfinv", "gamma",
           "gammaln", "shape_array"]

__all__ += ["set_np", "reset_np", "is_np_array", "is_np_shape", "np_array", "np_shape",
            "use_np", "use_np_array", "use_np_shape"]
