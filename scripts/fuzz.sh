#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang with ASan + UBSan) and runs
# each one for SECONDS, one after the other.
#
#   scripts/fuzz.sh SECONDS [TARGET...]     TARGET: line_parser, conversion, dygraph_profile, escape (default: all)
#
# The working corpus grows in build-fuzz/corpus/<target>/ (seeded from
# testdata/fuzz/<target>/, which is only read); logs go to
# build-fuzz/logs/<target>.log. At the end it prints, per target, the
# executions, the speed and the coverage (libFuzzer's cov: edges and ft:
# features). A finding stops that target and leaves the input in
# build-fuzz/artifacts/; the exit status is then 1. To keep a finding as a
# regression test, copy it to testdata/fuzz/<target>/crash-<what> (ctest
# replays every file there) and fix the cause.
#
# Environment: PPT_FUZZ_BUILD_DIR (default build-fuzz), PPT_FUZZ_ARGS (extra
# libFuzzer flags), PPT_JOBS (build parallelism).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
if [[ $# -lt 1 || "$1" == -h || "$1" == --help ]]; then usage; exit 2; fi
seconds=$1; shift
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: SECONDS must be a positive number" >&2; exit 2; }
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(line_parser conversion dygraph_profile escape)
for t in "${targets[@]}"; do
  [[ -f tests/fuzz/fuzz_$t.cc ]] || { echo "fuzz.sh: unknown target $t (tests/fuzz/fuzz_$t.cc)" >&2; exit 2; }
done

PPT_WITH_FUZZ=1 "$root/scripts/setup.sh"
build=${PPT_FUZZ_BUILD_DIR:-$root/build-fuzz}
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake --preset fuzz -B "$build" >/dev/null
fi
cmake --build "$build" -j "${PPT_JOBS:-$(nproc)}" --target "${targets[@]/#/fuzz_}"

declare -A max_len=([line_parser]=4096 [conversion]=32768 [dygraph_profile]=16384 [escape]=1024)
summary=()
status=0
for t in "${targets[@]}"; do
  corpus=$build/corpus/$t
  mkdir -p "$corpus" "$build/artifacts" "$build/logs"
  log=$build/logs/$t.log
  echo "fuzz.sh: fuzz_$t for $seconds s (log: $log)" >&2
  set +e
  # -timeout: an input that takes more than 10 s is a hang and a finding.
  # shellcheck disable=SC2086
  "$build/tests/fuzz/fuzz_$t" "$corpus" "$root/testdata/fuzz/$t" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="${max_len[$t]:-4096}" \
    -dict="$root/tests/fuzz/$t.dict" -artifact_prefix="$build/artifacts/$t-" \
    -print_final_stats=1 ${PPT_FUZZ_ARGS:-} >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<<"$last")
  verdict="no finding"
  if [[ $rc -ne 0 ]]; then
    verdict="FINDING (exit $rc): $(grep -m1 -E 'ERROR: |check failed|runtime error' "$log" || echo 'see the log')"
    verdict+="; input: $(sed -n 's/.*Test unit written to \(.*\)/\1/p' "$log" | tail -1)"
    status=1
  fi
  summary+=("$(printf '  %-12s %6ss %14s execs %10s/s  cov %6s  ft %7s  corpus %-12s %s' \
    "$t" "$seconds" "${execs:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$verdict")")
done
echo
echo "fuzz.sh: $(date -u +%Y-%m-%dT%H:%MZ), $(clang++ --version | head -1)"
printf '%s\n' "${summary[@]}"
exit $status
