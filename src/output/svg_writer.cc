#include "output/svg_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "analysis/stats.h"
#include "output/chrome_json_writer.h"
#include "output/palette.h"
#include "output/summary.h"
#include "model/job_types.h"
#include "output/trace_naming.h"
#include "util/text.h"

namespace ppt {

// ---------------------------------------------------------------------------
// Escaping

void append_xml_escaped(std::string& out, std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        case '\t': out += "&#9;"; break;
        case '\n': out += "&#10;"; break;
        case '\r': out += "&#13;"; break;
        default:
          // XML 1.0 has no way to carry C0 controls; DEL it allows, but a
          // page has no use for it.
          if (c < 0x20 || c == 0x7f) out += "\xEF\xBF\xBD";
          else out.push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    // A multi-byte sequence: copy it when it is well-formed UTF-8 and a
    // character XML 1.0 allows (its Char production also leaves out U+FFFE
    // and U+FFFF, which UTF-8 itself allows), else U+FFFD per byte. C1
    // controls (U+0080..U+009F, XML 1.0 "discouraged") become U+FFFD too.
    size_t n = utf8_sequence_length(s, i);
    bool ok = n > 0;
    if (ok) {
      char32_t cp = utf8_code_point(s, i, n);
      ok = cp != 0xFFFE && cp != 0xFFFF && !(cp >= 0x80 && cp <= 0x9f);
    }
    if (ok) {
      out.append(s.data() + i, n);
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
}

std::string xml_escaped(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  append_xml_escaped(out, s);
  return out;
}

// ---------------------------------------------------------------------------
// Step ranges

// ---------------------------------------------------------------------------
// Selection

namespace {

constexpr double kReadablePx = 12;  // a job narrower than this cannot carry its label

struct StepPick {
  uint32_t run = 0;
  int32_t step = 0;
  int64_t ns = 0;
  size_t steps = 0;  // steps in the timeline, all runs
};

// The slowest step when the median job of the whole timeline, drawn across
// the plot width, is too narrow to read; nullopt when it is readable or has
// one step.
std::optional<StepPick> dense_pick(const Timeline& tl, const SvgOptions& opt) {
  std::vector<double> widths;
  widths.reserve(tl.job_count());
  StepPick pick;
  bool found = false;
  double plot_w = std::max(100.0, opt.plot_width);
  for (const Run& run : tl.runs) {
    int64_t span = opt.span_ns > 0 ? opt.span_ns : std::max<int64_t>(run.last_ns - run.first_ns, 1000);
    for (uint32_t ti : run.tracks) {
      for (const Job& j : tl.tracks[ti].jobs) {
        widths.push_back(static_cast<double>(j.end_ns - j.start_ns) * plot_w / static_cast<double>(span));
      }
    }
    for (const StepSpan& s : run.steps) {
      if (s.ranks == 0) continue;
      ++pick.steps;
      if (!found || s.end_ns - s.start_ns > pick.ns) {
        found = true;
        pick.run = run.index;
        pick.step = s.number;
        pick.ns = s.end_ns - s.start_ns;
      }
    }
  }
  if (!found || pick.steps < 2 || widths.empty()) return std::nullopt;
  auto mid = widths.begin() + static_cast<std::ptrdiff_t>(widths.size() / 2);
  std::nth_element(widths.begin(), mid, widths.end());
  if (*mid >= kReadablePx) return std::nullopt;
  return pick;
}

}  // namespace

SvgSelection select_for_svg(const Timeline& tl, const SvgOptions& opt) {
  SvgSelection sel;
  StepRange range = opt.steps.value_or(StepRange{});
  std::optional<StepPick> pick;
  if (!opt.steps && opt.slowest_step_when_dense) pick = dense_pick(tl, opt);
  if (pick) {
    range = {pick->step, pick->step};
    sel.slowest = true;
  }
  struct StepInfo {
    size_t jobs = 0;
    int64_t first = INT64_MAX, last = INT64_MIN;
  };
  std::vector<std::string> shown;
  bool stop = false;
  int32_t any_min = INT32_MAX, any_max = INT32_MIN;
  for (const Run& run : tl.runs) {
    bool skip_run = pick && run.index != pick->run;
    std::map<int32_t, StepInfo> steps;
    for (uint32_t ti : run.tracks) {
      for (const Job& j : tl.tracks[ti].jobs) {
        any_min = std::min(any_min, j.step);
        any_max = std::max(any_max, j.step);
        if (skip_run || !range.contains(j.step)) continue;
        StepInfo& s = steps[j.step];
        ++s.jobs;
        s.first = std::min(s.first, j.start_ns);
        s.last = std::max(s.last, j.end_ns);
      }
    }
    for (const auto& [n, s] : steps) sel.jobs_in_range += s.jobs;
    if (stop || steps.empty()) continue;
    SvgRunSelection r;
    r.run = run.index;
    r.first_step = steps.begin()->first;
    r.start_ns = INT64_MAX;
    r.end_ns = INT64_MIN;
    for (const auto& [n, s] : steps) {
      if (sel.jobs > 0 && sel.jobs + s.jobs > opt.max_jobs) {
        sel.capped = true;
        stop = true;
        break;
      }
      sel.jobs += s.jobs;
      r.jobs += s.jobs;
      r.last_step = n;
      r.start_ns = std::min(r.start_ns, s.first);
      r.end_ns = std::max(r.end_ns, s.last);
    }
    if (r.jobs > 0) {
      sel.runs.push_back(r);
      shown.push_back(tl.runs.size() > 1 ? fmt::format("steps {}-{} of run {}", r.first_step, r.last_step, run.index + 1)
                                         : fmt::format("steps {}-{}", r.first_step, r.last_step));
    }
  }
  if (sel.slowest) {
    std::string where = tl.runs.size() > 1 ? fmt::format(" of run {}", pick->run + 1) : std::string();
    sel.note = fmt::format("drawing step {}{}, the slowest of {} steps ({:.3f} ms): all of them would be too dense "
                           "to read; choose steps with --steps A:B",
                           pick->step, where, pick->steps, static_cast<double>(pick->ns) / 1e6);
  } else if (sel.capped) {
    sel.note = fmt::format("showing {} ({} of {} jobs): a picture holds at most {} jobs; choose steps with --steps A:B",
                           fmt::join(shown, ", "), with_commas(sel.jobs), with_commas(sel.jobs_in_range),
                           with_commas(opt.max_jobs));
  } else if (sel.runs.empty() && tl.job_count() > 0) {
    sel.note = fmt::format("no job in steps {}:{} (the timeline has steps {} to {})",
                           range.first == INT32_MIN ? std::string() : std::to_string(range.first),
                           range.last == INT32_MAX ? std::string() : std::to_string(range.last), any_min, any_max);
  }
  return sel;
}

// ---------------------------------------------------------------------------
// Writing

namespace {

constexpr double kLaneH = 18;
constexpr double kLaneGap = 2;
constexpr double kRowGap = 3;
constexpr double kGroupHead = 16;  // a replica's (or machine's) heading row
constexpr double kGroupGap = 6;
constexpr double kCharW = 6.6;   // average advance of an 11 px sans-serif character
constexpr double kLabelCharW = 6.2;  // of a 10 px job label (digits and capitals)
constexpr double kRight = 16;
constexpr double kAxisH = 24;
constexpr double kStepLabelH = 14;
constexpr double kRunGap = 22;
constexpr double kRunHead = 18;   // the run's heading, above its axis
constexpr double kThinPx = 2;     // narrower jobs get no hairline (it would hide them)

void append_num(std::string& out, double v) {
  if (std::fabs(v) < 0.0005) v = 0;  // no "-0"
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, 3);
  char* end = r.ptr;
  while (end > buf && end[-1] == '0') --end;
  if (end > buf && end[-1] == '.') --end;
  out.append(buf, end);
}

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
  if (step_ns >= 100'000'000) unit = "s", div = 1e9;
  else if (step_ns >= 100'000) unit = "ms", div = 1e6;
  else unit = "µs", div = 1e3;
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

// The block's label: family letter, micro-batch, chunk ("F3", "B0c1", "W2");
// "" for families without one (communication, unknown types).
std::string block_label(const TypeParts& p, int32_t micro_batch) {
  const char* letter = nullptr;
  switch (job_kind(p)) {
    case JobKind::kForward: letter = "F"; break;
    case JobKind::kBackward: letter = "B"; break;
    case JobKind::kBackwardWeight: letter = "W"; break;
    case JobKind::kOptimizer: return "opt";
    case JobKind::kLr: return "lr";
    default: return "";
  }
  std::string out = letter;
  if (micro_batch >= 0) out += std::to_string(micro_batch);
  if (p.chunk >= 0) out += "c" + std::to_string(p.chunk);
  return out;
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
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

class SvgWriter {
 public:
  SvgWriter(const Timeline& tl, const SvgOptions& opt, ByteSink& out)
      : tl_(tl), opt_(opt), out_(out), naming_(tl) {}

  SvgSelection write();

 private:
  void flush_if_big() {
    if (buf_.size() >= (1 << 20)) {
      out_.write(buf_);
      buf_.clear();
    }
  }
  std::string id(std::string_view what) const { return opt_.id_prefix + "-" + std::string(what); }
  double write_legend(double y, double width, const std::vector<uint32_t>& types, bool critical);
  double write_run(size_t index, const SvgRunSelection& r, double y);
  std::vector<RowGroup> layout_rows(const Run& run) const;
  double run_height(const std::vector<RowGroup>& groups) const;
  void write_axis(int64_t t0, int64_t span);
  void write_critical_paths(const SvgRunSelection& r, const std::vector<RowGroup>& groups, double scale, int64_t t0);
  std::string title_text(const SvgSelection& sel, size_t ranks) const;
  const RankStats* rank_stats(int32_t rank) const {
    auto it = rank_stats_.find(rank);
    return it == rank_stats_.end() ? nullptr : it->second;
  }

  const Timeline& tl_;
  const SvgOptions& opt_;
  ByteSink& out_;
  TraceNaming naming_;
  std::string buf_;
  double label_w_ = 80;
  double plot_w_ = 1200;
  bool staged_ = false;  // stages (and replicas) are known
  bool critical_drawn_ = false;
  double run_head_ = kRunHead;  // 0 when one run: the title says it all
  std::map<int32_t, const RankStats*> rank_stats_;
  std::vector<std::string> type_text_;   // escaped
  std::vector<std::string> type_fill_;
  std::vector<std::string> type_label_color_;
  std::vector<TypeParts> type_parts_;
  std::vector<std::vector<RowGroup>> run_rows_;  // by selection index
};

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
    bool split = groups.empty() ||
                 (replicas ? row.replica != groups.back().rows.back().replica
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
  }
  return run_head_ + kAxisH + kStepLabelH + h;
}

double SvgWriter::write_legend(double y, double width, const std::vector<uint32_t>& types, bool critical) {
  buf_ += "<g class=\"legend\">\n";
  double x = 8;
  auto place = [&](double w) {
    if (x > 8 && x + w > width) {
      x = 8;
      y += 16;
    }
  };
  for (uint32_t t : types) {
    double w = 14 + kCharW * static_cast<double>(tl_.types[t].size()) + 16;
    place(w);
    buf_ += "<g class=\"legend-item\" data-legend-type=\"";
    buf_ += type_text_[t];
    buf_ += "\"><rect x=\"";
    append_num(buf_, x);
    buf_ += "\" y=\"";
    append_num(buf_, y - 9);
    buf_ += "\" width=\"10\" height=\"10\" fill=\"";
    buf_ += type_fill_[t];
    buf_ += "\"/><text x=\"";
    append_num(buf_, x + 14);
    buf_ += "\" y=\"";
    append_num(buf_, y);
    buf_ += "\">";
    buf_ += type_text_[t];
    buf_ += "</text></g>\n";
    x += w;
  }
  if (critical) {
    const char* text = "critical path";
    double w = 14 + kCharW * 13 + 16;
    place(w);
    buf_ += "<g class=\"legend-critical\"><rect x=\"";
    append_num(buf_, x + 0.75);
    buf_ += "\" y=\"";
    append_num(buf_, y - 8.25);
    buf_ += "\" width=\"8.5\" height=\"8.5\" fill=\"none\" stroke=\"#111\" stroke-width=\"1.5\"/><text x=\"";
    append_num(buf_, x + 14);
    buf_ += "\" y=\"";
    append_num(buf_, y);
    buf_ += "\">";
    buf_ += text;
    buf_ += "</text></g>\n";
    x += w;
  }
  const char* key = "block label: F/B/W + micro-batch (c: chunk)";
  double w = kCharW * 44;
  place(w);
  buf_ += "<text class=\"legend-key\" x=\"";
  append_num(buf_, x);
  buf_ += "\" y=\"";
  append_num(buf_, y);
  buf_ += "\" fill=\"#666\">";
  buf_ += key;
  buf_ += "</text>\n</g>\n";
  return y;
}

void SvgWriter::write_axis(int64_t t0, int64_t span) {
  int64_t step = nice_step(static_cast<double>(span) / std::max(2.0, plot_w_ / 110));
  int64_t rel0 = t0 - tl_.origin_ns;
  int64_t first = rel0 >= 0 ? (rel0 + step - 1) / step * step : -((-rel0) / step * step);
  buf_ += "<line class=\"axis-line\" x1=\"0\" x2=\"";
  append_num(buf_, plot_w_);
  buf_ += "\" y1=\"20\" y2=\"20\" stroke=\"#888\"/>\n";
  for (int64_t t = first; t <= rel0 + span; t += step) {
    double x = static_cast<double>(t - rel0) * plot_w_ / static_cast<double>(span);
    buf_ += "<g class=\"tick\"><line x1=\"";
    append_num(buf_, x);
    buf_ += "\" x2=\"";
    append_num(buf_, x);
    buf_ += "\" y1=\"15\" y2=\"20\" stroke=\"#888\"/><text x=\"";
    append_num(buf_, x);
    buf_ += "\" y=\"12\" text-anchor=\"middle\" font-size=\"10\" fill=\"#555\">";
    buf_ += tick_label(t, step);
    buf_ += "</text></g>\n";
  }
}

void SvgWriter::write_critical_paths(const SvgRunSelection& r, const std::vector<RowGroup>& groups, double scale,
                                     int64_t t0) {
  if (!opt_.stats) return;
  std::map<int32_t, double> row_y;  // rank -> its row's top
  for (const RowGroup& g : groups) {
    for (const Row& row : g.rows) row_y[tl_.tracks[row.track].rank] = row.y;
  }
  auto x_of = [&](int64_t t) { return static_cast<double>(t - t0) * scale; };
  std::string clip = "url(#" + id("clip") + ")";
  bool any = false;
  for (const StepStats& st : opt_.stats->steps) {
    if (st.run != r.run || st.step < r.first_step || st.step > r.last_step) continue;
    const std::vector<CriticalHop>& hops = st.critical_path.hops;
    if (hops.empty()) continue;
    if (!any) {
      buf_ += "<g class=\"critical-path\" transform=\"translate(";
      append_num(buf_, label_w_);
      buf_ += ",0)\" clip-path=\"";
      buf_ += clip;
      buf_ += "\"><g class=\"zoom\">\n";
      any = true;
    }
    buf_ += "<g class=\"critical-step\" data-step=\"";
    append_int(buf_, st.step);
    buf_ += "\" data-hops=\"";
    append_int(buf_, static_cast<int64_t>(hops.size()));
    buf_ += "\" data-job-us=\"";
    append_us(buf_, st.critical_path.job_ns);
    buf_ += "\" data-wait-us=\"";
    append_us(buf_, st.critical_path.wait_ns);
    buf_ += "\" fill=\"none\" stroke=\"#111\" vector-effect=\"non-scaling-stroke\">\n";
    const CriticalHop* prev = nullptr;
    for (const CriticalHop& h : hops) {
      auto it = row_y.find(h.rank);
      if (it == row_y.end()) {
        prev = nullptr;
        continue;
      }
      double y = it->second;
      if (prev) {
        double py = row_y[prev->rank];
        buf_ += "<line class=\"cp-link\" x1=\"";
        append_num(buf_, x_of(prev->end_ns));
        buf_ += "\" y1=\"";
        append_num(buf_, py + kLaneH / 2);
        buf_ += "\" x2=\"";
        append_num(buf_, x_of(h.start_ns));
        buf_ += "\" y2=\"";
        append_num(buf_, y + kLaneH / 2);
        buf_ += "\" stroke-width=\"1.5\" vector-effect=\"non-scaling-stroke\"";
        if (h.from_other_rank) buf_ += " stroke-dasharray=\"3 2\"";
        buf_ += "/>\n";
      }
      buf_ += "<rect class=\"cp-hop\" x=\"";
      append_num(buf_, x_of(h.start_ns));
      buf_ += "\" y=\"";
      append_num(buf_, y + 0.75);
      buf_ += "\" width=\"";
      append_num(buf_, std::max(static_cast<double>(h.end_ns - h.start_ns) * scale, 0.5));
      buf_ += "\" height=\"";
      append_num(buf_, kLaneH - 1.5);
      buf_ += "\" data-rank=\"";
      append_int(buf_, h.rank);
      buf_ += "\" data-mb=\"";
      append_int(buf_, h.micro_batch);
      buf_ += "\" data-wait-us=\"";
      append_us(buf_, h.wait_ns);
      buf_ += "\" stroke-width=\"2\" vector-effect=\"non-scaling-stroke\"/>\n";
      prev = &h;
    }
    buf_ += "</g>\n";
  }
  if (any) buf_ += "</g></g>\n";
  critical_drawn_ = critical_drawn_ || any;
}

double SvgWriter::write_run(size_t index, const SvgRunSelection& r, double y) {
  const Run& run = tl_.runs[r.run];
  const std::vector<RowGroup>& groups = run_rows_[index];
  int64_t t0 = r.start_ns;
  int64_t span = opt_.span_ns > 0 ? opt_.span_ns : std::max<int64_t>(r.end_ns - r.start_ns, 1000);
  double scale = plot_w_ / static_cast<double>(span);
  auto x_of = [&](int64_t t) { return static_cast<double>(t - t0) * scale; };

  buf_ += "<g class=\"run\" data-run=\"";
  append_int(buf_, r.run);
  buf_ += "\" data-first-step=\"";
  append_int(buf_, r.first_step);
  buf_ += "\" data-last-step=\"";
  append_int(buf_, r.last_step);
  buf_ += "\" data-t0-us=\"";
  append_us(buf_, t0 - tl_.origin_ns);
  buf_ += "\" data-span-us=\"";
  append_us(buf_, span);
  buf_ += "\" data-plot-x=\"";
  append_num(buf_, label_w_);
  buf_ += "\" data-plot-w=\"";
  append_num(buf_, plot_w_);
  buf_ += "\" transform=\"translate(0,";
  append_num(buf_, y);
  buf_ += ")\">\n";

  // Heading.
  size_t ranks = run.tracks.size();
  std::string heading;
  if (tl_.runs.size() > 1) heading = fmt::format("run {} of {}: ", r.run + 1, tl_.runs.size());
  heading += r.first_step == r.last_step ? fmt::format("step {}", r.first_step)
                                         : fmt::format("steps {} to {}", r.first_step, r.last_step);
  heading += fmt::format(", {} rank{}, {} jobs", ranks, ranks == 1 ? "" : "s", with_commas(r.jobs));
  if (run_head_ > 0) {
    buf_ += "<text class=\"run-title\" x=\"8\" y=\"12\" font-weight=\"bold\">";
    append_xml_escaped(buf_, heading);
    buf_ += "</text>\n";
  }

  // Axis.
  double axis_y = run_head_;
  buf_ += "<g class=\"axis\" transform=\"translate(";
  append_num(buf_, label_w_);
  buf_ += ",";
  append_num(buf_, axis_y);
  buf_ += ")\">\n";
  write_axis(t0, span);
  buf_ += "</g>\n";

  // Step labels: all are written (the report moves them when zooming); those
  // that would overlap the previous one are hidden.
  std::vector<const StepSpan*> spans;
  for (const StepSpan& s : run.steps) {
    if (s.number >= r.first_step && s.number <= r.last_step) spans.push_back(&s);
  }
  double labels_y = axis_y + kAxisH;
  buf_ += "<text class=\"steps-caption\" x=\"";
  append_num(buf_, label_w_ - 6);
  buf_ += "\" y=\"";
  append_num(buf_, labels_y + 10);
  buf_ += "\" text-anchor=\"end\" font-size=\"10\" fill=\"#555\">step</text>\n";
  buf_ += "<g class=\"step-labels\" transform=\"translate(";
  append_num(buf_, label_w_);
  buf_ += ",";
  append_num(buf_, labels_y + 10);
  buf_ += ")\">\n";
  double last_end = -1e9;
  for (const StepSpan* s : spans) {
    double x = x_of(s->start_ns) + 2;
    std::string text = std::to_string(s->number);
    double w = kCharW * static_cast<double>(text.size()) + 6;
    bool visible = x >= last_end && x + w <= plot_w_ + 4;
    if (visible) last_end = x + w;
    buf_ += "<text class=\"step-label\" data-step=\"";
    append_int(buf_, s->number);
    buf_ += "\" data-x=\"";
    append_num(buf_, x);
    buf_ += "\" x=\"";
    append_num(buf_, x);
    buf_ += "\" y=\"0\" font-size=\"10\" fill=\"#555\"";
    if (!visible) buf_ += " visibility=\"hidden\"";
    buf_ += ">";
    buf_ += text;
    buf_ += "</text>\n";
  }
  buf_ += "</g>\n";

  // Rows, group by group.
  double rows_y = labels_y + kStepLabelH;
  buf_ += "<g class=\"rows\" transform=\"translate(0,";
  append_num(buf_, rows_y);
  buf_ += ")\">\n";
  std::string clip = "url(#" + id("clip") + ")";
  std::string label;
  for (const RowGroup& g : groups) {
    if (!g.heading.empty()) {
      buf_ += "<g class=\"group\"";
      if (g.rows.front().replica >= 0) {
        buf_ += " data-replica=\"";
        append_int(buf_, g.rows.front().replica);
        buf_ += "\"";
      }
      buf_ += "><rect class=\"group-band\" x=\"0\" y=\"";
      append_num(buf_, g.y);
      buf_ += "\" width=\"";
      append_num(buf_, label_w_ + plot_w_);
      buf_ += "\" height=\"";
      append_num(buf_, kGroupHead - 2);
      buf_ += "\" fill=\"#f4f4f4\"/><text class=\"group-label\" x=\"8\" y=\"";
      append_num(buf_, g.y + kGroupHead - 5);
      buf_ += "\" font-size=\"10\" font-weight=\"bold\" fill=\"#444\">";
      append_xml_escaped(buf_, g.heading);
      buf_ += "</text></g>\n";
    }
    for (const Row& row : g.rows) {
      const Track& t = tl_.tracks[row.track];
      double row_h = t.lanes * kLaneH + (t.lanes - 1) * kLaneGap;
      buf_ += "<g class=\"rank\" data-rank=\"";
      append_int(buf_, t.rank);
      buf_ += "\" data-machine=\"";
      append_int(buf_, t.machine);
      if (row.stage >= 0) {
        buf_ += "\" data-stage=\"";
        append_int(buf_, row.stage);
      }
      if (row.replica >= 0) {
        buf_ += "\" data-replica=\"";
        append_int(buf_, row.replica);
      }
      buf_ += "\" data-lanes=\"";
      append_int(buf_, t.lanes);
      buf_ += "\" data-label=\"";
      append_xml_escaped(buf_, naming_.thread_name(t, 0));
      buf_ += "\" data-src=\"";
      append_xml_escaped(buf_, tl_.files[t.file].path);
      buf_ += "\" transform=\"translate(0,";
      append_num(buf_, row.y);
      buf_ += ")\">\n<text class=\"rank-label\" x=\"";
      append_num(buf_, label_w_ - 6);
      buf_ += "\" y=\"";
      append_num(buf_, std::min(row_h, kLaneH) / 2 + 4);
      buf_ += "\" text-anchor=\"end\">";
      append_xml_escaped(buf_, row.label);
      buf_ += "</text>\n<g transform=\"translate(";
      append_num(buf_, label_w_);
      buf_ += ",0)\" clip-path=\"";
      buf_ += clip;
      buf_ += "\"><g class=\"zoom\">\n<rect class=\"row-bg\" x=\"0\" y=\"0\" width=\"";
      append_num(buf_, plot_w_);
      buf_ += "\" height=\"";
      append_num(buf_, row_h);
      buf_ += "\" fill=\"#ececec\"/>\n";
      std::string labels;  // the blocks' labels, over all the rectangles
      for (const Job& j : t.jobs) {
        if (j.step < r.first_step || j.step > r.last_step) continue;
        double x = x_of(j.start_ns);
        double w = std::max(static_cast<double>(j.end_ns - j.start_ns) * scale, 0.05);
        double jy = j.lane * (kLaneH + kLaneGap);
        const TypeParts& parts = type_parts_[j.type];
        buf_ += "<rect class=\"job\" x=\"";
        append_num(buf_, x);
        buf_ += "\" y=\"";
        append_num(buf_, jy);
        buf_ += "\" width=\"";
        append_num(buf_, w);
        buf_ += "\" height=\"";
        append_num(buf_, kLaneH);
        buf_ += "\" fill=\"";
        buf_ += type_fill_[j.type];
        if (w < kThinPx) buf_ += "\" style=\"stroke:none";
        buf_ += "\" data-name=\"";
        append_job_name(buf_, type_text_[j.type], j.micro_batch, j.job_id);
        buf_ += "\" data-job=\"";
        append_int(buf_, j.job_id);
        buf_ += "\" data-type=\"";
        buf_ += type_text_[j.type];
        buf_ += "\" data-mb=\"";
        append_int(buf_, j.micro_batch);
        if (parts.chunk >= 0) {
          buf_ += "\" data-chunk=\"";
          append_int(buf_, parts.chunk);
        }
        buf_ += "\" data-step=\"";
        append_int(buf_, j.step);
        buf_ += "\" data-line=\"";
        append_int(buf_, j.line);
        buf_ += "\" data-start-us=\"";
        append_us(buf_, j.start_ns - tl_.origin_ns);
        buf_ += "\" data-dur-us=\"";
        append_us(buf_, j.end_ns - j.start_ns);
        if (j.lane > 0) {
          buf_ += "\" data-lane=\"";
          append_int(buf_, j.lane);
        }
        if (opt_.embedded) {
          buf_ += "\"/>\n";  // the page shows its own card on hover
        } else {
          buf_ += "\"><title>";
          append_job_name(buf_, type_text_[j.type], j.micro_batch, j.job_id);
          buf_ += " · step ";
          append_int(buf_, j.step);
          buf_ += " · ";
          append_xml_escaped(buf_, row.label);
          buf_ += fmt::format(" · {} at {}", duration_text(j.end_ns - j.start_ns),
                              duration_text(j.start_ns - tl_.origin_ns));
          buf_ += "</title></rect>\n";
        }
        if (opt_.labels) {
          std::string text = block_label(parts, j.micro_batch);
          if (!text.empty() && kLabelCharW * static_cast<double>(text.size()) + 4 <= w) {
            labels += "<text x=\"";
            append_num(labels, x + w / 2);
            labels += "\" y=\"";
            append_num(labels, jy + kLaneH / 2 + 3.5);
            if (opt_.embedded) {
              // The page re-scales the time axis (html_report.cc): it keeps
              // the label's glyphs upright and hides it when its block
              // becomes too narrow, from the block's width.
              labels += "\" data-w=\"";
              append_num(labels, w);
            }
            labels += "\" fill=\"";
            labels += type_label_color_[j.type];
            labels += "\">";
            labels += text;
            labels += "</text>\n";
          }
        }
        flush_if_big();
      }
      if (!labels.empty()) {
        buf_ += "<g class=\"job-labels\" font-size=\"10\" text-anchor=\"middle\" pointer-events=\"none\">\n";
        buf_ += labels;
        buf_ += "</g>\n";
      }
      buf_ += "</g></g>\n</g>\n";
    }
  }
  double rows_h = run_height(groups) - (run_head_ + kAxisH + kStepLabelH);

  // Step boundaries, over the rows.
  buf_ += "<g class=\"steps\" transform=\"translate(";
  append_num(buf_, label_w_);
  buf_ += ",0)\" clip-path=\"";
  buf_ += clip;
  buf_ += "\"><g class=\"zoom\">\n";
  auto boundary = [&](int64_t t, int32_t step, const char* cls) {
    double x = x_of(t);
    buf_ += "<line class=\"";
    buf_ += cls;
    buf_ += "\" data-step=\"";
    append_int(buf_, step);
    buf_ += "\" x1=\"";
    append_num(buf_, x);
    buf_ += "\" x2=\"";
    append_num(buf_, x);
    buf_ += "\" y1=\"-4\" y2=\"";
    append_num(buf_, rows_h + 2);
    buf_ += "\" stroke=\"#333\" stroke-opacity=\"0.55\" stroke-dasharray=\"3 2\" vector-effect=\"non-scaling-stroke\"/>\n";
  };
  for (const StepSpan* s : spans) boundary(s->start_ns, s->number, "step-line");
  if (!spans.empty()) boundary(spans.back()->end_ns, spans.back()->number, "step-line step-end");
  buf_ += "</g></g>\n";
  write_critical_paths(r, groups, scale, t0);
  buf_ += "</g>\n</g>\n";
  return rows_y + rows_h;
}

std::string SvgWriter::title_text(const SvgSelection& sel, size_t ranks) const {
  std::vector<std::string> parts;
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
  size_t steps_total = 0;
  for (const Run& run : tl_.runs) steps_total += run.steps.size();
  if (sel.runs.size() == 1) {
    const SvgRunSelection& r = sel.runs.front();
    std::string s = r.first_step == r.last_step ? fmt::format("step {}", r.first_step)
                                                : fmt::format("steps {}-{}", r.first_step, r.last_step);
    if (sel.slowest) s += fmt::format(" (slowest of {})", steps_total);
    else s += fmt::format(" of {}", steps_total);
    parts.push_back(s);
  } else if (!sel.runs.empty()) {
    parts.push_back(fmt::format("{} runs, {} steps", sel.runs.size(), steps_total));
  }
  // Bubble of the drawn steps, measured; the schedule's ideal.
  if (st) {
    double idle = 0, span = 0;
    for (const StepStats& s : st->steps) {
      for (const SvgRunSelection& r : sel.runs) {
        if (s.run == r.run && s.step >= r.first_step && s.step <= r.last_step) {
          idle += static_cast<double>(s.idle_ns);
          span += static_cast<double>(s.busy_ns + s.idle_ns);
        }
      }
    }
    std::string bubble;
    if (span > 0) bubble = fmt::format("bubble {:.1f}%", 100 * idle / span);
    if (st->schedule.ideal_bubble_ratio >= 0) {
      bubble += fmt::format("{}ideal {:.1f}%", bubble.empty() ? "" : " (", 100 * st->schedule.ideal_bubble_ratio);
      if (span > 0) bubble += ")";
    }
    if (!bubble.empty()) parts.push_back(bubble);
  }
  parts.push_back(fmt::format("{} job{}", with_commas(sel.jobs), sel.jobs == 1 ? "" : "s"));
  return fmt::format("{}", fmt::join(parts, " · "));
}

SvgSelection SvgWriter::write() {
  SvgSelection sel = select_for_svg(tl_, opt_);
  if (opt_.stats) {
    for (const RankStats& rs : opt_.stats->ranks) rank_stats_[rs.rank] = &rs;
    staged_ = opt_.stats->schedule.pp_degree > 1;
  }
  for (const SvgRunSelection& r : sel.runs) run_rows_.push_back(layout_rows(tl_.runs[r.run]));
  run_head_ = sel.runs.size() > 1 ? kRunHead : 0;
  size_t longest = 4;
  for (const auto& groups : run_rows_) {
    for (const RowGroup& g : groups) {
      for (const Row& row : g.rows) longest = std::max(longest, utf8_length(row.label));
    }
  }
  label_w_ = std::clamp(kCharW * static_cast<double>(longest) + 14, 60.0, 360.0);
  plot_w_ = std::max(100.0, opt_.width > 0 ? opt_.width - label_w_ - kRight : opt_.plot_width);
  double width = label_w_ + plot_w_ + kRight;

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
  // Types drawn, for the legend.
  std::vector<uint8_t> used(tl_.types.size(), 0);
  std::set<uint32_t> ranks;
  for (const SvgRunSelection& r : sel.runs) {
    for (uint32_t ti : tl_.runs[r.run].tracks) {
      ranks.insert(static_cast<uint32_t>(tl_.tracks[ti].rank));
      for (const Job& j : tl_.tracks[ti].jobs) {
        if (j.step >= r.first_step && j.step <= r.last_step) used[j.type] = 1;
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
  bool critical = false;
  if (opt_.stats) {
    for (const StepStats& s : opt_.stats->steps) {
      for (const SvgRunSelection& r : sel.runs) {
        critical = critical || (s.run == r.run && s.step >= r.first_step && s.step <= r.last_step &&
                                !s.critical_path.hops.empty());
      }
    }
  }

  std::string head_title = opt_.title.empty() ? title_text(sel, ranks.size()) : opt_.title;
  // Title, note and legend first: their height decides where the runs go.
  buf_.clear();
  double y = 20;
  buf_ += "<text class=\"title\" x=\"8\" y=\"18\" font-size=\"13\" font-weight=\"bold\">";
  append_xml_escaped(buf_, head_title);
  buf_ += "</text>\n";
  if (!sel.note.empty()) {
    buf_ += "<text class=\"note\" x=\"8\" y=\"";
    append_num(buf_, y + 14);
    buf_ += "\" fill=\"#a04000\">";
    append_xml_escaped(buf_, sel.note);
    buf_ += "</text>\n";
    y += 16;
  }
  y = write_legend(y + 22, width - 8, legend, critical) + 12;
  std::string header = std::move(buf_);

  std::vector<double> run_y;
  for (const auto& groups : run_rows_) {
    run_y.push_back(y);
    y += run_height(groups) + kRunGap;
  }
  double height = std::max(y, 60.0);

  buf_.clear();
  if (!opt_.embedded) buf_ += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  buf_ += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"ppt-timeline\" id=\"";
  append_xml_escaped(buf_, opt_.id_prefix);
  buf_ += "\" width=\"";
  append_num(buf_, width);
  buf_ += "\" height=\"";
  append_num(buf_, height);
  buf_ += "\" viewBox=\"0 0 ";
  append_num(buf_, width);
  buf_ += " ";
  append_num(buf_, height);
  buf_ += "\" font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\" font-size=\"11\" data-jobs=\"";
  append_int(buf_, static_cast<int64_t>(sel.jobs));
  buf_ += "\" data-jobs-in-range=\"";
  append_int(buf_, static_cast<int64_t>(sel.jobs_in_range));
  buf_ += "\"";
  if (!opt_.sync.empty()) {
    buf_ += " data-sync=\"";
    append_xml_escaped(buf_, opt_.sync);
    buf_ += "\"";
  }
  buf_ += ">\n<title>";
  append_xml_escaped(buf_, head_title);
  buf_ += "</title>\n<style>svg.ppt-timeline rect.job { stroke: #ffffff; stroke-width: 0.75px; "
          "vector-effect: non-scaling-stroke; }</style>\n<defs><clipPath id=\"";
  append_xml_escaped(buf_, id("clip"));
  buf_ += "\"><rect x=\"0\" y=\"-10\" width=\"";
  append_num(buf_, plot_w_);
  buf_ += "\" height=\"1000000\"/></clipPath></defs>\n";
  buf_ += "<rect class=\"background\" x=\"0\" y=\"0\" width=\"";
  append_num(buf_, width);
  buf_ += "\" height=\"";
  append_num(buf_, height);
  buf_ += "\" fill=\"#ffffff\"/>\n";
  buf_ += header;
  for (size_t i = 0; i < sel.runs.size(); ++i) {
    write_run(i, sel.runs[i], run_y[i]);
    flush_if_big();
  }
  if (sel.runs.empty()) {
    buf_ += "<text class=\"empty\" x=\"8\" y=\"";
    append_num(buf_, height - 20);
    buf_ += "\">nothing to draw</text>\n";
  }
  buf_ += "</svg>\n";
  out_.write(buf_);
  buf_.clear();
  return sel;
}

}  // namespace

SvgSelection write_svg(const Timeline& timeline, const SvgOptions& options, ByteSink& out) {
  SvgWriter w(timeline, options, out);
  return w.write();
}

}  // namespace ppt
