"""Neural-network operators of ``nbdl.npx`` (MXNet 2's ``mx.npx``):
activations, softmax, fully_connected, dropout, layer_norm, embedding,
batch_dot, convolution, deconvolution, pooling, batch_norm, leaky_relu,
rnn, deformable_convolution and modulated_deformable_convolution.
Each runs one op of the table, eagerly on NDArrays or as a
graph node on Symbols (see ``nbdl.np._dispatch``)."""
from ..dtype import as_dtype
from ..errors import AttrError
from ..np._dispatch import apply, operands, static_shape


def _one(x, where):
    (a,), on_symbols = operands([x], where)
    return a, on_symbols


def relu(data):
    """max(data, 0) (op ``relu``)."""
    x, s = _one(data, "relu")
    return apply("relu", [x], on_symbols=s)


def sigmoid(data):
    """1 / (1 + exp(-data)) (op ``sigmoid``)."""
    x, s = _one(data, "sigmoid")
    return apply("sigmoid", [x], on_symbols=s)


def activation(data, act_type="relu"):
    """``Activation``: relu, sigmoid, tanh, softrelu or softsign."""
    x, s = _one(data, "activation")
    return apply("Activation", [x], {"act_type": act_type}, on_symbols=s)


def softmax(data, axis=-1, temperature=None, dtype=None):
    """softmax(data / temperature) along ``axis``."""
    x, s = _one(data, "softmax")
    return apply("softmax", [x], {"axis": int(axis), "temperature": temperature, "dtype": dtype},
                 on_symbols=s)


def log_softmax(data, axis=-1, temperature=None, dtype=None):
    """log(softmax(data / temperature)) along ``axis``."""
    x, s = _one(data, "log_softmax")
    return apply("log_softmax", [x], {"axis": int(axis), "temperature": temperature,
                                      "dtype": dtype}, on_symbols=s)


def _dim(value, array, axis, where, what):
    """An attribute that defaults to a dimension of ``array`` (a weight)."""
    if value is not None:
        return int(value)
    shape = static_shape(array)
    if shape is None or len(shape) <= axis:
        raise AttrError(f"{where}: {what} is required when the weight's shape is not known "
                        f"(a Symbol without a declared shape)")
    return int(shape[axis])


def _bias_inputs(where, inputs, bias, no_bias):
    """``operands(inputs + [bias])`` (no bias when ``no_bias``, which defaults
    to ``bias is None``): (inputs, on_symbols, no_bias)."""
    if no_bias is None:
        no_bias = bias is None
    if no_bias and bias is not None:
        raise AttrError(f"{where}: a bias was given with no_bias=True")
    if not no_bias and bias is None:
        raise AttrError(f"{where}: no_bias=False needs a bias")
    inputs, s = operands(list(inputs) + ([] if no_bias else [bias]), where)
    return inputs, s, bool(no_bias)


def fully_connected(x, weight, bias=None, num_hidden=None, no_bias=None, flatten=True):
    """``FullyConnected``: ``x @ weight.T + bias``.  ``num_hidden`` defaults to
    ``weight.shape[0]``; ``no_bias`` to ``bias is None``."""
    where = "fully_connected"
    inputs, s, no_bias = _bias_inputs(where, [x, weight], bias, no_bias)
    n = _dim(num_hidden, inputs[1], 0, where, "num_hidden")
    return apply("FullyConnected", inputs,
                 {"num_hidden": n, "no_bias": no_bias, "flatten": bool(flatten)},
                 on_symbols=s)


def dropout(data, p=0.5, mode="training", axes=None, cudnn_off=True):
    """``Dropout``: in training (eagerly ``nbdl.autograd.is_training()``, which
    ``invoke`` reads; in a graph the executor's ``is_train``) or with
    mode='always', zero each
    element with probability ``p`` and scale the rest by 1/(1-p), sharing one
    draw along ``axes``; otherwise the identity."""
    x, s = _one(data, "dropout")
    attrs = {"p": float(p), "mode": mode, "axes": tuple(axes) if axes else ()}
    return apply("Dropout", [x], attrs, on_symbols=s)


def layer_norm(data, gamma, beta, axis=-1, eps=1e-5, output_mean_var=False):
    """``LayerNorm`` over ``axis``; with ``output_mean_var`` also returns the
    mean and std (``[out, mean, std]``)."""
    inputs, s = operands([data, gamma, beta], "layer_norm")
    return apply("LayerNorm", inputs, {"axis": int(axis), "eps": float(eps),
                                       "output_mean_var": bool(output_mean_var)}, on_symbols=s)


def embedding(data, weight, input_dim=None, output_dim=None, dtype=None, sparse_grad=False):
    """``Embedding``: ``weight[data]`` with ids clipped to ``[0, input_dim)``.
    ``input_dim`` / ``output_dim`` default to the weight's shape; ``dtype`` to
    the weight's."""
    from .indexing import index_operand
    where = "embedding"
    inputs, s = operands([index_operand(data, weight), weight], where)
    if sparse_grad:
        raise AttrError(f"{where}: sparse_grad=True (a row_sparse weight gradient) is not "
                        f"supported by nbdl: dense storage only")
    attrs = {"input_dim": _dim(input_dim, inputs[1], 0, where, "input_dim"),
             "output_dim": _dim(output_dim, inputs[1], 1, where, "output_dim")}
    if dtype is not None:
        attrs["dtype"] = as_dtype(dtype).name
    elif not s:
        attrs["dtype"] = as_dtype(inputs[1].dtype).name
    return apply("Embedding", inputs, attrs, on_symbols=s)


def batch_dot(a, b, transpose_a=False, transpose_b=False):
    """``batch_dot``: matrix products over equal leading (batch) axes."""
    inputs, s = operands([a, b], "batch_dot")
    return apply("batch_dot", inputs, {"transpose_a": bool(transpose_a),
                                       "transpose_b": bool(transpose_b)}, on_symbols=s)


# -- convolution, pooling, batch norm, leaky_relu (Gluon's conv and norm layers) ------

def _kernel(kernel, weight, where, channel_last):
    if kernel is not None:
        return tuple(kernel)
    shape = static_shape(weight)
    if shape is None:
        raise AttrError(f"{where}: kernel is required when the weight's shape is not known")
    return tuple(shape[1:-1] if channel_last else shape[2:])


def _conv_attrs(where, inputs, kernel, stride, dilate, pad, num_group, layout):
    attrs = {"kernel": _kernel(kernel, inputs[1], where, bool(layout) and layout[1] != "C"),
             "num_group": int(num_group)}
    for name, value in (("stride", stride), ("dilate", dilate), ("pad", pad)):
        if value is not None:
            attrs[name] = tuple(value)
    if layout is not None:
        attrs["layout"] = layout
    return attrs


def convolution(data, weight, bias=None, kernel=None, stride=None, dilate=None, pad=None,
                num_filter=None, num_group=1, no_bias=None, layout=None, workspace=1024,
                cudnn_tune=None, cudnn_off=False):
    """``Convolution`` over 1, 2 or 3 spatial axes.  ``kernel`` and
    ``num_filter`` default to the weight's shape; ``no_bias`` to ``bias is None``."""
    where = "convolution"
    inputs, s, no_bias = _bias_inputs(where, [data, weight], bias, no_bias)
    attrs = _conv_attrs(where, inputs, kernel, stride, dilate, pad, num_group, layout)
    attrs["num_filter"] = _dim(num_filter, inputs[1], 0, where, "num_filter")
    attrs["no_bias"] = no_bias
    return apply("Convolution", inputs, attrs, on_symbols=s)


def deconvolution(data, weight, bias=None, kernel=None, stride=None, dilate=None, pad=None,
                  adj=None, target_shape=None, num_filter=None, num_group=1, no_bias=None,
                  layout=None, workspace=1024, cudnn_tune=None, cudnn_off=False):
    """``Deconvolution`` (transposed convolution); the weight is (C, num_filter
    / num_group, *kernel).  ``num_filter`` defaults to ``weight.shape[1] *
    num_group``."""
    where = "deconvolution"
    inputs, s, no_bias = _bias_inputs(where, [data, weight], bias, no_bias)
    attrs = _conv_attrs(where, inputs, kernel, stride, dilate, pad, num_group, layout)
    if num_filter is None:
        num_filter = _dim(None, inputs[1], 1, where, "num_filter") * int(num_group)
    attrs["num_filter"] = int(num_filter)
    attrs["no_bias"] = no_bias
    if adj is not None:
        attrs["adj"] = tuple(adj)
    if target_shape is not None:
        attrs["target_shape"] = tuple(target_shape)
    return apply("Deconvolution", inputs, attrs, on_symbols=s)


def pooling(data, kernel=None, stride=None, pad=None, pool_type="max",
            pooling_convention="valid", global_pool=False, cudnn_off=False, p_value=None,
            count_include_pad=None, layout=None):
    """``Pooling``: max, avg, sum or lp (``p_value``) over windows, or over
    the whole spatial extent with ``global_pool``."""
    x, s = _one(data, "pooling")
    attrs = {"pool_type": pool_type, "pooling_convention": pooling_convention,
             "global_pool": bool(global_pool)}
    for name, value in (("kernel", kernel), ("stride", stride), ("pad", pad)):
        if value is not None:
            attrs[name] = tuple(value)
    if p_value is not None:
        attrs["p_value"] = int(p_value)
    if count_include_pad is not None:
        attrs["count_include_pad"] = bool(count_include_pad)
    if layout is not None:
        attrs["layout"] = layout
    return apply("Pooling", [x], attrs, on_symbols=s)


def batch_norm(x, gamma, beta, running_mean, running_var, eps=1e-3, momentum=0.9,
               fix_gamma=True, use_global_stats=False, output_mean_var=False, axis=1,
               cudnn_off=False):
    """``BatchNorm``: while training (eagerly ``autograd.is_training()``)
    normalizes with the batch statistics and updates ``running_mean`` /
    ``running_var`` in place; otherwise uses them."""
    inputs, s = operands([x, gamma, beta, running_mean, running_var], "batch_norm")
    attrs = {"eps": float(eps), "momentum": float(momentum), "fix_gamma": bool(fix_gamma),
             "use_global_stats": bool(use_global_stats), "axis": int(axis)}
    if output_mean_var:
        attrs["output_mean_var"] = True
    return apply("BatchNorm", inputs, attrs, on_symbols=s)


def leaky_relu(data, gamma=None, act_type="leaky", slope=0.25, lower_bound=0.125,
               upper_bound=0.334):
    """``LeakyReLU``: act_type leaky, prelu (slopes ``gamma``), rrelu, elu,
    selu, gelu (erf form) or gelu_tanh."""
    where = "leaky_relu"
    if (act_type == "prelu") != (gamma is not None):
        raise AttrError(f"{where}: gamma is needed for act_type='prelu' and only then")
    inputs, s = operands([data] + ([gamma] if gamma is not None else []), where)
    attrs = {"act_type": act_type, "slope": float(slope)}
    if act_type == "rrelu":
        attrs.update(lower_bound=float(lower_bound), upper_bound=float(upper_bound))
    return apply("LeakyReLU", inputs, attrs, on_symbols=s)


def rnn(data, parameters, state, state_cell=None, sequence_length=None, mode=None,
        state_size=None, num_layers=None, bidirectional=False, state_outputs=False, p=0.0,
        use_sequence_length=False, projection_size=None, lstm_state_clip_min=None,
        lstm_state_clip_max=None, lstm_state_clip_nan=False):
    """``RNN`` (MXNet 2's ``npx.rnn``): the fused multi-layer RNN, LSTM (with
    ``projection_size``: LSTMP) or GRU over ``data`` (T, N, C) with the packed
    ``parameters``; ``state_cell`` for mode='lstm', ``sequence_length`` (N,)
    with ``use_sequence_length``.  Returns the output, or with
    ``state_outputs`` a list ``[output, hy(, cy)]``."""
    where = "rnn"
    for name, value in (("mode", mode), ("state_size", state_size), ("num_layers", num_layers)):
        if value is None:
            raise AttrError(f"{where}: {name} is required")
    if (mode == "lstm") != (state_cell is not None):
        raise AttrError(f"{where}: state_cell must be given for mode='lstm' and only then "
                        f"(mode={mode!r})")
    if bool(use_sequence_length) != (sequence_length is not None):
        raise AttrError(f"{where}: sequence_length must be given with use_sequence_length=True "
                        f"and only then")
    inputs = [data, parameters, state] + [a for a in (state_cell, sequence_length)
                                          if a is not None]
    inputs, s = operands(inputs, where)
    attrs = {"mode": mode, "state_size": int(state_size), "num_layers": int(num_layers),
             "bidirectional": bool(bidirectional), "state_outputs": bool(state_outputs),
             "p": float(p), "use_sequence_length": bool(use_sequence_length),
             "lstm_state_clip_nan": bool(lstm_state_clip_nan)}
    for name, value in (("projection_size", projection_size),
                        ("lstm_state_clip_min", lstm_state_clip_min),
                        ("lstm_state_clip_max", lstm_state_clip_max)):
        if value is not None:
            attrs[name] = value
    return apply("RNN", inputs, attrs, on_symbols=s)

# -- deformable convolution (Gluon's DeformableConvolution layers) -------------------------

def _deformable(opname, where, lead, weight, bias, kernel, stride, dilate, pad, num_filter,
                num_group, num_deformable_group, no_bias, layout, extra):
    inputs, s, no_bias = _bias_inputs(where, lead + [weight], bias, no_bias)
    attrs = _conv_attrs(where, [inputs[0], inputs[len(lead)]], kernel, stride, dilate, pad,
                        num_group, layout)
    attrs["num_filter"] = _dim(num_filter, inputs[len(lead)], 0, where, "num_filter")
    attrs["num_deformable_group"] = int(num_deformable_group)
    attrs["no_bias"] = no_bias
    attrs.update(extra)
    return apply(opname, inputs, attrs, on_symbols=s)


def deformable_convolution(data, offset, weight, bias=None, kernel=None, stride=None,
                           dilate=None, pad=None, num_filter=None, num_group=1,
                           num_deformable_group=1, workspace=1024, no_bias=None, layout=None):
    """``_contrib_DeformableConvolution`` (2-D, NCHW): offset (N, 2*DG*kh*kw,
    OH, OW).  ``kernel`` and ``num_filter`` default to the weight's shape;
    ``no_bias`` to ``bias is None``."""
    return _deformable("_contrib_DeformableConvolution", "deformable_convolution",
                       [data, offset], weight, bias, kernel, stride, dilate, pad, num_filter,
                       num_group, num_deformable_group, no_bias, layout, {})


def modulated_deformable_convolution(data, offset, mask, weight, bias=None, kernel=None,
                                     stride=None, dilate=None, pad=None, num_filter=None,
                                     num_group=1, num_deformable_group=1, workspace=1024,
                                     no_bias=None, im2col_step=64, layout=None):
    """``_contrib_ModulatedDeformableConvolution`` (2-D, NCHW): offset (N,
    2*DG*kh*kw, OH, OW), mask (N, DG*kh*kw, OH, OW).  Defaults as
    ``deformable_convolution``."""
    return _deformable("_contrib_ModulatedDeformableConvolution",
                       "modulated_deformable_convolution", [data, offset, mask], weight, bias,
                       kernel, stride, dilate, pad, num_filter, num_group,
                       num_deformable_group, no_bias, layout, {"im2col_step": int(im2col_step)})
