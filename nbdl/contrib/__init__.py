"""MXNet 1.x's ``mx.contrib`` package, for the spellings
``mx.contrib.nd.<op>`` / ``mx.contrib.ndarray.<op>`` (the same as
``nbdl.nd.contrib.<op>``) and ``mx.contrib.sym.<op>`` /
``mx.contrib.symbol.<op>`` (``nbdl.sym.contrib.<op>``), and
``mx.contrib.onnx`` (``import_model``, ``import_to_gluon``,
``get_model_metadata``, ``export_model``: ``nbdl.onnx``'s)."""
from ..ndarray import contrib as ndarray  # noqa: F401
from ..ndarray import contrib as nd  # noqa: F401
from ..symbol import contrib as symbol  # noqa: F401
from ..symbol import contrib as sym  # noqa: F401
from . import onnx  # noqa: F401
