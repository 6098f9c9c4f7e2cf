#!/usr/bin/env bash
# The pp-timeline benchmark: speed and memory on a large synthetic log set,
# against the floor (what reading the input and writing the output must cost)
# and against the old Python helper.
#
#   scripts/bench.sh [--runs N] [--skip-old] [--old-files N] [--regen] [--no-build]
#                    [--only SECTION,...] [--scale-ranks N,...] [--baseline BIN|COMMIT]
#                    [--watch-steps N] [--shim-baseline LIB]
#
# The set (64 ranks on 8 machines, 1F1B, 64 micro-batches, 20 steps, 1000
# noise lines per step and rank, about 190 MB) is generated once into
# .bench/logs by scripts/gen_logs.py and reused while its parameters are
# unchanged. Times are medians of --runs runs (default 5) after one warm-up
# run, so the files are in the page cache for everybody.
#
# Goals: pp-timeline <= 2x the floor; peak RSS <= 32 MB + 64 bytes per job;
# >= 500x faster than the old helper; identical output with --threads 1.
# The figures are printed, never asserted, except that differing --threads 1
# output or a failing pp-timeline run makes the exit status 1.
#
# The scale section converts sets of 64 to 1024 ranks (8 ranks a machine,
# data-parallel replicas of a 16-stage 1F1B pipeline, 64 micro-batches, 20
# steps, 10 noise lines per step and rank: about 2,580 jobs and 0.53 MB a rank;
# 1024 ranks are about 2.6 M jobs and 540 MB) to .pftrace (.json while the
# build has no .pftrace writer), each set generated once into .bench/scale/.
# Goals at 1024 ranks: <= 3x its floor (grep -F -c over the same files + cat
# of the output's bytes), peak RSS < 256 MB; and time and memory per rank
# that do not grow with the rank count (printed as a growth table).
# --scale-ranks picks the sets (default 64,128,256,512,1024); --only runs
# some sections (e.g. --only scale).
#
# The ranks1024 section converts the 1024-rank set to .pftrace against its
# floor and prints the .pftrace's bytes a job, then `stats --json` and
# `whatif` with six targets against that convert, with peak RSS; with
# --baseline the baseline runs the same commands alternately with this build
# (before and after in one run). Goals: convert <= 2x the floor, <= 48 bytes
# a job, stats --json <= 1x the convert, whatif <= 1.5x, peak RSS < 256 MB.
#
# The stats section times `stats` and `diff` against a plain convert (one
# .json output) in the same run; goal: each <= 1.5x it.
#
# The pftrace section converts the set to Perfetto's protobuf trace and, in the
# same run, to Chrome JSON (one output each, flow arrows on, as by default).
# Goals: the .pftrace at most 1/4 of the JSON's size, and written at least as
# fast (the two runs differ only in the writer).
#
# The report section times `report` and a .svg against a plain convert
# (goal: report <= 1.5x it) and headless Chromium loading the page against an
# empty page.
#
# The baseline section (with --baseline BIN, a pp-timeline built from an
# earlier commit, or --baseline COMMIT, which builds one into
# .bench/baseline-<commit>/) times BIN and this build on the same conversions in the same
# run, alternating the two: the default convert of the set, the set to
# .pftrace, and the largest --scale-ranks set to .pftrace. It prints each pair
# and their ratios (this build / BIN, time and peak RSS) and compares the
# outputs byte for byte (a difference is printed, not a failure: a fix may
# change output on purpose).
#
# The watch section (scripts/bench_watch.py) feeds a 64-rank log set at 100
# steps per second to `pp-timeline watch --jsonl -` and prints watch's CPU
# time per step, its latency from the write that completes a step to that
# step's JSON line (p50, p95) and its peak RSS after --watch-steps steps
# (default 2000, 20 s; fewer for a quick look). It is not in the default
# list: run it with --only watch.
#
# The shim section builds scripts/shim_bench.cc against the build's
# libppt_shim.a and prints the shim's host costs on the host clock (medians
# of --runs runs): a begin/end pair, the flush of a 64-job step written to a
# log file (median and 99th percentile), the worst flush while the log is a pipe
# nobody reads for a second (a stalled stderr), and a pair with 4 threads
# sharing one profiler. With --shim-baseline LIB (an earlier build's
# libppt_shim.a) the same source is linked against LIB too and both run
# alternately, so the table has before and after from one run. Goals: a
# stalled log never holds a flush (worst flush under 10 ms) and a pair stays
# under 500 ns.
#
# Adding a section (a .pftrace output, stats/diff, a 1024-rank set...): write
# a `section_<name>` function that calls `row` for timings and `goal` for
# ratios, and add <name> to SECTIONS below. Sections run in that order and
# share the variables set by prepare_*.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

runs=5
skip_old=0
old_files=0
regen=0
do_build=1
only=
scale_ranks_arg=64,128,256,512,1024
baseline_bin=
watch_steps=2000
shim_baseline=
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --runs=*) runs=${1#*=}; shift ;;
    --skip-old) skip_old=1; shift ;;
    --old-files) old_files=$2; shift 2 ;;
    --old-files=*) old_files=${1#*=}; shift ;;
    --regen) regen=1; shift ;;
    --no-build) do_build=0; shift ;;
    --only) only=$2; shift 2 ;;
    --only=*) only=${1#*=}; shift ;;
    --scale-ranks) scale_ranks_arg=$2; shift 2 ;;
    --scale-ranks=*) scale_ranks_arg=${1#*=}; shift ;;
    --baseline) baseline_bin=$2; shift 2 ;;
    --baseline=*) baseline_bin=${1#*=}; shift ;;
    --watch-steps) watch_steps=$2; shift 2 ;;
    --watch-steps=*) watch_steps=${1#*=}; shift ;;
    --shim-baseline) shim_baseline=$2; shift 2 ;;
    --shim-baseline=*) shim_baseline=${1#*=}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
# --baseline also takes a commit: its pp-timeline is built once into
# .bench/baseline-<commit>/ (the commit's files from git archive, the
# pp-timeline target only) and reused.
if [[ -n "$baseline_bin" && ! -x "$baseline_bin" ]] &&
   sha=$(git -C "$root" rev-parse --verify -q --short "$baseline_bin^{commit}"); then
  bsrc=$root/.bench/baseline-$sha
  if [[ ! -x "$bsrc/build/pp-timeline" ]]; then
    echo "bench: building the baseline $baseline_bin ($sha) into $bsrc" >&2
    rm -rf "$bsrc" && mkdir -p "$bsrc"
    git -C "$root" archive "$sha" | tar -x -C "$bsrc"
    launcher=()
    command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    { cmake -S "$bsrc" -B "$bsrc/build" -G Ninja -DCMAKE_BUILD_TYPE=${PPT_BUILD_TYPE:-RelWithDebInfo} "${launcher[@]}" &&
      cmake --build "$bsrc/build" --target pp-timeline -j "${PPT_JOBS:-$(nproc)}"; } >"$bsrc.log" 2>&1 ||
      { echo "bench: the baseline did not build (see $bsrc.log)" >&2; exit 1; }
  fi
  baseline_bin=$bsrc/build/pp-timeline
fi
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "bench.sh: --runs needs a positive number" >&2; exit 2; }
[[ "$old_files" =~ ^[0-9]+$ ]] || { echo "bench.sh: --old-files needs a number" >&2; exit 2; }

SECTIONS=(pp_timeline floor threads old pftrace scale ranks1024 stats report whatif shim)
[[ -n "$baseline_bin" ]] && SECTIONS+=(baseline)
if [[ -n "$only" ]]; then
  IFS=, read -r -a SECTIONS <<<"$only"
  for s in "${SECTIONS[@]}"; do
    grep -q "^section_$s()" "$0" ||
      { echo "bench.sh: unknown section $s" >&2; exit 2; }
  done
fi
IFS=, read -r -a scale_ranks <<<"$scale_ranks_arg"
for r in "${scale_ranks[@]}"; do
  [[ "$r" =~ ^[0-9]+$ && $r -ge 16 && $((r % 16)) -eq 0 ]] ||
    { echo "bench.sh: --scale-ranks takes multiples of 16 (16-stage pipelines)" >&2; exit 2; }
done

bench=$root/.bench
logs=$bench/logs
out=$bench/out
bin=${PPT_BUILD_DIR:-$root/build}/pp-timeline
gen_args=(--stages 8 --dp 8 --machines 8 --schedule 1f1b --micro-batches 64 --steps 20 --noise 1000 --seed 1)
status=0

# ---------------------------------------------------------------- helpers --

now_ns() { date +%s%N; }
# Median of the numbers on stdin.
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
calc() { awk "BEGIN {printf \"$1\", $2}"; }
file_size() { stat -c %s "$1"; }

# timed NAME CMD...: runs CMD $runs times after one warm-up run. Sets
# T_<NAME> (median wall seconds, from date's nanoseconds: /usr/bin/time's
# %e has 10 ms resolution) and RSS_<NAME> (median peak RSS in KB, /usr/bin/time %M).
# CMD's stderr goes to .bench/out/NAME.stderr. Returns CMD's failure, if any
# (after showing the end of that file). The files in the array `fresh` are
# removed before each run, outside the timing: pp-timeline and the floor's cat
# then both write new files, and neither run pays for freeing the file it
# would replace (a quarter of a second for 230 MB).
fresh=()
# timed_alternately NAME_A NAME_B ARRAY_A ARRAY_B: as timed, for the two
# commands held in the arrays named ARRAY_A and ARRAY_B (by name), one run of
# each in turn after a warm-up of each; T_ and RSS_ of both names. An empty
# ARRAY_B times ARRAY_A alone.
timed_alternately() {
  local a=$1 b=$2
  local -n cmd_a=$3 cmd_b=$4
  local tf=$out/.time.pair log=$out/$a.stderr ta=() tb=() ra=() rb=() t0 t1 i
  : >"$log"
  [[ ${#fresh[@]} -eq 0 ]] || rm -f "${fresh[@]}"
  "${cmd_a[@]}" 2>>"$log" || { tail -5 "$log" >&2; return 1; }
  if [[ ${#cmd_b[@]} -gt 0 ]]; then "${cmd_b[@]}" 2>>"$log" || { tail -5 "$log" >&2; return 1; }; fi
  for ((i = 0; i < runs; i++)); do
    [[ ${#fresh[@]} -eq 0 ]] || rm -f "${fresh[@]}"
    t0=$(now_ns)
    /usr/bin/time -f '%e %M' -o "$tf" "${cmd_a[@]}" 2>>"$log" || { tail -5 "$log" >&2; return 1; }
    t1=$(now_ns)
    ta+=("$(calc '%.6f' "($t1 - $t0) / 1e9")")
    ra+=("$(awk '{v=$2} END {print v}' "$tf")")
    [[ ${#cmd_b[@]} -gt 0 ]] || continue
    t0=$(now_ns)
    /usr/bin/time -f '%e %M' -o "$tf" "${cmd_b[@]}" 2>>"$log" || { tail -5 "$log" >&2; return 1; }
    t1=$(now_ns)
    tb+=("$(calc '%.6f' "($t1 - $t0) / 1e9")")
    rb+=("$(awk '{v=$2} END {print v}' "$tf")")
  done
  printf -v "T_$a" '%s' "$(printf '%s\n' "${ta[@]}" | median)"
  printf -v "RSS_$a" '%s' "$(printf '%s\n' "${ra[@]}" | median)"
  [[ ${#cmd_b[@]} -gt 0 ]] || return 0
  printf -v "T_$b" '%s' "$(printf '%s\n' "${tb[@]}" | median)"
  printf -v "RSS_$b" '%s' "$(printf '%s\n' "${rb[@]}" | median)"
}
# timed NAME CMD...: the same for one command: T_NAME and RSS_NAME.
timed() {
  local name=$1; shift
  local timed_cmd=("$@") timed_none=()
  timed_alternately "$name" "" timed_cmd timed_none
}

rows=()
goals=()
# row LABEL SECONDS [RSS_KB] [NOTE] [BYTES_IN]: one line of the timing table;
# the MB/s column is BYTES_IN (default: the whole set) over SECONDS, blank for 0.
row() {
  local label=$1 secs=$2 rss=${3:-} note=${4:-} bytes_in=${5:-$set_bytes} mbs="" rss_mb=""
  [[ $bytes_in -gt 0 ]] && mbs=$(calc '%.1f' "$bytes_in / 1e6 / $secs")
  [[ -n "$rss" ]] && rss_mb=$(calc '%.1f' "$rss / 1024")
  rows+=("$(printf '  %-38s %10.3f %10s %12s  %s' "$label" "$secs" "$mbs" "$rss_mb" "$note")")
}
# goal LABEL VALUE TARGET OK(0/1): one line of the goals table.
goal() {
  local verdict=MISS
  [[ "$4" == 1 ]] && verdict=ok
  goals+=("$(printf '  %-38s %18s   %-16s %s' "$1" "$2" "$3" "$verdict")")
}
skipped() { rows+=("$(printf '  %-38s %10s  %s' "$1" "-" "$2")"); }

# --------------------------------------------------------------- prepare --

prepare_build() {
  have_bin=0
  if [[ $do_build == 1 ]]; then
    echo "bench: building (scripts/build.sh)" >&2
    if ! "$root/scripts/build.sh" >"$bench/build.log" 2>&1; then
      echo "bench: build failed (see .bench/build.log); using the existing binary if any" >&2
      tail -5 "$bench/build.log" >&2 || true
    fi
  fi
  [[ -x "$bin" ]] && have_bin=1
  if [[ $have_bin == 0 ]]; then
    echo "bench: $bin does not exist; its sections are skipped" >&2
    status=1
  fi
}

prepare_logs() {
  local stamp=$bench/logs.params want
  want="${gen_args[*]}"
  if [[ $regen == 1 || ! -d "$logs" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    echo "bench: generating $logs (gen_logs.py ${gen_args[*]})" >&2
    rm -rf "$logs" "$stamp"
    local t0 t1
    t0=$(now_ns)
    python3 "$root/scripts/gen_logs.py" --out "$logs" "${gen_args[@]}" --quiet
    t1=$(now_ns)
    gen_secs=$(calc '%.1f' "($t1 - $t0) / 1e9")
    echo "$want" >"$stamp"
  fi
  mapfile -t files < <(find "$logs" -type f -name 'workerlog.*' | sort -V)
  set_files=${#files[@]}
  set_bytes=$(cat "${files[@]}" | wc -c)
  machines=$(find "$logs" -mindepth 1 -maxdepth 1 -type d -name 'machine*' | wc -l)
  per_machine=$(find "$logs/machine0" -maxdepth 1 -type f -name 'workerlog.*' 2>/dev/null | wc -l)
  # The job count, and the page cache warmed for everybody.
  set_jobs=$(grep -F -c 'Profiler Info: Job' "${files[@]}" | awk -F: '{s += $NF} END {print s}')
}

# -------------------------------------------------------------- sections --

section_watch() {
  if [[ $have_bin == 0 ]]; then skipped "watch" "not built"; return; fi
  local line
  while IFS= read -r line; do
    rows+=("  $line")
  done < <(python3 "$root/scripts/bench_watch.py" --binary "$bin" --dir "$bench/watch" --steps "$watch_steps" ||
           echo "watch: FAILED (not every step was reported)")
}

section_pp_timeline() {
  if [[ $have_bin == 0 ]]; then skipped "pp-timeline" "not built"; return; fi
  mkdir -p "$out/mt"
  fresh=("$out/mt/trace.json" "$out/mt/trace_perfetto.json")
  if ! timed pp "$bin" --log_dir "$logs" -o "$out/mt/trace.json" --perfetto-json "$out/mt/trace_perfetto.json"; then
    fresh=()
    skipped "pp-timeline" "FAILED (run it by hand to see why)"
    status=1; have_bin=0; return
  fi
  fresh=()
  pp_out_bytes=$(( $(file_size "$out/mt/trace.json") + $(file_size "$out/mt/trace_perfetto.json") ))
  row "pp-timeline (default threads)" "$T_pp" "$RSS_pp" "wrote $(calc '%.1f' "$pp_out_bytes / 1e6") MB"
  local budget_kb rss_ok
  budget_kb=$(calc '%.0f' "(32 * 1048576 + 64 * $set_jobs) / 1024")
  rss_ok=$(awk -v r="$RSS_pp" -v b="$budget_kb" 'BEGIN {print (r <= b) ? 1 : 0}')
  goal "peak RSS vs 32 MB + 64 B/job" "$(calc '%.1f' "$RSS_pp / 1024") / $(calc '%.1f' "$budget_kb / 1024") MB" "<= budget" "$rss_ok"
}

section_floor() {
  mkdir -p "$out/floor"
  timed grep grep -F -c 'Profiler Info: Job' "${files[@]}" >"$out/floor/grep.txt"
  # grep writes its counts to a file: with /dev/null as output GNU grep stops at the first match.
  row "floor: grep -F -c (output to a file)" "$T_grep" "$RSS_grep"
  local n=${pp_out_bytes:-0}
  if [[ $n -gt 0 ]]; then
    head -c "$n" /dev/zero >"$out/floor/cat_src"
    fresh=("$out/floor/cat_dst")
    timed cat sh -c 'cat "$1" > "$2"' sh "$out/floor/cat_src" "$out/floor/cat_dst"
    fresh=()
    rm -f "$out/floor/cat_src" "$out/floor/cat_dst"
    row "floor: cat $(calc '%.1f' "$n / 1e6") MB into a file" "$T_cat" "$RSS_cat" "as much as pp-timeline wrote" 0
    T_floor=$(calc '%.6f' "$T_grep + $T_cat")
    row "floor: total" "$T_floor"
    if [[ $have_bin == 1 ]]; then
      local r
      r=$(calc '%.2f' "$T_pp / $T_floor")
      goal "pp-timeline / floor" "${r}x" "<= 2x" "$(awk -v r="$r" 'BEGIN {print (r <= 2) ? 1 : 0}')"
    fi
  else
    skipped "floor: cat of the output" "no pp-timeline output to size it"
  fi
}

section_threads() {
  [[ $have_bin == 1 ]] || return 0
  mkdir -p "$out/t1"
  fresh=("$out/t1/trace.json" "$out/t1/trace_perfetto.json")
  if ! timed pp1 "$bin" --log_dir "$logs" -o "$out/t1/trace.json" --perfetto-json "$out/t1/trace_perfetto.json" --threads 1; then
    fresh=()
    skipped "pp-timeline --threads 1" "FAILED"
    status=1; return
  fi
  fresh=()
  row "pp-timeline --threads 1" "$T_pp1" "$RSS_pp1"
  local same=1 f
  for f in trace.json trace_perfetto.json; do
    if ! cmp -s "$out/mt/$f" "$out/t1/$f"; then
      same=0
      echo "bench: $f differs between --threads 1 and the default: $(cmp "$out/mt/$f" "$out/t1/$f" 2>&1 | head -1)" >&2
    fi
  done
  [[ $same == 1 ]] || status=1
  goal "--threads 1 output byte-identical" "$([[ $same == 1 ]] && echo yes || echo NO)" "yes" "$same"
}

section_old() {
  if [[ $skip_old == 1 ]]; then skipped "old helper" "skipped (--skip-old)"; return; fi
  mkdir -p "$out/old"
  local devices log t0 t1 secs read_bytes read_files note scaled
  devices=$(seq -s, 0 $((per_machine > 0 ? per_machine - 1 : set_files - 1)))
  local args=(--log_dir "$logs" --devices "$devices" --output "$out/old/pipeline_profile.json")
  [[ $machines -gt 0 ]] && args+=(--multi_machine)
  [[ $old_files -gt 0 ]] && args+=(--max_files "$old_files")
  echo "bench: running the old helper once on $([[ $old_files -gt 0 ]] && echo "$old_files files" || echo "all files") (slow)" >&2
  log=$out/old/stderr.txt
  t0=$(now_ns)
  /usr/bin/time -f '%e %M' -o "$out/.time.old" python3 "$root/scripts/old_helper.py" "${args[@]}" 2>"$log"
  t1=$(now_ns)
  secs=$(calc '%.6f' "($t1 - $t0) / 1e9")
  read_files=$(sed -n 's/.*: \([0-9]*\) files, \([0-9]*\) bytes.*/\1/p' "$log")
  read_bytes=$(sed -n 's/.*: \([0-9]*\) files, \([0-9]*\) bytes.*/\2/p' "$log")
  RSS_old=$(awk '{v=$2} END {print v}' "$out/.time.old")
  if [[ -n "$read_bytes" && "$read_bytes" -gt 0 && "$read_bytes" -lt "$set_bytes" ]]; then
    scaled=$(calc '%.6f' "$secs * $set_bytes / $read_bytes")
    note="measured $(calc '%.1f' "$secs") s on $read_files files ($(calc '%.1f' "$read_bytes / 1e6") MB), scaled by bytes"
  else
    scaled=$secs
    note="one run"
  fi
  T_old=$scaled
  row "old helper (python, one regex per file)" "$T_old" "$RSS_old" "$note"
  if [[ $have_bin == 1 ]]; then
    local x
    x=$(calc '%.0f' "$T_old / $T_pp")
    goal "speed-up vs old helper" "${x}x" ">= 500x" "$(awk -v x="$x" 'BEGIN {print (x >= 500) ? 1 : 0}')"
  fi
}

# prepare_scale_set R: the R-rank scale set in .bench/scale/rR (generated
# once and reused while its parameters are unchanged; never committed); sets
# sfiles (its files), sbytes and sjobs, and warms the page cache.
prepare_scale_set() {
  local r=$1 dir=$bench/scale/r$1 stamp want t0 t1
  stamp=$dir.params
  want="--stages 16 --dp $((r / 16)) --machines $((r / 8)) --schedule 1f1b --micro-batches 64 --steps 20 --noise 10 --seed 1"
  if [[ $regen == 1 || ! -d "$dir" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    echo "bench: generating $dir (gen_logs.py $want)" >&2
    rm -rf "$dir" "$stamp"
    mkdir -p "$bench/scale"
    t0=$(now_ns)
    # shellcheck disable=SC2086
    python3 "$root/scripts/gen_logs.py" --out "$dir" $want --quiet
    t1=$(now_ns)
    echo "bench: generated $r ranks in $(calc '%.0f' "($t1 - $t0) / 1e9") s" >&2
    echo "$want" >"$stamp"
  fi
  mapfile -t sfiles < <(find "$dir/" -type f -name 'workerlog.*' | sort -V)
  sbytes=$(cat "${sfiles[@]}" | wc -c)
  # The job count, and the page cache warmed.
  sjobs=$(grep -F -c 'Profiler Info: Job' "${sfiles[@]}" | awk -F: '{s += $NF} END {print s}')
}

section_scale() {
  if [[ $have_bin == 0 ]]; then skipped "scale" "not built"; return; fi
  local ext=pftrace
  if ! "$bin" --help 2>&1 | grep -q 'pftrace'; then
    ext=json
    scale_notes+=("this build writes no .pftrace yet: the scale runs write Chrome .json instead")
  fi
  mkdir -p "$bench/scale" "$out/scale"
  local r dir obytes first_r="" last_r=""
  for r in "${scale_ranks[@]}"; do
    prepare_scale_set "$r"
    dir=$bench/scale/r$r
    fresh=("$out/scale/trace.$ext")
    if ! timed "scale$r" "$bin" --log_dir "$dir" -o "$out/scale/trace.$ext" -q; then
      fresh=()
      skipped "scale: $r ranks" "FAILED (run it by hand to see why)"
      status=1
      continue
    fi
    fresh=()
    obytes=$(file_size "$out/scale/trace.$ext")
    timed "scalegrep$r" grep -F -c 'Profiler Info: Job' "${sfiles[@]}" >"$out/scale/grep.txt"
    head -c "$obytes" /dev/zero >"$out/scale/cat_src"
    fresh=("$out/scale/cat_dst")
    timed "scalecat$r" sh -c 'cat "$1" > "$2"' sh "$out/scale/cat_src" "$out/scale/cat_dst"
    fresh=()
    rm -f "$out/scale/cat_src" "$out/scale/cat_dst"
    local tv=T_scale$r rv=RSS_scale$r gv=T_scalegrep$r cv=T_scalecat$r
    local floor ratio
    floor=$(calc '%.6f' "${!gv} + ${!cv}")
    ratio=$(calc '%.2f' "${!tv} / $floor")
    row "scale: $r ranks -> .$ext" "${!tv}" "${!rv}" "$(calc '%.1f' "$obytes / 1e6") MB out; floor $(calc '%.3f' "$floor") s, ${ratio}x" "$sbytes"
    scale_lines+=("$(printf '  %6d %9.1f %10s %9.3f %9.3f %7s %10.1f %12.3f %12.1f' "$r" "$(calc '%.1f' "$sbytes / 1e6")" \
      "$(with_commas "$sjobs")" "${!tv}" "$floor" "${ratio}x" "$(calc '%.1f' "${!rv} / 1024")" \
      "$(calc '%.3f' "${!tv} / ($sjobs / 1e6)")" "$(calc '%.1f' "${!rv} * 1024 / $sjobs")")")
    [[ -z "$first_r" ]] && first_r=$r
    last_r=$r
    if [[ $r == 1024 ]]; then
      goal "1024 ranks: pp-timeline / floor" "${ratio}x" "<= 3x" "$(awk -v x="$ratio" 'BEGIN {print (x <= 3) ? 1 : 0}')"
      goal "1024 ranks: peak RSS" "$(calc '%.1f' "${!rv} / 1024") MB" "< 256 MB" "$(awk -v x="${!rv}" 'BEGIN {print (x < 256 * 1024) ? 1 : 0}')"
    fi
  done
  if [[ -n "$first_r" && "$first_r" != "$last_r" ]]; then
    # Growth exponents: log(ratio of values) / log(ratio of ranks); 1 is linear.
    local t_first=T_scale$first_r t_last=T_scale$last_r m_first=RSS_scale$first_r m_last=RSS_scale$last_r te me
    te=$(awk -v a="${!t_first}" -v b="${!t_last}" -v x="$first_r" -v y="$last_r" 'BEGIN {printf "%.2f", log(b / a) / log(y / x)}')
    me=$(awk -v a="${!m_first}" -v b="${!m_last}" -v x="$first_r" -v y="$last_r" 'BEGIN {printf "%.2f", log(b / a) / log(y / x)}')
    goal "time growth $first_r -> $last_r ranks" "ranks^$te" "<= ranks^1.1" "$(awk -v e="$te" 'BEGIN {print (e <= 1.1) ? 1 : 0}')"
    goal "peak RSS growth $first_r -> $last_r ranks" "ranks^$me" "<= ranks^1.1" "$(awk -v e="$me" 'BEGIN {print (e <= 1.1) ? 1 : 0}')"
  fi
}

# ------------------------------------------------------------ ranks1024 --
# ab_timed NAME OUT ARGS...: times this build on ARGS ($runs runs after a
# warm-up run), and, with --baseline, the baseline alternately with it on the
# same ARGS. @OUT@ in ARGS is OUT for this build and OUT with .base before
# its extension for the baseline; standard output goes to that path plus
# .stdout. Sets T_NAME, RSS_NAME (this build) and T_NAME_base, RSS_NAME_base.
ab_timed() {
  local name=$1 o=$2 i k b dst t0 t1
  shift 2
  local tf=$out/.time.$name log=$out/$name.stderr ob="${o%.*}.base.${o##*.}" sides=(new) args tn=() rn=() tb=() rb=()
  [[ -n "$baseline_bin" ]] && sides+=(base)
  : >"$log"
  for ((i = -1; i < runs; i++)); do
    for k in "${sides[@]}"; do
      if [[ $k == new ]]; then b=$bin dst=$o; else b=$baseline_bin dst=$ob; fi
      args=("${@//@OUT@/$dst}")
      rm -f "$dst"
      t0=$(now_ns)
      /usr/bin/time -f '%e %M' -o "$tf" "$b" "${args[@]}" >"$dst.stdout" 2>>"$log" || { tail -5 "$log" >&2; return 1; }
      t1=$(now_ns)
      ((i >= 0)) || continue
      if [[ $k == new ]]; then
        tn+=("$(calc '%.6f' "($t1 - $t0) / 1e9")"); rn+=("$(awk '{v=$2} END {print v}' "$tf")")
      else
        tb+=("$(calc '%.6f' "($t1 - $t0) / 1e9")"); rb+=("$(awk '{v=$2} END {print v}' "$tf")")
      fi
    done
  done
  printf -v "T_$name" '%s' "$(printf '%s\n' "${tn[@]}" | median)"
  printf -v "RSS_$name" '%s' "$(printf '%s\n' "${rn[@]}" | median)"
  if [[ ${#tb[@]} -gt 0 ]]; then
    printf -v "T_${name}_base" '%s' "$(printf '%s\n' "${tb[@]}" | median)"
    printf -v "RSS_${name}_base" '%s' "$(printf '%s\n' "${rb[@]}" | median)"
  fi
}

# The 1024-rank section: the scale section's 1024-rank set (16 stages x 64
# replicas, 20 steps, about 2.6 M jobs and 540 MB; generated on the first
# run into .bench/scale/r1024) converted to .pftrace against its floor (grep
# -F -c over the logs + cat of as many bytes as the .pftrace), the .pftrace's
# bytes a job, `stats --json` (with its suggestions) and `whatif` with six
# targets (every schedule at the measured M) against that convert, and the
# peak RSS of each. With --baseline, the baseline build runs the same
# commands alternately with this one: before and after in one run, each side
# with its own ratios, and this build's time, RSS and size over the baseline's.
# Goals: convert <= 2x the floor, <= 48 bytes a job, stats --json <= 1x the
# convert, whatif (six targets) <= 1.5x, every peak RSS < 256 MB.
section_ranks1024() {
  if [[ $have_bin == 0 ]]; then skipped "1024 ranks" "not built"; return; fi
  if [[ -n "$baseline_bin" && ! -x "$baseline_bin" ]]; then
    skipped "1024 ranks" "$baseline_bin is not an executable"; status=1; return
  fi
  local d=$out/r1024 dir=$bench/scale/r1024 six=fthenb,1f1b,eager1f1b,vpp,zbh1,zbvpp side
  mkdir -p "$d"
  prepare_scale_set 1024
  if ! ab_timed kconv "$d/trace.pftrace" --log_dir "$dir" -o @OUT@ -q ||
     ! ab_timed kstats "$d/stats.json" stats --log_dir "$dir" --json -q -o @OUT@ ||
     ! ab_timed kwhatif "$d/whatif.txt" whatif --log_dir "$dir" -q --schedule "$six"; then
    skipped "1024 ranks" "FAILED (see .bench/out/k*.stderr)"
    status=1; return
  fi
  # The floor of each side: grep over the logs + cat of as many bytes as its
  # .pftrace.
  timed kgrep grep -F -c 'Profiler Info: Job' "${sfiles[@]}" >"$d/grep.txt"
  local side pf
  for side in "" _base; do
    [[ -z "$side" || -n "$baseline_bin" ]] || continue
    pf=$d/trace.pftrace
    [[ -n "$side" ]] && pf=$d/trace.base.pftrace
    head -c "$(file_size "$pf")" /dev/zero >"$d/cat_src"
    fresh=("$d/cat_dst")
    timed "kcat$side" sh -c 'cat "$1" > "$2"' sh "$d/cat_src" "$d/cat_dst"
    fresh=()
    rm -f "$d/cat_src" "$d/cat_dst"
  done
  row "1024 ranks: grep -F -c over the logs" "$T_kgrep" "" "$(with_commas "$sjobs") jobs, $(calc '%.1f' "$sbytes / 1e6") MB of logs" "$sbytes"
  for side in "" _base; do
    [[ -z "$side" || -n "$baseline_bin" ]] || continue
    local label="1024 ranks:"
    [[ -n "$side" ]] && label="  baseline:"
    local tc=T_kconv$side rc=RSS_kconv$side ts=T_kstats$side rs=RSS_kstats$side tw=T_kwhatif$side rw=RSS_kwhatif$side
    local tcat=T_kcat$side
    pf=$d/trace.pftrace
    [[ -n "$side" ]] && pf=$d/trace.base.pftrace
    local pb conv_r stats_r whatif_r bpj floor
    pb=$(file_size "$pf")
    bpj=$(calc '%.1f' "$pb / $sjobs")
    floor=$(calc '%.6f' "$T_kgrep + ${!tcat}")
    conv_r=$(calc '%.2f' "${!tc} / $floor")
    stats_r=$(calc '%.2f' "${!ts} / ${!tc}")
    whatif_r=$(calc '%.2f' "${!tw} / ${!tc}")
    row "$label floor, grep + cat" "$floor" "" "cat: as many bytes as its .pftrace" "$sbytes"
    row "$label convert -> .pftrace" "${!tc}" "${!rc}" "${conv_r}x the floor; $(calc '%.1f' "$pb / 1e6") MB, $bpj B/job" "$sbytes"
    row "$label stats --json" "${!ts}" "${!rs}" "${stats_r}x the convert" "$sbytes"
    row "$label whatif, 6 targets" "${!tw}" "${!rw}" "${whatif_r}x the convert" "$sbytes"
    [[ -z "$side" ]] || continue
    goal "1024 ranks: convert / floor" "${conv_r}x" "<= 2x" "$(awk -v x="$conv_r" 'BEGIN {print (x <= 2) ? 1 : 0}')"
    goal "1024 ranks: .pftrace bytes a job" "$bpj" "<= 48" "$(awk -v x="$bpj" 'BEGIN {print (x <= 48) ? 1 : 0}')"
    goal "1024 ranks: stats --json / convert" "${stats_r}x" "<= 1x" "$(awk -v x="$stats_r" 'BEGIN {print (x <= 1) ? 1 : 0}')"
    goal "1024 ranks: whatif (6) / convert" "${whatif_r}x" "<= 1.5x" "$(awk -v x="$whatif_r" 'BEGIN {print (x <= 1.5) ? 1 : 0}')"
    local worst
    worst=$(printf '%s\n' "${!rc}" "${!rs}" "${!rw}" | sort -g | tail -1)
    goal "1024 ranks: largest peak RSS" "$(calc '%.1f' "$worst / 1024") MB" "< 256 MB" "$(awk -v x="$worst" 'BEGIN {print (x < 256 * 1024) ? 1 : 0}')"
  done
  if [[ -n "$baseline_bin" ]]; then
    local n
    for n in kconv:"convert" kstats:"stats --json" kwhatif:"whatif, 6 targets"; do
      local tnv=T_${n%%:*} tbv=T_${n%%:*}_base rnv=RSS_${n%%:*} rbv=RSS_${n%%:*}_base
      rows+=("$(printf '  %-38s %10s  time %sx, peak RSS %sx' "  this / baseline: ${n#*:}" "" \
        "$(calc '%.2f' "${!tnv} / ${!tbv}")" "$(calc '%.2f' "${!rnv} / ${!rbv}")")")
    done
    rows+=("$(printf '  %-38s %10s  %sx (%s / %s bytes)' "  this / baseline: .pftrace size" "" \
      "$(calc '%.3f' "$(file_size "$d/trace.pftrace") / $(file_size "$d/trace.base.pftrace")")" \
      "$(file_size "$d/trace.pftrace")" "$(file_size "$d/trace.base.pftrace")")")
  fi
  rm -f "$d"/trace*.pftrace "$d"/*.stdout
}

with_commas() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"; }

# ------------------------------------------------------------- pftrace --
section_pftrace() {
  if [[ $have_bin == 0 ]]; then skipped "pftrace" "not built"; return; fi
  if ! "$bin" --help 2>&1 | grep -q 'pftrace'; then skipped "pftrace" "this build writes no .pftrace"; return; fi
  mkdir -p "$out/pftrace"
  local ok=1
  fresh=("$out/pftrace/trace.json")
  timed pfjson "$bin" --log_dir "$logs" -o "$out/pftrace/trace.json" -q || ok=0
  fresh=("$out/pftrace/trace.pftrace")
  [[ $ok == 0 ]] || timed pfproto "$bin" --log_dir "$logs" -o "$out/pftrace/trace.pftrace" -q || ok=0
  fresh=()
  if [[ $ok == 0 ]]; then
    skipped "pftrace" "FAILED (run it by hand to see why)"
    status=1; return
  fi
  local jb pb size_ratio time_ratio
  jb=$(file_size "$out/pftrace/trace.json")
  pb=$(file_size "$out/pftrace/trace.pftrace")
  size_ratio=$(calc '%.3f' "$pb / $jb")
  time_ratio=$(calc '%.2f' "$T_pfproto / $T_pfjson")
  row "convert -> .json (baseline)" "$T_pfjson" "$RSS_pfjson" "$(calc '%.1f' "$jb / 1e6") MB, $(calc '%.0f' "$jb / $set_jobs") B/job"
  row "convert -> .pftrace" "$T_pfproto" "$RSS_pfproto" "$(calc '%.1f' "$pb / 1e6") MB, $(calc '%.0f' "$pb / $set_jobs") B/job"
  goal ".pftrace size / .json size" "$size_ratio" "<= 0.25" "$(awk -v r="$size_ratio" 'BEGIN {print (r <= 0.25) ? 1 : 0}')"
  goal ".pftrace time / .json time" "${time_ratio}x" "<= 1x" "$(awk -v r="$time_ratio" 'BEGIN {print (r <= 1) ? 1 : 0}')"
}

# ---------------------------------------------------------- stats/diff --
# `stats` and `diff` on the benchmark set, against a plain convert (one
# Chrome .json output) timed in this section, in the same run. Goal: each at
# most 1.5x the plain convert, and `stats --json` (with its suggestions) at
# most 0.75x. `diff` reads the set as both A and B (two full
# loads; B from the page cache like A), and with a `stats --json` file as A
# (the CI gate's use: a stored baseline). `diff -o` (both runs into one trace)
# is printed without a goal.

# stats_case NAME LABEL GOAL(1|0) CMD...: times CMD, prints its row and its
# ratio to the plain convert.
stats_case() {
  local name=$1 label=$2 want=$3 r tv rv
  shift 3
  if ! timed "$name" "$@"; then
    skipped "$label" "FAILED (run it by hand to see why)"
    status=1
    return
  fi
  tv=T_$name
  rv=RSS_$name
  r=$(calc '%.2f' "${!tv} / $T_plain")
  row "$label" "${!tv}" "${!rv}" "${r}x the plain convert"
  if [[ $want == 1 ]]; then
    goal "$label / plain convert" "${r}x" "<= 1.5x" "$(awk -v r="$r" 'BEGIN {print (r <= 1.5) ? 1 : 0}')"
  fi
}

section_stats() {
  if [[ $have_bin == 0 ]]; then skipped "stats/diff" "not built"; return; fi
  if ! "$bin" stats --help >/dev/null 2>&1; then skipped "stats/diff" "this build has no stats command"; return; fi
  local d=$out/stats
  mkdir -p "$d"
  # A new output file each run (removed outside the timing), as in the
  # baseline section: otherwise the convert also pays for freeing the 65 MB
  # it replaces, and every ratio below looks better than it is.
  fresh=("$d/plain.json")
  if ! timed plain "$bin" --log_dir "$logs" -o "$d/plain.json" -q; then
    fresh=()
    skipped "stats: plain convert" "FAILED (run it by hand to see why)"
    status=1
    return
  fi
  fresh=()
  row "plain convert (-o one .json)" "$T_plain" "$RSS_plain" "baseline of the stats/diff rows"
  stats_case st "stats (table)" 1 sh -c '"$0" stats --log_dir "$1" --color never >"$2/stats.txt"' "$bin" "$logs" "$d"
  stats_case sj "stats --json" 1 sh -c '"$0" stats --log_dir "$1" --json >"$2/stats.json"' "$bin" "$logs" "$d"
  if [[ -n ${T_sj:-} ]]; then
    local sj_r
    sj_r=$(calc '%.2f' "$T_sj / $T_plain")
    goal "stats --json / plain convert (advice)" "${sj_r}x" "<= 0.75x" "$(awk -v r="$sj_r" 'BEGIN {print (r <= 0.75) ? 1 : 0}')"
  fi
  stats_case dl "diff LOGS LOGS" 1 sh -c '"$0" diff "$1" "$1" >"$2/diff.txt"' "$bin" "$logs" "$d"
  stats_case dj "diff stats.json LOGS" 1 sh -c '"$0" diff "$2/stats.json" "$1" >"$2/diff_json.txt"' "$bin" "$logs" "$d"
  stats_case do "diff LOGS LOGS -o trace.json" 0 sh -c '"$0" diff "$1" "$1" -q -o "$2/diff_trace.json" >/dev/null' "$bin" "$logs" "$d"
}

# The whatif section: `whatif` on the set (the measured 1F1B replayed) and
# with twelve targets (every schedule at M and 2M), against `stats --json`,
# which reads the same logs, and `stats --json` against the same without its
# suggestions (--no-suggestions; goal: at most 1.1x); the whatif phase alone
# as --timings reports it
# (goal: at most 1 s beyond reading the logs: fit, replays and the stats'
# suggestions). Then the model's accuracy table (tests/e2e/whatif_cli.py
# --table): per case the measured, replayed and predicted periods against a
# run generated under the target with the same stage costs. Then the same
# against real processes (tests/e2e/whatif_demo.py --table): pp-demo's 1F1B
# run predicted under each target, against pp-demo run under the target.
section_whatif() {
  if [[ $have_bin == 0 ]]; then skipped "whatif" "not built"; return; fi
  if ! "$bin" whatif --help >/dev/null 2>&1; then skipped "whatif" "this build has no whatif command"; return; fi
  local d=$out/whatif phase r
  mkdir -p "$d"
  # The suggestions' own cost: stats --json against the same without them
  # (--no-suggestions; goal: at most 10% more), the two run alternately so
  # that the machine's drift falls on both alike.
  local with=("$bin" stats --log_dir "$logs" --json -q -o "$d/stats.json")
  local without=("$bin" stats --log_dir "$logs" --json -q --no-suggestions -o "$d/stats_plain.json")
  if ! "$bin" stats --help 2>&1 | grep -q -- '--no-suggestions'; then without=(); fi
  if ! timed_alternately wsj wsn with without; then
    skipped "whatif: stats --json" "FAILED (run it by hand to see why)"
    status=1
    return
  fi
  row "stats --json (with suggestions)" "$T_wsj" "$RSS_wsj" "baseline of the whatif rows"
  if [[ ${#without[@]} -gt 0 ]]; then
    row "stats --json --no-suggestions" "$T_wsn" "$RSS_wsn" "the stats alone"
    r=$(calc '%.3f' "$T_wsj / $T_wsn")
    goal "stats --json / the same without suggestions" "${r}x" "<= 1.1x" "$(awk -v r="$r" 'BEGIN {print (r <= 1.1) ? 1 : 0}')"
  fi
  local all=(--schedule fthenb,1f1b,eager1f1b,vpp,zbh1,zbvpp --micro-batches 64,128)
  for c in one:"whatif (measured replayed)" all:"whatif (12 targets)"; do
    local name=${c%%:*} label=${c#*:} extra=()
    [[ $name == all ]] && extra=("${all[@]}")
    if ! timed "w$name" sh -c 'b=$0 l=$1; shift; "$b" whatif --log_dir "$l" -q "$@" >/dev/null' "$bin" "$logs" "${extra[@]}"; then
      skipped "$label" "FAILED (run it by hand to see why)"
      status=1
      continue
    fi
    local tv=T_w$name rv=RSS_w$name
    r=$(calc '%.3f' "${!tv} - $T_wsj")
    row "$label" "${!tv}" "${!rv}" "${r} s beyond stats --json"
  done
  phase=$("$bin" whatif --log_dir "$logs" -q --timings "${all[@]}" 2>&1 >/dev/null |
    sed -n 's/.*whatif \([0-9.]*\) s.*/\1/p' | head -1)
  if [[ -n "$phase" ]]; then
    goal "whatif phase, 12 targets (--timings)" "${phase} s" "<= 1 s" "$(awk -v p="$phase" 'BEGIN {print (p <= 1) ? 1 : 0}')"
  fi
  mapfile -t whatif_lines < <(python3 "$root/tests/e2e/whatif_cli.py" --binary "$bin" --table 2>&1)
  local demo
  demo=$(dirname "$bin")/pp-demo
  if [[ -x "$demo" ]]; then
    # Three repetitions: pp-demo's periods are real processes' on shared
    # cores, so the spread between them is the table's noise.
    local rep
    for rep in 1 2 3; do
      whatif_demo_lines+=("repetition $rep:")
      mapfile -t -O "${#whatif_demo_lines[@]}" whatif_demo_lines < <(python3 "$root/tests/e2e/whatif_demo.py" --binary "$bin" --demo "$demo" --table --repetitions 1 2>&1)
    done
  else
    skipped "whatif against pp-demo" "no $demo"
  fi
  # Memory (tests/e2e/whatif_memory.py --table): each stage's predicted peak
  # against a run generated, and a pp-demo run made, under the target.
  local memory_demo=()
  [[ -x "$demo" ]] && memory_demo=(--demo "$demo")
  mapfile -t whatif_memory_lines < <(python3 "$root/tests/e2e/whatif_memory.py" --binary "$bin" "${memory_demo[@]}" --table 2>&1)
}

# The report section: `report` (the HTML page with the stats) and a .svg
# against a plain convert, then the time headless Chromium takes to load and
# screenshot the page, against an empty page in the same run: with the
# default cap of 20,000 job rectangles and with --max-jobs 100000.
section_report() {
  if [[ $have_bin == 0 ]]; then skipped "report" "not built"; return; fi
  if ! "$bin" report --help >/dev/null 2>&1; then skipped "report" "this build has no report command"; return; fi
  local d=$out/report
  mkdir -p "$d"
  if ! timed rplain "$bin" --log_dir "$logs" -o "$d/plain.json" -q; then
    skipped "report: plain convert" "FAILED (run it by hand to see why)"
    status=1
    return
  fi
  row "plain convert (-o one .json)" "$T_rplain" "$RSS_rplain" "baseline of the report rows"
  local ok=1
  timed rsvg "$bin" --log_dir "$logs" -o "$d/timeline.svg" -q || ok=0
  timed rhtml "$bin" report --log_dir "$logs" -o "$d/report.html" -q || ok=0
  timed rhtml100k "$bin" report --log_dir "$logs" -o "$d/report100k.html" --max-jobs 100000 -q || ok=0
  if [[ $ok == 0 ]]; then skipped "report" "FAILED (run it by hand to see why)"; status=1; return; fi
  local jobs20 jobs100
  jobs20=$(grep -o 'data-jobs="[0-9]*"' "$d/report.html" | head -1 | tr -dc 0-9)
  jobs100=$(grep -o 'data-jobs="[0-9]*"' "$d/report100k.html" | head -1 | tr -dc 0-9)
  row "convert -o timeline.svg" "$T_rsvg" "$RSS_rsvg" "$(calc '%.1f' "$(file_size "$d/timeline.svg") / 1e6") MB"
  row "report -o report.html" "$T_rhtml" "$RSS_rhtml" "$jobs20 jobs drawn, $(calc '%.1f' "$(file_size "$d/report.html") / 1e6") MB"
  row "report --max-jobs 100000" "$T_rhtml100k" "$RSS_rhtml100k" "$jobs100 jobs drawn, $(calc '%.1f' "$(file_size "$d/report100k.html") / 1e6") MB"
  goal "report vs plain convert" "$(calc '%.2f' "$T_rhtml / $T_rplain")x" "<= 1.5x" \
    "$(awk -v a="$T_rhtml" -v b="$T_rplain" 'BEGIN {print (a <= 1.5 * b) ? 1 : 0}')"
  local chromium
  chromium=$(command -v chromium || command -v chromium-browser || true)
  if [[ -z "$chromium" ]]; then
    skipped "chromium: load + screenshot" "no chromium (PPT_WITH_BROWSER=1 scripts/setup.sh)"
    return
  fi
  printf '<!DOCTYPE html><html><head><title>empty</title></head><body></body></html>\n' >"$d/empty.html"
  # A fresh profile each time; the page's own work is what differs.
  local shot='rm -rf "$1.profile"; "$0" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars
    --user-data-dir="$1.profile" --window-size=1400,900 --screenshot="$1.png" "file://$1" >/dev/null 2>&1;
    rc=$?; rm -rf "$1.profile"; exit $rc'
  shot=${shot//$'\n'/ }
  local page name
  for page in empty report report100k; do
    name=cr_$page
    if ! timed "$name" sh -c "$shot" "$chromium" "$d/$page.html"; then
      skipped "chromium: $page.html" "FAILED"
      continue
    fi
  done
  row "chromium: empty page" "${T_cr_empty:-0}" "" "baseline of the chromium rows" 0
  row "chromium: report.html" "${T_cr_report:-0}" "" "$jobs20 job rectangles" 0
  row "chromium: report --max-jobs 100000" "${T_cr_report100k:-0}" "" "$jobs100 job rectangles" 0
}

# ------------------------------------------------------------- baseline --
# baseline_pair NAME LABEL OUT ARGS...: times BIN and this build alternately
# ($runs each, after a warm-up of each) writing OUT (the new build's into
# OUT, the baseline's into OUT with .base before its extension) and prints both rows and the ratios.
baseline_pair() {
  local name=$1 label=$2 o=$3 i t0 t1 tn=() tb=() rn=() rb=() tf=$out/.time.pair
  shift 3
  local ob="${o%.*}.base.${o##*.}"
  local logf=$out/$name.stderr
  : >"$logf"
  "$bin" "$@" -o "$o" -q 2>>"$logf" && "$baseline_bin" "$@" -o "$ob" -q 2>>"$logf" ||
    { skipped "$label" "FAILED (see $logf)"; status=1; return; }
  for ((i = 0; i < runs; i++)); do
    rm -f "$o"
    t0=$(now_ns); /usr/bin/time -f '%e %M' -o "$tf" "$bin" "$@" -o "$o" -q 2>>"$logf"; t1=$(now_ns)
    tn+=("$(calc '%.6f' "($t1 - $t0) / 1e9")"); rn+=("$(awk '{v=$2} END {print v}' "$tf")")
    rm -f "$ob"
    t0=$(now_ns); /usr/bin/time -f '%e %M' -o "$tf" "$baseline_bin" "$@" -o "$ob" -q 2>>"$logf"; t1=$(now_ns)
    tb+=("$(calc '%.6f' "($t1 - $t0) / 1e9")"); rb+=("$(awk '{v=$2} END {print v}' "$tf")")
  done
  local mn mb rsn rsb same
  mn=$(printf '%s\n' "${tn[@]}" | median); mb=$(printf '%s\n' "${tb[@]}" | median)
  rsn=$(printf '%s\n' "${rn[@]}" | median); rsb=$(printf '%s\n' "${rb[@]}" | median)
  same=$(cmp -s "$o" "$ob" && echo "identical output" || echo "output differs")
  row "$label: this build" "$mn" "$rsn" "$(calc '%.1f' "$(file_size "$o") / 1e6") MB out"
  row "$label: baseline" "$mb" "$rsb" "$same"
  goal "$label: time this / baseline" "$(calc '%.2f' "$mn / $mb")x" "<= 1.05x" "$(awk -v a="$mn" -v b="$mb" 'BEGIN {print (a <= 1.05 * b) ? 1 : 0}')"
  goal "$label: RSS this / baseline" "$(calc '%.2f' "$rsn / $rsb")x" "<= 1.05x" "$(awk -v a="$rsn" -v b="$rsb" 'BEGIN {print (a <= 1.05 * b) ? 1 : 0}')"
  rm -f "$o" "$ob"
}

section_shim() {
  local lib=${PPT_BUILD_DIR:-$root/build}/src/shim/libppt_shim.a dir=$out/shim i key
  if [[ ! -f "$lib" ]]; then skipped "shim" "$lib not built"; return; fi
  mkdir -p "$dir"
  if ! c++ -std=c++20 -O2 -I"$root/include" "$root/scripts/shim_bench.cc" -o "$dir/shim_bench" "$lib" -ldl -lpthread \
      2>"$dir/build.log"; then
    skipped "shim" "shim_bench did not build (.bench/out/shim/build.log)"; status=1; return
  fi
  local have_base=0
  if [[ -n "$shim_baseline" ]]; then
    if c++ -std=c++20 -O2 -I"$root/include" "$root/scripts/shim_bench.cc" -o "$dir/shim_bench_base" \
        "$shim_baseline" -ldl -lpthread 2>>"$dir/build.log"; then
      have_base=1
    else
      skipped "shim baseline" "$shim_baseline did not link (.bench/out/shim/build.log)"; status=1
    fi
  fi
  : >"$dir/now.txt"
  : >"$dir/base.txt"
  for ((i = 0; i < runs; i++)); do
    [[ $have_base == 1 ]] && "$dir/shim_bench_base" "$dir" --no-threads >>"$dir/base.txt"
    "$dir/shim_bench" "$dir" >>"$dir/now.txt" || { skipped "shim" "shim_bench failed"; status=1; return; }
  done
  shim_value() { awk -v k="$2" '$1 == k {print $2}' "$1" | median; }
  local labels=(pair_ns "begin/end pair" flush64_file_median_ns "flush, 64 jobs, log file (median)"
                flush64_file_p99_ns "flush, 64 jobs, log file (p99)"
                flush64_stalled_max_ns "flush, 64 jobs, log stalled 1 s (worst)"
                pair_4threads_ns "begin/end pair, 4 threads sharing")
  for ((i = 0; i < ${#labels[@]}; i += 2)); do
    key=${labels[i]}
    local now base=""
    now=$(shim_value "$dir/now.txt" "$key")
    [[ $have_base == 1 ]] && base=$(shim_value "$dir/base.txt" "$key")
    [[ $base == nan ]] && base=""  # not run on the baseline (threads: an earlier build may not survive them)
    shim_lines+=("$(printf '%-42s %14s %14s %8s' "${labels[i+1]}" "${base:--}" "$now" \
      "$([[ -n $base && $base != nan && $base != 0 ]] && calc '%.2f' "$now / $base")")")
  done
  local stalled pair
  stalled=$(shim_value "$dir/now.txt" flush64_stalled_max_ns)
  pair=$(shim_value "$dir/now.txt" pair_ns)
  goal "shim: flush with a stalled log" "$(calc '%.3f ms' "$stalled / 1e6")" "< 10 ms" \
    "$(awk -v v="$stalled" 'BEGIN {print (v < 10e6) ? 1 : 0}')"
  goal "shim: begin/end pair (host clock)" "$pair ns" "< 500 ns" "$(awk -v v="$pair" 'BEGIN {print (v < 500) ? 1 : 0}')"
}

section_baseline() {
  if [[ $have_bin == 0 ]]; then skipped "baseline" "not built"; return; fi
  if [[ ! -x "$baseline_bin" ]]; then skipped "baseline" "$baseline_bin is not an executable"; status=1; return; fi
  mkdir -p "$out/baseline"
  [[ $set_files -gt 0 ]] || prepare_logs
  baseline_pair basejson "set -> .json" "$out/baseline/trace.json" --log_dir "$logs"
  baseline_pair basepf "set -> .pftrace" "$out/baseline/trace.pftrace" --log_dir "$logs"
  local big=${scale_ranks[-1]}
  if [[ -d "$bench/scale/r$big" ]]; then
    baseline_pair "basescale$big" "$big ranks -> .pftrace" "$out/baseline/scale.pftrace" --log_dir "$bench/scale/r$big"
  else
    skipped "$big ranks vs baseline" "run the scale section first (--only scale,baseline)"
  fi
}

# ------------------------------------------------------------------ main --

mkdir -p "$bench" "$out"
scale_lines=()
scale_notes=()
whatif_lines=()
whatif_demo_lines=()
whatif_memory_lines=()
shim_lines=()
prepare_build
set_files=0 set_bytes=0 set_jobs=0
for s in "${SECTIONS[@]}"; do
  if [[ $s != scale && $s != watch && $s != shim && $s != ranks1024 ]]; then prepare_logs; break; fi
done
for s in "${SECTIONS[@]}"; do
  "section_$s"
done

cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true)
echo
echo "pp-timeline benchmark, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs${cpu:+ ($cpu)}, load average now $(cut -d' ' -f1-3 /proc/loadavg) (other work skews the times)"
[[ $set_files -gt 0 ]] && echo "set: $set_files files, $(calc '%.1f' "$set_bytes / 1e6") MB, $set_jobs job lines (gen_logs.py ${gen_args[*]})${gen_secs:+, generated in $gen_secs s}"
echo "medians of $runs runs after a warm-up run (old helper: one run)"
echo
printf '  %-38s %10s %10s %12s  %s\n' "what" "seconds" "MB/s in" "peak RSS MB" "note"
printf '  %s\n' "$(printf '%.0s-' {1..100})"
printf '%s\n' "${rows[@]}"
if [[ ${#goals[@]} -gt 0 ]]; then
  echo
  printf '  %-38s %18s   %-16s %s\n' "goal" "value" "target" "verdict"
  printf '  %s\n' "$(printf '%.0s-' {1..84})"
  printf '%s\n' "${goals[@]}"
fi
if [[ ${#whatif_lines[@]} -gt 0 ]]; then
  echo
  echo "whatif accuracy: periods predicted from one generated run against a run generated under the target (same stage costs)"
  printf '  %s\n' "${whatif_lines[@]}"
fi
if [[ ${#whatif_demo_lines[@]} -gt 0 ]]; then
  echo
  echo "whatif against real processes: pp-demo's 1F1B run, the period predicted under each target against pp-demo's own"
  printf '  %s\n' "${whatif_demo_lines[@]}"
fi
if [[ ${#whatif_memory_lines[@]} -gt 0 ]]; then
  echo
  echo "whatif memory: each stage's peak predicted from a 1F1B M=8 run against a run under the target (generated: same memory model; pp-demo: real allocations)"
  printf '  %s\n' "${whatif_memory_lines[@]}"
fi
if [[ ${#shim_lines[@]} -gt 0 ]]; then
  echo
  echo "shim: host costs on the host clock, ns (medians of $runs runs; before: --shim-baseline)"
  printf '  %-42s %14s %14s %8s\n' "what" "before" "now" "now/before"
  printf '  %s\n' "$(printf '%.0s-' {1..82})"
  printf '  %s\n' "${shim_lines[@]}"
fi
if [[ ${#scale_lines[@]} -gt 0 ]]; then
  echo
  echo "scale: how time and memory grow with the rank count (same per-rank log; medians of $runs runs)"
  [[ ${#scale_notes[@]} -gt 0 ]] && printf '  note: %s\n' "${scale_notes[@]}"
  printf '  %6s %9s %10s %9s %9s %7s %10s %12s %12s\n' "ranks" "MB in" "jobs" "seconds" "floor s" "/floor" \
    "RSS MB" "s / M jobs" "RSS B / job"
  printf '  %s\n' "$(printf '%.0s-' {1..96})"
  printf '%s\n' "${scale_lines[@]}"
fi
exit $status
