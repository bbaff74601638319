"""The data-iterator protocol of MXNet 1.x: ``DataDesc``, ``DataBatch``, ``DataIter``.

An iterator yields ``DataBatch`` objects (lists of NDArrays for data and
label, plus the number of padded examples); ``provide_data`` /
``provide_label`` describe what it yields as ``DataDesc`` lists, which
``Module.bind`` reads to learn input names and shapes.
"""
from collections import namedtuple

import numpy as np

from ..errors import ArgumentError

__all__ = ["DataDesc", "DataBatch", "DataIter"]


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Name, shape, dtype and layout of one data or label input.

    A ``DataDesc`` is a ``(name, shape)`` tuple (it compares and unpacks as
    one, so ``name, shape = desc`` works) with two more attributes,
    ``dtype`` and ``layout``.

    Parameters
    ----------
    name : str
        Input name (``'data'``, ``'softmax_label'``).
    shape : tuple of int
        Shape of one batch of this input.
    dtype : numpy dtype or type, optional
        Element type; ``numpy.float32`` by default.
    layout : str, optional
        What each axis means, e.g. ``'NCHW'``; ``N`` marks the batch axis.
    """

    def __new__(cls, name, shape, dtype=np.float32, layout="NCHW"):
        ret = super().__new__(cls, name, shape)
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __getnewargs__(self):  # keeps dtype and layout through copy/pickle
        return (self.name, self.shape, self.dtype, self.layout)

    def __repr__(self):
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout):
        """The axis of the batch dimension in ``layout``.

        Parameters
        ----------
        layout : str or None
            A layout string such as ``'NCHW'``; None means axis 0.

        Returns
        -------
        int
            ``layout.find('N')``: 0 for ``'NCHW'``, 1 for ``'TNC'``, -1 when
            the layout has no batch axis.
        """
        if layout is None:
            return 0
        if not isinstance(layout, str):
            raise ArgumentError(f"DataDesc.get_batch_axis: layout must be a str or None, "
                                f"got {type(layout).__name__}")
        return layout.find("N")

    @staticmethod
    def get_list(shapes, types):
        """``DataDesc`` objects from ``(name, shape)`` and ``(name, dtype)`` pairs.

        Parameters
        ----------
        shapes : list of (str, tuple)
            Name and shape of each input.
        types : list of (str, dtype) or None
            Name and dtype of each input; every name in ``shapes`` must be
            present. None gives every input the default dtype.

        Returns
        -------
        list of DataDesc
        """
        if types is None:
            return [DataDesc(name, shape) for name, shape in shapes]
        type_dict = dict(types)
        missing = [name for name, _ in shapes if name not in type_dict]
        if missing:
            raise ArgumentError(f"DataDesc.get_list: types has no dtype for {missing} "
                                f"(types names: {sorted(type_dict)})")
        return [DataDesc(name, shape, type_dict[name]) for name, shape in shapes]


def _check_list(value, what):
    if value is not None and not isinstance(value, (list, tuple)):
        raise ArgumentError(f"DataBatch: {what} must be a list of NDArrays or None, "
                            f"got {type(value).__name__}")


class DataBatch:
    """One batch from a data iterator.

    Parameters
    ----------
    data : list of NDArray
        The inputs, each with ``batch_size`` examples along its batch axis.
    label : list of NDArray, optional
        The labels (an empty list or None when the iterator has none).
    pad : int, optional
        How many examples at the end of the batch are padding (repeats
        filling an incomplete last batch); predictions for them are ignored.
    index : numpy.ndarray, optional
        Example indices of this batch, where the iterator knows them.
    bucket_key : hashable, optional
        The bucket this batch belongs to (for bucketing modules).
    provide_data : list of DataDesc, optional
        Descriptions of ``data``, where they differ from the iterator's.
    provide_label : list of DataDesc, optional
        Descriptions of ``label``.
    """

    def __init__(self, data, label=None, pad=None, index=None,
                 bucket_key=None, provide_data=None, provide_label=None):
        _check_list(data, "data")
        _check_list(label, "label")
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        data_shapes = [d.shape for d in self.data] if self.data is not None else None
        label_shapes = [lab.shape for lab in self.label] if self.label else None
        return f"{type(self).__name__}: data shapes: {data_shapes} label shapes: {label_shapes}"


class DataIter:
    """Base class of the data iterators.

    A subclass either overrides ``next`` or the four methods it is built
    from: ``iter_next`` (advance; False at the end), ``getdata``,
    ``getlabel`` and ``getpad`` (the current batch's parts). Iterating stops
    with ``StopIteration``; ``reset`` starts the next epoch.

    Parameters
    ----------
    batch_size : int, optional
        Number of examples per batch (0 where the subclass sets it later).
    """

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        """Go back to the beginning of the data (the base iterator has no state)."""

    def next(self):
        """The next ``DataBatch``.

        Returns
        -------
        DataBatch
            Built from ``getdata()``, ``getlabel()``, ``getpad()`` and
            ``getindex()`` after a successful ``iter_next()``.

        Raises
        ------
        StopIteration
            At the end of the data.
        """
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(),
                             pad=self.getpad(), index=self.getindex())
        raise StopIteration

    def __next__(self):
        return self.next()

    def iter_next(self):
        """Move to the next batch; the base iterator is always at its end.

        Returns
        -------
        bool
            Whether there is a current batch after the move.
        """
        return False

    def getdata(self):
        """The data of the current batch (a list of NDArray; None in the base class)."""
        return None

    def getlabel(self):
        """The label of the current batch (a list of NDArray; None in the base class)."""
        return None

    def getindex(self):
        """The example indices of the current batch (numpy array), or None."""
        return None

    def getpad(self):
        """The number of padding examples in the current batch (0 in the base class)."""
        return 0
