// The memory a demo rank holds (HeldMemory) and the `[Pipeline details]`
// lines it logs (details_log.h), in this process.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "activations.h"
#include "details_log.h"
#include "schedule.h"

using namespace ppt::demo;
using ppt::PlanRole;

namespace {

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string s;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
  return s;
}

std::vector<std::string> messages_of(const std::string& log) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t nl; (nl = log.find('\n', at)) != std::string::npos; at = nl + 1) {
    const std::string line = log.substr(at, nl - at);
    const size_t from = line.find("[Pipeline details] ");
    const size_t to = line.find(": memory_allocated_size=");
    if (from != std::string::npos && to != std::string::npos) {
      out.push_back(line.substr(from + 19, to - from - 19));
    }
  }
  return out;
}

// Paddle's PipelineParallelWithInterleave._get_virtual_pp_rank (without the
// best-unbalanced scheduler), re-typed: the chunk of a virtual micro-step.
int paddle_virtual_pp_rank(int micro_step, bool forward, int p, int m, int v) {
  const int first_chunk_acc = m % p + p;
  int vs = 0;
  if (micro_step < first_chunk_acc * v) {
    vs = micro_step / first_chunk_acc;
  } else {
    vs = ((micro_step - first_chunk_acc * v) % (p * v)) / p;
  }
  return forward ? vs : v - vs - 1;
}

}  // namespace

TEST_CASE("Held activations are resident memory, reused from the cache once freed, keyed by micro-batch and chunk") {
  const ResidentMemory before = resident_memory();
  REQUIRE(before.rss_bytes > 0);
  HeldMemory memory;
  std::string error;
  const int64_t bytes = 48 * kMiB;
  REQUIRE(memory.allocate(0, 1, bytes, &error));
  const ResidentMemory held = resident_memory();
  // Every page was written, so all of it is resident (no swap counts here).
  CHECK(held.rss_bytes - before.rss_bytes >= bytes * 95 / 100);
  CHECK(held.hwm_bytes >= held.rss_bytes);
  CHECK(memory.activations_held() == 1);
  CHECK_FALSE(memory.allocate(0, 1, kMiB, &error));
  CHECK_THAT(error, Catch::Contains("micro-batch 0 chunk 1 already holds"));
  CHECK_FALSE(memory.release(0, 0, &error));
  CHECK_THAT(error, Catch::Contains("micro-batch 0 chunk 0 holds no activations"));
  REQUIRE(memory.release(0, 1, &error));
  CHECK(memory.activations_held() == 0);
  CHECK(memory.blocks_cached() == 1);
  CHECK(memory.allocated_bytes() == 0);
  CHECK(memory.reserved_bytes() == bytes);
  // The next micro-batch takes the cached block: no new memory.
  REQUIRE(memory.allocate(1, 1, bytes, &error));
  CHECK(memory.blocks_cached() == 0);
  CHECK(resident_memory().rss_bytes - held.rss_bytes < bytes / 10);
  // A second block at once is new memory again.
  REQUIRE(memory.allocate(2, 0, bytes, &error));
  CHECK(resident_memory().rss_bytes - held.rss_bytes >= bytes * 95 / 100);
  CHECK(memory.reserved_bytes() == 2 * bytes);
}

TEST_CASE("Allocated is what is asked for and not freed; reserved the blocks mapped, rounded up to 2 MiB") {
  HeldMemory memory;
  std::string error;
  REQUIRE(memory.hold_static(5 * kMiB, &error));
  CHECK(memory.allocated_bytes() == 5 * kMiB);
  CHECK(memory.reserved_bytes() == 6 * kMiB);
  REQUIRE(memory.allocate(0, 0, 3 * kMiB, &error));
  REQUIRE(memory.allocate(1, 0, kMiB + 1, &error));
  CHECK(memory.allocated_bytes() == 9 * kMiB + 1);
  CHECK(memory.reserved_bytes() == 6 * kMiB + 4 * kMiB + 2 * kMiB);
  REQUIRE(memory.release(0, 0, &error));
  CHECK(memory.allocated_bytes() == 6 * kMiB + 1);
  CHECK(memory.reserved_bytes() == 12 * kMiB);  // a caching allocator keeps what it reserved
  REQUIRE(memory.allocate(2, 0, 2 * kMiB, &error));
  CHECK(memory.reserved_bytes() == 12 * kMiB);  // and reuses it
  REQUIRE(memory.allocate(3, 0, 2 * kMiB, &error));
  CHECK(memory.reserved_bytes() == 14 * kMiB);  // nothing cached fits: a new block
  CHECK(memory.allocated_bytes() == 10 * kMiB + 1);
  CHECK(memory.peak_allocated_bytes() == 10 * kMiB + 1);
  CHECK(mib_to_bytes(20.48) == std::llround(0.02 * 1073741824.0));
}

TEST_CASE("A details line is Paddle's logger format: asctime in UTC with milliseconds, sizes in GiB") {
  std::tm tm{};
  tm.tm_year = 2024 - 1900;
  tm.tm_mon = 10;
  tm.tm_mday = 20;
  tm.tm_hour = 12;
  tm.tm_min = 34;
  tm.tm_sec = 56;
  const auto at = std::chrono::system_clock::from_time_t(::timegm(&tm)) + std::chrono::microseconds(789999);
  const std::string line = details_line(details_step_message(true, true, std::nullopt, 3),
                                        std::llround(12.34 * 1073741824.0), 20 * (int64_t{1} << 30), at);
  CHECK(line ==
        "[2024-11-20 12:34:56,789] [    INFO] pipeline_parallel.py:1187 - [Pipeline details] "
        "Before_forward_step_chunk_None_step_3: memory_allocated_size=12.34, memory_reserved_size=20.00");
  CHECK(details_step_message(false, false, 1, 7) == "[Pipeline details] After_backward_step_chunk_1_step_7");
  CHECK(details_line(kEndPipelineMessage, 0, 0, at)
            .find("] [    INFO] pipeline_parallel.py:1187 - [Pipeline "
                  "details] End_forward_backward_pipeline: "
                  "memory_allocated_size=0.00, memory_reserved_size=0.00") != std::string::npos);
}

TEST_CASE("1F1B's lines name the micro-batch and chunk None; backward_b and backward_w have none") {
  SECTION("1f1b") {
    const PipelineShape shape{ScheduleKind::k1F1B, 2, 1, 3};
    HeldMemory memory;
    std::FILE* out = std::tmpfile();
    REQUIRE(out != nullptr);
    JobMemory jm(shape, 4 * kMiB, &memory, true, out, nullptr);
    std::string error;
    REQUIRE(jm.start_step(&error));
    for (const JobSpec& job : stage_jobs(shape, 0)) {
      if (job.optimizer()) REQUIRE(jm.end_step(&error));
      REQUIRE(jm.before_job(job, &error));
      REQUIRE(jm.begin_job(job, &error));
      REQUIRE(jm.end_job(job, &error));
      REQUIRE(jm.after_job(job, &error));
    }
    const std::vector<std::string> want{
        "Start_forward_backward_pipeline",       "Before_forward_step_chunk_None_step_0",
        "After_forward_step_chunk_None_step_0",  "Before_forward_step_chunk_None_step_1",
        "After_forward_step_chunk_None_step_1",  "Before_backward_step_chunk_None_step_0",
        "After_backward_step_chunk_None_step_0", "Before_forward_step_chunk_None_step_2",
        "After_forward_step_chunk_None_step_2",  "Before_backward_step_chunk_None_step_1",
        "After_backward_step_chunk_None_step_1", "Before_backward_step_chunk_None_step_2",
        "After_backward_step_chunk_None_step_2", "End_forward_backward_pipeline"};
    CHECK(messages_of(read_all(out)) == want);
    CHECK(memory.peak_allocated_bytes() == 2 * 4 * kMiB);
    std::fclose(out);
  }
  SECTION("zbh1") {
    const PipelineShape shape{ScheduleKind::kZBH1, 3, 1, 4};
    HeldMemory memory;
    std::FILE* out = std::tmpfile();
    REQUIRE(out != nullptr);
    JobMemory jm(shape, kMiB, &memory, true, out, nullptr);
    std::string error;
    int split = 0;
    for (const JobSpec& job : stage_jobs(shape, 2)) {
      split += job.is(PlanRole::kBackwardB) ? 1 : 0;
      REQUIRE(jm.before_job(job, &error));
      REQUIRE(jm.begin_job(job, &error));
      // backward_b keeps the micro-batch's activations; backward_w frees them.
      const size_t held = memory.activations_held();
      REQUIRE(jm.end_job(job, &error));
      if (job.is(PlanRole::kBackwardB)) CHECK(memory.activations_held() == held);
      if (job.is(PlanRole::kBackwardW)) CHECK(memory.activations_held() == held - 1);
      REQUIRE(jm.after_job(job, &error));
    }
    REQUIRE(split > 0);
    const std::string log = read_all(out);
    CHECK(log.find("backward_b") == std::string::npos);
    CHECK(log.find("backward_w") == std::string::npos);
    CHECK(memory.activations_held() == 0);
    std::fclose(out);
  }
}

TEST_CASE("VPP's lines carry the virtual micro-step, which Paddle's _get_virtual_pp_rank maps to their chunk") {
  const int p = 4, v = 2, m = 8;
  const PipelineShape shape{ScheduleKind::kVPP, p, v, m};
  for (int stage = 0; stage < p; ++stage) {
    HeldMemory memory;
    std::FILE* out = std::tmpfile();
    REQUIRE(out != nullptr);
    JobMemory jm(shape, 8 * kMiB, &memory, true, out, nullptr);
    std::string error;
    for (const JobSpec& job : stage_jobs(shape, stage)) {
      REQUIRE(jm.before_job(job, &error));
      REQUIRE(jm.begin_job(job, &error));
      REQUIRE(jm.end_job(job, &error));
      REQUIRE(jm.after_job(job, &error));
    }
    CHECK(jm.bytes_per_job() == 4 * kMiB);
    int checked = 0;
    for (const std::string& msg : messages_of(read_all(out))) {
      int chunk = -1, step = -1;
      char kind[16] = {};
      REQUIRE(std::sscanf(msg.c_str(), "%*[A-Za-z]_%15[a-z]_step_chunk_%d_step_%d", kind, &chunk, &step) == 3);
      INFO("stage " << stage << ": " << msg);
      CHECK(chunk == paddle_virtual_pp_rank(step, std::string(kind) == "forward", p, m, v));
      ++checked;
    }
    CHECK(checked == 2 * 2 * m * v);
    std::fclose(out);
  }
}
