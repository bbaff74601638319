"""What MXNet 1.x's thread-local ``with`` scopes share
(``nbdl.name.NameManager``, ``nbdl.attribute.AttrScope``): the scope in
effect in each thread, a default outside any ``with`` block, and the
class-level ``current`` property MXNet deprecated."""
import threading
import warnings

__all__ = ["ScopeMeta"]


class ScopeMeta(type):
    """Metaclass of a scope class.

    The root class (the first one made with it, not its subclasses) sets
    ``_scope_error``, the error for assigning something else to ``current``;
    it gets ``_scope_local`` (a ``threading.local`` whose ``value`` is the
    scope entered in that thread) and ``_scope_default`` (None until its
    module sets the scope in effect outside any ``with`` block).
    """

    def __init__(cls, name, bases, namespace):
        super().__init__(name, bases, namespace)
        if not any(isinstance(base, ScopeMeta) for base in bases):
            cls._scope_root = cls
            cls._scope_local = threading.local()
            cls._scope_default = None

    def in_effect(cls):
        """The scope entered in this thread, else the default one."""
        scope = getattr(cls._scope_local, "value", None)
        return scope if scope is not None else cls._scope_default

    @property
    def current(cls):
        """The scope in effect (deprecated in MXNet: use ``with``); assigning
        a scope of this class makes it the one in effect in this thread."""
        root = cls._scope_root.__name__
        warnings.warn(f"{root}.current is deprecated; use the `with` statement with {root}",
                      DeprecationWarning, stacklevel=2)
        return cls.in_effect()

    @current.setter
    def current(cls, scope):
        root = cls._scope_root
        if not isinstance(scope, root):
            article = "an" if root.__name__[0] in "AEIOU" else "a"
            raise root._scope_error(f"{root.__name__}.current: expected {article} "
                                    f"{root.__name__}, got {type(scope).__name__}")
        root._scope_local.value = scope
