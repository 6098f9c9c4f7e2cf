#include "util/kept_at_exit.h"

#include <atomic>
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

void begin_one_shot_command() {
  if (exits_after_command()) set_bulk_memory(true);
}

void keep_until_exit(void* p) {
  std::lock_guard<std::mutex> lock(g_kept_mutex);
  try {
    kept().push_back(p);
  } catch (const std::bad_alloc&) {
  }
}

}  // namespace ppt
