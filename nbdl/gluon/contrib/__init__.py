"""``gluon.contrib`` (MXNet 1.x): the experimental Gluon namespace.  nbdl
provides its recurrent cells, ``gluon.contrib.rnn``, which are nbdl's
``gluon.rnn`` cells under their 1.x home, and ``gluon.contrib.nn``'s
``SyncBatchNorm``."""
from . import nn, rnn  # noqa: F401

__all__ = ["nn", "rnn"]
