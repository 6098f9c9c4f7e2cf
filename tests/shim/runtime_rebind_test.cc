// A runtime the process loads after the shim chose one is the one later
// profilers bind: a Shim made before `import torch` must not keep the
// libcudart it found itself (or none) once the framework brought its own.
// argv[1]: a stand-in libcudart.so.99 (stub_cudart.cc) that reports no
// device with its own error name. Its own main: the binding is per process.
#include <dlfcn.h>

#include <cstdio>
#include <string>

#include "pp_timeline/shim.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s libcudart.so.99\n", argv[0]);
    return 2;
  }
  ppt::shim::Options options;
  options.sink = [](std::string_view) {};
  options.warning_sink = [](std::string_view) {};
  std::string before;
  {
    ppt::shim::Profiler first(options);  // binds what the shim can find itself
    before = first.backend_note();
  }
  if (before.find("stubErrorNoDevice") != std::string::npos) {
    std::printf("FAIL: the stub answered before it was loaded: %s\n", before.c_str());
    return 1;
  }
  // What `import torch` does: its extension loads its libcudart privately.
  void* framework = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (framework == nullptr) {
    std::printf("FAIL: %s\n", dlerror());
    return 1;
  }
  ppt::shim::Profiler second(options);
  const std::string after = second.backend_note();
  std::printf("before: %s\nafter: %s\n", before.c_str(), after.c_str());
  if (after.find("stubErrorNoDevice") == std::string::npos) {
    std::printf("FAIL: the profiler made after the framework's runtime was loaded did not bind it\n");
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
