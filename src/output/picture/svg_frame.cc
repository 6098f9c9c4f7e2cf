// The SVG picture's frame: the document and its header (title, note,
// legend), and each run's frame: its group, heading, time axis, step labels,
// the plot layer's opening and the step lines.
#include "output/picture/svg_parts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "output/picture/svg_element.h"
#include "output/picture/xml_escape.h"
#include "output/text/summary.h"
#include "util/text.h"

namespace ppt::svg {

namespace {

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

}  // namespace

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

// The plot's layer of a run (the rows' jobs, the step lines, the critical
// paths): right of the labels, clipped to the plot, zoomed by the page.
// Closed by "</g></g>\n".
void SvgWriter::open_plot(const char* cls) {
  SvgElement plot(buf_, "g");
  if (cls) plot.attr("class", cls);
  plot.translate(label_w_, 0).attr_escaped("clip-path", clip_).open("");
  SvgElement(buf_, "g").attr("class", "zoom").open();
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

}  // namespace ppt::svg
