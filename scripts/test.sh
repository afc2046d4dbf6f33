#!/usr/bin/env bash
# Builds and runs every test suite this machine can run:
#   - host suite (warnings as errors), cuda suite (built with CUDA only; skips itself without a
#     GPU), petsc suite (the PETSc plugin; PETSc and SLEPc from the distribution's packages); the
#     build includes the probes of bench/ (-Dprobes=true), so that they keep compiling,
#   - host suite again under AddressSanitizer + UndefinedBehaviorSanitizer,
#   - a short libFuzzer run of the Matrix Market reader (FUZZ_SECONDS, default 60).
# Set COALESCE_MATRICES to use another folder of SuiteSparse matrices.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
. scripts/env.sh
extra=("$@")

pass=0; fail=0; skip=0
tally() { # parses meson's summary lines from a log
  local log=$1 ok f s
  ok=$(grep -E '^Ok: +[0-9]+' "$log" | awk '{print $2}' | tail -1)
  f=$(grep -E '^Fail: +[0-9]+' "$log" | awk '{print $2}' | tail -1)
  s=$(grep -E '^Skipped: +[0-9]+' "$log" | awk '{print $2}' | tail -1)
  pass=$((pass + ${ok:-0})); fail=$((fail + ${f:-0})); skip=$((skip + ${s:-0}))
}

status=0
# -Dprobes=true on an existing folder too (one configured before the option existed)
if [ ! -d build-test ]; then
  meson setup build-test -Dwerror=true -Dprobes=true "${extra[@]}"
else
  meson configure build-test -Dprobes=true "${extra[@]}"
fi
ninja -C build-test
meson test -C build-test --suite host --suite cuda --suite petsc --print-errorlogs --num-processes 2 \
  2>&1 | tee build-test/suite.log || status=1
tally build-test/suite.log

# install, then build an outside program against the installed library through pkg-config
install_check() {
  local dest="$PWD/build-test/destdir" pc libdir
  rm -rf "$dest"
  DESTDIR="$dest" meson install -C build-test --quiet >build-test/install.log 2>&1 || return 1
  pc=$(find "$dest" -name coalesce.pc | head -1)
  [ -n "$pc" ] || return 1
  libdir=$(dirname "$(dirname "$pc")")
  export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR="$dest"
  # shellcheck disable=SC2046
  cc -std=c11 examples/spmv_example.c $(pkg-config --cflags --libs coalesce) \
    -lm -o build-test/spmv_example_installed || return 1
  unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
  LD_LIBRARY_PATH="$libdir" COALESCE_BACKEND=host ./build-test/spmv_example_installed \
    >build-test/install_run.log 2>&1
}
if install_check; then
  pass=$((pass + 1)); echo "install: ok (examples/spmv_example.c built with pkg-config runs)"
else
  fail=$((fail + 1)); status=1; echo "install: FAILED"
  tail -20 build-test/install.log build-test/install_run.log 2>/dev/null
fi

[ -d build-asan ] || meson setup build-asan -Dcuda=disabled -Dwerror=true \
  -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
ninja -C build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  meson test -C build-asan --suite host --print-errorlogs --num-processes 2 \
  2>&1 | tee build-asan/suite.log || status=1
tally build-asan/suite.log

if bash tests/fuzz.sh "${FUZZ_SECONDS:-60}" > build-test/fuzz.log 2>&1; then
  pass=$((pass + 1)); echo "fuzz: ok ($(grep -c . build-test/fuzz.log) log lines)"
else
  fail=$((fail + 1)); status=1; echo "fuzz: FAILED"; tail -40 build-test/fuzz.log
fi

echo "tests: $pass passed, $fail failed, $skip skipped"
exit $status
