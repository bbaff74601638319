"""Cross-check of model files with Apache MXNet 1.9.1 (run by hand; MXNet is
not a dependency of nbdl or its tests).

    /tmp/mxvenv/bin/python perf/compare/mxnet_files_roundtrip.py write   # MXNet saves an MLP checkpoint
    python -c "<load it with nbdl.model.load_checkpoint, compare outputs, save_checkpoint it back>"
    /tmp/mxvenv/bin/python perf/compare/mxnet_files_roundtrip.py read    # MXNet loads nbdl's files

On 2026-11-29: nbdl's forward on MXNet's files matched MXNet's to 6e-8, and
MXNet's forward on the files nbdl wrote back matched to 0.0.
"""
import mxnet as mx, numpy as np, sys
mode = sys.argv[1]
if mode == "write":
    x = mx.sym.var("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=16, name="fc1"), act_type="relu", name="relu1")
    h = mx.sym.Dropout(h, p=0.3, name="drop")
    out = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=5, name="fc2"), name="softmax")
    mod_args = {}
    rng = np.random.RandomState(0)
    arg_shapes, _, _ = out.infer_shape(data=(4, 8))
    for n, s in zip(out.list_arguments(), arg_shapes):
        if n not in ("data", "softmax_label"):
            mod_args[n] = mx.nd.array(rng.uniform(-0.5, 0.5, s))
    mx.model.save_checkpoint("/tmp/xcheck/mxmlp", 1, out, mod_args, {})
    xin = rng.rand(4, 8).astype(np.float32)
    np.save("/tmp/xcheck/x.npy", xin)
    ex = out.bind(mx.cpu(), args=dict(mod_args, data=mx.nd.array(xin), softmax_label=mx.nd.zeros(4)))
    np.save("/tmp/xcheck/mx_out.npy", ex.forward()[0].asnumpy())
else:
    sym, args, aux = mx.model.load_checkpoint("/tmp/xcheck/nbmlp", 2)
    xin = np.load("/tmp/xcheck/x.npy")
    ex = sym.bind(mx.cpu(), args=dict(args, data=mx.nd.array(xin), softmax_label=mx.nd.zeros(4)))
    np.save("/tmp/xcheck/mx_out2.npy", ex.forward()[0].asnumpy())
    print("mxnet loaded nbdl files; args", sorted(args))
