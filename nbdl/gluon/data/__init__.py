"""``nbdl.gluon.data``: datasets, samplers, batchify functions and the
DataLoader (Gluon's ``gluon.data``)."""
from . import batchify  # noqa: F401
from .dataloader import DataLoader, WorkerError, WorkerTimeoutError  # noqa: F401
from .dataset import ArrayDataset, DataError, Dataset, SimpleDataset  # noqa: F401
from .sampler import (BatchSampler, FilterSampler, IntervalSampler, RandomSampler,  # noqa: F401
                      Sampler, SequentialSampler)
from . import vision  # noqa: F401
