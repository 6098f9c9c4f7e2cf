#!/usr/bin/env bash
# Configures and builds pp-timeline into build/ (or $PPT_BUILD_DIR).
# Extra arguments go to the cmake configure step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PPT_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
# ccache, where installed, makes a rebuild in a fresh clone cheap.
if command -v ccache >/dev/null && [[ -z ${CMAKE_CXX_COMPILER_LAUNCHER:-} ]]; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${PPT_BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
elif [[ $# -gt 0 ]]; then
  cmake "$build" "$@" >/dev/null
fi
cmake --build "$build" -j "${PPT_JOBS:-$(nproc)}"
