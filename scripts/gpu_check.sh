#!/usr/bin/env bash
# Measures the instrumentation shim on a CUDA device and runs the GPU tests.
#
# It prints:
#  - the host cost of a begin()/end() pair: median and p99 over many jobs
#    (goal: median at most 2 us);
#  - the CUDA synchronisations, queries, host callbacks and allocations made
#    inside a step, counted by interposing the runtime API (goal: 0);
#  - the host cost of two bare cudaEventRecord calls around the same work,
#    the floor of any CUDA-event timer, beside it;
#  - the host time per step with the device behind, flush included (goal: no
#    wait for the device, and every flush() within 2 ms, timed here);
#  - fidelity: start and end within 5 us of CUDA-event truth, the duration
#    within 5 us of cudaEventElapsedTime, for a job behind ~20 ms of device
#    work (beside it, what the enqueue time and a host callback give);
#  - the drift: jobs every 0.5 s inside one 10 s step, far from the flushes'
#    anchors (goal: start within 5 us);
#  - threads: 4 threads sharing one profiler, each on its own stream (goal:
#    every job written once, none refused or dropped);
#  - a device never idle for 3 s, ~20 ms behind at every flush (goal: no job
#    dropped; the anchors given up, the late anchors and the step's
#    uncertainty printed);
#  - all of it again, shorter, with CUDA_DEVICE_MAX_CONNECTIONS=1 (one
#    hardware queue: the anchors queue behind the compute, and in the
#    never-idle case none comes back in time: the late anchors carry it);
#  - the GPU tests (ctest label `gpu`) and 4-rank pp-demo runs on the device,
#    converted with pp-timeline.
#
# Every step has a timeout and they add up to under 600 s; output is
# line-buffered and, with OUT set, the report is written into $OUT as it
# runs (gpu_check.txt), with the demo traces.
#
# Usage:
#   scripts/gpu_check.sh             run from .gpu_check/bundle when it exists,
#                                    else build with CUDA into build-gpu/ and run
#   scripts/gpu_check.sh --prepare   build here with CUDA and bundle the programs
#                                    with the shared libraries they need into
#                                    .gpu_check/bundle (for a device machine
#                                    without glog, CLI11, RE2... to build with)
#   scripts/gpu_check.sh --run       run the bundle; fails if there is none
#
# Environment: PPT_GPU_BUILD_DIR (build directory to use or reuse),
# PPT_JOBS (build parallelism), OUT (a folder: the report and the demo traces
# are written there).
#
# Exit status: 0 every goal met, 1 a goal or test failed (a driver too old for
# the runtime is a failure), 77 no CUDA driver or device (nothing measured),
# 2 a build or setup error.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
mode=auto
case "${1:-}" in
  --prepare) mode=prepare ;;
  --run) mode=run ;;
  "") ;;
  *) echo "usage: $0 [--prepare|--run]" >&2; exit 2 ;;
esac
bundle=$root/.gpu_check/bundle
targets=(ppt_gpu_check ppt_shim_gpu_tests pp-demo pp-timeline)

# Configures with CUDA and builds the targets; pp-timeline is optional.
build() {
  local dir=$1
  if [[ ! -f $dir/CMakeCache.txt ]]; then
    mkdir -p "$dir"
    cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPPT_WITH_CUDA=ON >"$dir/configure.log" 2>&1 ||
      { echo "gpu_check: configure failed; see $dir/configure.log" >&2; tail -20 "$dir/configure.log" >&2; return 2; }
  else
    cmake "$dir" -DPPT_WITH_CUDA=ON >/dev/null || return 2
  fi
  local jobs=${PPT_JOBS:-$(nproc)}
  # ppt_gpu_check exists only when CMake found the CUDA toolkit.
  cmake --build "$dir" -j "$jobs" --target ppt_gpu_check ||
    { echo "gpu_check: ppt_gpu_check did not build (was the CUDA toolkit found? see $dir/CMakeCache.txt)" >&2; return 2; }
  cmake --build "$dir" -j "$jobs" --target ppt_shim_gpu_tests pp-demo || return 2
  cmake --build "$dir" -j "$jobs" --target pp-timeline >/dev/null 2>&1 ||
    echo "gpu_check: pp-timeline did not build; the demo's logs will not be converted" >&2
  return 0
}

find_binary() {  # name, build dir
  find "$2" -name "$1" -type f -perm -u+x -not -path '*/CMakeFiles/*' 2>/dev/null | head -1
}

prepare() {
  local dir=${PPT_GPU_BUILD_DIR:-$root/.gpu_check/build}
  mkdir -p "$root/.gpu_check"
  # Keep the bundle out of git without touching tracked files.
  local exclude
  exclude=$(git -C "$root" rev-parse --path-format=absolute --git-path info/exclude 2>/dev/null)
  if [[ -n $exclude ]] && ! grep -qsx '/.gpu_check/' "$exclude"; then
    mkdir -p "$(dirname "$exclude")" && echo '/.gpu_check/' >>"$exclude"
  fi
  build "$dir" || return 2
  rm -rf "$bundle"
  mkdir -p "$bundle/bin" "$bundle/lib"
  local t f
  for t in "${targets[@]}"; do
    f=$(find_binary "$t" "$dir")
    [[ -n $f ]] && cp "$f" "$bundle/bin/" && strip --strip-debug "$bundle/bin/$t" 2>/dev/null
  done
  [[ -x $bundle/bin/ppt_gpu_check ]] || { echo "gpu_check: ppt_gpu_check was not built (is CUDA found?)" >&2; return 2; }
  # Every shared library but the C and C++ runtimes, which must come from the
  # machine (a newer libstdc++ there serves these programs; ours would need
  # this machine's glibc), and the driver.
  for f in "$bundle"/bin/*; do
    ldd "$f" | awk '/=> \// {print $3}'
  done | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libcuda.so*) ;;
      libstdc++.so.*|libgcc_s.so.*) ;;
      *) cp -L "$lib" "$bundle/lib/" ;;
    esac
  done
  local glibc glibcxx
  glibc=$(objdump -T "$bundle"/bin/* "$bundle"/lib/* 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
  glibcxx=$(objdump -T "$bundle"/bin/* "$bundle"/lib/* 2>/dev/null | grep -o 'GLIBCXX_[0-9.]*' | sort -uV | tail -1)
  {
    echo "built: $(date -u +%FT%TZ) from $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
    echo "needs: $glibc and $glibcxx or later on the device machine"
    echo "programs: $(cd "$bundle/bin" && ls | tr '\n' ' ')"
    echo "libraries: $(cd "$bundle/lib" && ls | tr '\n' ' ')"
  } >"$bundle/manifest.txt"
  cat "$bundle/manifest.txt"
  echo "bundle: $(du -sh "$bundle" | cut -f1) in $bundle"
}

run_checks() {  # bin dir
  local bin=$1 work rc=0 status
  if ! "$bin/ppt_gpu_check" --self-test >/dev/null 2>&1; then
    echo "gpu_check: the programs do not run on this machine:" >&2
    "$bin/ppt_gpu_check" --self-test 2>&1 | tail -3 >&2
    ldd "$bin/ppt_gpu_check" 2>&1 | grep -i "not found" >&2
    [[ -f $bundle/manifest.txt ]] && grep needs: "$bundle/manifest.txt" >&2
    return 2
  fi
  work=$(mktemp -d)
  local report=$work/gpu_check.txt
  if [[ -n ${OUT:-} ]]; then
    mkdir -p "$OUT" 2>/dev/null
    [[ -d $OUT && -w $OUT ]] && report=$OUT/gpu_check.txt
  fi
  # Line-buffered, so that a run cut short still shows how far it got.
  local lb=()
  command -v stdbuf >/dev/null && lb=(stdbuf -oL -eL)
  {
    echo "== machine =="
    nvidia-smi -L 2>/dev/null || echo "(no nvidia-smi)"
    [[ -f $bundle/manifest.txt && $bin == "$bundle/bin" ]] && cat "$bundle/manifest.txt"
    echo
    echo "== ppt_gpu_check =="
    timeout -k 5 150 "${lb[@]}" "$bin/ppt_gpu_check"
    status=$?
    echo "ppt_gpu_check: exit $status"
    if [[ $status == 77 ]]; then
      echo "gpu_check: skipped: no CUDA device"
      exit 77
    fi
    [[ $status == 0 ]] || rc=1

    # One hardware queue for every stream (as Megatron-style training sets
    # it): the shim's anchors then queue behind the compute, and must be
    # given up rather than make flush() wait for the device.
    echo
    echo "== ppt_gpu_check with CUDA_DEVICE_MAX_CONNECTIONS=1 =="
    CUDA_DEVICE_MAX_CONNECTIONS=1 timeout -k 5 50 "${lb[@]}" "$bin/ppt_gpu_check" \
      --jobs 2000 --reps 3 --drift_s 6 --busy_s 3
    status=$?
    echo "ppt_gpu_check (CUDA_DEVICE_MAX_CONNECTIONS=1): exit $status"
    [[ $status == 0 ]] || rc=1

    echo
    echo "== GPU tests =="
    PPT_DEMO_BINARY=$bin/pp-demo timeout -k 5 120 "${lb[@]}" "$bin/ppt_shim_gpu_tests" --durations yes
    status=$?
    echo "ppt_shim_gpu_tests: exit $status"
    [[ $status == 0 ]] || rc=1

    echo
    echo "== pp-demo on the device =="
    local s args
    for s in 1f1b vpp zbh1; do
      args=(--log_dir "$work/demo_$s" --ranks 4 --schedule "$s" --micro-batches 8 --steps 3
            --work_us 500 --device cuda)
      timeout -k 5 40 "${lb[@]}" "$bin/pp-demo" "${args[@]}"
      status=$?
      [[ $status == 0 ]] || { rc=1; echo "pp-demo $s: exit $status"; tail -5 "$work/demo_$s"/workerlog.* ; continue; }
      grep -m1 'timing:' "$work/demo_$s/workerlog.0"
      grep -m2 'Profiler Info' "$work/demo_$s/workerlog.0"
      if [[ -x $bin/pp-timeline ]]; then
        if timeout -k 5 30 "$bin/pp-timeline" --log_dir "$work/demo_$s" -o "$work/demo_$s.json"; then
          echo "pp-demo $s: converted to demo_$s.json"
        else
          rc=1
          echo "FAIL: pp-timeline could not convert the $s logs"
        fi
      else
        echo "pp-demo $s: pp-timeline is not in the bundle; not converted"
      fi
    done
    echo
    echo "gpu_check: $([[ $rc == 0 ]] && echo 'all checks passed' || echo 'SOME CHECKS FAILED')"
    exit $rc
  } 2>&1 | tee "$report"
  rc=${PIPESTATUS[0]}
  if [[ -n ${OUT:-} && -d ${OUT:-} ]]; then
    cp "$work"/demo_*.json "$OUT/" 2>/dev/null
  fi
  rm -rf "$work"
  return "$rc"
}

case $mode in
  prepare) prepare; exit $? ;;
  run)
    [[ -x $bundle/bin/ppt_gpu_check ]] || { echo "gpu_check: no bundle in $bundle; run $0 --prepare first" >&2; exit 2; }
    export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    run_checks "$bundle/bin"; exit $? ;;
  auto)
    if [[ -x $bundle/bin/ppt_gpu_check ]]; then
      export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
      run_checks "$bundle/bin"; exit $?
    fi
    dir=${PPT_GPU_BUILD_DIR:-$root/build-gpu}
    build "$dir" || exit 2
    bindir=$(mktemp -d)
    for t in "${targets[@]}"; do
      f=$(find_binary "$t" "$dir")
      [[ -n $f ]] && ln -s "$f" "$bindir/$t"
    done
    run_checks "$bindir"; status=$?
    rm -rf "$bindir"
    exit $status ;;
esac
