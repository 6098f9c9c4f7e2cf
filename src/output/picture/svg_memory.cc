// The SVG picture's memory strips (Track::memory): under a rank's lanes,
// allocated memory as a filled step area and reserved as a step line on the
// run's scale, a mark at the peak, a tooltip; "peak 12.34 GiB" in the label
// column.
#include "output/picture/svg_parts.h"

#include <fmt/format.h>

#include <algorithm>

#include "output/picture/svg_element.h"
#include "output/trace/chrome_json_writer.h"

namespace ppt::svg {

namespace {

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

}  // namespace

// The highest reserved sample over each run's drawn tracks (at least
// SvgOptions::memory_top_bytes): the run's strips share that scale. Nothing
// without samples in the drawn range.
void SvgWriter::measure_memory() {
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

}  // namespace ppt::svg
