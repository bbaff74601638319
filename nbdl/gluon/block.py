"""Block: the base of every Gluon layer and model, in both Gluon dialects.

Children and Parameters assigned as attributes are registered automatically.
Gluon 2.0 blocks (``forward``, no prefix) name parameters structurally
(``features.3.weight``); Gluon 1.x blocks (``prefix=``/``params=``,
``name_scope()``, ``self.params.get``, ``hybrid_forward``) report MXNet 1.x's
prefixed names (``mynet0_dense0_weight``) from ``collect_params()``.  The
rule that decides which, and how 1.x prefixes are counted, is in
``nbdl.gluon._scope``.  ``save_parameters``/``load_parameters`` use the
structural names in both dialects, as MXNet 1.x does; ``save_params`` and
``collect_params().save`` write the 1.x names."""
import re
import warnings
from collections import OrderedDict

import numpy as np

from ..errors import ArgumentError, NbdlError
from ..name import Prefix
from . import _scope
from .parameter import ResetCtxAlias


class HookHandle:
    """Returned by ``register_forward_hook``; ``detach()`` removes the hook."""

    def __init__(self, hooks, hook):
        self._hooks = hooks
        self._hook = hook

    def detach(self):
        """Remove the hook this handle was returned for (a second call does nothing)."""
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.detach()


class Block(ResetCtxAlias):
    """Base class for all layers and models.  Subclasses define ``forward``.

    Parameters
    ----------
    prefix : str, optional
        Gluon 1.x: the prefix of the block's parameter and child names
        (default: the class's alias and a counter, ``dense0_``).
    params : ParameterDict, optional
        Gluon 1.x: Parameters to share; the block takes those of the names
        it would create (``params=other.collect_params()``).
    """

    def __init__(self, prefix=None, params=None):
        object.__setattr__(self, "_children", OrderedDict())
        object.__setattr__(self, "_reg_params", OrderedDict())
        object.__setattr__(self, "_forward_hooks", [])
        object.__setattr__(self, "_forward_pre_hooks", [])
        if prefix is not None and not isinstance(prefix, str):
            raise NbdlError(f"{type(self).__name__}: prefix must be a str, got {prefix!r}")
        full, pdict, legacy = _scope.create(prefix, params, self._alias())
        pdict._owner = self
        object.__setattr__(self, "_prefix", full)
        object.__setattr__(self, "_empty_prefix", prefix == "")
        object.__setattr__(self, "_params", pdict)
        object.__setattr__(self, "_scope", _scope.BlockScope(self))
        object.__setattr__(self, "_legacy", legacy or getattr(type(self), "_hybrid_1x", False))

    # -- Gluon 1.x naming -------------------------------------------------
    def _alias(self):
        """The hint of the block's 1.x prefix (``dense`` for ``dense0_``)."""
        return type(self).__name__.lower()

    @property
    def prefix(self):
        """The block's 1.x prefix (``mynet0_dense0_``)."""
        return self._prefix

    @property
    def name(self):
        """The block's 1.x name: its prefix without the trailing ``_``."""
        return self._prefix[:-1] if self._prefix.endswith("_") else self._prefix

    @property
    def params(self):
        """The block's own ParameterDict (not its children's).  Gluon 1.x
        API: reading it makes the block 1.x-style."""
        self._mark_1x()
        return self._params

    def name_scope(self):
        """``with self.name_scope():`` names the blocks made inside after
        this one (``mynet0_dense0_``) and makes the block 1.x-style."""
        return self._scope

    def _mark_1x(self):
        """Make the block 1.x-style: its registered Parameters take their
        1.x names."""
        if self._legacy:
            return
        object.__setattr__(self, "_legacy", True)
        for name, p in list(self._reg_params.items()):
            new = self._adopt(p)
            if new is not p:
                self._reg_params[name] = new
                object.__setattr__(self, name, new)

    def _adopt(self, p):
        """The Parameter to register for ``p`` on a 1.x-style block: ``p``
        renamed ``params.prefix + name`` and held by ``params``, or the
        shared Parameter of that name."""
        if not self._legacy or p._in_dict:
            return p
        from .parameter_dict import _match
        full = self._params.prefix + p._name
        found = self._params._get_impl(full)
        if found is not None and found is not p:
            _match(found, {"shape": p.shape, "dtype": p.dtype})
            found._in_dict = True
            return found
        p._name, p._var = full, None
        dict.__setitem__(self._params, full, p)
        p._in_dict = True
        return p

    # -- registration -----------------------------------------------------
    def __setattr__(self, name, value):
        from .parameter import Parameter
        if not hasattr(self, "_children"):
            raise NbdlError(f"{type(self).__name__}: call super().__init__() before assigning "
                            f"attributes")
        existing = self.__dict__.get(name)
        if isinstance(existing, (Block, Parameter)) and not isinstance(value, type(existing)):
            raise ArgumentError(f"{type(self).__name__}.{name}: cannot replace a "
                                f"{type(existing).__name__} with a {type(value).__name__}")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            value = self._adopt(value)
            self._reg_params[name] = value
            self._graph_changed(f"parameter {name!r} was assigned")
        object.__setattr__(self, name, value)

    def register_child(self, block, name=None):
        """Register ``block`` as a child (attributes that are Blocks are
        registered automatically).  A block that takes a 1.x-style child
        becomes 1.x-style itself (its ``collect_params`` reports the child's
        1.x names, as MXNet 1.x's would).

        Parameters
        ----------
        block : Block
            The child.
        name : str, optional
            Its structural name (default: its position, ``'0'``, ``'1'``...).
        """
        if getattr(block, "_legacy", False):
            self._mark_1x()
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
        """The Parameters of the block and its children, as a ParameterDict:
        keyed by 1.x names (``mynet0_dense0_weight``) for a 1.x-style block,
        by structural names (``features.3.weight``) otherwise.  A shared
        Parameter appears once, under its first name.

        Parameters
        ----------
        select : str, optional
            A regular expression the names must match from their start
            (``'.*weight|.*bias'``).
        """
        try:
            pattern = re.compile(select) if select else None
        except (re.error, TypeError) as e:
            raise NbdlError(f"collect_params: select={select!r} is not a regular expression: "
                            f"{e}") from None
        self._check_container_with_block()
        if self._legacy:
            return self._collect_1x(pattern)
        return self._collect_structural(pattern)

    def _check_container_with_block(self):
        """Warn about Blocks held in a list, tuple or dict attribute: they
        are not registered, so their parameters are not collected."""
        children = {id(c) for c in self._children.values()}

        def unregistered(data):
            if isinstance(data, (list, tuple)):
                return any(unregistered(v) for v in data)
            if isinstance(data, dict):
                return any(unregistered(v) for v in data.values())
            return isinstance(data, Block) and id(data) not in children
        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not k.startswith("_") and unregistered(v):
                warnings.warn(f'"{type(self).__name__}.{k}" is an unregistered container with '
                              f'Blocks. Note that Blocks inside the list, tuple or dict will not '
                              f'be registered automatically. Make sure to register them using '
                              f'register_child() or switching to nn.Sequential/nn.HybridSequential '
                              f'instead.', stacklevel=3)

    def _collect_structural(self, pattern=None, name_vars=True):
        from .parameter_dict import ParameterDict
        params = self._collect_params_with_prefix()
        seen, out = set(), ParameterDict("")
        for name, p in params.items():
            if id(p) in seen:
                continue          # a shared parameter appears once, under its first name
            seen.add(id(p))
            if name_vars:
                p._var_name = name if name_vars == "force" else p._var_name or name
            if pattern is None or pattern.match(name):
                dict.__setitem__(out, name, p)
        return out

    def _name_vars(self):
        """Name every parameter's graph variable as ``collect_params`` of
        this block names it (what a trace from this block uses), replacing
        names an earlier trace from another block gave."""
        if self._legacy:
            self._collect_1x(None, "force")
        else:
            self._collect_structural(None, "force")

    def _own_1x_params(self):
        """(1.x name, Parameter) of this block's own parameters: those of
        its ParameterDict, then registered ones it does not hold."""
        items = list(self._params.items())
        held = {id(p) for _, p in items}
        for p in self._reg_params.values():
            if id(p) not in held:
                items.append((p._name if p._in_dict else self._params.prefix + p._name, p))
        return items

    def _collect_1x(self, pattern=None, name_vars=True):
        from .parameter_dict import ParameterDict
        out, seen = ParameterDict(self._params.prefix), set()

        def walk(block):
            for name, p in block._own_1x_params():
                if id(p) in seen:
                    continue
                seen.add(id(p))
                if name in out:
                    raise NbdlError(f"{type(self).__name__}.collect_params: two different "
                                    f"Parameters are named {name!r} (blocks made with "
                                    f"prefix='' or without name_scope() collide)")
                if name_vars:
                    p._var_name = name if name_vars == "force" else p._var_name or name
                if pattern is None or pattern.match(name):
                    dict.__setitem__(out, name, p)
            for child in block._children.values():
                walk(child)
        walk(self)
        return out

    def initialize(self, init=None, device=None, verbose=False, force_reinit=False, ctx=None):
        """Initialize the Parameters of the block and its children (the
        same as ``collect_params().initialize(...)``).

        Parameters
        ----------
        init : Initializer or str, default Uniform()
            The default initializer (a Parameter's own ``init`` wins).
        device : Device or list of Devices, optional
            Where to keep copies (default: the current device).
        verbose : bool, default False
            Print each name as it is initialized.
        force_reinit : bool, default False
            Re-initialize Parameters that already are.
        ctx : Device or list of Devices, optional
            MXNet 1.x's name of ``device``.
        """
        self.collect_params().initialize(init, ctx, verbose, force_reinit, device=device)

    def zero_grad(self):
        """Set the gradients of every Parameter to 0."""
        self.collect_params().zero_grad()

    def cast(self, dtype):
        """Cast every Parameter of this block and its children to ``dtype``.

        Parameters
        ----------
        dtype : str or numpy dtype
            The new dtype (``'float16'``, ``np.float64``...).
        """
        for child in self._children.values():
            child.cast(dtype)
        for p in self._reg_params.values():
            p.cast(dtype)

    def reset_device(self, device):
        """Move every Parameter to ``device`` (a Device or a list).

        Parameters
        ----------
        device : Device or list of Devices
            The new devices.
        """
        self.collect_params().reset_device(device)

    def apply(self, fn):
        """Call ``fn(block)`` on every child (recursively), then on this block;
        returns this block.

        Parameters
        ----------
        fn : callable
            Called with each Block.
        """
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

    def save_params(self, filename):
        """Deprecated in MXNet 1.x (warns): write the 1.x names of the
        parameters without this block's prefix, as
        ``collect_params().save(filename, strip_prefix=self.prefix)``.

        Parameters
        ----------
        filename : str
            The file.
        """
        from .parameter import ParameterError
        warnings.warn("save_params is deprecated. Please use save_parameters. Note that if you "
                      "want load from SymbolBlock later, please use export instead. For "
                      "details, see https://mxnet.apache.org/tutorials/gluon/save_load_params.html",
                      stacklevel=2)
        try:
            self._collect_1x(None, False).save(filename, strip_prefix=self.prefix)
        except ParameterError as e:
            raise ParameterError(f"{e}\nsave_params is deprecated. Using save_parameters may "
                                 f"resolve this error.") from None

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        """Deprecated in MXNet 1.x (warns): ``load_parameters``.

        Parameters
        ----------
        filename : str
            The file.
        ctx : Device or list of Devices, optional
            Where to initialize parameters not yet initialized.
        allow_missing : bool, default False
            Leave parameters the file lacks as they are.
        ignore_extra : bool, default False
            Skip the file's names the block does not have.
        """
        warnings.warn("load_params is deprecated. Please use load_parameters.", stacklevel=2)
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    def _load_1x_by_name(self, filename, loaded, device, allow_missing, ignore_extra,
                         cast_dtype, dtype_source):
        """A 1.x-style block loading a file of 1.x names (no ``.``): by name
        behind the block's prefix, as MXNet 1.x does (``save_params``
        files), else by the full names (``collect_params().save`` and
        ``export`` files).  Returns False when neither maps (the caller then
        matches by order)."""
        params = self._collect_1x(None, False)
        held = set(params)
        for restore in dict.fromkeys((self.prefix, "")):
            names = {restore + k for k in loaded}
            if not all(n.startswith(restore) for n in held) or not names & held:
                continue
            if (not allow_missing and held - names) or (not ignore_extra and names - held):
                continue
            params.load_dict(loaded, device, allow_missing, ignore_extra, restore, filename,
                             cast_dtype, dtype_source)
            return True
        return False

    def load_parameters(self, filename, device=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current", ctx=None):
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
        bad file leaves the block unchanged.  A 1.x-style block loads a
        file of 1.x names by name first (behind its prefix, as MXNet 1.x),
        and by order when those names do not map.  ``ctx`` is MXNet 1.x's
        name of ``device``."""
        from .parameter_dict import _merge_devices
        device = _merge_devices(device, ctx, f"{type(self).__name__}.load_parameters")
        from ..ndarray.files import load
        from . import _legacy_params
        from .symbol_block import SymbolBlock
        loaded = load(filename)
        if not isinstance(loaded, dict):
            raise NbdlError(f"{filename}: holds an unnamed list of arrays, not parameters")
        loaded = {k.split(":", 1)[1] if k.startswith(("arg:", "aux:")) else k: v
                  for k, v in loaded.items()}
        if self._legacy and loaded and not any("." in k for k in loaded) and \
                self._load_1x_by_name(filename, loaded, device, allow_missing, ignore_extra,
                                      cast_dtype, dtype_source):
            return
        params = self._collect_params_with_prefix()
        origin = {}
        # a SymbolBlock's names are its graph's (MXNet's own): always by name
        if not isinstance(self, SymbolBlock) and _legacy_params.is_legacy(loaded, params):
            params = self._collect_structural(None, False)  # a shared parameter once, as MXNet 1.x saved it
            origin = _legacy_params.map_legacy(filename, loaded, params, allow_missing,
                                               ignore_extra)
            loaded = {name: loaded[key] for name, key in origin.items()}
        if not allow_missing:
            # a shared parameter is loaded when any of its names is (files
            # saved with deduplicate=True hold it once)
            found = {id(p) for k, p in params.items() if k in loaded}
            missing = [k for k, p in params.items() if id(p) not in found]
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
        """Call ``hook(block, args)`` before each ``forward``; returns a handle
        whose ``detach()`` removes it.

        Parameters
        ----------
        hook : callable
            The hook.
        """
        self._forward_pre_hooks.append(hook)
        return HookHandle(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook):
        """Call ``hook(block, args, outputs)`` after each ``forward``; returns a
        handle whose ``detach()`` removes it.

        Parameters
        ----------
        hook : callable
            The hook.
        """
        self._forward_hooks.append(hook)
        return HookHandle(self._forward_hooks, hook)

    def _call_on_symbols(self, args, kwargs):
        """``block(sym.var('data'))``: the graph of ``forward`` (Gluon 1.x
        builds symbols this way); parameters are the variables named as
        ``collect_params`` names them."""
        from . import _trace
        self._name_vars()
        with _trace.trace():
            return self._traced_forward(*args, **kwargs)

    def _traced_forward(self, *args, **kwargs):
        """``forward`` on Symbols. A 1.x-style block names the nodes it makes
        after its prefix (``dense0_fwd``, ``mynet0_activation0``), as MXNet
        runs ``hybrid_forward`` inside the block's ``name_scope()``."""
        if self._legacy and not self._empty_prefix:
            with Prefix(self._prefix):
                return self.forward(*args, **kwargs)
        return self.forward(*args, **kwargs)

    def _fwd_name(self, name="fwd"):
        """The name MXNet 1.x gives a built-in layer's main node (``fwd``,
        under the block's prefix: ``dense0_fwd``) for a 1.x-style block;
        None (an automatic name) for a Gluon 2.0 one."""
        return name if self._legacy else None

    def __call__(self, *args, **kwargs):
        from ..symbol import Symbol
        if args and isinstance(args[0], Symbol):
            from . import _trace
            if not _trace.tracing():
                return self._call_on_symbols(args, kwargs)
        for hook in self._forward_pre_hooks:
            hook(self, args)
        out = self.forward(*args, **kwargs)
        for hook in self._forward_hooks:
            hook(self, args, out)
        return out

    def forward(self, *args):
        """The block's computation, which every subclass defines (a
        ``HybridBlock`` may define ``hybrid_forward(self, F, x, ...)``
        instead); called by ``block(*args)``.

        Parameters
        ----------
        *args : NDArray
            The inputs.
        """
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
