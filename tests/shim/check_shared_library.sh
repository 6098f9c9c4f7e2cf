#!/usr/bin/env bash
# libppt_shim.so must load into a process that brought its own glog and CUDA
# runtime (Paddle, a pip PyTorch on another CUDA), and on systems older than
# the build machine: it exports only the C API (ppt_* functions), has no
# NEEDED entry on glog or libcudart, needs no GLIBCXX_/CXXABI_ version (the
# C++ runtime is linked in) and no libstdc++ (libgcc_s, present wherever GCC
# ever was, is allowed), and the newest
# GLIBC version it needs is reported (and must be at most $PPT_MAX_GLIBC,
# 2.34 by default: dlopen and dlsym have that version since glibc moved them
# into libc).
set -uo pipefail
lib=$1
max_glibc=${PPT_MAX_GLIBC:-2.34}
fail=0
for tool in nm readelf objdump; do
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
sanitized=0
if echo "$needed" | grep -Eq 'libasan|libtsan|libubsan'; then sanitized=1; fi
versions=$(objdump -T "$lib" | grep -oE '\((GLIBC|GLIBCXX|CXXABI)_[0-9.]+\)' | tr -d '()' | sort -u)
cxx=$(echo "$versions" | grep -E '^(GLIBCXX|CXXABI)_' || true)
if [[ $sanitized == 0 ]]; then
  if [[ -n $cxx ]]; then
    echo "FAIL: $lib needs the C++ runtime's symbol versions: $(echo $cxx)"
    fail=1
  fi
  if echo "$needed" | grep -Eq 'libstdc\+\+'; then
    echo "FAIL: $lib needs libstdc++ at load time"
    fail=1
  fi
fi
newest=$(echo "$versions" | grep '^GLIBC_' | sed 's/^GLIBC_//' | sort -V | tail -1)
echo "needs GLIBC ${newest:-none}$( [[ -n $cxx ]] && echo ", $(echo $cxx | tr ' ' '\n' | sort -V | tail -1)")"
if [[ $sanitized == 0 && -n $newest && $(printf '%s\n%s\n' "$newest" "$max_glibc" | sort -V | tail -1) != "$max_glibc" ]]; then
  echo "FAIL: $lib needs GLIBC $newest, newer than $max_glibc:"
  objdump -T "$lib" | grep "GLIBC_$newest" | head
  fail=1
fi
echo "exports: $(echo "$exported" | wc -l) C functions"
exit $fail
