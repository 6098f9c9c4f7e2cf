// Every job is an NVTX range named by its type, with its micro-batch as the
// payload, so that Nsight Systems shows the jobs the log does; a job begun
// on one thread and dropped by a flush() on another still ends its own
// range, never another thread's. argv[1]: the injection library
// nvtx_probe.cc, loaded by NVTX itself through NVTX_INJECTION64_PATH (set
// before the first NVTX call, as a tool's launcher does). Its own main:
// NVTX initialises once per process.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "pp_timeline/shim.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  ::setenv("NVTX_INJECTION64_PATH", argv[1], 1);
  ppt::shim::Options options;
  options.use_cuda = false;
  options.sink = [](std::string_view) {};
  ppt::shim::Profiler p(options);
  bool ok = p.begin("forward", 3).ok() && p.end().ok() && p.begin("optimizer", -1).ok() && p.end().ok() &&
            p.begin("backward", 1).ok();
  ok = ok && !p.flush(0).ok();  // the open job is dropped at flush: its range ends too
  // Begun on another thread, dropped by this thread's flush.
  std::thread other([&] { ok = ok && p.begin("send_forward", 2).ok(); });
  other.join();
  ok = ok && !p.flush(1).ok();
  void* probe = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
  auto* log = probe != nullptr ? reinterpret_cast<const char* (*)()>(dlsym(probe, "ppt_nvtx_probe_log")) : nullptr;
  const std::string seen = log != nullptr ? log() : "(the injection library was not loaded)";
  // Process-wide ranges (start/end), each ended by its own id; no
  // thread-local push/pop, whose pop on another thread would end that
  // thread's innermost range instead.
  const std::string want =
      "forward:3#1@A end#1@A optimizer:-1#2@A end#2@A backward:1#3@A end#3@A send_forward:2#4@B end#4@A ";
  std::printf("NVTX ranges: %s\n", seen.c_str());
  if (!ok || seen != want) {
    std::printf("FAIL: expected %s\n", want.c_str());
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
