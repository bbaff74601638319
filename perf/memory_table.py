"""Planned memory of ResNet-18 and ResNet-50 (v1) at batch 32, 3x224x224:
training (grad_req write, softmax head) and inference, and of a fused LSTM
training step (4 layers x 1024 hidden, batch 64, 50-d input, sequence 64,
L2 head), from the executor's plan (``nbdl.debug_str`` prints the same
numbers).  Binding plans and allocates the arena but runs nothing.

    python perf/memory_table.py
"""
import nbdl
from nbdl.gluon import rnn
from nbdl.gluon.model_zoo import vision


def plan_of(name, train, batch=32):
    net = getattr(vision, name)()
    net.initialize()
    net.hybridize()
    x = nbdl.nd.zeros((1, 3, 224, 224))
    net(x)                                   # trace once, infer parameter shapes
    sym = net._cached[0]
    data = nbdl.sym.var("data")
    head = nbdl.sym.SoftmaxOutput(sym, name="softmax") if train else sym
    shapes = {"data": (batch, 3, 224, 224)}
    ex = head.simple_bind(nbdl.cpu(), grad_req="write" if train else "null", **shapes)
    del data
    return ex.memory_plan.stats


def mb(nbytes):
    return f"{nbytes / 2**20:,.1f}"


def lstm_plan(layers=4, hidden=1024, batch=64, inputs=50, seq=64):
    net = rnn.LSTM(hidden, num_layers=layers, input_size=inputs)
    net.initialize()
    net.hybridize()
    net(nbdl.nd.zeros((seq, 1, inputs)))     # trace once (layout TNC)
    sym = net._cached[0]
    head = nbdl.sym.LinearRegressionOutput(sym, name="l2")
    ex = head.simple_bind(nbdl.cpu(), grad_req="write", data=(seq, batch, inputs))
    return ex.memory_plan.stats


def main():
    print("| model | mode | planned MB (temp incl.) | lower bound MB | naive MB | MXNet pool (sim.) MB | temp MB |")
    print("|---|---|---|---|---|---|---|")
    for name in ("resnet18_v1", "resnet50_v1"):
        for train in (True, False):
            s = plan_of(name, train)
            print(f"| {name} | {'training' if train else 'inference'} | {mb(s.planned_bytes)} | "
                  f"{mb(s.lower_bound_bytes)} | {mb(s.naive_bytes)} | {mb(s.mxnet_pool_bytes)} | "
                  f"{mb(s.temp_bytes)} |")
    s = lstm_plan()
    print(f"| LSTM 4x1024, b64, 50-d, seq 64 | training | {mb(s.planned_bytes)} | "
          f"{mb(s.lower_bound_bytes)} | {mb(s.naive_bytes)} | {mb(s.mxnet_pool_bytes)} | "
          f"{mb(s.temp_bytes)} |")


if __name__ == "__main__":
    main()
