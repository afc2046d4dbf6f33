#!/usr/bin/env bash
# Runs on a lent GPU machine (H100/H200): build for sm_90, CUDA + host suites,
# compute-sanitizer (memcheck, racecheck) on the CUDA suite, then the SpMV benchmark.
#   bench/gpu_run.sh [what...]   what: build tests sanitize bench spmm spgemm solve eigs amg
#                                (default: all but amg, which is long)
# Matrices are read from $COALESCE_MATRICES (default .devdata/matrices, a git-ignored copy
# of ../shared/matrices that travels with the working tree). Logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/coal-out}
mkdir -p "$OUT"
export COALESCE_MATRICES=${COALESCE_MATRICES:-$PWD/.devdata/matrices}
what=${*:-build tests sanitize bench spmm spgemm solve eigs}
B=build-gpu
rc=0
if [[ $what == *build* ]]; then
  [ -d $B ] || meson setup $B -Dcuda-arch=sm_90 -Dwerror=true -Dmatrices_dir="$COALESCE_MATRICES" \
    >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
  ninja -C $B >>"$OUT/build.log" 2>&1 || { tail -60 "$OUT/build.log"; exit 1; }
  echo "build ok"
fi
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee "$OUT/gpu.txt"
if [[ $what == *tests* ]]; then
  meson test -C $B --suite cuda --suite host --print-errorlogs --num-processes 4 >"$OUT/tests.log" 2>&1 || rc=1
  grep -E "^(Ok|Fail|Skipped|Timeout):" "$OUT/tests.log"
  grep -E "FAIL|passed, " "$OUT/tests.log" | tail -20
fi
if [[ $what == *sanitize* ]]; then
  # the tests ask for an absurd allocation on purpose: API errors are expected, not reported
  cs="compute-sanitizer --report-api-errors no --error-exitcode 3"
  for t in $B/tests/test_spmv_cuda $B/tests/test_spmm_cuda $B/tests/test_fastload_build_cuda \
    $B/tests/test_core $B/tests/test_blas_cuda $B/tests/test_solvers_cuda $B/tests/test_spgemm_cuda \
    $B/tests/test_device_only_cuda $B/tests/test_eigs_cuda; do
    n=$(basename $t)
    COALESCE_TEST_QUICK=1 $cs --tool memcheck --leak-check full $t >/tmp/cs.log 2>&1 || rc=1
    echo "memcheck $n: $(tail -1 /tmp/cs.log)" | tee -a "$OUT/sanitize.log"
    tail -5 /tmp/cs.log >>"$OUT/sanitize.log"
  done
  for tool in racecheck synccheck; do
    for t in test_spmv_cuda test_blas_cuda test_spgemm_cuda; do
      COALESCE_TEST_QUICK=1 $cs --tool $tool $B/tests/$t >/tmp/cs.log 2>&1 || rc=1
      echo "$tool $t: $(tail -1 /tmp/cs.log)" | tee -a "$OUT/sanitize.log"
    done
  done
  # the Swift and merge SpMM kernels share data through shared memory: racecheck them
  COALESCE_TEST_QUICK=1 $cs --tool racecheck $B/tests/test_spmm_cuda >/tmp/cs.log 2>&1 || rc=1
  echo "racecheck test_spmm_cuda (quick): $(tail -1 /tmp/cs.log)" | tee -a "$OUT/sanitize.log"
fi
if [[ " $what " == *" bench "* ]]; then
  # shellcheck disable=SC2086 # BENCH_EXTRA: further matrix specs, split on spaces
  $B/coalesce bench spmv --large ${BENCH_EXTRA:-} --matrices "$COALESCE_MATRICES" --csv "$OUT/spmv.csv" \
    --json "$OUT/spmv.json" >"$OUT/bench_spmv.txt" 2>&1 || rc=1
  tail -80 "$OUT/bench_spmv.txt"
fi
if [[ $what == *spmm* ]]; then
  $B/coalesce bench spmm --large --k ${SPMM_K:-1,8,32,128} --layout ${SPMM_LAYOUT:-row} \
    >"$OUT/bench_spmm.txt" 2>&1 || rc=1
  tail -60 "$OUT/bench_spmm.txt"
fi
if [[ $what == *spgemm* ]]; then
  $B/coalesce bench spgemm --large ${SPGEMM_EXTRA:-} --matrices "$COALESCE_MATRICES" \
    --csv "$OUT/spgemm.csv" >"$OUT/bench_spgemm.txt" 2>&1 || rc=1
  tail -80 "$OUT/bench_spgemm.txt"
fi
if [[ $what == *solve* ]]; then
  $B/coalesce demo >"$OUT/demo.txt" 2>&1 || rc=1
  cat "$OUT/demo.txt"
  $B/coalesce bench solve --large ${SOLVE_EXTRA:-} --nrhs ${SOLVE_K:-32} --csv "$OUT/solve.csv" \
    >"$OUT/bench_solve.txt" 2>&1 || rc=1
  cat "$OUT/bench_solve.txt"
fi
if [[ $what == *eigs* ]]; then
  # the target (lap3d:100, 16 smallest, 1e-6, Jacobi), block sizes around the default, and a
  # generalized problem
  for bs in ${EIGS_BLOCKS:-0 24 32}; do
    $B/coalesce bench eigs lap3d:100 --nev 16 --block "$bs" --reps ${EIGS_REPS:-3} \
      --csv "$OUT/eigs_b$bs.csv" >"$OUT/bench_eigs_b$bs.txt" 2>&1 || rc=1
    cat "$OUT/bench_eigs_b$bs.txt"
  done
  $B/coalesce bench eigs lap3d:64 --nev 16 --reps 3 --csv "$OUT/eigs_more.csv" \
    >"$OUT/bench_eigs_more.txt" 2>&1 || rc=1
  cat "$OUT/bench_eigs_more.txt"
  $B/coalesce eigs "$COALESCE_MATRICES/bcsstk26.mtx.gz" --mass "$COALESCE_MATRICES/bcsstm26.mtx.gz" \
    --nev 4 --tol 1e-8 --pc jacobi --maxit 20000 >"$OUT/eigs_bcsstk26.txt" 2>&1
  cat "$OUT/eigs_bcsstk26.txt"
fi
if [[ " $what " == *" amg "* ]]; then
  # issue 32: the targets on the large Laplacians, then CG+AMG against CG+Jacobi on the SPD set
  $B/coalesce bench amg --large --reps ${AMG_REPS:-5} --eig-reps ${AMG_EIG_REPS:-3} \
    --csv "$OUT/amg.csv" --json "$OUT/amg.json" >"$OUT/bench_amg.txt" 2>&1 || rc=1
  cat "$OUT/bench_amg.txt"
  $B/coalesce bench amg --spd-set --matrices "$COALESCE_MATRICES" --reps ${AMG_SPD_REPS:-2} \
    --csv "$OUT/amg_spd.csv" --json "$OUT/amg_spd.json" >"$OUT/bench_amg_spd.txt" 2>&1 || rc=1
  cat "$OUT/bench_amg_spd.txt"
fi
exit $rc
