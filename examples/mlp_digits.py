"""nbdl's main demo: an MXNet-style symbolic MLP trained on scikit-learn's
bundled digits (8x8 images, 10 classes) with plain SGD through a bound
executor, then the executor's memory table.

    python examples/mlp_digits.py [--epochs 40] [--batch-size 32]
"""
import argparse
import time

import numpy as np

import nbdl


def build_mlp(hidden=(128, 128), classes=10):
    x = nbdl.sym.var("data")
    for i, h in enumerate(hidden):
        x = nbdl.sym.FullyConnected(x, num_hidden=h, name=f"fc{i + 1}")
        x = nbdl.sym.Activation(x, act_type="relu", name=f"relu{i + 1}")
    x = nbdl.sym.FullyConnected(x, num_hidden=classes, name=f"fc{len(hidden) + 1}")
    return nbdl.sym.SoftmaxOutput(x, name="softmax")


def load_digits(seed=0):
    from sklearn.datasets import load_digits as _load
    d = _load()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.float32)
    idx = np.random.RandomState(seed).permutation(len(x))
    n_test = len(x) // 5
    return x[idx[n_test:]], y[idx[n_test:]], x[idx[:n_test]], y[idx[:n_test]]


def init_params(ex, seed=0):
    rng = np.random.RandomState(seed)
    params = {}
    for name, arr in ex.arg_dict.items():
        if name.endswith("_weight"):
            fan_out, fan_in = arr.shape
            bound = np.sqrt(6.0 / (fan_in + fan_out))          # Xavier uniform
            params[name] = rng.uniform(-bound, bound, arr.shape).astype(np.float32)
        elif name.endswith("_bias"):
            params[name] = np.zeros(arr.shape, np.float32)
    ex.copy_params_from(params)


def accuracy(ex, x, y, batch):
    correct = 0
    for i in range(0, len(x) - batch + 1, batch):
        out = ex.forward(is_train=False, data=x[i:i + batch])[0].asnumpy()
        correct += int((out.argmax(axis=1) == y[i:i + batch]).sum())
    n = (len(x) // batch) * batch
    return correct / n


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.1)
    args = p.parse_args(argv)

    xtr, ytr, xte, yte = load_digits()
    net = build_mlp()
    ex = net.simple_bind(nbdl.cpu(), grad_req="write", data=(args.batch_size, xtr.shape[1]))
    init_params(ex)
    params = [n for n in net.list_arguments() if n not in ("data", "softmax_label")]
    weights = [ex.arg_dict[n] for n in params]
    grads = [ex.grad_dict[n] for n in params]
    lr = np.float32(args.lr)
    bs = args.batch_size
    rng = np.random.RandomState(1)
    t0 = time.perf_counter()
    for epoch in range(args.epochs):
        perm = rng.permutation(len(xtr))
        for i in range(0, len(xtr) - bs + 1, bs):
            idx = perm[i:i + bs]
            ex.forward(is_train=True, data=xtr[idx], softmax_label=ytr[idx])
            ex.backward()
            for w, g in zip(weights, grads):
                # SoftmaxOutput's gradient is summed over the batch (normalization='null').
                w -= g * (lr / bs)
        if epoch % 10 == 9 or epoch == args.epochs - 1:
            print(f"epoch {epoch + 1:3d}  train acc {accuracy(ex, xtr, ytr, bs):.4f}  "
                  f"held-out acc {accuracy(ex, xte, yte, bs):.4f}")
    elapsed = time.perf_counter() - t0
    acc = accuracy(ex, xte, yte, bs)
    print(f"held-out accuracy {acc:.4f} after {args.epochs} epochs ({elapsed:.1f} s)")
    print()
    print(nbdl.debug_str(ex))
    return acc


if __name__ == "__main__":
    main()
