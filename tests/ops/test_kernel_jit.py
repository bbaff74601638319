"""``nbdl.kernels.shared.jit.njit``: Numba's njit, except that a call from
compiled code with constant arguments compiles the callee once per argument
*types* (Numba's own dispatcher compiles it once per constant value), in the
callee's twin without Python wrappers or machine code, ``inline="always"``
is LLVM's inlining, and a compile hook sees every new compilation first."""
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

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
    # both callers' constants: one compilation, in the callee twin
    assert len(_helper.callee().signatures) == 1, _helper.callee().signatures
    assert _helper.signatures == []                      # nothing called it from Python yet
    assert _helper(x, 7, True, (0, 1)) == 9.0           # from Python: the same types
    assert _helper.signatures == _helper.callee().signatures
    assert isinstance(_helper, jit.KernelDispatcher)


def _callee_and_caller(k):
    """A fresh kernel ``a[0] * k`` and a kernel that calls it (fresh
    dispatchers: what compiles depends on which is called first)."""
    @jit.njit
    def times(a):
        return k * a[0]

    @jit.njit
    def caller(a):
        return times(a) + 1
    return times, caller


def test_a_callee_compiles_in_its_twin_without_python_entry():
    """A call from compiled code compiles the callee's twin (the same function
    and options, without the CPython wrapper; neither has a cfunc wrapper); a
    call from Python compiles the kernel itself; the twin called from Python
    is an error."""
    twice, calls_twice = _callee_and_caller(2)
    a = np.array([3.0])
    assert calls_twice(a) == 7.0
    twin = twice.callee()
    assert twin is twice.callee() and twin.public is twice and twin.callee() is twin
    assert twin.targetoptions["no_cpython_wrapper"] and twin.targetoptions["no_cfunc_wrapper"]
    assert len(twin.signatures) == 1 and twice.signatures == []
    # the twin's module skips the module passes (its callers run them)
    assert all(isinstance(c.library, jit._TwinLibrary) for c in twin.overloads.values())
    assert "no_cpython_wrapper" not in twice.targetoptions
    assert twice.targetoptions["no_cfunc_wrapper"]
    with pytest.raises(TypeError, match="callee twin"):
        twin(a)
    assert twice(a) == 6.0 and len(twice.signatures) == 1


def test_a_kernel_run_from_python_is_linked_not_twinned():
    """A caller compiled after the kernel ran from Python (a native driver)
    links the kernel's code: no second compilation."""
    thrice, calls_thrice = _callee_and_caller(3)
    a = np.array([2.0])
    assert thrice(a) == 6.0
    assert calls_thrice(a) == 7.0
    assert thrice.callee().signatures == [] and len(thrice.signatures) == 1


def test_callee_twins_build_from_their_description():
    """How a compile-pool worker rebuilds a twin: ``describe`` names it
    through ``callee_of``, which gives the twin back."""
    from nbdl.executor.compile_claims import callee_desc, describe
    from nbdl.executor.compile_worker import _rebuild
    from nbdl.kernels.cpu import _gemm
    twin = _gemm.gemm.callee()
    desc = describe(twin)
    assert desc == callee_desc("nbdl.kernels.cpu._gemm", "gemm")
    assert _rebuild(desc) is twin
    assert describe(_gemm.gemm) == ("nbdl.kernels.cpu._gemm", None, "gemm")


def _inlined_and_callers():
    """A fresh ``inline="always"`` function ``a / b`` and two kernels that
    call it, one with Numba's default error model (division by zero raises)
    and one with ``error_model="numpy"`` (it gives inf)."""
    @jit.njit(inline="always")
    def ratio(a, b):
        return a / b

    @jit.njit
    def strict(a, b):
        return ratio(a, b) + 1.0

    @jit.njit(error_model="numpy", fastmath={"contract"})
    def lenient(a, b):
        return ratio(a, b) + 1.0
    return ratio, strict, lenient


def test_inline_functions_are_inlined_by_llvm_with_their_callers_flags():
    """``inline="always"`` compiles the function once per flavour of its
    callers (error model, fast-math flags: what an inlined body takes from
    its caller), marked for LLVM to inline: the callers' code has no call to
    it, and each caller keeps its own division semantics."""
    ratio, strict, lenient = _inlined_and_callers()
    assert ratio.inlined and ratio.targetoptions["inline"] == "never"
    assert lenient(1.0, 0.0) == np.inf
    with pytest.raises(ZeroDivisionError):
        strict(1.0, 0.0)
    assert strict(1.0, 2.0) == 1.5
    twins = dict(ratio._callees)
    assert sorted(twins, key=repr) == sorted([("python", ()), ("numpy", ("contract",))], key=repr)
    for flags, twin in twins.items():
        assert twin.targetoptions["error_model"] == flags[0]
        (cres,) = twin.overloads.values()
        assert isinstance(cres.library, jit._InlineTwinLibrary)
        fn = cres.library._final_module.get_function(cres.fndesc.mangled_name)
        assert "alwaysinline" in str(fn), str(fn)[:300]
    for caller in (strict, lenient):
        (sig,) = caller.signatures
        body = caller.inspect_llvm(sig)
        calls = [ln for ln in body.splitlines() if re.search(r"\bcall\b.*ratio", ln)]
        assert calls == [], calls
    from nbdl.executor.compile_claims import describe
    assert all(describe(t) is None for t in twins.values())   # not handed to a compile pool


def test_inline_numba_is_numbas_own_inlining():
    """``inline="numba"``: Numba copies the function into its callers' IR
    (no twin is compiled for them)."""
    @jit.njit(inline="numba")
    def plus_one(a):
        return a + 1

    @jit.njit
    def calls(a):
        return plus_one(a) * 2
    assert not plus_one.inlined and plus_one.targetoptions["inline"] == "always"
    assert calls(1) == 4
    assert not plus_one.__dict__.get("_callees")


def test_twins_have_no_machine_code():
    """A twin is linked, never called: its library holds IR only, and the
    JIT defines none of its functions."""
    twice, calls_twice = _callee_and_caller(2)
    assert calls_twice(np.array([1.0])) == 3.0
    (cres,) = twice.callee().overloads.values()
    engine = cres.library._codegen._engine
    assert not engine.is_symbol_defined(cres.fndesc.mangled_name)
    (kres,) = calls_twice.overloads.values()
    assert engine.is_symbol_defined(kres.fndesc.mangled_name)
    name, kind, _ = cres.library.serialize_using_object_code()
    assert kind == "bitcode"


_CACHED = textwrap.dedent("""
    import sys
    import numpy as np
    from nbdl.kernels.shared.jit import njit

    @njit(cache=True, inline="always")
    def offset(a):
        return a[1] - 0.5

    @njit(cache=True)
    def helper(a):
        return a[0] + 1.0

    @njit(cache=True)
    def kernel(a):
        return helper(a) * 2.0 + offset(a)

    @njit(cache=True)
    def other(a):
        return helper(a) * 3.0 + offset(a)

    a = np.ones(2)
    first = kernel(a) if sys.argv[1] == "1" else other(a)
    (inl,) = offset._callees.values()
    print(first, helper(a), len(helper.callee().signatures), len(helper.signatures),
          sum(helper.callee()._cache_hits.values()), sum(inl._cache_hits.values()))
""")


def test_a_kernel_and_its_twin_keep_separate_cache_files(tmp_path):
    """Numba's cache index is keyed by argument types, not compile flags: the
    twin (no Python wrapper) and the kernel (called from Python with the same
    types) must not load each other's entries.  Two processes on one cache:
    the first compiles both, the second loads the kernel for its Python call
    and the twins for a new caller (their IR: twins have no machine code)."""
    (tmp_path / "cached_mod.py").write_text(_CACHED)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(tmp_path)] + sys.path))
    outs = [subprocess.run([sys.executable, "-c", "import sys; sys.argv[1:] = ['%d']; "
                            "import cached_mod" % run], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=300) for run in (1, 2)]
    for out in outs:
        assert out.returncode == 0, out.stderr
    assert outs[0].stdout.split() == ["4.5", "2.0", "1", "1", "0", "0"], outs[0].stdout
    assert outs[1].stdout.split() == ["6.5", "2.0", "1", "1", "1", "1"], outs[1].stdout
    names = sorted(n for _, _, files in os.walk(tmp_path / "cache") for n in files
                   if n.endswith(".nbi"))
    assert any("helper-callee" in n for n in names) and any(
        "helper-" in n and "callee" not in n for n in names), names
    assert any("offset-inline-" in n for n in names), names


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


def test_loop_strength_reduction_is_off_unless_asked(monkeypatch):
    """Loading the module turns LLVM's loop strength reduction off
    (``NBDL_LLVM_LSR=1`` keeps it)."""
    calls = []
    monkeypatch.setattr(jit.ll, "set_option", lambda name, opt: calls.append(opt))
    monkeypatch.delenv("NBDL_LLVM_LSR", raising=False)
    jit._llvm_options()
    assert calls == ["-disable-lsr"]
    monkeypatch.setenv("NBDL_LLVM_LSR", "1")
    jit._llvm_options()
    assert calls == ["-disable-lsr"]
