#include "util/bulk_memory.h"

#include <catch2/catch.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "input/file_scanner.h"
#include "support/test_support.h"

namespace {

// Turns bulk memory on or off for one test and restores it after.
struct BulkSetting {
  explicit BulkSetting(bool on) : was(ppt::bulk_memory_on()) { ppt::set_bulk_memory(on); }
  ~BulkSetting() { ppt::set_bulk_memory(was); }
  bool was;
};

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kBulkAvailable = false;  // off under AddressSanitizer, by design
#else
constexpr bool kBulkAvailable = true;
#endif

bool aligned(const void* p, uintptr_t to) { return reinterpret_cast<uintptr_t>(p) % to == 0; }

// The VmFlags of the mapping that holds `p` in /proc/self/smaps ("" when
// the file or the mapping is not found).
std::string vm_flags_of(const void* p) {
  std::ifstream in("/proc/self/smaps");
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find('-') < line.find(' ')) {
      inside = a >= lo && a < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

bool kernel_has_transparent_huge_pages() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s;
  std::getline(in, s);
  return s.find("[madvise]") != std::string::npos || s.find("[always]") != std::string::npos;
}

}  // namespace

TEST_CASE("bulk memory is taken only inside a scope, and only when turned on", "[util]") {
  SECTION("off: a scope takes nothing") {
    BulkSetting off(false);
    ppt::BulkScope scope;
    CHECK(ppt::bulk_allocate(4096) == nullptr);
  }
  SECTION("on, outside a scope: nothing") {
    BulkSetting on(true);
    CHECK(ppt::bulk_allocate(4096) == nullptr);
    ppt::JobList jobs(1000);
    CHECK_FALSE(ppt::bulk_owns(jobs.data()));
  }
  SECTION("on, inside a scope: aligned blocks that do not overlap, and every byte writable") {
    BulkSetting on(true);
    if (!kBulkAvailable) {
      ppt::BulkScope scope;
      CHECK(ppt::bulk_allocate(4096) == nullptr);
      return;
    }
    std::vector<char*> blocks;
    {
      ppt::BulkScope scope;
      for (size_t bytes : {size_t{1}, size_t{40}, size_t{100000}, size_t{3} << 20, size_t{40} << 20, size_t{7}}) {
        auto* p = static_cast<char*>(ppt::bulk_allocate(bytes));
        REQUIRE(p != nullptr);
        CHECK(aligned(p, 64));
        CHECK(ppt::bulk_owns(p));
        CHECK(ppt::bulk_owns(p + bytes - 1));
        std::memset(p, static_cast<int>(blocks.size() + 1), bytes);
        blocks.push_back(p);
      }
    }
    // Each block still holds its own bytes: none was handed out twice.
    for (size_t i = 0; i < blocks.size(); ++i) CHECK(blocks[i][0] == static_cast<char>(i + 1));
    // Out of the scope again.
    CHECK(ppt::bulk_allocate(64) == nullptr);
    int on_stack = 0;
    CHECK_FALSE(ppt::bulk_owns(&on_stack));
  }
}

TEST_CASE("a JobList filled in a scope lies in bulk memory and grows out of it on the heap", "[util]") {
  BulkSetting on(true);
  std::vector<ppt::Job> source(5000);
  for (size_t i = 0; i < source.size(); ++i) source[i].job_id = static_cast<int32_t>(i);
  ppt::JobList jobs;
  {
    ppt::BulkScope scope;
    jobs.assign(source.begin(), source.end());
  }
  CHECK(ppt::bulk_owns(jobs.data()) == kBulkAvailable);
  const ppt::Job* before = jobs.data();
  jobs.push_back(ppt::Job{});  // grows: a heap block; the bulk block is left as it is
  CHECK(jobs.data() != before);
  CHECK_FALSE(ppt::bulk_owns(jobs.data()));
  REQUIRE(jobs.size() == 5001);
  for (size_t i = 0; i < source.size(); ++i) CHECK(jobs[i].job_id == static_cast<int32_t>(i));
}

TEST_CASE("threads take bulk memory from slabs of their own", "[util]") {
  BulkSetting on(true);
  if (!kBulkAvailable) return;
  constexpr int kThreads = 4, kBlocks = 200;
  std::vector<std::vector<char*>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ppt::BulkScope scope;
      for (int i = 0; i < kBlocks; ++i) {
        auto* p = static_cast<char*>(ppt::bulk_allocate(300000));
        if (!p) return;
        std::memset(p, t + 1, 300000);
        got[t].push_back(p);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    REQUIRE(got[t].size() == kBlocks);
    for (char* p : got[t]) {
      CHECK(p[0] == t + 1);
      CHECK(p[299999] == t + 1);
    }
  }
}

TEST_CASE("a scan's jobs are the same in bulk memory as on the heap, file after file on one thread", "[util]") {
  std::string big, small;
  for (int i = 0; i < 3000; ++i) big += ppt::testing::job_line("forward", i, 10 * i, 10 * i + 5);
  for (int i = 0; i < 3; ++i) small += ppt::testing::job_line("backward", i, 7 * i, 7 * i + 3);
  ppt::FileScan heap_big, heap_small;
  {
    BulkSetting off(false);
    heap_big = ppt::scan_buffer(big, 0, ppt::testing::parser());
    heap_small = ppt::scan_buffer(small, 1, ppt::testing::parser());
  }
  BulkSetting on(true);
  ppt::FileScan bulk_big = ppt::scan_buffer(big, 0, ppt::testing::parser());
  ppt::FileScan bulk_small = ppt::scan_buffer(small, 1, ppt::testing::parser());
  CHECK(ppt::bulk_owns(bulk_big.jobs.data()) == kBulkAvailable);
  CHECK(ppt::bulk_owns(bulk_small.jobs.data()) == kBulkAvailable);
  CHECK_FALSE(ppt::bulk_owns(heap_big.jobs.data()));
  // The array is exactly the jobs: no room left over.
  CHECK(bulk_big.jobs.capacity() == bulk_big.jobs.size());
  for (auto [a, b] : {std::pair{&heap_big, &bulk_big}, std::pair{&heap_small, &bulk_small}}) {
    REQUIRE(a->jobs.size() == b->jobs.size());
    for (size_t i = 0; i < a->jobs.size(); ++i) {
      INFO("job " << i);
      CHECK(std::memcmp(&a->jobs[i], &b->jobs[i], sizeof(ppt::Job)) == 0);
    }
  }
  // The small file after the big one on the same thread holds only its own.
  CHECK(bulk_small.jobs.size() == 3);
  CHECK(heap_big.jobs.size() == 3000);
}

TEST_CASE("an array of the run's size asks for huge pages before it is written", "[util]") {
  std::vector<uint32_t> v;
  ppt::resize_in_huge_pages(v, size_t{3} << 20);  // 12 MB
  REQUIRE(v.size() == size_t{3} << 20);
  CHECK(std::all_of(v.begin(), v.end(), [](uint32_t x) { return x == 0; }));
  if (!kernel_has_transparent_huge_pages()) return;
  // The 2 MB-aligned middle of the block carries the madvise flag ("hg").
  const uintptr_t mid = (reinterpret_cast<uintptr_t>(v.data()) + (uintptr_t{4} << 20)) & ~((uintptr_t{2} << 20) - 1);
  const std::string flags = vm_flags_of(reinterpret_cast<const void*>(mid));
  INFO(flags);
  CHECK(flags.find(" hg") != std::string::npos);
}

TEST_CASE("a file of very many jobs keeps the vector they were gathered in", "[util]") {
  BulkSetting on(true);
  // Past 16 MB of jobs (419,430 of them) a copy would hold them twice.
  std::string log;
  for (int i = 0; i < 420000; ++i) log += ppt::testing::job_line("forward", i % 64, 10 * i, 10 * i + 5);
  ppt::FileScan s = ppt::scan_buffer(log, 0, ppt::testing::parser());
  REQUIRE(s.jobs.size() == 420000);
  CHECK(s.jobs.back().start_ns == s.jobs.front().start_ns + int64_t{10000} * 419999);
  CHECK_FALSE(ppt::bulk_owns(s.jobs.data()));
}
