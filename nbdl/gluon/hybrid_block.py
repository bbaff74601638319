"""HybridBlock: runs eagerly on NDArrays, or, after ``hybridize()``, as a
traced graph planned and run by the executor (``CachedOp``).

Written in either Gluon dialect:

* Gluon 2.0: ``forward(self, x, ...)``, using the Parameters' ``data()``;
* Gluon 1.x: ``hybrid_forward(self, F, x, ..., **params)`` (and no
  ``forward``).  Eagerly ``F`` is ``nbdl.nd`` and the block's registered
  Parameters (its Parameter attributes, by attribute name) come as keyword
  arguments holding their data on the input's device; traced (by
  ``hybridize``, ``infer_shape``, ``export``, or a call on Symbols) ``F``
  is ``nbdl.sym`` and they are the Parameters' Symbol variables.  Both
  dialects trace into the same CachedOp."""
import inspect
import warnings

from .. import config
from ..device import current_device
from ..errors import ArgumentError, NbdlError
from ..symbol.symbol import Symbol
from . import _trace
from .block import Block

_SIGNATURES = {}


class HybridBlock(Block):
    """Base class of the blocks that can be traced into a graph.

    Parameters
    ----------
    prefix : str, optional
        Gluon 1.x: the prefix of the block's names (see ``Block``).
    params : ParameterDict, optional
        Gluon 1.x: Parameters to share (see ``Block``).
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "hybrid_forward" in cls.__dict__:
            cls._hybrid_1x = True        # a Gluon 1.x block: 1.x names

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        object.__setattr__(self, "_active", False)
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_cached", None)      # (symbol, input names) once traced
        object.__setattr__(self, "_cached_op", None)

    def register_child(self, block, name=None):
        """Register ``block`` as a child (``self.name = block`` does it); a
        HybridBlock's children must be HybridBlocks.

        Parameters
        ----------
        block : HybridBlock
            The child.
        name : str, optional
            Its attribute name (default: its position).
        """
        if not isinstance(block, HybridBlock):
            raise NbdlError(f"{type(self).__name__}: children of a HybridBlock must be "
                            f"HybridBlocks, but {name or 'the child'} is a {type(block).__name__}; "
                            f"use HybridSequential (not Sequential) and HybridLambda")
        super().register_child(block, name)

    def _graph_changed(self, why):
        if getattr(self, "_active", False):
            warnings.warn(f"{type(self).__name__}: {why} after hybridize(); the cached graph is "
                          f"dropped and the block runs eagerly until hybridize() is called again",
                          stacklevel=4)
            object.__setattr__(self, "_active", False)
        object.__setattr__(self, "_cached", None)
        object.__setattr__(self, "_cached_op", None)

    def hybridize(self, active=True, static_alloc=False, static_shape=False, inline_limit=2,
                  forward_bulk_size=None, backward_bulk_size=None, partition_if_dynamic=True,
                  memory_budget=None, **kwargs):
        """Trace the first call into a CachedOp.  ``static_alloc`` and
        ``static_shape`` are accepted for compatibility: nbdl always plans one
        arena per input signature and reuses it (a new input shape binds and
        plans anew).  MXNet 1.x's ``clear`` is accepted (the cached graph is
        always rebuilt) and ``backend``/``backend_opts`` only as None: nbdl
        has no subgraph backends.  ``memory_budget`` (bytes, or a string such
        as ``'1.5GB'``; default ``NBDL_MEMORY_BUDGET``): every executor the
        CachedOp binds plans its arena within it, recomputing forward entries
        in backward (docs/memory-budget.md); the children get it too."""
        kwargs.pop("clear", None)
        for name in ("backend", "backend_opts"):
            if kwargs.pop(name, None) is not None:
                raise NbdlError(f"hybridize: {name} is not supported (nbdl has no subgraph "
                                f"backends; pass None)")
        if kwargs:
            raise NbdlError(f"hybridize: unknown arguments {sorted(kwargs)}")
        object.__setattr__(self, "_active", bool(active))
        budget = config.parse_bytes(memory_budget)
        object.__setattr__(self, "_flags", dict(static_alloc=static_alloc, static_shape=static_shape,
                                                inline_limit=inline_limit, memory_budget=budget))
        object.__setattr__(self, "_cached", None)
        object.__setattr__(self, "_cached_op", None)
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape,
                          inline_limit=inline_limit, forward_bulk_size=forward_bulk_size,
                          backward_bulk_size=backward_bulk_size,
                          partition_if_dynamic=partition_if_dynamic, memory_budget=budget)

    def register_forward_hook(self, hook):
        self._graph_changed("a forward hook was registered")
        return super().register_forward_hook(hook)

    def register_forward_pre_hook(self, hook):
        self._graph_changed("a forward pre-hook was registered")
        return super().register_forward_pre_hook(hook)

    def cast(self, dtype):
        self._graph_changed(f"cast({dtype}) was called")
        super().cast(dtype)

    # -- Gluon 1.x ----------------------------------------------------------
    def forward(self, *args):
        """Run ``hybrid_forward`` (a Gluon 1.x block); a Gluon 2.0 block
        overrides this method instead.

        Parameters
        ----------
        *args : NDArray or Symbol (possibly nested in lists or tuples)
            The inputs; all NDArrays (eager) or all Symbols (traced).
        """
        if type(self).hybrid_forward is HybridBlock.hybrid_forward:
            raise NbdlError(f"{type(self).__name__} defines neither forward(self, x, ...) "
                            f"(Gluon 2.0) nor hybrid_forward(self, F, x, ...) (Gluon 1.x); "
                            f"every HybridBlock subclass must define one")
        from .. import ndarray, symbol
        if not args:
            raise NbdlError(f"{type(self).__name__}.hybrid_forward: called without inputs")
        kind, device = _input_kind(args, type(self).__name__)
        if kind == "symbol":
            params = {k: p.var() for k, p in self._reg_params.items()}
            self._check_hybrid_forward(symbol, args, params)
            with _trace.trace():
                return self.hybrid_forward(symbol, *args, **params)
        params = {k: p.data(device) for k, p in self._reg_params.items()}
        self._check_hybrid_forward(ndarray, args, params)
        return self.hybrid_forward(ndarray, *args, **params)

    def _check_hybrid_forward(self, F, args, params):
        cls = type(self)
        sig = _SIGNATURES.get(cls)
        if sig is None:
            sig = _SIGNATURES[cls] = inspect.signature(cls.hybrid_forward)
        try:
            sig.bind(self, F, *args, **params)
        except TypeError as e:
            raise ArgumentError(f"{cls.__name__}.hybrid_forward{str(sig).replace('(self, ', '(', 1)} "
                                f"cannot take the inputs and parameters it is given: {e}. It is "
                                f"called with F, {len(args)} input(s) and the block's registered "
                                f"Parameters as keyword arguments {sorted(params)} (the attribute "
                                f"names they were assigned to)") from None

    def hybrid_forward(self, F, x, *args, **kwargs):
        """Gluon 1.x: the computation, written with ``F`` (``nbdl.nd`` or
        ``nbdl.sym``).  Subclasses written for Gluon 1.x define it (and not
        ``forward``).

        Parameters
        ----------
        F : module
            ``nbdl.nd`` eagerly, ``nbdl.sym`` while traced.
        x : NDArray or Symbol
            The first input.
        *args : NDArray or Symbol
            More inputs.
        **kwargs : NDArray or Symbol
            The block's registered Parameters, by attribute name.
        """
        raise NbdlError(f"{type(self).__name__} defines neither forward(self, x, ...) nor "
                        f"hybrid_forward(self, F, x, ...)")

    # -- tracing ----------------------------------------------------------
    def _trace(self, args):
        """Run ``forward`` on Symbols.  ``args`` may nest lists/tuples of
        NDArrays (RNN states) and hold ``None`` for optional inputs left out.
        Returns (symbol, input names, input format, output format): the flat
        graph inputs are the NDArray leaves in order, and the formats rebuild
        the nesting."""
        from ..symbol import Group, Symbol, var
        leaves, in_fmt = _flatten(args, f"{type(self).__name__} input")
        single_in = len(args) == 1 and not isinstance(args[0], (list, tuple))
        names = ["data"] if single_in and len(leaves) == 1 else [f"data{i}" for i in range(len(leaves))]
        sym_args = _unflatten([var(n) for n in names], in_fmt)
        self._name_vars()                # the variables are named from this block
        with _trace.trace():
            out = self._traced_forward(*sym_args)
        outs, out_fmt = _flatten(out, f"{type(self).__name__}.forward output", Symbol)
        sym = outs[0] if len(outs) == 1 else Group(outs)
        return sym, names, in_fmt, out_fmt

    def infer_shape(self, *args):
        """Infer the shapes of deferred parameters from the input shapes."""
        sym, names, _, _ = self._trace(args)
        self._infer_params(sym, names, _flatten(args, "input")[0])

    def _infer_params(self, sym, names, args):
        """Set deferred parameters' shapes from the graph (their dtypes are
        their own, float32 unless declared) and finish their initialisation."""
        params = {p._var_name: p for p in self.collect_params().values()}
        known = {n: tuple(a.shape) for n, a in zip(names, args)}
        for vname, p in params.items():
            if p.shape is not None and all(d > 0 for d in p.shape):
                known[vname] = tuple(p.shape)
        # the inputs' shapes are real: a 0 dim is a zero size here
        arg_shapes, _, aux_shapes = sym._infer_shape_partial(
            (), {k: v for k, v in known.items() if k in sym.list_inputs()}, zero_unknown=False)
        table = dict(zip(sym.list_arguments(), arg_shapes))
        table.update(zip(sym.list_auxiliary_states(), aux_shapes))
        for vname, p in params.items():
            shp = table.get(vname)
            if shp:
                p.shape = tuple(shp)
        # blocks whose parameter shapes the graph hides (a fused RNN layer
        # packs its weights into one vector) size them from their traced input
        stack = [self]
        while stack:
            blk = stack.pop()
            stack.extend(blk._children.values())
            hook = getattr(blk, "_infer_from_traced_input", None)
            if hook is not None:
                hook(known)
        for p in params.values():
            if p._deferred_init:
                p._finish_deferred_init()

    def infer_type(self, *args):
        """Parameters keep their declared dtypes; nothing to infer beyond them."""

    def _own_deferred(self):
        return any(p._deferred_init for p in self._reg_params.values())

    def _deferred_pending(self):
        if not self._deferred_in_tree():
            return False
        self.collect_params()            # fixes every parameter's variable name
        return True

    # -- calling ----------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if _trace.tracing():
            return self._traced_forward(*args, **kwargs)   # inside a parent's trace
        if args and isinstance(args[0], Symbol):
            return self._call_on_symbols(args, kwargs)
        for hook in self._forward_pre_hooks:
            hook(self, args)
        if self._active:
            out = self._call_cached(self._positional(args, kwargs))
        else:
            # as MXNet's: a block infers its own deferred parameters from its
            # inputs; its children do theirs when it calls them (so an eager
            # forward that only its NDArray path can run still runs)
            if self._own_deferred() and self._deferred_pending():
                self.infer_shape(*self._positional(args, kwargs))
            device = _first_device(args)
            if device is None or device == current_device():
                out = self.forward(*args, **kwargs)
            else:
                # parameters on several devices: data() gives the input's copy
                with device:
                    out = self.forward(*args, **kwargs)
        for hook in self._forward_hooks:
            hook(self, args, out)
        return out

    def _positional(self, args, kwargs):
        """Keyword arguments placed by ``forward``'s signature; trailing
        optional inputs that were not given are dropped."""
        if not kwargs:
            return tuple(args)
        import inspect
        try:
            bound = inspect.signature(self.forward).bind(*args, **kwargs)
        except TypeError as e:
            raise NbdlError(f"{type(self).__name__}.forward: {e}") from None
        bound.apply_defaults()
        vals = list(bound.arguments.values())
        while vals and vals[-1] is None:
            vals.pop()
        return tuple(vals)

    def _call_cached(self, args):
        from ..executor.cached_op import CachedOp
        leaves, pattern = _flatten(args, f"{type(self).__name__} input")
        devices = {a.device for a in leaves}
        if len(devices) > 1:
            raise ArgumentError(f"{type(self).__name__}: a hybridized block takes its inputs on "
                                f"one device, got inputs on {sorted(map(str, devices))}")
        if self._cached is None or self._cached[2] != pattern:
            sym, names, in_fmt, out_fmt = self._trace(args)
            if self._deferred_pending():
                self._infer_params(sym, names, leaves)
            object.__setattr__(self, "_cached", (sym, names, in_fmt, out_fmt))
            params = {p._var_name: p for p in self.collect_params().values()}
            used = set(sym.list_inputs())
            params = {k: v for k, v in params.items() if k in used}
            object.__setattr__(self, "_cached_op", CachedOp(sym, names, params, **self._flags_op()))
            self._cached_op.set_op_hook(getattr(self, "_op_hook", None))
        outs = self._cached_op(*leaves)
        return _unflatten(outs, self._cached[3])

    def _flags_op(self):
        flags = {k: self._flags.get(k, False) for k in ("static_alloc", "static_shape")}
        flags["memory_budget"] = self._flags.get("memory_budget")
        return flags

    # -- export -----------------------------------------------------------
    def export(self, path, epoch=0, remove_amp_cast=True):
        """Write ``path-symbol.json`` and ``path-%04d.params`` (MXNet's
        formats, keys ``arg:``/``aux:``) from the graph of the last
        hybridized call."""
        if self._cached is None:
            raise NbdlError("Please first call block.hybridize() and then run forward with "
                            "this block at least once before calling export.")
        from ..serialization import save
        sym = self._cached[0]
        sym.save(f"{path}-symbol.json")
        params = self._cached_op.params          # the graph's variable names
        out = {}
        for name in sym.list_arguments():
            if name in params:
                out[f"arg:{name}"] = params[name]._reduce()
        for name in sym.list_auxiliary_states():
            out[f"aux:{name}"] = params[name]._reduce()
        save(f"{path}-{epoch:04d}.params", out)
        return f"{path}-symbol.json", f"{path}-{epoch:04d}.params"

    def register_op_hook(self, callback, monitor_all=False):
        """Call ``callback(node_output_name, op_name, array)`` for the output
        of every op of the cached graph as it runs (and for the inputs too
        with ``monitor_all``).  Monitoring runs the schedule one op at a time
        from Python; pass ``callback=None`` to stop."""
        object.__setattr__(self, "_op_hook", (callback, monitor_all) if callback else None)
        for child in self._children.values():
            if isinstance(child, HybridBlock):
                child.register_op_hook(callback, monitor_all)
        if self._cached_op is not None:
            self._cached_op.set_op_hook(self._op_hook)

    def debug_str(self):
        """The executor listing and memory table of the cached graph."""
        if self._cached_op is None or not self._cached_op.executors():
            raise NbdlError("debug_str: hybridize() the block and call it once first")
        return self._cached_op.executors()[-1].debug_str()


def _first_device(args):
    """The device of the first NDArray among the (nested) inputs, or None."""
    from ..ndarray import NDArray
    for a in args:
        if isinstance(a, NDArray):
            return a.device
        if isinstance(a, (list, tuple)):
            d = _first_device(a)
            if d is not None:
                return d
    return None


def _input_kind(args, where):
    """``('ndarray', device of the first NDArray)`` or ``('symbol', None)``
    for a call's nested inputs; mixing them, or none at all, is an error."""
    from ..ndarray import NDArray
    kinds, device = set(), None
    stack = list(args)
    while stack:
        x = stack.pop(0)
        if isinstance(x, (list, tuple)):
            stack[:0] = list(x)
        elif isinstance(x, Symbol):
            kinds.add("symbol")
        elif isinstance(x, NDArray):
            kinds.add("ndarray")
            device = device or x.device
    if len(kinds) != 1:
        raise ArgumentError(f"{where}: the inputs must be all NDArrays or all Symbols (with "
                            f"None for inputs left out), got "
                            f"{'both' if kinds else 'neither'}: {[type(a).__name__ for a in args]}")
    return kinds.pop(), device


def _flatten(obj, what, leaf_type=None):
    """Leaves of a nest of lists/tuples, and a hashable format to rebuild it:
    an int for a leaf (its index), None for None, (kind, subformats) for a
    list or tuple.  A multi-output Symbol counts as a list of its outputs."""
    from ..ndarray import NDArray
    from ..symbol import Symbol
    leaf_type = leaf_type or NDArray
    leaves = []

    def walk(x):
        if x is None:
            return None
        if isinstance(x, Symbol) and leaf_type is Symbol and len(x) > 1:
            return ("list", tuple(walk(s) for s in x))
        if isinstance(x, leaf_type):
            leaves.append(x)
            return len(leaves) - 1
        if isinstance(x, (list, tuple)):
            return ("list" if isinstance(x, list) else "tuple", tuple(walk(v) for v in x))
        raise ArgumentError(f"{what}: expected {leaf_type.__name__}s (possibly in lists or tuples) "
                            f"or None, got {type(x).__name__}; inside a HybridBlock use nbdl.np/npx "
                            f"functions")
    return leaves, walk(obj)


def _unflatten(leaves, fmt):
    if fmt is None:
        return None
    if isinstance(fmt, int):
        return leaves[fmt]
    kind, subs = fmt
    items = [_unflatten(leaves, f) for f in subs]
    return items if kind == "list" else tuple(items)
