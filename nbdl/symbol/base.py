"""What the modules of ``nbdl.symbol`` share, below the Symbol class:
``SymbolBase`` (a handle on graph output entries: what node building and
JSON reading and writing look at), MXNet's hidden attribute keys, and the
one-output check.  ``symbol.Symbol`` adds MXNet's API on top."""
from ..errors import GraphError

# Node attributes MXNet accepts without underscores and stores as ``__key__``.
HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage",
               "profiler_scope")


def user_attr_key(key):
    """``lr_mult`` -> ``__lr_mult__`` (MXNet's MXSymbolSetAttr); other keys as given.

    Parameters
    ----------
    key : str
        An attribute key.
    """
    return f"__{key}__" if key in HIDDEN_KEYS else key


class SymbolBase:
    """One or more outputs (``Entry``) of the shared graph IR.

    Parameters
    ----------
    outputs : iterable of Entry
        The outputs.
    """
    __slots__ = ("_outputs", "__weakref__")

    def __init__(self, outputs):
        self._outputs = list(outputs)


def single(s, what):
    """The one output entry of ``s`` (a Symbol), or a ``GraphError`` naming
    ``what``.

    Parameters
    ----------
    s : object
        What was passed where one output is needed.
    what : str
        How to name it in the error.
    """
    if not isinstance(s, SymbolBase):
        raise GraphError(f"{what} must be a Symbol, got {type(s).__name__}")
    if len(s._outputs) != 1:
        raise GraphError(f"{what} is a group of {len(s._outputs)} outputs; "
                         f"a single output is required (index it: sym[0])")
    return s._outputs[0]
