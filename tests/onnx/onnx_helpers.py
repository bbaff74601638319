"""Shared by the ONNX tests: run a model in onnxruntime, run a Symbol in nbdl."""
import numpy as np

import nbdl


def ort_run(model, feeds):
    """Outputs of onnxruntime for a ModelProto or a path."""
    import onnx
    import onnxruntime as ort
    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else model
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def nbdl_run(sym, feeds, params=None):
    """Outputs of nbdl's executor (inference) for ``sym`` with inputs and params."""
    args = {k: nbdl.nd.array(v, dtype=v.dtype) for k, v in feeds.items()}
    aux = {}
    for k, v in (params or {}).items():
        arr = v if isinstance(v, nbdl.NDArray) else nbdl.nd.array(v, dtype=np.asarray(v).dtype)
        (aux if k in sym.list_auxiliary_states() else args)[k] = arr
    ex = sym.bind(nbdl.cpu(), args=args, aux_states=aux, grad_req="null")
    return [o.asnumpy() for o in ex.forward(is_train=False)]


def assert_close(got, want, rtol=1e-4, atol=1e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale)
