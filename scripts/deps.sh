#!/usr/bin/env bash
# Installs what the build and the tests need on Debian 12 / Ubuntu 24.04 (idempotent).
# The CUDA toolkit is optional: when nvcc is found (PATH or /usr/local/cuda) the CUDA backend
# is built too; without it the host backend alone is built.
set -euo pipefail
pkgs=(meson ninja-build gcc pkg-config zlib1g-dev liblapack-dev clang libclang-rt-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
