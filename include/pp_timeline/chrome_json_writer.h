// Writes the timeline as Chrome Trace Event JSON, in two flavours:
//  - kChrome: for chrome://tracing and the legacy viewer: `cname` colours;
//  - kPerfetto: for ui.perfetto.dev: no `cname` (Perfetto ignores it).
// Both use integer pids and tids (trace_naming.h), M events for names and
// sort order, B/E pairs per job (a job that ends where the next begins prints
// the same number for both, so no viewer can see them overlap), and
// timestamps in microseconds printed exactly from integer nanoseconds.
#pragma once

#include "pp_timeline/byte_sink.h"
#include "pp_timeline/timeline.h"

namespace ppt {

enum class JsonFlavor { kChrome, kPerfetto };

struct JsonWriteOptions {
  JsonFlavor flavor = JsonFlavor::kChrome;
  bool absolute = false;  // epoch microseconds instead of rebasing to Timeline::origin_ns
};

void write_chrome_json(const Timeline& timeline, const JsonWriteOptions& options, ByteSink& out);

// Appends `s` as the inside of a JSON string (no quotes); invalid UTF-8 bytes
// become U+FFFD, control characters \u escapes.
void append_json_escaped(std::string& out, std::string_view s);

// Appends ns / 1000 as a decimal number of microseconds, exact (trailing
// zeros of the fraction dropped).
void append_us(std::string& out, int64_t ns);

}  // namespace ppt
