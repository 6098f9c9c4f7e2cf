#include "output/trace/trace_naming.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace ppt {

TraceNaming::TraceNaming(const Timeline& tl) : tl_(tl) {
  machines_ = static_cast<uint32_t>(std::max<size_t>(1, tl.machines.size()));
  // The run's ranks, not the loaded ones: a subset keeps its rank numbers.
  ranks_ = static_cast<uint32_t>(std::max<int32_t>(1, tl.rank_count()));
  runs_ = static_cast<uint32_t>(std::max<size_t>(1, tl.runs.size()));
  for (const Track& t : tl.tracks) lane_stride_ = std::max(lane_stride_, t.lanes);
  multi_machine_ = tl.machines.size() > 1 || (!tl.machines.empty() && !tl.machines[0].empty());
}

std::string TraceNaming::process_name(uint32_t run, int32_t machine) const {
  std::string name;
  if (multi_machine_ && machine >= 0 && static_cast<size_t>(machine) < tl_.machines.size()) {
    name = tl_.machines[machine].empty() ? fmt::format("machine{}", machine) : tl_.machines[machine];
  } else {
    name = pipeline_name();
  }
  if (multi_machine_ && !tl_.prediction.empty()) name = fmt::format("{}: {}", tl_.prediction, name);
  if (runs_ > 1) name = fmt::format("run {}/{}: {}", run + 1, runs_, name);
  return name;
}

std::string TraceNaming::steps_process_name(uint32_t run) const {
  std::string name = tl_.prediction.empty() ? std::string("steps") : fmt::format("{}: steps", tl_.prediction);
  return runs_ > 1 ? fmt::format("run {}/{}: {}", run + 1, runs_, name) : name;
}

std::string TraceNaming::thread_name(const Track& t, uint32_t lane) const {
  std::string name = fmt::format("GPU:{}", t.rank);
  if (multi_machine_) {
    const std::string& m = tl_.machines[t.machine];
    name += fmt::format("(machine:{} local:{})", m.empty() ? std::to_string(t.machine) : m, t.local_index);
  }
  if (lane > 0) name += fmt::format(" overlap {}", lane);
  return name;
}

void append_job_name(std::string& out, std::string_view type, int32_t micro_batch, int32_t job_id) {
  out += type;
  char buf[16];
  if (micro_batch >= 0) {
    out += " mb";
    auto r = std::to_chars(buf, buf + sizeof buf, micro_batch);
    out.append(buf, r.ptr);
  } else {
    out += " (Job ";
    auto r = std::to_chars(buf, buf + sizeof buf, job_id);
    out.append(buf, r.ptr);
    out += ')';
  }
}

void append_step_name(std::string& out, int32_t number) {
  out += "step";
  char buf[16];
  auto r = std::to_chars(buf, buf + sizeof buf, number);
  out.append(buf, r.ptr);
}

std::string step_name(int32_t number) {
  std::string out;
  append_step_name(out, number);
  return out;
}

std::string job_name(std::string_view type, const Job& job) {
  std::string out;
  append_job_name(out, type, job.micro_batch, job.job_id);
  return out;
}

}  // namespace ppt
