"""``nbdl.nd.linalg``: MXNet's ``mx.nd.linalg`` spellings.  ``linalg.X`` is the
op ``_linalg_X`` of the op table (``nd.linalg.gemm2`` runs ``_linalg_gemm2``,
``nd.linalg.potrf`` ``_linalg_potrf``); see docs/ops.md, "Linear algebra".
"""
from ..ops.registry import op_namespace
from . import namespace as _namespace

PREFIX = "_linalg_"


__getattr__, __dir__ = op_namespace(PREFIX, "nbdl.nd.linalg", _namespace.function_for, globals())
