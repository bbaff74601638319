"""nbdl's exception hierarchy.

Every error a user can provoke is an ``NbdlError``.  The subclasses also derive
from the matching builtin (``ValueError``, ``TypeError``, ``KeyError``) so code
written against MXNet's ``MXNetError`` or against plain Python exceptions keeps
working.
"""


class NbdlError(Exception):
    """Base class of every error nbdl raises on bad input."""


class ShapeError(NbdlError, ValueError):
    """Shapes that do not agree, or shape inference that cannot finish."""


class DTypeError(NbdlError, TypeError):
    """A dtype an op or kernel does not support, or dtypes that disagree."""


class AttrError(NbdlError, ValueError):
    """An unknown, missing or malformed operator attribute."""


class UnknownOpError(NbdlError, KeyError):
    """An operator name that is not in the op table."""

    def __str__(self):  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class BindError(NbdlError, ValueError):
    """Bad arguments to bind / simple_bind / forward / backward."""


class GraphError(NbdlError, ValueError):
    """A malformed graph: duplicate names, bad JSON, dangling references."""


class ArgumentError(NbdlError, TypeError, ValueError):
    """A bad argument to a Python-level function (wrong type or value)."""


class DeviceError(NbdlError, RuntimeError):
    """A device that is unavailable or arrays on mismatched devices."""


class CustomOpError(NbdlError, RuntimeError):
    """An exception raised inside a custom operator's Python code
    (``nbdl.operator``), or a bad answer from it; the message names the
    operator type and the method."""


class MemoryBudgetError(BindError):
    """A memory budget no recompute choice can meet.  ``smallest`` is the
    smallest budget, in bytes, that nbdl's planner meets for the graph."""

    def __init__(self, message, smallest=None):
        super().__init__(message)
        self.smallest = smallest


class OptionalDependencyError(NbdlError, ImportError):
    """A feature needs an optional package that is not installed (the
    message names it and the pip command)."""


__all__ = ["NbdlError", "ShapeError", "DTypeError", "AttrError", "UnknownOpError",
           "BindError", "MemoryBudgetError", "GraphError", "DeviceError", "ArgumentError",
           "CustomOpError", "OptionalDependencyError"]


class SparseStorageError(NbdlError, TypeError):
    """Sparse storage (``'csr'``, ``'row_sparse'``) was asked for; nbdl's
    arrays are dense."""

    @classmethod
    def refused(cls, what):
        """The error for ``what`` (a function or call, as text) asking for
        sparse storage.

        Parameters
        ----------
        what : str
            What asked, e.g. ``"nd.sparse.csr_matrix"``.
        """
        return cls(f"{what}: sparse storage ('csr', 'row_sparse') is not supported: nbdl's "
                   f"arrays are dense (storage type 'default'); use nd.array / nd.zeros, or "
                   f"convert with scipy's .toarray()")
