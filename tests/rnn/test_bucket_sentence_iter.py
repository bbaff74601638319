"""nbdl.rnn.BucketSentenceIter and encode_sentences: buckets, padding, labels,
layouts, shuffling with the global generators, and bad input."""
import random

import numpy as np
import pytest

import nbdl
from nbdl.rnn import BucketSentenceIter, encode_sentences


def sentences():
    rng = np.random.RandomState(3)
    lengths = [2] * 5 + [3] * 4 + [5] * 3 + [9]
    return [list(rng.randint(1, 20, size=n)) for n in lengths]


def test_encode_sentences_builds_and_extends_a_vocabulary():
    coded, vocab = encode_sentences([["a", "b"], ["b", "c", "a"]], invalid_label=0,
                                    start_label=0)
    assert vocab == {"\n": 0, "a": 1, "b": 2, "c": 3}  # ids skip the invalid label
    assert coded == [[1, 2], [2, 3, 1]]
    coded, vocab = encode_sentences([["a", "x", "y"]], vocab=dict(vocab), unknown_token="<unk>",
                                    start_label=7)
    assert coded == [[1, 7, 7]] and vocab["<unk>"] == 7 and "x" not in vocab
    with pytest.raises(nbdl.ArgumentError, match="unknown token 'z'"):
        encode_sentences([["z"]], vocab={"a": 1})


def test_buckets_pad_and_shift_the_labels():
    it = BucketSentenceIter(sentences(), batch_size=2, buckets=[5, 3, 2, 4], invalid_label=-1)
    assert it.buckets == [2, 3, 5]  # sorted; the empty bucket 4 is dropped
    assert it.default_bucket_key == 5
    assert it.provide_data[0].shape == (2, 5) and it.provide_label[0].layout == "NT"
    batches = list(it)
    # 5 // 2 + 4 // 2 + 3 // 2 batches; the 9-token sentence is discarded
    assert sorted(b.bucket_key for b in batches) == [2, 2, 3, 3, 5]
    for b in batches:
        data, label = b.data[0].asnumpy(), b.label[0].asnumpy()
        assert data.shape == (2, b.bucket_key) == b.provide_data[0].shape
        np.testing.assert_array_equal(label[:, :-1], data[:, 1:])
        np.testing.assert_array_equal(label[:, -1], -1)
        assert b.pad == 0
    padded = [b for b in batches if b.bucket_key == 5][0].data[0].asnumpy()
    assert (padded == -1).sum() == 0  # the 5-token sentences fill their bucket
    with pytest.raises(StopIteration):
        next(it)
    it.reset()
    assert len(list(it)) == 5


def test_automatic_buckets_time_major_and_the_global_seeds():
    data = sentences()
    it = BucketSentenceIter(data, batch_size=3, layout="TN", dtype="int32")
    assert it.buckets == [2, 3, 5]  # the lengths at least 3 sentences have
    b = next(it)
    assert b.data[0].shape == (b.bucket_key, 3) and b.data[0].dtype == np.int32

    def epoch():
        random.seed(5)
        np.random.seed(5)
        it = BucketSentenceIter(data, batch_size=2, buckets=[3, 9])
        return [b.data[0].asnumpy().tolist() for b in it]

    assert epoch() == epoch()
    it = BucketSentenceIter(data, batch_size=2, buckets=[3, 9])
    padded = [x for b in it if b.bucket_key == 3 for x in b.data[0].asnumpy().tolist()]
    assert [-1.0] in [row[2:] for row in padded]  # 2-token sentences padded to 3


def test_bad_input():
    with pytest.raises(nbdl.ArgumentError, match="invalid layout 'NTC'"):
        BucketSentenceIter(sentences(), 2, layout="NTC")
    with pytest.raises(nbdl.ArgumentError, match="no sentence length is shared"):
        BucketSentenceIter(sentences(), 100)
    with pytest.raises(nbdl.ArgumentError, match="batch_size must be a positive int"):
        BucketSentenceIter(sentences(), 0)
