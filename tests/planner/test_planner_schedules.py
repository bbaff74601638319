"""Realistic schedules built as plain ``Step`` lists (no graph, no ops), and
the planner's quality on them.  ``perf/test_planner_bytes.py`` loads the
builders from this file."""
from __future__ import annotations

import pytest

from nbdl.planner import PlanRequest, Step, check_plan, mxnet_pool_bytes, plan


class ScheduleBuilder:
    """Hands out entry ids with names and sizes, and collects steps."""

    def __init__(self):
        self.steps: list[Step] = []
        self.nbytes: dict[int, int] = {}
        self.names: dict[int, str] = {}
        self.external: set[int] = set()

    def entry(self, name: str, nbytes: int, external: bool = False) -> int:
        e = len(self.nbytes)
        self.nbytes[e], self.names[e] = nbytes, name
        if external:
            self.external.add(e)
        return e

    def step(self, name, op, reads, writes, temps=(), inplace=()):
        self.steps.append(Step(name, op, list(reads), list(writes), list(temps), list(inplace)))

    def request(self, outputs, **kw) -> PlanRequest:
        return PlanRequest(self.steps, self.nbytes, self.names, self.external, set(outputs), **kw)


def mlp_training_request(batch=128, dims=(784, 512, 512, 10), itemsize=4) -> PlanRequest:
    """FullyConnected/relu layers, SoftmaxOutput, and the backward pass with
    per-layer gradients; weights, their gradients, data and label external."""
    b = ScheduleBuilder()
    f = itemsize
    h = b.entry("data", batch * dims[0] * f, external=True)
    label = b.entry("softmax_label", batch * f, external=True)
    layers = []
    n = len(dims) - 1
    for k in range(1, n + 1):
        fin, fout = dims[k - 1], dims[k]
        w = b.entry(f"fc{k}_weight", fin * fout * f, external=True)
        bias = b.entry(f"fc{k}_bias", fout * f, external=True)
        wg = b.entry(f"fc{k}_weight_grad", fin * fout * f, external=True)
        bg = b.entry(f"fc{k}_bias_grad", fout * f, external=True)
        fc = b.entry(f"fc{k}_output", batch * fout * f)
        b.step(f"fc{k}", "FullyConnected", [h, w, bias], [fc])
        layer = dict(x=h, w=w, wg=wg, bg=bg, fc=fc, act=None)
        if k < n:
            act = b.entry(f"relu{k}_output", batch * fout * f)
            b.step(f"relu{k}", "Activation", [fc], [act], inplace=[(fc, act)])
            layer["act"] = h = act
        layers.append(layer)
    out = b.entry("softmax_output", batch * dims[-1] * f)
    b.step("softmax", "SoftmaxOutput", [layers[-1]["fc"], label], [out],
           inplace=[(layers[-1]["fc"], out)])

    grad = b.entry("softmax_backward_output", batch * dims[-1] * f)
    b.step("softmax_backward", "_backward_SoftmaxOutput", [out, label], [grad])
    for k in range(n, 0, -1):
        L = layers[k - 1]
        writes = [L["wg"], L["bg"]]
        dx = None
        if k > 1:
            dx = b.entry(f"fc{k}_data_grad", batch * dims[k - 1] * f)
            writes.insert(0, dx)
        # bias gradient: a column-sum scratch row per thread
        tmp = b.entry(f"fc{k}_backward_temp", dims[k] * f * 2)
        b.step(f"fc{k}_backward", "_backward_FullyConnected", [grad, L["x"], L["w"]], writes,
               temps=[tmp])
        if dx is not None:
            act = layers[k - 2]["act"]
            g = b.entry(f"relu{k - 1}_data_grad", batch * dims[k - 1] * f)
            b.step(f"relu{k - 1}_backward", "_backward_Activation", [dx, act], [g],
                   inplace=[(dx, g)])
            grad = g
    return b.request([out])


def chain_request(num_ops=200, batch=64, width=256, itemsize=4) -> PlanRequest:
    """A deep elementwise chain and its backward: blocks of tanh, _mul_scalar,
    _plus_scalar, relu (tanh and relu keep their outputs for backward; the
    scalar ops' inputs die at once, so they run inplace).  Every 8th op uses a
    scratch row.  The input's gradient and the head gradient are external."""
    b = ScheduleBuilder()
    nb = batch * width * itemsize
    ops = ["tanh", "_mul_scalar", "_plus_scalar", "relu"]
    x = b.entry("data", nb, external=True)
    acts = [x]
    kinds = []
    for k in range(1, num_ops + 1):
        kind = ops[(k - 1) % len(ops)]
        a = b.entry(f"{kind}{k}_output", nb)
        temps = [b.entry(f"{kind}{k}_temp", width * itemsize)] if k % 8 == 0 else []
        b.step(f"{kind}{k}", kind, [acts[-1]], [a], temps=temps, inplace=[(acts[-1], a)])
        acts.append(a)
        kinds.append(kind)
    g = b.entry("head_grad", nb, external=True)
    data_grad = b.entry("data_grad", nb, external=True)
    for k in range(num_ops, 0, -1):
        kind = kinds[k - 1]
        gi = data_grad if k == 1 else b.entry(f"{kind}{k}_data_grad", nb)
        reads = [g, acts[k]] if kind in ("tanh", "relu") else [g]
        b.step(f"{kind}{k}_backward", f"_backward_{kind}", reads, [gi], inplace=[(g, gi)])
        g = gi
    return b.request([acts[-1]])


@pytest.mark.parametrize("build", [mlp_training_request, chain_request])
def test_realistic_schedule_close_to_lower_bound(build):
    req = build()
    p = plan(req)
    assert check_plan(p) == []
    s = p.stats
    assert s.lower_bound_bytes <= s.planned_bytes <= 1.10 * s.lower_bound_bytes
    assert s.planned_bytes <= s.mxnet_pool_bytes == mxnet_pool_bytes(req)
    assert s.planned_bytes < s.naive_bytes


def test_mlp_inplace_and_externals():
    req = mlp_training_request()
    p = plan(req)
    names = {req.names[o]: req.names[i] for o, i in p.alias_of.items()}
    assert names["relu1_output"] == "fc1_output"
    assert names["softmax_output"] == "fc3_output"
    assert names["relu1_data_grad"] == "fc2_data_grad"
    assert not set(p.offsets) & req.external
    out = next(e for e, n in req.names.items() if n == "softmax_output")
    assert p.live[out][1] == len(req.steps) - 1


def test_chain_scalar_ops_run_inplace():
    req = chain_request(num_ops=8)
    p = plan(req)
    aliased = {req.names[o] for o in p.alias_of}
    assert {"_plus_scalar3_output", "relu4_output"} <= aliased
    assert "_mul_scalar2_output" not in aliased      # tanh1's output is kept for backward
    assert check_plan(p) == []


def test_long_schedule_plans():
    req = chain_request(num_ops=1000)            # 2,000 steps
    p = plan(req)
    assert len(req.steps) == 2000
    assert check_plan(p) == []
    assert p.stats.planned_bytes <= 1.10 * p.stats.lower_bound_bytes


def convnet_request(batch=32, image=32, stages=(16, 32, 64), classes=10, itemsize=4):
    """A small VGG-style convnet: per stage conv/relu, conv/relu, 2x2 pooling;
    convolutions need im2col scratch; activations shrink stage by stage, so
    blocks freed early are the wrong size later (where a storage-id pool
    wastes bytes and offset packing does not)."""
    b = ScheduleBuilder()
    f = itemsize
    c, hw = 3, image
    h = b.entry("data", batch * c * hw * hw * f, external=True)
    label = b.entry("softmax_label", batch * f, external=True)
    fwd = []            # (kind, input, output, weight, weight grad, spatial, c_in, c_out)
    for s, cout in enumerate(stages):
        for k in range(2):
            name = f"conv{s}_{k}"
            w = b.entry(f"{name}_weight", cout * c * 9 * f, external=True)
            wg = b.entry(f"{name}_weight_grad", cout * c * 9 * f, external=True)
            out = b.entry(f"{name}_output", batch * cout * hw * hw * f)
            col = b.entry(f"{name}_im2col", c * 9 * hw * hw * f * 2)
            b.step(name, "Convolution", [h, w], [out], temps=[col])
            act = b.entry(f"{name}_relu_output", batch * cout * hw * hw * f)
            b.step(f"{name}_relu", "Activation", [out], [act], inplace=[(out, act)])
            fwd.append(("conv", h, act, w, wg, hw, c, cout))
            h, c = act, cout
        hw //= 2
        pool = b.entry(f"pool{s}_output", batch * c * hw * hw * f)
        b.step(f"pool{s}", "Pooling", [h], [pool])
        fwd.append(("pool", h, pool, None, None, hw * 2, c, c))
        h = pool
    w = b.entry("fc_weight", classes * c * hw * hw * f, external=True)
    wg = b.entry("fc_weight_grad", classes * c * hw * hw * f, external=True)
    logits = b.entry("fc_output", batch * classes * f)
    b.step("fc", "FullyConnected", [h, w], [logits])
    out = b.entry("softmax_output", batch * classes * f)
    b.step("softmax", "SoftmaxOutput", [logits, label], [out], inplace=[(logits, out)])

    g = b.entry("softmax_backward_output", batch * classes * f)
    b.step("softmax_backward", "_backward_SoftmaxOutput", [out, label], [g])
    gx = b.entry("fc_data_grad", b.nbytes[h])
    b.step("fc_backward", "_backward_FullyConnected", [g, h, w], [gx, wg])
    g = gx
    for kind, x, y, w, wg, hw, cin, cout in reversed(fwd):
        if kind == "pool":
            gi = b.entry(f"{b.names[y]}_grad_in", b.nbytes[x])
            b.step(f"{b.names[y]}_backward", "_backward_Pooling", [g, x, y], [gi])
            g = gi
            continue
        ga = b.entry(f"{b.names[y]}_grad", b.nbytes[y])
        b.step(f"{b.names[y]}_backward", "_backward_Activation", [g, y], [ga], inplace=[(g, ga)])
        writes = [wg]
        gi = None
        if x not in b.external:
            gi = b.entry(f"{b.names[y]}_data_grad", b.nbytes[x])
            writes.insert(0, gi)
        col = b.entry(f"{b.names[y]}_col_grad", cin * 9 * hw * hw * f * 2)
        b.step(f"{b.names[y]}_conv_backward", "_backward_Convolution", [ga, x, w], writes,
               temps=[col])
        g = gi
    return b.request([out])


def test_convnet_schedule_beats_the_storage_id_pool():
    req = convnet_request()
    p = plan(req)
    assert check_plan(p) == []
    s = p.stats
    assert s.lower_bound_bytes <= s.planned_bytes < s.mxnet_pool_bytes
