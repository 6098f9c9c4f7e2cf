#!/usr/bin/env bash
# libppt_shim.so must load into a process that brought its own glog and CUDA
# runtime (Paddle, a pip PyTorch on another CUDA): it exports only the C API
# (ppt_* functions) and has no NEEDED entry on glog or libcudart.
set -uo pipefail
lib=$1
fail=0
for tool in nm readelf; do
  command -v $tool >/dev/null || { echo "SKIP: $tool not found"; exit 77; }
done
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^$')
others=$(echo "$exported" | grep -v '^ppt_shim_[a-z_]*$')
if [[ -n $others ]]; then
  echo "FAIL: $lib exports symbols other than the C API:"
  echo "$others" | head -20
  fail=1
fi
if ! echo "$exported" | grep -qx ppt_shim_create; then
  echo "FAIL: $lib does not export ppt_shim_create"
  fail=1
fi
needed=$(readelf -d "$lib" | awk '/\(NEEDED\)/ {print $NF}' | tr -d '[]')
echo "NEEDED: $(echo $needed)"
if echo "$needed" | grep -Eq 'glog|cudart|libcuda\.'; then
  echo "FAIL: $lib needs glog or the CUDA runtime at load time"
  fail=1
fi
echo "exports: $(echo "$exported" | wc -l) C functions"
exit $fail
