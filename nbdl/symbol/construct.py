"""Making symbols: ``var``, ``Group``, ``create`` (behind ``nbdl.sym.<op>``),
``load_json`` and ``load`` (-symbol.json)."""
from ..errors import GraphError
from .build import variable_entry
from .json_io import read_file
from .symbol import Symbol, create, load_json  # noqa: F401  (the package's API)


def var(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None,
        init=None, stype=None, **kwargs):
    """A variable (an argument or aux state of the graph); the attributes of
    the current ``AttrScope`` are added under ``attr``.

    Parameters
    ----------
    name : str
        The variable's name.
    attr : dict, optional
        Its attributes.
    shape : tuple, optional
        Its shape (``__shape__``).
    lr_mult, wd_mult : float, optional
        Learning-rate and weight-decay multipliers.
    dtype : str or numpy dtype, optional
        Its dtype (``__dtype__``).
    init : str or Initializer, optional
        Its initializer (``__init__``).
    stype : str, optional
        ``'default'`` only (dense).
    **kwargs
        Further ``__key__`` attributes.
    """
    return Symbol([variable_entry(name, attr, shape, lr_mult, wd_mult, dtype, init, stype,
                                  **kwargs)])


Variable = var


def Group(symbols):
    """One symbol whose outputs are the outputs of ``symbols``, in order.

    Parameters
    ----------
    symbols : Symbol or list of Symbol
        The symbols.
    """
    symbols = list(symbols) if not isinstance(symbols, Symbol) else [symbols]
    if not symbols:
        raise GraphError("Group needs at least one Symbol")
    outs = []
    for s in symbols:
        if not isinstance(s, Symbol):
            raise GraphError(f"Group expects Symbols, got {type(s).__name__}")
        outs.extend(s._outputs)
    return Symbol(outs)


def load(fname):
    """A Symbol from a -symbol.json file (MXNet 0.x or 1.x).

    Parameters
    ----------
    fname : str or path
        The file.
    """
    return Symbol(read_file(fname))
