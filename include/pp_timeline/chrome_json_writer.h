// Writes the timeline as Chrome Trace Event JSON, in two flavours:
//  - kChrome: for chrome://tracing and the legacy viewer: `cname` colours;
//  - kPerfetto: for ui.perfetto.dev: no `cname` (Perfetto ignores it).
// Both use integer pids and tids (trace_naming.h), M events for names and
// sort order, B/E pairs per job (a job that ends where the next begins prints
// the same number for both, so no viewer can see them overlap), and
// timestamps in microseconds printed exactly from integer nanoseconds.
//
// Flow arrows (when `dependencies` is given, dependencies.h): one flow per
// dependency, id = its index + 1, as an `s` event inside the producer's slice
// and an `f` event with "bp":"e" inside the consumer's, on their tracks; both
// viewers draw these (flow v2's single bind_id per slice cannot carry a job
// that consumes one arrow and produces another). The events sit 1 us inside
// the slices (half the job when shorter), at the producer's end and the
// consumer's start, or at the producer's start and the consumer's end when the
// times contradict the dependency, so that the arrow still goes forward in
// time; such flows are named "<kind> (contradicted by the times)".
//
// A track whose clock was shifted (Track::clock_offset_ns) gives each job
// `logged_start_ms` / `logged_end_ms` args: the times as logged, in the log's
// own text form.
#pragma once

#include "pp_timeline/byte_sink.h"
#include "pp_timeline/timeline.h"

namespace ppt {

struct Dependencies;

enum class JsonFlavor { kChrome, kPerfetto };

struct JsonWriteOptions {
  JsonFlavor flavor = JsonFlavor::kChrome;
  bool absolute = false;  // epoch microseconds instead of rebasing to Timeline::origin_ns
  const Dependencies* dependencies = nullptr;  // flow arrows; null: none
};

void write_chrome_json(const Timeline& timeline, const JsonWriteOptions& options, ByteSink& out);

// Appends `s` as the inside of a JSON string (no quotes); invalid UTF-8 bytes
// become U+FFFD, control characters \u escapes.
void append_json_escaped(std::string& out, std::string_view s);

// Appends ns / 1000 as a decimal number of microseconds, exact (trailing
// zeros of the fraction dropped).
void append_us(std::string& out, int64_t ns);

}  // namespace ppt
