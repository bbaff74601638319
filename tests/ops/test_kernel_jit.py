"""``nbdl.kernels.shared.jit.njit``: Numba's njit, except that a call from
compiled code with constant arguments compiles the callee once per argument
*types* (Numba's own dispatcher compiles it once per constant value), and a
compile hook sees every new compilation first."""
import numpy as np

from nbdl.kernels.shared import jit


@jit.njit
def _helper(x, k, flag, pair):
    return x[0] * k + pair[1] + (1 if flag else 0)


@jit.njit
def _caller_a(x):
    return _helper(x, 0, True, (1, 2))


@jit.njit
def _caller_b(x):
    return _helper(x, 3, False, (4, 5))


def test_constants_do_not_specialise_the_callee():
    x = np.ones(2)
    assert _caller_a(x) == 3.0 and _caller_b(x) == 8.0
    assert _helper(x, 7, True, (0, 1)) == 9.0           # from Python: the same types
    assert len(_helper.signatures) == 1, _helper.signatures
    assert isinstance(_helper, jit.KernelDispatcher)


def test_options_reach_numba():
    @jit.njit(cache=False, error_model="numpy")
    def div(a, b):
        return a / b
    assert np.isinf(div(1.0, 0.0))
    assert div.targetoptions["error_model"] == "numpy"


def test_compile_hook_sees_new_compilations_only():
    seen = []

    @jit.njit
    def twice(a):
        return 2 * a

    old = jit.set_compile_hook(lambda fn, sig: seen.append((fn.py_func.__name__, sig)))
    try:
        twice(1)
        twice(2)             # compiled already: no second call of the hook
        twice(1.5)
    finally:
        assert jit.set_compile_hook(old) is not None
    names = [n for n, _ in seen if n == "twice"]
    assert len(names) == 2


def test_cache_is_stamped_with_the_kernels_tree(tmp_path):
    """A kernel's on-disk cache entry is invalid once any file of the kernel
    tree changes (not only its own file, which is all Numba checks)."""
    import shutil
    root = tmp_path / "kernels"
    shutil.copytree(jit._KERNELS_ROOT, root, ignore=shutil.ignore_patterns("__pycache__"))
    before = jit.tree_stamp(str(root))
    (root / "shared" / "special.py").write_text((root / "shared" / "special.py").read_text()
                                                + "\n# edited\n")
    jit.tree_stamp.cache_clear()
    assert jit.tree_stamp(str(root)) != before
    assert all(issubclass(c, jit._TreeStamped) for c in jit._KernelCacheImpl._locator_classes)
    disp = jit.njit(cache=True)(lambda x: x + 1)
    assert disp._cache is None or isinstance(disp._cache, jit._KernelCache)
