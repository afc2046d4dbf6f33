#!/usr/bin/env bash
# Installs what the build and the tests need on Debian 12 / Ubuntu 24.04 (idempotent).
# The CUDA toolkit is optional: when nvcc is found (PATH or /usr/local/cuda) the CUDA backend
# is built too; without it the host backend alone is built.
set -euo pipefail
pkgs=(meson ninja-build gcc pkg-config zlib1g-dev liblapack-dev clang libclang-rt-dev
  petsc-dev slepc-dev openmpi-bin)
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
updated=0
apt_install() {
  [ "$updated" -eq 1 ] || $SUDO apt-get update -qq
  updated=1
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@"
}
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  apt_install "${missing[@]}"
fi
# PETSc's and SLEPc's own tutorials for the petsc test suite: the examples packages carry the
# PETSc version in their names (Debian 12: 3.18, Ubuntu 24.04: 3.19), so they are looked up.
if ! ls /usr/share/petsc/*/share/petsc/examples/src/ksp/ksp/tutorials/ex2.c >/dev/null 2>&1 ||
  ! ls /usr/share/slepc/*/share/slepc/examples/src/eps/tutorials/ex1.c >/dev/null 2>&1; then
  [ "$updated" -eq 1 ] || { $SUDO apt-get update -qq; updated=1; }
  ex=()
  for lib in petsc slepc; do
    v=$(dpkg-query -W -f='${Version}' "$lib-dev" | sed -E 's/^([0-9]+:)?([0-9]+\.[0-9]+).*/\2/')
    ex+=("lib${lib}${v}-dev-examples")
  done
  echo "installing: ${ex[*]}"
  apt_install "${ex[@]}"
fi
