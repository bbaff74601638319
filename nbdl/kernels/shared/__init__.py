"""Kernel code neither device owns, one module per op family: the elementwise
expression table, the broadcast/grouping plans, and the prepare-time views,
codes and scalars that the CPU and CUDA kernels both use.  It imports neither
``kernels.cpu`` nor ``kernels.cuda``."""
