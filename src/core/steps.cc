#include "pp_timeline/steps.h"

#include <algorithm>
#include <limits>

namespace ppt {

StepSplitter::StepSplitter(const std::vector<std::string>& types) {
  is_optimizer_.reserve(types.size());
  for (const std::string& t : types) {
    is_optimizer_.push_back(split_type(t).base == "optimizer" ? 1 : 0);
  }
}

void StepSplitter::reset() {
  clear_seen();
  first_ = true;
  after_optimizer_ = false;
}

bool StepSplitter::seen(uint32_t type, int64_t micro_batch, uint64_t key) const {
  if (micro_batch >= 0 && micro_batch < kDirectIds) {
    return type < stamps_.size() && static_cast<size_t>(micro_batch) < stamps_[type].size() &&
           stamps_[type][micro_batch] == generation_;
  }
  return seen_.count(key) > 0;
}

void StepSplitter::mark(uint32_t type, int64_t micro_batch, uint64_t key) {
  if (micro_batch >= 0 && micro_batch < kDirectIds) {
    if (type >= stamps_.size()) stamps_.resize(type + 1);
    std::vector<uint32_t>& v = stamps_[type];
    if (static_cast<size_t>(micro_batch) >= v.size()) v.resize(micro_batch + 1, 0);
    v[micro_batch] = generation_;
  } else {
    seen_.insert(key);
  }
}

void StepSplitter::clear_seen() {
  if (++generation_ == 0) {  // wrapped: old stamps could match again
    for (auto& v : stamps_) std::fill(v.begin(), v.end(), 0);
    generation_ = 1;
  }
  if (!seen_.empty()) seen_.clear();
}

bool StepSplitter::starts_new_step(const Job& job) {
  bool optimizer = job.type < is_optimizer_.size() && is_optimizer_[job.type];
  int64_t mb = job.micro_batch;
  int64_t id = mb >= 0 ? mb : (int64_t{1} << 33) + job.job_id;
  uint64_t key = (static_cast<uint64_t>(job.type) << 40) ^ static_cast<uint64_t>(id);
  bool fresh = first_ || (after_optimizer_ && !optimizer) || seen(job.type, mb, key);
  if (fresh) clear_seen();
  first_ = false;
  mark(job.type, mb, key);
  after_optimizer_ = optimizer;
  return fresh;
}

void assign_local_steps(std::vector<Job>& jobs, const std::vector<std::string>& types) {
  StepSplitter splitter(types);
  int32_t step = -1;
  for (Job& j : jobs) {
    if (splitter.starts_new_step(j)) ++step;
    j.step = step;
  }
}

namespace {

struct LocalStep {
  int64_t start = std::numeric_limits<int64_t>::max();
  int64_t end = std::numeric_limits<int64_t>::min();
};

}  // namespace

void number_steps(Timeline& timeline, Run& run) {
  // Each track's local steps, with their spans.
  struct Entry {
    int64_t start, end;
    uint32_t track_pos;  // position in run.tracks
    int32_t local;
  };
  std::vector<std::vector<LocalStep>> locals(run.tracks.size());
  std::vector<Entry> entries;
  for (uint32_t p = 0; p < run.tracks.size(); ++p) {
    Track& t = timeline.tracks[run.tracks[p]];
    for (const Job& j : t.jobs) {
      if (j.step < 0) continue;
      if (static_cast<size_t>(j.step) >= locals[p].size()) locals[p].resize(j.step + 1);
      LocalStep& s = locals[p][j.step];
      s.start = std::min(s.start, j.start_ns);
      s.end = std::max(s.end, j.end_ns);
    }
    for (int32_t k = 0; k < static_cast<int32_t>(locals[p].size()); ++k) {
      const LocalStep& s = locals[p][k];
      if (s.end < s.start) continue;  // no job had this index (cannot happen)
      entries.push_back({s.start, s.end, p, k});
    }
  }
  run.steps.clear();
  if (entries.empty()) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.start != b.start ? a.start < b.start : a.track_pos != b.track_pos ? a.track_pos < b.track_pos : a.local < b.local;
  });

  // Greedy clustering in start order: ranks work on one step at a time and
  // every rank's step overlaps the others' (stage 0 feeds them and finishes
  // last), so a step that begins after everything in the current cluster
  // ended, or on a rank already in the cluster, begins the next step.
  std::vector<std::vector<int32_t>> cluster_of(run.tracks.size());
  for (uint32_t p = 0; p < run.tracks.size(); ++p) cluster_of[p].assign(locals[p].size(), -1);
  int32_t cluster = -1;
  int64_t cluster_end = 0;
  std::vector<int32_t> last_cluster_of_track(run.tracks.size(), -1);
  for (const Entry& e : entries) {
    bool fresh = cluster < 0 || e.start >= cluster_end || last_cluster_of_track[e.track_pos] == cluster;
    if (fresh) {
      ++cluster;
      cluster_end = e.end;
    }
    cluster_end = std::max(cluster_end, e.end);
    cluster_of[e.track_pos][e.local] = cluster;
    last_cluster_of_track[e.track_pos] = cluster;
  }
  int32_t clusters = cluster + 1;
  // A rank's steps must keep their order; if clock noise broke that, fall back
  // to the rank's own order from its first cluster.
  for (uint32_t p = 0; p < run.tracks.size(); ++p) {
    std::vector<int32_t>& c = cluster_of[p];
    for (size_t k = 1; k < c.size(); ++k) {
      if (c[k] >= 0 && c[k - 1] >= 0 && c[k] <= c[k - 1]) c[k] = c[k - 1] + 1;
    }
    for (int32_t v : c) clusters = std::max(clusters, v + 1);
  }

  int32_t base = run.has_marker ? run.marker_start_step : 0;
  run.steps.assign(clusters, StepSpan{});
  for (int32_t i = 0; i < clusters; ++i) {
    run.steps[i].number = base + i;
    run.steps[i].start_ns = std::numeric_limits<int64_t>::max();
    run.steps[i].end_ns = std::numeric_limits<int64_t>::min();
  }
  for (uint32_t p = 0; p < run.tracks.size(); ++p) {
    Track& t = timeline.tracks[run.tracks[p]];
    std::vector<uint8_t> present(clusters, 0);
    for (Job& j : t.jobs) {
      if (j.step < 0) continue;
      int32_t c = cluster_of[p][j.step];
      j.step = base + c;
      StepSpan& s = run.steps[c];
      s.start_ns = std::min(s.start_ns, j.start_ns);
      s.end_ns = std::max(s.end_ns, j.end_ns);
      present[c] = 1;
    }
    for (int32_t c = 0; c < clusters; ++c) {
      run.steps[c].ranks += present[c];
      if (!present[c] && !t.jobs.empty()) {
        timeline.diagnostics.add(IssueKind::kMissingStep, t.file, 0,
                                 "rank " + std::to_string(t.rank) + " has no job in step " +
                                     std::to_string(base + c));
      }
    }
  }
  // Drop clusters that ended up empty (only possible after the order fix-up)
  // and never let a step start before the previous one ended.
  std::vector<StepSpan> kept;
  kept.reserve(run.steps.size());
  for (const StepSpan& s : run.steps) {
    if (s.ranks == 0) continue;
    StepSpan span = s;
    if (!kept.empty()) span.start_ns = std::max(span.start_ns, kept.back().end_ns);
    // A step whose jobs all ended before the previous step's did (clocks that
    // disagree) becomes an instant where the previous one ends: moving its
    // start back would overlap the steps on their track.
    span.end_ns = std::max(span.end_ns, span.start_ns);
    kept.push_back(span);
  }
  run.steps = std::move(kept);
}

}  // namespace ppt
