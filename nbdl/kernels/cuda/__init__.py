"""CUDA kernels.  Imported only when a GPU device is used."""
