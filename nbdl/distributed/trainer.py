"""Horovod's ``DistributedTrainer`` on nbdl's Trainer: gradients are summed
over the ranks by the gradient buckets (``nbdl.gluon.grad_buckets``: one
allreduce per bucket, started during backward) and every rank updates its
own copy of the weights; the gradients are averaged over the ranks, as
Horovod's (``step(batch_size)`` takes this rank's batch size)."""
from .. import collective
from ..errors import NbdlError
from ..gluon.trainer import Trainer
from ..kvstore import create as create_kvstore


class DistributedTrainer(Trainer):
    """A Trainer whose gradients are averaged over the ranks of the job.

    Parameters
    ----------
    params : dict or list of Parameter
        As for ``Trainer``.
    optimizer : str or Optimizer
        As for ``Trainer``.
    optimizer_params : dict, optional
        As for ``Trainer``.
    compression : dict or None, optional
        ``{'type': '2bit', 'threshold': t}`` to quantize what each rank
        sends (MXNet's gradient compression), or None.
    gradient_predivide_factor : float, default 1.0
        Horovod's split of the averaging: gradients are divided by this
        factor before the sum and by ``size() / factor`` after (the result
        is the same average up to rounding).
    prefix : str, optional
        Accepted for Horovod's signature.
    bucket_size_mb : float, optional
        The size of a gradient bucket (default ``NBDL_DIST_BUCKET_MB``).
    """

    def __init__(self, params, optimizer, optimizer_params=None, compression=None,
                 gradient_predivide_factor=1.0, prefix=None, bucket_size_mb=None):
        collective.init("DistributedTrainer")
        if not gradient_predivide_factor > 0:
            raise NbdlError(f"DistributedTrainer: gradient_predivide_factor must be > 0, got "
                            f"{gradient_predivide_factor!r}")
        kv = create_kvstore("horovod")
        if compression is not None:
            kv.set_gradient_compression(compression)
        # each bucket is divided by the factor before the sum (read when the
        # buckets are made, in Trainer.__init__)
        factor = float(gradient_predivide_factor)
        self._grad_prescale = 1.0 / factor
        super().__init__(params, optimizer, optimizer_params, kvstore=kv,
                         compression_params=None, update_on_kvstore=False,
                         bucket_size_mb=bucket_size_mb)
        # the average over the ranks, folded into the optimizer's rescale
        self._scale *= factor / kv.num_workers
        self._prefix = prefix
