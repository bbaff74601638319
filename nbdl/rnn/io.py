"""MXNet 1.x's ``mx.rnn.io``: ``encode_sentences`` (tokens to integer ids)
and ``BucketSentenceIter`` (language-model batches grouped by length, for
``BucketingModule``)."""
import bisect
import logging
import random

import numpy as np

from ..errors import ArgumentError
from ..io import DataBatch, DataDesc, DataIter
from ..ndarray import array as nd_array

__all__ = ["encode_sentences", "BucketSentenceIter"]

_log = logging.getLogger("nbdl.rnn")


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key="\n", start_label=0,
                     unknown_token=None):
    """Encode sentences of tokens as lists of integer ids, building (or
    extending) the vocabulary.

    Parameters
    ----------
    sentences : list of list of str
        The sentences, each a list of tokens.
    vocab : dict of str to int, optional
        An existing vocabulary; with it, a token it lacks is an error unless
        ``unknown_token`` is given. Without it a new one is built (holding
        ``invalid_key`` -> ``invalid_label``).
    invalid_label : int, optional
        The id kept for ``invalid_key`` (end of sentence); never given to a token.
    invalid_key : str, optional
        The key of ``invalid_label``.
    start_label : int, optional
        The first id given to a new token.
    unknown_token : str, optional
        Tokens missing from ``vocab`` are encoded as this token (added to
        the vocabulary on first use; every unknown token then gets its id,
        where MXNet gave each new one a fresh id and moved the token to it).

    Returns
    -------
    result : list of list of int
        The encoded sentences.
    vocab : dict of str to int
        The vocabulary (the one given, extended, or a new one).
    """
    idx = start_label
    if vocab is None:
        vocab = {invalid_key: invalid_label}
        new_vocab = True
    else:
        new_vocab = False
    res = []
    for sent in sentences:
        coded = []
        for word in sent:
            if word not in vocab:
                if not (new_vocab or unknown_token):
                    raise ArgumentError(f"encode_sentences: unknown token {word!r} (give "
                                        f"unknown_token, or no vocab to build one)")
                if unknown_token:
                    word = unknown_token
                if word not in vocab:  # MXNet gave the unknown token a new id each time
                    if idx == invalid_label:
                        idx += 1
                    vocab[word] = idx
                    idx += 1
            coded.append(vocab[word])
        res.append(coded)
    return res, vocab


class BucketSentenceIter(DataIter):
    """Batches of encoded sentences grouped in buckets by length, for
    language models: each sentence is padded with ``invalid_label`` to its
    bucket's length (the smallest bucket it fits), and its label at each
    step is the next token (``invalid_label`` after the last).

    Each batch holds ``batch_size`` sentences of one bucket and carries the
    bucket's length as ``bucket_key``; a bucket's last incomplete batch is
    left out, as are sentences longer than the largest bucket (with a
    warning). ``reset()`` shuffles the batches with Python's ``random`` and
    each bucket's sentences with numpy's global generator, as MXNet does, so
    the same seeds give MXNet's batches.

    Parameters
    ----------
    sentences : list of list of int
        Encoded sentences (``encode_sentences``).
    batch_size : int
        Sentences per batch.
    buckets : list of int, optional
        The bucket lengths; by default every length that at least
        ``batch_size`` sentences have. Buckets no sentence falls into are dropped.
    invalid_label : int, optional
        Padding and end-of-sentence label.
    data_name, label_name : str, optional
        Names in ``provide_data`` / ``provide_label``.
    dtype : str, optional
        Type of data and labels (``'float32'``).
    layout : {'NT', 'TN'}, optional
        Batch-major ``(batch, length)`` or time-major ``(length, batch)``.
    """

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1, data_name="data",
                 label_name="softmax_label", dtype="float32", layout="NT"):
        super().__init__()
        if layout not in ("NT", "TN"):
            raise ArgumentError(f"BucketSentenceIter: invalid layout {layout!r}: must be 'NT' "
                                f"(batch major) or 'TN' (time major)")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ArgumentError(f"BucketSentenceIter: batch_size must be a positive int, got "
                                f"{batch_size!r}")
        if not buckets:
            buckets = [i for i, j in enumerate(np.bincount([len(s) for s in sentences]))
                       if j >= batch_size]
        buckets = sorted(buckets)
        if not buckets:
            raise ArgumentError(f"BucketSentenceIter: no sentence length is shared by "
                                f"batch_size={batch_size} sentences; give buckets")
        ndiscard = 0
        data = [[] for _ in buckets]
        for sent in sentences:
            buck = bisect.bisect_left(buckets, len(sent))
            if buck == len(buckets):
                ndiscard += 1
                continue
            buff = np.full((buckets[buck],), invalid_label, dtype=dtype)
            buff[:len(sent)] = sent
            data[buck].append(buff)
        self.buckets = [b for b, d in zip(buckets, data) if d]
        self.data = [np.asarray(d, dtype=dtype) for d in data if d]
        if ndiscard:
            _log.warning("BucketSentenceIter: discarded %d sentences longer than the largest "
                         "bucket.", ndiscard)
        if not self.data:
            raise ArgumentError("BucketSentenceIter: no sentence fits in a bucket")
        self.batch_size = batch_size
        self.data_name, self.label_name = data_name, label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.nddata, self.ndlabel = [], []
        self.major_axis = layout.find("N")
        self.layout = layout
        self.default_bucket_key = max(self.buckets)
        shape = ((batch_size, self.default_bucket_key) if self.major_axis == 0
                 else (self.default_bucket_key, batch_size))
        self.provide_data = [DataDesc(name=data_name, shape=shape, layout=layout)]
        self.provide_label = [DataDesc(name=label_name, shape=shape, layout=layout)]
        self.idx = []
        for i, buck in enumerate(self.data):
            self.idx.extend((i, j) for j in range(0, len(buck) - batch_size + 1, batch_size))
        self.curr_idx = 0
        self.reset()

    def reset(self):
        """Shuffle the batches and the sentences of each bucket, and start over."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for buck in self.data:
            np.random.shuffle(buck)
        self.nddata, self.ndlabel = [], []
        for buck in self.data:
            label = np.empty_like(buck)
            label[:, :-1] = buck[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(nd_array(buck, dtype=self.dtype))
            self.ndlabel.append(nd_array(label, dtype=self.dtype))

    def next(self):
        """The next batch (a ``DataBatch`` with ``bucket_key``)."""
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j:j + self.batch_size]
        label = self.ndlabel[i][j:j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[i],
                         provide_data=[DataDesc(name=self.data_name, shape=data.shape,
                                                layout=self.layout)],
                         provide_label=[DataDesc(name=self.label_name, shape=label.shape,
                                                 layout=self.layout)])
