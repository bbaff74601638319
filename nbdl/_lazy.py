"""Submodules a package imports on first use (PEP 562's module
``__getattr__``), so that ``import nbdl`` does not pay for what a script
never touches."""
import importlib


def lazy_submodules(namespace, table):
    """``(__getattr__, __dir__)`` for the package whose globals are
    ``namespace``: attribute ``a`` in ``table`` imports the submodule
    ``table[a]`` the first time it is read and keeps it in ``namespace``.

    Parameters
    ----------
    namespace : dict
        The package's ``globals()``.
    table : dict
        Attribute name -> submodule name (relative to the package).
    """
    package = namespace["__name__"]

    def __getattr__(attr):
        target = table.get(attr)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {attr!r}")
        module = importlib.import_module(f"{package}.{target}")
        namespace[attr] = module
        return module

    def __dir__():
        return sorted(set(namespace) | set(table))
    return __getattr__, __dir__
