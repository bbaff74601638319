"""CachedOp: a traced graph run by the executor (planned arena, prepared
kernels, native driver), taped as one node for autograd.

One executor is bound per input signature (shapes, dtypes, which inputs need
gradients).  Parameters are bound by reference: the executor reads the
parameters' own arrays, and the first ("primary") executor of a signature
writes their gradients straight into the parameters' gradient buffers.

An executor that holds the intermediate values of a recorded call that has
not been backpropagated yet is busy; a second call then gets another
executor, bound to gradient buffers of its own that are added into the
parameters' after its backward.  Every gradient buffer written in a backward
pass is stamped with the pass, so whichever node writes a parameter's
gradient second adds to it: two forwards before one backward, and parameters
shared between blocks, give summed gradients.

It needs nothing from Gluon: a parameter is anything with ``data(device)``,
``grad(device)``, ``grad_req`` and ``list_device()``.  ``HybridBlock`` builds
one from its trace; ``NDCachedOp`` is MXNet 1.x's ``nd.CachedOp``."""
import weakref

import numpy as np

from ..array import NDArray
from ..errors import NbdlError
from ..imperative import engine as _engine
from ..imperative import state as _ag
from ..imperative.invoke import invoke
from ..imperative.tape import record_custom
from .bind import bind
from .executor import copy_into


class _Bound:
    __slots__ = ("ex", "pending", "params_key", "primary")

    def __init__(self, ex, params_key, primary):
        self.ex = ex
        self.pending = None        # weakref to the tape node awaiting backward
        self.params_key = params_key
        self.primary = primary     # writes the parameters' gradient buffers itself

    def busy(self):
        return self.pending is not None and self.pending() is not None


class CachedOp:
    """A Symbol run as one recorded op: ``cached_op(*inputs)`` returns the
    outputs as NDArrays.

    Parameters
    ----------
    symbol : Symbol
        The graph.
    input_names : list of str
        The variables fed by the call's arrays, in call order.
    params : dict
        {variable name: parameter} for the other variables (a parameter has
        ``data(device)``, ``grad(device)``, ``grad_req`` and
        ``list_device()``, as Gluon's ``Parameter``).
    static_alloc, static_shape : bool
        MXNet's flags (kept; nbdl's executors always plan their memory).
    memory_budget : int, optional
        Arena bytes every executor bound must fit (None: none).
    """

    def __init__(self, symbol, input_names, params, static_alloc=False, static_shape=False,
                 memory_budget=None):
        self.symbol = symbol
        self.input_names = list(input_names)
        self.params = params            # {var name: Parameter}
        self.static_alloc = static_alloc
        self.static_shape = static_shape
        self.memory_budget = memory_budget  # bytes, for every executor bound (None: none)
        self._bound = {}                # signature -> [_Bound]
        arg_names = symbol.list_arguments()
        aux_names = symbol.list_auxiliary_states()
        missing = [n for n in arg_names + aux_names
                   if n not in self.params and n not in self.input_names]
        if missing:
            raise NbdlError(f"hybridized graph has variables {missing} that are neither inputs "
                            f"nor parameters of the block")
        self._arg_names, self._aux_names = arg_names, aux_names
        self._op_hook = None

    def set_op_hook(self, hook):
        """``(callback, monitor_all)`` or None: passed to every executor's
        monitor (see ``HybridBlock.register_op_hook``)."""
        self._op_hook = hook
        for ex in self.executors():
            self._apply_hook(ex)

    def _apply_hook(self, ex):
        if self._op_hook is None:
            ex.set_monitor_callback(None)
            return
        callback, monitor_all = self._op_hook
        ops = {}
        for s in ex._sched.fwd_train + ex._sched.backward:
            for name in s.node.output_names():
                ops[name] = s.node.op.name
        ex.set_monitor_callback(lambda name, arr: callback(name, ops.get(name, ""), arr),
                                monitor_all)

    def executors(self):
        """The executors bound so far (one per input signature and training mode)."""
        return [b.ex for lst in self._bound.values() for b in lst]

    def _bind(self, inputs, needs_grad, primary, predict=False):
        dev = inputs[0]._device if inputs else self.params[next(iter(self.params))].list_device()[0]
        by_input = dict(zip(self.input_names, inputs))
        wants_grad = dict(zip(self.input_names, needs_grad))
        args, grads, reqs = {}, {}, {}
        for name in self._arg_names:
            if name in by_input:
                a = by_input[name]
                args[name] = NDArray(dev.zeros(a.shape, a._data.dtype), dev)
                if wants_grad[name]:
                    grads[name] = NDArray(dev.zeros(a.shape, a._data.dtype), dev)
                    reqs[name] = "write"
            else:
                p = self.params[name]
                args[name] = p.data(dev)
                if p.grad_req != "null" and not predict:
                    if primary:
                        grads[name] = p.grad(dev)
                        reqs[name] = p.grad_req
                    else:
                        g = p.grad(dev)
                        grads[name] = NDArray(dev.zeros(g.shape, g._data.dtype), dev)
                        reqs[name] = "write"
        aux = {name: self.params[name].data(dev) for name in self._aux_names}
        return bind(self.symbol, dev, args, args_grad=grads or None, aux_states=aux or None,
                    grad_req=reqs, memory_budget=self.memory_budget)

    def _params_key(self, dev):
        """What a bound executor depends on besides the input signature: the
        parameters' arrays (replaced by set_data/cast/reset_device) and
        gradient requests."""
        return tuple((id(p.data(dev)._data), p.grad_req,
                      id(p.grad(dev)._data) if p.grad_req != "null" else None)
                     for p in self.params.values())

    def __call__(self, *inputs):
        if len(inputs) != len(self.input_names):
            raise NbdlError(f"hybridized block takes {len(self.input_names)} inputs "
                            f"({', '.join(self.input_names)}), got {len(inputs)}")
        recording = _ag.is_recording()
        needs_grad = tuple(recording and (getattr(a, "_ag", None) is not None
                                          or getattr(a, "_ag_var", None) is not None)
                           for a in inputs)
        # A call neither recorded nor in training mode gets an executor of its
        # own, bound without gradients: its graph is rewritten for inference
        # (nbdl.graph.fuse), as MXNet's CachedOp plans its inference graph apart.
        predict = not recording and not _ag.is_training()
        sig = (tuple((tuple(a.shape), np.dtype(a._data.dtype).str) for a in inputs), needs_grad,
               predict)
        dev = inputs[0]._device if inputs else None
        pkey = self._params_key(dev) if dev is not None else ()
        pool = self._bound.setdefault(sig, [])
        slot = next((b for b in pool if not b.busy() and b.params_key == pkey), None)
        if slot is None:
            pool[:] = [b for b in pool if b.params_key == pkey]
            primary = not pool
            slot = _Bound(self._bind(list(inputs), needs_grad, primary and not predict, predict),
                          pkey, primary and not predict)
            if self._op_hook is not None:
                self._apply_hook(slot.ex)
            pool.append(slot)
        ex = slot.ex
        for name, a in zip(self.input_names, inputs):
            if name in ex.arg_dict:
                copy_into(ex.arg_dict[name]._data, a)
        outs = ex.forward(is_train=_ag.is_training())
        results = [NDArray(o._data.copy(), o._device) if isinstance(o._data, np.ndarray)
                   else NDArray(_dev_copy(o), o._device) for o in outs]
        if recording:
            nd_inputs = list(inputs)

            def backward_fn(out_grads, slot=slot, needs_grad=needs_grad):
                slot.pending = None
                self._backward(slot, dev, list(out_grads))
                return [ex.grad_dict[n].copy() if ng else None
                        for n, ng in zip(self.input_names, needs_grad)]
            node = record_custom(nd_inputs, results, backward_fn, name="CachedOp",
                                 writes_grads=True)
            slot.pending = weakref.ref(node)
        return results

    def _backward(self, slot, dev, out_grads):
        ex = slot.ex
        trained = [(name, p.grad(dev)) for name, p in self.params.items()
                   if p.grad_req != "null" and name in ex.grad_dict]
        marked = set()
        with _ag.pause():
            if slot.primary:
                # a 'write' gradient already written in this pass would be
                # overwritten: keep it aside and add it back
                saved = [(g, g.copy()) for name, g in trained
                         if _engine.written_this_pass(g) and self.params[name].grad_req == "write"]
                ex.backward(out_grads, grad_ready=self._early_marker(trained, saved, marked))
                for g, old in saved:
                    invoke("elemwise_add", [g, old], out=g)
            else:
                ex.backward(out_grads)
                for name, g in trained:
                    _engine.store_grad(g, ex.grad_dict[name], self.params[name].grad_req)
                    marked.add(name)
        for name, g in trained:
            if name not in marked:
                _engine.mark_written(g)

    @staticmethod
    def _early_marker(trained, saved, marked):
        """With gradient listeners (a distributed trainer's buckets), a
        ``grad_ready`` callback for the primary executor's backward that
        marks each parameter's gradient written as soon as the step writing
        it has run, so its reduction can start while backward goes on;
        gradients that still get a value added afterwards (``saved``) are
        marked at the end.  None without listeners (one runner, no cuts)."""
        if not _engine.has_grad_listeners():
            return None
        grads = dict(trained)
        late = {id(g) for g, _ in saved}

        def ready(names):
            for name in names:
                g = grads.get(name)
                if g is not None and id(g) not in late:
                    _engine.mark_written(g)
                    marked.add(name)
        return ready


def _dev_copy(o):
    from numba import cuda
    d = cuda.device_array(o._data.shape, o._data.dtype)
    d.copy_to_device(o._data)
    return d


class NDCachedOp(CachedOp):
    """MXNet 1.x's ``nd.CachedOp(sym, flags=())``: a Symbol run as one
    recorded op, called with an array for each of ``sym.list_inputs()`` in
    that order (arguments and auxiliary states as the symbol lists them).

    Parameters
    ----------
    sym : Symbol
        The graph.
    flags : sequence of (str, value) or dict
        MXNet's flags; ``static_alloc`` and ``static_shape`` are read, the
        others accepted (nbdl's executors always plan their memory).
    """

    def __init__(self, sym, flags=()):
        flags = dict(flags)
        truth = {"1", "true", "True"}
        super().__init__(sym, sym.list_inputs(), {},
                         static_alloc=str(flags.get("static_alloc", False)) in truth,
                         static_shape=str(flags.get("static_shape", False)) in truth)

    def __call__(self, *args, out=None):
        """Run on ``args``; one output is returned as an NDArray, several as
        a list.  ``out`` (an NDArray, or a list for several outputs) receives
        the results instead."""
        results = super().__call__(*args)
        if out is not None:
            outs = out if isinstance(out, (list, tuple)) else [out]
            if len(outs) != len(results):
                raise NbdlError(f"CachedOp: {len(results)} outputs, but out= has {len(outs)}")
            for o, r in zip(outs, results):
                o[:] = r
            return out
        return results[0] if len(results) == 1 else results
