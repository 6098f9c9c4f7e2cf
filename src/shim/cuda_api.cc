// Binds the CUDA runtime at run time (cuda_api.h).
#include "cuda_api.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace ppt::shim::detail::cuda {
namespace {

std::atomic<const Api*> g_fake{nullptr};

struct Loaded {
  Api api;
  bool ok = false;
  std::string why_not;
  // Bound to a libcudart the shim loaded itself (from its list of names),
  // rather than one the process already had or PPT_SHIM_CUDART named: a
  // runtime the framework loads later replaces it (see api()).
  bool own_choice = false;
  std::string path;  // the file bound, when known
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
  if (ok) {
    a->StreamGetDevice = reinterpret_cast<Error (*)(Stream, int*)>(dlsym(handle, "cudaStreamGetDevice"));
  }
  return ok;
}

// The path of a libcudart mapped into the process other than `except`, or "".
std::string loaded_cudart(const std::string& except = {}) {
  struct Search {
    const std::string* except;
    std::string found;
  } search{&except, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* user) {
        auto* s = static_cast<Search*>(user);
        const char* name = info->dlpi_name;
        if (name == nullptr || *name == '\0') return 0;
        const char* base = std::strrchr(name, '/');
        base = base != nullptr ? base + 1 : name;
        if (std::strncmp(base, "libcudart.so", 12) == 0 && *s->except != name) {
          s->found = name;
          return 1;
        }
        return 0;
      },
      &search);
  return search.found;
}

// The file `handle` was loaded from.
std::string path_of(void* handle) {
  link_map* map = nullptr;
  if (handle == nullptr || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) {
    return {};
  }
  return map->l_name;
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
      l.path = path_of(handle);
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
  } else if (std::string path = loaded_cudart(); !path.empty() && [&] {
               void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
               return try_handle(h, path, h != nullptr);
             }()) {
  } else {
    for (const char* name : {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"}) {
      void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (try_handle(h, name, h != nullptr)) break;
    }
    l.own_choice = true;
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

// Binds the libcudart at `path`, already mapped by the process.
Loaded load_mapped(const std::string& path) {
  Loaded l;
  std::string missing;
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (h == nullptr || !bind_all(h, &l.api, &missing)) return l;
  l.api.source = path + " (loaded by the process after the shim had chosen a runtime)";
  l.ok = true;
  l.path = path;
  int count = 0;
  (void)l.api.GetDeviceCount(&count);
  (void)l.api.GetLastError();
  bind_driver(&l.api);
  return l;
}

}  // namespace

// The runtime is chosen at the first Profiler; a choice the shim made itself
// (from its list of names, or none found) is looked at again at every later
// one: a framework imported after the first Profiler (torch after the shim)
// loads its own libcudart, whose context and streams are the ones the jobs
// run on, and new Profilers bind that one. Tables are never freed, since the
// Profilers made earlier keep theirs.
const Api* api(std::string* why_not) {
  if (const Api* fake = g_fake.load(std::memory_order_acquire)) return fake;
  static std::mutex mutex;
  static const Loaded* current = nullptr;
  // Every table stays reachable from here (never freed: Profilers hold
  // theirs), also the ones a later runtime replaced.
  static auto* tables = new std::vector<std::unique_ptr<Loaded>>();
  std::lock_guard<std::mutex> lock(mutex);
  if (current == nullptr) {
    current = tables->emplace_back(std::make_unique<Loaded>(load())).get();
  } else if (current->own_choice) {
    if (std::string other = loaded_cudart(current->path); !other.empty()) {
      auto next = std::make_unique<Loaded>(load_mapped(other));
      if (next->ok) current = tables->emplace_back(std::move(next)).get();
    }
  }
  if (!current->ok) {
    if (why_not != nullptr) *why_not = current->why_not;
    return nullptr;
  }
  return &current->api;
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
