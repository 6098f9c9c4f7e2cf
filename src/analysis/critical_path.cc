#include "analysis/critical_path.h"

#include <algorithm>
#include <unordered_map>

namespace ppt {
namespace {

struct Ref {
  uint32_t rank_pos = 0;  // in StepJobs::ranks
  uint32_t pos = 0;       // in that rank's jobs
};

// One step's jobs, addressed by Ref.
class StepView {
 public:
  StepView(const Timeline& tl, const StepJobs& step) : tl_(tl), step_(step) {
    for (uint32_t rp = 0; rp < step.ranks.size(); ++rp) {
      total_ += step.ranks[rp].jobs.size();
      rank_pos_of_track_.emplace(step.ranks[rp].track, rp);
    }
  }
  size_t total() const { return total_; }
  const StepJobs::Rank& rank(Ref r) const { return step_.ranks[r.rank_pos]; }
  const Job& job_of(Ref r) const {
    const StepJobs::Rank& rk = step_.ranks[r.rank_pos];
    return tl_.tracks[rk.track].jobs[rk.jobs[r.pos]];
  }
  // Where a producer sits in this step, or nothing (another step or run).
  bool locate(JobRef j, Ref* out) const {
    auto it = rank_pos_of_track_.find(j.track);
    if (it == rank_pos_of_track_.end()) return false;
    const auto& jobs = step_.ranks[it->second].jobs;
    auto at = std::lower_bound(jobs.begin(), jobs.end(), j.job);
    if (at == jobs.end() || *at != j.job) return false;
    *out = {it->second, static_cast<uint32_t>(at - jobs.begin())};
    return true;
  }
  // The job that ends the step (lowest rank on a tie).
  Ref last_job() const {
    Ref cur{0, 0};
    bool found = false;
    for (uint32_t rp = 0; rp < step_.ranks.size(); ++rp) {
      for (uint32_t i = 0; i < step_.ranks[rp].jobs.size(); ++i) {
        if (!found || job_of({rp, i}).end_ns > job_of(cur).end_ns) cur = {rp, i};
        found = true;
      }
    }
    return cur;
  }

 private:
  const Timeline& tl_;
  const StepJobs& step_;
  size_t total_ = 0;
  std::unordered_map<uint32_t, uint32_t> rank_pos_of_track_;
};

// The job `cur` waited for: the latest-ending of its rank's previous jobs and
// the jobs it needs data from, among those that ended by its start; false
// when none did.
bool predecessor(const StepView& view, Ref cur, const Dependencies& deps, const DependencyIndex& index, Ref* out) {
  const Job& j = view.job_of(cur);
  bool have = false;
  Ref best{};
  auto offer = [&](Ref cand) {
    const Job& c = view.job_of(cand);
    if (c.end_ns > j.start_ns || (cand.rank_pos == cur.rank_pos && cand.pos == cur.pos)) return;
    if (!have || c.end_ns > view.job_of(best).end_ns) {
      best = cand;
      have = true;
    }
  };
  // The rank's previous job: the latest end among earlier starts, looking a
  // little past the first fit for jobs that overlapped on other lanes.
  int extra = -1;
  for (uint32_t k = cur.pos; k-- > 0 && extra != 0;) {
    offer({cur.rank_pos, k});
    if (have && extra < 0) extra = 16;
    if (extra > 0) --extra;
  }
  // The jobs it needs data from.
  const StepJobs::Rank& rk = view.rank(cur);
  for (uint32_t e : index.incoming(JobRef{rk.track, rk.jobs[cur.pos]})) {
    Ref producer;
    if (view.locate(deps.edges[e].producer, &producer)) offer(producer);
  }
  *out = best;
  return have;
}

// The path's hops, first to last, with their waits, and the share of the
// step it covers.
void add_hops(const StepView& view, const Timeline& tl, const std::vector<Ref>& chain, const StepSpan& span,
              CriticalPath& path) {
  int64_t prev_end = 0;
  for (size_t i = 0; i < chain.size(); ++i) {
    const Job& j = view.job_of(chain[i]);
    CriticalHop hop;
    hop.rank = view.rank(chain[i]).rank;
    hop.type = j.type < tl.types.size() ? tl.types[j.type] : std::string("?");
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
}

}  // namespace

CriticalPath critical_path(const Timeline& tl, const StepJobs& step, const StepSpan& span, const Dependencies& deps,
                           const DependencyIndex& index) {
  CriticalPath path;
  const StepView view(tl, step);
  if (view.total() == 0) return path;
  // From the job that ends the step back along what each job waited for.
  Ref cur = view.last_job();
  std::vector<Ref> chain{cur};
  while (chain.size() <= view.total()) {
    Ref best;
    if (!predecessor(view, cur, deps, index, &best)) break;
    chain.push_back(best);
    cur = best;
  }
  std::reverse(chain.begin(), chain.end());
  add_hops(view, tl, chain, span, path);
  return path;
}

}  // namespace ppt
