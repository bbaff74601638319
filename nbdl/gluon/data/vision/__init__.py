"""``nbdl.gluon.data.vision``: vision datasets, image transforms, and the
RecordIO and image helpers they use (Gluon's ``gluon.data.vision``)."""
from . import image, recordio, transforms  # noqa: F401
from .datasets import (CIFAR10, CIFAR100, MNIST, DatasetNotFoundError,  # noqa: F401
                       FashionMNIST, ImageFolderDataset, ImageRecordDataset,
                       RecordFileDataset)
from .image import FormatError, ImageError  # noqa: F401
from . import datasets  # noqa: F401
