#!/usr/bin/env bash
# One command from a fresh machine to the main job: install dependencies, build, run the demo.
#   scripts/setup.sh [extra meson options]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
. scripts/env.sh
[ -d build ] || meson setup build "$@"
ninja -C build
./build/coalesce demo
