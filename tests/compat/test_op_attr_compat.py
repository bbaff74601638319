"""MXNet 1.x's leniency about operator attributes: numpy values, and keys
given to ops that have no attributes."""
import json

import numpy as np
import pytest

import nbdl


def test_numpy_values_parse_as_tuples_and_ints():
    x = nbdl.nd.ones((1, 3))
    assert nbdl.nd.broadcast_to(x, shape=np.array([2, 3])).shape == (2, 3)
    assert nbdl.nd.sum(nbdl.nd.ones((2, 3)), axis=np.int64(1)).shape == (2,)
    s = nbdl.sym.broadcast_to(nbdl.sym.var("x"), shape=np.array([4, 3]))
    node = json.loads(s.tojson())["nodes"][-1]
    assert node["attrs"]["shape"] == "(4, 3)"
    assert nbdl.sym.load_json(s.tojson()).infer_shape(x=(1, 3))[1] == [(4, 3)]


def test_attributeless_ops_ignore_given_keys():
    # MXNet's broadcast ops have no parameters and ignore what they are given
    a, b = nbdl.nd.array([0.0]), nbdl.nd.array([[1.0], [-2.0]])
    out = nbdl.nd.broadcast_maximum(a, b, axis=1)
    np.testing.assert_array_equal(out.asnumpy(), [[1.0], [0.0]])
    s = nbdl.sym.broadcast_add(nbdl.sym.var("a"), nbdl.sym.var("b"), axis=1)
    assert "attrs" not in json.loads(s.tojson())["nodes"][-1]
    # an op with attributes still names a wrong key
    with pytest.raises(nbdl.AttrError, match="unknown attribute 'axs'"):
        nbdl.nd.sum(b, axs=1)
