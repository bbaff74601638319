"""``nbdl.nd``: NDArray and the imperative API.

``nbdl.nd.<op>`` is generated from the op table on first use
(``nbdl.nd.FullyConnected(data=x, weight=w, bias=b, num_hidden=3)``,
``nbdl.nd.elemwise_add(a, b)``); ``nbdl.nd.op.<op>`` and
``nbdl.nd._internal.<op>`` (internal ops too) are the same functions.
"""
from ..ops.registry import list_ops
from . import random  # noqa: F401
from . import sparse  # noqa: F401  (MXNet's sparse names; nbdl refuses sparse storage)
from .creation import (arange, array, empty, eye, from_numpy, full, full_like, linspace,  # noqa: F401
                       ones, ones_like, waitall, zeros, zeros_like)
from . import invoke  # noqa: F401  (the module: nbdl.nd.invoke.invoke runs one op)
from ..array import NDArray  # noqa: F401
from .ufuncs import (add, divide, equal, greater, greater_equal, hypot, lesser,  # noqa: F401
                     lesser_equal, logical_and, logical_or, logical_xor, maximum, minimum,
                     modulo, multiply, not_equal, power, subtract, true_divide)
from . import namespace as _namespace
from .legacy import concatenate, histogram, moveaxis, onehot_encode, split_v2  # noqa: F401
from . import contrib  # noqa: F401  (nbdl.nd.contrib.<op> is _contrib_<op>)
from . import linalg  # noqa: F401  (nbdl.nd.linalg.<op> is _linalg_<op>)
from . import image  # noqa: F401  (nbdl.nd.image.<op> is _image_<op>)
from .files import load, load_frombuffer, save  # noqa: F401
from ..executor.cached_op import NDCachedOp as CachedOp  # noqa: F401  (MXNet 1.x's nd.CachedOp)

op = _namespace.make_module(__name__ + ".op", include_hidden=False)
_internal = _namespace.make_module(__name__ + "._internal", include_hidden=True)

# MXNet 1.x's legacy spellings of the samplers.
random_uniform = random.uniform
random_normal = random.normal
random_randint = random.randint
# and MXNet 1.x's top-level ``mx.nd.uniform`` / ``mx.nd.normal`` (the ops'
# aliases of ``_random_uniform`` / ``_random_normal``).
uniform = random.uniform
normal = random.normal


def __getattr__(name):
    fn = _namespace.lookup(name)
    globals()[name] = fn
    return fn


def __dir__():
    return sorted(set(globals()) | set(list_ops()))
