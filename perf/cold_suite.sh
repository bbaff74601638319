#!/usr/bin/env bash
# The README's test command on a fresh clone, in a fresh venv, with empty
# Numba and nbdl caches: what CI and a new machine pay.  Prints the wall time
# of the install and of the test run, and pytest's summary line.
#
#   bash perf/cold_suite.sh            # clone HEAD of this checkout into a temp dir
#   KEEP=1 bash perf/cold_suite.sh     # keep the temp dir (venv, caches, log)
#   VENV=/path/to/venv bash perf/cold_suite.sh   # reuse a venv that has '.[test]'
#                                                # (skips the install, caches still empty)
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d /tmp/nbdl-cold.XXXXXX)"
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
git clone -q "$src" "$work/nbdl"
export NUMBA_CACHE_DIR="$work/numba-cache" NBDL_CACHE_DIR="$work/nbdl-cache"
mkdir -p "$NUMBA_CACHE_DIR" "$NBDL_CACHE_DIR"
cd "$work/nbdl"
t0=$(date +%s)
if [ -z "${VENV:-}" ]; then
    python -m venv "$work/venv"
    VENV="$work/venv"
    "$VENV/bin/python" -m pip install --quiet '.[test]'
else
    "$VENV/bin/python" -m pip install --quiet --no-deps --force-reinstall '.'
fi
t1=$(date +%s)
# The README's second command, from "cd tests" on, with the venv's python.
set +e
( cd tests && "$VENV/bin/python" -m pytest -q -n auto --rootdir=.. -c ../pyproject.toml . ) \
    > "$work/pytest.log" 2>&1
rc=$?
set -e
t2=$(date +%s)
echo "install: $((t1 - t0)) s; tests: $((t2 - t1)) s ($(( (t2 - t1) / 60 )) min $(( (t2 - t1) % 60 )) s); rc $rc"
grep -E "(passed|failed|error)" "$work/pytest.log" | tail -1
[ -n "${KEEP:-}" ] && echo "kept: $work"
exit $rc
