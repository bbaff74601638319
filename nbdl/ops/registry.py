"""The op table: one ``OpDef`` per operator, rules only.

An ``OpDef`` says what an op is (names, attributes), how shapes and dtypes
flow through it, how its gradient is built from other registered ops, which
outputs may alias which inputs, how much scratch it needs, and where its
kernels are.  Kernels live in ``nbdl.kernels.<device>.<family>`` and are
reached through ``prepare`` functions named by dotted path, so CUDA code is
imported only when a GPU is used.

Kernel calling convention (the contract every ``prepare`` keeps)::

    launch = prepare(call)          # once, at bind time (or per eager call)
    launch.fn(*arrays, *launch.scalars)

``arrays`` are the op's inputs, then outputs, then temp buffers, each a
contiguous array viewed with the shape ``launch.views[i]`` asks for (``None``:
its own shape).  A kernel writes only into its outputs and temps, never
allocates, and honours ``call.req[i]`` for each output (``REQ_WRITE`` /
``REQ_INPLACE`` overwrite, ``REQ_ADD`` accumulates; ``REQ_ADD`` is only ever
passed to ops with ``supports_add=True``).
"""
import dataclasses
import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from ..errors import DTypeError, GraphError, ShapeError, UnknownOpError
from .attrs import Attr, parse_attrs

REQ_NULL, REQ_WRITE, REQ_INPLACE, REQ_ADD = 0, 1, 2, 3
REQ_NAMES = {"null": REQ_NULL, "write": REQ_WRITE, "inplace": REQ_INPLACE, "add": REQ_ADD}


@dataclass
class Call:
    """Everything a ``prepare`` function may look at: parsed attributes,
    input/output shapes and dtypes, the device, the write request of each
    output and whether the graph runs in training mode."""
    op: "OpDef"
    attrs: dict
    in_shapes: list
    in_dtypes: list
    out_shapes: list
    out_dtypes: list
    device: Any = None
    req: list = None
    is_train: bool = False
    node_name: str = ""
    node: Any = None        # the IR node of a bound graph's call (None for an eager call)
    states: dict = None     # per-node state shared by one schedule's calls (stateful ops:
                            # Custom's operator instance, made by its forward and used by its
                            # backward); None for an eager call

    def __post_init__(self):
        if self.req is None:
            self.req = [REQ_WRITE] * len(self.out_shapes)

    def where(self):
        return f"{self.op.name}" + (f" (node {self.node_name!r})" if self.node_name else "")


@dataclass
class Launch:
    """A prepared kernel call: ``fn(*arrays, *scalars)``.

    ``views`` gives a shape per array of the call (inputs, outputs, temps;
    None: its own shape).  ``args`` (None: every array, in order) picks the
    arrays ``fn`` takes, after the views: an index into that list (it may
    repeat), or ``(index, shape)`` for the first ``prod(shape)`` elements of
    that array viewed as ``shape`` -- ``(0, (0,))`` is an empty 1-D array of
    the first input's dtype, the placeholder a kernel with an optional array
    (a bias) gets when the op has none, so that one compiled kernel serves
    both instead of a thin wrapper per variant (a wrapper is a compilation of
    its own, and it recompiles what it calls).

    ``fallback`` (optional) is another ``Launch`` over the same arrays (its
    own ``args`` and ``scalars``, the same ``views``) that computes the same
    outputs with kernels a first run compiles anyway: a bound graph runs it
    while ``fn`` is neither compiled nor cached, and ``fn`` is compiled in
    the background after ``NBDL_PARALLEL_AFTER_RUNS`` runs, as parallel
    kernels are (the convolution's Winograd kernels, seconds to compile,
    fall back to im2col + GEMM).  Eager calls run ``fn``."""
    fn: Callable
    scalars: tuple = ()
    views: Optional[list] = None  # shape per array argument (inputs, outputs, temps) or None
    args: Optional[tuple] = None  # which arrays fn takes (see above), or None: all
    fallback: Optional["Launch"] = None   # see above


def pick_args(args, arrays):
    """The arrays a kernel takes: ``arrays`` (the call's, viewed) picked by
    ``Launch.args`` (None: all of them)."""
    if args is None:
        return arrays
    out = []
    for a in args:
        if type(a) is int:
            out.append(arrays[a])
        else:
            i, shape = a
            n = 1
            for d in shape:
                n *= d
            out.append(arrays[i].reshape(-1)[:n].reshape(shape))
    return out


@dataclass
class Recompute:
    """An op's ``recompute`` rule's answer: run ``op`` with ``attrs`` on
    ``inputs`` (entries of the forward graph: the node's inputs, or outputs of
    its own that backward keeps anyway, such as a mask) and its output ``k``
    is bitwise the node's output ``outputs[k]``."""
    op: str
    inputs: list
    attrs: dict
    outputs: list


_SERIAL_TWINS = {}


def declare_serial_twin(parallel, make_serial):
    """Declare that ``make_serial()`` returns a serial kernel taking exactly
    the arguments of the ``parallel=True`` kernel ``parallel`` and computing
    the same result (scratch included: the serial twin must work in the
    parallel variant's temps).  An executor runs the twin until the parallel
    kernel is compiled (``NBDL_PARALLEL_AFTER_RUNS``), so that compiling a
    parallel region never delays a first call.

    Parameters
    ----------
    parallel : callable
        The parallel kernel a ``prepare`` returns in its ``Launch``.
    make_serial : callable
        ``make_serial() -> kernel``, called when the twin is first needed.
    """
    _SERIAL_TWINS[parallel] = make_serial


def serial_twin(fn):
    """The serial twin declared for kernel ``fn``, or None."""
    make = _SERIAL_TWINS.get(fn)
    return make() if make is not None else None


@dataclass
class OpDef:
    name: str
    input_names: Any = ("data",)          # list, or f(attrs) -> list for variadic ops
    aux_names: tuple = ()
    num_outputs: Any = 1                  # int or f(attrs) -> int
    num_visible_outputs: Any = None       # int, f(attrs), or None = all
    output_names: Any = None              # list, f(attrs) -> list, or None = "output"
    attrs: dict = field(default_factory=dict)
    infer_shape: Callable = None          # (attrs, in_shapes, out_shapes) -> (in_shapes, out_shapes)
    infer_type: Callable = None           # (attrs, in_dtypes, out_dtypes) -> (in_dtypes, out_dtypes)
    gradient: Callable = None             # (node, out_grads) -> [Entry | None] per input
    inplace: Callable = None              # attrs -> [(input_index, output_index)]
    temp: Any = None                      # call -> [(shape, dtype)], or per device
                                          # {"cpu": "module:fn", ...} like kernels
    kernels: dict = field(default_factory=dict)  # {"cpu": "module:prepare_fn", "cuda": ...}
    supports_add: bool = False            # kernels honour REQ_ADD
    train_aware: bool = False             # output depends on is_train (Dropout, BatchNorm)
    mutates_aux: bool = False             # writes its aux inputs (BatchNorm moving stats)
    # indices of inputs the kernel writes in place (optimizer states; tuple or
    # f(attrs)); a bound graph must feed them from variables
    mutates: Any = ()
    # attributes that reach the kernel only as the last scalars of its Launch,
    # in this order: an eager call's cache ignores their values (docs/ops.md)
    scalar_attrs: tuple = ()
    loss_output: bool = False             # backward ignores the head gradient (SoftmaxOutput)
    key_var_num_args: str = None          # attribute holding the number of variadic inputs
    shape_inputs: Any = ()                # inputs whose shape, not data, the kernel uses
                                          # (tuple or f(attrs)); the planner lets them die early
    dtypes: tuple = None                  # compute dtypes the kernels support (None: float32/64)
    # float16 arrays computed by the float32 kernels through float32 mirrors in
    # temp space, converted at the edges (``half_launch``; docs/ops.md)
    half_mirrors: bool = False
    int_inputs: tuple = ()                # inputs that may also be integer (labels, indices)
    hidden: bool = False                  # internal op (_backward_*): not exported to nd/sym namespaces
    # How a memory budget may make this op's outputs again during backward
    # (nbdl/executor/recompute.py): None re-runs the node, where the op draws
    # no random numbers and writes neither aux states nor inputs (``train_aware``,
    # ``mutates_aux`` and ``mutates`` ops are then kept instead); False never
    # (random ops); or f(node) -> ``Recompute`` or None, a call on kept entries
    # that gives bitwise the outputs the forward wrote (BatchNorm from its saved
    # statistics, Dropout from its mask).
    recompute: Any = None
    # (attrs, in_shapes, out_shapes) -> floating-point operations of one call,
    # what recomputing it costs; None: one per element read or written
    flops: Callable = None
    eager_only: bool = False              # output shape depends on values: no kernels (docs/ops.md)
    # the attribute (``"shape"``) whose 0 dims MXNet 1.x reads as unknown in a
    # graph outside NumPy-shape mode (fills, samplers: ``zeros(shape=(0, H))``);
    # graph inference hands the shape rule ``-1`` for them (ops/partial_shape.py)
    legacy_unknown_dims: str = None
    # input name -> the ``__init__`` (initializer JSON) that a variable feeding that input
    # gets when composed without one (MXNet's FSetInputVarAttrOnCompose: prelu gamma 0.25)
    input_var_init: dict = field(default_factory=dict)
    # MXNet registers the op without input names (no FListInputNames): an
    # executor's monitor calls its inputs input0, input1, ... (act_input0)
    unnamed_inputs: bool = False
    # f(parsed) -> parsed: keys outside ``attrs`` are kept as strings and the
    # parsed dict goes through f (Custom: makes the CustomOpProp from them)
    extra_attrs: Callable = None
    doc: str = ""
    _prepared: dict = field(default_factory=dict, repr=False)     # device -> prepare
    _temp_rules: dict = field(default_factory=dict, repr=False)   # device -> temp rule

    # -- names ------------------------------------------------------------
    def list_inputs(self, attrs):
        names = self.input_names(attrs) if callable(self.input_names) else self.input_names
        return list(names)

    def monitor_input_names(self, attrs):
        """The names an executor's monitor gives the inputs (MXNet's)."""
        names = self.list_inputs(attrs) + self.list_aux(attrs)
        return [f"input{i}" for i in range(len(names))] if self.unnamed_inputs else names

    def list_aux(self, attrs):
        return list(self.aux_names(attrs) if callable(self.aux_names) else self.aux_names)

    def n_outputs(self, attrs):
        return self.num_outputs(attrs) if callable(self.num_outputs) else self.num_outputs

    def n_visible(self, attrs):
        v = self.num_visible_outputs
        if v is None:
            return self.n_outputs(attrs)
        return v(attrs) if callable(v) else v

    def list_outputs(self, attrs):
        n = self.n_outputs(attrs)
        names = self.output_names
        if names is None:
            return ["output"] if n == 1 else [f"output{i}" for i in range(n)]
        names = names(attrs) if callable(names) else names
        return list(names)

    def list_mutates(self, attrs):
        v = self.mutates
        return tuple(v(attrs) if callable(v) else v)

    def list_shape_inputs(self, attrs):
        v = self.shape_inputs
        return tuple(v(attrs) if callable(v) else v)

    def positional_attrs(self, where, values, kwargs):
        """The attributes given by position after the inputs (in the op's
        attribute order; None values left out), checked against ``kwargs``.

        Parameters
        ----------
        where : str
            The caller's name for messages.
        values : sequence
            The positional values.
        kwargs : dict
            The keyword arguments of the same call.
        """
        names = [k for k in self.attrs if k != self.key_var_num_args]
        if len(values) > len(names):
            raise GraphError(f"{where}: got {len(values)} positional attributes, the op has "
                             f"{len(names)} ({', '.join(names) or 'none'})")
        for k in names[:len(values)]:
            if k in kwargs:
                raise GraphError(f"{where}: attribute {k!r} given by position and by keyword")
        return {k: v for k, v in zip(names, values) if v is not None}

    def parse_attrs(self, raw, node_name=None):
        if self.extra_attrs is None:
            return parse_attrs(self.name, self.attrs, raw, node_name)
        parsed, strings = parse_attrs(self.name, self.attrs, raw, node_name, extra=True)
        return self.extra_attrs(parsed), strings

    # -- kernels ----------------------------------------------------------
    def _device_fn(self, loaded, what, paths, call, key_prefix=""):
        key = call.device.kernel_key if call.device is not None else "cpu"
        fn = loaded.get(key_prefix + key)
        if fn is None:
            path = paths.get(key)
            if path is None:
                raise DTypeError(f"{self.name}: no {key} {what} is registered")
            mod, _, attr = path.partition(":")
            fn = getattr(importlib.import_module(mod), attr)
            loaded[key_prefix + key] = fn
        return fn

    def temps(self, call):
        """``[(shape, dtype)]`` of the scratch buffers ``call``'s kernel takes:
        the op's ``temp`` rule, or, when the scratch depends on the device's
        kernels, the rule the device's kernel module names in ``temp``; for
        a float16 call of a ``half_mirrors`` op, the float32 call's scratch
        and then the float32 mirrors (``half_mirror_temps``)."""
        if self.half_mirrors and has_half(call):
            return self._temps(as_f32(call)) + half_mirror_temps(call)
        return self._temps(call)

    def _temps(self, call):
        t = self.temp
        if t is None:
            return []
        if isinstance(t, dict):
            t = self._device_fn(self._temp_rules, "temp rule", t, call)
        return t(call)

    def prepare(self, call):
        fn = self._device_fn(self._prepared, "kernel", self.kernels, call)
        allowed = self.dtypes if self.dtypes is not None else FLOAT_DTYPES
        if self.half_mirrors:
            allowed = tuple(allowed) + (HALF,)
        for i, dt in enumerate(list(call.in_dtypes) + list(call.out_dtypes)):
            if dt is not None and np.dtype(dt) not in allowed and not _dtype_exempt(self, call, i):
                names = (self.list_inputs(call.attrs) + self.list_aux(call.attrs)
                         + self.list_outputs(call.attrs))
                n_in = len(call.in_dtypes)
                arg = names[i] if len(names) == n_in + len(call.out_dtypes) else (
                    f"input {i}" if i < n_in else f"output {i - n_in}")
                raise DTypeError(
                    f"{call.where()}: {'argument' if i < n_in else 'output'} {arg!r} has dtype "
                    f"{np.dtype(dt)}, which the op does not support (supported: "
                    f"{', '.join(str(d) for d in allowed)}); "
                    f"input dtypes {[str(np.dtype(d)) for d in call.in_dtypes]}")
        if self.half_mirrors and has_half(call):
            copy = self._device_fn(self._prepared, "float16 conversion", _HALF_COPY, call,
                                   key_prefix="half_copy:")
            return half_launch(call, fn, copy, len(self._temps(as_f32(call))))
        return fn(call)


FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
HALF, F32 = np.dtype(np.float16), np.dtype(np.float32)


# -- float16 through the float32 kernels ---------------------------------------------------
#
# MXNet runs most non-elementwise ops on float16 storage with float32
# accumulation.  Rather than compiling a float16 variant of every kernel (and
# Numba's CPU target cannot type float16 arrays at all), an op with
# ``half_mirrors`` runs a float16 call through its float32 kernel: each
# float16 input is converted into a float32 mirror in temp space, the float32
# kernel runs on the mirrors, and each written float16 output (and mutated
# input) is rounded back once.  The conversion is the device's converting
# copy (``kernels/cpu/_half.host_copy``, ``kernels/cuda/_half.device_copy``).
# Kernel modules that wrap their own prepare functions do the same through
# ``kernels/shared/half_mirror.py``, built on these functions.

_HALF_COPY = {"cpu": "nbdl.kernels.cpu._half:host_copy",
              "cuda": "nbdl.kernels.cuda._half:device_copy"}


def has_half(call):
    """Whether any input or output of ``call`` is float16."""
    return any(d is not None and np.dtype(d) == HALF
               for d in list(call.in_dtypes) + list(call.out_dtypes))


def as_f32(call):
    """``call`` with every float16 dtype read as float32."""
    def f(ds):
        return [F32 if d is not None and np.dtype(d) == HALF else d for d in ds]
    return dataclasses.replace(call, in_dtypes=f(call.in_dtypes), out_dtypes=f(call.out_dtypes))


def _half_slots(call):
    ins = [i for i, d in enumerate(call.in_dtypes) if np.dtype(d) == HALF]
    outs = [i for i, d in enumerate(call.out_dtypes) if np.dtype(d) == HALF]
    return ins, outs


def half_mirror_temps(call):
    """One float32 mirror per float16 input and output of ``call``, inputs
    first (an input used only for its shape gets one too, never filled: a
    CPU kernel cannot take a float16 array)."""
    ins, outs = _half_slots(call)
    return ([(tuple(call.in_shapes[i]), F32) for i in ins]
            + [(tuple(call.out_shapes[i]), F32) for i in outs])


def half_launch(call, prepare32, copy, n_base):
    """A launcher for a float16 ``call``: float16 inputs converted into their
    float32 mirrors (the temps after the ``n_base`` scratch buffers of the
    float32 call), the float32 kernel of ``prepare32`` run on the mirrors,
    written outputs rounded back once (an ``REQ_ADD`` output's mirror starts
    from its value), float16 inputs the kernel mutates copied back.
    ``copy(dst, src)`` is the device's converting copy of same-size arrays."""
    c32 = as_f32(call)
    l32 = prepare32(c32)
    n_in, n_out = len(call.in_shapes), len(call.out_shapes)
    ins_h, outs_h = _half_slots(call)
    shape_only = set(call.op.list_shape_inputs(call.attrs))
    mutated = set(call.op.list_mutates(call.attrs))
    if call.op.mutates_aux:
        mutated |= set(range(len(call.op.list_inputs(call.attrs)), n_in))
    req = list(call.req)
    views = l32.views
    n_sc = len(l32.scalars)

    def fn(*given):
        # the arrays, then the float32 launch's scalars (kept as this launch's
        # own, so that a caller may replace them: ``OpDef.scalar_attrs``)
        arrays, scalars = (given[:-n_sc], given[-n_sc:]) if n_sc else (given, ())
        ins = list(arrays[:n_in])
        outs = list(arrays[n_in:n_in + n_out])
        temps = arrays[n_in + n_out:]
        mirrors = iter(temps[n_base:])
        back = []
        for i in ins_h:
            m = next(mirrors)
            if i not in shape_only:
                copy(m, ins[i])
            if i in mutated:
                back.append((ins[i], m))
            ins[i] = m
        for i in outs_h:
            m = next(mirrors)
            if req[i] == REQ_ADD:
                copy(m, outs[i])
            if req[i] != REQ_NULL:
                back.append((outs[i], m))
            outs[i] = m
        args = ins + outs + list(temps[:n_base])
        if views is not None:
            args = [a if v is None else a.reshape(v) for a, v in zip(args, views)]
        l32.fn(*pick_args(l32.args, args), *scalars)
        for dst, m in back:
            copy(dst, m)
    return Launch(fn, tuple(l32.scalars), views=None)


def _dtype_exempt(op, call, i):
    # Index-like inputs (labels, indices) may be integer even for float ops.
    return i < len(call.in_dtypes) and i in op.int_inputs


_TABLE = {}
_ALIASES = {}


def register(op: OpDef, aliases=()):
    if op.name in _TABLE:
        raise ValueError(f"op {op.name!r} registered twice")
    _TABLE[op.name] = op
    for a in aliases:
        _ALIASES[a] = op.name
    return op


def get_op(name):
    """Look an op up by MXNet name or alias; unknown names raise ``UnknownOpError``."""
    op = _TABLE.get(name) or _TABLE.get(_ALIASES.get(name, ""))
    if op is None:
        _load_all()
        op = _TABLE.get(name) or _TABLE.get(_ALIASES.get(name, ""))
    if op is None:
        raise UnknownOpError(f"unknown operator {name!r}: nbdl has no op of that name")
    return op


def list_ops(include_hidden=False):
    """The names of the registered ops, sorted.

    Parameters
    ----------
    include_hidden : bool
        Also the hidden ones (backward ops, internal helpers).
    """
    _load_all()
    return sorted(n for n, op in _TABLE.items() if include_hidden or not op.hidden)


def aliases():
    """{alias: op name} for every registered alias (``add_n``:
    ``ElementWiseSum``, ``flatten``: ``Flatten``...)."""
    _load_all()
    return dict(_ALIASES)


def _load_all():
    from . import _families  # noqa: F401  (registers every family)


def op_namespace(prefix, where, make, module_globals=None, name_the_op=True):
    """``(__getattr__, __dir__)`` for a module whose attribute ``X`` stands for
    the op ``<prefix>X`` (``nbdl.nd.linalg.gemm2``, ``nbdl.sym.contrib.box_nms``).

    Parameters
    ----------
    prefix : str
        The ops' name prefix (``"_linalg_"``).
    where : str
        The module's public name, for error messages.
    make : callable
        ``make(op_name)``: the attribute for the op ``op_name``.
    module_globals : dict, optional
        The module's globals: each attribute is cached there once made, and
        ``__dir__`` lists them too.
    name_the_op : bool, default True
        Whether the AttributeError of an unknown name names the op it looked for.
    """
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            get_op(prefix + name)
        except UnknownOpError:
            looked_for = f" (no op {prefix + name!r})" if name_the_op else ""
            raise AttributeError(f"{where} has no attribute or operator {name!r}"
                                 f"{looked_for}") from None
        fn = make(prefix + name)
        if module_globals is not None:
            module_globals[name] = fn
        return fn

    def __dir__():
        ops = {n[len(prefix):] for n in list_ops() if n.startswith(prefix)}
        return sorted(ops | set(module_globals or ()))
    return __getattr__, __dir__


# -- helpers shared by op families ------------------------------------------------

# how a function of one op call describes its first two arguments (``shared_doc``)
OP_AND_ATTRS = """
op : OpDef
    The op.
attrs : dict
    Its parsed attributes.
"""


def kernel_paths(family, fn):
    """``OpDef.kernels`` (or ``temp``) of an op of nbdl: ``fn`` of the family's
    CPU and CUDA kernel modules, ``nbdl.kernels.<device>.<family>``.

    Parameters
    ----------
    family : str
        The kernel modules' name (``"sequence"``).
    fn : str
        The function's name in both (``"prepare_sequence_mask"``).
    """
    return {"cpu": f"nbdl.kernels.cpu.{family}:{fn}", "cuda": f"nbdl.kernels.cuda.{family}:{fn}"}


def shape_str(s):
    return "?" if s is None else str(tuple(s))


def shapes_str(shapes):
    return "[" + ", ".join(shape_str(s) for s in shapes) + "]"


def shape_error(attrs_or_where, msg, in_shapes=None):
    where = attrs_or_where
    text = f"{where}: {msg}"
    if in_shapes is not None:
        text += f"; input shapes {shapes_str(in_shapes)}"
    return ShapeError(text)


__all__ = ["Attr", "Call", "Launch", "OpDef", "Recompute", "register", "get_op", "list_ops",
           "op_namespace", "kernel_paths", "REQ_NULL", "REQ_WRITE", "REQ_INPLACE", "REQ_ADD",
           "REQ_NAMES", "FLOAT_DTYPES", "has_half", "as_f32", "half_mirror_temps", "half_launch"]
