"""A 1.x-style symbolic LSTM language model: unrolled with nbdl.rnn cells,
bound with Module, trained a few steps, checkpointed with the weights
unpacked and reloaded; and bucketing over BucketSentenceIter."""
import numpy as np
import pytest

import nbdl
from nbdl import rnn, sym

VOCAB, EMBED, HIDDEN, T, BATCH = 12, 8, 16, 6, 4


def lm(seq_len):
    stack = rnn.SequentialRNNCell()
    stack.add(rnn.LSTMCell(HIDDEN, prefix="lstm_l0_"))
    stack.add(rnn.LSTMCell(HIDDEN, prefix="lstm_l1_"))
    embed = sym.Embedding(sym.var("data"), input_dim=VOCAB, output_dim=EMBED, name="embed")
    stack.reset()
    outputs, _ = stack.unroll(seq_len, embed, merge_outputs=True)
    pred = sym.FullyConnected(sym.Reshape(outputs, shape=(-1, HIDDEN)), num_hidden=VOCAB,
                              name="pred")
    label = sym.Reshape(sym.var("softmax_label"), shape=(-1,))
    return stack, sym.SoftmaxOutput(pred, label, name="softmax")


def cyclic_data(n):
    seq = np.arange(n * (T + 1)) % VOCAB  # each token predicts the next one
    data = np.stack([seq[i:i + T] for i in range(n)]).astype(np.float32)
    return data, np.stack([seq[i + 1:i + 1 + T] for i in range(n)]).astype(np.float32)


def test_lstm_lm_trains_checkpoints_and_reloads(tmp_path):
    nbdl.random.seed(0)
    stack, net = lm(T)
    data, label = cyclic_data(16)
    train = nbdl.io.NDArrayIter(data, label, batch_size=BATCH)
    mod = nbdl.mod.Module(net, context=nbdl.cpu())
    prefix = str(tmp_path / "lm")
    metric = nbdl.metric.Perplexity(ignore_label=None)
    mod.fit(train, eval_metric=metric, num_epoch=2, initializer=nbdl.init.Xavier(),
            optimizer="adam", optimizer_params={"learning_rate": 0.05},
            epoch_end_callback=rnn.do_rnn_checkpoint(stack, prefix, period=2))
    first = mod.score(train, nbdl.metric.Perplexity(ignore_label=None))[0][1]
    train.reset()
    with pytest.warns(UserWarning, match="already initialized"):
        mod.fit(train, eval_metric=metric, num_epoch=8, begin_epoch=2,
                optimizer_params={"learning_rate": 0.05})
    assert mod.score(train, nbdl.metric.Perplexity(ignore_label=None))[0][1] < first * 0.7
    # the checkpoint of epoch 2 holds the weights unpacked, gate by gate
    raw = nbdl.nd.load(f"{prefix}-0002.params")
    assert "arg:lstm_l0_i2h_f_weight" in raw and "arg:lstm_l0_i2h_weight" not in raw
    arg, aux = mod.get_params()
    rnn.save_rnn_checkpoint(stack, prefix, 10, net, arg, aux)
    sym2, arg2, aux2 = rnn.load_rnn_checkpoint(stack, prefix, 10)
    assert sorted(arg2) == sorted(arg)
    again = nbdl.mod.Module(sym2, context=nbdl.cpu())
    again.bind(data_shapes=train.provide_data, label_shapes=train.provide_label,
               for_training=False)
    again.set_params(arg2, aux2)
    np.testing.assert_allclose(again.predict(train).asnumpy(), mod.predict(train).asnumpy(),
                               rtol=1e-5, atol=1e-6)


def test_bucketing_module_over_bucket_sentence_iter():
    nbdl.random.seed(1)
    np.random.seed(1)
    rng = np.random.RandomState(2)
    sentences = [list(rng.randint(1, VOCAB, size=n)) for n in [3] * 8 + [5] * 8]
    it = rnn.BucketSentenceIter(sentences, BATCH, invalid_label=0)

    def sym_gen(seq_len):
        _, net = lm(seq_len)
        return net, ("data",), ("softmax_label",)

    mod = nbdl.mod.BucketingModule(sym_gen, default_bucket_key=it.default_bucket_key,
                                   context=nbdl.cpu())
    mod.fit(it, eval_metric=nbdl.metric.Perplexity(ignore_label=0), num_epoch=2,
            initializer=nbdl.init.Xavier(), optimizer="sgd",
            optimizer_params={"learning_rate": 0.1})
    ppl = mod.score(it, nbdl.metric.Perplexity(ignore_label=0))[0][1]
    assert np.isfinite(ppl) and 1 < ppl < 2 * VOCAB
    # every bucket shares the default bucket's parameters
    assert sorted(mod.get_params()[0]) == sorted(lm(5)[1].list_arguments()[1:-1] + [])
