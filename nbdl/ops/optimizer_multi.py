"""MXNet 1.9.1's multi-tensor optimizer helpers (rules only; kernels in
``nbdl.kernels.*.optimizer_multi``):

- ``multi_sum_sq(array_0, ..., num_arrays)``: the sum of squares of each
  array, a float32 ``(num_arrays,)`` array (accumulated in float64 here);
- ``multi_lars(lrs, weights_sum_sq, grads_sum_sq, wds, eta, eps,
  rescale_grad)``: LARS learning rates ``lr * eta * |w| / (|g| * rescale_grad
  + wd * |w| + eps)`` where both norms are positive, else ``lr`` (float32);
- ``preloaded_multi_sgd_update`` / ``_mom_update`` /
  ``preloaded_multi_mp_sgd_update`` / ``_mom_update``: the ``multi_*`` SGD
  updates with the learning rates and weight decays as the last two inputs,
  ``lrs`` and ``wds`` (float32 arrays of ``num_weights`` values, so a
  schedule changes them without new attributes); the momentum and master
  copies are updated in place (``mutates``), each output in place of its
  weight;
- ``reset_arrays(array_0, ..., num_arrays)``: sets every input to zero in
  place; it has no outputs.
"""
import numpy as np

from ..errors import DTypeError
from .attrs import Attr
from .optimizer import MULTI_GROUPS, register_multi, weights_shape, weights_type
from .registry import OpDef, register, shape_error

_F16, _F32 = np.dtype(np.float16), np.dtype(np.float32)
_KERNELS = "nbdl.kernels.{}.optimizer_multi:{}"


def _kernels(prepare):
    return {d: _KERNELS.format(d, prepare) for d in ("cpu", "cuda")}


def _arrays(attrs):
    return [f"array_{i}" for i in range(attrs["num_arrays"])]


def _check_count(name, attrs):
    if attrs["num_arrays"] < 1:
        raise shape_error(name, f"num_arrays={attrs['num_arrays']} must be at least 1")


# -- multi_sum_sq -----------------------------------------------------------------------

def _sum_sq_shape(attrs, in_shapes, out_shapes):
    _check_count("multi_sum_sq", attrs)
    return list(in_shapes), [(attrs["num_arrays"],)]


def _sum_sq_type(attrs, in_types, out_types):
    known = next((t for t in in_types if t is not None), None)
    for k, t in enumerate(in_types):
        if t is not None and np.dtype(t) != np.dtype(known):
            raise DTypeError(f"multi_sum_sq: array_{k} is {np.dtype(t)} but array_0 is "
                             f"{np.dtype(known)}")
    return [known] * len(in_types), [_F32]


register(OpDef(
    name="multi_sum_sq", input_names=_arrays, key_var_num_args="num_arrays",
    attrs={"num_arrays": Attr("int")},
    infer_shape=_sum_sq_shape, infer_type=_sum_sq_type,
    temp=lambda call: [((call.attrs["num_arrays"],), np.dtype(np.float64))],
    kernels=_kernels("prepare_multi_sum_sq"), half_mirrors=True,
    doc="The sum of squares of each input array, as a float32 vector."))


# -- multi_lars -------------------------------------------------------------------------

_LARS_INPUTS = ("lrs", "weights_sum_sq", "grads_sum_sq", "wds")


def _lars_shape(attrs, in_shapes, out_shapes):
    known = next((s for s in list(in_shapes) + list(out_shapes) if s is not None), None)
    for n, s in zip(_LARS_INPUTS, in_shapes):
        if s is not None and tuple(s) != tuple(known):
            raise shape_error("multi_lars", f"input {n!r} has shape {tuple(s)}, the others "
                              f"{tuple(known)}", in_shapes)
    return [known] * 4, [known]


def _float32_only(name):
    def rule(attrs, in_types, out_types):
        for t in list(in_types) + list(out_types):
            if t is not None and np.dtype(t) != _F32:
                raise DTypeError(f"{name}: every input is float32, got {np.dtype(t)}")
        return [_F32] * len(in_types), [_F32] * len(out_types)
    return rule


register(OpDef(
    name="multi_lars", input_names=_LARS_INPUTS,
    attrs={"eta": Attr("float"), "eps": Attr("float"), "rescale_grad": Attr("float", 1.0)},
    infer_shape=_lars_shape, infer_type=_float32_only("multi_lars"),
    kernels=_kernels("prepare_multi_lars"), dtypes=(_F32,), supports_add=True,
    scalar_attrs=("eta", "eps", "rescale_grad"),
    doc="LARS coefficients times the learning rates, from the sums of squares."))


# -- preloaded_multi_* -------------------------------------------------------------------

def _preloaded_rates(name, what, rule):
    """The per-weight rule, then ``lrs``/``wds`` (the last two inputs):
    ``num_weights`` values each (``what`` 'shape') or float32 ('type')."""
    def wrapped(attrs, ins, outs):
        n = attrs["num_weights"]
        ins, outs = rule(attrs, ins, outs)
        for k, key in ((len(ins) - 2, "lrs"), (len(ins) - 1, "wds")):
            if what == "shape":
                if ins[k] is not None and int(np.prod(ins[k], dtype=np.int64)) != n:
                    raise shape_error(name, f"{key} has shape {tuple(ins[k])}: it needs "
                                      f"num_weights={n} values", ins)
                ins[k] = tuple(ins[k]) if ins[k] is not None else (n,)
            else:
                if ins[k] is not None and np.dtype(ins[k]) != _F32:
                    raise DTypeError(f"{name}: {key} must be float32, got {np.dtype(ins[k])}")
                ins[k] = _F32
        return ins, outs
    return wrapped


for _name, (_group, _mp) in MULTI_GROUPS.items():
    _pre = "preloaded_" + _name
    _attrs = {"rescale_grad": Attr("float", 1.0), "clip_gradient": Attr("float", -1.0),
              "num_weights": Attr("int", 1)}
    if "mom" in _group:
        _attrs = {"momentum": Attr("float", 0.0), **_attrs}
    register_multi(
        _pre, _group, _mp, _attrs, extra_inputs=("lrs", "wds"),
        infer_shape=_preloaded_rates(_pre, "shape", weights_shape(_pre, _group)),
        infer_type=_preloaded_rates(_pre, "type", weights_type(_pre, _group, _mp)),
        kernels=_kernels("prepare_preloaded"),
        doc=f"``{_name}`` with the rates as inputs: "
            f"``{', '.join(g + '_0' for g in _group)}, ..., lrs, wds``; one output per weight.")


# -- reset_arrays --------------------------------------------------------------------------

def _reset_shape(attrs, in_shapes, out_shapes):
    _check_count("reset_arrays", attrs)
    return list(in_shapes), []


def _reset_type(attrs, in_types, out_types):
    return list(in_types), []


register(OpDef(
    name="reset_arrays", input_names=_arrays, key_var_num_args="num_arrays",
    attrs={"num_arrays": Attr("int")}, num_outputs=0,
    infer_shape=_reset_shape, infer_type=_reset_type,
    mutates=lambda attrs: tuple(range(attrs["num_arrays"])),
    kernels=_kernels("prepare_reset_arrays"),
    dtypes=tuple(np.dtype(t) for t in (np.float16, np.float32, np.float64, np.uint8, np.int8,
                                       np.int32, np.int64)),
    doc="Set every input array to zero, in place (no outputs)."))
