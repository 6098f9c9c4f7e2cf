#include "output/svg_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "output/chrome_json_writer.h"
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
          if (c < 0x20) out += "\xEF\xBF\xBD";  // XML 1.0 has no way to carry these
          else out.push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    // A multi-byte sequence: copy it when it is well-formed UTF-8 and a
    // character XML 1.0 allows (its Char production also leaves out U+FFFE
    // and U+FFFF, which UTF-8 itself allows), else U+FFFD per byte.
    size_t n = utf8_sequence_length(s, i);
    bool ok = n > 0;
    if (ok && n == 3) {
      char32_t cp = utf8_code_point(s, i, n);
      ok = cp != 0xFFFE && cp != 0xFFFF;
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

std::optional<StepRange> parse_step_range(std::string_view text, std::string* error) {
  StepRange r;
  size_t colon = text.find(':');
  bool ok;
  if (colon == std::string_view::npos) {
    ok = parse_whole_number(text, &r.first);
    r.last = r.first;
  } else {
    std::string_view a = text.substr(0, colon), b = text.substr(colon + 1);
    ok = !(a.empty() && b.empty());
    if (ok && !a.empty()) ok = parse_whole_number(a, &r.first);
    if (ok && !b.empty()) ok = parse_whole_number(b, &r.last);
  }
  if (!ok) {
    *error = fmt::format("'{}': give steps as A:B (A to B included), A:, :B or A", text);
    return std::nullopt;
  }
  if (r.first > r.last) {
    *error = fmt::format("'{}': the first step is after the last", text);
    return std::nullopt;
  }
  return r;
}

// ---------------------------------------------------------------------------
// Selection

SvgSelection select_for_svg(const Timeline& tl, const SvgOptions& opt) {
  SvgSelection sel;
  StepRange range = opt.steps.value_or(StepRange{});
  struct StepInfo {
    size_t jobs = 0;
    int64_t first = INT64_MAX, last = INT64_MIN;
  };
  std::vector<std::string> shown;
  bool stop = false;
  int32_t any_min = INT32_MAX, any_max = INT32_MIN;
  for (const Run& run : tl.runs) {
    std::map<int32_t, StepInfo> steps;
    for (uint32_t ti : run.tracks) {
      for (const Job& j : tl.tracks[ti].jobs) {
        any_min = std::min(any_min, j.step);
        any_max = std::max(any_max, j.step);
        if (!range.contains(j.step)) continue;
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
  if (sel.capped) {
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

constexpr double kLaneH = 14;
constexpr double kLaneGap = 2;
constexpr double kRowGap = 5;
constexpr double kCharW = 6.6;   // average advance of an 11 px sans-serif character
constexpr double kRight = 16;
constexpr double kAxisH = 24;
constexpr double kStepLabelH = 14;
constexpr double kRunGap = 22;
constexpr double kRunHead = 18;   // the run's heading, above its axis

void append_num(std::string& out, double v) {
  if (std::fabs(v) < 0.0005) v = 0;  // no "-0"
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, 3);
  char* end = r.ptr;
  while (end > buf && end[-1] == '0') --end;
  if (end > buf && end[-1] == '.') --end;
  out.append(buf, end);
}

void append_int(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
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
  double write_legend(double y, double width, const std::vector<uint32_t>& types);
  double write_run(const SvgRunSelection& r, double y);
  double rows_height(const Run& run) const {
    double h = 0;
    for (uint32_t ti : run.tracks) h += tl_.tracks[ti].lanes * (kLaneH + kLaneGap) - kLaneGap + kRowGap;
    return run.tracks.empty() ? 0 : h - kRowGap;
  }
  double run_height(const Run& run) const { return kRunHead + kAxisH + kStepLabelH + rows_height(run); }
  void write_axis(int64_t t0, int64_t span);

  const Timeline& tl_;
  const SvgOptions& opt_;
  ByteSink& out_;
  TraceNaming naming_;
  std::string buf_;
  double label_w_ = 80;
  double plot_w_ = 1200;
  std::vector<std::string> type_text_;   // escaped
  std::vector<std::string> type_fill_;
};

double SvgWriter::write_legend(double y, double width, const std::vector<uint32_t>& types) {
  buf_ += "<g class=\"legend\">\n";
  double x = 8;
  for (uint32_t t : types) {
    double w = 14 + kCharW * static_cast<double>(tl_.types[t].size()) + 16;
    if (x > 8 && x + w > width) {
      x = 8;
      y += 16;
    }
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
  buf_ += "</g>\n";
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

double SvgWriter::write_run(const SvgRunSelection& r, double y) {
  const Run& run = tl_.runs[r.run];
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
  buf_ += "<text class=\"run-title\" x=\"8\" y=\"12\" font-weight=\"bold\">";
  append_xml_escaped(buf_, heading);
  buf_ += "</text>\n";

  // Axis.
  double axis_y = kRunHead;
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

  // Rows.
  double rows_y = labels_y + kStepLabelH;
  buf_ += "<g class=\"rows\" transform=\"translate(0,";
  append_num(buf_, rows_y);
  buf_ += ")\">\n";
  double row_y = 0;
  std::string clip = "url(#" + id("clip") + ")";
  for (uint32_t ti : run.tracks) {
    const Track& t = tl_.tracks[ti];
    double row_h = t.lanes * kLaneH + (t.lanes - 1) * kLaneGap;
    std::string label = naming_.thread_name(t, 0);
    buf_ += "<g class=\"rank\" data-rank=\"";
    append_int(buf_, t.rank);
    buf_ += "\" data-machine=\"";
    append_int(buf_, t.machine);
    buf_ += "\" data-lanes=\"";
    append_int(buf_, t.lanes);
    buf_ += "\" data-label=\"";
    append_xml_escaped(buf_, label);
    buf_ += "\" data-src=\"";
    append_xml_escaped(buf_, tl_.files[t.file].path);
    buf_ += "\" transform=\"translate(0,";
    append_num(buf_, row_y);
    buf_ += ")\">\n<text class=\"rank-label\" x=\"";
    append_num(buf_, label_w_ - 6);
    buf_ += "\" y=\"";
    append_num(buf_, std::min(row_h, kLaneH) - 3);
    buf_ += "\" text-anchor=\"end\">";
    append_xml_escaped(buf_, label);
    buf_ += "</text>\n<g transform=\"translate(";
    append_num(buf_, label_w_);
    buf_ += ",0)\" clip-path=\"";
    buf_ += clip;
    buf_ += "\"><g class=\"zoom\">\n<rect class=\"row-bg\" x=\"0\" y=\"0\" width=\"";
    append_num(buf_, plot_w_);
    buf_ += "\" height=\"";
    append_num(buf_, row_h);
    buf_ += "\" fill=\"#ececec\"/>\n";
    for (const Job& j : t.jobs) {
      if (j.step < r.first_step || j.step > r.last_step) continue;
      double x = x_of(j.start_ns);
      double w = std::max(static_cast<double>(j.end_ns - j.start_ns) * scale, 0.05);
      buf_ += "<rect class=\"job\" x=\"";
      append_num(buf_, x);
      buf_ += "\" y=\"";
      append_num(buf_, j.lane * (kLaneH + kLaneGap));
      buf_ += "\" width=\"";
      append_num(buf_, w);
      buf_ += "\" height=\"";
      append_num(buf_, kLaneH);
      buf_ += "\" fill=\"";
      buf_ += type_fill_[j.type];
      buf_ += "\" data-name=\"";
      append_job_name(buf_, type_text_[j.type], j.micro_batch, j.job_id);
      buf_ += "\" data-job=\"";
      append_int(buf_, j.job_id);
      buf_ += "\" data-type=\"";
      buf_ += type_text_[j.type];
      buf_ += "\" data-mb=\"";
      append_int(buf_, j.micro_batch);
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
      buf_ += "\"/>\n";
      flush_if_big();
    }
    buf_ += "</g></g>\n</g>\n";
    row_y += row_h + kRowGap;
  }
  double rows_h = std::max(0.0, row_y - kRowGap);

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
  buf_ += "</g></g>\n</g>\n</g>\n";
  return rows_y + rows_h;
}

SvgSelection SvgWriter::write() {
  SvgSelection sel = select_for_svg(tl_, opt_);
  plot_w_ = std::max(100.0, opt_.plot_width);
  size_t longest = 4;
  for (const Track& t : tl_.tracks) longest = std::max(longest, naming_.thread_name(t, 0).size());
  label_w_ = std::clamp(kCharW * static_cast<double>(longest) + 14, 60.0, 360.0);
  double width = label_w_ + plot_w_ + kRight;

  type_text_.resize(tl_.types.size());
  type_fill_.resize(tl_.types.size());
  for (size_t i = 0; i < tl_.types.size(); ++i) {
    type_text_[i] = xml_escaped(tl_.types[i]);
    type_fill_[i] = type_color(tl_.types[i]);
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
  std::vector<TypeParts> parts(tl_.types.size());
  for (uint32_t i = 0; i < used.size(); ++i) {
    if (!used[i]) continue;
    legend.push_back(i);
    parts[i] = split_type(tl_.types[i]);
  }
  std::sort(legend.begin(), legend.end(), [&](uint32_t a, uint32_t b) {
    const TypeParts &pa = parts[a], &pb = parts[b];
    return std::make_tuple(legend_rank(pa), pa.base, pa.chunk, pa.suffix, tl_.types[a]) <
           std::make_tuple(legend_rank(pb), pb.base, pb.chunk, pb.suffix, tl_.types[b]);
  });

  std::string head_title = opt_.title;
  if (head_title.empty()) {
    head_title = fmt::format("pp-timeline: {} rank{}, {} job{} drawn", ranks.size(), ranks.size() == 1 ? "" : "s",
                             with_commas(sel.jobs), sel.jobs == 1 ? "" : "s");
  }
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
  y = write_legend(y + 22, width - 8, legend) + 12;
  std::string header = std::move(buf_);

  std::vector<double> run_y;
  for (const SvgRunSelection& r : sel.runs) {
    run_y.push_back(y);
    y += run_height(tl_.runs[r.run]) + kRunGap;
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
  buf_ += "</title>\n<defs><clipPath id=\"";
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
    write_run(sel.runs[i], run_y[i]);
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
