// The SVG picture's writer, shared by the modules that draw its parts
// (svg_writer.h says what the picture shows):
//   svg_writer.cc         the entry point, the layout (columns, rows, runs), the title
//   svg_frame.cc          the document, header and legend, each run's frame: axis, step labels and lines
//   svg_jobs.cc           the rows: group headings, rank labels, job blocks and their labels
//   svg_critical_path.cc  each drawn step's critical path: hops and the links between them
//   svg_memory.cc         the memory strips and their labels
// Every element is written through svg_element.h. Internal to the picture.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/stats.h"
#include "model/job_types.h"
#include "model/timeline.h"
#include "output/picture/picture_selection.h"
#include "output/picture/svg_options.h"
#include "output/sink/byte_sink.h"
#include "output/trace/trace_naming.h"

namespace ppt::svg {

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

// The picture being written: its options, its layout (label column, plot
// width, rows), what each type looks like, and the markup written so far.
// Each module defines the members that draw its part.
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
  // svg_writer.cc: the layout, the title, what is drawn, each run in turn.
  std::vector<RowGroup> layout_rows(const Run& run) const;
  double run_height(const std::vector<RowGroup>& groups) const;
  void prepare_types();
  std::vector<uint32_t> legend_types() const;
  bool draws_critical_paths() const;
  bool draws_block_labels() const;
  std::string picture_title() const;
  std::string title_text(size_t ranks) const;
  // One run: its group, heading, axis, step labels, rows, step lines, critical paths.
  void write_run(size_t index, const PictureRun& r, double y);
  // svg_frame.cc: the document, its header and legend; a run's frame.
  std::string header(double width, const std::string& title, double* y);
  void open_svg(double width, double height, const std::string& title);
  double write_legend(double y, double width, const std::vector<uint32_t>& types, bool critical, bool labels);
  void open_run(const RunFrame& f, double y);
  void write_run_heading(const RunFrame& f);
  void write_axis(int64_t t0, int64_t span);
  std::vector<const StepSpan*> drawn_steps(const RunFrame& f) const;
  void write_step_labels(const RunFrame& f, const std::vector<const StepSpan*>& spans, double y);
  void open_plot(const char* cls);
  void write_step_lines(const RunFrame& f, const std::vector<const StepSpan*>& spans, double rows_h);
  // svg_jobs.cc: the rows, their jobs and labels.
  void write_rows(const RunFrame& f, double y);
  void write_group_heading(const RowGroup& g);
  void write_row(const RunFrame& f, const Row& row);
  void write_job(const Job& j, const Row& row, double x, double w, double y);
  void append_job_label(std::string& labels, const Job& j, double x, double w, double y) const;
  // svg_critical_path.cc
  void write_critical_paths(const RunFrame& f);
  void write_critical_hops(const RunFrame& f, const std::vector<CriticalHop>& hops,
                           const std::map<int32_t, double>& row_y);
  // svg_memory.cc (Track::memory): the strip under a rank's lanes, its label;
  // the legend's key when drawn.
  bool draws_memory() const { return memory_max_ > 0; }
  double strip_h() const { return draws_memory() ? kMemGap + kMemH : 0; }
  void measure_memory();
  void write_memory_label(const RunFrame& f, const Track& t, double row_h);
  void write_memory_strip(const RunFrame& f, const Track& t, double row_h);
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

}  // namespace ppt::svg
