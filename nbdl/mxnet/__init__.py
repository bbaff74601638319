"""Run code written for MXNet 1.x on nbdl: ``import mxnet`` resolves to nbdl.

``nbdl.alias_mxnet()`` puts an import hook (a ``sys.meta_path`` finder) in
front of Python's own finders, so that ``import mxnet`` gives the ``nbdl``
package itself and ``mxnet.X.Y`` gives the module ``nbdl.X.Y``: the very
same module objects (``sys.modules['mxnet.gluon'] is nbdl.gluon``), so
``isinstance`` checks and monkeypatching see one set of classes.  The mapping
is generic (any ``nbdl`` module, or module-valued attribute such as
``nbdl.nd``, is reachable under its ``mxnet`` name); the few MXNet names nbdl
spells differently are in ``RENAMES``.

``python -m nbdl.mxnet script.py args...`` runs a script with the alias
installed (see ``nbdl/mxnet/__main__.py``).

The alias never hides a real MXNet silently: when an ``mxnet`` other than
nbdl is importable or already imported, ``alias_mxnet()`` raises
``MXNetAliasError`` unless ``force=True``.

This package is ``nbdl.mxnet`` (the hook), not the alias: ``mxnet.mxnet``
is refused.
"""
import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings

from ..errors import NbdlError

__all__ = ["alias_mxnet", "is_aliased", "MXNetAliasError", "RENAMES"]

# MXNet 1.x module names that nbdl spells differently, as dotted paths below
# ``mxnet``: each maps to the nbdl names tried in order.  The longest
# matching prefix wins; the rest of the path is kept (``mxnet.numpy.random``
# -> ``nbdl.np.random``).  Every other ``mxnet.X.Y`` is ``nbdl.X.Y``.
RENAMES = {
    "numpy": ("np",),
    "numpy_extension": ("npx",),
    "module": ("module", "mod"),
    "kvstore": ("kvstore", "kv"),
    "visualization": ("visualization", "viz"),
    "monitor": ("monitor", "mon"),
    "image": ("image", "img"),
}

_ROOT = "mxnet"
_SELF = __name__            # 'nbdl.mxnet'
_PKG = _SELF.rpartition(".")[0]   # 'nbdl'


class MXNetAliasError(NbdlError, ImportError):
    """The ``mxnet`` alias cannot be installed (a real MXNet is present)."""


def _candidates(fullname):
    """The nbdl module names that ``fullname`` (``mxnet...``) may stand for."""
    parts = fullname.split(".")[1:]
    for i in range(len(parts), 0, -1):
        key = ".".join(parts[:i])
        if key in RENAMES:
            rest = parts[i:]
            return [".".join([_PKG, new] + rest) for new in RENAMES[key]]
    return [".".join([_PKG] + parts)]


def _is_missing(err, target):
    """True when ``err`` says ``target`` itself (or a parent of it) does not
    exist, rather than that something ``target`` imports is missing."""
    name = getattr(err, "name", None)
    return name is not None and (target == name or target.startswith(name + "."))


class _AliasLoader(importlib.abc.Loader):
    """Hands back the already imported nbdl module for an ``mxnet`` name."""

    def __init__(self, module):
        self._module = module
        self._spec = getattr(module, "__spec__", None)

    def create_module(self, spec):
        return self._module

    def exec_module(self, module):
        # The import system has just set ``module.__spec__`` to the alias's
        # spec; nbdl's module keeps its own (relative imports inside nbdl
        # read ``__spec__.parent``).
        if self._spec is not None:
            module.__spec__ = self._spec


class _MXNetFinder(importlib.abc.MetaPathFinder):
    """``sys.meta_path`` finder mapping ``mxnet`` / ``mxnet.X.Y`` to nbdl."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _ROOT and not fullname.startswith(_ROOT + "."):
            return None
        if fullname == _ROOT:
            module = importlib.import_module(_PKG)
        else:
            module = self._resolve(fullname)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module),
                                              origin=getattr(module, "__file__", None))

    def _resolve(self, fullname):
        tried = _candidates(fullname)
        if tried[0] == _SELF or tried[0].startswith(_SELF + "."):
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: 'mxnet' is nbdl's alias of MXNet "
                f"(nbdl.alias_mxnet) and {_SELF!r} is the alias's own hook, not a module "
                f"MXNet has", name=fullname)
        for target in tried:
            try:
                return importlib.import_module(target)
            except ModuleNotFoundError as e:
                if not _is_missing(e, target):
                    raise
            # an attribute alias of a module (``nbdl.nd`` is ``nbdl.ndarray``)
            parent, _, attr = target.rpartition(".")
            holder = sys.modules.get(parent)
            if holder is not None and isinstance(getattr(holder, attr, None), types.ModuleType):
                return getattr(holder, attr)
        looked = " or ".join(repr(t) for t in tried)
        raise ModuleNotFoundError(
            f"No module named {fullname!r}: 'mxnet' is nbdl's alias of MXNet "
            f"(nbdl.alias_mxnet), and nbdl has no module {looked} for it", name=fullname)


_finder = _MXNetFinder()


def is_aliased():
    """Whether the ``mxnet`` alias is installed in this interpreter.

    Returns
    -------
    bool
        True after ``alias_mxnet()`` (until the finder is taken out of
        ``sys.meta_path``)."""
    return _finder in sys.meta_path


def _real_mxnet():
    """A description of a real MXNet that the alias would hide, or None."""
    mod = sys.modules.get(_ROOT)
    if mod is not None and mod is not sys.modules.get(_PKG):
        where = getattr(mod, "__file__", None) or repr(mod)
        return f"an 'mxnet' is already imported ({where})"
    if mod is not None:
        return None
    for finder in list(sys.meta_path):
        if finder is _finder or not hasattr(finder, "find_spec"):
            continue
        try:
            spec = finder.find_spec(_ROOT, None)
        except Exception:   # a broken third-party finder must not stop the check
            continue
        # A directory called mxnet without __init__.py (a namespace package,
        # e.g. a checkout of MXNet's sources) is not an installed MXNet.
        if spec is not None and spec.origin not in (None, "namespace"):
            return f"a real MXNet is importable ({spec.origin})"
    return None


def alias_mxnet(force=False):
    """Make ``import mxnet`` (and every ``mxnet.X.Y``) resolve to nbdl.

    After this call ``import mxnet as mx`` gives the ``nbdl`` package and
    ``mxnet.X.Y`` the module ``nbdl.X.Y`` (the same objects; the MXNet names
    nbdl spells differently are in ``nbdl.mxnet.RENAMES``, e.g.
    ``mxnet.numpy`` -> ``nbdl.np``).  A name nbdl lacks raises
    ``ModuleNotFoundError`` naming the nbdl module looked for.  Calling it
    again does nothing.

    Parameters
    ----------
    force : bool, default False
        Install the alias even when a real MXNet is importable or already
        imported: a warning is issued, and an imported MXNet's entries are
        taken out of ``sys.modules`` (objects already holding them keep the
        real modules).  Without it that case raises ``MXNetAliasError``.

    Raises
    ------
    MXNetAliasError
        A real ``mxnet`` is importable or imported and ``force`` is False."""
    if is_aliased():
        return
    real = _real_mxnet()
    if real is not None:
        if not force:
            raise MXNetAliasError(
                f"nbdl.alias_mxnet: {real}; the alias would hide it. Uninstall or "
                f"deactivate that MXNet to run this code on nbdl, or pass force=True "
                f"(python -m nbdl.mxnet --force ...) to shadow it anyway")
        warnings.warn(f"nbdl.alias_mxnet(force=True): {real}; 'import mxnet' now gives nbdl",
                      stacklevel=2)
        for name in [n for n in sys.modules if n == _ROOT or n.startswith(_ROOT + ".")]:
            del sys.modules[name]
    sys.meta_path.insert(0, _finder)
    pkg = sys.modules[_PKG]
    # ``mx.numpy`` / ``from mxnet import numpy``: MXNet's spelling of the
    # renamed modules nbdl has already imported, as attributes of the package.
    for mx_name, nbdl_names in RENAMES.items():
        if "." in mx_name or hasattr(pkg, mx_name):
            continue
        for n in nbdl_names:
            mod = sys.modules.get(f"{_PKG}.{n}")
            if mod is not None:
                setattr(pkg, mx_name, mod)
                break
