"""Graph builders shared by the Symbol and JSON tests (imported by name:
pytest puts this directory on sys.path)."""
import nbdl
from nbdl.ops.attrs import Attr
from nbdl.ops.registry import OpDef

AUX_OP = "_test_symbol_aux_op"


def mlp(num_hidden=(128, 64), num_classes=10):
    """MXNet's canonical MLP: fc1 -> relu1 -> fc2 -> relu2 -> fc3 -> softmax."""
    net = nbdl.sym.var("data")
    for i, n in enumerate(num_hidden, 1):
        net = nbdl.sym.FullyConnected(net, num_hidden=n, name=f"fc{i}")
        net = nbdl.sym.Activation(net, act_type="relu", name=f"relu{i}")
    net = nbdl.sym.FullyConnected(net, num_hidden=num_classes, name=f"fc{len(num_hidden) + 1}")
    return nbdl.sym.SoftmaxOutput(net, name="softmax")


MLP_ARGS = ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias",
            "fc3_weight", "fc3_bias", "softmax_label"]


def _aux_shape(attrs, ins, outs):
    d = ins[0] if ins[0] is not None else outs[0]
    if d is None:
        return ins, outs
    c = (d[1],)
    return [d, c, c], [d, c]


def _aux_type(attrs, ins, outs):
    t = next((x for x in list(ins) + list(outs) if x is not None), None)
    return [t] * len(ins), [t] * len(outs)


def make_aux_op():
    """A BatchNorm-like op: an aux state and a hidden second output."""
    return OpDef(name=AUX_OP, input_names=("data", "gamma"), aux_names=("moving_mean",),
                 num_outputs=2, num_visible_outputs=1, output_names=("output", "mean"),
                 attrs={"eps": Attr("float", 1e-3)}, infer_shape=_aux_shape,
                 infer_type=_aux_type, hidden=True, doc="test op")
