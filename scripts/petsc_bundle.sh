#!/usr/bin/env bash
# Packs what bench/petsc_gpu_run.sh needs on a GPU machine that has no PETSc into .petsc/
# (git-ignored): Debian's PETSc and SLEPc runtime libraries with their dependencies (less the
# C/C++/Fortran runtimes and Open MPI, which the GPU machine has), and the plugin, its tests and
# the tutorials from a CUDA build directory. Usage: scripts/petsc_bundle.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:?build directory (configured with CUDA and PETSc)}
rm -rf .petsc && mkdir -p .petsc/lib .petsc/bin
libs=$(ldd "$B/tests/slepc_eps_ex1" "$B/libcoalesce.so" | awk '/=>/{print $3}' | sort -u)
for f in $libs /usr/lib/x86_64-linux-gnu/libslepc_real.so.3.*; do
  b=$(basename "$f")
  case $b in
  libc.so* | libm.so* | libgcc_s* | libstdc++* | libresolv* | libz.so* | libmpi.so* | libopen-*) continue ;;
  libhwloc* | libevent* | libudev* | libgomp* | libquadmath* | libgfortran* | libcrypto* | libssl*) continue ;;
  libcuda* | libcublas* | libcusparse* | libnvJitLink* | libcoalesce*) continue ;;
  esac
  cp -L "$f" ".petsc/lib/$b"
done
cp -L "$B/libcoalesce.so" .petsc/lib/libcoalesce.so.0
strip --strip-debug .petsc/lib/libcoalesce.so.0
tar -C .petsc -cJf .petsc/petsc-runtime.tar.xz lib
rm -rf .petsc/lib
for t in test_petsc_swift test_petsc_swift_mpi test_petsc_shell test_petsc_vec test_petsc_pc \
  petsc_ksp_ex2 petsc_ksp_ex56 slepc_eps_ex1; do cp "$B/tests/$t" .petsc/bin/; done
du -sh .petsc
