"""_contrib_fft and _contrib_ifft (rules only; kernels in
``nbdl.kernels.*.fft``, the transform in ``nbdl.kernels.shared.fft``), with
MXNet 1.9.1's names, inputs and attributes (``compute_size`` is accepted:
it only batched cuFFT's plans there).

- ``fft(data)``: the DFT of each row of real (N, d) or (N1, N2, N3, d) data
  along the last axis, as MXNet's interleaved complex layout
  ``[re0, im0, re1, im1, ...]`` of shape (..., 2d).
- ``ifft(data)``: the real part of the *unnormalised* inverse DFT of each
  interleaved complex row (..., 2d) -> (..., d) (MXNet divides by nothing;
  ``numpy.fft.ifft`` divides by d).

Each is the other's gradient (``fft``'s is ``ifft`` of the head gradient,
``ifft``'s is ``fft`` of it).  Any length: a mixed-radix Stockham FFT over
the length's prime factors, computed in float64 (a large prime factor p
costs O(d p) for its stage).  MXNet 1.9.1 runs these on GPUs only; nbdl on
both devices.  float32 and float64.
"""
from .attrs import Attr
from .ir import backward_node
from .registry import OpDef, kernel_paths, register, shape_error
from .rules import known_shape, same_type

FFT_ATTRS = {"compute_size": Attr("int", 128, doc="Accepted (MXNet's cuFFT batch size).")}


def _rows_rule(opname, inverse):
    def rule(attrs, in_shapes, out_shapes):
        d = known_shape(in_shapes[0])
        if d is None:
            return in_shapes, out_shapes
        if len(d) not in (2, 4):
            raise shape_error(opname, f"data must be 2-D (N, d) or 4-D (N1, N2, N3, d), got {d}",
                              in_shapes)
        if inverse and d[-1] % 2:
            raise shape_error(opname, f"data's last axis holds interleaved complex numbers and "
                              f"must be even, got {d}", in_shapes)
        last = d[-1] // 2 if inverse else d[-1] * 2
        return [d], [d[:-1] + (last,)]
    return rule


def _grad_by(other):
    def grad(node, out_grads):
        g = backward_node(other, [out_grads[0]], node)
        return [g.output(0)]
    return grad


for _name, _inverse, _doc in (
        ("_contrib_fft", False, "DFT of real rows, interleaved complex output."),
        ("_contrib_ifft", True, "Real part of the unnormalised inverse DFT of complex rows.")):
    register(OpDef(
        name=_name, attrs=dict(FFT_ATTRS), infer_shape=_rows_rule(_name, _inverse),
        infer_type=same_type, gradient=_grad_by("_contrib_ifft" if not _inverse else "_contrib_fft"),
        kernels={"cpu": f"nbdl.kernels.cpu.fft:prepare_{_name[9:]}",
                 "cuda": f"nbdl.kernels.cuda.fft:prepare_{_name[9:]}"},
        temp=kernel_paths("fft", "temp_fft"),
        supports_add=True, doc=_doc))
