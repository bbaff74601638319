"""Guards over the whole op table: every op has CPU and CUDA kernels, every
public op is exercised by a test in this folder, the required MXNet op names
are present."""
import pathlib
import re

import pytest

from nbdl.ops import get_op, list_ops
from nbdl.ops.registry import aliases

REQUIRED = """elemwise_add elemwise_sub elemwise_mul elemwise_div broadcast_add broadcast_sub
broadcast_mul broadcast_div broadcast_maximum broadcast_minimum broadcast_power broadcast_equal
broadcast_greater broadcast_lesser _plus_scalar _minus_scalar _rminus_scalar _mul_scalar _div_scalar
_rdiv_scalar _power_scalar _maximum_scalar _minimum_scalar negative abs exp log sqrt rsqrt square
tanh sigmoid relu softsign sin cos clip Activation FullyConnected dot batch_dot sum mean max min prod
softmax log_softmax SoftmaxOutput LinearRegressionOutput LogisticRegressionOutput MAERegressionOutput
Reshape Flatten transpose expand_dims squeeze Concat SliceChannel split slice slice_axis BlockGrad
stop_gradient Dropout _copy identity zeros_like ones_like ElementWiseSum add_n where one_hot pick
take argmax""".split()


@pytest.mark.parametrize("name", REQUIRED)
def test_required_op_is_registered(name):
    assert get_op(name) is not None


@pytest.mark.parametrize("name", list_ops(include_hidden=True))
def test_every_op_has_cpu_and_cuda_kernels(name):
    op = get_op(name)
    if op.eager_only:   # no kernels: a hand-written eager function runs it
        from nbdl.ndarray import namespace
        assert not op.kernels and namespace.function_for(name).__module__ != namespace.__name__
    else:
        assert "cpu" in op.kernels and "cuda" in op.kernels, name
    assert op.infer_shape is not None and op.infer_type is not None, name


def test_every_public_op_is_tested():
    text = "\n".join(p.read_text() for p in pathlib.Path(__file__).parent.glob("test_*.py")
                     if p.name != "test_op_table.py")
    names_by_op = {}
    for alias, target in aliases().items():
        names_by_op.setdefault(target, []).append(alias)
    untested = [n for n in list_ops() if not any(
        re.search(rf"\b{re.escape(x)}\b", text) for x in [n] + names_by_op.get(n, []))]
    assert not untested, f"ops with no test in tests/ops: {untested}"
