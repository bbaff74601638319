"""``ImageRecordIter``: batches of images from RecordIO files, as MXNet 1.x's
``mx.io.ImageRecordIter`` (``src/io/iter_image_recordio_2.cc``).

Records are read with ``nbdl.recordio`` (the files ``im2rec.py`` and
``nbdl.recordio.pack_img`` write), decoded with Pillow (``nbdl.imaging``),
augmented by ``image_aug.ImageAugmenter`` and written into ``(batch, C, H,
W)`` batches in RGB order. See docs/io.md for where nbdl differs from MXNet.
"""
import logging
import numbers
import os
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..collective import resolve_parts
from ..errors import ArgumentError, ShapeError
from ..imaging import decode_host
from ..ndarray import array as nd_array
from ..recordio import MXIndexedRecordIO, MXRecordIO, unpack
from ..ndarray.files import load as nd_load, save as nd_save
from .host_iter import BatchCursor, HostBatchIter, check_batch_size, check_int, check_names
from .image_aug import AUG_DEFAULTS, UNSUPPORTED_AUG, ImageAugmenter

__all__ = ["ImageRecordIter", "ImageRecordUInt8Iter", "ImageRecordInt8Iter"]

_log = logging.getLogger("nbdl.io")
_DTYPES = {None: np.float32, "float32": np.float32, "uint8": np.uint8, "int8": np.int8}
_NORM_DEFAULTS = {"mean_r": 0.0, "mean_g": 0.0, "mean_b": 0.0, "mean_a": 0.0, "std_r": 1.0,
                  "std_g": 1.0, "std_b": 1.0, "std_a": 1.0, "scale": 1.0,
                  "max_random_contrast": 0.0, "max_random_illumination": 0.0}
# MXNet's parameters that tune its C++ machinery (threads, prefetching, pinned
# memory, chunked reading): accepted, with no effect on the batches here.
_MACHINERY = {"prefetch_buffer": 4, "ctx": "gpu", "device_id": 0, "verbose": True,
              "shuffle_chunk_size": 0, "shuffle_chunk_seed": 0, "aug_seq": "aug_default"}


def _record_files(path, what):
    """[(file, byte offset of the file in the concatenated stream)] for a
    ``.rec`` file or a directory of them, and the stream's total size."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ArgumentError(f"{what}: path_imgrec must name a .rec file or a directory, "
                            f"got {path!r}")
    path = os.fspath(path)
    if os.path.isdir(path):
        names = [os.path.join(path, n) for n in sorted(os.listdir(path))]
        names = [n for n in names if os.path.isfile(n)]
    elif os.path.isfile(path):
        names = [path]
    else:
        raise ArgumentError(f"{what}: path_imgrec {path!r} is not a file or directory")
    files, total = [], 0
    for name in names:
        files.append((name, total))
        total += os.path.getsize(name)
    return files, total


def _read_imglist(path, label_width, what):
    """{image index: float32 labels} from an ``.lst`` file (index, labels, path)."""
    labels = {}
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            try:
                if len(fields) < 1 + label_width:
                    raise ValueError
                key = int(float(fields[0]))
                labels[key] = np.array(fields[1:1 + label_width], dtype=np.float32)
            except ValueError:
                raise ShapeError(f"{what}: {path} line {lineno} is {line.strip()!r}; expected "
                                 f"an image index, {label_width} label(s) and a path") from None
    return labels


class ImageRecordIter(HostBatchIter):
    """Iterates over the images of RecordIO files in batches (MXNet 1.x's
    ``mx.io.ImageRecordIter``).

    Each record holds an image (JPEG, PNG, ... as ``im2rec.py`` or
    ``nbdl.recordio.pack_img`` writes it) behind an ``IRHeader``. An image is
    decoded with ``data_shape[0]`` channels (1 gray, 3 RGB, 4 RGBA), its
    shorter edge resized to ``resize``, cropped to ``data_shape`` (centred,
    or at random with ``rand_crop``; a smaller image is scaled up first),
    mirrored (``mirror``, or at random with ``rand_mirror``) and normalised to
    ``(pixel - mean) * scale / std`` (float32 output; ``dtype='uint8'`` keeps
    the pixels, ``'int8'`` subtracts the rounded mean). Labels are the
    header's label (``label_width`` 1), its array of ``label_width`` labels,
    or the ``path_imglist`` file's labels for the header's id. Data has shape
    ``(batch_size,) + data_shape``, labels ``(batch_size,)`` or
    ``(batch_size, label_width)``. Images are read in file order;
    ``shuffle`` shuffles every epoch. ``getindex()`` gives the records'
    header ids.

    With ``round_batch`` (the default) an incomplete last batch is filled
    from the start (``pad`` counts those images) and the next epoch goes on
    after them, as MXNet; without it the last batch's missing images are
    zeros and ``pad`` counts them.

    Parameters
    ----------
    path_imgrec : str
        The ``.rec`` file (or a directory whose files, in name order, are
        read as one).
    data_shape : tuple of int
        ``(channels, height, width)`` of an output image; channels 1, 3 or 4.
    batch_size : int
        Images per batch.
    path_imgidx : str, optional
        The ``.idx`` index of ``path_imgrec``: records are found through it
        (``num_parts`` then splits them by count rather than by bytes).
    path_imglist : str, optional
        An ``.lst`` file (``index<TAB>label(s)<TAB>path`` per line) whose
        labels replace the records' own.
    label_width : int, optional
        Labels per image.
    shuffle : bool, optional
        Shuffle the images every epoch.
    seed : int, optional
        Seed of the shuffle (and of the augmentations without ``seed_aug``).
    round_batch : bool, optional
        Fill an incomplete last batch from the start (see above).
    num_parts, part_index : int, optional
        Read only part ``part_index`` of ``num_parts`` (data-parallel
        workers): the records that start in that share of the file's bytes,
        or with ``path_imgidx`` that share of the records (MXNet's split).
        By default the ranks of a distributed job (``nbdl.collective``), else 1 and 0.
    preprocess_threads : int, optional
        Threads decoding and augmenting a batch.
    dtype : {'float32', 'uint8', 'int8'}, optional
        Type of the data (float32 by default; the integer types are not
        normalised).
    mean_r, mean_g, mean_b, mean_a : float, optional
        Per-channel means subtracted.
    std_r, std_g, std_b, std_a : float, optional
        Per-channel standard deviations divided by.
    scale : float, optional
        Multiplies the normalised pixels.
    mean_img : str, optional
        A file holding one ``(C, H, W)`` mean image (``nd.save`` format) to
        subtract instead of the per-channel means; when it does not exist,
        the mean of the augmented images of this part is computed and saved
        there first.
    mirror, rand_mirror : bool, optional
        Flip every image horizontally, or each with probability 0.5.
    max_random_contrast, max_random_illumination : float, optional
        Random contrast factor in ``1 +- max_random_contrast`` and offset in
        ``+- max_random_illumination`` (both times ``scale``) of the
        normalisation.
    seed_aug : int, optional
        Seed of the random augmentations.
    resize, rand_crop, random_resized_crop, min_random_area, max_random_area, \
min_aspect_ratio, max_aspect_ratio, min_crop_size, max_crop_size, pad, fill_value, \
inter_method, brightness, contrast, saturation : optional
        The augmentations of MXNet's ``aug_default`` (``image_aug.ImageAugmenter``).
    data_name, label_name : str, optional
        Names in ``provide_data`` / ``provide_label``.
    prefetch_buffer, ctx, device_id, verbose, shuffle_chunk_size, \
shuffle_chunk_seed, aug_seq : optional
        MXNet's settings of its C++ reader; accepted and without effect
        (``aug_seq`` must be ``'aug_default'``).
    last_batch_handle : str, optional
        Not a parameter of MXNet's ``ImageRecordIter``, which ignores it;
        accepted with a warning (``round_batch`` decides the last batch).
    """

    _default_dtype = None

    def __init__(self, *, path_imgrec, data_shape, batch_size, path_imgidx="",
                 path_imglist="", label_width=1, shuffle=False, seed=0, round_batch=True,
                 num_parts=None, part_index=None, preprocess_threads=4, dtype=None, mean_img="",
                 mirror=False, rand_mirror=False, seed_aug=None, data_name="data",
                 label_name="softmax_label", last_batch_handle=None, **kwargs):
        what = self._what = type(self).__name__
        batch_size = check_batch_size(batch_size, what)
        check_names(data_name, label_name, what)
        aug, norm = self._split_kwargs(kwargs, what)
        if last_batch_handle is not None:
            warnings.warn(f"{what}: MXNet's ImageRecordIter has no last_batch_handle and "
                          f"ignores it; round_batch decides what the last batch holds",
                          stacklevel=2)
        dtype = self._default_dtype if dtype is None else dtype
        if dtype not in _DTYPES:
            raise ArgumentError(f"{what}: dtype must be 'float32', 'uint8' or 'int8', "
                                f"got {dtype!r}")
        if (not isinstance(data_shape, (tuple, list)) or len(data_shape) != 3
                or not all(isinstance(d, numbers.Integral) and not isinstance(d, bool)
                           and d > 0 for d in data_shape) or data_shape[0] not in (1, 3, 4)):
            raise ArgumentError(f"{what}: data_shape must be (channels, height, width) with "
                                f"1, 3 or 4 channels and positive sizes, got {data_shape!r}")
        self.data_shape = tuple(int(d) for d in data_shape)
        self.label_width = check_int(label_width, what, "label_width", 1)
        num_parts, part_index = resolve_parts(num_parts, part_index, what)
        self._threads = check_int(preprocess_threads, what, "preprocess_threads", 1)
        seed = check_int(seed, what, "seed")
        super().__init__(batch_size, data_name, label_name)
        self._dtype = np.dtype(_DTYPES[dtype])
        self._aug = ImageAugmenter(self.data_shape, what, **aug)
        self._mirror, self._rand_mirror = bool(mirror), bool(rand_mirror)
        self._norm = norm
        self._records = self._part_records(path_imgrec, path_imgidx, num_parts, part_index)
        self._labels = (_read_imglist(path_imglist, self.label_width, what)
                        if path_imglist else None)
        shuffle_rng = np.random.RandomState(seed)
        new_pass = ((lambda: shuffle_rng.permutation(len(self._records))) if shuffle
                    else None)
        self._aug_rng = np.random.RandomState(seed if seed_aug is None
                                              else check_int(seed_aug, what, "seed_aug"))
        self._pool = None
        self._mean = self._mean_image(mean_img) if mean_img else None
        self._cursor = BatchCursor(len(self._records), batch_size, round_batch, what,
                                   new_pass=new_pass, source="images of this part")
        self._describe((batch_size,) + self.data_shape, self._dtype,
                       (batch_size, self.label_width), np.float32)

    @staticmethod
    def _split_kwargs(kwargs, what):
        aug, norm = {}, dict(_NORM_DEFAULTS)
        for key, value in kwargs.items():
            if key in AUG_DEFAULTS:
                aug[key] = value
            elif key in _NORM_DEFAULTS:
                if isinstance(value, bool) or not isinstance(value, numbers.Real):
                    raise ArgumentError(f"{what}: {key} must be a number, got {value!r}")
                norm[key] = float(value)
            elif key in UNSUPPORTED_AUG:
                if value != UNSUPPORTED_AUG[key]:
                    raise ArgumentError(f"{what}: {key}={value!r} is not implemented in nbdl "
                                        f"(MXNet's affine, HSL and PCA augmentations are not)")
            elif key in _MACHINERY:
                if key == "aug_seq" and value != "aug_default":
                    raise ArgumentError(f"{what}: aug_seq must be 'aug_default', got {value!r}")
            else:
                raise ArgumentError(f"{what}: unknown argument {key!r}")
        if any(norm[f"std_{c}"] == 0 for c in "rgba"):
            raise ArgumentError(f"{what}: std_r, std_g, std_b and std_a must not be 0")
        return aug, norm

    def _part_records(self, path_imgrec, path_imgidx, num_parts, part_index):
        """[(reader, byte offset)] of the records of this part, in file order."""
        what = self._what
        files, total = _record_files(path_imgrec, what)
        if path_imgidx:
            if len(files) != 1:
                raise ArgumentError(f"{what}: path_imgidx needs path_imgrec to be one file")
            reader = MXIndexedRecordIO(path_imgidx, files[0][0], "r")
            records = [(reader, off) for off in sorted(reader.idx.values())]
            step = -(-len(records) // num_parts)  # dmlc splits an index by count
            return records[step * part_index:step * (part_index + 1)]
        step = -(-total // num_parts)
        step += -step % 4  # dmlc splits bytes in 4-byte-aligned steps
        lo, hi = step * part_index, step * (part_index + 1)
        records = []
        for name, base in files:
            reader = MXRecordIO(name, "r")
            records += [(reader, off) for off in reader.record_offsets()
                        if lo <= base + off < hi]
        return records

    def _label(self, header):
        if self._labels is not None:
            try:
                return self._labels[int(header.id)]
            except KeyError:
                raise ShapeError(f"{self._what}: path_imglist has no label for the record "
                                 f"with id {header.id}") from None
        label = np.atleast_1d(np.asarray(header.label, dtype=np.float32))
        if label.size != self.label_width:
            raise ShapeError(f"{self._what}: a record holds {label.size} label(s) but "
                             f"label_width is {self.label_width} (give an imglist, or pack "
                             f"the records with {self.label_width}-wide labels)")
        return label

    def _decode(self, raw, seed):
        """(augmented HWC uint8 image, header, random stream) of one record."""
        header, payload = unpack(raw, self._what)
        channels = self.data_shape[0]
        img = decode_host(payload, 0 if channels == 1 else 1, self._what,
                          keep_channels=channels == 4)
        if img.shape[2] != channels:
            raise ShapeError(f"{self._what}: the image of record id {header.id} has "
                             f"{img.shape[2]} channels, data_shape asks for {channels}")
        rng = np.random.RandomState(seed)
        return self._aug(img, rng), header, rng

    def _process(self, raw, seed, out):
        """Decode, augment and normalise one record into ``out`` (C, H, W); its label."""
        img, header, rng = self._decode(raw, seed)
        n = self._norm
        flip = (self._rand_mirror and rng.uniform() < 0.5) or self._mirror
        chw = img.transpose(2, 0, 1)
        c = chw.shape[0]
        if self._dtype == np.float32:
            mc, mi = n["max_random_contrast"], n["max_random_illumination"]
            contrast = np.float32((rng.uniform() * mc * 2 - mc + 1) * n["scale"])
            illum = np.float32((rng.uniform() * mi * 2 - mi) * n["scale"])
            std = np.array([n["std_" + k] for k in "rgba"[:c]] if c > 1 else [n["std_r"]],
                           dtype=np.float32)[:, None, None]
            vals = (chw.astype(np.float32) - self._mean_of(c)) * (contrast / std) + illum / std
        elif self._dtype == np.int8:
            mean = self._mean_of(c)
            mean = np.sign(mean) * np.floor(np.abs(mean) + np.float32(0.5))  # C's round
            vals = np.clip(chw.astype(np.float32) - mean, -128, 127)
        else:
            vals = chw
        out[...] = vals[:, :, ::-1] if flip else vals
        return self._label(header), header.id

    def _mean_of(self, c):
        if self._mean is not None:
            return self._mean
        n = self._norm
        means = [n["mean_" + k] for k in "rgba"[:c]] if c > 1 else [n["mean_r"]]
        return np.array(means, dtype=np.float32)[:, None, None]

    def _mean_image(self, path):
        """The mean image of ``path``, computed and saved there when it is missing."""
        what = self._what
        if os.path.isfile(path):
            arrays = nd_load(path)
            arrays = list(arrays.values()) if isinstance(arrays, dict) else list(arrays)
            if len(arrays) != 1 or arrays[0].shape != self.data_shape:
                raise ShapeError(f"{what}: mean_img {path!r} must hold one array of shape "
                                 f"{self.data_shape}, got "
                                 f"{[tuple(a.shape) for a in arrays]}")
            return arrays[0].asnumpy().astype(np.float32)
        _log.info("%s: computing the mean image into %s", what, path)
        total = np.zeros(self.data_shape, dtype=np.float64)
        for reader, off in self._records:
            img, _, _ = self._decode(reader.read_at(off), self._aug_rng.randint(2 ** 31))
            total += img.transpose(2, 0, 1)
        mean = (total / max(len(self._records), 1)).astype(np.float32)
        nd_save(path, {"mean_img": nd_array(mean)})
        return mean

    def _next_batch(self):
        nxt = self._cursor.next()
        if nxt is None:
            return None
        positions, pad = nxt
        raws = [self._records[p][0].read_at(self._records[p][1]) for p in positions]
        seeds = self._aug_rng.randint(2 ** 31, size=len(raws))
        data = np.zeros((self.batch_size,) + self.data_shape, dtype=self._dtype)
        label = np.zeros((self.batch_size, self.label_width), dtype=np.float32)
        index = np.zeros(self.batch_size, dtype=np.uint64)
        jobs = [(raws[i], seeds[i], data[i]) for i in range(len(raws))]
        if self._threads > 1 and len(jobs) > 1:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix=self._what)
            results = list(self._pool.map(lambda job: self._process(*job), jobs))
        else:
            results = [self._process(*job) for job in jobs]
        for i, (lab, rid) in enumerate(results):
            label[i], index[i] = lab, rid
        return data, label, pad, index

    def _before_first(self):
        self._cursor.before_first()

    def __del__(self):
        if getattr(self, "_pool", None) is not None:
            self._pool.shutdown(wait=False)


class ImageRecordUInt8Iter(ImageRecordIter):
    """``ImageRecordIter`` with uint8 data (MXNet's deprecated spelling of
    ``ImageRecordIter(dtype='uint8')``): the pixels, augmented and mirrored,
    not normalised. Parameters as ``ImageRecordIter``'s."""

    _default_dtype = "uint8"


class ImageRecordInt8Iter(ImageRecordIter):
    """``ImageRecordIter`` with int8 data (MXNet's deprecated spelling of
    ``ImageRecordIter(dtype='int8')``): pixels minus the rounded means,
    saturated to int8. Parameters as ``ImageRecordIter``'s."""

    _default_dtype = "int8"
