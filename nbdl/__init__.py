"""nbdl: MXNet's programming model on Numba kernels with a static memory planner.

``nbdl.sym`` / ``nbdl.bind`` / ``nbdl.simple_bind`` for graphs and executors,
``nbdl.nd`` for NDArrays, ``nbdl.autograd``, ``nbdl.gluon`` for Blocks,
``nbdl.np`` / ``nbdl.npx`` for Gluon 2.0-style op namespaces (``nbdl.np`` is
nbdl's numpy-style namespace, not numpy itself), ``nbdl.mod`` (``nbdl.module``)
for MXNet 1.x's Module API."""
from .config import apply_thread_defaults as _apply_thread_defaults

_apply_thread_defaults()   # starts numba's thread pool with nbdl's wait policy; see nbdl.config

from .errors import (ArgumentError, AttrError, BindError, CustomOpError, DeviceError,  # noqa: F401
                     DTypeError, GraphError, NbdlError, ShapeError, UnknownOpError)
from .device import Context, Device, cpu, current_context, current_device, gpu, num_gpus  # noqa: F401
from . import symbol  # noqa: F401
from . import symbol as sym  # noqa: F401
from .executor import GRAD_ADD, GRAD_INPLACE, GRAD_NOP, GRAD_WRITE, Executor, bind, simple_bind  # noqa: F401
from .executor.debug import debug_str  # noqa: F401
from . import ndarray  # noqa: F401
from . import ndarray as nd  # noqa: F401
from .ndarray import NDArray  # noqa: F401
from . import random  # noqa: F401
from . import serialization  # noqa: F401
from . import model  # noqa: F401
from . import autograd  # noqa: F401
from . import initializer, lr_scheduler, optimizer  # noqa: F401
from . import operator  # noqa: F401  (custom operators in Python: CustomOp, CustomOpProp, register)
from . import init  # noqa: F401  (the same module as nbdl.initializer)
from . import np, npx  # noqa: F401
from . import gluon  # noqa: F401
from . import base, context, name, attribute, util  # noqa: F401  (MXNet 1.x's small modules)
from .attribute import AttrScope  # noqa: F401
from .base import MXNetError  # noqa: F401
from .context import cpu_pinned  # noqa: F401
from .util import (is_np_array, is_np_shape, np_array, np_shape, set_np_shape,  # noqa: F401
                   use_np, use_np_array, use_np_shape)
from .mxnet import alias_mxnet  # noqa: F401
from ._lazy import lazy_submodules

# MXNet 1.x's training APIs (``nbdl.rnn`` among them) and the optional front
# ends (ONNX, MPI) are imported on first use (``nbdl.mod``, ``nbdl.io.NDArrayIter``,
# ``nbdl.distributed.init()``): a program that needs none of them does not pay
# for their import.
_LAZY = {"contrib": "contrib", "io": "io", "recordio": "recordio", "callback": "callback",
         "kvstore": "kvstore", "kv": "kvstore", "metric": "metric", "profiler": "profiler",
         "visualization": "visualization", "viz": "visualization", "module": "module",
         "mod": "module", "onnx": "onnx", "distributed": "distributed", "runtime": "runtime",
         "test_utils": "test_utils", "rnn": "rnn"}


__getattr__, __dir__ = lazy_submodules(globals(), _LAZY)

from . import shutdown as _shutdown

_shutdown.install()   # the interpreter's exit skips its full collections; see nbdl.shutdown

__version__ = "0.1.0"
