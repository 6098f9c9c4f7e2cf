#!/usr/bin/env bash
# Installs the Debian packages pp-timeline needs, only those missing.
# Idempotent and quiet when everything is already there.
# PPT_WITH_BROWSER=1 also installs chromium for the browser tests.
# Then installs the trace consumers the tests load our traces with
# (tests/consumers: `npm ci`, skipped when node_modules is already at the lock).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# The consumers' packages, at tests/consumers/package-lock.json.
consumers() {
  local dir=$root/tests/consumers
  [[ -f $dir/package-lock.json ]] || return 0
  command -v npm >/dev/null || { echo "setup: no npm: the consumers test will be skipped" >&2; return 0; }
  local want
  want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  [[ -f $dir/node_modules/.ppt-lock && $(cat "$dir/node_modules/.ppt-lock") == "$want" ]] && return 0
  echo "setup: npm ci in tests/consumers" >&2
  if (cd "$dir" && npm ci --no-audit --no-fund >/tmp/pp-timeline-npm.log 2>&1); then
    echo "$want" >"$dir/node_modules/.ppt-lock"
  else
    echo "setup: npm ci failed (see /tmp/pp-timeline-npm.log): the consumers test will be skipped" >&2
    tail -5 /tmp/pp-timeline-npm.log >&2
    # In CI a consumer that could not be installed is a failure, not a skip.
    [[ ${CI:-} == true ]] && exit 1
  fi
}
trap consumers EXIT

packages=(cmake ninja-build g++ pkg-config python3
          libre2-dev libcli11-dev nlohmann-json3-dev libfmt-dev catch2
          libgoogle-glog-dev zlib1g-dev protobuf-compiler libarchive-dev
          python3-jsonschema librsvg2-dev libcairo2-dev fonts-dejavu-core
          cmark-gfm openssl man-db dpkg-dev file clang-format-14
          zip zstd)
# openssl: the build hashes the report script for its CSP; man-db, dpkg-dev
# and file: the install test (man -l, cpack's DEB through dpkg-shlibdeps);
# clang-format-14: the format check (scripts/check_format.sh); zip and zstd:
# the archive tests make their archives with the real tools.
# node runs the trace consumers (tests/consumers); Debian's nodejs lacks npm.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
if [[ "${PPT_WITH_BROWSER:-0}" == 1 ]]; then
  packages+=(chromium)
fi
if [[ "${PPT_WITH_FUZZ:-0}" == 1 ]]; then
  packages+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/pp-timeline-setup.log 2>&1; then
  "${sudo_cmd[@]}" apt-get update -q >>/tmp/pp-timeline-setup.log 2>&1
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >>/tmp/pp-timeline-setup.log 2>&1 || {
    echo "setup: apt-get failed; see /tmp/pp-timeline-setup.log" >&2
    tail -20 /tmp/pp-timeline-setup.log >&2
    exit 1
  }
fi
