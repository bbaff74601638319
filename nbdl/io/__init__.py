"""MXNet 1.x's data iterators (``mx.io``).

``DataDesc`` / ``DataBatch`` / ``DataIter`` are the protocol Module-style
training code consumes; ``NDArrayIter`` iterates over in-memory arrays,
``ResizeIter`` and ``PrefetchingIter`` wrap other iterators, and ``CSVIter``,
``MNISTIter`` and ``ImageRecordIter`` read local files. Batches hold nbdl NDArrays.
"""
from .base import DataBatch, DataDesc, DataIter
from .csv_iter import CSVIter
from .image_record_iter import ImageRecordInt8Iter, ImageRecordIter, ImageRecordUInt8Iter
from .mnist_iter import MNISTIter
from .ndarray_iter import NDArrayIter
from .wrappers import PrefetchingIter, ResizeIter

__all__ = ["DataDesc", "DataBatch", "DataIter", "NDArrayIter", "ResizeIter",
           "PrefetchingIter", "CSVIter", "MNISTIter", "ImageRecordIter", "ImageRecordUInt8Iter",
           "ImageRecordInt8Iter"]
