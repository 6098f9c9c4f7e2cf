#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test with ctest.
#   scripts/test.sh            the normal build (build/)
#   scripts/test.sh --asan     AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   scripts/test.sh --tsan     ThreadSanitizer (build-tsan/)
# The sanitizer builds are the CMake presets of the same names
# (CMakePresets.json: the one place their flags and runtime options are
# written), so `cmake --preset asan && cmake --build --preset asan && ctest
# --preset asan` does the same by hand. $PPT_BUILD_DIR moves the build folder
# of any mode. Extra arguments after -- go to ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# The browser tests (label `browser`: the HTML report in headless Chromium)
# are part of the suite: setup.sh installs Debian's chromium for them, a few
# minutes once. PPT_WITH_BROWSER=0 skips the install, and the tests then skip
# themselves with a message.
export PPT_WITH_BROWSER=${PPT_WITH_BROWSER:-1}
mode=normal
ctest_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --asan) mode=asan ;;
    --tsan) mode=tsan ;;
    --) shift; ctest_args+=("$@"); break ;;
    *) ctest_args+=("$1") ;;
  esac
  shift
done
if [[ $mode == normal ]]; then
  export PPT_BUILD_DIR=${PPT_BUILD_DIR:-$root/build}
  "$root/scripts/build.sh"
  cd "$PPT_BUILD_DIR"
  ctest --output-on-failure -j "$(nproc)" "${ctest_args[@]}"
  exit
fi
"$root/scripts/setup.sh"
build=${PPT_BUILD_DIR:-$root/build-$mode}
cd "$root"
if command -v ccache >/dev/null && [[ -z ${CMAKE_CXX_COMPILER_LAUNCHER:-} ]]; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake --preset "$mode" -B "$build" >/dev/null
fi
cmake --build "$build" -j "${PPT_JOBS:-$(nproc)}"
ctest --preset "$mode" --test-dir "$build" -j "$(nproc)" "${ctest_args[@]}"
