"""The Executor: a bound symbol with planned memory and a compiled schedule.

``forward``/``backward`` only run prepared kernel calls over views made at
bind time (through one generated native driver when the schedule allows), so
nothing is allocated per call."""
import numpy as np

from .. import compile_log, config
from .. import profiler_core as _prof
from ..array import NDArray
from ..errors import BindError, ShapeError
from . import driver as _driver
from . import compile_pool
from .debug import executor_debug_str
from .first_run import stand_ins
from .profiled import run as _profiled_run


def _wrap(array, device):
    return NDArray(array, device)


def copy_into(dst, src):
    """Copy ``src`` (NDArray, numpy array or scalar) into the device array
    ``dst`` without reallocating it."""
    if hasattr(src, "_data"):
        src = src._data
    if isinstance(dst, np.ndarray):
        if not isinstance(src, np.ndarray) and hasattr(src, "copy_to_host"):
            src = src.copy_to_host()
        np.copyto(dst, src, casting="unsafe")
    else:
        if isinstance(src, np.ndarray) or not hasattr(src, "copy_to_host"):
            src = np.ascontiguousarray(np.broadcast_to(np.asarray(src, dtype=dst.dtype), dst.shape))
        dst.copy_to_device(src)


def _dispatch_bound(steps):
    """Whether Python-level dispatch (about 1 us a kernel) matters against the
    work: a native driver pays for itself on graphs of many small kernels,
    while compiling one takes seconds for a few hundred steps (30 s for
    ResNet-18), time that kernels moving megabytes never win back."""
    if len(steps) > config.driver_max_steps():
        return False
    touched = sum(v.nbytes for s in steps for v in s.views if hasattr(v, "nbytes"))
    return touched <= config.driver_max_bytes_per_step() * len(steps)


def _first_calls(steps):
    """The (kernel, arguments) a first run of ``steps`` makes from Python:
    serial twins in place of the parallel kernels not compiled yet, and
    fallbacks (``Launch.fallback``) in place of the kernels that have one."""
    calls = [(s.fn, s.args) for s in steps]
    for i, call in stand_ins(steps):
        calls[i] = call
    return calls


class Executor:
    """Created by ``nbdl.bind`` / ``nbdl.simple_bind`` (or ``Symbol.bind``)."""

    def __init__(self, symbol, device, bg, sched, arg_arrays, grad_arrays, aux_arrays,
                 grad_req, head_grad_arrays, rebind):
        self._rebind = rebind           # bind.rebind, which made this executor (reshape)
        self._symbol = symbol
        self._device = device
        self._bg = bg
        self._sched = sched
        self.arg_arrays = arg_arrays
        self.grad_arrays = grad_arrays
        self.aux_arrays = aux_arrays
        self._grad_req = grad_req
        self._head_grads = head_grad_arrays
        self._arg_names = [n.name for n in bg.arg_nodes]
        self._aux_names = [n.name for n in bg.aux_nodes]
        self.outputs = [_wrap(sched.arrays[sched.ids[h]], device) for h in bg.heads]
        self._output_names = symbol.list_outputs()
        self._runners = {}
        self._pool_started = False
        self._has_backward = bool(sched.backward)
        self._unread = None
        self._segments = None
        self._plain_graph = None    # binds the graph as written (set when it was fused)
        self._plain = None

    def __del__(self):
        # The gradient graph is this executor's alone, and a node keeps its
        # output entries, which point back at it: a reference cycle a node,
        # left to a full collection of the cyclic collector (a 20k-node chain's
        # bind left 360,000 objects, and collecting them cost 0.15 s a bind).
        # Dropping the entries frees the graph with the executor; a node
        # asked for them again makes equal ones.
        bg = self.__dict__.get("_bg")
        if bg is not None:
            for n in bg.bwd_nodes:
                n._outs = None
            for e in bg.head_grads:
                e.node._outs = None

    # -- views by name ----------------------------------------------------
    @property
    def arg_dict(self):
        return dict(zip(self._arg_names, self.arg_arrays))

    @property
    def grad_dict(self):
        return {n: g for n, g in zip(self._arg_names, self.grad_arrays) if g is not None}

    @property
    def aux_dict(self):
        return dict(zip(self._aux_names, self.aux_arrays))

    @property
    def output_dict(self):
        return dict(zip(self._output_names, self.outputs))

    @property
    def memory_plan(self):
        """The planner's ``MemoryPlan`` (offsets, live ranges, stats)."""
        return self._sched.plan

    @property
    def symbol(self):
        return self._symbol

    @property
    def device(self):
        return self._device

    # ``_ctx``: MXNet 1.x's attribute, which its own tests read
    ctx = context = _ctx = device

    # -- running ----------------------------------------------------------
    def _steps(self, which):
        """The steps of a runner: ``'fwd_train'``, ``'fwd_infer'``,
        ``'backward'``, or ``('backward', k)``, the k-th part of backward
        between two gradient-ready points (``backward(grad_ready=...)``)."""
        if isinstance(which, tuple):
            start, stop, _ = self._grad_segments()[which[1]]
            return self._sched.backward[start:stop]
        return {"fwd_train": self._sched.fwd_train, "fwd_infer": self._sched.fwd_infer,
                "backward": self._sched.backward}[which]

    def _runner(self, which):
        r = self._runners.get(which)
        if r is None:
            steps = self._steps(which)
            r = self._compile(steps, which)
            self._runners[which] = r
            calls = getattr(r, "calls", None) or [(s.fn, s.args) for s in steps]
            if not self._pool_started and self._device.device_type == "cpu":
                self._pool_started = True
                ahead = calls
                training = which == "fwd_train" and self._has_backward
                if training:
                    ahead = calls + _first_calls(self._sched.backward)
                compile_pool.start(ahead, training=training)
            note = compile_log.announce(calls, self._describe(which))
            if note.count:
                def first():
                    r()
                    note.done()
                first.boxed_arrays, first.native = r.boxed_arrays, r.native
                return first
        return r

    def _describe(self, which):
        outs = self._output_names
        if isinstance(which, tuple):
            what = f"backward, part {which[1] + 1} of {len(self._grad_segments())}"
        else:
            what = {"fwd_train": "forward, training", "fwd_infer": "forward",
                    "backward": "backward"}[which]
        return f"the graph of {outs[0] if outs else 'an empty symbol'!r} ({what})"

    def _compile(self, steps, which):
        mode = config.driver_mode()
        native = None
        if (self._device.device_type == "cpu" and mode != "off"
                and len(steps) >= config.driver_min_steps() and _dispatch_bound(steps)):
            sched = self._sched
            used = []
            planned = sched.plan.offsets
            for s in steps:
                for i in s.ids:
                    if i not in planned and i not in used:
                        used.append(i)
            native = _driver.Native(steps, used, sched.arena, [sched.arrays[i] for i in used],
                                    lambda i: (planned[i], sched.arrays[i].dtype))
            if not native.ok:
                native = None
            elif mode == "now" or native.cached():
                return native.build()
        calls = [(s.fn, s.args) for s in steps]
        later = stand_ins(steps) if self._device.device_type == "cpu" else []
        if later:
            return self._serial_runner(steps, calls, later, native, which)
        return self._python_runner(steps, calls, native, which)

    def _serial_runner(self, steps, calls, later, native, which):
        """The Python loop with, for the steps in ``later`` (``stand_ins``),
        the serial twins of the parallel kernels not compiled yet or the
        steps' fallbacks; after ``NBDL_PARALLEL_AFTER_RUNS`` runs those
        steps' kernels are compiled in the background and the loop with them
        takes this one's place."""
        now = list(calls)
        for i, call in later:
            now[i] = call
        later = [i for i, _ in later]
        left = [config.parallel_after_runs()]
        run = self._python_runner(steps, now, None, which)

        def upgrade():
            for i in later:
                fn, args = calls[i]
                fn.compile(compile_log.lookup(fn, args)[0])
            self._swap_runner(which, counted, self._python_runner(steps, calls, native, which))

        def counted():
            run()
            left[0] -= 1
            if left[0] == 0:
                compile_log.info("compiling %d parallel (or fallen-back) kernels for %s in the "
                                 "background "
                                 "(NBDL_PARALLEL_AFTER_RUNS=0 compiles them before the first "
                                 "run)", len(later), self._describe(which))
                compile_log.in_background(upgrade, "nbdl-parallel")
        counted.boxed_arrays, counted.native, counted.calls = run.boxed_arrays, False, now
        return counted

    def _python_runner(self, steps, calls, native=None, which=None):
        """The schedule as a Python loop over ``calls``.  With ``native`` (a
        driver that is not compiled yet), the loop counts its runs and, after
        ``NBDL_DRIVER_AFTER_RUNS``, compiles the driver in a background thread
        and puts it in its own place when ready."""
        if native is None:
            def run():
                for fn, args in calls:
                    fn(*args)
        else:
            left = [config.driver_after_runs()]

            def run():
                for fn, args in calls:
                    fn(*args)
                if left[0] > 0:
                    left[0] -= 1
                    if left[0] == 0:
                        native.build_in_background(
                            lambda fn: self._swap_runner(which, run, fn), len(steps))
        # Arrays handed from Python to compiled code per run: Numba wraps each
        # in an NRT meminfo (an allocation of a small header, not of data).
        run.boxed_arrays = sum(len(s.views) for s in steps)
        run.native = False
        run.calls = calls
        return run

    def _swap_runner(self, which, old, new):
        # Only where the Python loop is still in place (a monitor callback or a
        # reshape may have replaced it meanwhile).
        if self._runners.get(which) is old:
            self._runners[which] = new

    def forward(self, is_train=False, **kwargs):
        """Copy ``kwargs`` (name=array) into the bound argument arrays, run
        the forward pass and return ``outputs``.

        Parameters
        ----------
        is_train : bool
            Run the training variant of the ops (dropout, batch statistics).
        **kwargs : NDArray or numpy array
            New values of arguments, by name.

        While ``nbdl.profiler`` records symbolic ops the pass runs as a
        Python loop over its steps (not the native driver) and every step
        is timed (``nbdl.executor.profiled``)."""
        if kwargs:
            arg = self.arg_dict
            for k, v in kwargs.items():
                if k not in arg:
                    raise BindError(f"forward: {k!r} is not an argument of the symbol "
                                    f"(arguments: {', '.join(self._arg_names)})")
                dst = arg[k]
                src = v.asnumpy() if hasattr(v, "asnumpy") else np.asarray(v)
                if tuple(src.shape) != tuple(dst.shape):
                    raise ShapeError(f"forward: argument {k!r} is bound with shape {dst.shape} "
                                     f"but got an array of shape {tuple(src.shape)}; use "
                                     f"executor.reshape({k}={tuple(src.shape)}) to change it "
                                     f"(with allow_up_sizing=True if it grows)")
            for k, v in kwargs.items():
                copy_into(arg[k]._data, v)
        if is_train and self._plain_graph is not None:
            return self._forward_plain()
        which = "fwd_train" if is_train else "fwd_infer"
        if _prof.executor:
            _profiled_run(self, which, self._sched.fwd_train if is_train else self._sched.fwd_infer)
        else:
            self._runner(which)()
        return self.outputs

    def _forward_plain(self):
        """A training forward of an executor whose graph was rewritten for
        inference (``nbdl.graph.fuse``): the graph as written, bound once on
        first use to the same arrays, runs it (batch statistics, dropout),
        and its outputs are copied into this executor's."""
        if self._plain is None:
            self._plain = self._plain_graph()
        for mine, theirs in zip(self.outputs, self._plain.forward(is_train=True)):
            copy_into(mine._data, theirs._data)
        return self.outputs

    def backward(self, out_grads=None, is_train=True, grad_ready=None):
        """Run the backward pass.

        Parameters
        ----------
        out_grads : NDArray or list of NDArray, optional
            The head gradients, one per output (None: ones, as for a loss
            output).
        is_train : bool, default True
            Accepted for MXNet compatibility (backward runs the training
            variant).
        grad_ready : callable, optional
            ``grad_ready(names)`` is called during the pass, right after the
            step that writes the last value of the gradients of the
            arguments ``names`` (a list), so their reduction can start
            while the rest of backward runs (nbdl's distributed gradient
            buckets).  Every argument with a gradient is named once per
            pass.  The pass then runs as several runners split at those
            steps; with a monitor callback or the profiler on, the names are
            all given at the end.
        """
        if not self._has_backward:
            if grad_ready is not None:
                grad_ready(list(self._sched.grad_bound))
            return      # no gradient arrays (grad_req 'null'): nothing to do, as in MXNet
        if out_grads is None:
            for h in self._head_grads:
                copy_into(h, 1)
        else:
            if not isinstance(out_grads, (list, tuple)):
                out_grads = [out_grads]
            if len(out_grads) != len(self._head_grads):
                raise BindError(f"backward: got {len(out_grads)} head gradients for "
                                f"{len(self._head_grads)} outputs")
            skip = set()
            for i, (h, g) in enumerate(zip(self._head_grads, out_grads)):
                if tuple(g.shape) != tuple(h.shape):
                    if i in self._unread_heads():
                        skip.add(i)   # never read (shape_array, argmax): MXNet ignores it too
                        continue
                    raise ShapeError(f"backward: head gradient {i} has shape {tuple(g.shape)}, "
                                     f"output {self._output_names[i]!r} has shape {tuple(h.shape)}")
            for i, (h, g) in enumerate(zip(self._head_grads, out_grads)):
                if i not in skip:
                    copy_into(h, g)
        if _prof.executor:
            _profiled_run(self, "backward", self._sched.backward)
        elif grad_ready is not None and not getattr(self._runners.get("backward"), "monitor",
                                                     False):
            for k, (_, _, names) in enumerate(self._grad_segments()):
                self._runner(("backward", k))()
                if names:
                    grad_ready(names)
            return
        else:
            self._runner("backward")()
        if grad_ready is not None:
            grad_ready(list(self._sched.grad_bound))

    def _grad_segments(self):
        """``[(start, stop, names)]``: the backward steps cut after each step
        that writes arguments' gradients (``names``: those arguments), in
        order; the last part may name none."""
        if self._segments is None:
            bwd = self._sched.backward
            where = {id(s.node): k for k, s in enumerate(bwd)}
            ready = {}
            for name, e in self._sched.grad_bound.items():
                # a gradient no backward step writes (none flows) is ready at once
                ready.setdefault(where.get(id(e[0]), -1), []).append(name)
            parts, start = [], 0
            for k in sorted(ready):
                if k < 0:
                    parts.append((0, 0, ready[k]))
                    continue
                parts.append((start, k + 1, ready[k]))
                start = k + 1
            if start < len(bwd):
                parts.append((start, len(bwd), []))
            self._segments = parts
        return self._segments

    def _unread_heads(self):
        """Indices of the head gradients no backward step reads (the outputs
        of ops without a gradient, such as shape_array or argmax)."""
        if self._unread is None:
            read = {e for n in self._bg.bwd_nodes for e in n.inputs}
            self._unread = {i for i, e in enumerate(self._bg.head_grads) if e not in read}
        return self._unread

    # -- parameters -------------------------------------------------------
    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy parameters into the bound arrays.  Everything is checked
        before anything is written, so an error leaves the executor as it was."""
        arg, aux = self.arg_dict, self.aux_dict
        plan = []
        for table, params, kind in ((arg, arg_params, "argument"), (aux, aux_params or {}, "aux state")):
            for name, value in params.items():
                if name not in table:
                    if allow_extra_params:
                        continue
                    raise BindError(f"copy_params_from: {name!r} is not an {kind} of the executor "
                                    f"(pass allow_extra_params=True to ignore it)")
                src = value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)
                if tuple(src.shape) != tuple(table[name].shape):
                    raise ShapeError(f"copy_params_from: {kind} {name!r} has shape "
                                     f"{tuple(table[name].shape)}, the given array {tuple(src.shape)}")
                plan.append((table[name], src))
        for dst, src in plan:
            copy_into(dst._data, src)

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for new argument shapes, sharing memory with this
        one (MXNet's ``Executor.reshape``; not to be run in parallel with it).

        Parameters
        ----------
        partial_shaping : bool
            Allow arrays not named in ``kwargs`` to change shape (else a
            ``BindError`` names them).
        allow_up_sizing : bool
            Allow arrays to grow: those get new zero arrays (else a
            ``BindError``); arrays whose shape is unchanged are the same
            NDArrays, smaller ones views of the first elements of the old.
        **kwargs : tuple of int
            New shapes, by argument (or aux state) name.
        """
        return self._rebind(self, kwargs, partial_shaping=partial_shaping,
                            allow_up_sizing=allow_up_sizing)

    # -- inspection -------------------------------------------------------
    def debug_str(self):
        """The bound graph and its memory as text (``nbdl.debug_str``): MXNet's
        listing (each node's op, inputs and attributes, the total allocated),
        then the memory plan: each arena buffer's offset, bytes, live steps
        and entries, and the planned bytes against the naive, lower-bound
        and MXNet-pool figures (and what inference passes fused)."""
        return executor_debug_str(self)

    def __str__(self):
        return self.debug_str()

    def __repr__(self):
        return f"<Executor {self._symbol!r} on {self._device}>"

    def set_monitor_callback(self, callback, monitor_all=False):
        """Call ``callback(name, NDArray)`` after every op with its outputs
        (and inputs when ``monitor_all``).  Monitoring runs the schedule from
        Python, one op at a time."""
        def make(steps):
            def run():
                for s in steps:
                    node = s.node
                    n_in = len(node.inputs)
                    if monitor_all:     # before the step, as MXNet: each input (and
                        # the variable feeding it by its own name first)
                        names = node.op.monitor_input_names(node.attrs)
                        for e, name, a in zip(node.inputs, names, s.arrays[:n_in]):
                            if e.node.is_variable:
                                callback(e.node.name, _wrap(a, self._device))
                            callback(f"{node.name}_{name}", _wrap(a, self._device))
                    s.fn(*s.args)
                    outs = s.arrays[n_in:n_in + node.num_outputs]
                    for name, a in zip(node.output_names(), outs):
                        callback(name, _wrap(a, self._device))
            run.monitor = True
            return run
        if callback is None:
            self._runners.clear()
            return
        self._runners = {"fwd_train": make(self._sched.fwd_train),
                         "fwd_infer": make(self._sched.fwd_infer),
                         "backward": make(self._sched.backward)}
