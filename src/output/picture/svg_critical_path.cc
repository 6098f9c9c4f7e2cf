// The SVG picture's critical paths (analysis/critical_path.h): each drawn
// step's hops outlined over the rows, narrow neighbours merged, and the links
// between them (dashed when a hop crosses ranks).
#include "output/picture/svg_parts.h"

#include <algorithm>

#include "output/picture/svg_element.h"

namespace ppt::svg {

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

}  // namespace ppt::svg
