#!/usr/bin/env bash
# The GPU check of issue 17 (docs/gpu.md): on a machine with an NVIDIA GPU
# whose Python has numba, numba-cuda, numpy, scipy, pytest, pytest-xdist and
# pytest-benchmark (CuPy and PyTorch are used when present), in this order:
#
#   1. install nbdl from this checkout (editable, no dependencies);
#   2. run the tests marked `cuda` on the GPU (NBDL_TEST_CUDA=1: no simulator),
#      then the GEMM tests again on the tiled kernel (NBDL_CUDA_GEMM=tiled);
#   3. time the GPU workloads of perf/gpu_bench.py (PyTorch's beside them).
#
# Every step has a time cap (tests 200 s on 12 xdist workers, or on one
# process where pytest-xdist is missing, the tiled pass 50 s, the figures
# 180 s): with the install the whole script stays under 8 minutes, inside one
# 10-minute device command.  Logs,
# the junit report and the figures go to $OUT (default ./gpu-check-out); the
# last lines printed are the test summaries and the figures' table.
#
#   bash perf/gpu_check.sh            # on the GPU machine
#   bash perf/gpu_check.sh --dry-run  # anywhere: simulator, toy sizes, CPU figures
set -uo pipefail
cd "$(dirname "$0")/.."
DRY=0
[ "${1:-}" = "--dry-run" ] && DRY=1
OUT="${OUT:-$PWD/gpu-check-out}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
export PYTHONUNBUFFERED=1 NBDL_QUIET=1
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/nbdl-numba-cache}"
export NBDL_CACHE_DIR="${NBDL_CACHE_DIR:-/tmp/nbdl-cache}"
status=0
step() { echo; echo "== $* ($(date +%T))"; }

if [ "$DRY" = 1 ]; then
    TEST_SEL=(ops/test_matrix_cuda_gemm.py)       # a small selection, in the simulator
    TILED_SEL=(ops/test_matrix_cuda_gemm.py)
    WORKERS=0
    TEST_CAP=600
    BENCH=(perf/gpu_bench.py --dry-run --only gemm,mlp,conv)
    EXPECT="Numba's CUDA simulator"
else
    step "install"
    "$PY" -m pip install --quiet -e . --no-deps --no-build-isolation || { echo "install failed"; exit 1; }
    step "environment"
    { nvidia-smi -L; "$PY" - <<'PY'
import importlib
for m in ("numpy", "scipy", "numba", "numba_cuda", "cupy", "torch", "pytest", "xdist"):
    try:
        print(m, getattr(importlib.import_module(m), "__version__", "?"))
    except Exception as e:
        print(m, "not importable:", type(e).__name__)
try:
    from cupy.cuda import cudnn
    print("cupy's cuDNN:", cudnn.getVersion())
except Exception as e:
    print("cupy's cuDNN: not available:", type(e).__name__, e)
from numba import cuda
print("numba.cuda sees:", cuda.get_current_device().name if cuda.is_available() else "NO GPU")
PY
    } 2>&1 | tee "$OUT/env.txt"
    grep -q "numba.cuda sees: NO GPU" "$OUT/env.txt" && { echo "numba.cuda sees no GPU: stopping"; exit 1; }
    TEST_SEL=(.)
    TILED_SEL=(ops/test_matrix.py ops/test_matrix_cuda_gemm.py ops/test_convolution_cuda_gemm.py
               gluon/test_gpu_blocks.py executor/test_gpu_executor.py)
    WORKERS=12
    grep -q "^xdist not importable" "$OUT/env.txt" && { WORKERS=0; echo "no pytest-xdist: tests on one process"; }
    TEST_CAP=200
    BENCH=(perf/gpu_bench.py --budget 6)
    EXPECT="a real GPU"
fi

run_tests() {   # run_tests LOGNAME CAP SELECTION... : the cuda-marked tests, capped
    local name=$1 cap=$2; shift 2
    local xdist=()
    [ "$WORKERS" -gt 0 ] && xdist=(-n "$WORKERS")
    (cd tests && NBDL_TEST_CUDA=1 timeout -k 10 "$cap" "$PY" -m pytest -m cuda -rfE --tb=short -p no:cacheprovider \
        --rootdir=.. -c ../pyproject.toml "${xdist[@]}" --continue-on-collection-errors --durations=20 --junitxml="$OUT/$name.xml" \
        -o junit_family=xunit2 "$@") > "$OUT/$name.log" 2>&1
    local rc=$?
    [ $rc = 124 ] && echo "$name: stopped at its ${cap}s cap" | tee -a "$OUT/$name.log"
    grep -q "tests marked cuda run on $EXPECT" "$OUT/$name.log" || {
        echo "$name: the tests did not run on $EXPECT (see the header of $OUT/$name.log)"; rc=1; }
    tail -n 15 "$OUT/$name.log" | grep -E "^(FAILED|ERROR)|passed|failed|error" | tail -n 12
    return $rc
}

step "cuda-marked tests on $EXPECT (cap ${TEST_CAP}s)"
run_tests cuda-tests "$TEST_CAP" "${TEST_SEL[@]}" || status=1
step "GEMM tests on the tiled kernel (NBDL_CUDA_GEMM=tiled)"
NBDL_CUDA_GEMM=tiled run_tests cuda-tests-tiled 50 "${TILED_SEL[@]}" || status=1
step "figures (cap 180s; each row is written to bench.json/bench.md as it is measured)"
OUT="$OUT" timeout 180 "$PY" "${BENCH[@]}" --out "$OUT" > "$OUT/bench.log" 2>&1 || status=1
tail -n 12 "$OUT/bench.log"
step "done: status $status; results in $OUT"
ls "$OUT"
exit $status
