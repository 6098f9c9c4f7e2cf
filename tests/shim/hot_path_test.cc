// begin() and end() allocate nothing once the first step has sized the
// storage. Every C++ allocation of this test program is counted.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <new>

#include "pp_timeline/shim.h"

namespace {
std::atomic<long> g_allocations{0};
void count_allocation() { g_allocations.fetch_add(1, std::memory_order_relaxed); }
}  // namespace

// Every form that malloc backs is replaced, so that none is paired with
// another allocator's delete (AddressSanitizer checks the pairs).
void* operator new(size_t size) {
  count_allocation();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size) { return operator new(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  count_allocation();
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

TEST_CASE("After a warm-up step, begin() and end() allocate nothing") {
  ppt::shim::Options o;
  o.use_cuda = false;
  o.reserve_jobs = 4;  // make the warm-up grow the storage
  o.sink = [](std::string_view) {};
  ppt::shim::Profiler p(o);
  static const char* const kTypes[] = {"forward", "backward_b", "backward_w", "optimizer"};
  constexpr int kJobs = 1000;
  for (int j = 0; j < kJobs; ++j) {
    REQUIRE(p.begin(kTypes[j % 4], j).ok());
    REQUIRE(p.end().ok());
  }
  REQUIRE(p.flush(0).ok());
  const int64_t growths = p.stats().hot_path_growths;
  CHECK(growths > 0);

  long allocations = 0;
  bool all_ok = true;
  for (int step = 1; step < 4; ++step) {
    const long before = g_allocations.load();
    for (int j = 0; j < kJobs; ++j) {
      all_ok &= p.begin(kTypes[j % 4], j).ok();
      all_ok &= p.end().ok();
    }
    allocations += g_allocations.load() - before;
    REQUIRE(p.flush(step).ok());
  }
  CHECK(all_ok);
  CHECK(allocations == 0);
  CHECK(p.stats().hot_path_growths == growths);
  CHECK(p.stats().jobs_written == 4 * kJobs);
}
