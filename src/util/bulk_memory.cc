#include "util/bulk_memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>

namespace ppt {
namespace {

constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
// A thread's bulk memory comes in slabs of this much address space; only the
// pages written become resident.
constexpr size_t kSlabBytes = size_t{32} << 20;
constexpr size_t kAlign = 64;
constexpr size_t kSmallHead = size_t{4} << 20;
// Slabs are recorded for bulk_owns; past this many (256 GB of slabs) bulk
// memory stops and the heap serves.
constexpr size_t kMostSlabs = 8192;

struct Slab {
  uintptr_t begin = 0;
  uintptr_t end = 0;
};

std::atomic<bool> g_enabled{false};
std::mutex g_slab_mutex;
Slab g_slabs[kMostSlabs];
std::atomic<size_t> g_slab_count{0};  // g_slabs[0, count) are written and final

thread_local bool t_in_scope = false;
thread_local uintptr_t t_next = 0;  // this thread's free bytes: [t_next, t_end)
thread_local uintptr_t t_end = 0;

uintptr_t round_up(uintptr_t x, uintptr_t to) { return (x + to - 1) / to * to; }

// A fresh slab of at least `bytes`, 2 MB-aligned and asking for huge pages;
// false when there is no address space (or no room to record it).
bool new_slab(size_t bytes) {
  const size_t size = round_up(std::max(bytes, kSlabBytes), kHugePage);
  std::lock_guard<std::mutex> lock(g_slab_mutex);
  const size_t n = g_slab_count.load(std::memory_order_relaxed);
  if (n == kMostSlabs) return false;
  // Room to align: the mapping is trimmed to the aligned part.
  void* raw =
      mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return false;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t begin = round_up(start, kHugePage);
  if (begin > start) munmap(raw, begin - start);
  if (start + kHugePage > begin) munmap(reinterpret_cast<void*>(begin + size), start + kHugePage - begin);
  // A thread's first slab starts with kSmallHead in 4 KB pages: a small
  // run's jobs fit there, where a huge page would be mostly room.
  const size_t head = t_end == 0 ? std::min(kSmallHead, size) : 0;
  prefer_huge_pages(reinterpret_cast<void*>(begin + head), size - head);
  g_slabs[n] = Slab{begin, begin + size};
  g_slab_count.store(n + 1, std::memory_order_release);
  t_next = begin;
  t_end = begin + size;
  return true;
}

}  // namespace

void prefer_huge_pages(void* p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  const uintptr_t begin = round_up(reinterpret_cast<uintptr_t>(p), kHugePage);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHugePage - 1);
  if (end <= begin) return;
  // Ignored when it fails: the block is the same memory in 4 KB pages.
  (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

void set_bulk_memory(bool on) {
#if defined(__SANITIZE_ADDRESS__)
  on = false;  // the heap's checks are worth more than the pages
#endif
  g_enabled.store(on, std::memory_order_relaxed);
}

bool bulk_memory_on() { return g_enabled.load(std::memory_order_relaxed); }

void* bulk_allocate(size_t bytes) noexcept {
  if (!t_in_scope || bytes == 0 || !g_enabled.load(std::memory_order_relaxed)) return nullptr;
  if (bytes > (size_t{1} << 40)) return nullptr;  // let the heap say it cannot
  bytes = round_up(bytes, kAlign);
  if (t_end - t_next < bytes && !new_slab(bytes)) return nullptr;
  void* p = reinterpret_cast<void*>(t_next);
  t_next += bytes;
  return p;
}

bool bulk_owns(const void* p) noexcept {
  const size_t n = g_slab_count.load(std::memory_order_acquire);
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  for (size_t i = 0; i < n; ++i) {
    if (a >= g_slabs[i].begin && a < g_slabs[i].end) return true;
  }
  return false;
}

BulkScope::BulkScope() : was_(t_in_scope) { t_in_scope = true; }

BulkScope::~BulkScope() { t_in_scope = was_; }

}  // namespace ppt
