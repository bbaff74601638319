"""Attribute scopes for symbols: MXNet 1.x's ``mxnet.attribute.AttrScope``.

``with AttrScope(ctx_group='stage1', lr_mult='0.1'):`` attaches those node
attributes to every symbol created inside (variables and operator nodes),
merged under the attributes a call passes itself (``attr=`` wins); nested
scopes merge, inner values winning.  Values must be strings.

nbdl stores them as node attributes as ``attr=`` does: MXNet's hidden keys
(``ctx_group``, ``lr_mult``, ``wd_mult``, ``force_mirroring``,
``mirror_stage``, ``profiler_scope``) become ``__key__``; an operator node
accepts only those and ``__key__`` names (others would be read back as
operator parameters from -symbol.json), so a scope with another key raises
when an operator is created inside it; variables take any key.
"""
from .errors import AttrError
from .scopes import ScopeMeta

class AttrScope(metaclass=ScopeMeta):
    """Node attributes for every symbol created inside ``with AttrScope(...):``.

    Parameters
    ----------
    **kwargs : str
        The attributes (values must be strings, as in MXNet).
    """

    _scope_error = AttrError

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            if not isinstance(v, str):
                raise AttrError(f"AttrScope: attribute {k!r} must be a string, got {v!r}")
        self._attr = dict(kwargs)
        self._old_scope = None

    def get(self, attr):
        """The scope's attributes updated with ``attr``.

        Parameters
        ----------
        attr : dict of str to str, or None
            The attributes passed to the symbol being created.

        Returns
        -------
        dict of str to str
            A new dict (``attr``'s values override the scope's).
        """
        out = dict(self._attr)
        if attr:
            out.update(attr)
        return out

    def __enter__(self):
        self._old_scope = current()
        merged = dict(self._old_scope._attr)
        merged.update(self._attr)
        self._attr = merged
        AttrScope._scope_local.value = self
        return self

    def __exit__(self, ptype, value, trace):
        AttrScope._scope_local.value = self._old_scope
        self._old_scope = None


AttrScope._scope_default = AttrScope()


def current():
    """The attribute scope in effect in this thread (an empty one outside
    any ``with AttrScope(...):`` block).

    Returns
    -------
    AttrScope
    """
    return AttrScope.in_effect()


__all__ = ["AttrScope", "current"]
