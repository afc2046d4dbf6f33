#!/usr/bin/env bash
# One command from a fresh machine to the main job: install dependencies, build, run the demo.
#   scripts/setup.sh [extra meson options, e.g. -Dcuda=disabled]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
. scripts/env.sh
# options go to meson: to a new build folder, or reconfigure an existing one
if [ ! -d build ]; then
  meson setup build "$@"
elif [ $# -gt 0 ]; then
  meson configure build "$@"
fi
ninja -C build
./build/coalesce demo
