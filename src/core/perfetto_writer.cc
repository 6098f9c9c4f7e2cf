#include "pp_timeline/perfetto_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "pp_timeline/dependencies.h"
#include "pp_timeline/proto_wire.h"
#include "pp_timeline/trace_naming.h"

namespace ppt {
namespace {

// Field numbers from Perfetto's public protos (protos/perfetto/trace/...:
// trace.proto, trace_packet.proto, clock_snapshot.proto,
// track_event/track_event.proto, track_descriptor.proto,
// debug_annotation.proto, interned_data/interned_data.proto,
// trace_packet_defaults.proto). tests/proto/perfetto_trace_subset.proto
// declares the same numbers for the tests' decoder.
namespace f {
constexpr uint32_t kTracePacket = 1;
// TracePacket
constexpr uint32_t kTimestamp = 8;
constexpr uint32_t kClockSnapshot = 6;
constexpr uint32_t kTrustedSequenceId = 10;
constexpr uint32_t kTrackEvent = 11;
constexpr uint32_t kInternedData = 12;
constexpr uint32_t kSequenceFlags = 13;
constexpr uint32_t kPacketDefaults = 59;
constexpr uint32_t kTrackDescriptor = 60;
constexpr uint32_t kFirstPacketOnSequence = 87;
// ClockSnapshot / Clock
constexpr uint32_t kClocks = 1;
constexpr uint32_t kPrimaryTraceClock = 2;
constexpr uint32_t kClockId = 1;
constexpr uint32_t kClockTimestamp = 2;
// TracePacketDefaults / TrackEventDefaults
constexpr uint32_t kTrackEventDefaults = 11;
constexpr uint32_t kDefaultTrackUuid = 11;
// TrackDescriptor
constexpr uint32_t kUuid = 1;
constexpr uint32_t kName = 2;
constexpr uint32_t kParentUuid = 5;
constexpr uint32_t kChildOrdering = 11;
constexpr uint32_t kSiblingOrderRank = 12;
constexpr uint32_t kDescription = 14;
constexpr uint32_t kSiblingMergeBehavior = 15;
// TrackEvent
constexpr uint32_t kCategoryIids = 3;
constexpr uint32_t kDebugAnnotations = 4;
constexpr uint32_t kType = 9;
constexpr uint32_t kNameIid = 10;
constexpr uint32_t kFlowIds = 47;  // repeated fixed64
// DebugAnnotation
constexpr uint32_t kAnnotationNameIid = 1;
constexpr uint32_t kIntValue = 4;
constexpr uint32_t kStringValueIid = 17;
// InternedData and its entries ({iid = 1, name/str = 2})
constexpr uint32_t kEventCategories = 1;
constexpr uint32_t kEventNames = 2;
constexpr uint32_t kAnnotationNames = 3;
constexpr uint32_t kAnnotationStrings = 29;
constexpr uint32_t kIid = 1;
constexpr uint32_t kEntryName = 2;
}  // namespace f

constexpr uint64_t kSeqIncrementalStateCleared = 1;
constexpr uint64_t kTypeSliceBegin = 1;
constexpr uint64_t kTypeSliceEnd = 2;
constexpr uint64_t kChildOrderingExplicit = 3;
constexpr uint64_t kSiblingMergeNone = 2;
constexpr uint64_t kClockRealtime = 1;
constexpr uint64_t kClockBoottime = 6;
constexpr uint32_t kDescriptorSequence = 1;

// Debug annotation names, interned with these iids on every sequence.
enum Annotation : uint32_t {
  kRank = 1,
  kMicroBatch,
  kStep,
  kSource,
  kLine,
  kLoggedStart,
  kLoggedEnd,
  kRanks,
  kAnnotationCount
};
constexpr const char* kAnnotationText[] = {"",     "rank",           "micro_batch_id", "step",
                                           "source", "line", "logged_start_ns", "logged_end_ns", "ranks"};

class PerfettoTraceWriter {
 public:
  PerfettoTraceWriter(const Timeline& tl, const PerfettoWriteOptions& options, ByteSink& out)
      : tl_(tl), opt_(options), out_(out), naming_(tl), w_(buf_) {
    origin_ = options.absolute ? 0 : tl.origin_ns;
    buf_.resize(kFlushBytes + 65536);
    multi_machine_ = tl.machines.size() > 1 || (!tl.machines.empty() && !tl.machines[0].empty());
    uint32_t runs = static_cast<uint32_t>(std::max<size_t>(1, tl.runs.size()));
    parent_base_ = naming_.steps_tid(runs - 1) + 1;
    if (options.dependencies) {
      // Edges come sorted by consumer, in the order tracks are written; a
      // permutation by producer lets a second cursor find outgoing edges.
      // Two cursors instead of a DependencyIndex: 4 bytes per edge, not 16
      // per edge plus 8 per job.
      // Tracks are written run by run, each run's tracks in its order (as
      // find_dependencies() walks them); sort producers the same way.
      std::vector<uint32_t> visit(tl.tracks.size(), 0);
      uint32_t n = 0;
      for (const Run& run : tl.runs) {
        for (uint32_t ti : run.tracks) visit[ti] = n++;
      }
      const auto& edges = options.dependencies->edges;
      by_producer_.resize(edges.size());
      for (uint32_t i = 0; i < edges.size(); ++i) by_producer_[i] = i;
      std::stable_sort(by_producer_.begin(), by_producer_.end(), [&](uint32_t a, uint32_t b) {
        const JobRef& x = edges[a].producer;
        const JobRef& y = edges[b].producer;
        return visit[x.track] != visit[y.track] ? visit[x.track] < visit[y.track] : x.job < y.job;
      });
    }
  }

  void write();

 private:
  static constexpr size_t kFlushBytes = 1 << 20;

  // Interning state of one sequence (one track).
  struct Sequence {
    uint32_t id = 0;
    std::vector<uint8_t> names;       // by name iid: emitted already
    std::vector<uint8_t> categories;  // by category iid
  };

  void maybe_flush() {
    if (w_.size() >= kFlushBytes) {
      out_.write(w_.view());
      w_.clear();
    }
  }
  uint64_t ts(int64_t ns) const { return ns > origin_ ? static_cast<uint64_t>(ns - origin_) : 0; }
  uint64_t root_uuid(uint32_t run) const { return parent_base_ + naming_.steps_pid(run); }
  uint64_t machine_uuid(uint32_t run, int32_t machine) const {
    return parent_base_ + naming_.machine_pid(run, machine);
  }

  void write_clock_snapshot();
  void write_tree(const Run& run);
  void descriptor(uint64_t uuid, const std::string& name, std::optional<uint64_t> parent, int32_t order,
                  bool explicit_children, const std::string& description);
  void start_sequence(Sequence& seq, uint64_t track_uuid, uint32_t file_iid_plus_one,
                      const std::function<void()>& write_descriptor);
  uint32_t name_iid(uint32_t type, int64_t number);
  void intern_for_event(Sequence& seq, uint32_t name, uint32_t category);
  void annotation(uint32_t name, int64_t value) {
    size_t a = w_.open_nested(f::kDebugAnnotations);
    w_.varint(f::kAnnotationNameIid, name);
    w_.int64(f::kIntValue, value);
    w_.close_nested(a);
  }
  void end_event(const Sequence& seq, int64_t ns) {
    size_t p = w_.open_nested(f::kTracePacket);
    w_.varint(f::kTimestamp, ts(ns));
    w_.varint(f::kTrustedSequenceId, seq.id);
    size_t e = w_.open_nested(f::kTrackEvent);
    w_.varint(f::kType, kTypeSliceEnd);
    w_.close_nested(e);
    w_.close_nested(p);
  }
  void write_steps(const Run& run);
  void write_track(uint32_t track_index);

  const Timeline& tl_;
  const PerfettoWriteOptions& opt_;
  ByteSink& out_;
  TraceNaming naming_;
  std::string buf_;
  proto::Writer w_;
  int64_t origin_ = 0;
  bool multi_machine_ = false;
  uint64_t parent_base_ = 1;
  std::vector<uint32_t> by_producer_;  // edge indices by (producer track, job)
  size_t in_cursor_ = 0;                // next edge by consumer
  size_t out_cursor_ = 0;               // next entry of by_producer_
  // Event names: iid by (type, job id); types.size() is the "step" pseudo-type.
  std::vector<std::vector<uint32_t>> name_by_number_;  // small non-negative numbers
  std::unordered_map<uint64_t, uint32_t> name_by_key_;  // the rest
  std::vector<std::string> names_;                      // by iid - 1
};

void PerfettoTraceWriter::write_clock_snapshot() {
  // Trace time is BOOTTIME (the default for packets without a clock id);
  // REALTIME = trace time + origin, so a viewer can show wall-clock times.
  uint64_t t0 = ts(tl_.origin_ns);
  size_t p = w_.open_nested(f::kTracePacket);
  w_.varint(f::kTimestamp, t0);
  w_.varint(f::kTrustedSequenceId, kDescriptorSequence);
  w_.varint(f::kSequenceFlags, kSeqIncrementalStateCleared);
  w_.boolean(f::kFirstPacketOnSequence, true);
  size_t cs = w_.open_nested(f::kClockSnapshot);
  size_t c = w_.open_nested(f::kClocks);
  w_.varint(f::kClockId, kClockBoottime);
  w_.varint(f::kClockTimestamp, t0);
  w_.close_nested(c);
  c = w_.open_nested(f::kClocks);
  w_.varint(f::kClockId, kClockRealtime);
  w_.varint(f::kClockTimestamp, t0 + static_cast<uint64_t>(origin_));
  w_.close_nested(c);
  w_.varint(f::kPrimaryTraceClock, kClockBoottime);
  w_.close_nested(cs);
  w_.close_nested(p);
}

void PerfettoTraceWriter::descriptor(uint64_t uuid, const std::string& name, std::optional<uint64_t> parent,
                                     int32_t order, bool explicit_children, const std::string& description) {
  size_t d = w_.open_nested(f::kTrackDescriptor);
  w_.varint(f::kUuid, uuid);
  w_.string(f::kName, name);
  if (parent) {
    w_.varint(f::kParentUuid, *parent);
    w_.int64(f::kSiblingOrderRank, order);
  }
  if (explicit_children) w_.varint(f::kChildOrdering, kChildOrderingExplicit);
  if (!description.empty()) w_.string(f::kDescription, description);
  w_.varint(f::kSiblingMergeBehavior, kSiblingMergeNone);
  w_.close_nested(d);
}

void PerfettoTraceWriter::write_tree(const Run& run) {
  std::string root = multi_machine_ ? (tl_.runs.size() > 1 ? fmt::format("run {}/{}", run.index + 1, tl_.runs.size())
                                                            : std::string("pipeline"))
                                    : naming_.process_name(run.index, 0);
  size_t p = w_.open_nested(f::kTracePacket);
  w_.varint(f::kTrustedSequenceId, kDescriptorSequence);
  descriptor(root_uuid(run.index), root, std::nullopt, 0, true, "");
  w_.close_nested(p);
  if (!multi_machine_) return;
  int32_t last = -1;
  for (uint32_t ti : run.tracks) {
    const Track& t = tl_.tracks[ti];
    if (t.machine == last) continue;  // tracks are machine-major
    last = t.machine;
    std::string description;
    if (t.clock_offset_ns != 0) {
      description = fmt::format("clock shifted by {:+.3f} ms to agree with the dependencies between machines",
                                static_cast<double>(t.clock_offset_ns) / 1e6);
    }
    p = w_.open_nested(f::kTracePacket);
    w_.varint(f::kTrustedSequenceId, kDescriptorSequence);
    descriptor(machine_uuid(run.index, t.machine), naming_.process_name(run.index, t.machine),
               root_uuid(run.index), 1 + t.machine, true, description);
    w_.close_nested(p);
  }
}

void PerfettoTraceWriter::start_sequence(Sequence& seq, uint64_t track_uuid, uint32_t file_iid_plus_one,
                                         const std::function<void()>& write_descriptor) {
  size_t p = w_.open_nested(f::kTracePacket);
  w_.varint(f::kTrustedSequenceId, seq.id);
  w_.varint(f::kSequenceFlags, kSeqIncrementalStateCleared);
  w_.boolean(f::kFirstPacketOnSequence, true);
  size_t d = w_.open_nested(f::kPacketDefaults);
  size_t te = w_.open_nested(f::kTrackEventDefaults);
  w_.varint(f::kDefaultTrackUuid, track_uuid);
  w_.close_nested(te);
  w_.close_nested(d);
  size_t in = w_.open_nested(f::kInternedData);
  for (uint32_t a = 1; a < kAnnotationCount; ++a) {
    size_t e = w_.open_nested(f::kAnnotationNames);
    w_.varint(f::kIid, a);
    w_.string(f::kEntryName, kAnnotationText[a]);
    w_.close_nested(e);
  }
  if (file_iid_plus_one > 0) {
    size_t e = w_.open_nested(f::kAnnotationStrings);
    w_.varint(f::kIid, file_iid_plus_one);
    w_.bytes(f::kEntryName, tl_.files[file_iid_plus_one - 1].path);
    w_.close_nested(e);
  }
  w_.close_nested(in);
  write_descriptor();
  w_.close_nested(p);
}

uint32_t PerfettoTraceWriter::name_iid(uint32_t type, int64_t number) {
  constexpr int64_t kDirect = 4096;
  uint32_t* slot = nullptr;
  if (number >= 0 && number < kDirect) {
    if (name_by_number_.size() <= type) name_by_number_.resize(type + 1);
    auto& v = name_by_number_[type];
    if (v.size() <= static_cast<size_t>(number)) v.resize(number + 1, 0);
    slot = &v[number];
  } else {
    uint64_t key = (uint64_t{type} << 32) ^ static_cast<uint32_t>(number);
    slot = &name_by_key_[key];
  }
  if (*slot == 0) {
    names_.push_back(type < tl_.types.size() ? fmt::format("{}_{}", tl_.types[type], number)
                                              : fmt::format("step{}", number));
    *slot = static_cast<uint32_t>(names_.size());
  }
  return *slot;
}

// Adds the interned entries this event needs that its sequence has not seen.
void PerfettoTraceWriter::intern_for_event(Sequence& seq, uint32_t name, uint32_t category) {
  bool new_name = name >= seq.names.size() || !seq.names[name];
  bool new_category = category >= seq.categories.size() || !seq.categories[category];
  if (!new_name && !new_category) return;
  size_t in = w_.open_nested(f::kInternedData);
  if (new_category) {
    if (seq.categories.size() <= category) seq.categories.resize(category + 1, 0);
    seq.categories[category] = 1;
    size_t e = w_.open_nested(f::kEventCategories);
    w_.varint(f::kIid, category);
    w_.string(f::kEntryName,
              category - 1 < tl_.types.size() ? std::string_view(tl_.types[category - 1]) : std::string_view("step"));
    w_.close_nested(e);
  }
  if (new_name) {
    if (seq.names.size() <= name) seq.names.resize(name + 1, 0);
    seq.names[name] = 1;
    size_t e = w_.open_nested(f::kEventNames);
    w_.varint(f::kIid, name);
    w_.string(f::kEntryName, names_[name - 1]);
    w_.close_nested(e);
  }
  w_.close_nested(in);
}

void PerfettoTraceWriter::write_steps(const Run& run) {
  Sequence seq;
  seq.id = 1 + naming_.steps_tid(run.index);
  uint64_t uuid = naming_.steps_tid(run.index);
  start_sequence(seq, uuid, 0, [&] {
    descriptor(uuid, "steps", root_uuid(run.index), 0, false, "");
  });
  const uint32_t step_type = static_cast<uint32_t>(tl_.types.size());
  const uint32_t category = step_type + 1;
  for (const StepSpan& s : run.steps) {
    uint32_t name = name_iid(step_type, s.number);
    size_t p = w_.open_nested(f::kTracePacket);
    w_.varint(f::kTimestamp, ts(s.start_ns));
    w_.varint(f::kTrustedSequenceId, seq.id);
    intern_for_event(seq, name, category);
    size_t e = w_.open_nested(f::kTrackEvent);
    w_.varint(f::kType, kTypeSliceBegin);
    w_.varint(f::kNameIid, name);
    w_.varint(f::kCategoryIids, category);
    annotation(kStep, s.number);
    annotation(kRanks, s.ranks);
    w_.close_nested(e);
    w_.close_nested(p);
    end_event(seq, s.end_ns);
    maybe_flush();
  }
}

// Hot: two packets per job, written straight into the buffer.
void PerfettoTraceWriter::write_track(uint32_t ti) {
  const Track& t = tl_.tracks[ti];
  const uint64_t parent = multi_machine_ ? machine_uuid(t.run, t.machine) : root_uuid(t.run);
  std::vector<Sequence> lanes(t.lanes);
  for (uint32_t lane = 0; lane < t.lanes; ++lane) {
    lanes[lane].id = 1 + naming_.track_tid(t, lane);
    uint64_t uuid = naming_.track_tid(t, lane);
    start_sequence(lanes[lane], uuid, t.file + 1, [&] {
      std::string description = fmt::format("{}", tl_.files[t.file].path);
      if (t.clock_offset_ns != 0) {
        description += fmt::format("; clock shifted by {:+.3f} ms", static_cast<double>(t.clock_offset_ns) / 1e6);
      }
      descriptor(uuid, naming_.thread_name(t, lane), parent, 1 + static_cast<int32_t>(naming_.thread_sort_index(t, lane)),
                 false, lane == 0 ? description : "");
    });
  }
  const bool shifted = t.clock_offset_ns != 0;
  const uint32_t source_iid = t.file + 1;
  for (uint32_t i = 0; i < t.jobs.size(); ++i) {
    const Job& j = t.jobs[i];
    Sequence& seq = lanes[j.lane];
    const uint32_t name = name_iid(j.type, j.job_id);
    const uint32_t category = j.type + 1;
    size_t p = w_.open_nested(f::kTracePacket);
    w_.varint(f::kTimestamp, ts(j.start_ns));
    w_.varint(f::kTrustedSequenceId, seq.id);
    intern_for_event(seq, name, category);
    size_t e = w_.open_nested(f::kTrackEvent);
    w_.varint(f::kType, kTypeSliceBegin);
    w_.varint(f::kNameIid, name);
    w_.varint(f::kCategoryIids, category);
    annotation(kRank, t.rank);
    if (j.micro_batch >= 0) annotation(kMicroBatch, j.micro_batch);
    annotation(kStep, j.step);
    size_t a = w_.open_nested(f::kDebugAnnotations);
    w_.varint(f::kAnnotationNameIid, kSource);
    w_.varint(f::kStringValueIid, source_iid);
    w_.close_nested(a);
    annotation(kLine, j.line);
    if (shifted) {
      annotation(kLoggedStart, j.start_ns - t.clock_offset_ns);
      annotation(kLoggedEnd, j.end_ns - t.clock_offset_ns);
    }
    if (opt_.dependencies) {
      const auto& edges = opt_.dependencies->edges;
      const JobRef ref{ti, i};
      while (in_cursor_ < edges.size() && edges[in_cursor_].consumer == ref) {
        w_.fixed64(f::kFlowIds, uint64_t{in_cursor_} + 1);
        ++in_cursor_;
      }
      while (out_cursor_ < by_producer_.size() && edges[by_producer_[out_cursor_]].producer == ref) {
        w_.fixed64(f::kFlowIds, uint64_t{by_producer_[out_cursor_]} + 1);
        ++out_cursor_;
      }
    }
    w_.close_nested(e);
    w_.close_nested(p);
    end_event(seq, j.end_ns);
    maybe_flush();
  }
}

void PerfettoTraceWriter::write() {
  write_clock_snapshot();
  for (const Run& run : tl_.runs) write_tree(run);
  for (const Run& run : tl_.runs) {
    write_steps(run);
    for (uint32_t ti : run.tracks) write_track(ti);
  }
  out_.write(w_.view());
  w_.clear();
}

}  // namespace

void write_perfetto_trace(const Timeline& timeline, const PerfettoWriteOptions& options, ByteSink& out) {
  PerfettoTraceWriter writer(timeline, options, out);
  writer.write();
}

}  // namespace ppt
