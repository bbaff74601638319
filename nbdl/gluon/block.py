"""Block: the base of every Gluon layer and model (Gluon 2.0 semantics).

Children and Parameters assigned as attributes are registered automatically;
``collect_params`` names parameters structurally (``features.3.weight``)."""
import re
from collections import OrderedDict

import numpy as np

from ..errors import NbdlError


class HookHandle:
    """Returned by ``register_forward_hook``; ``detach()`` removes the hook."""

    def __init__(self, hooks, hook):
        self._hooks = hooks
        self._hook = hook

    def detach(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.detach()


class Block:
    """Base class for all layers and models.  Subclasses define ``forward``."""

    def __init__(self):
        object.__setattr__(self, "_children", OrderedDict())
        object.__setattr__(self, "_reg_params", OrderedDict())
        object.__setattr__(self, "_forward_hooks", [])
        object.__setattr__(self, "_forward_pre_hooks", [])

    # -- registration -----------------------------------------------------
    def __setattr__(self, name, value):
        from .parameter import Parameter
        if not hasattr(self, "_children"):
            raise NbdlError(f"{type(self).__name__}: call super().__init__() before assigning "
                            f"attributes")
        existing = self.__dict__.get(name)
        if isinstance(existing, (Block, Parameter)) and not isinstance(value, type(existing)):
            raise NbdlError(f"{type(self).__name__}.{name}: cannot replace a "
                            f"{type(existing).__name__} with a {type(value).__name__}")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            self._reg_params[name] = value
            self._graph_changed(f"parameter {name!r} was assigned")
        object.__setattr__(self, name, value)

    def register_child(self, block, name=None):
        if name is None:
            name = str(len(self._children))
        replacing = name in self._children
        self._children[name] = block
        if replacing:
            self._graph_changed(f"child {name!r} was replaced")
        else:
            self._graph_changed(f"child {name!r} was added")

    def _graph_changed(self, why):
        """Hook for HybridBlock: a structural change after hybridize."""

    # -- parameters -------------------------------------------------------
    def _collect_params_with_prefix(self, prefix=""):
        if prefix:
            prefix += "."
        out = OrderedDict((prefix + k, v) for k, v in self._reg_params.items())
        for name, child in self._children.items():
            out.update(child._collect_params_with_prefix(prefix + name))
        return out

    def _deferred_in_tree(self):
        """Whether a parameter of this block or a descendant waits for
        deferred initialization (``collect_params`` without building it)."""
        for p in self._reg_params.values():
            if p._deferred_init:
                return True
        for child in self._children.values():
            if child._deferred_in_tree():
                return True
        return False

    def collect_params(self, select=None):
        """``{structural name: Parameter}``; ``select`` is a regular
        expression the names must match (``'.*weight|.*bias'``)."""
        params = self._collect_params_with_prefix()
        seen, out = set(), OrderedDict()
        for name, p in params.items():
            if id(p) in seen:
                continue          # a shared parameter appears once, under its first name
            seen.add(id(p))
            p._var_name = p._var_name or name
            if select is None or re.match(select, name):
                out[name] = p
        return out

    def initialize(self, init=None, device=None, verbose=False, force_reinit=False):
        from .. import initializer
        init = init if init is not None else initializer.Uniform()
        for name, p in self.collect_params().items():
            if verbose:
                print(f"initialize {name}")
            p.initialize(None, device, default_init=init, force_reinit=force_reinit)

    def zero_grad(self):
        for p in self.collect_params().values():
            if p.grad_req != "null" and p._data is not None:
                p.zero_grad()

    def cast(self, dtype):
        for child in self._children.values():
            child.cast(dtype)
        for p in self._reg_params.values():
            p.cast(dtype)

    def reset_device(self, device):
        for p in self.collect_params().values():
            p.reset_device(device)

    reset_ctx = reset_device

    def apply(self, fn):
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def share_parameters(self, shared):
        """Use the Parameters in ``shared`` ({structural name: Parameter})
        in place of this block's own of the same names."""
        if not isinstance(shared, dict):
            raise NbdlError("share_parameters expects a dict {structural name: Parameter}")
        self._share(shared, "")
        return self

    def _share(self, shared, prefix):
        for name in list(self._reg_params):
            full = prefix + name
            if full in shared:
                self._reg_params[name] = shared[full]
                object.__setattr__(self, name, shared[full])
        for cname, child in self._children.items():
            child._share(shared, prefix + cname + ".")

    # -- files ------------------------------------------------------------
    def save_parameters(self, filename, deduplicate=False):
        """Write the parameters (structural names) in MXNet's NDArray file
        format; written to a temporary file and renamed, never pickled."""
        from ..serialization import save
        params = self._collect_params_with_prefix()
        out, seen = {}, {}
        for name, p in params.items():
            if deduplicate and id(p) in seen:
                continue
            seen[id(p)] = name
            out[name] = p._reduce()
        save(filename, out)

    def load_parameters(self, filename, device=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current"):
        """Load parameters saved by ``save_parameters`` (structural names,
        also MXNet's ``arg:``/``aux:`` files of them) or by MXNet 1.x under
        its prefixed names (``net.collect_params().save(f)``, the deprecated
        ``save_params``, its model-store files, ``export``'s ``.params``):
        a file with no ``.`` in any key, as MXNet 1.x tells them apart.
        Those names mean nothing to nbdl's blocks, so they are matched by
        MXNet 1.x's creation order, checking every kind and shape (see
        ``nbdl.gluon._legacy_params``); such a file must hold exactly the
        block's parameters (``allow_missing``/``ignore_extra`` cannot pick
        parts of it).  Everything is checked before anything is set, so a
        bad file leaves the block unchanged."""
        from ..serialization import load
        from . import _legacy_params
        from .symbol_block import SymbolBlock
        loaded = load(filename)
        if not isinstance(loaded, dict):
            raise NbdlError(f"{filename}: holds an unnamed list of arrays, not parameters")
        loaded = {k.split(":", 1)[1] if k.startswith(("arg:", "aux:")) else k: v
                  for k, v in loaded.items()}
        params = self._collect_params_with_prefix()
        origin = {}
        # a SymbolBlock's names are its graph's (MXNet's own): always by name
        if not isinstance(self, SymbolBlock) and _legacy_params.is_legacy(loaded, params):
            params = self.collect_params()     # a shared parameter once, as MXNet 1.x saved it
            origin = _legacy_params.map_legacy(filename, loaded, params, allow_missing,
                                               ignore_extra)
            loaded = {name: loaded[key] for name, key in origin.items()}
        if not allow_missing:
            missing = [k for k in params if k not in loaded]
            if missing:
                raise NbdlError(f"{filename}: parameters {missing} are missing from the file "
                                f"(pass allow_missing=True to leave them as they are)")
        if not ignore_extra:
            extra = [k for k in loaded if k not in params]
            if extra:
                raise NbdlError(f"{filename}: holds parameters {extra} that the block does not "
                                f"have (pass ignore_extra=True to skip them)")
        plan = []
        for name, p in params.items():
            if name not in loaded:
                continue
            arr = loaded[name]
            label = f"{name!r}" + (f" (the file's {origin[name]!r})" if name in origin else "")
            if p.shape is not None and all(d > 0 for d in p.shape) and tuple(p.shape) != tuple(arr.shape):
                raise NbdlError(f"{filename}: parameter {label} has shape {tuple(arr.shape)} in "
                                f"the file but {tuple(p.shape)} in the block")
            if not cast_dtype and np.dtype(arr.dtype) != np.dtype(p.dtype):
                raise NbdlError(f"{filename}: parameter {label} is {np.dtype(arr.dtype)} in the "
                                f"file but {np.dtype(p.dtype)} in the block (pass cast_dtype=True)")
            plan.append((p, arr))
        for p, arr in plan:
            if cast_dtype:
                if dtype_source == "saved":
                    p.dtype = arr.dtype
                else:
                    arr = arr.astype(p.dtype)
            p._load_init(arr, device)

    # -- calling ----------------------------------------------------------
    def register_forward_pre_hook(self, hook):
        self._forward_pre_hooks.append(hook)
        return HookHandle(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook):
        self._forward_hooks.append(hook)
        return HookHandle(self._forward_hooks, hook)

    def __call__(self, *args, **kwargs):
        for hook in self._forward_pre_hooks:
            hook(self, args)
        out = self.forward(*args, **kwargs)
        for hook in self._forward_hooks:
            hook(self, args, out)
        return out

    def forward(self, *args):
        raise NbdlError(f"{type(self).__name__} does not define forward(); every Block "
                        f"subclass must")

    def hybridize(self, active=True, **kwargs):
        """Hybridize the HybridBlocks among the children (a plain Block
        itself runs eagerly)."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    # -- display ----------------------------------------------------------
    def __repr__(self):
        lines = [f"{type(self).__name__}("]
        for name, child in self._children.items():
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        return "\n".join(lines) + "\n)" if self._children else f"{type(self).__name__}()"

    def summary(self, *inputs):
        """Print a table of layers, output shapes and parameter counts after
        running ``inputs`` through the block once."""
        from .summary import summary
        return summary(self, *inputs)
