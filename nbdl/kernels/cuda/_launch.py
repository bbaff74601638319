"""Launch configuration shared by the CUDA kernels."""
THREADS = 128


def grid1d(n, threads=THREADS):
    """(blocks, threads) covering ``n`` elements with a grid-stride loop."""
    blocks = max(1, min((n + threads - 1) // threads, 65535))
    return blocks, threads


def launcher(kernel, n):
    """A function that launches ``kernel`` over ``n`` elements with the
    executor's ``fn(*arrays, *scalars)`` convention."""
    blocks, threads = grid1d(n)
    configured = kernel[blocks, threads]

    def fn(*args):
        configured(*args)
    return fn
