"""FullyConnected's, dot's and batch_dot's scratch rules for a device: the
rules of ``nbdl.ops.matrix`` with whether the device's GEMM can accumulate
(an ADD output with a GEMM that cannot gets a buffer)."""
from functools import partial

from ...ops import matrix as ops_matrix


def temp_rules(dot_adds):
    """The six scratch rules, in the order ``temp_fc``, ``temp_fc_backward``,
    ``temp_dot``, ``temp_dot_backward``, ``temp_batch_dot``,
    ``temp_batch_dot_backward``.

    Parameters
    ----------
    dot_adds : bool
        Whether the device's dot / batch_dot GEMM accumulates into its
        output (FullyConnected's always does).

    Returns
    -------
    tuple of callable
    """
    return (partial(ops_matrix.fc_temp, gemm_adds=True),
            partial(ops_matrix.fc_backward_temp, gemm_adds=True),
            partial(ops_matrix.dot_temp, gemm_adds=dot_adds),
            partial(ops_matrix.dot_backward_temp, gemm_adds=dot_adds),
            partial(ops_matrix.batch_dot_temp, gemm_adds=dot_adds),
            partial(ops_matrix.batch_dot_backward_temp, gemm_adds=dot_adds))
