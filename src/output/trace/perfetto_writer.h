// Writes the timeline as Perfetto's native protobuf trace (.pftrace /
// .perfetto-trace), streamed to a ByteSink: the trace is never held whole in
// memory. Pieces of it (a steps track, up to 4,096 jobs of one rank's track)
// are encoded in parallel, a few per thread at a time, and written in order.
//
// What it contains (docs/perfetto.md has the field numbers and why):
//  - a ClockSnapshot tying the trace clock to the wall clock (REALTIME), so a
//    viewer can show wall-clock times;
//  - TrackDescriptors: per run a root track ("pipeline", or "run i/n") whose
//    children, in explicit order, are the steps track, then one track per
//    machine (several machines only) holding one track per rank and lane, in
//    rank order; the names are trace_naming.h's, as in the JSON outputs;
//  - one trusted packet sequence per track (the track is the sequence's
//    default, so events do not repeat it), each starting with its incremental
//    state cleared and its interned strings;
//  - on each sequence a delta-encoded clock (sequence-scoped clock 64,
//    snapshotted against BOOTTIME before the sequence's first event in each
//    piece): every event's timestamp is the delta from the sequence's
//    previous event, as Perfetto's SDK writes them;
//  - per job a TYPE_SLICE_BEGIN / TYPE_SLICE_END pair with integer nanosecond
//    times (rebased to Timeline::origin_ns unless `absolute`), an
//    interned name (job_name(): "forward mb3") and category (the type), debug
//    annotations rank, micro_batch_id, step, source (the log path, interned),
//    line and job_id,
//    and, for a machine whose clock was shifted, logged_start_ns and
//    logged_end_ns (the times as logged, epoch nanoseconds);
//  - flow ids on the begin events of both the producer and the consumer of
//    each dependency (dependencies.h); Perfetto links the events of one id in
//    time order, so a dependency that the times contradict is drawn from the
//    job that began first, as in the JSON outputs (chrome_json_writer.h), and
//    a chain of dependencies whose jobs start in chain order (a micro-batch
//    through the stages) shares one id, carried once by each job.
//
// Unless told otherwise, each piece's packets are deflated into one packet
// (TracePacket.compressed_packets, zlib), which Perfetto's trace processor
// inflates as it reads; the first packets (the clock snapshot and the track
// tree) stay plain.
#pragma once

#include "model/timeline.h"
#include "output/sink/byte_sink.h"

namespace ppt {

struct Dependencies;

struct PerfettoWriteOptions {
  bool absolute = false;                       // epoch nanoseconds instead of rebasing
  const Dependencies* dependencies = nullptr;  // flow arrows; null: none
  unsigned threads = 0;                        // encoders (0: one per core); the bytes do not depend on it
  // Each piece's packets deflated (zlib) into one TracePacket's
  // compressed_packets, as Perfetto's tracing service writes them; false:
  // the plain packets (what `protoc --decode` reads). Inflated, the
  // compressed trace is the plain one byte for byte.
  bool compress = true;
};

void write_perfetto_trace(const Timeline& timeline, const PerfettoWriteOptions& options, ByteSink& out);

}  // namespace ppt
