"""nbdl.viz.plot_network: a graphviz Digraph with MXNet 1.x's node labels and
colours, edge labels from shape/dtype inference, and a clear error when the
graphviz package is missing."""
import sys

import numpy as np
import pytest

import nbdl
from nbdl.errors import ArgumentError, OptionalDependencyError, ShapeError


def net():
    sym = nbdl.sym
    x = sym.Convolution(sym.var("data"), kernel=(3, 3), stride=(2, 2), num_filter=8, name="conv1")
    x = sym.BatchNorm(x, name="bn1")
    x = sym.Activation(x, act_type="relu", name="relu1")
    x = sym.Pooling(x, kernel=(2, 2), pool_type="avg", name="pool1")
    x = sym.Flatten(x, name="flat")
    x = sym.FullyConnected(x, num_hidden=10, name="fc")
    return sym.SoftmaxOutput(x, name="softmax")


def test_missing_graphviz_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)   # import graphviz -> ImportError
    with pytest.raises(OptionalDependencyError, match="pip install graphviz") as e:
        nbdl.viz.plot_network(net())
    assert isinstance(e.value, ImportError) and "'graphviz'" in str(e.value)


def _nodes_and_edges(dot):
    nodes, edges = {}, []
    for line in dot.body:
        line = line.strip()
        if " -> " in line:
            tail, rest = line.split(" -> ", 1)
            head = rest.split(" ", 1)[0]
            edges.append((tail, head, line))
        else:
            nodes[line.split(" ", 1)[0]] = line
    return nodes, edges


def test_nodes_labels_and_colours():
    graphviz = pytest.importorskip("graphviz")
    dot = nbdl.viz.plot_network(net(), title="mynet", save_format="png")
    assert isinstance(dot, graphviz.Digraph)
    assert dot.name == "mynet" and dot.format == "png"
    nodes, edges = _nodes_and_edges(dot)
    # Parameters are hidden; the data and label variables are ovals.
    assert set(nodes) == {"data", "conv1", "bn1", "relu1", "pool1", "flat", "fc",
                          "softmax_label", "softmax"}
    assert 'shape=oval' in nodes["data"] and '"#8dd3c7"' in nodes["data"]
    assert 'label="Convolution\n3x3/2x2, 8"' in nodes["conv1"] and '"#fb8072"' in nodes["conv1"]
    assert '"#bebada"' in nodes["bn1"]
    assert 'label="Activation\nrelu"' in nodes["relu1"] and '"#ffffb3"' in nodes["relu1"]
    assert 'label="Pooling\navg, 2x2/1"' in nodes["pool1"] and '"#80b1d3"' in nodes["pool1"]
    assert '"#fdb462"' in nodes["flat"]
    assert 'label="FullyConnected\n10"' in nodes["fc"]
    assert '"#fccde5"' in nodes["softmax"] and "shape=box" in nodes["softmax"]
    assert [(t, h) for t, h, _ in edges] == [("conv1", "data"), ("bn1", "conv1"),
                                             ("relu1", "bn1"), ("pool1", "relu1"),
                                             ("flat", "pool1"), ("fc", "flat"),
                                             ("softmax", "fc"), ("softmax", "softmax_label")]
    assert all("dir=back" in e and "arrowtail=open" in e for _, _, e in edges)


def test_edge_labels_from_shapes_and_dtypes():
    pytest.importorskip("graphviz")
    dot = nbdl.viz.plot_network(net(), shape={"data": (2, 3, 17, 17)},
                                dtype={"data": np.float32})
    _, edges = _nodes_and_edges(dot)
    label = {(t, h): e.split("label=")[1].split(" ")[0].strip('"') for t, h, e in edges}
    # conv 3x3 stride 2 on 17x17 -> 8x8x8; pool 2x2 stride 1 -> 7x7; flatten 8*7*7.
    assert label[("conv1", "data")] == "3x17x17(float32)"
    assert label[("bn1", "conv1")] == "8x8x8(float32)"
    assert label[("flat", "pool1")] == "8x7x7(float32)"
    assert label[("fc", "flat")] == f"{8 * 7 * 7}(float32)"
    assert label[("softmax", "fc")] == "10(float32)"


def test_show_weights_and_node_attrs():
    pytest.importorskip("graphviz")
    dot = nbdl.viz.plot_network(net(), hide_weights=False, node_attrs={"shape": "oval",
                                                                       "fixedsize": "false"})
    nodes, edges = _nodes_and_edges(dot)
    # Weights get edges but no node statement of their own (graphviz draws them empty).
    assert "conv1_weight" not in nodes
    assert ("conv1", "conv1_weight") in [(t, h) for t, h, _ in edges]
    assert ("bn1", "bn1_moving_var") in [(t, h) for t, h, _ in edges]
    assert "shape=oval" in nodes["fc"] and "fixedsize=false" in nodes["fc"]


def test_duplicate_names_warn():
    pytest.importorskip("graphviz")
    sym = nbdl.sym
    a = sym.FullyConnected(sym.var("x"), num_hidden=2, name="same")
    b = sym.FullyConnected(a, num_hidden=2, name="same")
    with pytest.warns(RuntimeWarning, match="Repeated names: same"):
        nbdl.viz.plot_network(b)


def test_errors():
    pytest.importorskip("graphviz")
    with pytest.raises(ArgumentError, match="plot_network: symbol must be"):
        nbdl.viz.plot_network(42)
    with pytest.raises(ShapeError, match="input shape is incomplete"):
        nbdl.viz.plot_network(net(), shape={})
    with pytest.raises(ArgumentError, match="node_attrs must be a dict"):
        nbdl.viz.plot_network(net(), node_attrs=[("shape", "oval")])
