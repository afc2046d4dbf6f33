#!/usr/bin/env bash
# PETSc's and SLEPc's own unmodified tutorials, run with AIJ and with -mat_type swift loaded
# through -dll_append (and, on one rank, with -vec_type swift as well): same iteration counts
# (within one), matching error norms, the same eigenvalues, and proof that the swift type was
# used (-mat_swift_view prints a line per matrix). On two ranks -vec_type swift must fail with
# its own message. Usage: compare_ex.sh LIBCOALESCE KSP_EX2 [SLEPC_EX1]
# Environment: RANKS (default "1 2"), M (grid side, default 48), and COALESCE_BACKEND.
set -uo pipefail
lib=$1 ex2=$2 ex1=${3:-}
ranks=${RANKS:-"1 2"}
M=${M:-48}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# containers: no cross-memory attach, no hyperthread binding surprises
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
fails=0 runs=0
swift=(-dll_append "$lib" -mat_type swift -mat_swift_view)

run() { # ranks args... -> output
  local n=$1
  shift
  if [ "$n" = 1 ]; then "$@" 2>&1; else mpiexec -n "$n" "$@" 2>&1; fi
}

field() { # "Norm of error E iterations N" -> E or N
  sed -n 's/^Norm of error \([^ ]*\) iterations \([0-9]*\).*/\1 \2/p' | tail -1
}

for n in $ranks; do
  for ksp in cg gmres; do
    for pc in none jacobi gamg hypre; do
     vecs=(mat)
     [ "$n" = 1 ] && vecs+=(vec)
     for vt in "${vecs[@]}"; do
      runs=$((runs + 1))
      args=(-m "$M" -n "$M" -ksp_type "$ksp" -pc_type "$pc")
      extra=()
      [ "$vt" = vec ] && extra=(-vec_type swift)
      ref=$(run "$n" "$ex2" "${args[@]}")
      out=$(run "$n" "$ex2" "${args[@]}" "${swift[@]}" "${extra[@]}")
      r=$(echo "$ref" | field) s=$(echo "$out" | field)
      used=$(echo "$out" | grep -c "coalesce seqaijswift")
      verdict=$(python3 - "$r" "$s" "$used" <<'PY'
import sys
r, s, used = sys.argv[1].split(), sys.argv[2].split(), int(sys.argv[3])
if len(r) != 2 or len(s) != 2: print("no result line"); sys.exit()
er, ir = float(r[0]), int(r[1]); es, is_ = float(s[0]), int(s[1])
if used == 0: print("swift type not used"); sys.exit()
if abs(ir - is_) > 1: print(f"iterations {is_} vs {ir}"); sys.exit()
if abs(er - es) > 0.05 * max(er, es) + 1e-14: print(f"error norm {es} vs {er}"); sys.exit()
print("ok")
PY
)
      printf '%-3s ranks=%s ksp=%-5s pc=%-6s vecs=%-4s aij: %-28s swift: %-28s blocks=%s\n' \
        "$([ "$verdict" = ok ] && echo ok || echo BAD)" "$n" "$ksp" "$pc" \
        "$([ "$vt" = vec ] && echo swift || echo seq)" "$r" "$s" "$used"
      if [ "$verdict" != ok ]; then
        fails=$((fails + 1))
        echo "  -> $verdict"
        echo "$out" | tail -20 | sed 's/^/     /'
      fi
     done
    done
  done
  if [ "$n" != 1 ]; then # -vec_type swift is one rank only: a clear error, not a wrong answer
    runs=$((runs + 1))
    out=$(run "$n" "$ex2" -m "$M" -n "$M" "${swift[@]}" -vec_type swift)
    st=$?
    if [ $st -ne 0 ] && echo "$out" | grep -q "vector type swift runs on one MPI rank"; then
      echo "ok  ranks=$n -vec_type swift refused with its message"
    else
      fails=$((fails + 1))
      echo "BAD ranks=$n -vec_type swift: exit $st"
      echo "$out" | tail -20 | sed 's/^/     /'
    fi
  fi
done

if [ -n "$ex1" ]; then
  for n in $ranks; do
    runs=$((runs + 1))
    args=(-n 400 -eps_type lobpcg -eps_smallest_real -eps_nev 4 -eps_tol 1e-10 -eps_max_it 5000)
    ref=$(run "$n" "$ex1" "${args[@]}" | awk '/---------/{t=1;next} t&&NF==2{print $1}')
    out=$(run "$n" "$ex1" "${args[@]}" "${swift[@]}")
    got=$(echo "$out" | awk '/---------/{t=1;next} t&&NF==2{print $1}')
    used=$(echo "$out" | grep -c "coalesce seqaijswift")
    if [ -n "$ref" ] && [ "$ref" = "$got" ] && [ "$used" -gt 0 ]; then
      echo "ok  ranks=$n slepc ex1 lobpcg eigenvalues: $(echo $got)"
    else
      fails=$((fails + 1))
      echo "BAD ranks=$n slepc ex1 lobpcg: aij [$(echo $ref)] swift [$(echo $got)] blocks=$used"
      echo "$out" | tail -20 | sed 's/^/     /'
    fi
  done
fi
echo "compare_ex: $runs comparisons, $fails failures"
[ "$fails" -eq 0 ]
