#!/usr/bin/env bash
# Tests of the `coalesce` command-line tool: subcommands, output contents, CSV, exit codes.
# Usage: test_cli.sh COALESCE_BINARY MATRICES_DIR
# Cases that need MATRICES_DIR are skipped when it does not exist; the rest still run.
set -u

BIN=${1:?usage: test_cli.sh COALESCE_BINARY MATRICES_DIR}
MATDIR=${2:-}
export COALESCE_BACKEND=host

pass=0
fail=0
skip=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/coalesce-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
bad() {
  fail=$((fail + 1))
  echo "FAIL: $*" >&2
}

# run NAME EXPECTED_RC CMD...: runs the command, stdout to $tmp/out, stderr to $tmp/err, and
# checks the exit status.
run() {
  local name=$1 want=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -eq "$want" ]; then
    ok
  else
    bad "$name: exit $rc, expected $want"
    sed 's/^/    stdout: /' "$tmp/out" | tail -20 >&2
    sed 's/^/    stderr: /' "$tmp/err" | tail -20 >&2
  fi
}

# expect NAME FILE PATTERN: FILE contains a line matching the extended regex PATTERN.
expect() {
  if grep -Eq -- "$3" "$2"; then ok; else bad "$1: no line matching '$3' in $(basename "$2")"; fi
}

# json_ok NAME MESSAGE PYTHON_EXPR FILE [ARGS...]: FILE is JSON and PYTHON_EXPR holds for d (the
# parsed file; a = the further ARGS as strings); skipped without python3.
json_ok() {
  local name=$1 msg=$2 expr=$3
  shift 3
  command -v python3 >/dev/null 2>&1 || return 0
  if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); a=sys.argv[2:]; sys.exit(0 if ($expr) else 1)" "$@"; then
    ok
  else
    bad "$name: $1 $msg"
  fi
}

have_mat=0
if [ -n "$MATDIR" ] && [ -d "$MATDIR" ] && [ -f "$MATDIR/nos4.mtx.gz" ] &&
  [ -f "$MATDIR/bcsstk04.mtx.gz" ]; then
  have_mat=1
else
  echo "note: matrices folder '$MATDIR' not found: skipping the cases that read files"
fi

# ---- version and help --------------------------------------------------------------------
run version 0 "$BIN" version
expect version "$tmp/out" '^coalesce [0-9]+\.[0-9]+\.[0-9]+'
run help 0 "$BIN" help
expect help "$tmp/out" 'bench spmv'
expect help "$tmp/out" 'bench spmm'
expect help "$tmp/out" 'lap3d:N'
expect help "$tmp/out" '^  eigs SPEC'
expect help "$tmp/out" '^  bench eigs'
expect help "$tmp/out" '^  amg SPEC'
expect help "$tmp/out" '^  bench amg'
expect help "$tmp/out" '--pc none\|jacobi\|amg'
run --help 0 "$BIN" --help
# every command's own usage: CMD --help (anywhere on the line), -h, help CMD
for c in demo info solve eigs amg version "bench spmv" "bench spmm" "bench spgemm" "bench solve" \
  "bench eigs" "bench amg"; do
  # shellcheck disable=SC2086
  run "$c --help" 0 "$BIN" $c --help
  expect "$c --help" "$tmp/out" "^Usage: coalesce $c\$"
  expect "$c --help" "$tmp/out" "^  $c "
  expect "$c --help" "$tmp/out" '^  --backend'
  if grep -q '^  help ' "$tmp/out"; then bad "$c --help printed every command"; else ok; fi
done
run solve-h 0 "$BIN" solve lap3d:4 --nrhs 2 -h
expect solve-h "$tmp/out" '^Usage: coalesce solve$'
expect solve-h "$tmp/out" 'stagnated'
run help-bench 0 "$BIN" help bench eigs
expect help-bench "$tmp/out" '^  bench eigs '
run bench-help 0 "$BIN" bench --help
expect bench-help "$tmp/out" '^  bench spgemm '
run help-unknown 2 "$BIN" help frobnicate
run unknown-help 2 "$BIN" frobnicate --help

# ---- info --------------------------------------------------------------------------------
if [ $have_mat = 1 ]; then
  run info 0 "$BIN" info "$MATDIR/nos4.mtx.gz" lap3d:8
  expect info "$tmp/out" '^nos4: '
  expect info "$tmp/out" 'size +100 x 100, 594 nonzeros, f64'
  expect info "$tmp/out" '^lap3d:8: '
  expect info "$tmp/out" 'size +512 x 512, 3200 nonzeros, f64'
  expect info "$tmp/out" 'row length +min 4, mean 6\.25, max 7'
  expect info "$tmp/out" 'FastLoad scatter'
  expect info "$tmp/out" 'FastLoad gather'
  expect info "$tmp/out" 'kernel +csr-vector \(auto on host'
else
  skip=$((skip + 1))
fi
run info-gen 0 "$BIN" info lap3d:8 --dtype f32
expect info-gen "$tmp/out" 'symmetric +yes'
expect info-gen "$tmp/out" 'empty +0 rows, 0 columns'
expect info-gen "$tmp/out" '512 x 512, 3200 nonzeros, f32'
run info-beam-plate 0 "$BIN" info beam:5 plate:3
expect info-beam-plate "$tmp/out" '5 x 5, 19 nonzeros, f64'
expect info-beam-plate "$tmp/out" '9 x 9, 61 nonzeros, f64'
run bad-beam 2 "$BIN" info beam:0
expect bad-beam "$tmp/err" "expected beam:N"
run info-elast 0 "$BIN" info elast3d:2 elast3d:2:0.45
expect info-elast "$tmp/out" '3-D linear elasticity, 2\^3 trilinear hexahedra, face x = 0 clamped, Poisson ratio 0\.3$'
expect info-elast "$tmp/out" 'Poisson ratio 0\.45$'
expect info-elast "$tmp/out" '54 x 54, 1764 nonzeros, f64'
run bad-elast 2 "$BIN" info elast3d:4:0.5
expect bad-elast "$tmp/err" "Poisson ratio '0.5' is not a number in \[0, 0.5\) \(expected elast3d:N\[:NU\]\)"

# ---- demo --------------------------------------------------------------------------------
run demo 0 "$BIN" demo --backend host --n 12 --nrhs 4
expect demo "$tmp/out" 'preconditioner Jacobi, then AMG'
expect demo "$tmp/out" '^  -- Jacobi$'
expect demo "$tmp/out" '^  -- AMG \(smoothed aggregation: theta 0\.02, chebyshev degree 2'
expect demo "$tmp/out" '^  AMG/Jacobi Block-CG with AMG [0-9.]+ s against [0-9.]+ s with Jacobi'
if [ "$(grep -c '^  Block-CG ' "$tmp/out")" -eq 2 ]; then ok; else bad "demo: not two Block-CG lines"; fi
expect demo "$tmp/out" '12\^3 grid: 1728 rows, 11232 nonzeros'
expect demo "$tmp/out" 'backend +host'
expect demo "$tmp/out" 'Block-CG +[0-9.]+ s .* block iterations, largest'
expect demo "$tmp/out" 'CG +[0-9.]+ s for 4 solves'
expect demo "$tmp/out" 'every column reached the tolerance'
expect demo "$tmp/out" 'speed-up +[0-9.]+x'

run demo-amg 0 "$BIN" demo --n 10 --nrhs 2 --pc amg --amg-coarse-size 100
expect demo-amg "$tmp/out" '^  -- AMG \(smoothed aggregation: .*coarse size 100,'
if grep -q '^  -- Jacobi' "$tmp/out"; then bad "demo --pc amg ran Jacobi"; else ok; fi
expect demo-amg "$tmp/out" 'every column reached the tolerance'
run demo-jacobi 0 "$BIN" demo --n 8 --nrhs 2 --pc jacobi
if grep -q '^  -- AMG' "$tmp/out"; then bad "demo --pc jacobi ran AMG"; else ok; fi
run demo-bad-pc 2 "$BIN" demo --pc ilu
expect demo-bad-pc "$tmp/err" "--pc: 'ilu' is not jacobi, amg or both"
run demo-amg-opt-jacobi 2 "$BIN" demo --pc jacobi --amg-theta 0.1

# ---- solve -------------------------------------------------------------------------------
# B as an array file with 2 columns: column 1 = column 0, so Block-CG must drop a direction
bfile="$tmp/b.mtx"
{ echo '%%MatrixMarket matrix array real general'; echo '216 2'
  for c in 0 1; do for i in $(seq 1 216); do echo "$(( (i * 37) % 11 - 5 )).5"; done; done; } >"$bfile"
run solve-rhs 0 "$BIN" solve lap3d:6 --rhs "$bfile" --pc jacobi --out "$tmp/x.mtx" --history "$tmp/h.csv"
expect solve-rhs "$tmp/out" 'all columns converged'
expect solve-rhs "$tmp/out" '^  1 +converged '
expect solve-rhs "$tmp/x.mtx" '^216 2$'
expect solve-rhs "$tmp/h.csv" '^iteration,column,resnorm$'
expect solve-rhs "$tmp/h.csv" '^0,1,'
run solve-cg 0 "$BIN" solve lap3d:6 --nrhs 3 --method cg --rtol 1e-10 --check-every 3
expect solve-cg "$tmp/out" 'method +cg, preconditioner none, rtol 1.0e-10'
expect solve-cg "$tmp/out" '^  2 +converged '
if [ -d "$MATDIR" ]; then
  run solve-file 0 "$BIN" solve "$MATDIR/nos4.mtx.gz" --nrhs 2 --pc jacobi
  expect solve-file "$tmp/out" 'nos4, 100 rows'
  run solve-nonsym 1 "$BIN" solve "$MATDIR/west0067.mtx.gz"
  expect solve-nonsym "$tmp/err" 'not symmetric'
else
  skip=$((skip + 2))
fi
# the verdict is the true residual: bcsstk26 at rtol 1e-12 ends converged within it or
# stagnated (exit 1), never "converged" with a true residual above it
if [ -d "$MATDIR" ]; then
  "$BIN" solve "$MATDIR/bcsstk26.mtx.gz" --nrhs 4 --pc jacobi --rtol 1e-12 >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if awk -v rc=$rc '$1 ~ /^[0-9]+$/ && NF == 7 {
        n++; if ($2 == "converged" && $6 > 1e-12) badc++; if ($2 != "converged") nc++ }
      END { exit !(n == 4 && !badc && (nc ? rc == 1 : rc == 0)) }' "$tmp/out"; then
    ok
  else
    bad "solve-verdict: exit $rc with"; cat "$tmp/out" >&2
  fi
  expect solve-verdict "$tmp/out" 'restarts +\|\|b-Ax\|\| +\|\|b-Ax\|\|/\|\|b\|\| +recursive'
else
  skip=$((skip + 1))
fi
# --pc amg: fewer CG iterations than Jacobi (counted exactly: a check every iteration)
its() { awk '$1 == "iterations" { print $2 }' "$tmp/out"; }
run solve-jacobi16 0 "$BIN" solve lap3d:16 --method cg --check-every 1 --pc jacobi
its_jac=$(its)
run solve-amg16 0 "$BIN" solve lap3d:16 --method cg --check-every 1 --pc amg
its_amg=$(its)
expect solve-amg16 "$tmp/out" "preconditioner amg, .*"
expect solve-amg16 "$tmp/out" "^  amg +theta 0\.02, .* \(the library's defaults\)"
expect solve-amg16 "$tmp/out" 'all columns converged'
if [ -n "$its_amg" ] && [ -n "$its_jac" ] && [ "$its_amg" -le 12 ] && [ "$its_jac" -ge $((4 * its_amg)) ]; then
  ok
else
  bad "solve --pc amg: $its_amg iterations against Jacobi's $its_jac"
fi
run solve-amg-opts 0 "$BIN" solve lap3d:12 --nrhs 3 --pc amg --amg-theta 0.05 --amg-smoother l1-jacobi \
  --amg-degree 1 --amg-coarse-size 50 --amg-max-levels 3 --amg-cycle w
expect solve-amg-opts "$tmp/out" "^  amg +theta 0\.05, l1-jacobi degree 1, coarse size 50, max levels 3, W-cycle \(built here"
expect solve-amg-opts "$tmp/out" '^  2 +converged '
run solve-amg-opt-nopc 2 "$BIN" solve lap3d:4 --amg-theta 0.1
expect solve-amg-opt-nopc "$tmp/err" 'the --amg-\* options need --pc amg'
run solve-amg-theta 2 "$BIN" solve lap3d:4 --pc amg --amg-theta 1
expect solve-amg-theta "$tmp/err" "--amg-theta: '1' is not a number in \[0, 1\)"
run solve-amg-smoother 2 "$BIN" solve lap3d:4 --pc amg --amg-smoother sor
expect solve-amg-smoother "$tmp/err" "--amg-smoother: 'sor' is not chebyshev or l1-jacobi"
run solve-amg-cycle 2 "$BIN" solve lap3d:4 --pc amg --amg-cycle f
run solve-amg-degree 2 "$BIN" solve lap3d:4 --pc amg --amg-degree 17
run solve-amg-levels 2 "$BIN" solve lap3d:4 --pc amg --amg-max-levels 0
run solve-amg-coarse 2 "$BIN" solve lap3d:4 --pc amg --amg-coarse-size x
run solve-amg-unknown 2 "$BIN" solve lap3d:4 --pc amg --amg-frob 1
run solve-maxit 1 "$BIN" solve lap3d:6 --nrhs 2 --maxit 2
expect solve-maxit "$tmp/out" 'iteration-limit'
expect solve-maxit "$tmp/out" 'NOT all columns converged'
run solve-no-matrix 2 "$BIN" solve
run solve-both-rhs 2 "$BIN" solve lap3d:4 --rhs "$bfile" --nrhs 2
run solve-bad-pc 2 "$BIN" solve lap3d:4 --pc ilu
run solve-bad-method 2 "$BIN" solve lap3d:4 --method gmres
run solve-bad-rtol 2 "$BIN" solve lap3d:4 --rtol 2
run solve-f32 2 "$BIN" solve lap3d:4 --dtype f32
run solve-rhs-rows 1 "$BIN" solve lap3d:5 --rhs "$bfile"
expect solve-rhs-rows "$tmp/err" 'has 216 rows, the matrix has 125'
run bench-solve 0 "$BIN" bench solve lap3d:8 --nrhs 4 --csv "$tmp/s.csv"
expect bench-solve "$tmp/out" 'speed-up of Block-CG [0-9.]+x'
expect bench-solve "$tmp/s.csv" '^lap3d:8,host,'

# ---- bench spmv --------------------------------------------------------------------------
# Host backend: csr-vector, csr-merge, fastload, fastload-t, the two sorted-order runs and the
# auto row per square matrix, no cuSPARSE.
csv="$tmp/x.csv"
json="$tmp/x.json"
if [ $have_mat = 1 ]; then
  run bench 0 "$BIN" bench spmv --backend host lap3d:10 "$MATDIR/bcsstk04.mtx.gz" --reps 3 \
    --csv "$csv" --json "$json"
  want_rows=14
else
  run bench 0 "$BIN" bench spmv --backend host lap3d:10 --reps 3 --csv "$csv" --json "$json"
  want_rows=7
fi
expect bench "$tmp/out" '^== lap3d:10: 1000 x 1000, 6400 nonzeros'
expect bench "$tmp/out" 'summary lap3d:10: best '
expect bench "$tmp/out" 'fastload-t\(sorted\)'
if [ -f "$csv" ]; then
  ok
  rows=$(($(wc -l <"$csv") - 1))
  if [ "$rows" -eq "$want_rows" ]; then ok; else bad "bench: CSV has $rows rows, expected $want_rows"; fi
  expect bench-csv "$csv" '^matrix,rows,cols,nnz,dtype,backend,device,kernel,us_median'
  # column 14 is the check; every data row must say ok
  nok=$(tail -n +2 "$csv" | awk -F, '$14 == "ok"' | wc -l)
  if [ "$nok" -eq "$want_rows" ]; then ok; else bad "bench: $nok of $want_rows CSV checks are ok"; fi
  for k in csr-vector csr-merge fastload fastload-t 'fastload\(sorted\)' 'fastload-t\(sorted\)' \
    auto=csr-vector; do
    expect bench-csv "$csv" "^\"lap3d:10\",1000,1000,6400,f64,host,\"host CPU\",$k,"
  done
else
  bad "bench: $csv was not written"
fi
json_ok bench "is not valid JSON or has failed checks" \
  'all(k["check"]=="ok" for m in d["matrices"] for k in m["kernels"])' "$json"

# ---- bench spmm --------------------------------------------------------------------------
# Host backend: swift, rowsplit, merge and auto in both layouts for each k (16 rows per
# matrix with two k), each checked against the CLI's own CSR loop; no cuSPARSE.
csv="$tmp/m.csv"
json="$tmp/m.json"
if [ $have_mat = 1 ]; then
  run bench-spmm 0 "$BIN" bench spmm --backend host lap3d:6 "$MATDIR/bcsstk04.mtx.gz" --k 1,33 \
    --reps 2 --csv "$csv" --json "$json"
  nmat=2
else
  run bench-spmm 0 "$BIN" bench spmm --backend host lap3d:6 --k 1,33 --reps 2 --csv "$csv" \
    --json "$json"
  nmat=1
fi
want_rows=$((16 * nmat))
expect bench-spmm "$tmp/out" '^coalesce bench spmm: .*k = 1,33, layouts col,row, backend host'
expect bench-spmm "$tmp/out" '^== lap3d:6: 216 x 216, 1296 nonzeros, f64'
expect bench-spmm "$tmp/out" 'SpMV auto=[a-z-]+: .* check ok'
expect bench-spmm "$tmp/out" ' 33  merge +row .* ok \('
expect bench-spmm "$tmp/out" 'k=33 col: oracle (swift|rowsplit|merge) '
expect bench-spmm "$tmp/out" '^== summary at k = 33'
expect bench-spmm "$tmp/out" "$((4 * nmat)) cases, auto == oracle in [0-9]+ \([0-9.]+%\); time lost vs the oracle: total"
if [ -f "$csv" ]; then
  ok
  rows=$(($(wc -l <"$csv") - 1))
  if [ "$rows" -eq "$want_rows" ]; then ok; else bad "bench-spmm: CSV has $rows rows, expected $want_rows"; fi
  expect bench-spmm-csv "$csv" '^matrix,kernel,layout,check,selected,oracle,spmv_kernel,dtype,backend,device,k,rows,cols,nnz,us,'
  # column 4 is the check; every data row must say ok
  nok=$(tail -n +2 "$csv" | awk -F, '$4 == "ok"' | wc -l)
  if [ "$nok" -eq "$want_rows" ]; then ok; else bad "bench-spmm: $nok of $want_rows CSV checks are ok"; fi
  for k in 1 33; do
    for kern in swift rowsplit merge 'auto=[a-z]+'; do
      for lay in col row; do
        expect bench-spmm-csv "$csv" \
          "^\"lap3d:6\",$kern,$lay,ok,[a-z]+,(swift|rowsplit|merge),[a-z-]+,f64,host,\"host CPU\",$k,216,216,1296,[0-9.]+,"
        if [ $have_mat = 1 ]; then
          expect bench-spmm-csv "$csv" "^\"bcsstk04\",$kern,$lay,ok,.*,$k,132,132,3648,[0-9.]+,"
        fi
      done
    done
  done
  # k = 33 is checked on every column: checked_cols (column 26) is 33
  n33=$(tail -n +2 "$csv" | awk -F, '$11 == 33 && $26 == 33' | wc -l)
  if [ "$n33" -eq $((8 * nmat)) ]; then ok; else bad "bench-spmm: $n33 rows at k=33 checked on all columns"; fi
else
  bad "bench-spmm: $csv was not written"
fi
json_ok bench-spmm "is not valid JSON, has failed checks or misses rows" \
  'len(d["results"])==int(a[0]) and all(x["check"]=="ok" for x in d["results"]) and d["selection"]["cases"]==int(a[1]) and len(d["summary"])==int(a[2])' \
  "$json" "$want_rows" $((4 * nmat)) "$nmat"
run bench-spmm-layout 0 "$BIN" bench spmm --backend host lap3d:4 --k 2 --layout row --reps 1 \
  --dtype f32 --csv "$csv"
rows=$(($(wc -l <"$csv") - 1))
if [ "$rows" -eq 4 ]; then ok; else bad "bench-spmm-layout: CSV has $rows rows, expected 4"; fi
expect bench-spmm-layout "$csv" '^"lap3d:4",merge,row,ok,.*,f32,host,'

# ---- error paths -------------------------------------------------------------------------
run unknown-command 2 "$BIN" frobnicate
expect unknown-command "$tmp/err" "unknown command 'frobnicate'"
run no-command 2 "$BIN"
run bad-spec 2 "$BIN" info lap3d:abc
expect bad-spec "$tmp/err" "lap3d:abc"
run bad-generator 2 "$BIN" info blob:3
run bad-option 2 "$BIN" demo --frob
run bad-backend 2 "$BIN" demo --backend gpu
run bench-no-matrices 2 "$BIN" bench spmv --backend host
run bench-spmm-no-matrices 2 "$BIN" bench spmm --backend host
run bench-spmm-bad-k 2 "$BIN" bench spmm --backend host lap3d:4 --k 1,,4
expect bench-spmm-bad-k "$tmp/err" "--k: '1,,4'"
run bench-spmm-zero-k 2 "$BIN" bench spmm --backend host lap3d:4 --k 0
run bench-spmm-dup-k 2 "$BIN" bench spmm --backend host lap3d:4 --k=4,4
run bench-spmm-bad-layout 2 "$BIN" bench spmm --backend host lap3d:4 --layout diag
run bench-spmm-bad-option 2 "$BIN" bench spmm --backend host lap3d:4 --frob
run bench-unknown 2 "$BIN" bench frob
expect bench-unknown "$tmp/err" "unknown benchmark 'frob' \\(available: spmv, spmm, spgemm, solve, eigs, amg\\)"
missing="$tmp/no-such-matrix.mtx.gz"
run missing-file 1 "$BIN" info "$missing"
expect missing-file "$tmp/err" "no-such-matrix\.mtx\.gz"
run bench-missing-file 1 "$BIN" bench spmv --backend host "$missing" --reps 1
expect bench-missing-file "$tmp/err" "no-such-matrix\.mtx\.gz"
run bench-spmm-missing-file 1 "$BIN" bench spmm --backend host "$missing" --reps 1 --k 1
expect bench-spmm-missing-file "$tmp/err" "no-such-matrix\.mtx\.gz"

# ---- eigs --------------------------------------------------------------------------------
# pair lines: index, eigenvalue, relative residual, converged, exact value, relative error
pairs_ok() { # pairs_ok NAME COUNT: COUNT converged pairs, each within 1e-8 of the closed form
  if awk -v want="$2" '$1 ~ /^[0-9]+$/ && NF == 6 { n++; if ($4 != "yes" || !($6 < 1e-8)) b++ }
    END { exit !(n == want && b == 0) }' "$tmp/out"; then
    ok
  else
    bad "$1: not $2 converged pairs matching the closed form"
  fi
}
run eigs 0 "$BIN" eigs lap2d:12 --nev 4 --pc jacobi --out "$tmp/v.mtx" --history "$tmp/eh.csv"
expect eigs "$tmp/out" '^coalesce eigs: lap2d:12, 144 rows, 672 nonzeros'
expect eigs "$tmp/out" 'LOBPCG, 4 smallest eigenpairs, block size 8, preconditioner jacobi'
expect eigs "$tmp/out" '^  0 +0\.1162327302957'
expect eigs "$tmp/out" '4 of 4 converged'
pairs_ok eigs 4
if [ "$(head -1 "$tmp/v.mtx")" = '%%MatrixMarket matrix array real general' ]; then ok; else bad "eigs: --out header"; fi
expect eigs-out "$tmp/v.mtx" '^144 4$'
expect eigs-history "$tmp/eh.csv" '^iteration,pair_0,pair_1,pair_2,pair_3$'
expect eigs-history "$tmp/eh.csv" '^1,[0-9.e+-]+,[0-9.e+-]+,[0-9.e+-]+,[0-9.e+-]+$'
run eigs-largest 0 "$BIN" eigs lap2d:12 --nev 3 --which largest --tol 1e-8
expect eigs-largest "$tmp/out" 'LOBPCG, 3 largest eigenpairs'
expect eigs-largest "$tmp/out" '^  0 +7\.883767269704'
pairs_ok eigs-largest 3
run eigs-lap3d 0 "$BIN" eigs lap3d:6 --nev 5 --block 8 --pc jacobi --tol 1e-8
pairs_ok eigs-lap3d 5
run eigs-maxit 1 "$BIN" eigs lap2d:12 --nev 4 --maxit 1
expect eigs-maxit "$tmp/err" 'did not converge'
run eigs-nonsym 1 "$BIN" eigs powerlaw:100:4 --nev 2
expect eigs-nonsym "$tmp/err" 'not symmetric'
run eigs-no-matrix 2 "$BIN" eigs
run eigs-nev0 2 "$BIN" eigs lap2d:12 --nev 0
run eigs-nev-n 2 "$BIN" eigs lap2d:3 --nev 10
run eigs-block 2 "$BIN" eigs lap2d:12 --nev 4 --block 2
run eigs-unknown 2 "$BIN" eigs lap2d:12 --frob
run eigs-which 2 "$BIN" eigs lap2d:12 --which middle
run eigs-tol 2 "$BIN" eigs lap2d:12 --tol 0
run eigs-f32 2 "$BIN" eigs lap2d:12 --dtype f32
run eigs-mass-size 1 "$BIN" eigs lap2d:12 --mass lap2d:11
if [ -f "$MATDIR/lund_a.mtx.gz" ] && [ -f "$MATDIR/lund_b.mtx.gz" ]; then
  run eigs-mass 0 "$BIN" eigs "$MATDIR/lund_a.mtx.gz" --mass "$MATDIR/lund_b.mtx.gz" --nev 4 --tol 1e-8 \
    --pc jacobi
  expect eigs-mass "$tmp/out" 'A x = lambda M x, M = lund_b'
else
  skip=$((skip + 1))
fi
run bench-eigs 0 "$BIN" bench eigs lap2d:16 --nev 4 --reps 1 --csv "$tmp/e.csv" --json "$tmp/e.json"
expect bench-eigs "$tmp/out" '^coalesce bench eigs: LOBPCG, 4 smallest eigenpairs, .*preconditioner jacobi'
expect bench-eigs "$tmp/out" '^  lap2d:16 +256 +1216 '
expect bench-eigs "$tmp/out" '^target lap3d:100'
if [ -f "$tmp/e.csv" ]; then
  rows=$(($(wc -l <"$tmp/e.csv") - 1))
  if [ "$rows" -eq 1 ]; then ok; else bad "bench-eigs: CSV has $rows rows, expected 1"; fi
  expect bench-eigs-csv "$tmp/e.csv" '^matrix,backend,device,rows,nnz,nev,block,which,pc,tol,reps,solve_s_median,'
  expect bench-eigs-csv "$tmp/e.csv" '^"lap2d:16",host,"host CPU",256,1216,4,8,smallest,jacobi,1e-06,1,[0-9.]+,[0-9.]+,[0-9]+,4,'
else
  bad "bench-eigs: $tmp/e.csv was not written"
fi
json_ok bench-eigs "is not valid JSON or has the wrong results" \
  'len(d["results"])==1 and d["results"][0]["converged"]==4 and d["results"][0]["max_eig_relerr"]<1e-8' \
  "$tmp/e.json"
run bench-eigs-nonsym 1 "$BIN" bench eigs powerlaw:100:4 --nev 2 --reps 1
run bench-eigs-bad-option 2 "$BIN" bench eigs lap2d:8 --frob

run eigs-amg 0 "$BIN" eigs lap2d:12 --nev 4 --pc amg
expect eigs-amg "$tmp/out" 'preconditioner amg'
pairs_ok eigs-amg 4
run eigs-amg-opts 0 "$BIN" eigs lap3d:8 --nev 3 --pc amg --amg-coarse-size 50 --amg-degree 3
expect eigs-amg-opts "$tmp/out" 'chebyshev degree 3, coarse size 50, .*\(built here'
pairs_ok eigs-amg-opts 3
run eigs-amg-nopc 2 "$BIN" eigs lap2d:12 --amg-cycle w

# ---- amg ---------------------------------------------------------------------------------
run amg 0 "$BIN" amg lap3d:16
expect amg "$tmp/out" '^coalesce amg: lap3d:16, 4096 rows, 27136 nonzeros'
expect amg "$tmp/out" '^  level +rows +nnz +nnz/row +P nnz +MB +rho +MIS +PtAP$'
expect amg "$tmp/out" '^  0 +4096 +27136 +6\.62 +[1-9][0-9]* +[0-9.]+ +[0-9.]+ +[0-9]+ +(rows|tile)$'
expect amg "$tmp/out" '^  1 +[0-9]+ +[0-9]+ .* +- +- *$'
expect amg "$tmp/out" '^  complexity +grid 1\.[0-9]+, operator 1\.[0-9]+$'
expect amg "$tmp/out" '^  memory +hierarchy [0-9.]+ MB = [0-9.]+x A'
expect amg "$tmp/out" '^  coarsest +[0-9]+ rows, dense Cholesky factor, rank [0-9]+'
expect amg "$tmp/out" '^  setup +[0-9.]+ s: check [0-9.]+, strength .*galerkin [0-9.]+, coarse'
levels() { awk '$1 ~ /^[0-9]+$/ && NF == 9 { n++ } END { print n + 0 }' "$tmp/out"; }
lev_default=$(levels)
run amg-coarse 0 "$BIN" amg lap3d:16 --amg-coarse-size 100 --amg-smoother l1-jacobi
expect amg-coarse "$tmp/out" 'l1-jacobi degree 2, coarse size 100,'
if [ "$(levels)" -gt "$lev_default" ]; then ok; else bad "amg: --amg-coarse-size 100 gave $(levels) levels, default $lev_default"; fi
run amg-one-level 0 "$BIN" amg lap3d:6 --amg-max-levels 1
if [ "$(levels)" -eq 1 ]; then ok; else bad "amg --amg-max-levels 1: $(levels) levels"; fi
run amg-no-matrix 2 "$BIN" amg
run amg-two 2 "$BIN" amg lap3d:4 lap3d:5
run amg-f32 2 "$BIN" amg lap3d:4 --dtype f32
run amg-bad-theta 2 "$BIN" amg lap3d:4 --amg-theta -0.1
run amg-unknown 2 "$BIN" amg lap3d:4 --frob
run amg-nonsym 1 "$BIN" amg powerlaw:100:4
expect amg-nonsym "$tmp/err" 'AMG setup'

# ---- bench amg ---------------------------------------------------------------------------
acsv="$tmp/amg.csv"
ajson="$tmp/amg.json"
run bench-amg 0 "$BIN" bench amg lap3d:12 lap2d:24 --reps 1 --nrhs 4 --no-eigs --csv "$acsv" \
  --json "$ajson"
expect bench-amg "$tmp/out" '^coalesce bench amg: theta 0\.02, .*4 RHS for Block-CG'
expect bench-amg "$tmp/out" '^== lap3d:12: 1728 rows, 11232 nonzeros'
expect bench-amg "$tmp/out" '^  AMG setup +[0-9.]+ ms median'
expect bench-amg "$tmp/out" '^  AMG re-setup +[0-9.]+ ms median \([0-9.]+ of the setup\), numeric only;'
expect bench-amg "$tmp/out" '^  V-cycle +1 RHS [0-9.]+ ms; 4 RHS [0-9.]+ ms'
expect bench-amg "$tmp/out" '^  PCG\+AMG +[0-9]+ iterations, solve [0-9.]+ ms after setup'
expect bench-amg "$tmp/out" '^  CG\+Jacobi +[0-9]+ iterations'
expect bench-amg "$tmp/out" '^  Block-CG\+AMG +4 RHS: [0-9]+ block iterations'
expect bench-amg "$tmp/out" '^  AMG setup, 7-point 128\^3 +<= 10 ms not in this run'
if grep -Eq '^  LOBPCG\+AMG +16 smallest to 1e-06:' "$tmp/out"; then bad "bench amg --no-eigs ran LOBPCG"; else ok; fi
if [ "$(grep -Ec '^  status +ok$' "$tmp/out")" -eq 2 ]; then ok; else bad "bench amg: not 2 rows ok"; fi
if [ -f "$acsv" ]; then
  expect bench-amg-csv "$acsv" '^matrix,set,backend,device,rows,nnz,levels,grid_complexity,op_complexity,hierarchy_bytes,a_bytes,memory_ratio,coarse_rows,setup_ms,setup_ms_min,resetup_ms,vcycle_1_ms,nrhs,vcycle_nrhs_ms,pcg_amg_its,pcg_amg_converged,'
  expect bench-amg-csv "$acsv" ',winner,status$'
  expect bench-amg-csv "$acsv" '^"lap3d:12",list,host,"host CPU",1728,11232,[0-9]+,'
  expect bench-amg-csv "$acsv" '^"lap2d:24",list,host,"host CPU",576,2784,'
  rows=$(($(wc -l <"$acsv") - 1))
  if [ "$rows" -eq 2 ]; then ok; else bad "bench amg: CSV has $rows rows, expected 2"; fi
  # PCG+AMG converged in fewer iterations than CG+Jacobi on each row, status ok
  if awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
      { n++; if ($c["pcg_amg_converged"] == 1 && $c["pcg_amg_its"] < $c["cg_jacobi_its"] &&
                 $c["status"] == "\"ok\"" && $c["lobpcg_amg_its"] == "") good++ }
      END { exit !(n == 2 && good == 2) }' "$acsv"; then
    ok
  else
    bad "bench amg: CSV rows without PCG+AMG beating CG+Jacobi"
  fi
else
  bad "bench amg: $acsv was not written"
fi
json_ok bench-amg "is not valid JSON or has the wrong results" \
  'len(d["results"])==2 and all(x["status"]=="ok" and x["memory_ratio"]>=1 for x in d["results"]) and len(d["targets"])==7 and not any(x["ran"] for x in d["targets"])' \
  "$ajson"
run bench-amg-eigs 0 "$BIN" bench amg lap3d:8 --reps 1 --nrhs 2 --no-block --csv "$acsv"
expect bench-amg-eigs "$tmp/out" '^  LOBPCG\+AMG +16 smallest to 1e-06: [0-9]+ iterations, 16 converged'
if grep -Eq '^  Block-CG\+AMG +[0-9]+ RHS:' "$tmp/out"; then bad "bench amg --no-block ran Block-CG"; else ok; fi
expect bench-amg-eigs "$acsv" '^"lap3d:8",list,.*,16,[0-9.]+,[0-9.e-]+,[0-9.e-]+,[a-z]+,"ok"$'
run bench-amg-nonsym 1 "$BIN" bench amg powerlaw:100:4 --reps 1 --csv "$acsv"
expect bench-amg-nonsym "$acsv" '"not symmetric"$'
run bench-amg-bad-option 2 "$BIN" bench amg lap3d:4 --frob
run bench-amg-bad-nrhs 2 "$BIN" bench amg lap3d:4 --nrhs 0
run bench-amg-bad-rtol 2 "$BIN" bench amg lap3d:4 --rtol 0
run bench-amg-bad-amg 2 "$BIN" bench amg lap3d:4 --amg-smoother jacobi
run bench-amg-spd-nodir 2 "$BIN" bench amg --spd-set
expect bench-amg-spd-nodir "$tmp/err" '--spd-set needs --matrices DIR'
run bench-amg-dir-nospd 2 "$BIN" bench amg --matrices "$tmp"
if [ $have_mat = 1 ] && [ -f "$MATDIR/lund_a.mtx.gz" ] && [ -f "$MATDIR/west0067.mtx.gz" ]; then
  # a folder with three SPD matrices of the list, a mass matrix and an unsymmetric one
  mkdir -p "$tmp/spd"
  for m in nos4 bcsstk04 lund_a lund_b west0067; do ln -sf "$MATDIR/$m.mtx.gz" "$tmp/spd/"; done
  run bench-amg-spd 0 "$BIN" bench amg --spd-set --matrices "$tmp/spd" --reps 1 --csv "$acsv"
  expect bench-amg-spd "$tmp/out" '^spd-set: CG\+AMG against CG\+Jacobi'
  expect bench-amg-spd "$tmp/out" '^  nos4 +100 +594 +[0-9]+ +[0-9.]+ \| +[0-9]+ .*\| (amg|jacobi) +ok$'
  if grep -Eq '^  (lund_b|west0067) ' "$tmp/out"; then bad "bench amg --spd-set took a matrix off the list"; else ok; fi
  rows=$(tail -n +2 "$acsv" | grep -c ',spd,')
  if [ "$rows" -eq 3 ]; then ok; else bad "bench amg --spd-set: $rows CSV rows, expected 3"; fi
  if grep -q '^targets' "$tmp/out"; then bad "bench amg --spd-set alone printed targets"; else ok; fi
else
  skip=$((skip + 1))
fi

if [ "$skip" -gt 0 ]; then
  echo "$pass passed, $fail failed, $skip skipped"
else
  echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
