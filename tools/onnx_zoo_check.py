"""Export every model of nbdl.gluon.model_zoo.vision to ONNX and check it:
onnx.checker's full check, onnxruntime against nbdl at batch 1 and (through
the dynamic batch axis) batch 2, and import back into nbdl.

    python tools/onnx_zoo_check.py            # all models
    python tools/onnx_zoo_check.py resnet50_v1 densenet121

Prints one line per model (max relative error of each check) and exits 1 if
any model fails or differs by more than 1e-4 (relative to the output's scale).
"""
import sys
import tempfile
import time

import numpy as np


def size_for(name):
    if name.startswith("inception"):
        return 299
    if name.startswith(("squeezenet", "densenet")):
        return 224
    return 64 if name == "alexnet" else 32


def rel(a, b):
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def main(names):
    import onnx
    import onnxruntime as ort
    import nbdl
    from nbdl.gluon.model_zoo import vision
    from nbdl.onnx import export_block, import_to_gluon
    names = names or vision.list_models()
    bad = 0
    for name in names:
        t0 = time.time()
        size = size_for(name)
        try:
            net = vision.get_model(name)
            net.initialize(nbdl.init.Xavier())
            net.hybridize()
            rng = np.random.RandomState(0)
            xs = [rng.uniform(-1, 1, (b, 3, size, size)).astype(np.float32) for b in (1, 2)]
            wants = [net(nbdl.nd.array(x)).asnumpy() for x in xs]
            with tempfile.TemporaryDirectory() as tmp:
                path = export_block(net, f"{tmp}/m.onnx", [xs[0].shape], dynamic=True)
                onnx.checker.check_model(onnx.load(path), full_check=True)
                sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
                feed = sess.get_inputs()[0].name
                errs = [rel(sess.run(None, {feed: x})[0], w) for x, w in zip(xs, wants)]
                back = import_to_gluon(path, nbdl.cpu())
                errs.append(rel(back(nbdl.nd.array(xs[1])).asnumpy(), wants[1]))
            ok = max(errs) <= 1e-4
            bad += not ok
            print(f"{name:22s} {size:3d}px  ort b1 {errs[0]:.1e}  ort b2 {errs[1]:.1e}  "
                  f"import {errs[2]:.1e}  {'ok' if ok else 'MISMATCH'}  ({time.time() - t0:.0f} s)",
                  flush=True)
        except Exception as e:   # report and go on with the next model
            bad += 1
            print(f"{name:22s} FAILED: {type(e).__name__}: {e}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
