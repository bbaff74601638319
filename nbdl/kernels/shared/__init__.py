"""Kernel code neither device owns: the elementwise expression table and the
broadcast/grouping plans that the CPU and CUDA kernel generators both use.
It imports neither ``kernels.cpu`` nor ``kernels.cuda``."""
