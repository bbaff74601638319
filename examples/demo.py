"""nbdl's main demo, the README's first command.

1. A Gluon MLP on scikit-learn's digits: autograd.record, loss.backward,
   trainer.step, a tqdm bar and metrics per epoch — hybridized (the graph is
   planned and run by the executor), then the same model eagerly, with the
   per-epoch losses compared.
2. The same task the MXNet 1.x way: an MLP Symbol with SoftmaxOutput,
   simple_bind, plain SGD, and the executor's memory table at the end.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gluon_mlp_digits  # noqa: E402
import mlp_digits  # noqa: E402


def main():
    print("== Gluon, hybridized (static_alloc, static_shape) ==")
    hyb, acc = gluon_mlp_digits.run(epochs=20, hybridize=True)
    print(f"held-out accuracy {acc:.4f}")
    print("\n== the same model, eager ==")
    eager, acc_e = gluon_mlp_digits.run(epochs=20, hybridize=False, verbose=False)
    diff = float(np.max(np.abs(np.array(hyb) - np.array(eager))))
    print(f"held-out accuracy {acc_e:.4f}; largest per-epoch loss difference "
          f"hybridized vs eager: {diff:.2e}")
    print("\n== Symbol + simple_bind + SGD (MXNet 1.x style) ==")
    mlp_digits.main(["--epochs", "40"])


if __name__ == "__main__":
    main()
