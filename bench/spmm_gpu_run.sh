#!/usr/bin/env bash
# SpMM session on a lent GPU (H100/H200), within one command of at most ~10 minutes:
# build the SpMM targets for sm_90, test_spmm_cuda + test_spmv_cuda, the SpMM probe (big
# matrices, then the shared set), then compute-sanitizer memcheck and racecheck on the quick
# SpMM test. Each step gets what is left of a global deadline (BUDGET seconds, default 570).
#   bench/spmm_gpu_run.sh [steps...]   steps: build tests big shared memcheck racecheck
# Logs, CSVs and the probe tables go to $OUT; matrices from $COALESCE_MATRICES
# (default .devdata/matrices, a git-ignored copy of ../shared/matrices carried along).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/coal-out}
mkdir -p "$OUT"
export COALESCE_MATRICES=${COALESCE_MATRICES:-$PWD/.devdata/matrices}
steps=${*:-build tests big shared memcheck racecheck}
B=build-gpu
t_start=$(date +%s)
deadline=$((t_start + ${BUDGET:-570}))
left() { # seconds for a step: min(wanted, time to the deadline)
  local l=$((deadline - $(date +%s)))
  [ "$1" -lt "$l" ] && l=$1
  [ "$l" -lt 1 ] && l=1
  echo "$l"
}
stamp() { echo "[$(($(date +%s) - t_start))s] $*"; }
rc=0
if [[ $steps == *build* ]]; then
  if [ -f $B/build.ninja ]; then
    meson configure $B -Dprobes=true >"$OUT/build.log" 2>&1
  else
    meson setup $B -Dcuda-arch=sm_90 -Dwerror=true -Dprobes=true \
      -Dmatrices_dir="$COALESCE_MATRICES" >"$OUT/build.log" 2>&1
  fi
  timeout "$(left 240)" ninja -C $B tests/test_spmm_cuda tests/test_spmv_cuda bench/spmm_probe \
    >>"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
  stamp "build ok"
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
if [[ $steps == *tests* ]]; then
  if [ -z "${NO_SPMV_TEST:-}" ]; then
    timeout "$(left 150)" $B/tests/test_spmv_cuda >"$OUT/test_spmv.log" 2>&1 &
    pid=$!
  fi
  timeout "$(left 150)" $B/tests/test_spmm_cuda >"$OUT/test_spmm.log" 2>&1
  echo "test_spmm_cuda rc=$?: $(tail -1 "$OUT/test_spmm.log")"
  grep -m 15 FAIL "$OUT/test_spmm.log"
  grep -E "unsupported|compared" "$OUT/test_spmm.log" | head -8
  if [ -z "${NO_SPMV_TEST:-}" ]; then
    wait $pid
    echo "test_spmv_cuda rc=$?: $(tail -1 "$OUT/test_spmv.log")"
  fi
  stamp "tests done"
fi
if [[ $steps == *big* ]]; then
  # BIG: ";"-separated probe runs, each "IDS K..." (default: every matrix at 1 8 32 128)
  IFS=';' read -ra runs <<<"${BIG:-lap3d,lap3d27,powerlaw 1 8 32 128}"
  : >"$OUT/probe_big.txt"
  for r in "${runs[@]}"; do
    read -ra a <<<"$r"
    timeout "$(left 150)" $B/bench/spmm_probe big -m "${a[@]}" >>"$OUT/probe_big.txt" 2>&1 || rc=1
  done
  grep -E "^==|FAIL|failures|note" "$OUT/probe_big.txt"
  stamp "big done"
fi
if [[ $steps == *shared* ]]; then
  timeout "$(left 90)" $B/bench/spmm_probe shared "$COALESCE_MATRICES" >"$OUT/probe_shared.txt" 2>&1 || rc=1
  grep -E "^cells|FAIL|failures" "$OUT/probe_shared.txt" | head -20
  stamp "shared done"
fi
cs="compute-sanitizer --report-api-errors no --error-exitcode 3"
if [[ $steps == *memcheck* ]]; then
  COALESCE_TEST_QUICK=1 timeout "$(left 120)" $cs --tool memcheck $B/tests/test_spmm_cuda \
    >"$OUT/sanitize.log" 2>&1
  echo "memcheck rc=$?: $(grep -E 'ERROR SUMMARY|passed' "$OUT/sanitize.log" | tr '\n' ' ')"
  stamp "memcheck done"
fi
if [[ $steps == *racecheck* ]]; then
  for k in swift merge; do
    COALESCE_TEST_QUICK=1 COALESCE_TEST_KERNEL=$k timeout "$(left 90)" $cs --tool racecheck \
      $B/tests/test_spmm_cuda >/tmp/rc.log 2>&1
    r=$?
    echo "racecheck $k rc=$r: $(grep -E 'RACECHECK SUMMARY|passed' /tmp/rc.log | tr '\n' ' ')" |
      tee -a "$OUT/sanitize.log"
    grep -m 5 -E "Error|Hazard" /tmp/rc.log >>"$OUT/sanitize.log"
  done
  stamp "racecheck done"
fi
exit $rc
