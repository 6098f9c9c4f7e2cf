// Writes the timeline as Chrome Trace Event JSON, in two flavours:
//  - kChrome: for chrome://tracing and the legacy viewer: `cname` colours;
//  - kPerfetto: for ui.perfetto.dev: no `cname` (Perfetto ignores it).
// Both use integer pids and tids (trace_naming.h), M events for names and
// sort order, and one complete (X) event per job and per step, named by
// job_name() (trace_naming.h). The JSON traces are read by Perfetto, the
// legacy viewer (catapult), the DevTools Performance panel and speedscope;
// B/E pairs cannot satisfy them all (catapult warns about every arg an E
// repeats, speedscope and DevTools need the E to repeat the B's name).
//
// Times are microseconds (append_trace_us), printed as numbers that are exact
// doubles, and Perfetto (which rounds x*1000 to ns) reads the exact
// nanoseconds back: viewers compute ends (ts + dur) and rebase threads on
// their first ts in doubles (speedscope, DevTools, catapult), and a job that
// ends where the next begins must touch it in every one of them, never
// overlap it by a rounding error.
//
// Flow arrows (when `dependencies` is given, dependencies.h): one flow per
// dependency, id = its index + 1, as an `s` event inside the producer's slice
// and an `f` event with "bp":"e" inside the consumer's, on their tracks (flow
// v2's single bind_id per slice cannot carry a job that consumes one arrow and
// produces another). The events sit 1 us inside the slices (half the job when
// shorter), at the producer's end and the consumer's start: a viewer that
// binds a flow event to the slice containing its time (catapult, Perfetto)
// cannot take the neighbour that touches the slice. A dependency that the
// times contradict (the consumer starts before the producer ends) is drawn
// from the start of the job that started first to the start of the other, so
// that every arrow goes forward in time (viewers link a flow's events in time
// order, and catapult drops one whose end precedes its start); it is named
// "<kind> (contradicted by the times)", and "<kind> (contradicted by the
// times, drawn consumer to producer)" when the consumer started first.
//
// Memory (Track::memory, the `[Pipeline details]` samples): per rank, two
// counters on the rank's process, "GPU:3 memory allocated" and "GPU:3 memory
// reserved", one C event per sample with one arg, "GiB" (Perfetto makes a
// track "<name> <arg>" of each arg of a C event, and catapult stacks the args
// of one counter; two counters of one arg each read right in both). The
// metadata then says `memory_samples` and `memory_resolution_bytes`.
//
// A track whose clock was shifted (Track::clock_offset_ns) gives each job
// `logged_start_ms` / `logged_end_ms` args: the times as logged, in the log's
// own text form.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/timeline.h"
#include "output/sink/byte_sink.h"

namespace ppt {

struct Dependencies;
class TraceNaming;

enum class JsonFlavor { kChrome, kPerfetto };

// Appends `v` in decimal (the writers' hot path: no allocation, no locale);
// the one copy for every writer.
inline void append_int(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// The events of every JSON trace, this writer's and the diff trace's
// (diff_trace.h), written one way: M events for names and sort order, one X
// event per step ("step<N>", append_step_name) and per job (job_name(),
// with its rank, machine, local rank, micro-batch, step, job id, source line
// and, on a shifted clock, the logged times in its args), streamed to the
// sink through a 1 MiB buffer. The trace's head and tail are the caller's,
// appended to buffer().
class TraceEventWriter {
 public:
  explicit TraceEventWriter(ByteSink& out);

  // The timeline the next steps() and jobs() come from, its times shifted
  // by -origin_ns.
  void set_timeline(const Timeline& timeline, JsonFlavor flavor, int64_t origin_ns);
  void name(const char* what, uint32_t pid, int64_t tid, const std::string& value);  // process_name, thread_name
  void sort_index(const char* what, uint32_t pid, int64_t tid, int64_t value);       // process_, thread_sort_index
  void steps(const Run& run, uint32_t pid, uint32_t tid);
  void jobs(const Track& track, uint32_t pid, const TraceNaming& naming);
  // The track's memory samples (Track::memory) as two counters on its
  // process, "<prefix><thread name> memory allocated" and "... memory
  // reserved", each a C event per sample with one arg, "GiB"; nothing when
  // the track has no samples.
  void memory(const Track& track, uint32_t pid, const TraceNaming& naming, std::string_view prefix = {});

  // For the caller's own events: the separator before each, the buffer.
  void begin_event();
  std::string& buffer() { return buf_; }
  void maybe_flush();
  void flush();

 private:
  static constexpr size_t kFlushBytes = 1 << 20;
  void metadata(const char* what, uint32_t pid, int64_t tid, std::string_view key, const std::string* str_value,
                int64_t int_value);

  ByteSink& out_;
  std::string buf_;
  bool first_event_ = true;
  const Timeline* tl_ = nullptr;
  JsonFlavor flavor_ = JsonFlavor::kChrome;
  int64_t origin_ = 0;
  std::vector<std::string> type_text_;  // escaped, by type index
  std::vector<const char*> colors_;     // by type index
};

struct JsonWriteOptions {
  JsonFlavor flavor = JsonFlavor::kChrome;
  bool absolute = false;                       // epoch microseconds instead of rebasing to Timeline::origin_ns
  const Dependencies* dependencies = nullptr;  // flow arrows; null: none
};

void write_chrome_json(const Timeline& timeline, const JsonWriteOptions& options, ByteSink& out);

// Appends bytes / 2^30 with at most four decimals, trailing zeros dropped: a
// sample logged as 12.34 GiB (round(12.34 * 2^30) bytes) prints "12.34".
void append_gib(std::string& out, int64_t bytes);

// Whether any track of the timeline has memory samples.
bool has_memory_samples(const Timeline& timeline);

// Appends `s` as the inside of a JSON string (no quotes); invalid UTF-8 bytes
// become U+FFFD, control characters \u escapes.
void append_json_escaped(std::string& out, std::string_view s);

// Appends ns / 1000 as a decimal number of microseconds, exact (trailing
// zeros of the fraction dropped).
void append_us(std::string& out, int64_t ns);

// A trace event's `ts` (microseconds): on a grid of 1/2048 us (under 0.25 ns
// from the exact value) while |ns| < 2^42 us, so that every time is exact as
// a double; beyond (epoch times), append_us.
void append_trace_us(std::string& out, int64_t ns);

// The `dur` of a slice whose `ts` is append_trace_us(start_ns): a number that,
// added to the parsed ts in doubles, is exactly the parsed
// append_trace_us(end_ns). On the grid the difference of the two grid values
// (exact, and Perfetto's round(dur * 1000) is the exact ns); beyond, the
// difference of the two doubles.
void append_trace_dur_us(std::string& out, int64_t start_ns, int64_t end_ns);

}  // namespace ppt
