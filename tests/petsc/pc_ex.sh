#!/usr/bin/env bash
# PC type swiftamg in PETSc's own unmodified KSP tutorial ex2 (2-D Laplacian, M x M grid),
# loaded through -dll_append: CG + swiftamg converges with an error norm like GAMG's, in a number
# of iterations of the same order as GAMG's and far below Jacobi's, on AIJ, on -mat_type swift
# and with -vec_type swift; -ksp_view shows the hierarchy; on 2 ranks as the sub-PC of block
# Jacobi (against bjacobi + gamg and bjacobi + jacobi); -pc_type swiftamg on a parallel matrix
# and a bad smoother name stop with PETSc errors that say why.
# Usage: pc_ex.sh LIBCOALESCE KSP_EX2. Environment: M (default 60), COALESCE_BACKEND.
set -uo pipefail
lib=$1 ex2=$2
M=${M:-60}
. "$(dirname "$0")/ex_common.sh"
base=(-m "$M" -n "$M" -ksp_type cg -dll_append "$lib")

run() { # ranks args... -> output
  local n=$1
  shift
  if [ "$n" = 1 ]; then "$@" 2>&1; else mpiexec -n "$n" "$@" 2>&1; fi
}
field() { sed -n 's/^Norm of error \([^ ]*\) iterations \([0-9]*\).*/\1 \2/p' | tail -1; }
# compare "E I" of swiftamg against the references: converged, error norm within 10x of the
# other AMG's and below 1e-3, iterations at most 2x + 2 the other AMG's and a quarter of Jacobi's
judge() { # swift amgref jacobiref
  python3 - "$1" "$2" "$3" <<'PY'
import sys
f = [s.split() for s in sys.argv[1:]]
if any(len(x) != 2 for x in f): print("no result line", sys.argv[1:]); sys.exit()
(es, is_), (ea, ia), (ej, ij) = [(float(e), int(i)) for e, i in f]
if not es < 1e-3 or es > 10 * ea + 1e-12: print(f"error norm {es} (amg ref {ea})"); sys.exit()
if is_ > 2 * ia + 2: print(f"iterations {is_} vs amg ref {ia}"); sys.exit()
if 4 * is_ > ij: print(f"iterations {is_} vs jacobi {ij}"); sys.exit()
print("ok")
PY
}

# one rank: against gamg and jacobi
gamg=$(run 1 "$ex2" "${base[@]}" -pc_type gamg | field)
jac=$(run 1 "$ex2" "${base[@]}" -pc_type jacobi | field)
for mode in aij swift swiftvec; do
  extra=()
  [ "$mode" != aij ] && extra=(-mat_type swift)
  [ "$mode" = swiftvec ] && extra+=(-vec_type swift)
  out=$(run 1 "$ex2" "${base[@]}" -pc_type swiftamg -ksp_view "${extra[@]}")
  s=$(echo "$out" | field)
  v=$(judge "$s" "$gamg" "$jac")
  # -ksp_view: the PC's type, the operator it used and one line per level
  want="copied seqaij"
  [ "$mode" != aij ] && want="seqaijswift operator"
  if [ "$v" = ok ] && ! { echo "$out" | grep -q "type: swiftamg" &&
    echo "$out" | grep -q "$want" && echo "$out" | grep -q "level 1: .* rows"; }; then
    v="-ksp_view lacks the hierarchy or '$want'"
  fi
  verdict "1 rank, $mode: swiftamg [$s] gamg [$gamg] jacobi [$jac]" "$v"
done

# options reach the hierarchy
out=$(run 1 "$ex2" "${base[@]}" -pc_type swiftamg -pc_swiftamg_smoother l1-jacobi \
  -pc_swiftamg_degree 3 -pc_swiftamg_cycle w -pc_swiftamg_coarse_size 50 -pc_swiftamg_theta 0.05 \
  -pc_swiftamg_max_levels 3 -ksp_view)
v=$(judge "$(echo "$out" | field)" "$gamg" "$jac")
if [ "$v" = ok ] && ! { echo "$out" | grep -q "theta 0.05, smoother l1-jacobi degree 3, W-cycle, coarse size 50, max levels 3" &&
  echo "$out" | grep -q "^ *level 2: " && ! echo "$out" | grep -q "^ *level 3: "; }; then
  v="-ksp_view does not show the options"
fi
verdict "1 rank, options: $(echo "$out" | field)" "$v"

# a bad smoother name: a PETSc error naming the option
out=$(run 1 "$ex2" "${base[@]}" -pc_type swiftamg -pc_swiftamg_smoother bogus)
st=$?
v=ok
if [ $st -eq 0 ] || ! echo "$out" | grep -q "Unknown option bogus for -pc_swiftamg_smoother"; then
  v="exit $st"
fi
verdict "bad smoother name refused" "$v"

# two ranks: block Jacobi with swiftamg on each block
gamg2=$(run 2 "$ex2" "${base[@]}" -pc_type bjacobi -sub_pc_type gamg | field)
jac2=$(run 2 "$ex2" "${base[@]}" -pc_type bjacobi -sub_pc_type jacobi | field)
for mode in aij swift; do
  extra=()
  [ "$mode" = swift ] && extra=(-mat_type swift)
  out=$(run 2 "$ex2" "${base[@]}" -pc_type bjacobi -sub_pc_type swiftamg -ksp_view "${extra[@]}")
  s=$(echo "$out" | field)
  v=$(judge "$s" "$gamg2" "$jac2")
  if [ "$v" = ok ] && ! echo "$out" | grep -q "type: swiftamg"; then v="-ksp_view lacks swiftamg"; fi
  verdict "2 ranks, $mode: bjacobi+swiftamg [$s] bjacobi+gamg [$gamg2] bjacobi+jacobi [$jac2]" "$v"
done

# two ranks, swiftamg on the parallel matrix itself: refused with the way out
out=$(run 2 "$ex2" "${base[@]}" -pc_type swiftamg)
st=$?
v=ok
if [ $st -eq 0 ] || ! echo "$out" | grep -q "use -pc_type bjacobi -sub_pc_type swiftamg"; then
  v="exit $st"
fi
verdict "2 ranks, -pc_type swiftamg refused with its message" "$v"

echo "pc_ex: $runs runs, $fails failures"
[ "$fails" -eq 0 ]
