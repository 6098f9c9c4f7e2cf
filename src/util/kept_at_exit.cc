#include "util/kept_at_exit.h"

#include <malloc.h>

#include <atomic>
#include <climits>
#include <mutex>
#include <new>
#include <vector>

#include "util/bulk_memory.h"

namespace ppt {
namespace {

std::atomic<bool> g_exits{false};

// Never destroyed: what it holds stays reachable until the process ends.
std::vector<void*>& kept() {
  static auto* list = new std::vector<void*>;
  return *list;
}

std::mutex g_kept_mutex;

}  // namespace

void set_exits_after_command(bool exits) { g_exits.store(exits, std::memory_order_relaxed); }

bool exits_after_command() { return g_exits.load(std::memory_order_relaxed); }

void begin_one_shot_command(bool reuse_freed) {
  if (!exits_after_command()) return;
  set_bulk_memory(true);
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD)
  if (reuse_freed) {
    // 32 MB is the most glibc takes for the threshold (HEAP_MAX_SIZE / 2).
    (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
    (void)mallopt(M_TRIM_THRESHOLD, INT_MAX);
  }
#else
  (void)reuse_freed;
#endif
}

void keep_until_exit(void* p) {
  std::lock_guard<std::mutex> lock(g_kept_mutex);
  try {
    kept().push_back(p);
  } catch (const std::bad_alloc&) {
  }
}

}  // namespace ppt
