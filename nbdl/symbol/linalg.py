"""``nbdl.sym.linalg``: MXNet's ``mx.sym.linalg`` spellings; ``linalg.X``
builds a node of the op ``_linalg_X`` named, as in MXNet, after ``X``
(``sym.linalg.gemm2(a, b)`` is a ``_linalg_gemm2`` node ``gemm20``)."""
from ..ops.registry import op_namespace
from .prefixed import short_named

PREFIX = "_linalg_"
__getattr__, __dir__ = op_namespace(PREFIX, "nbdl.sym.linalg", short_named(PREFIX), globals())
