#include "output/picture/svg_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/stats.h"
#include "model/job_types.h"
#include "output/picture/block_label.h"
#include "output/picture/palette.h"
#include "output/picture/svg_element.h"
#include "output/text/summary.h"
#include "output/trace/chrome_json_writer.h"
#include "output/trace/trace_naming.h"
#include "util/text.h"

namespace ppt {

// ---------------------------------------------------------------------------
// Writing

namespace {

constexpr double kLaneH = 18;
constexpr double kLaneGap = 2;
constexpr double kRowGap = 3;
constexpr double kGroupHead = 16;  // a replica's (or machine's) heading row
constexpr double kGroupGap = 6;
constexpr double kCharW = 6.6;  // average advance of an 11 px sans-serif character
constexpr double kRight = 16;
constexpr double kAxisH = 24;
constexpr double kStepLabelH = 14;
constexpr double kRunGap = 22;
constexpr double kRunHead = 18;  // the run's heading, above its axis
constexpr double kThinPx = 2;    // narrower jobs get no hairline (it would hide them)
constexpr double kMemGap = 2;    // between a rank's lanes and its memory strip
constexpr double kMemH = 16;     // the memory strip
constexpr double kMemFontPx = 9;
constexpr const char* kMemAllocatedFill = "#8fb3e0";
constexpr const char* kMemReservedStroke = "#b03a2e";

// Tick spacing: 1, 2 or 5 times a power of ten, about `target` ns.
int64_t nice_step(double target) {
  if (target < 1) return 1;
  double mag = std::pow(10.0, std::floor(std::log10(target)));
  double f = target / mag;
  double m = f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10;
  return std::max<int64_t>(1, static_cast<int64_t>(std::llround(m * mag)));
}

std::string tick_label(int64_t t_ns, int64_t step_ns) {
  const char* unit;
  double div;
  if (step_ns >= 100'000'000)
    unit = "s", div = 1e9;
  else if (step_ns >= 100'000)
    unit = "ms", div = 1e6;
  else
    unit = "µs", div = 1e3;
  double step_u = step_ns / div;
  int decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(step_u) - 1e-9)));
  return fmt::format("{:.{}f} {}", t_ns / div, decimals, unit);
}

// "1.234 ms", "12.3 µs", "1.50 s".
std::string duration_text(int64_t ns) {
  double a = std::fabs(static_cast<double>(ns));
  if (a >= 1e9) return fmt::format("{:.2f} s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  return fmt::format("{:.1f} µs", ns / 1e3);
}

struct Row {
  uint32_t track = 0;
  int32_t stage = -1;
  int32_t replica = -1;
  std::string label;  // short: "s0 · GPU 0", "GPU 3"
  double y = 0;       // inside the run's rows
};
struct RowGroup {
  std::string heading;  // "" when the run has one group
  double y = 0;
  std::vector<Row> rows;
};

// The placement of one run's picture: its time origin and scale.
struct RunFrame {
  const Run* run = nullptr;
  const PictureRun* picture = nullptr;
  const std::vector<RowGroup>* groups = nullptr;
  int64_t t0 = 0;
  int64_t span = 0;
  double scale = 1;  // pixels per nanosecond
  double x_of(int64_t t) const { return static_cast<double>(t - t0) * scale; }
};

class SvgWriter {
 public:
  SvgWriter(const Timeline& tl, const PictureSelection& sel, const SvgOptions& opt, ByteSink& out)
      : tl_(tl), sel_(sel), opt_(opt), out_(out), naming_(tl) {}

  void write();

 private:
  void flush_if_big() {
    if (buf_.size() >= (1 << 20)) {
      out_.write(buf_);
      buf_.clear();
    }
  }
  std::string id(std::string_view what) const { return opt_.id_prefix + "-" + std::string(what); }
  // The whole picture, in the order it is written.
  void prepare_types();
  std::vector<uint32_t> legend_types() const;
  bool draws_critical_paths() const;
  bool draws_block_labels() const;
  std::string picture_title() const;
  std::string header(double width, const std::string& title, double* y);
  void open_svg(double width, double height, const std::string& title);
  double write_legend(double y, double width, const std::vector<uint32_t>& types, bool critical, bool labels);
  // One run: its group, heading, axis, step labels, rows, step lines, critical paths.
  void write_run(size_t index, const PictureRun& r, double y);
  void open_run(const RunFrame& f, double y);
  void write_run_heading(const RunFrame& f);
  void write_axis(int64_t t0, int64_t span);
  std::vector<const StepSpan*> drawn_steps(const RunFrame& f) const;
  void write_step_labels(const RunFrame& f, const std::vector<const StepSpan*>& spans, double y);
  void open_plot(const char* cls);
  void write_rows(const RunFrame& f, double y);
  void write_group_heading(const RowGroup& g);
  void write_row(const RunFrame& f, const Row& row);
  // Memory (Track::memory): the strip under a rank's lanes, its label, the
  // legend's key.
  bool draws_memory() const { return memory_max_ > 0; }
  double strip_h() const { return draws_memory() ? kMemGap + kMemH : 0; }
  void write_memory_label(const RunFrame& f, const Track& t, double row_h);
  void write_memory_strip(const RunFrame& f, const Track& t, double row_h);
  void write_job(const Job& j, const Row& row, double x, double w, double y);
  void append_job_label(std::string& labels, const Job& j, double x, double w, double y) const;
  void write_step_lines(const RunFrame& f, const std::vector<const StepSpan*>& spans, double rows_h);
  void write_critical_paths(const RunFrame& f);
  void write_critical_hops(const RunFrame& f, const std::vector<CriticalHop>& hops,
                           const std::map<int32_t, double>& row_y);
  std::vector<RowGroup> layout_rows(const Run& run) const;
  double run_height(const std::vector<RowGroup>& groups) const;
  std::string title_text(size_t ranks) const;
  const RankStats* rank_stats(int32_t rank) const {
    auto it = rank_stats_.find(rank);
    return it == rank_stats_.end() ? nullptr : it->second;
  }

  const Timeline& tl_;
  const PictureSelection& sel_;
  const SvgOptions& opt_;
  ByteSink& out_;
  TraceNaming naming_;
  std::string buf_;
  std::string scratch_;  // a job's name and tooltip, reused
  std::string clip_;     // the plot's clip-path reference
  double label_w_ = 80;
  double plot_w_ = 1200;
  bool staged_ = false;         // stages (and replicas) are known
  double run_head_ = kRunHead;  // 0 when one run: the title says it all
  std::map<int32_t, const RankStats*> rank_stats_;
  std::vector<std::string> type_text_;  // escaped
  std::vector<std::string> type_fill_;
  std::vector<std::string> type_label_color_;
  std::vector<TypeParts> type_parts_;
  std::vector<std::vector<RowGroup>> run_rows_;  // by selection index
  // The highest reserved sample over the drawn runs' tracks, by run: each
  // run's strips share its scale. Empty (and memory_max_ 0) without samples.
  std::map<uint32_t, int64_t> run_memory_max_;
  int64_t memory_max_ = 0;
};

// The samples a run's picture draws of a track: [first, last), where first
// is the last sample before the drawn range's start (its value holds into
// it; a step's Start sample precedes its first job), and `end` the sample whose time ends the last value drawn: the
// next one after the range, else the last drawn itself.
struct SampleRange {
  size_t first = 0, last = 0, end = 0;
};
SampleRange drawn_samples(const Track& t, const PictureRun& r) {
  const std::vector<MemorySample>& m = t.memory;
  const int64_t until = std::min(r.end_ns, r.until_ns);
  auto after = [&](int64_t ns) {
    return static_cast<size_t>(
        std::upper_bound(m.begin(), m.end(), ns, [](int64_t v, const MemorySample& s) { return v < s.ts_ns; }) -
        m.begin());
  };
  SampleRange out;
  const size_t at_start = after(r.start_ns - 1);  // the first at or after the start
  out.first = at_start > 0 ? at_start - 1 : 0;
  out.last = std::max(out.first, after(until));
  out.end = out.last < m.size() ? out.last : (out.last > 0 ? out.last - 1 : 0);
  return out;
}

std::vector<RowGroup> SvgWriter::layout_rows(const Run& run) const {
  std::vector<Row> rows;
  std::set<int32_t> machines;
  bool replicas = false;
  for (uint32_t ti : run.tracks) {
    const Track& t = tl_.tracks[ti];
    Row row;
    row.track = ti;
    if (const RankStats* rs = rank_stats(t.rank); rs && staged_) {
      row.stage = rs->stage;
      row.replica = rs->replica;
      replicas = replicas || rs->replica > 0;
    } else if (t.stage >= 0) {
      row.stage = t.stage;
    }
    row.label = row.stage >= 0 ? fmt::format("s{} · GPU {}", row.stage, t.rank) : fmt::format("GPU {}", t.rank);
    machines.insert(t.machine);
    rows.push_back(std::move(row));
  }
  // Replica by replica, stage order inside; else machine by machine.
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    const Track &ta = tl_.tracks[a.track], &tb = tl_.tracks[b.track];
    if (replicas) return std::make_tuple(a.replica, a.stage, ta.rank) < std::make_tuple(b.replica, b.stage, tb.rank);
    return std::make_tuple(ta.machine, ta.rank) < std::make_tuple(tb.machine, tb.rank);
  });
  auto machine_text = [&](const std::vector<Row>& rs) {
    std::vector<std::string> names;
    for (const Row& r : rs) {
      int32_t m = tl_.tracks[r.track].machine;
      std::string n = m >= 0 && static_cast<size_t>(m) < tl_.machines.size() ? tl_.machines[m] : std::to_string(m);
      if (!n.empty() && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
    if (names.size() > 3) return fmt::format("{}, {} … ({} machines)", names[0], names[1], names.size());
    return fmt::format("{}", fmt::join(names, ", "));
  };
  std::vector<RowGroup> groups;
  for (Row& row : rows) {
    const Track& t = tl_.tracks[row.track];
    bool split = groups.empty() || (replicas ? row.replica != groups.back().rows.back().replica
                                             : t.machine != tl_.tracks[groups.back().rows.back().track].machine);
    if (split) groups.emplace_back();
    groups.back().rows.push_back(std::move(row));
  }
  bool headed = groups.size() > 1 || machines.size() > 1;
  double y = 0;
  for (RowGroup& g : groups) {
    if (headed) {
      std::string where = machine_text(g.rows);
      g.heading = replicas ? fmt::format("replica {}", g.rows.front().replica) : where;
      if (replicas && !where.empty()) g.heading += " · " + where;
      if (g.heading.empty()) g.heading = fmt::format("machine {}", tl_.tracks[g.rows.front().track].machine);
    }
    g.y = y;
    if (headed) y += kGroupHead;
    for (Row& r : g.rows) {
      const Track& t = tl_.tracks[r.track];
      r.y = y;
      y += t.lanes * (kLaneH + kLaneGap) - kLaneGap + kRowGap;
      if (draws_memory()) y += strip_h();
    }
    y += kGroupGap - kRowGap;
  }
  return groups;
}

double SvgWriter::run_height(const std::vector<RowGroup>& groups) const {
  double h = 0;
  if (!groups.empty()) {
    const Row& last = groups.back().rows.back();
    h = last.y + tl_.tracks[last.track].lanes * (kLaneH + kLaneGap) - kLaneGap;
    if (draws_memory()) h += strip_h();
  }
  return run_head_ + kAxisH + kStepLabelH + h;
}

double SvgWriter::write_legend(double y, double width, const std::vector<uint32_t>& types, bool critical, bool labels) {
  SvgElement(buf_, "g").attr("class", "legend").open();
  double x = 8;
  // Each entry: its group, a marker, its text; the next entry goes right of
  // it, or on a new line when it would not fit.
  auto place = [&](double w) {
    if (x > 8 && x + w > width) {
      x = 8;
      y += 16;
    }
  };
  auto entry_width = [](std::string_view text) { return 14 + kCharW * static_cast<double>(text.size()) + 16; };
  auto entry_text = [&](std::string_view escaped_text) {
    SvgElement(buf_, "text").num("x", x + 14).num("y", y).text_escaped(escaped_text, "</g>\n");
  };
  for (uint32_t t : types) {
    double w = entry_width(tl_.types[t]);
    place(w);
    SvgElement(buf_, "g").attr("class", "legend-item").attr_escaped("data-legend-type", type_text_[t]).open("");
    SvgElement(buf_, "rect").box(x, y - 9, 10, 10).attr_escaped("fill", type_fill_[t]).close("");
    entry_text(type_text_[t]);
    x += w;
  }
  if (critical) {
    const std::string_view text = "critical path";
    double w = entry_width(text);
    place(w);
    SvgElement(buf_, "g").attr("class", "legend-critical").open("");
    SvgElement(buf_, "rect")
        .box(x + 0.75, y - 8.25, 8.5, 8.5)
        .attr("fill", "none")
        .attr("stroke", "#111")
        .attr("stroke-width", "1.5")
        .close("");
    entry_text(text);
    x += w;
  }
  if (draws_memory()) {
    // The memory strips' key: the allocated area, the reserved line.
    for (int reserved = 0; reserved < 2; ++reserved) {
      const std::string_view text = reserved ? "memory reserved" : "memory allocated";
      double w = entry_width(text);
      place(w);
      SvgElement(buf_, "g").attr("class", reserved ? "legend-memory-reserved" : "legend-memory-allocated").open("");
      if (reserved) {
        SvgElement(buf_, "line")
            .num("x1", x)
            .num("x2", x + 10)
            .num("y1", y - 4)
            .num("y2", y - 4)
            .attr("stroke", kMemReservedStroke)
            .attr("stroke-width", "1.5")
            .close("");
      } else {
        SvgElement(buf_, "rect").box(x, y - 9, 10, 10).attr("fill", kMemAllocatedFill).close("");
      }
      entry_text(text);
      x += w;
    }
  }
  // The key to the blocks' labels, only where a block carries one (or may,
  // once the page is zoomed).
  if (labels) {
    const std::string_view key = "block label: F/B/W + micro-batch (c: chunk), or without the letter";
    place(kCharW * static_cast<double>(key.size()));
    SvgElement(buf_, "text").attr("class", "legend-key").num("x", x).num("y", y).attr("fill", "#666").text(key);
  }
  buf_ += "</g>\n";
  return y;
}

void SvgWriter::write_axis(int64_t t0, int64_t span) {
  int64_t step = nice_step(static_cast<double>(span) / std::max(2.0, plot_w_ / 110));
  int64_t rel0 = t0 - tl_.origin_ns;
  int64_t first = rel0 >= 0 ? (rel0 + step - 1) / step * step : -((-rel0) / step * step);
  SvgElement(buf_, "line")
      .attr("class", "axis-line")
      .num("x1", 0)
      .num("x2", plot_w_)
      .num("y1", 20)
      .num("y2", 20)
      .attr("stroke", "#888")
      .close();
  for (int64_t t = first; t <= rel0 + span; t += step) {
    double x = static_cast<double>(t - rel0) * plot_w_ / static_cast<double>(span);
    SvgElement(buf_, "g").attr("class", "tick").open("");
    SvgElement(buf_, "line").num("x1", x).num("x2", x).num("y1", 15).num("y2", 20).attr("stroke", "#888").close("");
    SvgElement(buf_, "text")
        .num("x", x)
        .num("y", 12)
        .attr("text-anchor", "middle")
        .attr("font-size", "10")
        .attr("fill", "#555")
        .text(tick_label(t, step), "</g>\n");
  }
}

// Each drawn step's critical path (analysis/critical_path.h) over the rows.
void SvgWriter::write_critical_paths(const RunFrame& f) {
  if (!opt_.stats) return;
  std::map<int32_t, double> row_y;  // rank -> its row's top
  for (const RowGroup& g : *f.groups) {
    for (const Row& row : g.rows) row_y[tl_.tracks[row.track].rank] = row.y;
  }
  bool any = false;
  for (const StepStats& st : opt_.stats->steps) {
    if (!f.picture->shows(st.run, st.step)) continue;
    const std::vector<CriticalHop>& hops = st.critical_path.hops;
    if (hops.empty()) continue;
    if (!any) {
      open_plot("critical-path");
      any = true;
    }
    SvgElement(buf_, "g")
        .attr("class", "critical-step")
        .integer("data-step", st.step)
        .integer("data-hops", static_cast<int64_t>(hops.size()))
        .us("data-job-us", st.critical_path.job_ns)
        .us("data-wait-us", st.critical_path.wait_ns)
        .attr("fill", "none")
        .attr("stroke", "#111")
        .attr("vector-effect", "non-scaling-stroke")
        .open();
    write_critical_hops(f, hops, row_y);
    buf_ += "</g>\n";
  }
  if (any) buf_ += "</g></g>\n";
}

// One step's hops: an outline for each (or for a run of narrow ones), and a
// link from the previous one.
void SvgWriter::write_critical_hops(const RunFrame& f, const std::vector<CriticalHop>& hops,
                                    const std::map<int32_t, double>& row_y) {
  // Hops that follow each other on one rank closer than kMergePx, one of
  // them narrower than kNarrowPx, are one outline: on a dense picture (64
  // ranks of VPP) each narrow job's own outline merged into a solid black
  // bar. Wide hops keep their own. A merged outline says how many hops it
  // holds (data-hops) and what its first one waited.
  constexpr double kMergePx = 3;
  constexpr double kNarrowPx = 8;
  const double scale = f.scale;
  auto px = [&](const CriticalHop& x) { return static_cast<double>(x.end_ns - x.start_ns) * scale; };
  const CriticalHop* prev = nullptr;
  for (size_t i = 0; i < hops.size();) {
    const CriticalHop& h = hops[i];
    size_t last = i;
    while (last + 1 < hops.size() && hops[last + 1].rank == h.rank &&
           static_cast<double>(hops[last + 1].start_ns - hops[last].end_ns) * scale < kMergePx &&
           std::min(px(hops[last]), px(hops[last + 1])) < kNarrowPx) {
      ++last;
    }
    auto it = row_y.find(h.rank);
    if (it == row_y.end() || h.start_ns >= f.picture->until_ns) {  // no row, or past a step's cut
      prev = nullptr;
      i = last + 1;
      continue;
    }
    double y = it->second;
    if (prev) {
      double py = row_y.at(prev->rank);
      SvgElement link(buf_, "line");
      link.attr("class", "cp-link")
          .num("x1", f.x_of(prev->end_ns))
          .num("y1", py + kLaneH / 2)
          .num("x2", f.x_of(h.start_ns))
          .num("y2", y + kLaneH / 2)
          .attr("stroke-width", "1.5")
          .attr("vector-effect", "non-scaling-stroke");
      if (h.from_other_rank) link.attr("stroke-dasharray", "3 2");
      link.close();
    }
    const CriticalHop& end = hops[last];
    SvgElement hop(buf_, "rect");
    hop.attr("class", "cp-hop")
        .box(f.x_of(h.start_ns), y + 0.75, std::max(static_cast<double>(end.end_ns - h.start_ns) * scale, 0.5),
             kLaneH - 1.5)
        .integer("data-rank", h.rank)
        .integer("data-mb", h.micro_batch);
    if (last > i) hop.integer("data-hops", static_cast<int64_t>(last - i + 1));
    hop.us("data-wait-us", h.wait_ns).attr("stroke-width", "2").attr("vector-effect", "non-scaling-stroke").close();
    prev = &end;
    i = last + 1;
  }
}

void SvgWriter::open_run(const RunFrame& f, double y) {
  SvgElement(buf_, "g")
      .attr("class", "run")
      .integer("data-run", f.picture->run)
      .integer("data-first-step", f.picture->first_step)
      .integer("data-last-step", f.picture->last_step)
      .us("data-t0-us", f.t0 - tl_.origin_ns)
      .us("data-span-us", f.span)
      .num("data-plot-x", label_w_)
      .num("data-plot-w", plot_w_)
      .translate(0, y)
      .open();
}

// "run 2 of 3: steps 4 to 9, 8 ranks, 1,234 jobs", only when there are several runs.
void SvgWriter::write_run_heading(const RunFrame& f) {
  if (run_head_ <= 0) return;
  const PictureRun& r = *f.picture;
  size_t ranks = f.run->tracks.size();
  std::string heading = fmt::format("run {} of {}: ", r.run + 1, tl_.runs.size());
  heading += r.first_step == r.last_step ? fmt::format("step {}", r.first_step)
                                         : fmt::format("steps {} to {}", r.first_step, r.last_step);
  heading += fmt::format(", {} rank{}, {} jobs", ranks, ranks == 1 ? "" : "s", with_commas(r.jobs));
  SvgElement(buf_, "text")
      .attr("class", "run-title")
      .num("x", 8)
      .num("y", 12)
      .attr("font-weight", "bold")
      .text(heading);
}

std::vector<const StepSpan*> SvgWriter::drawn_steps(const RunFrame& f) const {
  std::vector<const StepSpan*> spans;
  for (const StepSpan& s : f.run->steps) {
    if (f.picture->shows(f.picture->run, s.number)) spans.push_back(&s);
  }
  return spans;
}

// Step labels: all are written (the report moves them when zooming); those
// that would overlap the previous one are hidden.
void SvgWriter::write_step_labels(const RunFrame& f, const std::vector<const StepSpan*>& spans, double y) {
  SvgElement(buf_, "text")
      .attr("class", "steps-caption")
      .num("x", label_w_ - 6)
      .num("y", y + 10)
      .attr("text-anchor", "end")
      .attr("font-size", "10")
      .attr("fill", "#555")
      .text("step");
  SvgElement(buf_, "g").attr("class", "step-labels").translate(label_w_, y + 10).open();
  double last_end = -1e9;
  for (const StepSpan* s : spans) {
    double x = f.x_of(s->start_ns) + 2;
    std::string text = std::to_string(s->number);
    double w = kCharW * static_cast<double>(text.size()) + 6;
    bool visible = x >= last_end && x + w <= plot_w_ + 4;
    if (visible) last_end = x + w;
    SvgElement label(buf_, "text");
    label.attr("class", "step-label")
        .integer("data-step", s->number)
        .num("data-x", x)
        .num("x", x)
        .num("y", 0)
        .attr("font-size", "10")
        .attr("fill", "#555");
    if (!visible) label.attr("visibility", "hidden");
    label.text(text);
  }
  buf_ += "</g>\n";
}

// A replica's (or machine's) heading band, across the label column and the plot.
void SvgWriter::write_group_heading(const RowGroup& g) {
  SvgElement group(buf_, "g");
  group.attr("class", "group");
  if (g.rows.front().replica >= 0) group.integer("data-replica", g.rows.front().replica);
  group.open("");
  SvgElement(buf_, "rect")
      .attr("class", "group-band")
      .box(0, g.y, label_w_ + plot_w_, kGroupHead - 2)
      .attr("fill", "#f4f4f4")
      .close("");
  SvgElement(buf_, "text")
      .attr("class", "group-label")
      .num("x", 8)
      .num("y", g.y + kGroupHead - 5)
      .attr("font-size", "10")
      .attr("font-weight", "bold")
      .attr("fill", "#444")
      .text(g.heading, "</g>\n");
}

void SvgWriter::write_job(const Job& j, const Row& row, double x, double w, double y) {
  const TypeParts& parts = type_parts_[j.type];
  std::string& name = scratch_;
  name.clear();
  append_job_name(name, type_text_[j.type], j.micro_batch, j.job_id);
  SvgElement rect(buf_, "rect");
  rect.attr("class", "job").box(x, y, w, kLaneH).attr_escaped("fill", type_fill_[j.type]);
  if (w < kThinPx) rect.attr("style", "stroke:none");
  rect.attr_escaped("data-name", name)
      .integer("data-job", j.job_id)
      .attr_escaped("data-type", type_text_[j.type])
      .integer("data-mb", j.micro_batch);
  if (parts.chunk >= 0) rect.integer("data-chunk", parts.chunk);
  rect.integer("data-step", j.step)
      .integer("data-line", j.line)
      .us("data-start-us", j.start_ns - tl_.origin_ns)
      .us("data-dur-us", j.end_ns - j.start_ns);
  if (j.lane > 0) rect.integer("data-lane", j.lane);
  if (opt_.embedded) {
    // The page shows its own card on hover, and relabels the blocks as it
    // zooms (report/report.js): the label's longest form goes with the block.
    std::vector<std::string> forms = opt_.labels ? label_forms(parts, j.micro_batch) : std::vector<std::string>{};
    if (!forms.empty()) rect.attr_escaped("data-label", forms.front());
    rect.close();
    return;
  }
  rect.open("");
  name += " · step ";
  append_int(name, j.step);
  name += " · ";
  append_xml_escaped(name, row.label);
  name += fmt::format(" · {} at {}", duration_text(j.end_ns - j.start_ns), duration_text(j.start_ns - tl_.origin_ns));
  SvgElement(buf_, "title").text_escaped(name, "</rect>\n");
}

// The longest of the block's label forms that fits it (block_label.h).
void SvgWriter::append_job_label(std::string& labels, const Job& j, double x, double w, double y) const {
  if (!opt_.labels) return;
  std::string text = fitting_label(label_forms(type_parts_[j.type], j.micro_batch), w);
  if (text.empty()) return;
  SvgElement(labels, "text")
      .num("x", x + w / 2)
      .num("y", y + kLaneH / 2 + 3.5)
      .attr_escaped("fill", type_label_color_[j.type])
      .text_escaped(text);
}

// One rank's row: its label, then inside the clipped plot the row's
// background, its jobs and their labels.
void SvgWriter::write_row(const RunFrame& f, const Row& row) {
  const Track& t = tl_.tracks[row.track];
  double row_h = t.lanes * kLaneH + (t.lanes - 1) * kLaneGap;
  SvgElement rank(buf_, "g");
  rank.attr("class", "rank").integer("data-rank", t.rank).integer("data-machine", t.machine);
  if (row.stage >= 0) rank.integer("data-stage", row.stage);
  if (row.replica >= 0) rank.integer("data-replica", row.replica);
  rank.integer("data-lanes", t.lanes)
      .attr("data-label", naming_.thread_name(t, 0))
      .attr("data-src", tl_.files[t.file].path)
      .translate(0, row.y)
      .open();
  SvgElement(buf_, "text")
      .attr("class", "rank-label")
      .num("x", label_w_ - 6)
      .num("y", std::min(row_h, kLaneH) / 2 + 4)
      .attr("text-anchor", "end")
      .text(row.label);
  if (draws_memory()) write_memory_label(f, t, row_h);
  open_plot(nullptr);
  SvgElement(buf_, "rect").attr("class", "row-bg").box(0, 0, plot_w_, row_h).attr("fill", "#ececec").close();
  std::string labels;  // the blocks' labels, over all the rectangles
  for (const Job& j : t.jobs) {
    if (!f.picture->draws(j)) continue;
    double x = f.x_of(j.start_ns);
    double w = std::max(static_cast<double>(j.end_ns - j.start_ns) * f.scale, 0.05);
    double y = j.lane * (kLaneH + kLaneGap);
    write_job(j, row, x, w, y);
    append_job_label(labels, j, x, w, y);
    flush_if_big();
  }
  if (!labels.empty()) {
    SvgElement(buf_, "g")
        .attr("class", "job-labels")
        .num("font-size", kLabelFontPx)
        .attr("text-anchor", "middle")
        .attr("pointer-events", "none")
        .open();
    buf_ += labels;
    buf_ += "</g>\n";
  }
  if (draws_memory()) write_memory_strip(f, t, row_h);
  buf_ += "</g></g>\n</g>\n";
}

// Where a sample was taken, for a tooltip: "after forward, micro-batch 3, chunk 1".
std::string sample_place(const MemorySample& s) {
  static constexpr const char* kPoint[] = {"start of the step", "before forward", "after forward",
                                           "before backward",   "after backward", "end of the step"};
  std::string text = kPoint[static_cast<size_t>(s.point) % 6];
  if (s.micro_batch >= 0) text += fmt::format(", micro-batch {}", s.micro_batch);
  if (s.chunk >= 0) text += fmt::format(", chunk {}", s.chunk);
  return text;
}

// The highest allocated sample of the drawn ones (the first such), or null.
const MemorySample* peak_sample(const Track& t, const SampleRange& r) {
  const MemorySample* peak = nullptr;
  for (size_t i = r.first; i < r.last; ++i) {
    if (!peak || t.memory[i].allocated_bytes > peak->allocated_bytes) peak = &t.memory[i];
  }
  return peak;
}

// "peak 12.34 GiB" in the label column, beside the rank's memory strip.
void SvgWriter::write_memory_label(const RunFrame& f, const Track& t, double row_h) {
  const MemorySample* peak = peak_sample(t, drawn_samples(t, *f.picture));
  if (!peak) return;
  std::string text = "peak ";
  append_gib(text, peak->allocated_bytes);
  text += " GiB";
  SvgElement(buf_, "text")
      .attr("class", "memory-label")
      .num("x", label_w_ - 6)
      .num("y", row_h + kMemGap + kMemH / 2 + 3)
      .attr("text-anchor", "end")
      .num("font-size", kMemFontPx)
      .attr("fill", "#555")
      .text(text);
}

// The strip's two outlines: allocated memory as a filled step area, reserved
// as a step line, each value holding until the next sample.
struct MemoryPaths {
  SvgPath allocated, reserved;
};
MemoryPaths memory_paths(const RunFrame& f, const Track& t, const SampleRange& r, int64_t top_bytes) {
  const std::vector<MemorySample>& m = t.memory;
  const double top = static_cast<double>(std::max<int64_t>(1, top_bytes));
  auto y_of = [&](int64_t bytes) { return kMemH - kMemH * std::clamp(static_cast<double>(bytes) / top, 0.0, 1.0); };
  const int64_t end_ns = r.end >= r.last ? m[r.end].ts_ns : std::max(m[r.last - 1].ts_ns, f.picture->end_ns);
  MemoryPaths p;
  double last_area = -1, last_line = -1;
  for (size_t i = r.first; i < r.last; ++i) {
    const double x = f.x_of(m[i].ts_ns);
    const double ya = y_of(m[i].allocated_bytes), yr = y_of(m[i].reserved_bytes);
    if (i == r.first) {
      p.allocated.move(x, kMemH).v(ya);
      p.reserved.move(x, yr);
    } else {
      p.allocated.h(x);
      if (ya != last_area) p.allocated.v(ya);
      p.reserved.h(x);
      if (yr != last_line) p.reserved.v(yr);
    }
    last_area = ya;
    last_line = yr;
  }
  p.allocated.h(f.x_of(end_ns)).v(kMemH).close_path();
  p.reserved.h(f.x_of(end_ns));
  return p;
}

// Under the rank's lanes, inside its plot layer: allocated memory as a filled
// step area, reserved as a step line, on the run's scale (0 at the bottom,
// the run's highest reserved at the top), and a mark at the peak allocated.
// Each value holds until the next sample.
void SvgWriter::write_memory_strip(const RunFrame& f, const Track& t, double row_h) {
  const SampleRange r = drawn_samples(t, *f.picture);
  if (r.first >= r.last) return;
  const std::vector<MemorySample>& m = t.memory;
  const int64_t top = run_memory_max_[f.picture->run];
  const MemoryPaths paths = memory_paths(f, t, r, top);
  const MemorySample* peak = peak_sample(t, r);
  int64_t peak_reserved = 0;
  for (size_t i = r.first; i < r.last; ++i) peak_reserved = std::max(peak_reserved, m[i].reserved_bytes);

  SvgElement(buf_, "g")
      .attr("class", "memory")
      .integer("data-peak-allocated-bytes", peak->allocated_bytes)
      .integer("data-peak-reserved-bytes", peak_reserved)
      .integer("data-peak-step", peak->step)
      .integer("data-scale-bytes", top)
      .integer("data-samples", static_cast<int64_t>(r.last - r.first))
      .translate(0, row_h + kMemGap)
      .open();
  SvgElement(buf_, "rect").attr("class", "memory-bg").box(0, 0, plot_w_, kMemH).attr("fill", "#f5f5f5").close();
  SvgElement(buf_, "path")
      .attr("class", "memory-allocated")
      .attr("d", paths.allocated.str())
      .attr("fill", kMemAllocatedFill)
      .close();
  SvgElement(buf_, "path")
      .attr("class", "memory-reserved")
      .attr("d", paths.reserved.str())
      .attr("fill", "none")
      .attr("stroke", kMemReservedStroke)
      .attr("stroke-width", "1")
      .attr("vector-effect", "non-scaling-stroke")
      .close();
  const double px = f.x_of(peak->ts_ns);
  SvgElement(buf_, "line")
      .attr("class", "memory-peak")
      .num("x1", px)
      .num("x2", px)
      .num("y1", 0)
      .num("y2", kMemH)
      .attr("stroke", "#222")
      .attr("stroke-width", "1")
      .attr("vector-effect", "non-scaling-stroke")
      .close();
  // A tooltip, in the report too (its cards are the jobs'). A predicted
  // timeline's strip says so, as its title does.
  std::string title = tl_.prediction.empty() ? std::string() : tl_.prediction + ": ";
  title += fmt::format("{} memory: peak allocated ", naming_.thread_name(t, 0));
  append_gib(title, peak->allocated_bytes);
  title += fmt::format(" GiB (step {}, {}), peak reserved ", peak->step, sample_place(*peak));
  append_gib(title, peak_reserved);
  title += " GiB; the strip's top is ";
  append_gib(title, top);
  title += " GiB, the run's highest reserved";
  SvgElement(buf_, "title").text(title);
  buf_ += "</g>\n";
}

// The plot's layer of a run (the rows' jobs, the step lines, the critical
// paths): right of the labels, clipped to the plot, zoomed by the page.
// Closed by "</g></g>\n".
void SvgWriter::open_plot(const char* cls) {
  SvgElement plot(buf_, "g");
  if (cls) plot.attr("class", cls);
  plot.translate(label_w_, 0).attr_escaped("clip-path", clip_).open("");
  SvgElement(buf_, "g").attr("class", "zoom").open();
}

void SvgWriter::write_rows(const RunFrame& f, double y) {
  SvgElement(buf_, "g").attr("class", "rows").translate(0, y).open();
  for (const RowGroup& g : *f.groups) {
    if (!g.heading.empty()) write_group_heading(g);
    for (const Row& row : g.rows) write_row(f, row);
  }
}

// A dashed line at every drawn step's start, and at the last one's end.
void SvgWriter::write_step_lines(const RunFrame& f, const std::vector<const StepSpan*>& spans, double rows_h) {
  open_plot("steps");
  auto boundary = [&](int64_t t, int32_t step, const char* cls) {
    double x = f.x_of(t);
    SvgElement(buf_, "line")
        .attr("class", cls)
        .integer("data-step", step)
        .num("x1", x)
        .num("x2", x)
        .num("y1", -4)
        .num("y2", rows_h + 2)
        .attr("stroke", "#333")
        .attr("stroke-opacity", "0.55")
        .attr("stroke-dasharray", "3 2")
        .attr("vector-effect", "non-scaling-stroke")
        .close();
  };
  for (const StepSpan* s : spans) boundary(s->start_ns, s->number, "step-line");
  if (!spans.empty()) boundary(spans.back()->end_ns, spans.back()->number, "step-line step-end");
  buf_ += "</g></g>\n";
}

void SvgWriter::write_run(size_t index, const PictureRun& r, double y) {
  RunFrame f;
  f.run = &tl_.runs[r.run];
  f.picture = &r;
  f.groups = &run_rows_[index];
  f.t0 = r.start_ns;
  f.span = opt_.span_ns > 0 ? opt_.span_ns : std::max<int64_t>(r.end_ns - r.start_ns, 1000);
  f.scale = plot_w_ / static_cast<double>(f.span);

  open_run(f, y);
  write_run_heading(f);
  double axis_y = run_head_;
  SvgElement(buf_, "g").attr("class", "axis").translate(label_w_, axis_y).open();
  write_axis(f.t0, f.span);
  buf_ += "</g>\n";
  std::vector<const StepSpan*> spans = drawn_steps(f);
  double labels_y = axis_y + kAxisH;
  write_step_labels(f, spans, labels_y);
  double rows_y = labels_y + kStepLabelH;
  write_rows(f, rows_y);
  double rows_h = run_height(*f.groups) - (run_head_ + kAxisH + kStepLabelH);
  write_step_lines(f, spans, rows_h);
  write_critical_paths(f);
  buf_ += "</g>\n</g>\n";
}

// The title's bubble is the stats' own figure (analysis/stats.h), never a
// second computation: the step's when one step is drawn, the run's otherwise.
std::string SvgWriter::title_text(size_t ranks) const {
  std::vector<std::string> parts;
  if (!tl_.prediction.empty()) parts.push_back(tl_.prediction);  // never taken for a measurement
  const Stats* st = opt_.stats;
  if (st && st->schedule.kind != ScheduleKind::kUnknown) {
    const ScheduleInfo& s = st->schedule;
    std::string name = s.kind == ScheduleKind::kNoPipeline ? "no pipeline" : std::string(schedule_name(s.kind));
    if (!s.variant.empty()) name += " (" + s.variant + ")";
    parts.push_back(name);
    parts.push_back(fmt::format("P={}", s.pp_degree));
    if (s.micro_batches > 0) parts.push_back(fmt::format("M={}", s.micro_batches));
    if (s.chunks > 1) parts.push_back(fmt::format("V={}", s.chunks));
    if (s.replicas > 1) parts.push_back(fmt::format("{} replicas", s.replicas));
  } else {
    parts.push_back(fmt::format("{} rank{}", ranks, ranks == 1 ? "" : "s"));
  }
  // Steps drawn.
  const StepStats* one_step = nullptr;
  if (sel_.runs.size() == 1) {
    const PictureRun& r = sel_.runs.front();
    std::string s = r.first_step == r.last_step ? fmt::format("step {}", r.first_step)
                                                : fmt::format("steps {}-{}", r.first_step, r.last_step);
    // Counted against the run as logged, not against a selection's steps.
    if (sel_.slowest() && sel_.steps_total != sel_.steps_logged)
      s += fmt::format(" of {} (slowest of the {} selected)", sel_.steps_logged, sel_.steps_total);
    else if (sel_.slowest())
      s += fmt::format(" (slowest of {})", sel_.steps_total);
    else
      s += fmt::format(" of {}", sel_.steps_logged);
    parts.push_back(s);
    if (st && r.first_step == r.last_step) {
      for (const StepStats& step : st->steps) {
        if (r.shows(step.run, step.step)) one_step = &step;
      }
    }
  } else if (!sel_.runs.empty()) {
    parts.push_back(
        sel_.steps_total == sel_.steps_logged
            ? fmt::format("{} runs, {} steps", sel_.runs.size(), sel_.steps_total)
            : fmt::format("{} runs, {} of {} steps", sel_.runs.size(), sel_.steps_total, sel_.steps_logged));
  }
  // Bubble, measured; the schedule's ideal.
  if (st) {
    std::string bubble = fmt::format("bubble {:.1f}%", 100 * (one_step ? one_step->bubble_ratio : st->bubble_ratio));
    if (st->schedule.ideal_bubble_ratio >= 0) {
      bubble += fmt::format(" (ideal {:.1f}%)", 100 * st->schedule.ideal_bubble_ratio);
    }
    parts.push_back(bubble);
  }
  parts.push_back(fmt::format("{} job{}", with_commas(sel_.jobs), sel_.jobs == 1 ? "" : "s"));
  return fmt::format("{}", fmt::join(parts, " · "));
}

void SvgWriter::prepare_types() {
  type_text_.resize(tl_.types.size());
  type_fill_.resize(tl_.types.size());
  type_label_color_.resize(tl_.types.size());
  type_parts_.resize(tl_.types.size());
  for (size_t i = 0; i < tl_.types.size(); ++i) {
    type_text_[i] = xml_escaped(tl_.types[i]);
    Rgb fill = type_fill(tl_.types[i]);
    type_fill_[i] = hex(fill);
    type_label_color_[i] = std::string(label_color(fill));
    type_parts_[i] = split_type(tl_.types[i]);
  }
}

// The types drawn, in legend order.
std::vector<uint32_t> SvgWriter::legend_types() const {
  std::vector<uint8_t> used(tl_.types.size(), 0);
  for (const PictureRun& r : sel_.runs) {
    for (uint32_t ti : tl_.runs[r.run].tracks) {
      for (const Job& j : tl_.tracks[ti].jobs) {
        if (r.draws(j)) used[j.type] = 1;
      }
    }
  }
  std::vector<uint32_t> legend;
  for (uint32_t i = 0; i < used.size(); ++i) {
    if (used[i]) legend.push_back(i);
  }
  std::sort(legend.begin(), legend.end(), [&](uint32_t a, uint32_t b) {
    const TypeParts &pa = type_parts_[a], &pb = type_parts_[b];
    return std::make_tuple(legend_rank(pa), pa.base, pa.chunk, pa.suffix, tl_.types[a]) <
           std::make_tuple(legend_rank(pb), pb.base, pb.chunk, pb.suffix, tl_.types[b]);
  });
  return legend;
}

// Whether some drawn block is wide enough for a label (block_label.h), at
// each run's scale as write_run sets it; a page's picture (embedded) always
// may be, once zoomed.
bool SvgWriter::draws_block_labels() const {
  if (!opt_.labels) return false;
  if (opt_.embedded) return true;
  for (const PictureRun& r : sel_.runs) {
    int64_t span = opt_.span_ns > 0 ? opt_.span_ns : std::max<int64_t>(r.end_ns - r.start_ns, 1000);
    double scale = plot_w_ / static_cast<double>(span);
    for (uint32_t ti : tl_.runs[r.run].tracks) {
      for (const Job& j : tl_.tracks[ti].jobs) {
        if (!r.shows(r.run, j.step)) continue;
        double w = static_cast<double>(j.end_ns - j.start_ns) * scale;
        if (!fitting_label(label_forms(type_parts_[j.type], j.micro_batch), w).empty()) return true;
      }
    }
  }
  return false;
}

bool SvgWriter::draws_critical_paths() const {
  if (!opt_.stats) return false;
  for (const StepStats& s : opt_.stats->steps) {
    for (const PictureRun& r : sel_.runs) {
      if (r.shows(s.run, s.step) && !s.critical_path.hops.empty()) return true;
    }
  }
  return false;
}

std::string SvgWriter::picture_title() const {
  if (!opt_.title.empty()) return opt_.title;
  std::set<uint32_t> ranks;
  for (const PictureRun& r : sel_.runs) {
    for (uint32_t ti : tl_.runs[r.run].tracks) ranks.insert(static_cast<uint32_t>(tl_.tracks[ti].rank));
  }
  return title_text(ranks.size());
}

// Title, note and legend: their height (returned in `y`) decides where the runs go.
std::string SvgWriter::header(double width, const std::string& title, double* y_out) {
  buf_.clear();
  double y = 20;
  SvgElement(buf_, "text")
      .attr("class", "title")
      .num("x", 8)
      .num("y", 18)
      .attr("font-size", "13")
      .attr("font-weight", "bold")
      .text(title);
  if (!sel_.note.empty()) {
    SvgElement(buf_, "text").attr("class", "note").num("x", 8).num("y", y + 14).attr("fill", "#a04000").text(sel_.note);
    y += 16;
  }
  *y_out = write_legend(y + 22, width - 8, legend_types(), draws_critical_paths(), draws_block_labels()) + 12;
  std::string out = std::move(buf_);
  buf_.clear();
  return out;
}

void SvgWriter::open_svg(double width, double height, const std::string& title) {
  if (!opt_.embedded) buf_ += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  std::string view_box = "0 0 ";
  append_svg_num(view_box, width);
  view_box += ' ';
  append_svg_num(view_box, height);
  SvgElement svg(buf_, "svg");
  svg.attr("xmlns", "http://www.w3.org/2000/svg")
      .attr("class", "ppt-timeline")
      .attr("id", opt_.id_prefix)
      .num("width", width)
      .num("height", height)
      .attr("viewBox", view_box)
      .attr("font-family", "DejaVu Sans, Arial, Helvetica, sans-serif")
      .attr("font-size", "11")
      .integer("data-jobs", static_cast<int64_t>(sel_.jobs))
      .integer("data-jobs-in-range", static_cast<int64_t>(sel_.jobs_in_range));
  if (!opt_.sync.empty()) svg.attr("data-sync", opt_.sync);
  svg.open();
  SvgElement(buf_, "title").text(title);
  buf_ +=
      "<style>svg.ppt-timeline rect.job { stroke: #ffffff; stroke-width: 0.75px; "
      "vector-effect: non-scaling-stroke; }</style>\n<defs>";
  SvgElement(buf_, "clipPath").attr("id", id("clip")).open("");
  SvgElement(buf_, "rect").box(0, -10, plot_w_, 1000000).close("");
  buf_ += "</clipPath></defs>\n";
  SvgElement(buf_, "rect").attr("class", "background").box(0, 0, width, height).attr("fill", "#ffffff").close();
}

void SvgWriter::write() {
  if (opt_.stats) {
    for (const RankStats& rs : opt_.stats->ranks) rank_stats_[rs.rank] = &rs;
    staged_ = opt_.stats->schedule.pp_degree > 1;
  }
  clip_ = "url(#" + id("clip") + ")";
  for (const PictureRun& r : sel_.runs) {
    for (uint32_t ti : tl_.runs[r.run].tracks) {
      const Track& t = tl_.tracks[ti];
      const SampleRange drawn = drawn_samples(t, r);
      if (drawn.first >= drawn.last) continue;
      int64_t& top = run_memory_max_[r.run];
      top = std::max(top, opt_.memory_top_bytes);
      for (const MemorySample& m : t.memory) top = std::max(top, m.reserved_bytes);
      memory_max_ = std::max(memory_max_, top);
    }
  }
  for (const PictureRun& r : sel_.runs) run_rows_.push_back(layout_rows(tl_.runs[r.run]));
  run_head_ = sel_.runs.size() > 1 ? kRunHead : 0;
  size_t longest = 4;
  for (const auto& groups : run_rows_) {
    for (const RowGroup& g : groups) {
      for (const Row& row : g.rows) longest = std::max(longest, utf8_code_points(row.label));
    }
  }
  label_w_ = std::clamp(kCharW * static_cast<double>(longest) + 14, 60.0, 360.0);
  // "peak 123.45 GiB" in the smaller font of the memory labels.
  if (draws_memory()) label_w_ = std::max(label_w_, kCharW * kMemFontPx / 11 * 15 + 14);
  plot_w_ = std::max(100.0, opt_.width > 0 ? opt_.width - label_w_ - kRight : opt_.plot_width);
  double width = label_w_ + plot_w_ + kRight;
  prepare_types();

  double y = 0;
  std::string title = picture_title();
  std::string head = header(width, title, &y);
  std::vector<double> run_y;
  for (const auto& groups : run_rows_) {
    run_y.push_back(y);
    y += run_height(groups) + kRunGap;
  }
  double height = std::max(y, 60.0);

  open_svg(width, height, title);
  buf_ += head;
  for (size_t i = 0; i < sel_.runs.size(); ++i) {
    write_run(i, sel_.runs[i], run_y[i]);
    flush_if_big();
  }
  if (sel_.runs.empty()) {
    SvgElement(buf_, "text").attr("class", "empty").num("x", 8).num("y", height - 20).text("nothing to draw");
  }
  buf_ += "</svg>\n";
  out_.write(buf_);
  buf_.clear();
}

}  // namespace

void write_svg(const Timeline& timeline, const PictureSelection& selection, const SvgOptions& options, ByteSink& out) {
  SvgWriter w(timeline, selection, options, out);
  w.write();
}

}  // namespace ppt
