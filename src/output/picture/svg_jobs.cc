// The SVG picture's rows: a replica's (or machine's) heading band, and per
// rank its label, its background, its job blocks (with a tooltip, or the data
// the report's cards read) and the labels that fit them (block_label.h).
#include "output/picture/svg_parts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "output/picture/block_label.h"
#include "output/picture/svg_element.h"
#include "output/picture/xml_escape.h"
#include "output/trace/chrome_json_writer.h"

namespace ppt::svg {

namespace {

// "1.234 ms", "12.3 µs", "1.50 s".
std::string duration_text(int64_t ns) {
  double a = std::fabs(static_cast<double>(ns));
  if (a >= 1e9) return fmt::format("{:.2f} s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  return fmt::format("{:.1f} µs", ns / 1e3);
}

}  // namespace

void SvgWriter::write_rows(const RunFrame& f, double y) {
  SvgElement(buf_, "g").attr("class", "rows").translate(0, y).open();
  for (const RowGroup& g : *f.groups) {
    if (!g.heading.empty()) write_group_heading(g);
    for (const Row& row : g.rows) write_row(f, row);
  }
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

}  // namespace ppt::svg
