#include "pp_timeline/critical_path.h"

#include <algorithm>

#include "pp_timeline/pipeline_stage.h"

namespace ppt {
namespace {

// (replica, virtual stage, forward or backward, micro-batch) packed into one key.
uint64_t dep_key(int32_t replica, int32_t vstage, bool backward, int32_t micro_batch) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(replica)) << 44) ^
         (static_cast<uint64_t>(static_cast<uint32_t>(vstage) & 0xfffff) << 24) ^
         (static_cast<uint64_t>(backward) << 23) ^ (static_cast<uint64_t>(micro_batch) & 0x7fffff);
}

struct Ref {
  uint32_t rank_pos = 0;
  uint32_t index = 0;  // in StepJobs::Rank::jobs
};

}  // namespace

CriticalPath critical_path(const StepJobs& step, const StepSpan& span, const std::vector<std::string>& types,
                           const std::vector<JobClass>& classes, const PipelineMap& map) {
  CriticalPath path;
  const int32_t p = std::max(1, map.pp_degree);
  auto job_of = [&](Ref r) -> const Job& { return *step.ranks[r.rank_pos].jobs[r.index]; };
  auto cls = [&](const Job& j) -> JobClass { return j.type < classes.size() ? classes[j.type] : JobClass{}; };

  // Where each forward and backward of the step is, by what depends on it:
  // (key, job) sorted by key. A sorted vector, not a hash map of vectors: one
  // allocation per step instead of one per job (this runs for every step).
  std::vector<std::pair<uint64_t, Ref>> producers;
  size_t total = 0;
  int32_t last_vstage = 0;
  for (uint32_t rp = 0; rp < step.ranks.size(); ++rp) {
    const StepJobs::Rank& r = step.ranks[rp];
    total += r.jobs.size();
    int32_t stage = pipeline_stage(r.rank, p);
    int32_t replica = pipeline_replica(r.rank, p);
    for (uint32_t i = 0; i < r.jobs.size(); ++i) {
      const Job& j = *r.jobs[i];
      JobClass c = cls(j);
      if (c.role != JobRole::kForward && c.role != JobRole::kBackward) continue;
      int32_t v = virtual_stage(map.kind, p, stage, c.chunk);
      last_vstage = std::max(last_vstage, v);
      producers.emplace_back(dep_key(replica, v, c.role == JobRole::kBackward, j.micro_batch), Ref{rp, i});
    }
  }
  if (total == 0) return path;
  std::sort(producers.begin(), producers.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first
                              : a.second.rank_pos != b.second.rank_pos ? a.second.rank_pos < b.second.rank_pos
                                                                       : a.second.index < b.second.index;
  });

  // The job that ends the step (lowest rank on a tie).
  Ref cur{0, 0};
  bool found = false;
  for (uint32_t rp = 0; rp < step.ranks.size(); ++rp) {
    for (uint32_t i = 0; i < step.ranks[rp].jobs.size(); ++i) {
      if (!found || step.ranks[rp].jobs[i]->end_ns > job_of(cur).end_ns) cur = {rp, i};
      found = true;
    }
  }

  std::vector<Ref> chain{cur};
  while (chain.size() <= total) {
    const Job& j = job_of(cur);
    const StepJobs::Rank& r = step.ranks[cur.rank_pos];
    bool have = false;
    Ref best{};
    auto offer = [&](Ref cand) {
      const Job& c = job_of(cand);
      if (c.end_ns > j.start_ns || (cand.rank_pos == cur.rank_pos && cand.index == cur.index)) return;
      if (!have || c.end_ns > job_of(best).end_ns) {
        best = cand;
        have = true;
      }
    };
    // The rank's previous job: the latest end among earlier starts, looking a
    // little past the first fit for jobs that overlapped on other lanes.
    int extra = -1;
    for (uint32_t k = cur.index; k-- > 0 && extra != 0;) {
      offer({cur.rank_pos, k});
      if (have && extra < 0) extra = 16;
      if (extra > 0) --extra;
    }
    // The job it needs data from.
    JobClass c = cls(j);
    int32_t stage = pipeline_stage(r.rank, p);
    int32_t replica = pipeline_replica(r.rank, p);
    int32_t v = virtual_stage(map.kind, p, stage, c.chunk);
    auto offer_all = [&](uint64_t key) {
      auto it = std::lower_bound(producers.begin(), producers.end(), key,
                                 [](const auto& e, uint64_t k) { return e.first < k; });
      for (; it != producers.end() && it->first == key; ++it) offer(it->second);
    };
    if (j.micro_batch >= 0) {
      if (c.role == JobRole::kForward && v > 0) offer_all(dep_key(replica, v - 1, false, j.micro_batch));
      if (c.role == JobRole::kBackward) {
        if (v < last_vstage) offer_all(dep_key(replica, v + 1, true, j.micro_batch));
        else offer_all(dep_key(replica, v, false, j.micro_batch));
      }
      if (c.role == JobRole::kBackwardWeight) offer_all(dep_key(replica, v, true, j.micro_batch));
    }
    if (!have) break;
    chain.push_back(best);
    cur = best;
  }

  std::reverse(chain.begin(), chain.end());
  int64_t prev_end = 0;
  for (size_t i = 0; i < chain.size(); ++i) {
    const Job& j = job_of(chain[i]);
    CriticalHop hop;
    hop.rank = step.ranks[chain[i].rank_pos].rank;
    hop.type = j.type < types.size() ? types[j.type] : std::string("?");
    hop.micro_batch = j.micro_batch;
    hop.start_ns = j.start_ns;
    hop.end_ns = j.end_ns;
    hop.wait_ns = i == 0 ? 0 : std::max<int64_t>(0, j.start_ns - prev_end);
    hop.from_other_rank = i > 0 && chain[i].rank_pos != chain[i - 1].rank_pos;
    path.job_ns += j.end_ns - j.start_ns;
    path.wait_ns += hop.wait_ns;
    prev_end = j.end_ns;
    path.hops.push_back(std::move(hop));
  }
  int64_t step_ns = span.end_ns - span.start_ns;
  if (step_ns > 0 && !path.hops.empty()) {
    int64_t covered = path.hops.back().end_ns - std::max(path.hops.front().start_ns, span.start_ns);
    path.share = std::clamp(static_cast<double>(covered) / static_cast<double>(step_ns), 0.0, 1.0);
  }
  return path;
}

}  // namespace ppt
