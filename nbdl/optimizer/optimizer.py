"""The Optimizer base class, the optimizer registry, and what the optimizers
share: per-parameter learning rates and weight decays, update counting,
multi-precision (float16 weights with float32 master copies), kernel
the update ops they run, and the plain-data form ``Trainer.save_states``
writes.

An optimizer updates weights in place from gradients and its own state
(MXNet 2.0's list form)::

    states = [opt.create_state_multi_precision(i, w) for i, w in enumerate(weights)]
    opt.update_multi_precision(indices, weights, grads, states)

Each subclass defines ``create_state(index, weight)`` and
``_step(index, weight, grad, state, lr, wd)``, which runs one update op of
the op table (``sgd_mom_update``, ``adam_update``, ...; ``nbdl/ops/optimizer.py``)
through ``self._update_op`` (``nbdl.ndarray.invoke``), with ``out=weight``.
A subclass may also define ``_step_mp(index, weight, grad, master, state,
lr, wd)`` for float16 weights under ``multi_precision`` (SGD and NAG run
MXNet's ``mp_*`` ops there); others update the float32 master copy with
``_step`` and copy it back.
"""
import math
import numbers
import warnings

import numpy as np

from ..errors import NbdlError
from ..ndarray.invoke import invoke as _invoke
from ..imperative.invoke_scalars import prepared as _prepared
from ..ndarray.ndarray import NDArray

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
# how many prepared update calls an optimizer keeps (Optimizer._update_op)
_PREPARED_MAX = 4096


class OptimizerError(NbdlError, ValueError):
    """Bad optimizer arguments, an unknown optimizer, or arrays an update
    cannot use."""


class LearningRateConflict(OptimizerError, UserWarning):
    """``set_learning_rate`` on an optimizer whose rate comes from its
    ``lr_scheduler``.  A ``UserWarning`` too, which is what MXNet 1.x raises
    there, so code catching that keeps working."""


_REGISTRY = {}


def register(klass):
    """Class decorator: make ``klass`` creatable by its lower-case name.

    Parameters
    ----------
    klass : type
        An ``Optimizer`` subclass.  Registering a second class under a name
        already taken replaces the first with a warning, as in MXNet.
    """
    if not (isinstance(klass, type) and issubclass(klass, Optimizer)):
        raise OptimizerError(f"register: expected an Optimizer subclass, got {klass!r}")
    name = klass.__name__.lower()
    old = _REGISTRY.get(name)
    if old is not None and old is not klass:
        warnings.warn(f"register: optimizer {klass.__module__}.{klass.__name__} replaces "
                      f"{old.__module__}.{old.__name__} under the name {name!r}", stacklevel=2)
    _REGISTRY[name] = klass
    return klass


def create(name, **kwargs):
    """An optimizer by registered name (``create('sgd', momentum=0.9)``);
    an Optimizer instance is returned as is.

    Parameters
    ----------
    name : str or Optimizer
        A registered name, case-insensitive (``'sgd'``, ``'Adam'``, ...).
    **kwargs
        The optimizer's constructor arguments.
    """
    if isinstance(name, Optimizer):
        if kwargs:
            raise OptimizerError(f"create: keyword arguments {sorted(kwargs)} given with an "
                                 f"Optimizer instance {type(name).__name__}")
        return name
    if not isinstance(name, str):
        raise OptimizerError(f"create: expected an optimizer name or instance, got {name!r}")
    klass = _REGISTRY.get(name.lower())
    if klass is None:
        raise OptimizerError(f"unknown optimizer {name!r}; registered: "
                             f"{', '.join(sorted(_REGISTRY))}")
    return klass(**kwargs)


def check_number(owner, name, value, low=None, high=None, low_open=False, high_open=False):
    """``value`` as a float after checking it is a number in the range."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or math.isnan(value):
        raise OptimizerError(f"{owner}: {name} must be a number, got {value!r}")
    if low is not None and (value < low or (low_open and value == low)):
        raise OptimizerError(f"{owner}: {name} must be {'>' if low_open else '>='} {low}, "
                             f"got {value}")
    if high is not None and (value > high or (high_open and value == high)):
        raise OptimizerError(f"{owner}: {name} must be {'<' if high_open else '<='} {high}, "
                             f"got {value}")
    return float(value)


def _optional_bound(owner, name, value):
    """None/0 (MXNet passes falsy bounds as 'off') -> -1, else a positive float."""
    if value is None or (isinstance(value, numbers.Real) and not isinstance(value, bool)
                         and value == 0):
        return -1.0
    return check_number(owner, name, value, 0.0, low_open=True)


class Optimizer:
    """Base class.  ``learning_rate`` defaults to the class's
    ``default_learning_rate`` (0.01 here, 0.001 for Adam, ...), or to the
    scheduler's ``base_lr`` when ``lr_scheduler`` is given (a
    ``learning_rate`` given too overrides the scheduler's, as in MXNet 2.0).  ``clip_gradient``:
    None or 0 means no clipping.  ``param_dict`` maps update indices to
    Parameters, whose ``lr_mult``/``wd_mult`` then apply."""

    # constructor arguments of a subclass that are also attributes; what
    # save_states writes besides the base's own arguments
    _hyper = ()
    # the rate when neither learning_rate nor lr_scheduler is given
    default_learning_rate = 0.01
    # the order of a float16 weight's multi-precision state: (master, state)
    # as MXNet's base class; SGD and NAG keep MXNet 1.x's (state, master)
    _master_first = True

    def __init__(self, learning_rate=None, wd=0.0, rescale_grad=1.0, clip_gradient=None,
                 lr_scheduler=None, multi_precision=False, param_dict=None, begin_num_update=0,
                 param_idx2name=None, sym=None, aggregate_num=None, use_fused_step=None,
                 **kwargs):
        owner = type(self).__name__
        if kwargs:
            raise OptimizerError(f"{owner}: unknown arguments {sorted(kwargs)}")
        # aggregate_num / use_fused_step choose between MXNet's kernel variants;
        # nbdl always runs one fused kernel per parameter, so they change nothing.
        del aggregate_num, use_fused_step
        self.wd = check_number(owner, "wd", wd)
        self.rescale_grad = check_number(owner, "rescale_grad", rescale_grad)
        self.clip_gradient = clip_gradient
        self._clip = _optional_bound(owner, "clip_gradient", clip_gradient)
        self.multi_precision = bool(multi_precision)
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is not None and not callable(lr_scheduler):
            raise OptimizerError(f"{owner}: lr_scheduler must be an LRScheduler, got "
                                 f"{lr_scheduler!r}")
        if learning_rate is not None:
            self.lr = check_number(owner, "learning_rate", learning_rate, 0.0)
            if lr_scheduler is not None and getattr(lr_scheduler, "base_lr", None) != self.lr:
                if hasattr(lr_scheduler, "_set_base_lr"):      # an LRScheduler
                    lr_scheduler._set_base_lr(self.lr)
                elif hasattr(lr_scheduler, "base_lr"):
                    lr_scheduler.base_lr = self.lr
        elif lr_scheduler is not None and hasattr(lr_scheduler, "base_lr"):
            self.lr = float(lr_scheduler.base_lr)
        else:
            self.lr = float(self.default_learning_rate)
        if not isinstance(begin_num_update, numbers.Integral) or begin_num_update < 0:
            raise OptimizerError(f"{owner}: begin_num_update must be an integer >= 0, got "
                                 f"{begin_num_update!r}")
        self.begin_num_update = int(begin_num_update)
        self.num_update = self.begin_num_update
        self._index_update_count = {}
        # per-device update counts (MXNet's _all_index_update_counts): a weight
        # kept on several devices counts one update per step, not one per copy
        self._all_index_update_counts = {None: self._index_update_count}
        self._count_device = None
        self.param_dict = param_dict if param_dict else {}
        self.idx2name = dict(param_idx2name) if param_idx2name else {}
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.set_lr_mult({})
        self.set_wd_mult({})
        # (op, id(weight)) -> (call, data, attribute names): each parameter's
        # prepared update call (_update_op), checked against the arrays it holds
        self._prepared_calls = {}
        # index -> (weight, its data, grad, its data, state) last checked (_update_one)
        self._checked = {}

    # -- learning rate ------------------------------------------------------
    @property
    def learning_rate(self):
        """The rate of the next update (the scheduler's when there is one)."""
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr):
        """Set the rate used when there is no ``lr_scheduler``.

        Parameters
        ----------
        lr : float
            The new learning rate (>= 0).  With an ``lr_scheduler`` this raises
            ``LearningRateConflict`` (a ``UserWarning``, as MXNet 1.x raises).
        """
        if self.lr_scheduler is not None:
            raise LearningRateConflict(f"{type(self).__name__}: the learning rate comes from its "
                                       f"lr_scheduler; set_learning_rate({lr}) would be ignored")
        self.lr = check_number(type(self).__name__, "learning_rate", lr, 0.0)

    def set_lr_mult(self, args_lr_mult):
        """Per-parameter learning-rate multipliers, keyed by index or by
        name (names through ``param_idx2name``); ``__lr_mult__`` attributes
        of ``sym``'s variables come first."""
        self.lr_mult = self._mults_from_sym("__lr_mult__")
        self.lr_mult.update(self._check_mults("set_lr_mult", args_lr_mult))

    def set_wd_mult(self, args_wd_mult):
        """As ``set_lr_mult`` for weight decay.  As in MXNet, names given
        through ``param_idx2name`` that do not end in ``weight`` or ``gamma``
        (biases, BatchNorm's beta) get no weight decay unless set here."""
        self.wd_mult = {n: 0.0 for n in self.idx2name.values()
                        if not str(n).endswith(("weight", "gamma"))}
        self.wd_mult.update(self._mults_from_sym("__wd_mult__"))
        self.wd_mult.update(self._check_mults("set_wd_mult", args_wd_mult))

    def _mults_from_sym(self, key):
        if not self.sym_info:
            return {}
        attrs, names = self.sym_info
        return {n: float(attrs[n][key]) for n in names if key in attrs.get(n, {})}

    def _check_mults(self, what, mults):
        if not isinstance(mults, dict):
            raise OptimizerError(f"{type(self).__name__}.{what}: expected a dict, got {mults!r}")
        return {k: check_number(type(self).__name__, f"{what}[{k!r}]", v) for k, v in mults.items()}

    def _get_lrs(self, indices):
        lr = self.learning_rate
        return [lr * self._mult(index, "lr_mult", self.lr_mult) for index in indices]

    def _get_wds(self, indices):
        return [self.wd * self._mult(index, "wd_mult", self.wd_mult) for index in indices]

    def _get_lr(self, index):
        return self._get_lrs([index])[0]

    def _get_wd(self, index):
        return self._get_wds([index])[0]

    def _mult(self, index, attr, table):
        if index in self.param_dict:
            return float(getattr(self.param_dict[index], attr))
        if index in table:
            return table[index]
        if index in self.idx2name:
            return table.get(self.idx2name[index], 1.0)
        return 1.0

    # -- counting -------------------------------------------------------------
    def _set_current_context(self, device):
        """Count the following updates for the copies on ``device`` (each
        device keeps its own update counts, as in MXNet 1.x, so that updating
        every device's copy of a weight counts one step).  A device seen for
        the first time starts from the counts of the default slot.

        Parameters
        ----------
        device : Device or None
            The device of the weights about to be updated (None: the default
            slot).
        """
        counts = self._all_index_update_counts
        counts[self._count_device] = self._index_update_count   # kept even if reassigned
        if device not in counts:
            counts[device] = dict(counts[None])
        self._index_update_count = counts[device]
        self._count_device = device

    def _update_count(self, index):
        """Count one more update of ``index`` (or each of a list of them)."""
        for idx in index if isinstance(index, (list, tuple)) else [index]:
            count = self._index_update_count.get(idx, self.begin_num_update) + 1
            self._index_update_count[idx] = count
            self.num_update = max(count, self.num_update)

    # -- state ----------------------------------------------------------------
    def create_state(self, index, weight):
        """The state arrays for ``weight`` (None: this optimizer keeps none)."""
        return None

    def create_state_multi_precision(self, index, weight):
        """As ``create_state``; with ``multi_precision`` a float16 weight gets
        ``(float32 master copy, state of the master)`` (SGD and NAG: ``(state,
        master)``, as MXNet 1.x orders them).

        Parameters
        ----------
        index : int or str
            The parameter's key.
        weight : NDArray
            The weight the state is for.
        """
        if np.dtype(weight.dtype) == np.float16:
            if not self.multi_precision:
                raise OptimizerError(f"{type(self).__name__}: parameter {index!r} is float16; "
                                     f"the update kernels compute in float32/float64, so pass "
                                     f"multi_precision=True to keep a float32 master copy")
            master = _on_device(weight.asnumpy().astype(np.float32), weight.device)
            inner = self.create_state(index, master)
            return (master, inner) if self._master_first else (inner, master)
        return self.create_state(index, weight)

    # -- updates --------------------------------------------------------------
    def update(self, indices, weights, grads, states):
        """Update ``weights`` in place: lists of indices, weights, gradients and
        states (single values are accepted too)."""
        for index, weight, grad, state in _zip_args(indices, weights, grads, states):
            self._update_one(index, weight, grad, state)

    def _update_one(self, index, weight, grad, state):
        # the arrays are checked when they change (the update op's own shape and
        # dtype rules stand behind every call); the same ones again pass
        seen = self._checked.get(index)
        if seen is None or seen[0] is not weight or seen[1] is not weight._data \
                or seen[2] is not grad or seen[3] is not grad._data or seen[4] is not state:
            self._check_arrays(index, weight, grad, state)
            if len(self._checked) >= _PREPARED_MAX:
                self._checked.clear()
            self._checked[index] = (weight, weight._data, grad, grad._data, state)
        self._update_count(index)
        self._step(index, weight, grad, state, self._get_lr(index), self._get_wd(index))

    def update_multi_precision(self, indices, weights, grads, states):
        """``update``, going through the float32 master copy for float16
        weights when ``multi_precision`` is on.

        Parameters
        ----------
        indices : int or list of int
            One index (MXNet 1.x) or a list of them (multi-tensor form).
        weights, grads : NDArray or list of NDArray
        states : state or list of states
            What ``create_state_multi_precision`` returned for each weight.
        """
        # a subclass that overrides ``update`` gets every call through it, one
        # parameter at a time with a single index, as MXNet 1.x calls it
        direct = type(self).update is Optimizer.update
        for index, weight, grad, state in _zip_args(indices, weights, grads, states):
            if self.multi_precision and np.dtype(weight.dtype) == np.float16:
                if not (isinstance(state, (tuple, list)) and len(state) == 2):
                    raise OptimizerError(f"{type(self).__name__}: parameter {index!r} is float16 "
                                         f"but its state was not made by "
                                         f"create_state_multi_precision")
                master, inner = state if self._master_first else state[::-1]
                if direct and self._step_mp is not None:
                    self._update_count(index)
                    self._step_mp(index, weight, grad, master, inner, self._get_lr(index),
                                  self._get_wd(index))
                    continue
                grad32 = _on_device(grad.asnumpy().astype(np.float32), grad.device)
                if direct:
                    self._update_one(index, master, grad32, inner)
                else:
                    self.update(index, master, grad32, inner)
                weight[...] = master.asnumpy().astype(np.float16)
            elif direct:
                self._update_one(index, weight, grad, state)
            else:
                self.update(index, weight, grad, state)

    # (index, float16 weight, grad, float32 master, its state, lr, wd) -> None, or None
    _step_mp = None
    # whether every state array has the weight's shape (GroupAdaGrad's history
    # has one value per row)
    _state_like_weight = True

    def _step(self, index, weight, grad, state, lr, wd):
        raise OptimizerError(f"{type(self).__name__} does not define _step(index, weight, grad, "
                             f"state, lr, wd); every Optimizer subclass must")

    def _check_arrays(self, index, weight, grad, state):
        owner = type(self).__name__
        for what, a in (("weight", weight), ("gradient", grad)):
            if not isinstance(a, NDArray):
                raise OptimizerError(f"{owner}: the {what} of parameter {index!r} must be an "
                                     f"NDArray, got {type(a).__name__}")
        w = weight._data
        dt = w.dtype
        if dt != _F32 and dt != _F64:
            raise OptimizerError(f"{owner}: parameter {index!r} is {dt}; the updates run on "
                                 f"float32 or float64 weights (float16 with multi_precision=True)")
        dkey = weight._device.key
        if state is None:
            others = (grad,)
        elif type(state) is NDArray:
            others = (grad, state)
        else:
            others = [grad] + _state_arrays(state)
        for k, a in enumerate(others):
            d = a._data
            shape_ok = tuple(d.shape) == tuple(w.shape) or (k > 0 and not self._state_like_weight)
            if not shape_ok or d.dtype != dt or a._device.key != dkey:
                what = "gradient" if k == 0 else "state"
                raise OptimizerError(f"{owner}: parameter {index!r}: the {what} is "
                                     f"{np.dtype(a.dtype)}{tuple(a.shape)} on {a.device} but the "
                                     f"weight is {dt}{tuple(weight.shape)} on {weight.device}")

    def _update_op(self, op, arrays, attrs):
        """Run the update op ``op`` (``nbdl/ops/optimizer.py``) eagerly on
        ``arrays`` (the weight first, then the gradient and the states, which
        the op updates in place) with attributes ``attrs``, writing the new
        weight into the weight (``out=weight``).  Returns the weight.

        Parameters
        ----------
        op : str
            The op's name (``'sgd_mom_update'``, ...).
        arrays : list of NDArray
            The op's inputs in its order.
        attrs : dict
            Its attributes; ``lr``/``wd`` and the other float ones are kernel
            scalars, so new values each step reuse the prepared kernel.

        The call is ``invoke(op, arrays, attrs, out=weight)``; on repeated
        calls with the same arrays it skips ``invoke``'s lookups and runs the
        prepared call (``invoke_scalars.prepared``) with the new values.
        """
        weight = arrays[0]
        key = (op, id(weight))
        prepared = self._prepared_calls
        got = prepared.get(key)
        if got is not None:
            call, data, names = got
            # the prepared call holds the arrays it was made for: reuse it while the
            # parameter's arrays and the attribute names are the same
            if len(data) == len(arrays) and names == tuple(attrs):
                for a, d in zip(arrays, data):
                    if a._data is not d:
                        break
                else:
                    call(attrs.values())
                    return weight
        got = _prepared(op, arrays, attrs, weight)
        if got is None:
            return _invoke(op, arrays, attrs, out=weight)
        if len(prepared) >= _PREPARED_MAX:
            prepared.clear()
        prepared[key] = got + (tuple(attrs),)
        got[0](attrs.values())
        return weight

    def _base_attrs(self, lr, wd):
        """``{lr, wd, rescale_grad, clip_gradient}`` as the update ops name them."""
        return {"lr": lr, "wd": wd, "rescale_grad": self.rescale_grad,
                "clip_gradient": self._clip}

    def _zeros(self, weight, n=1):
        """``n`` zero arrays like ``weight`` (one array, not a tuple, for n=1)."""
        out = tuple(_on_device(np.zeros(weight.shape, np.dtype(weight.dtype)), weight.device)
                    for _ in range(n))
        return out[0] if n == 1 else out

    # -- plain-data form (Trainer.save_states / load_states) -------------------
    def _extra_state(self):
        """Per-optimizer scalars beyond the counters (plain data)."""
        return {}

    def _set_extra_state(self, extra):
        if extra:
            raise OptimizerError(f"{type(self).__name__} keeps no extra state, got {sorted(extra)}")

    def __getstate__(self):
        # the prepared calls hold kernels and arrays: a copy prepares its own
        state = dict(self.__dict__)
        state["_prepared_calls"] = {}
        state["_checked"] = {}
        return state

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in _hyper_args(self).items())
        return f"{type(self).__name__}({args})"

    # MXNet's spellings: ``mx.optimizer.Optimizer.register`` / ``create_optimizer``
    register = staticmethod(register)
    create_optimizer = staticmethod(create)
    # MXNet 1.x's registry, name -> class (the same dict ``create`` reads)
    opt_registry = _REGISTRY


def _hyper_args(opt):
    args = {"learning_rate": opt.lr, "wd": opt.wd, "rescale_grad": opt.rescale_grad,
            "clip_gradient": opt.clip_gradient, "multi_precision": opt.multi_precision,
            "begin_num_update": opt.begin_num_update}
    args.update({k: getattr(opt, k) for k in type(opt)._hyper})
    return args


def get_config(opt):
    """Everything about ``opt`` except the state arrays, as JSON-ready data."""
    from ..lr_scheduler import LRScheduler, _state_of
    name = type(opt).__name__.lower()
    if opt.lr_scheduler is not None and not isinstance(opt.lr_scheduler, LRScheduler):
        raise OptimizerError(f"the lr_scheduler {opt.lr_scheduler!r} is not an LRScheduler, so "
                             f"its state cannot be saved; subclass nbdl.lr_scheduler.LRScheduler")
    if _REGISTRY.get(name) is not type(opt):
        raise OptimizerError(f"{type(opt).__name__} is not registered; decorate it with "
                             f"nbdl.optimizer.register so that its state can be saved")
    return {
        "name": name,
        "args": _hyper_args(opt),
        "lr_mult": [[k, v] for k, v in opt.lr_mult.items()],
        "wd_mult": [[k, v] for k, v in opt.wd_mult.items()],
        "idx2name": [[k, v] for k, v in opt.idx2name.items()],
        "num_update": opt.num_update,
        "index_update_count": [[k, v] for k, v in opt._index_update_count.items()],
        "extra": opt._extra_state(),
        "lr_scheduler": None if opt.lr_scheduler is None else list(_state_of(opt.lr_scheduler)),
    }


def from_config(cfg, param_dict=None):
    """A new optimizer rebuilt from ``get_config``'s data (raises an NbdlError
    on anything malformed)."""
    from ..lr_scheduler import _from_state
    try:
        klass = _REGISTRY.get(cfg["name"])
        if klass is None:
            raise OptimizerError(f"unknown optimizer {cfg['name']!r} in saved state")
        opt = klass(param_dict=param_dict, **cfg["args"])
        opt.idx2name = {_key(k): v for k, v in cfg["idx2name"]}
        opt.lr_mult = {_key(k): float(v) for k, v in cfg["lr_mult"]}
        opt.wd_mult = {_key(k): float(v) for k, v in cfg["wd_mult"]}
        opt.num_update = int(cfg["num_update"])
        opt._index_update_count = {_key(k): int(v) for k, v in cfg["index_update_count"]}
        opt._all_index_update_counts = {None: opt._index_update_count}
        opt._count_device = None
        opt._set_extra_state(cfg["extra"])
        if cfg["lr_scheduler"] is not None:
            key, state = cfg["lr_scheduler"]
            opt.lr_scheduler = _from_state(key, state)
    except NbdlError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise OptimizerError(f"malformed optimizer state ({type(e).__name__}: {e})") from None
    return opt


def _key(k):
    if isinstance(k, (int, str)) and not isinstance(k, bool):
        return k
    raise OptimizerError(f"malformed parameter key {k!r} in saved optimizer state")


def state_structure(state):
    """(structure, arrays) of a state: structure is None, "a" (one array) or a
    list of structures, so a state can be written as arrays plus JSON."""
    from ..ndarray import NDArray
    if state is None:
        return None, []
    if isinstance(state, NDArray):
        return "a", [state]
    if isinstance(state, (tuple, list)):
        structure, arrays = [], []
        for s in state:
            st, arr = state_structure(s)
            structure.append(st)
            arrays.extend(arr)
        return structure, arrays
    raise OptimizerError(f"optimizer state must be NDArrays, tuples of them or None, "
                         f"got {type(state).__name__}")


def _state_arrays(state):
    return state_structure(state)[1]


def _on_device(host, device):
    from ..ndarray import NDArray
    return NDArray(device.from_numpy(np.ascontiguousarray(host)), device)


def _zip_args(indices, weights, grads, states):
    if not isinstance(indices, (list, tuple)):
        indices, weights, grads, states = [indices], [weights], [grads], [states]
    if not isinstance(weights, (list, tuple)) or not isinstance(grads, (list, tuple)) \
            or not isinstance(states, (list, tuple)):
        raise OptimizerError("update: with a list of indices, weights, grads and states must be "
                             "lists too")
    if not len(indices) == len(weights) == len(grads) == len(states):
        raise OptimizerError(f"update: {len(indices)} indices, {len(weights)} weights, "
                             f"{len(grads)} gradients and {len(states)} states")
    return zip(indices, weights, grads, states)
