"""nbdl: MXNet's programming model on Numba kernels with a static memory planner."""
from .errors import (AttrError, BindError, DeviceError, DTypeError, GraphError,  # noqa: F401
                     NbdlError, ShapeError, UnknownOpError)
from .device import Context, Device, cpu, current_context, current_device, gpu, num_gpus  # noqa: F401
from . import symbol  # noqa: F401
from . import symbol as sym  # noqa: F401

__version__ = "0.1.0"
from .executor import GRAD_ADD, GRAD_INPLACE, GRAD_NOP, GRAD_WRITE, Executor, bind, simple_bind  # noqa: F401,E402
from .executor.debug import debug_str  # noqa: F401,E402
from . import ndarray  # noqa: F401,E402
from . import ndarray as nd  # noqa: F401,E402
from . import random  # noqa: F401,E402
from .ndarray import NDArray  # noqa: F401,E402
from . import serialization  # noqa: F401,E402
from . import model  # noqa: F401,E402
from . import autograd  # noqa: F401,E402
