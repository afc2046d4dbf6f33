#!/usr/bin/env bash
# The PETSc plugin on a GPU machine without PETSc: Debian's PETSc/SLEPc runtime libraries and
# the plugin, tests and tutorials built on a Debian machine are brought in .petsc/ (made by
# scripts/petsc_bundle.sh, git-ignored). Runs the petsc suite's programs on the CUDA backend,
# compute-sanitizer on the plugin test, and the ex2 benchmark (-log_view) against AIJ.
# Usage: bash bench/petsc_gpu_run.sh [tests] [bench]; writes logs under $OUT (default .).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-.}
P=$PWD/.petsc
rt=/tmp/coalesce-petsc-rt
mkdir -p "$rt" && tar -xJf "$P/petsc-runtime.tar.xz" -C "$rt"
ln -sf libcoalesce.so.0 "$rt/lib/libcoalesce.so"
export LD_LIBRARY_PATH="$rt/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
lib=$rt/lib/libcoalesce.so
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(tests bench)
nvidia-smi -L
for b in "$P"/bin/*; do ldd "$b" | grep "not found" | sed "s|^|$(basename "$b"): |"; done

for step in "${steps[@]}"; do
  case $step in
  tests)
    export COALESCE_BACKEND=cuda
    "$P/bin/test_petsc_swift" 2>&1 | tail -3 | tee "$OUT/petsc_swift.txt"
    mpiexec -n 2 "$P/bin/test_petsc_swift_mpi" 2>&1 | tail -3 | tee "$OUT/petsc_swift_mpi.txt"
    "$P/bin/test_petsc_shell" 2>&1 | tail -3 | tee "$OUT/petsc_shell.txt"
    "$P/bin/test_petsc_vec" 2>&1 | tail -30 | tee "$OUT/petsc_vec.txt"
    "$P/bin/test_petsc_pc" 2>&1 | tail -10 | tee "$OUT/petsc_pc.txt"
    bash tests/petsc/pc_ex.sh "$lib" "$P/bin/petsc_ksp_ex2" 2>&1 | tee "$OUT/petsc_pc_tutorial.txt"
    bash tests/petsc/pc_ex56.sh "$lib" "$P/bin/petsc_ksp_ex56" "$P/bin/slepc_eps_ex1" 2>&1 |
      tee "$OUT/petsc_pc_ex56.txt"
    bash tests/petsc/compare_ex.sh "$lib" "$P/bin/petsc_ksp_ex2" "$P/bin/slepc_eps_ex1" 2>&1 |
      tee "$OUT/petsc_tutorials.txt"
    compute-sanitizer --tool memcheck --leak-check no "$P/bin/test_petsc_swift" 2>&1 | tail -4 |
      tee "$OUT/petsc_memcheck.txt"
    compute-sanitizer --tool memcheck --leak-check no "$P/bin/test_petsc_vec" 2>&1 | tail -4 |
      tee -a "$OUT/petsc_memcheck.txt"
    compute-sanitizer --tool memcheck --leak-check no "$P/bin/test_petsc_pc" 2>&1 | tail -4 |
      tee -a "$OUT/petsc_memcheck.txt"
    unset COALESCE_BACKEND
    ;;
  bench)
    M=${BENCH_M:-1414}
    its=${BENCH_ITS:-0} # 0: ex2's own tolerance, to convergence
    args=(-m "$M" -n "$M" -ksp_type cg -pc_type jacobi -log_view)
    [ "$its" -gt 0 ] && args+=(-ksp_max_it "$its")
    run() { # name extra...
      local name=$1
      shift
      "$P/bin/petsc_ksp_ex2" "${args[@]}" "$@" > "$OUT/ex2_$name.log" 2>&1
      echo "== $name: $(grep -E '^Norm of error' "$OUT/ex2_$name.log")"
      grep -E '^(MatMult |KSPSolve|SwiftBuild|SwiftCopyIn|SwiftCopyOut|SwiftSpMV|VecTDot|VecAXPY|VecAYPX|VecPointwiseMult|VecNorm|VecSet|VecCopy) ' \
        "$OUT/ex2_$name.log"
    }
    lscpu | grep -E "Model name|^CPU\(s\)"
    run aij
    run swift_cuda -dll_append "$lib" -mat_type swift -mat_swift_backend cuda -mat_swift_view
    run swift_vec_cuda -dll_append "$lib" -mat_type swift -vec_type swift -mat_swift_backend cuda \
      -mat_swift_view
    [ -n "${BENCH_SKIP_NOPIN:-}" ] ||
      run swift_cuda_nopin -dll_append "$lib" -mat_type swift -mat_swift_backend cuda -mat_swift_pin 0
    [ -n "${BENCH_SKIP_HOST:-}" ] ||
      run swift_host -dll_append "$lib" -mat_type swift -mat_swift_backend host
    ;;
  esac
done
