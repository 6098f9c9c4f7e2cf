#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test with ctest.
#   scripts/test.sh            the normal build (build/)
#   scripts/test.sh --asan     AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   scripts/test.sh --tsan     ThreadSanitizer (build-tsan/)
# Extra arguments after -- go to ctest.
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
case "$mode" in
  normal) export PPT_BUILD_DIR=${PPT_BUILD_DIR:-$root/build}; cfg=() ;;
  asan) export PPT_BUILD_DIR=$root/build-asan
        cfg=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined") ;;
  tsan) export PPT_BUILD_DIR=$root/build-tsan
        cfg=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS=-fsanitize=thread") ;;
esac
"$root/scripts/build.sh" "${cfg[@]}"
cd "$PPT_BUILD_DIR"
ctest --output-on-failure -j "$(nproc)" "${ctest_args[@]}"
