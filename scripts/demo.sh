#!/usr/bin/env bash
# Installs what is missing, builds, and shows pp-timeline at work:
#  1. converts the bundled example logs (testdata/example/logs);
#  2. runs pp-demo, a real multi-process pipeline run timed by the shim, and
#     converts its fresh logs.
# Outputs go to out/demo/ (or $PPT_DEMO_OUT).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PPT_BUILD_DIR:-$root/build}
out=${PPT_DEMO_OUT:-$root/out/demo}

echo "building (first time: a few minutes) ..."
"$root/scripts/build.sh" >/tmp/pp-timeline-demo-build.log 2>&1 || {
  tail -30 /tmp/pp-timeline-demo-build.log >&2
  exit 1
}
rm -rf "$out"
mkdir -p "$out"

# Formats beyond JSON are added when the binary knows them.
extra_outputs() {
  local stem=$1
  local help
  help=$("$build/pp-timeline" --help 2>&1 || true)
  if grep -q pftrace <<<"$help"; then echo "-o $stem.pftrace"; fi
  if grep -q '\.svg' <<<"$help"; then echo "-o $stem.svg"; fi
}

echo
echo "== 1. the bundled example: testdata/example/logs (2 machines x 4 ranks, 1F1B)"
# shellcheck disable=SC2046
"$build/pp-timeline" --log_dir "$root/testdata/example/logs" \
  -o "$out/example.json" --perfetto-json "$out/example_perfetto.json" $(extra_outputs "$out/example")

if [[ -x "$build/pp-demo" ]]; then
  echo
  echo "== 2. a real run: pp-demo, 4 rank processes, 1F1B, 8 micro-batches, 3 steps"
  "$build/pp-demo" --log_dir "$out/demo_logs" --ranks 4 --schedule 1f1b --micro-batches 8 --steps 3
  # shellcheck disable=SC2046
  "$build/pp-timeline" --log_dir "$out/demo_logs" \
    -o "$out/demo.json" --perfetto-json "$out/demo_perfetto.json" $(extra_outputs "$out/demo")
fi

echo
echo "Traces are in $out/:"
ls -1 "$out" | grep -v _logs | sed 's/^/  /'
cat <<MSG

Open them:
  - Perfetto: https://ui.perfetto.dev -> "Open trace file" -> *_perfetto.json (or *.pftrace)
  - Chrome:   chrome://tracing -> "Load" -> example.json
Each rank is a row (GPU:<rank>), grouped by machine; the "steps" row on top
shows each training step; gaps between jobs on a row are pipeline bubbles.
MSG
