"""MLP training step through the executor: batch 128, 784-512-512-10,
SoftmaxOutput, SGD update of the weights in place.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE pytest perf --benchmark-only
"""
import numpy as np
import pytest

from workloads import symbol_mlp_executor


@pytest.fixture(scope="module")
def executor():
    return symbol_mlp_executor()


def _sgd_kernel():
    from numba import njit

    @njit(cache=True)
    def sgd(w, g, lr):
        for i in range(w.size):
            w.flat[i] -= lr * g.flat[i]
    return sgd


def test_mlp_train_step(benchmark, executor):
    ex = executor
    sgd = _sgd_kernel()
    pairs = [(ex.arg_dict[k]._data, ex.grad_dict[k]._data) for k in ex.grad_dict]
    lr = np.float32(0.01 / 128)

    def step():
        ex.forward(is_train=True)
        ex.backward()
        for w, g in pairs:
            sgd(w, g, lr)
    step()
    benchmark(step)
    plan = ex.memory_plan.stats
    benchmark.extra_info.update(planned_bytes=plan.planned_bytes, naive_bytes=plan.naive_bytes,
                                lower_bound_bytes=plan.lower_bound_bytes)


def test_mlp_forward_backward_only(benchmark, executor):
    ex = executor

    def step():
        ex.forward(is_train=True)
        ex.backward()
    step()
    benchmark(step)
