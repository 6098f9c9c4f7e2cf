// The SVG picture's entry point (svg_writer.h): the layout (label column,
// plot width, rows grouped by replica or machine, runs stacked), the title,
// and the picture written part by part (svg_parts.h names the modules).
#include "output/picture/svg_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "output/picture/block_label.h"
#include "output/picture/palette.h"
#include "output/picture/svg_element.h"
#include "output/picture/svg_parts.h"
#include "output/text/summary.h"
#include "util/text.h"

namespace ppt {
namespace svg {

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

void SvgWriter::write() {
  if (opt_.stats) {
    for (const RankStats& rs : opt_.stats->ranks) rank_stats_[rs.rank] = &rs;
    staged_ = opt_.stats->schedule.pp_degree > 1;
  }
  clip_ = "url(#" + id("clip") + ")";
  measure_memory();
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

}  // namespace svg

void write_svg(const Timeline& timeline, const PictureSelection& selection, const SvgOptions& options, ByteSink& out) {
  svg::SvgWriter w(timeline, selection, options, out);
  w.write();
}

}  // namespace ppt
