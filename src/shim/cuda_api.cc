// Binds the CUDA runtime at run time (cuda_api.h).
#include "cuda_api.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>

namespace ppt::shim::detail::cuda {
namespace {

std::atomic<const Api*> g_fake{nullptr};

struct Loaded {
  Api api;
  bool ok = false;
  std::string why_not;
};

// dlsym on `handle` of every function; false (with *missing) when one lacks.
bool bind_all(void* handle, Api* a, std::string* missing) {
  bool ok = true;
  auto get = [&](auto& slot, const char* name) {
    void* f = dlsym(handle, name);
    if (f == nullptr) {
      if (ok) *missing = name;
      ok = false;
      return;
    }
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(f);
  };
  get(a->GetDeviceCount, "cudaGetDeviceCount");
  get(a->GetDevice, "cudaGetDevice");
  get(a->SetDevice, "cudaSetDevice");
  get(a->DriverGetVersion, "cudaDriverGetVersion");
  get(a->RuntimeGetVersion, "cudaRuntimeGetVersion");
  get(a->DeviceGetStreamPriorityRange, "cudaDeviceGetStreamPriorityRange");
  get(a->StreamCreateWithPriority, "cudaStreamCreateWithPriority");
  get(a->StreamDestroy, "cudaStreamDestroy");
  get(a->StreamIsCapturing, "cudaStreamIsCapturing");
  get(a->EventCreateWithFlags, "cudaEventCreateWithFlags");
  get(a->EventDestroy, "cudaEventDestroy");
  get(a->EventRecord, "cudaEventRecord");
  get(a->EventQuery, "cudaEventQuery");
  get(a->EventSynchronize, "cudaEventSynchronize");
  get(a->EventElapsedTime, "cudaEventElapsedTime");
  get(a->GetErrorName, "cudaGetErrorName");
  get(a->GetErrorString, "cudaGetErrorString");
  get(a->GetLastError, "cudaGetLastError");
  return ok;
}

// The path of a libcudart already mapped into the process, or "".
std::string loaded_cudart() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* user) {
        const char* name = info->dlpi_name;
        if (name == nullptr || *name == '\0') return 0;
        const char* base = std::strrchr(name, '/');
        base = base != nullptr ? base + 1 : name;
        if (std::strncmp(base, "libcudart.so", 12) == 0) {
          *static_cast<std::string*>(user) = name;
          return 1;
        }
        return 0;
      },
      &found);
  return found;
}

void bind_driver(Api* a) {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (h == nullptr) return;  // the runtime loads the driver on its first call
  a->CtxGetCurrent = reinterpret_cast<int (*)(void**)>(dlsym(h, "cuCtxGetCurrent"));
  a->CtxSetCurrent = reinterpret_cast<int (*)(void*)>(dlsym(h, "cuCtxSetCurrent"));
  if (a->CtxGetCurrent == nullptr || a->CtxSetCurrent == nullptr) {
    a->CtxGetCurrent = nullptr;
    a->CtxSetCurrent = nullptr;
  }
}

Loaded load() {
  Loaded l;
  std::string missing;
  // RTLD_DEFAULT is a null handle: a handle is "none" only when opening failed.
  auto try_handle = [&](void* handle, const std::string& source, bool opened = true) {
    Api a;
    if (opened && bind_all(handle, &a, &missing)) {
      a.source = source;
      l.api = a;
      l.ok = true;
    }
    return l.ok;
  };
  if (const char* path = std::getenv("PPT_SHIM_CUDART"); path != nullptr && *path != '\0') {
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!try_handle(h, path, h != nullptr)) {
      l.why_not = std::string("PPT_SHIM_CUDART=") + path + ": " +
                  (h == nullptr ? std::string(dlerror()) : "it lacks " + missing);
      return l;
    }
  } else if (try_handle(RTLD_DEFAULT, "the process's CUDA runtime")) {
  } else if (std::string path = loaded_cudart();
             !path.empty() && [&] {
               void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
               return try_handle(h, path, h != nullptr);
             }()) {
  } else {
    for (const char* name : {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0",
                             "libcudart.so"}) {
      void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (try_handle(h, name, h != nullptr)) break;
    }
    if (!l.ok) {
      l.why_not = missing.empty() ? "no CUDA runtime (libcudart.so*) could be loaded"
                                  : "the CUDA runtime found lacks " + missing;
      return l;
    }
  }
  // The runtime loads the driver on its first call; its context functions
  // are looked up once it has.
  int count = 0;
  (void)l.api.GetDeviceCount(&count);
  (void)l.api.GetLastError();
  bind_driver(&l.api);
  return l;
}

}  // namespace

const Api* api(std::string* why_not) {
  if (const Api* fake = g_fake.load(std::memory_order_acquire)) return fake;
  static const Loaded loaded = load();
  if (!loaded.ok) {
    if (why_not != nullptr) *why_not = loaded.why_not;
    return nullptr;
  }
  return &loaded.api;
}

void set_cuda_api_for_testing(const Api* fake) { g_fake.store(fake, std::memory_order_release); }

std::string failure(const Api& a, const char* what, Error e) {
  std::string s(what);
  s += " failed: ";
  const char* name = a.GetErrorName != nullptr ? a.GetErrorName(e) : nullptr;
  const char* text = a.GetErrorString != nullptr ? a.GetErrorString(e) : nullptr;
  s += name != nullptr ? name : ("CUDA error " + std::to_string(e)).c_str();
  if (text != nullptr) {
    s += " (";
    s += text;
    s += ")";
  }
  return s;
}

}  // namespace ppt::shim::detail::cuda
