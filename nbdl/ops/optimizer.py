"""The optimizer update ops (rules only; kernels in nbdl.kernels.*.optimizer).

MXNet 1.9.1's update operators with its names, inputs and attributes:
``sgd_update(weight, grad)``, ``sgd_mom_update(weight, grad, mom)``,
``mp_sgd_update(weight, grad, weight32)``, ``mp_sgd_mom_update(weight, grad,
mom, weight32)``, ``nag_mom_update``, ``mp_nag_mom_update``,
``adam_update(weight, grad, mean, var)``, ``signsgd_update``,
``signum_update(weight, grad, mom)``, ``ftml_update(weight, grad, d, v, z)``,
``ftrl_update(weight, grad, z, n)``, ``rmsprop_update(weight, grad, n)``,
``rmspropalex_update(weight, grad, n, g, delta)``,
``lamb_update_phase1(weight, grad, mean, var) -> g`` and
``lamb_update_phase2(weight, g, r1, r2)``, ``_adamw_update(weight, grad, mean,
var, rescale_grad)`` (also ``_contrib_adamw_update``), and the ``multi_*``
forms taking ``num_weights`` groups of inputs (``weight_0, grad_0, ...``)
with per-weight ``lrs``/``wds``.

Each op returns the new weight (write it back with ``out=weight``: the
weight/output pair is in place) and updates its state inputs in place: they
are the op's ``mutates`` inputs, so a bound graph must feed them from
variables.  Every float attribute reaches the kernel as a scalar
(``scalar_attrs``): an eager call with another learning rate reuses the
prepared kernel.  ``clip_gradient < 0`` turns clipping off; ``lazy_update``
is accepted (it only matters for sparse gradients).  ``mp_*`` take float16
weights and gradients and float32 ``weight32`` (and ``mom``), the master
copy the update computes in.  The hidden ``_nbdl_*_update`` ops are nbdl's
fused forms of the updates MXNet 1.x writes in Python (AdaGrad, AdaDelta,
Adamax, Nadam, SGLD); ``nbdl.optimizer`` calls them like the others.
"""
import numpy as np

from ..errors import DTypeError
from .attrs import Attr
from .registry import OpDef, register, shape_error
from .rules import same_type

_F16, _F32 = np.dtype(np.float16), np.dtype(np.float32)
_CPU = "nbdl.kernels.cpu.optimizer:"
_CUDA = "nbdl.kernels.cuda.optimizer:"


def _f(default=None):
    return Attr("float") if default is None else Attr("float", default)


_RESCALE = {"rescale_grad": _f(1.0), "clip_gradient": _f(-1.0)}
_LAZY = {"lazy_update": Attr("bool", True, doc="Accepted: only sparse gradients use it.")}


def _same_shapes(name, names, scalar_inputs=()):
    """Every input but the 1-element ones (``scalar_inputs``) has the
    weight's shape; so has the output."""
    def rule(attrs, in_shapes, out_shapes):
        ins = list(in_shapes)
        ref = next((s for k, s in enumerate(ins) if s is not None and k not in scalar_inputs),
                   out_shapes[0])
        if ref is None:
            return ins, list(out_shapes)
        ref = tuple(ref)
        for k, s in enumerate(ins):
            want = (1,) if k in scalar_inputs else ref
            if s is not None and tuple(s) != want:
                raise shape_error(name, f"input {names[k]!r} has shape {tuple(s)} but "
                                  f"{'must be (1,)' if k in scalar_inputs else 'the weight has ' + str(ref)}",
                                  in_shapes)
            ins[k] = want
        if out_shapes[0] is not None and tuple(out_shapes[0]) != ref:
            raise shape_error(name, f"the output has shape {tuple(out_shapes[0])} but the weight "
                              f"has {ref}", in_shapes)
        return ins, [ref]
    return rule



def _mp_types(name, n_master):
    """``mp_*``: weight, grad and the output float16; the last ``n_master``
    inputs (mom, weight32) float32."""
    def rule(attrs, in_types, out_types):
        n = len(in_types)
        for k in range(n - n_master, n):
            t = in_types[k]
            if t is not None and np.dtype(t) != _F32:
                raise DTypeError(f"{name}: input {k} must be float32 (the master copy and its "
                                 f"state), got {np.dtype(t)}")
        half = [t for t in list(in_types[:n - n_master]) + list(out_types) if t is not None]
        for t in half:
            if np.dtype(t) != _F16:
                raise DTypeError(f"{name}: the weight and gradient must be float16 (the master "
                                 f"copy weight32 is float32), got {np.dtype(t)}")
        return [_F16] * (n - n_master) + [_F32] * n_master, [_F16] * len(out_types)
    return rule


def _fixed_types(name, half_inputs, n_in, out_type):
    """``mp_lamb_*``: the inputs at ``half_inputs`` float16, the others and
    the output as MXNet fixes them."""
    def rule(attrs, in_types, out_types):
        want = [_F16 if k in half_inputs else _F32 for k in range(n_in)]
        for k, (t, w) in enumerate(zip(list(in_types) + list(out_types), want + [out_type])):
            if t is not None and np.dtype(t) != w:
                what = f"input {k}" if k < n_in else "the output"
                raise DTypeError(f"{name}: {what} must be {w}, got {np.dtype(t)}")
        return want, [out_type]
    return rule


def _update(name, inputs, attrs, doc, scalar_attrs=None, mp=0, scalar_inputs=(),
            hidden=False, aliases=(), infer_type=None, read_only=(), prepare="prepare_update",
            infer_shape=None):
    scalar_attrs = tuple(scalar_attrs if scalar_attrs is not None
                         else [k for k, a in attrs.items() if a.kind in ("float", "int")])
    # the states: every input after weight and grad but the read-only ones
    mutated = tuple(k for k in range(2, len(inputs))
                    if inputs[k] not in ("r1", "r2", "rescale_grad", "noise") + tuple(read_only))
    register(OpDef(
        name=name, input_names=tuple(inputs), attrs=dict(attrs),
        infer_shape=infer_shape or _same_shapes(name, inputs, scalar_inputs),
        infer_type=infer_type or (_mp_types(name, mp) if mp else same_type),
        inplace=lambda a: [(0, 0)], mutates=mutated, scalar_attrs=scalar_attrs,
        dtypes=(_F16, _F32) if mp or infer_type else None, hidden=hidden,
        half_mirrors=not (mp or infer_type),   # float16 weights and states, float32 math
        kernels={"cpu": _CPU + prepare, "cuda": _CUDA + prepare}, doc=doc),
        aliases=aliases)


_SGD = {"lr": _f(), "wd": _f(0.0), **_RESCALE, **_LAZY}
_MOM = {"lr": _f(), "momentum": _f(0.0), "wd": _f(0.0), **_RESCALE, **_LAZY}
_NAG = {"lr": _f(), "momentum": _f(0.0), "wd": _f(0.0), **_RESCALE}

_update("sgd_update", ["weight", "grad"], _SGD,
        "SGD: ``weight = (1 - lr * wd) * weight - lr * clip(rescale_grad * grad)``.")
_update("sgd_mom_update", ["weight", "grad", "mom"], _MOM,
        "SGD with momentum: ``mom = momentum * mom - lr * wd * weight - lr * clip(rescale_grad "
        "* grad)``; ``weight += mom`` (``mom`` is updated in place).")
_update("mp_sgd_update", ["weight", "grad", "weight32"], _SGD,
        "``sgd_update`` of a float16 weight through its float32 master copy ``weight32`` "
        "(updated in place).", mp=1)
_update("mp_sgd_mom_update", ["weight", "grad", "mom", "weight32"], _MOM,
        "``sgd_mom_update`` of a float16 weight through its float32 master copy (``mom`` and "
        "``weight32`` updated in place).", mp=2)
_update("nag_mom_update", ["weight", "grad", "mom"], _NAG,
        "Nesterov momentum (MXNet 1.x's): ``x = clip(rescale_grad * grad)``, ``weight' = "
        "weight + momentum**2 * mom - (1 + momentum) * lr * (x + wd * weight)``, ``mom = "
        "momentum * mom - lr * (x + wd * weight')``.")
_update("mp_nag_mom_update", ["weight", "grad", "mom", "weight32"], _NAG,
        "``nag_mom_update`` of a float16 weight through its float32 master copy.", mp=2)
_update("adam_update", ["weight", "grad", "mean", "var"],
        {"lr": _f(), "beta1": _f(0.9), "beta2": _f(0.999), "epsilon": _f(1e-8), "wd": _f(0.0),
         **_RESCALE, **_LAZY},
        "Adam without bias correction: ``g = clip(rescale_grad * grad + wd * weight)``, "
        "``mean = beta1 * mean + (1 - beta1) * g``, ``var = beta2 * var + (1 - beta2) * g**2``, "
        "``weight -= lr * mean / (sqrt(var) + epsilon)``.")
_update("signsgd_update", ["weight", "grad"],
        {"lr": _f(), "wd": _f(0.0), **_RESCALE},
        "signSGD: ``weight = (1 - lr * wd) * weight - lr * sign(grad)`` (as MXNet, "
        "``rescale_grad`` and ``clip_gradient`` change nothing).")
_update("signum_update", ["weight", "grad", "mom"],
        {"lr": _f(), "momentum": _f(0.0), "wd": _f(0.0), **_RESCALE, "wd_lh": _f(0.0)},
        "Signum: ``mom = momentum * mom - (1 - momentum) * (wd * weight + clip(rescale_grad * "
        "grad))``, ``weight = (1 - lr * wd_lh) * weight + lr * sign(mom)``.")
_update("ftml_update", ["weight", "grad", "d", "v", "z"],
        {"lr": _f(), "beta1": _f(0.6), "beta2": _f(0.999), "epsilon": _f(1e-8),
         "t": Attr("int"), "wd": _f(0.0), "rescale_grad": _f(1.0), "clip_grad": _f(-1.0)},
        "FTML (Zheng & Kwok 2017) at update count ``t``; ``d``, ``v``, ``z`` are updated in "
        "place.")
_update("ftrl_update", ["weight", "grad", "z", "n"],
        {"lr": _f(), "lamda1": _f(0.01), "beta": _f(1.0), "wd": _f(0.0), **_RESCALE},
        "FTRL-Proximal: ``z += g - (sqrt(n + g**2) - sqrt(n)) * weight / lr``, ``n += g**2``, "
        "``weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd)`` where ``|z| > "
        "lamda1``, else 0.")
_update("rmsprop_update", ["weight", "grad", "n"],
        {"lr": _f(), "gamma1": _f(0.95), "epsilon": _f(1e-8), "wd": _f(0.0), **_RESCALE,
         "clip_weights": _f(-1.0)},
        "RMSProp: ``g = clip(rescale_grad * grad + wd * weight)``, ``n = (1 - gamma1) * g**2 + "
        "gamma1 * n``, ``weight -= lr * g / sqrt(n + epsilon)``, clipped to ``clip_weights`` "
        "when >= 0.")
_update("rmspropalex_update", ["weight", "grad", "n", "g", "delta"],
        {"lr": _f(), "gamma1": _f(0.95), "gamma2": _f(0.9), "epsilon": _f(1e-8), "wd": _f(0.0),
         **_RESCALE, "clip_weights": _f(-1.0)},
        "Centered RMSProp (Graves 2013); ``n``, ``g`` and ``delta`` are updated in place.")
_update("lamb_update_phase1", ["weight", "grad", "mean", "var"],
        {"beta1": _f(0.9), "beta2": _f(0.999), "epsilon": _f(1e-6), "t": Attr("int"),
         "bias_correction": Attr("bool", True), "wd": _f(), **_RESCALE},
        "LAMB's first phase: updates ``mean``/``var`` in place and returns the direction "
        "``mean_hat / (sqrt(var_hat) + epsilon) + wd * weight``.",
        scalar_attrs=("beta1", "beta2", "epsilon", "t", "bias_correction", "wd", "rescale_grad",
                      "clip_gradient"))
_update("lamb_update_phase2", ["weight", "g", "r1", "r2"],
        {"lr": _f(), "lower_bound": _f(-1.0), "upper_bound": _f(-1.0)},
        "LAMB's second phase: ``weight - lr * r1 / r2 * g`` with ``r1`` (the weight's norm) "
        "clamped to the bounds that are >= 0 and ``lr * g`` when a norm is 0; ``r1``, ``r2`` "
        "are 1-element arrays.", scalar_inputs=(2, 3))
_LAMB1 = {"beta1": _f(0.9), "beta2": _f(0.999), "epsilon": _f(1e-6), "t": Attr("int"),
          "bias_correction": Attr("bool", True), "wd": _f(), **_RESCALE}
_update("mp_lamb_update_phase1", ["weight", "grad", "mean", "var", "weight32"], _LAMB1,
        "``lamb_update_phase1`` of a float16 weight and gradient: the moments (float32, "
        "updated in place) from the gradient, the direction (float32) with ``wd * weight32``.",
        scalar_attrs=tuple(_LAMB1), read_only=("weight32",),
        infer_type=_fixed_types("mp_lamb_update_phase1", (0, 1), 5, _F32))
_update("mp_lamb_update_phase2", ["weight", "g", "r1", "r2", "weight32"],
        {"lr": _f(), "lower_bound": _f(-1.0), "upper_bound": _f(-1.0)},
        "``lamb_update_phase2`` through the float32 master copy: ``weight32 -= lr * r1 / r2 "
        "* g`` (in place), the float16 output is weight32 rounded.  (MXNet 1.9.1 declares "
        "weight32 mutated but its kernel never writes it, so its mixed-precision LAMB keeps "
        "stepping from the initial weights; nbdl updates it.)",
        scalar_inputs=(2, 3), infer_type=_fixed_types("mp_lamb_update_phase2", (0,), 5, _F16))
def _group_adagrad_shape(attrs, in_shapes, out_shapes):
    name = "_contrib_group_adagrad_update"
    ins, outs = _same_shapes(name, ["weight", "grad"])(attrs, in_shapes[:2], out_shapes)
    hist = in_shapes[2]
    if ins[0] is not None:
        rows = ins[0][0] if ins[0] else 1
        if hist is not None and (not hist or hist[0] != rows or
                                 int(np.prod(hist, dtype=np.int64)) != rows):
            raise shape_error(name, f"history has shape {tuple(hist)} but needs one value per "
                              f"row of the weight {tuple(ins[0])}, e.g. ({rows}, 1)", in_shapes)
        hist = tuple(hist) if hist is not None else (rows, 1)
    return list(ins) + [hist], outs


_update("_contrib_group_adagrad_update", ["weight", "grad", "history"],
        {"lr": _f(), "rescale_grad": _f(1.0), "clip_gradient": _f(-1.0), "epsilon": _f(1e-5)},
        "Group AdaGrad: one history value per row (``history`` has ``weight.shape[0]`` "
        "elements): ``history += mean(clip(rescale_grad * grad)**2 over the row)``, ``weight "
        "-= lr * grad / sqrt(history + epsilon)``.  (MXNet 1.9.1 runs it on row_sparse "
        "gradients only; a dense gradient here updates every row.)",
        prepare="prepare_group_adagrad", infer_shape=_group_adagrad_shape)

_update("_adamw_update", ["weight", "grad", "mean", "var", "rescale_grad"],
        {"lr": _f(), "beta1": _f(0.9), "beta2": _f(0.999), "epsilon": _f(1e-8), "wd": _f(0.0),
         "eta": _f(), "clip_gradient": _f(-1.0)},
        "AdamW (decoupled weight decay): ``weight -= eta * (lr * mean / (sqrt(var) + epsilon) "
        "+ wd * weight)``, the gradient rescaled by the 1-element array ``rescale_grad``; a "
        "rescale factor that is 0 or not finite skips the update.",
        scalar_inputs=(4,), aliases=("_contrib_adamw_update",))

_HIDDEN = {"hidden": True}
_update("_nbdl_adagrad_update", ["weight", "grad", "history"],
        {"lr": _f(), "epsilon": _f(1e-7), "wd": _f(0.0), **_RESCALE},
        "AdaGrad: ``history += g**2``, ``weight -= lr * (g / sqrt(history + epsilon) + wd * "
        "weight)``.", **_HIDDEN)
_update("_nbdl_adadelta_update", ["weight", "grad", "acc_g", "acc_delta"],
        {"rho": _f(0.9), "epsilon": _f(1e-5), "wd": _f(0.0), **_RESCALE},
        "AdaDelta as MXNet 1.x's Python update.", **_HIDDEN)
_update("_nbdl_adamax_update", ["weight", "grad", "m", "u"],
        {"lr": _f(), "beta1": _f(0.9), "beta2": _f(0.999), "wd": _f(0.0), **_RESCALE},
        "Adamax (the bias correction folded into ``lr``).", **_HIDDEN)
_update("_nbdl_nadam_update", ["weight", "grad", "m", "v"],
        {"lr": _f(), "beta1": _f(0.9), "beta2": _f(0.999), "epsilon": _f(1e-8), "wd": _f(0.0),
         **_RESCALE, "coef_g": _f(), "coef_m": _f(), "coef_v": _f()},
        "Nadam with the momentum-schedule coefficients computed by the caller.", **_HIDDEN)
_update("_nbdl_sgld_update", ["weight", "grad", "noise"],
        {"lr": _f(), "wd": _f(0.0), **_RESCALE},
        "SGLD: ``weight - lr / 2 * (clip(rescale_grad * grad) + wd * weight) + noise``.",
        **_HIDDEN)


# -- multi-tensor forms ------------------------------------------------------------

# op -> (inputs per weight, how many of them are float32 master state); the
# preloaded_multi_* forms of nbdl.ops.optimizer_multi take the same groups
MULTI_GROUPS = {
    "multi_sgd_update": (("weight", "grad"), 0),
    "multi_sgd_mom_update": (("weight", "grad", "mom"), 0),
    "multi_mp_sgd_update": (("weight", "grad", "weight32"), 1),
    "multi_mp_sgd_mom_update": (("weight", "grad", "mom", "weight32"), 2),
}


def _weights_rule(name, group, one):
    """Apply the one-weight rule ``one`` to each weight's group of inputs and
    its output (the first ``per * num_weights`` inputs; any after are left
    alone)."""
    per = len(group)

    def rule(attrs, in_values, out_values):
        n = attrs["num_weights"]
        if n < 1:
            raise shape_error(name, f"num_weights={n} must be at least 1")
        ins, outs = list(in_values), list(out_values)
        for k in range(n):
            i, o = one(attrs, ins[per * k:per * k + per], [outs[k]])
            ins[per * k:per * k + per] = i
            outs[k] = o[0]
        return ins, outs
    return rule


def weights_shape(name, group):
    """Shape rule over each weight's group (the multi-tensor updates)."""
    return _weights_rule(name, group, _same_shapes(name, list(group)))


def weights_type(name, group, mp):
    """Type rule over each weight's group (float16 weights with float32
    masters when ``mp``)."""
    return _weights_rule(name, group, _mp_types(name, mp) if mp else same_type)


def register_multi(name, group, mp, attrs, extra_inputs=(), infer_shape=None, infer_type=None,
                   kernels=None, doc=""):
    """Register a multi-tensor update: inputs ``<group>_0, <group>_1, ...``
    then ``extra_inputs``, one output per weight written in place of its
    weight, the group's states (``mom``, ``weight32``) mutated, every float
    attribute a kernel scalar; ``kernels`` default to this family's
    ``prepare_multi``."""
    per = len(group)
    mut = tuple(k for k, g in enumerate(group) if g in ("mom", "weight32"))
    register(OpDef(
        name=name,
        input_names=lambda a: ([f"{g}_{k}" for k in range(a["num_weights"]) for g in group]
                               + list(extra_inputs)),
        attrs=attrs, num_outputs=lambda a: a["num_weights"],
        infer_shape=infer_shape or weights_shape(name, group),
        infer_type=infer_type or weights_type(name, group, mp),
        inplace=lambda a: [(per * k, k) for k in range(a["num_weights"])],
        mutates=lambda a: tuple(per * k + m for k in range(a["num_weights"]) for m in mut),
        scalar_attrs=tuple(k for k in attrs if k != "num_weights"),
        dtypes=(_F16, _F32) if mp else None,
        half_mirrors=not mp,   # float16 weights and states, float32 math (as _update)
        kernels=kernels or {"cpu": _CPU + "prepare_multi", "cuda": _CUDA + "prepare_multi"},
        doc=doc))


def _multi_shape(name, group):
    per_weight = weights_shape(name, group)

    def rule(attrs, in_shapes, out_shapes):
        n = attrs["num_weights"]
        for key in ("lrs", "wds"):
            if len(attrs[key]) != n:
                raise shape_error(name, f"{key} has {len(attrs[key])} values for num_weights={n}")
        return per_weight(attrs, in_shapes, out_shapes)
    return rule


for _name, (_group, _mp) in MULTI_GROUPS.items():
    _attrs = {"lrs": Attr("floats"), "wds": Attr("floats")}
    if "mom" in _group:
        _attrs["momentum"] = _f(0.0)
    _attrs.update(_RESCALE)
    _attrs["num_weights"] = Attr("int", 1)
    register_multi(_name, _group, _mp, _attrs, infer_shape=_multi_shape(_name, _group),
                   doc=f"``{_name[6:]}`` of ``num_weights`` weights in one call: inputs "
                       f"``{', '.join(g + '_0' for g in _group)}, ...``, per-weight "
                       f"``lrs``/``wds``; one output per weight.")
