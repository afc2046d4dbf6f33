#!/bin/sh
# Fuzzes the Matrix Market readers with libFuzzer (+ AddressSanitizer, UBSan).
#   tests/fuzz.sh [seconds]      default 600; run from anywhere
# Environment: CC (default clang), COALESCE_MATRICES (seed matrices, default
# ../shared/matrices), FUZZ_EXTRA_SOURCES (more .c files to link), FUZZ_ARGS (extra libFuzzer
# flags). Builds into build-fuzz/, keeps the corpus in fuzz-corpus/mmio/ (both git-ignored);
# crash reproducers land in build-fuzz/ (rerun one with: build-fuzz/fuzz_mmio FILE).
set -eu
cd "$(dirname "$0")/.."
secs=${1:-600}
build="build-fuzz"
corpus="fuzz-corpus/mmio"
matrices=${COALESCE_MATRICES:-../shared/matrices}
mkdir -p "$build" "$corpus"

# Every host source of the library: the core (src/*.c), the front ends and the registry of
# backends (kernels/*.c) and the host backend (kernels/host/*.c). The CUDA backend
# (kernels/cuda/) needs nvcc and is not fuzzed here: the registry's coal_config.h (meson writes
# it) says so. FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION lowers the readers' size limits
# (mmio_internal.h) so that a short header cannot ask for gigabytes.
printf '#define COAL_HAVE_CUDA 0\n' > "$build/coal_config.h"
# shellcheck disable=SC2086
${CC:-clang} -std=c11 -D_POSIX_C_SOURCE=200809L -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION \
  -g -O1 -fno-omit-frame-pointer -Wall -Wextra \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -Isrc -Ikernels -I"$build" src/*.c kernels/*.c kernels/host/*.c ${FUZZ_EXTRA_SOURCES:-} \
  tests/fuzz_mmio.c -lz -lm -o "$build/fuzz_mmio"

# Seeds: small real files, then hand-made valid and broken inputs.
for m in jgl009 cage4 cage5 west0067 lp_afiro nos4 bcsstm26; do
  if [ -f "$matrices/$m.mtx.gz" ]; then
    gzip -dc "$matrices/$m.mtx.gz" | head -c 4096 > "$corpus/seed_$m.mtx"
  fi
done
mm='%%%%MatrixMarket matrix'  # printf format: %% is one %
# shellcheck disable=SC2059 # the seed text is the format: it holds \n, \r and \t escapes
seed() { printf "$2" > "$corpus/seed_$1.mtx"; }
seed general "$mm coordinate real general\n%% c\n3 4 5\n1 1 1.5\n3 4 -2\n1 1 2.25\n2 3 1e-3\n3 4 .5\n"
seed sym "$mm coordinate real symmetric\n3 3 4\n1 1 4\n2 1 -1\n3 2 -2\n3 3 5\n"
seed skew "$mm coordinate real skew-symmetric\n3 3 3\n2 1 2\n3 1 -3\n3 2 4\n"
seed pattern "$mm coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n"
seed integer "$mm coordinate integer general\n2 2 2\n1 1 7\n2 2 -3\n"
seed crlf "$mm Coordinate REAL General\r\n%%x\r\n\r\n 2\t2  2 \r\n1 2 -0.5\r\n2\t1\t.25"
seed array "$mm array real general\n3 2\n1\n2\n3\n4\n5\n6\n"
seed arraysym "$mm array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n"
seed arrayskew "$mm array integer skew-symmetric\n3 3\n1\n2\n3\n"
seed complex "$mm coordinate complex hermitian\n1 1 1\n1 1 1 0\n"
seed upper "$mm coordinate real symmetric\n2 2 1\n1 2 3.0\n"
seed nan "$mm coordinate real general\n2 2 1\n1 1 nan\n"
seed garbage "$mm coordinate real general\n2 2 1\n1 2 3.0 xyz\n"
seed huge "$mm coordinate real general\n2147483647 2147483647 2147483647\n1 1 1\n"
seed trunc "$mm coordinate real general\n2 2 3\n1 1 1\n"

cat > "$build/mmio.dict" <<'DICT'
"%%MatrixMarket"
"matrix"
"coordinate"
"array"
"real"
"double"
"integer"
"pattern"
"complex"
"general"
"symmetric"
"skew-symmetric"
"hermitian"
"nan"
"inf"
"e+308"
"e-320"
"2147483647"
"2147483648"
"9223372036854775808"
"\x0d\x0a"
"\x09"
DICT

# shellcheck disable=SC2086
exec "$build/fuzz_mmio" -max_len=4096 -max_total_time="$secs" -timeout=10 \
  -dict="$build/mmio.dict" -artifact_prefix="$build/" -print_final_stats=1 \
  ${FUZZ_ARGS:-} "$corpus"
