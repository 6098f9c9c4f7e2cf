#include "output/text/stats_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "output/text/summary.h"
#include "util/text.h"

namespace ppt::stats_text {

namespace {

constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

std::string gib(int64_t bytes) { return fmt::format("{:.2f}", static_cast<double>(bytes) / kBytesPerGiB); }

// "0.01 GiB", what one step of the samples is.
std::string memory_resolution(int64_t bytes) {
  double g = std::round(static_cast<double>(bytes) / kBytesPerGiB * 1e4) / 1e4;
  return g > 0 ? fmt::format("{:g} GiB", g) : counted(static_cast<uint64_t>(std::max<int64_t>(bytes, 1)), "byte");
}

// "rank 3, step 1, after forward, micro-batch 3, chunk 1"
std::string peak_where(const StageMemory& m) {
  std::string where = fmt::format("rank {}", m.peak_rank);
  if (m.peak_step >= 0) where += fmt::format(", step {}", m.peak_step);
  return m.peak_at.empty() ? where : where + ", " + m.peak_at;
}

// What the device leaves a stage: "fits (3.21 GiB free)", "does not fit (1.20 GiB over)".
Cell fit_cell(const StageMemory& m, int64_t device) {
  const int64_t margin = device - m.peak_allocated_bytes;
  if (margin >= 0) return {fmt::format("fits ({} GiB free)", gib(margin)), Tone::kGood};
  return {fmt::format("does not fit ({} GiB over)", gib(-margin)), Tone::kBad};
}

// The summary's line: the highest peak and, with a device size, whether
// every stage fits.
std::string memory_summary(const MemoryStats& mem) {
  const StageMemory* top = &mem.stages.front();
  for (const StageMemory& m : mem.stages) top = m.peak_allocated_bytes > top->peak_allocated_bytes ? &m : top;
  std::string text = fmt::format("peak {} GiB allocated on stage {} ({})", gib(top->peak_allocated_bytes), top->stage,
                                 peak_where(*top));
  if (mem.device_memory_bytes <= 0) return text;
  std::vector<const StageMemory*> over;
  for (const StageMemory& m : mem.stages) {
    if (m.peak_allocated_bytes > mem.device_memory_bytes) over.push_back(&m);
  }
  text += fmt::format("; on a device of {} GiB: ", gib(mem.device_memory_bytes));
  if (over.empty()) {
    return text + fmt::format("every stage fits, the least headroom {} GiB (stage {})",
                              gib(mem.device_memory_bytes - top->peak_allocated_bytes), top->stage);
  }
  std::string stages, excess;
  for (const StageMemory* m : over) {
    stages += fmt::format("{}{}", stages.empty() ? "" : ", ", m->stage);
    excess += fmt::format("{}{}", excess.empty() ? "" : ", ", gib(m->peak_allocated_bytes - mem.device_memory_bytes));
  }
  return text + fmt::format("{} {} {} not fit ({} GiB over)", over.size() == 1 ? "stage" : "stages", stages,
                            over.size() == 1 ? "does" : "do", excess);
}

}  // namespace

void fill_memory(const Stats& st, std::vector<std::pair<std::string, std::string>>& summary, Table& table,
                 std::string& note) {
  const MemoryStats& mem = st.memory;
  if (!mem.present()) return;
  summary.emplace_back("memory", memory_summary(mem));
  bool chunks = std::any_of(mem.stages.begin(), mem.stages.end(),
                            [](const StageMemory& m) { return m.activation_bytes_per_chunk.size() > 1; });
  const bool device = mem.device_memory_bytes > 0;
  table.header = {"stage", "peak GiB", "in flight", "static GiB", "activation GiB"};
  if (chunks) table.header.push_back("per chunk GiB");
  table.header.push_back("reserved GiB");
  if (device) table.header.push_back(fmt::format("on {} GiB", gib(mem.device_memory_bytes)));
  table.header.push_back("where");
  table.left = 0;
  table.left_tail = device ? 2 : 1;
  for (const StageMemory& m : mem.stages) {
    std::vector<Cell> row = {{std::to_string(m.stage)},
                             {gib(m.peak_allocated_bytes)},
                             {std::to_string(m.peak_in_flight)},
                             {gib(m.static_bytes)},
                             {gib(m.activation_bytes_per_micro_batch)}};
    if (chunks) {
      std::string per;
      for (int64_t a : m.activation_bytes_per_chunk) per += (per.empty() ? "" : " + ") + gib(a);
      row.push_back({per});
    }
    row.push_back({gib(m.peak_reserved_bytes)});
    if (device) row.push_back(fit_cell(m, mem.device_memory_bytes));
    row.push_back({peak_where(m)});
    table.add(std::move(row));
  }
  note = fmt::format(
      "to {}, from the [Pipeline details] lines; in flight: micro-batch chunks forwarded and not yet backwarded at the "
      "peak; static: before the step's first forward; activation: what one micro-batch holds",
      memory_resolution(mem.resolution_bytes));
}

}  // namespace ppt::stats_text
