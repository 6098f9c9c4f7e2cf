// Large arrays that live until the process exits, in 2 MB pages.
//
// A 1024-rank conversion writes about 190 MB of fresh memory, and each 4 KB
// page costs a page fault the first time it is written: about 50,000 faults.
// On a virtual machine, where each fault also traps into the host, they took
// a sixth of the conversion's CPU time. Memory the kernel backs with
// transparent huge pages takes one fault every 2 MB instead. A huge page is
// resident whole, though, so room that is never written costs memory where
// 4 KB pages cost none: only blocks written whole ask for huge pages.
//
// Two ways in:
// - prefer_huge_pages(), reserve_in_huge_pages() and resize_in_huge_pages():
//   a hint for one large block (the dependency edges, the writer's flow
//   tables, the jitter samples: arrays of the run's size);
// - the bulk allocator: the jobs of each file, a few hundred KB each, copied
//   at the end of the file's scan into an array of exactly their size (one
//   thread's run of such arrays fills whole huge pages), and the stats' rows
//   of durations and job lists, thousands of short vectors. Its blocks are never
//   freed: they last until the process exits, as a one-shot command's
//   results do (kept_at_exit.h). So only a one-shot command turns it on
//   (set_bulk_memory), and only code inside a BulkScope takes from it;
//   everything else, and every process that runs commands over and over
//   (tests, `batch`, `watch`), uses the ordinary heap.
#pragma once

#include <cstddef>
#include <memory>

namespace ppt {

// Asks that the 2 MB-aligned part of [p, p + bytes) be backed by huge pages
// (madvise MADV_HUGEPAGE, for a kernel whose transparent huge pages are
// "madvise" or "always"). A hint only: it does nothing for less than 2 MB
// or when the kernel refuses; the memory reads and writes the same.
void prefer_huge_pages(void* p, size_t bytes);

// Makes room in `v` for `n` elements at once (not by doubling), asking that
// the new room be huge pages: for an array of the run's size that is then
// filled whole.
template <typename Vector>
void reserve_in_huge_pages(Vector& v, size_t n) {
  if (n > v.capacity()) {
    v.reserve(n);
    prefer_huge_pages(v.data() + v.size(), (n - v.size()) * sizeof(*v.data()));
  }
}

// reserve_in_huge_pages, then resizes `v` to `n` elements (value-initialized).
template <typename Vector>
void resize_in_huge_pages(Vector& v, size_t n) {
  reserve_in_huge_pages(v, n);
  v.resize(n);
}

// Lets BulkScopes take bulk memory (on), or not (off: what was taken stays
// taken). Only a process that exits after its command turns it on
// (exits_after_command()). Under AddressSanitizer it stays off: blocks
// carved from a slab would hide an overflow into their neighbour.
void set_bulk_memory(bool on);
bool bulk_memory_on();

// A block of `bytes` from this thread's bulk memory, aligned for any type, or
// nullptr (bulk memory off, not inside a BulkScope on this thread, or no
// address space left): the caller then uses the heap.
void* bulk_allocate(size_t bytes) noexcept;

// Whether `p` lies in bulk memory (never freed: deallocation does nothing).
bool bulk_owns(const void* p) noexcept;

// While one lives on a thread, BulkAllocators on that thread take bulk memory.
class BulkScope {
 public:
  BulkScope();
  ~BulkScope();
  BulkScope(const BulkScope&) = delete;
  BulkScope& operator=(const BulkScope&) = delete;

 private:
  bool was_ = false;
};

// std::allocator, except inside a BulkScope while set_bulk_memory(true).
template <typename T>
struct BulkAllocator {
  using value_type = T;
  BulkAllocator() noexcept = default;
  template <typename U>
  BulkAllocator(const BulkAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (void* p = bulk_allocate(n * sizeof(T))) return static_cast<T*>(p);
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (!bulk_owns(p)) std::allocator<T>().deallocate(p, n);
  }
  template <typename U>
  bool operator==(const BulkAllocator<U>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const BulkAllocator<U>&) const noexcept {
    return false;
  }
};

}  // namespace ppt
