"""nbdl.viz.print_summary: MXNet 1.9.1's layer table (the expected text of the
MLP is what MXNet 1.9.1 prints for the same graph), parameter counts worked
out here from the layer sizes, and errors for bad input."""
import pytest

import nbdl
from nbdl.errors import ArgumentError, ShapeError

MLP_80 = """\
________________________________________________________________________________
Layer (type)                  Output Shape        Param #   Previous Layer      
================================================================================
data(null)                    100                 0                             
________________________________________________________________________________
fc1(FullyConnected)           128                 12928     data                
________________________________________________________________________________
relu1(Activation)             128                 0         fc1                 
________________________________________________________________________________
fc2(FullyConnected)           64                  8256      relu1               
________________________________________________________________________________
relu2(Activation)             64                  0         fc2                 
________________________________________________________________________________
fc3(FullyConnected)           10                  640       relu2               
________________________________________________________________________________
softmax(SoftmaxOutput)        10                  0         fc3                 
================================================================================
Total params: 21824
________________________________________________________________________________
"""  # noqa: W291


def mlp():
    sym = nbdl.sym
    x = sym.FullyConnected(sym.var("data"), num_hidden=128, name="fc1")
    x = sym.Activation(x, act_type="relu", name="relu1")
    x = sym.FullyConnected(x, num_hidden=64, name="fc2")
    x = sym.Activation(x, act_type="relu", name="relu2")
    x = sym.FullyConnected(x, num_hidden=10, no_bias=True, name="fc3")
    return sym.SoftmaxOutput(x, name="softmax")


def convnet():
    sym = nbdl.sym
    x = sym.Convolution(sym.var("data"), kernel=(3, 3), num_filter=8, name="conv1")
    x = sym.BatchNorm(x, name="bn1")
    x = sym.Activation(x, act_type="relu", name="relu1")
    x = sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    x = sym.Convolution(x, kernel=(3, 3), num_filter=16, num_group=2, no_bias=True, name="conv2")
    x = sym.Flatten(x, name="flat")
    x = sym.FullyConnected(x, num_hidden=10, name="fc")
    return sym.SoftmaxOutput(x, name="softmax")


def table(capsys, *args, **kwargs):
    nbdl.viz.print_summary(*args, **kwargs)
    return capsys.readouterr().out


def rows(text):
    """{layer: (shape, params, previous)} parsed back from the table."""
    out = {}
    for line in text.splitlines():
        if "(" in line[:60] and not line.startswith("Layer"):
            name = line[:52].strip().split("(")[0]
            out[name] = (line[52:76].strip(), int(line[76:88]), line[88:].strip())
    return out


def test_mlp_matches_mxnet_text(capsys):
    text = table(capsys, mlp(), shape={"data": (32, 100)}, line_length=80,
                 positions=[30, 50, 60, 80])
    assert text == MLP_80


def test_mlp_counts_and_fractional_positions(capsys):
    text = table(capsys, mlp(), shape={"data": (32, 100)})
    lines = text.splitlines()
    assert all(len(line) == 120 for line in lines if not line.startswith("Total"))
    r = rows(text)
    assert r["fc1"] == ("128", (100 + 1) * 128, "data")
    assert r["fc2"] == ("64", (128 + 1) * 64, "relu1")
    assert r["fc3"] == ("10", 64 * 10, "relu2")          # no_bias
    assert r["data"] == ("100", 0, "")
    assert f"Total params: {101 * 128 + 129 * 64 + 640}" in lines


def test_without_shapes_counts_biases_only(capsys):
    r = rows(table(capsys, mlp()))
    # Without shapes MXNet knows no input widths: a layer counts its bias.
    assert r["fc1"] == ("", 128, "data")
    assert r["fc3"] == ("", 0, "relu2")


def test_convnet(capsys):
    text = table(capsys, convnet(), shape={"data": (4, 3, 28, 28)})
    r = rows(text)
    assert r["conv1"] == ("8x26x26", 3 * 8 * 3 * 3 + 8, "data")
    assert r["bn1"] == ("8x26x26", 2 * 8, "conv1")
    assert r["pool1"] == ("8x13x13", 0, "relu1")
    assert r["conv2"] == ("16x11x11", 8 * 16 // 2 * 3 * 3, "pool1")
    assert r["flat"] == ("1936", 0, "conv2")
    assert r["fc"] == ("10", (16 * 11 * 11 + 1) * 10, "flat")
    assert "Total params: 20186" in text


def test_several_previous_layers_each_on_a_row(capsys):
    sym = nbdl.sym
    a = sym.FullyConnected(sym.var("data"), num_hidden=8, name="f1")
    b = sym.FullyConnected(sym.var("other"), num_hidden=8, name="f2")
    c = sym.Concat(a, b, dim=1, name="cat")
    lines = table(capsys, c, shape={"data": (2, 5), "other": (2, 7)}).splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("cat(Concat)"))
    assert lines[i][52:].split() == ["16", "0", "f1"]
    assert lines[i + 1].strip() == "f2" and lines[i + 1].startswith(" " * 88)
    # f2 reads a variable that is not the graph's first node: no previous layer,
    # no width (MXNet's rule), so only its bias is counted.
    assert rows("\n".join(lines))["f2"] == ("8", 8, "")


def test_errors(capsys):
    with pytest.raises(ArgumentError, match="print_summary: symbol must be an nbdl Symbol"):
        nbdl.viz.print_summary("not a symbol")
    with pytest.raises(ShapeError, match="input shape is incomplete"):
        nbdl.viz.print_summary(convnet(), shape={})
    with pytest.raises(ShapeError, match="'nope' is not an argument"):
        nbdl.viz.print_summary(mlp(), shape={"nope": (1, 2)})
    with pytest.raises(ArgumentError, match="positions must list 4"):
        nbdl.viz.print_summary(mlp(), positions=[.5, 1.])
    with pytest.raises(ArgumentError, match="line_length"):
        nbdl.viz.print_summary(mlp(), line_length=0)
    assert capsys.readouterr().out == ""


def test_names():
    assert nbdl.viz is nbdl.visualization
    assert "Parameters" in nbdl.viz.print_summary.__doc__
