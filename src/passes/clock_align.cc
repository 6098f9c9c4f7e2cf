#include "passes/clock_align.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "passes/steps.h"

namespace ppt {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The dependencies between two machines of a run, as bounds on the
// difference of their offsets: o[a] - o[b] (a < b, local slots).
struct Pair {
  int a = 0;
  int b = 0;
  std::vector<int64_t> uppers;  // a produces, b consumes: o[a] - o[b] <= consumer.start - producer.end
  std::vector<int64_t> lowers;  // b produces, a consumes: o[a] - o[b] >= producer.end - consumer.start
  double lo = -kInf;
  double hi = kInf;
  double aim = 0;
  bool empty = false;  // no difference satisfies every dependency of the pair
  size_t count() const { return uppers.size() + lowers.size(); }
};

// The difference that breaks the fewest of the pair's bounds, by the least
// total amount (ties: the smallest difference). Only breakpoints can be
// optimal, so those are the candidates.
int64_t least_broken(std::vector<int64_t> lowers, std::vector<int64_t> uppers) {
  std::sort(lowers.begin(), lowers.end());
  std::sort(uppers.begin(), uppers.end());
  std::vector<long double> lsum(lowers.size() + 1, 0), usum(uppers.size() + 1, 0);
  for (size_t i = 0; i < lowers.size(); ++i) lsum[i + 1] = lsum[i] + lowers[i];
  for (size_t i = 0; i < uppers.size(); ++i) usum[i + 1] = usum[i] + uppers[i];
  std::vector<int64_t> candidates = lowers;
  candidates.insert(candidates.end(), uppers.begin(), uppers.end());
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  size_t best_count = std::numeric_limits<size_t>::max();
  long double best_amount = 0;
  int64_t best = 0;
  for (int64_t x : candidates) {
    // lowers above x are broken by (l - x); uppers below x by (x - u).
    size_t li = std::upper_bound(lowers.begin(), lowers.end(), x) - lowers.begin();
    size_t ui = std::lower_bound(uppers.begin(), uppers.end(), x) - uppers.begin();
    size_t lc = lowers.size() - li;
    size_t count = lc + ui;
    long double amount =
        (lsum.back() - lsum[li]) - static_cast<long double>(x) * lc + static_cast<long double>(x) * ui - usum[ui];
    if (count < best_count || (count == best_count && amount < best_amount)) {
      best_count = count;
      best_amount = amount;
      best = x;
    }
  }
  return best;
}

struct Graph {
  int n = 0;
  std::vector<Pair> pairs;
  std::vector<std::vector<int>> incident;  // pair indices per node
};

// A point satisfying every pair's interval, or false (a cycle of machines
// whose intervals contradict each other).
bool feasible_point(const Graph& g, std::vector<double>& o) {
  o.assign(g.n, 0.0);
  for (int round = 0; round <= g.n; ++round) {
    bool changed = false;
    for (const Pair& p : g.pairs) {
      // o[a] <= o[b] + hi ; o[b] <= o[a] - lo
      if (p.hi < kInf && o[p.a] > o[p.b] + p.hi) {
        o[p.a] = o[p.b] + p.hi;
        changed = true;
      }
      if (p.lo > -kInf && o[p.b] > o[p.a] - p.lo) {
        o[p.b] = o[p.a] - p.lo;
        changed = true;
      }
    }
    if (!changed) return true;
  }
  return false;
}

bool satisfies(const Graph& g, const std::vector<double>& o) {
  for (const Pair& p : g.pairs) {
    double d = o[p.a] - o[p.b];
    if (d < p.lo - 0.5 || d > p.hi + 0.5) return false;
  }
  return true;
}

// Offsets along a spanning tree of the pairs with the most dependencies, each
// tree pair exactly at its aim.
std::vector<double> tree_point(const Graph& g) {
  std::vector<int> order(g.pairs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return g.pairs[x].count() > g.pairs[y].count(); });
  std::vector<int> parent(g.n);
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<std::vector<int>> tree(g.n);
  for (int pi : order) {
    const Pair& p = g.pairs[pi];
    int ra = root(p.a), rb = root(p.b);
    if (ra == rb) continue;
    parent[ra] = rb;
    tree[p.a].push_back(pi);
    tree[p.b].push_back(pi);
  }
  std::vector<double> o(g.n, 0.0);
  std::vector<bool> seen(g.n, false);
  for (int start = 0; start < g.n; ++start) {
    if (seen[start]) continue;
    std::vector<int> stack{start};
    seen[start] = true;
    while (!stack.empty()) {
      int m = stack.back();
      stack.pop_back();
      for (int pi : tree[m]) {
        const Pair& p = g.pairs[pi];
        int other = p.a == m ? p.b : p.a;
        if (seen[other]) continue;
        seen[other] = true;
        o[other] = p.a == m ? o[m] - p.aim : o[m] + p.aim;  // o[a] - o[b] = aim
        stack.push_back(other);
      }
    }
  }
  return o;
}

// The range of offsets of node m consistent with its pairs, the others fixed.
void node_range(const Graph& g, const std::vector<double>& o, int m, double* lo, double* hi) {
  *lo = -kInf;
  *hi = kInf;
  for (int pi : g.incident[m]) {
    const Pair& p = g.pairs[pi];
    if (p.a == m) {  // o[m] - o[b] in [lo, hi]
      *lo = std::max(*lo, o[p.b] + p.lo);
      *hi = std::min(*hi, o[p.b] + p.hi);
    } else {  // o[a] - o[m] in [lo, hi]
      *lo = std::max(*lo, o[p.a] - p.hi);
      *hi = std::min(*hi, o[p.a] - p.lo);
    }
  }
}

// Least squares of (o[a] - o[b] - aim) subject to every interval, from a
// feasible start: projected Gauss-Seidel, one machine at a time.
void refine(const Graph& g, std::vector<double>& o) {
  const int kMaxSweeps = 200000 / std::max(1, static_cast<int>(g.pairs.size())) + 100;
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    double moved = 0;
    for (int m = 0; m < g.n; ++m) {
      if (g.incident[m].empty()) continue;
      double sum = 0;
      for (int pi : g.incident[m]) {
        const Pair& p = g.pairs[pi];
        sum += p.a == m ? o[p.b] + p.aim : o[p.a] - p.aim;
      }
      double lo, hi;
      node_range(g, o, m, &lo, &hi);
      if (lo > hi) continue;  // rounding at a tight spot: stay where it is
      double want = std::clamp(sum / static_cast<double>(g.incident[m].size()), lo, hi);
      moved = std::max(moved, std::abs(want - o[m]));
      o[m] = want;
    }
    if (moved < 0.25) break;
  }
}

std::string machine_name(const Timeline& tl, int32_t m) {
  if (m >= 0 && static_cast<size_t>(m) < tl.machines.size() && !tl.machines[m].empty()) return tl.machines[m];
  return fmt::format("machine{}", m);
}

std::string signed_ms(int64_t ns) { return fmt::format("{:+.3f} ms", static_cast<double>(ns) / 1e6); }

int64_t to_ns(double v) {
  if (v == kInf) return std::numeric_limits<int64_t>::max();
  if (v == -kInf) return std::numeric_limits<int64_t>::min();
  return std::llround(v);
}

void recompute_bounds(Timeline& tl, Run& run) {
  run.first_ns = std::numeric_limits<int64_t>::max();
  run.last_ns = std::numeric_limits<int64_t>::min();
  for (uint32_t ti : run.tracks) {
    for (const Job& j : tl.tracks[ti].jobs) {
      run.first_ns = std::min(run.first_ns, j.start_ns);
      run.last_ns = std::max(run.last_ns, j.end_ns);
    }
  }
  finalize_step_spans(tl, run);  // as number_steps() ends: disjoint, in order
}

// The dependencies between two machines of one run, by run.
std::vector<std::vector<const Dependency*>> crossing_by_run(const Timeline& tl, const Dependencies& deps) {
  std::vector<std::vector<const Dependency*>> by_run(tl.runs.size());
  // Each track's (run, machine) as one key, in an array small enough to
  // stay in cache: every edge of the run is looked at, and two Track reads
  // an edge were most of this pass.
  std::vector<uint64_t> where(tl.tracks.size());
  for (size_t i = 0; i < tl.tracks.size(); ++i) {
    where[i] = uint64_t{tl.tracks[i].run} << 32 | static_cast<uint32_t>(tl.tracks[i].machine);
  }
  // Counted first, each run's list then made at its size: grown by doubling,
  // a 128-machine run's 1.3 million pointers were copied and faulted in
  // about twice over.
  auto crossing = [&](const Dependency& e) {
    const uint64_t p = where[e.producer.track], c = where[e.consumer.track];
    return p != c && p >> 32 == c >> 32;  // not the same machine, and the same run
  };
  std::vector<size_t> counts(tl.runs.size(), 0);
  for (const Dependency& e : deps.edges) {
    if (crossing(e)) ++counts[where[e.producer.track] >> 32];
  }
  for (size_t r = 0; r < by_run.size(); ++r) by_run[r].reserve(counts[r]);
  for (const Dependency& e : deps.edges) {
    if (crossing(e)) by_run[where[e.producer.track] >> 32].push_back(&e);
  }
  return by_run;
}

// The machines of a run's crossing dependencies, in machine order: their
// local slots (the reference, the machine of the lowest rank, is the lowest
// machine).
std::vector<int32_t> machines_of(const Timeline& tl, const std::vector<const Dependency*>& edges) {
  std::vector<int32_t> machines;
  for (const Dependency* e : edges) {
    machines.push_back(tl.tracks[e->producer.track].machine);
    machines.push_back(tl.tracks[e->consumer.track].machine);
  }
  std::sort(machines.begin(), machines.end());
  machines.erase(std::unique(machines.begin(), machines.end()), machines.end());
  return machines;
}

// The pairs of machines the edges join, with each edge's bound.
Graph pair_bounds(const Timeline& tl, const std::vector<const Dependency*>& edges,
                  const std::vector<int32_t>& machines) {
  auto slot = [&](int32_t m) {
    return static_cast<int>(std::lower_bound(machines.begin(), machines.end(), m) - machines.begin());
  };
  Graph g;
  g.n = static_cast<int>(machines.size());
  std::map<std::pair<int, int>, int> pair_of;
  for (const Dependency* e : edges) {
    int pa = slot(tl.tracks[e->producer.track].machine);
    int cb = slot(tl.tracks[e->consumer.track].machine);
    int a = std::min(pa, cb), b = std::max(pa, cb);
    auto [it, inserted] = pair_of.emplace(std::make_pair(a, b), static_cast<int>(g.pairs.size()));
    if (inserted) {
      g.pairs.emplace_back();
      g.pairs.back().a = a;
      g.pairs.back().b = b;
    }
    Pair& p = g.pairs[it->second];
    int64_t slack = dependency_slack_ns(tl, *e);
    if (pa == a) {
      p.uppers.push_back(slack);
    } else {
      p.lowers.push_back(-slack);
    }
  }
  return g;
}

// Each pair's interval and aim, and the pairs incident to each machine;
// clears `consistent` when a pair's bounds contradict each other.
void set_intervals(Graph& g, bool& consistent) {
  g.incident.assign(g.n, {});
  for (int pi = 0; pi < static_cast<int>(g.pairs.size()); ++pi) {
    Pair& p = g.pairs[pi];
    if (!p.uppers.empty()) p.hi = static_cast<double>(*std::min_element(p.uppers.begin(), p.uppers.end()));
    if (!p.lowers.empty()) p.lo = static_cast<double>(*std::max_element(p.lowers.begin(), p.lowers.end()));
    if (p.lo > p.hi) {
      p.empty = true;
      consistent = false;
      double x = static_cast<double>(least_broken(p.lowers, p.uppers));
      p.lo = p.hi = p.aim = x;
    } else if (p.lo > -kInf && p.hi < kInf) {
      p.aim = p.lo + (p.hi - p.lo) / 2;
    } else {
      p.aim = std::clamp(0.0, p.lo, p.hi);  // one side only: the smallest change
    }
    g.incident[p.a].push_back(pi);
    g.incident[p.b].push_back(pi);
  }
}

// The offsets: the tree point, else a feasible point, refined when every
// pair's interval holds.
std::vector<double> solve_offsets(const Graph& g, bool& consistent) {
  std::vector<double> o = tree_point(g);
  if (!satisfies(g, o)) {
    std::vector<double> start;
    if (feasible_point(g, start)) {
      o = start;
    } else {
      consistent = false;  // keep the tree point: its pairs are at their aims
    }
  }
  if (satisfies(g, o)) refine(g, o);
  return o;
}

// Each group of connected machines keeps its lowest machine's clock.
void zero_groups(const Graph& g, std::vector<double>& o) {
  std::vector<int> group(g.n, -1);
  for (int start = 0; start < g.n; ++start) {
    if (group[start] >= 0) continue;
    std::vector<int> stack{start}, members;
    group[start] = start;
    while (!stack.empty()) {
      int m = stack.back();
      stack.pop_back();
      members.push_back(m);
      for (int pi : g.incident[m]) {
        int other = g.pairs[pi].a == m ? g.pairs[pi].b : g.pairs[pi].a;
        if (group[other] < 0) {
          group[other] = start;
          stack.push_back(other);
        }
      }
    }
    double base = o[start];
    for (int m : members) o[m] -= base;
  }
}

// The range machine m's offset could take: from the pairs' own bounds (not
// the chosen point of an empty pair), the other machines at their final
// offsets; and the dependencies it has with them.
void offset_range(const Graph& g, const std::vector<double>& final_o, int m, MachineOffset& mo) {
  double lo = -kInf, hi = kInf;
  for (int pi : g.incident[m]) {
    const Pair& p = g.pairs[pi];
    double plo = p.lowers.empty() ? -kInf : static_cast<double>(*std::max_element(p.lowers.begin(), p.lowers.end()));
    double phi = p.uppers.empty() ? kInf : static_cast<double>(*std::min_element(p.uppers.begin(), p.uppers.end()));
    if (p.a == m) {
      lo = std::max(lo, final_o[p.b] + plo);
      hi = std::min(hi, final_o[p.b] + phi);
    } else {
      lo = std::max(lo, final_o[p.a] - phi);
      hi = std::min(hi, final_o[p.a] - plo);
    }
    mo.dependencies += static_cast<uint32_t>(p.count());
  }
  mo.lo_ns = to_ns(lo);
  mo.hi_ns = to_ns(hi);
}

// The offsets of one run whose logged times break some dependency.
void align_run(const Timeline& tl, uint32_t r, const std::vector<const Dependency*>& edges, ClockAlignment& out) {
  const std::vector<int32_t> machines = machines_of(tl, edges);
  Graph g = pair_bounds(tl, edges, machines);
  set_intervals(g, out.consistent);
  std::vector<double> o = solve_offsets(g, out.consistent);
  zero_groups(g, o);
  std::vector<int64_t> rounded(g.n);
  for (int m = 0; m < g.n; ++m) rounded[m] = std::llround(o[m]);
  std::vector<double> final_o(rounded.begin(), rounded.end());
  for (int m = 0; m < g.n; ++m) {
    MachineOffset mo;
    mo.run = r;
    mo.machine = machines[m];
    mo.offset_ns = rounded[m];
    offset_range(g, final_o, m, mo);
    out.machines.push_back(mo);
  }
}

// What stays broken with the offsets.
uint64_t count_broken_after(const Timeline& tl, const std::vector<std::vector<const Dependency*>>& by_run,
                            const std::vector<MachineOffset>& machines) {
  std::map<std::pair<uint32_t, int32_t>, int64_t> offset_of;
  for (const MachineOffset& m : machines) offset_of[{m.run, m.machine}] = m.offset_ns;
  auto offset = [&](const Track& t) {
    auto it = offset_of.find({t.run, t.machine});
    return it == offset_of.end() ? int64_t{0} : it->second;
  };
  uint64_t n = 0;
  for (const auto& edges : by_run) {
    for (const Dependency* e : edges) {
      const Track& pt = tl.tracks[e->producer.track];
      const Track& ct = tl.tracks[e->consumer.track];
      n += dependency_slack_ns(tl, *e) + offset(ct) - offset(pt) < 0 ? 1 : 0;
    }
  }
  return n;
}

ClockAlignment estimate_clock_offsets(const Timeline& tl, const Dependencies& deps) {
  ClockAlignment out;
  const std::vector<std::vector<const Dependency*>> by_run = crossing_by_run(tl, deps);
  for (uint32_t r = 0; r < tl.runs.size(); ++r) {
    const auto& edges = by_run[r];
    out.crossing += edges.size();
    uint64_t broken = 0;
    for (const Dependency* e : edges) broken += dependency_slack_ns(tl, *e) < 0 ? 1 : 0;
    out.broken_before += broken;
    if (broken == 0) continue;  // the logged times break nothing: keep them
    align_run(tl, r, edges, out);
  }
  out.broken_after += count_broken_after(tl, by_run, out.machines);
  return out;
}

void apply_clock_offsets(Timeline& tl, const ClockAlignment& alignment, Dependencies& deps) {
  std::vector<bool> touched(tl.runs.size(), false);
  for (const MachineOffset& m : alignment.machines) {
    if (m.offset_ns == 0) continue;
    const Run& run = tl.runs[m.run];
    int64_t first_file = -1;
    for (uint32_t ti : run.tracks) {
      Track& t = tl.tracks[ti];
      if (t.machine != m.machine) continue;
      if (first_file < 0) first_file = t.file;
      for (Job& j : t.jobs) {
        j.start_ns += m.offset_ns;
        j.end_ns += m.offset_ns;
      }
      for (MemorySample& s : t.memory) s.ts_ns += m.offset_ns;
      t.clock_offset_ns += m.offset_ns;
    }
    touched[m.run] = true;
    std::string range;
    if (m.lo_ns <= m.hi_ns && m.lo_ns != std::numeric_limits<int64_t>::min() &&
        m.hi_ns != std::numeric_limits<int64_t>::max()) {
      range = fmt::format("; consistent offsets: {} to {}", signed_ms(m.lo_ns), signed_ms(m.hi_ns));
    } else if (m.lo_ns > m.hi_ns) {
      range = "; no offset satisfies every dependency";
    }
    std::string where = tl.runs.size() > 1 ? fmt::format(" in run {}", m.run + 1) : std::string();
    tl.diagnostics.add(IssueKind::kClockOffset, first_file < 0 ? 0 : static_cast<uint32_t>(first_file), 0,
                       fmt::format("{}'s clock shifted by {}{} ({} dependencies with other machines{})",
                                   machine_name(tl, m.machine), signed_ms(m.offset_ns), where, m.dependencies, range));
  }
  bool any = false;
  for (uint32_t r = 0; r < tl.runs.size(); ++r) {
    if (!touched[r]) continue;
    recompute_bounds(tl, tl.runs[r]);
    any = true;
  }
  // The flags are find_dependencies()'s until a clock moves.
  if (any) {
    set_origin(tl);
    check_dependencies(tl, deps);
  }
}

}  // namespace

ClockAlignment align_clocks(Timeline& tl, Dependencies& deps) {
  ClockAlignment a = estimate_clock_offsets(tl, deps);
  apply_clock_offsets(tl, a, deps);
  return a;
}

std::string format_clock_alignment(const Timeline& tl, const ClockAlignment& a) {
  std::string shifted;
  for (const MachineOffset& m : a.machines) {
    if (m.offset_ns == 0) continue;
    if (!shifted.empty()) shifted += ", ";
    if (tl.runs.size() > 1) shifted += fmt::format("run {} ", m.run + 1);
    shifted += fmt::format("{} {}", machine_name(tl, m.machine), signed_ms(m.offset_ns));
  }
  return shifted.empty() ? shifted : "clocks aligned: " + shifted;
}

}  // namespace ppt
