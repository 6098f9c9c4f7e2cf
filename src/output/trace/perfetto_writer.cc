#include "output/trace/perfetto_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "output/trace/chrome_json_writer.h"
#include "output/trace/packet_deflate.h"
#include "output/trace/proto_wire.h"
#include "output/trace/trace_naming.h"
#include "passes/dependencies.h"
#include "util/bulk_memory.h"
#include "util/ordered_parallel.h"
#include "util/parallel.h"

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
constexpr uint32_t kTimestampClockId = 58;  // also TracePacketDefaults' field
constexpr uint32_t kClockSnapshot = 6;
constexpr uint32_t kTrustedSequenceId = 10;
constexpr uint32_t kTrackEvent = 11;
constexpr uint32_t kInternedData = 12;
constexpr uint32_t kSequenceFlags = 13;
constexpr uint32_t kPacketDefaults = 59;
constexpr uint32_t kTrackDescriptor = 60;
constexpr uint32_t kFirstPacketOnSequence = 87;
constexpr uint32_t kCompressedPackets = 50;
// ClockSnapshot / Clock
constexpr uint32_t kClocks = 1;
constexpr uint32_t kPrimaryTraceClock = 2;
constexpr uint32_t kClockId = 1;
constexpr uint32_t kClockTimestamp = 2;
constexpr uint32_t kClockIsIncremental = 3;
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
constexpr uint32_t kCounter = 8;
// CounterDescriptor
constexpr uint32_t kCounterUnit = 3;
// TrackEvent
constexpr uint32_t kCategoryIids = 3;
constexpr uint32_t kDebugAnnotations = 4;
constexpr uint32_t kType = 9;
constexpr uint32_t kNameIid = 10;
constexpr uint32_t kFlowIds = 47;  // repeated fixed64
constexpr uint32_t kCounterValue = 30;
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
constexpr uint64_t kTypeCounter = 4;
constexpr uint64_t kUnitSizeBytes = 3;  // CounterDescriptor.Unit UNIT_SIZE_BYTES
constexpr uint64_t kChildOrderingExplicit = 3;
constexpr uint64_t kSiblingMergeNone = 2;
constexpr uint64_t kClockRealtime = 1;
constexpr uint64_t kClockBoottime = 6;
// The first sequence-scoped clock id (clock_snapshot.proto: 64-127 are
// user-defined clocks valid only on the sequence that snapshots them), the id
// Perfetto's own SDK gives its delta-encoded clock (TrackEventIncrementalState::
// kClockIdIncremental, include/perfetto/tracing/internal/track_event_internal.h).
constexpr uint64_t kClockIncremental = 64;
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
  kJobId,
  kAnnotationCount
};
constexpr const char* kAnnotationText[] = {
    "", "rank", "micro_batch_id", "step", "source", "line", "logged_start_ns", "logged_end_ns", "ranks", "job_id"};

// A piece of the trace encoded on its own: one run's steps track, or a range
// of one track's jobs. Pieces are encoded in parallel into their own buffers
// and written in order, so the bytes do not depend on the thread count.
struct Piece {
  enum Kind : uint8_t { kSteps, kJobs, kMemory } kind = kJobs;
  uint32_t index = 0;  // run (kSteps) or track (kJobs, kMemory)
  uint32_t begin = 0;  // jobs (kMemory: memory samples) [begin, end) of the track
  uint32_t end = 0;
};

// Interning state of one sequence (one track lane).
struct Sequence {
  uint32_t id = 0;
  std::vector<uint8_t> names;       // by name iid: emitted already
  std::vector<uint8_t> categories;  // by category iid
  // Marks `name` and `category` emitted; returns which were new (bit 0: the
  // name, bit 1: the category).
  uint8_t see(uint32_t name, uint32_t category) {
    uint8_t fresh = 0;
    if (name >= names.size()) names.resize(name + 1, 0);
    if (category >= categories.size()) categories.resize(category + 1, 0);
    if (!names[name]) fresh |= 1;
    if (!categories[category]) fresh |= 2;
    names[name] = 1;
    categories[category] = 1;
    return fresh;
  }
};

constexpr uint8_t kNewName = 1;
constexpr uint8_t kNewCategory = 2;

// A sequence's delta-encoded clock while one piece is encoded: each piece
// snapshots it afresh before its first event on the sequence, so pieces need
// nothing from each other.
struct LaneClock {
  uint64_t last = 0;   // trace time of the sequence's last event
  bool based = false;  // snapshotted in this piece
};

// Deflates a piece's packets into one TracePacket whose only field is
// compressed_packets (50), in the form Perfetto's tracing service writes
// (src/tracing/service/zlib_compressor.cc: a zlib stream, header and
// Adler-32 trailer, of the packets with their Trace.packet framing), with
// packet_deflate.h's encoder. Trace processor inflates it where it reads the
// packet (proto_trace_tokenizer.h) and reads the packets inside as if they
// stood in its place, so the sequences' interned data and clocks carry on
// across compressed packets as across plain ones. The bytes depend on the
// piece only.
class PacketDeflater {
 public:
  std::string scratch;  // the piece's plain packets, encoded by the caller

  // The compressed packet, written into `out`; a copy of `raw` when the
  // packet would not be smaller, or would pass the size Perfetto's proto
  // asks a compressed packet to keep under (512 KB, trace_packet.proto).
  std::string_view pack(std::string_view raw, std::string& out) {
    if (raw.empty()) return {};
    const size_t n = proto::deflate_packets(raw, out, kHead);
    const size_t field =
        proto::varint_size(proto::tag(f::kCompressedPackets, proto::kLengthDelimited)) + proto::varint_size(n) + n;
    const size_t packet = 1 + proto::varint_size(field) + field;
    if (packet >= kMaxPacket || packet >= raw.size()) {
      if (out.size() < raw.size()) out.resize(raw.size());
      std::memcpy(out.data(), raw.data(), raw.size());
      return {out.data(), raw.size()};
    }
    // The two headers go right before the deflated bytes.
    char* start = out.data() + kHead - (packet - n);
    char* p = start;
    p = put(p, proto::tag(f::kTracePacket, proto::kLengthDelimited));
    p = put(p, field);
    p = put(p, proto::tag(f::kCompressedPackets, proto::kLengthDelimited));
    put(p, n);
    return {start, packet};
  }

 private:
  static constexpr size_t kHead = 16;               // room for the headers
  static constexpr size_t kMaxPacket = 512 * 1024;  // trace_packet.proto: "less than 512KB"
  static char* put(char* p, uint64_t v) {
    while (v >= 0x80) {
      *p++ = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<char>(v);
    return p;
  }
};

// Deflaters for the encoding threads: each piece takes one and gives it
// back, so there are as many as pieces encoded at once, each with its zlib
// state and scratch buffer kept from piece to piece.
class DeflaterPool {
 public:
  std::unique_ptr<PacketDeflater> take() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        std::unique_ptr<PacketDeflater> d = std::move(free_.back());
        free_.pop_back();
        return d;
      }
    }
    return std::make_unique<PacketDeflater>();
  }
  void give(std::unique_ptr<PacketDeflater> d) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(d));
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<PacketDeflater>> free_;
};

class PerfettoTraceWriter {
 public:
  PerfettoTraceWriter(const Timeline& tl, const PerfettoWriteOptions& options, ByteSink& out)
      : tl_(tl), opt_(options), out_(out), naming_(tl) {
    origin_ = options.absolute ? 0 : tl.origin_ns;
    memory_ = has_memory_samples(tl);
    // A memory sample may precede every job (Start_forward_backward_pipeline
    // comes before the first forward): the trace's zero is then the
    // earliest sample, as trace times cannot be negative.
    for (const Track& t : tl.tracks) {
      if (!options.absolute && !t.memory.empty()) origin_ = std::min(origin_, t.memory.front().ts_ns);
    }
    multi_machine_ = tl.machines.size() > 1 || (!tl.machines.empty() && !tl.machines[0].empty());
    uint32_t runs = static_cast<uint32_t>(std::max<size_t>(1, tl.runs.size()));
    parent_base_ = naming_.steps_tid(runs - 1) + 1;
    const int32_t machines = static_cast<int32_t>(std::max<size_t>(1, tl.machines.size()));
    memory_base_ = parent_base_ + naming_.machine_pid(runs - 1, machines - 1) + 1;
    // Tracks are written run by run, each run's tracks in its order (as
    // find_dependencies() walks them, so the edges are sorted by consumer in
    // this order too).
    visit_.assign(tl.tracks.size(), 0);
    uint32_t n = 0;
    for (const Run& run : tl.runs) {
      for (uint32_t ti : run.tracks) visit_[ti] = n++;
    }
    // The flows' index and the names' are independent, each with a serial
    // pass over every job or edge: built side by side, the names with the
    // flows' first table (every edge its own chain: fresh memory, as much
    // as the index's, written while the index is made).
    parallel_for(options.dependencies ? 2 : 1, options.threads, [&](size_t task) {
      if (task == 0) {
        intern_names();
        if (options.dependencies) start_flows();
      } else {
        index_producers();
      }
    });
    if (options.dependencies) chain_flows();
  }

  void write();

 private:
  // Jobs per piece: about 350 KB of packets, so that a long track is split
  // and the pieces in flight stay small.
  static constexpr uint32_t kPieceJobs = 4096;
  // Memory samples per piece: two packets each, as a job.
  static constexpr uint32_t kPieceSamples = 4096;

  uint64_t ts(int64_t ns) const { return ns > origin_ ? static_cast<uint64_t>(ns - origin_) : 0; }
  uint64_t root_uuid(uint32_t run) const { return parent_base_ + naming_.steps_pid(run); }
  uint64_t machine_uuid(uint32_t run, int32_t machine) const {
    return parent_base_ + naming_.machine_pid(run, machine);
  }
  // A rank's memory counter tracks (0: allocated, 1: reserved), after every
  // other track's uuid.
  uint64_t counter_uuid(uint32_t track, int which) const { return memory_base_ + 2 * uint64_t{track} + which; }
  // A lane's place among its siblings: 1 + thread_sort_index; with memory
  // counters, three places each, so that a rank's two counters come right
  // after its last lane (and a trace without memory keeps its numbers).
  int32_t lane_order(const Track& t, uint32_t lane) const {
    const int32_t index = static_cast<int32_t>(naming_.thread_sort_index(t, lane));
    return memory_ ? 1 + 3 * index : 1 + index;
  }
  uint64_t order_of(JobRef r) const { return (uint64_t{visit_[r.track]} << 32) | r.job; }

  void index_producers();
  void start_flows();
  void chain_flows();
  void intern_names();
  // A job's name (job_name()) is interned by (name_type, name_number): its
  // type and micro-batch, or, without a micro-batch, its type past the step
  // pseudo-type and its job id.
  uint32_t name_type(const Job& j) const {
    return j.micro_batch >= 0 ? j.type : j.type + static_cast<uint32_t>(tl_.types.size()) + 1;
  }
  static int64_t name_number(const Job& j) { return j.micro_batch >= 0 ? j.micro_batch : j.job_id; }
  uint32_t assign_name(uint32_t type, int64_t number);
  uint32_t name_of(uint32_t type, int64_t number) const;

  void write_clock_snapshot(proto::Writer& w) const;
  void write_tree(proto::Writer& w, const Run& run) const;
  static void descriptor(proto::Writer& w, uint64_t uuid, const std::string& name, std::optional<uint64_t> parent,
                         int32_t order, bool explicit_children, const std::string& description);
  size_t open_sequence(proto::Writer& w, uint32_t seq_id, uint64_t track_uuid) const;
  template <typename Fn>
  void start_sequence(proto::Writer& w, uint32_t seq_id, uint64_t track_uuid, uint32_t file_iid_plus_one,
                      Fn&& write_descriptor) const;
  void interned(proto::Writer& w, uint8_t fresh, uint32_t name, uint32_t category) const;
  // The helpers of a job's packets take a proto::Writer or a
  // proto::Reserved (write_jobs): the same bytes either way.
  template <typename W>
  static void annotation(W& w, uint32_t name, int64_t value) {
    auto a = w.open_nested(f::kDebugAnnotations);
    w.varint(f::kAnnotationNameIid, name);
    w.int64(f::kIntValue, value);
    w.close_nested(a);
  }
  [[gnu::noinline]] static void snapshot_clock(proto::Writer& w, uint32_t seq_id, LaneClock& clock, uint64_t t);
  static void base_clock(proto::Writer& w, uint32_t seq_id, LaneClock& clock, uint64_t t) {
    if (!clock.based) [[unlikely]]
      snapshot_clock(w, seq_id, clock, t);
  }
  template <typename W>
  static void stamp(W& w, LaneClock& clock, uint64_t t) {
    if (t >= clock.last) [[likely]] {
      w.varint(f::kTimestamp, t - clock.last);
      clock.last = t;
    } else {
      stamp_absolute(w, t);
    }
  }
  template <typename W>
  [[gnu::noinline]] static void stamp_absolute(W& w, uint64_t t) {
    w.varint(f::kTimestamp, t);
    w.varint(f::kTimestampClockId, kClockBoottime);
  }
  template <typename W>
  void end_event(W& w, uint32_t seq_id, LaneClock& clock, int64_t ns) const {
    auto p = w.open_nested(f::kTracePacket);
    w.varint(f::kTrustedSequenceId, seq_id);
    auto e = w.open_nested(f::kTrackEvent);
    w.varint(f::kType, kTypeSliceEnd);
    w.close_nested(e);
    stamp(w, clock, ts(ns));
    w.close_nested(p);
  }
  void write_steps(proto::Writer& w, const Run& run) const;
  void write_jobs(proto::Writer& w, const Piece& piece) const;
  // write_jobs' steps.
  struct FlowCursor {
    const std::vector<Dependency>* edges = nullptr;  // none without dependencies
    size_t in = 0;                                   // into edges (by consumer)
    size_t out = 0;                                  // into by_producer_
  };
  // Inlined always, and early: a step the compiler would inline later counts
  // against write_jobs' growth, and then a job's annotations were left out
  // of line.
  [[gnu::always_inline]] void write_lane_descriptors(proto::Writer& w, const Track& t) const;
  [[gnu::always_inline]] FlowCursor flow_cursor(uint32_t ti, uint32_t begin) const;
  template <typename W>
  [[gnu::always_inline]] void write_flow_ids(W& w, FlowCursor& c, JobRef ref) const;
  // At most how many flow ids write_flow_ids writes for `ref`.
  [[gnu::always_inline]] size_t flow_ids_at_most(const FlowCursor& c, JobRef ref) const;
  template <typename W>
  [[gnu::always_inline]] void write_job(W& w, const Track& t, uint32_t i, uint32_t name, uint32_t seq_id,
                                        LaneClock& clock, uint8_t fresh, FlowCursor& flows) const;
  void write_memory(proto::Writer& w, const Piece& piece) const;
  std::string_view encode(std::string& buffer, const Piece& piece) const;

  const Timeline& tl_;
  const PerfettoWriteOptions& opt_;
  ByteSink& out_;
  TraceNaming naming_;
  int64_t origin_ = 0;
  bool multi_machine_ = false;
  bool memory_ = false;  // some track has memory samples
  uint64_t parent_base_ = 1;
  uint64_t memory_base_ = 1;
  std::vector<uint32_t> visit_;           // track -> position in the writing order
  std::vector<uint32_t> by_producer_;     // edge indices by (producer track, job)
  std::vector<uint32_t> producer_start_;  // by track in writing order: its first entry in by_producer_
  std::vector<uint32_t> flow_of_;         // by edge: its flow id (a chain's edges share one)
  // Event names: iid by (name_type, name_number); types.size() is the "step" pseudo-type.
  std::vector<std::vector<uint32_t>> name_by_number_;   // small non-negative numbers
  std::unordered_map<uint64_t, uint32_t> name_by_key_;  // the rest
  std::vector<std::string> names_;                      // by iid - 1
  // Per job (tracks in writing order, jobs in order): which interned strings
  // its packet must carry because its lane's sequence has not had them yet.
  // Only for tracks of more than one piece; the others' are worked out as
  // their piece is encoded.
  std::vector<uint8_t> fresh_;
  static constexpr size_t kFreshWhenEncoded = SIZE_MAX;
  std::vector<size_t> fresh_base_;  // by track: index of its first job in fresh_, or kFreshWhenEncoded
  mutable DeflaterPool deflaters_;  // compress: the encoders' deflaters
};

// A permutation of the edges by (producer track in writing order, producer
// job), ties in edge order: a counting sort by track, then, track by track in
// parallel, a counting sort by job (linear: a track's edges come as a few
// runs already in job order, which comparison sorts handle poorly). Four
// bytes per edge instead of DependencyIndex's sixteen plus eight per job.
void PerfettoTraceWriter::index_producers() {
  const auto& edges = opt_.dependencies->edges;
  std::vector<uint32_t>& start = producer_start_;
  start.assign(tl_.tracks.size() + 1, 0);
  for (const Dependency& e : edges) ++start[visit_[e.producer.track] + 1];
  for (size_t k = 0; k + 1 < start.size(); ++k) start[k + 1] += start[k];
  resize_in_huge_pages(by_producer_, edges.size());
  std::vector<uint32_t> fill(start.begin(), start.end() - 1);
  for (uint32_t i = 0; i < edges.size(); ++i) by_producer_[fill[visit_[edges[i].producer.track]]++] = i;
  parallel_for(tl_.tracks.size(), opt_.threads, [&](size_t k) {
    const uint32_t first = start[k], last = start[k + 1];
    if (last - first < 2) return;
    const uint32_t track = edges[by_producer_[first]].producer.track;
    std::vector<uint32_t> at(tl_.tracks[track].jobs.size() + 1, 0);
    for (uint32_t i = first; i < last; ++i) ++at[edges[by_producer_[i]].producer.job + 1];
    for (size_t j = 0; j + 1 < at.size(); ++j) at[j + 1] += at[j];
    std::vector<uint32_t> sorted(last - first);
    for (uint32_t i = first; i < last; ++i) sorted[at[edges[by_producer_[i]].producer.job]++] = by_producer_[i];
    std::copy(sorted.begin(), sorted.end(), by_producer_.begin() + first);
  });
}

// chain_flows()'s start: every edge its own chain.
void PerfettoTraceWriter::start_flows() {
  const size_t n = opt_.dependencies->edges.size();
  resize_in_huge_pages(flow_of_, n);
  for (uint32_t e = 0; e < n; ++e) flow_of_[e] = e;  // each its own chain
}

// Flow ids: Perfetto links the events that carry one flow id in the order of
// their timestamps, each to the next (TrackEvent.flow_ids in
// track_event/track_event.proto; FlowTracker::Begin/Step in trace_processor's
// track_event_event_importer.h, MaybeParseTrackEventFlows). So a chain of
// dependencies q -> p -> c (a micro-batch going through the stages) can be
// one flow id carried once by each job, instead of one id per dependency
// carried by both ends: the same arrows in Perfetto's reading, about 10
// bytes a job less. An edge p -> c joins the chain of q -> p only where that
// reading cannot differ: p has no other incoming or outgoing edge, and the
// jobs start strictly in chain order (q before p before c). Any other edge
// starts a flow id of its own. Ids are the first edge's index + 1.
void PerfettoTraceWriter::chain_flows() {
  const auto& edges = opt_.dependencies->edges;
  const size_t n = edges.size();
  auto start = [&](JobRef r) { return tl_.tracks[r.track].jobs[r.job].start_ns; };
  // Track by track in parallel (each writes only the edges its jobs
  // produce), walk the producers (by_producer_) and the consumers (edges,
  // sorted by consumer in the same order) together: for a producer with one
  // outgoing edge, find its incoming edges.
  parallel_for(tl_.tracks.size(), opt_.threads, [&](size_t t) {
    const size_t first = producer_start_[t], last = producer_start_[t + 1];
    if (first == last) return;
    const uint64_t track_key = order_of({edges[by_producer_[first]].producer.track, 0});
    size_t in = static_cast<size_t>(
        std::lower_bound(edges.begin(), edges.end(), track_key,
                         [&](const Dependency& e, uint64_t k) { return order_of(e.consumer) < k; }) -
        edges.begin());
    for (size_t k = first; k < last;) {
      const uint32_t e = by_producer_[k];
      const JobRef p = edges[e].producer;
      size_t next = k + 1;
      while (next < last && edges[by_producer_[next]].producer == p) ++next;
      const uint64_t key = order_of(p);
      while (in < n && order_of(edges[in].consumer) < key) ++in;
      size_t in_end = in;
      while (in_end < n && edges[in_end].consumer == p) ++in_end;
      if (next - k == 1 && in_end - in == 1) {
        const Dependency& before = edges[in];
        if (start(before.producer) < start(p) && start(p) < start(edges[e].consumer)) {
          flow_of_[e] = static_cast<uint32_t>(in);
        }
      }
      k = next;
    }
  });
  // Each edge's chain is the edge it was linked to, recursively: resolve to
  // the chain's first edge (chains are a micro-batch's virtual stages long).
  for (uint32_t e = 0; e < n; ++e) {
    uint32_t root = e;
    while (flow_of_[root] != root) root = flow_of_[root];
    for (uint32_t x = e; flow_of_[x] != root && x != root;) {
      const uint32_t up = flow_of_[x];
      flow_of_[x] = root;
      x = up;
    }
    flow_of_[e] = root;
  }
  for (uint32_t& f : flow_of_) ++f;
}

uint32_t PerfettoTraceWriter::assign_name(uint32_t type, int64_t number) {
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
    const size_t types = tl_.types.size();
    if (type == types) {
      names_.push_back(step_name(number));
    } else {
      // name_type(): micro-batch names by type, job-id names past the steps.
      std::string name;
      const bool by_mb = type < types;
      append_job_name(name, tl_.types[by_mb ? type : type - types - 1], by_mb ? static_cast<int32_t>(number) : -1,
                      static_cast<int32_t>(number));
      names_.push_back(std::move(name));
    }
    *slot = static_cast<uint32_t>(names_.size());
  }
  return *slot;
}

uint32_t PerfettoTraceWriter::name_of(uint32_t type, int64_t number) const {
  if (number >= 0 && type < name_by_number_.size() && static_cast<uint64_t>(number) < name_by_number_[type].size()) {
    return name_by_number_[type][number];
  }
  auto it = name_by_key_.find((uint64_t{type} << 32) ^ static_cast<uint32_t>(number));
  return it == name_by_key_.end() ? 0 : it->second;
}

// Names get their iids in order of first use in the trace (one serial
// pass). A track of one piece learns which interned strings each job brings
// to its sequence as the piece is encoded (write_jobs); a longer track's
// later pieces must know it before, so for those tracks it is worked out
// here, track by track in parallel. The pieces can then be encoded
// independently.
void PerfettoTraceWriter::intern_names() {
  const uint32_t step_type = static_cast<uint32_t>(tl_.types.size());
  fresh_base_.assign(tl_.tracks.size(), kFreshWhenEncoded);
  size_t jobs = 0;
  for (const Run& run : tl_.runs) {
    for (const StepSpan& s : run.steps) assign_name(step_type, s.number);
    for (uint32_t ti : run.tracks) {
      const JobList& track_jobs = tl_.tracks[ti].jobs;
      for (const Job& j : track_jobs) assign_name(name_type(j), name_number(j));
      if (track_jobs.size() > kPieceJobs) {
        fresh_base_[ti] = jobs;
        jobs += track_jobs.size();
      }
    }
  }
  fresh_.resize(jobs);
  parallel_for(tl_.tracks.size(), opt_.threads, [&](size_t ti) {
    if (fresh_base_[ti] == kFreshWhenEncoded) return;
    const Track& t = tl_.tracks[ti];
    std::vector<Sequence> lanes(t.lanes);
    uint8_t* fresh = fresh_.data() + fresh_base_[ti];
    for (const Job& j : t.jobs) *fresh++ = lanes[j.lane].see(name_of(name_type(j), name_number(j)), j.type + 1);
  });
}

void PerfettoTraceWriter::write_clock_snapshot(proto::Writer& w) const {
  // Trace time is BOOTTIME (the default for packets without a clock id);
  // REALTIME = trace time + origin, so a viewer can show wall-clock times.
  uint64_t t0 = ts(tl_.origin_ns);
  size_t p = w.open_nested(f::kTracePacket);
  w.varint(f::kTimestamp, t0);
  w.varint(f::kTrustedSequenceId, kDescriptorSequence);
  w.varint(f::kSequenceFlags, kSeqIncrementalStateCleared);
  w.boolean(f::kFirstPacketOnSequence, true);
  size_t cs = w.open_nested(f::kClockSnapshot);
  size_t c = w.open_nested(f::kClocks);
  w.varint(f::kClockId, kClockBoottime);
  w.varint(f::kClockTimestamp, t0);
  w.close_nested(c);
  c = w.open_nested(f::kClocks);
  w.varint(f::kClockId, kClockRealtime);
  w.varint(f::kClockTimestamp, t0 + static_cast<uint64_t>(origin_));
  w.close_nested(c);
  w.varint(f::kPrimaryTraceClock, kClockBoottime);
  w.close_nested(cs);
  w.close_nested(p);
}

void PerfettoTraceWriter::descriptor(proto::Writer& w, uint64_t uuid, const std::string& name,
                                     std::optional<uint64_t> parent, int32_t order, bool explicit_children,
                                     const std::string& description) {
  size_t d = w.open_nested(f::kTrackDescriptor);
  w.varint(f::kUuid, uuid);
  w.string(f::kName, name);
  if (parent) {
    w.varint(f::kParentUuid, *parent);
    w.int64(f::kSiblingOrderRank, order);
  }
  if (explicit_children) w.varint(f::kChildOrdering, kChildOrderingExplicit);
  if (!description.empty()) w.string(f::kDescription, description);
  w.varint(f::kSiblingMergeBehavior, kSiblingMergeNone);
  w.close_nested(d);
}

void PerfettoTraceWriter::write_tree(proto::Writer& w, const Run& run) const {
  std::string root = multi_machine_ ? (tl_.runs.size() > 1 ? fmt::format("run {}/{}", run.index + 1, tl_.runs.size())
                                                           : naming_.pipeline_name())
                                    : naming_.process_name(run.index, 0);
  size_t p = w.open_nested(f::kTracePacket);
  w.varint(f::kTrustedSequenceId, kDescriptorSequence);
  descriptor(w, root_uuid(run.index), root, std::nullopt, 0, true, "");
  w.close_nested(p);
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
    p = w.open_nested(f::kTracePacket);
    w.varint(f::kTrustedSequenceId, kDescriptorSequence);
    descriptor(w, machine_uuid(run.index, t.machine), naming_.process_name(run.index, t.machine), root_uuid(run.index),
               1 + t.machine, true, description);
    w.close_nested(p);
  }
}

// Before a sequence's first event in a piece: a ClockSnapshot on the sequence
// puts its incremental clock at `t` (BOOTTIME, the trace clock), as Perfetto's
// SDK does when it clears a sequence's incremental state
// (TrackEventInternal::ResetIncrementalState, src/tracing/internal/
// track_event_internal.cc). The next packet's timestamp is then a delta from
// `t` (clock_snapshot.proto, Clock.is_incremental). The snapshot has a packet
// of its own: trace_processor reads nothing else from a packet holding one
// (ProtoTraceReader::ParseClockSnapshot returns early).
void PerfettoTraceWriter::snapshot_clock(proto::Writer& w, uint32_t seq_id, LaneClock& clock, uint64_t t) {
  size_t p = w.open_nested(f::kTracePacket);
  w.varint(f::kTrustedSequenceId, seq_id);
  size_t cs = w.open_nested(f::kClockSnapshot);
  size_t c = w.open_nested(f::kClocks);
  w.varint(f::kClockId, kClockBoottime);
  w.varint(f::kClockTimestamp, t);
  w.close_nested(c);
  c = w.open_nested(f::kClocks);
  w.varint(f::kClockId, kClockIncremental);
  w.varint(f::kClockTimestamp, t);
  w.boolean(f::kClockIsIncremental, true);
  w.close_nested(c);
  w.close_nested(cs);
  w.close_nested(p);
  clock.last = t;
  clock.based = true;
}

// An event packet's timestamp is the delta from the sequence's previous
// event on its incremental clock (the sequence's default clock; stamp()), or,
// for an event that precedes the previous one (a lane's events never do;
// deltas are unsigned), the absolute trace time with the packet's own clock
// id (stamp_absolute).

// The first packet of a sequence, left open for what the sequence brings
// next: its id, incremental state cleared, and the defaults of its events
// (the delta clock, the track). Returns the packet for close_nested.
size_t PerfettoTraceWriter::open_sequence(proto::Writer& w, uint32_t seq_id, uint64_t track_uuid) const {
  size_t p = w.open_nested(f::kTracePacket);
  w.varint(f::kTrustedSequenceId, seq_id);
  w.varint(f::kSequenceFlags, kSeqIncrementalStateCleared);
  w.boolean(f::kFirstPacketOnSequence, true);
  size_t d = w.open_nested(f::kPacketDefaults);
  w.varint(f::kTimestampClockId, kClockIncremental);
  size_t te = w.open_nested(f::kTrackEventDefaults);
  w.varint(f::kDefaultTrackUuid, track_uuid);
  w.close_nested(te);
  w.close_nested(d);
  return p;
}

template <typename Fn>
void PerfettoTraceWriter::start_sequence(proto::Writer& w, uint32_t seq_id, uint64_t track_uuid,
                                         uint32_t file_iid_plus_one, Fn&& write_descriptor) const {
  size_t p = open_sequence(w, seq_id, track_uuid);
  size_t in = w.open_nested(f::kInternedData);
  for (uint32_t a = 1; a < kAnnotationCount; ++a) {
    size_t e = w.open_nested(f::kAnnotationNames);
    w.varint(f::kIid, a);
    w.string(f::kEntryName, kAnnotationText[a]);
    w.close_nested(e);
  }
  if (file_iid_plus_one > 0) {
    size_t e = w.open_nested(f::kAnnotationStrings);
    w.varint(f::kIid, file_iid_plus_one);
    w.bytes(f::kEntryName, tl_.files[file_iid_plus_one - 1].path);
    w.close_nested(e);
  }
  w.close_nested(in);
  write_descriptor();
  w.close_nested(p);
}

// The interned entries an event brings to its sequence (`fresh`: which).
void PerfettoTraceWriter::interned(proto::Writer& w, uint8_t fresh, uint32_t name, uint32_t category) const {
  if (fresh == 0) return;
  size_t in = w.open_nested(f::kInternedData);
  if (fresh & kNewCategory) {
    size_t e = w.open_nested(f::kEventCategories);
    w.varint(f::kIid, category);
    w.string(f::kEntryName,
             category - 1 < tl_.types.size() ? std::string_view(tl_.types[category - 1]) : std::string_view("step"));
    w.close_nested(e);
  }
  if (fresh & kNewName) {
    size_t e = w.open_nested(f::kEventNames);
    w.varint(f::kIid, name);
    w.string(f::kEntryName, names_[name - 1]);
    w.close_nested(e);
  }
  w.close_nested(in);
}

void PerfettoTraceWriter::write_steps(proto::Writer& w, const Run& run) const {
  Sequence seq;
  seq.id = 1 + naming_.steps_tid(run.index);
  uint64_t uuid = naming_.steps_tid(run.index);
  start_sequence(w, seq.id, uuid, 0, [&] { descriptor(w, uuid, "steps", root_uuid(run.index), 0, false, ""); });
  const uint32_t step_type = static_cast<uint32_t>(tl_.types.size());
  const uint32_t category = step_type + 1;
  LaneClock clock;
  for (const StepSpan& s : run.steps) {
    uint32_t name = name_of(step_type, s.number);
    base_clock(w, seq.id, clock, ts(s.start_ns));
    size_t p = w.open_nested(f::kTracePacket);
    stamp(w, clock, ts(s.start_ns));
    w.varint(f::kTrustedSequenceId, seq.id);
    interned(w, seq.see(name, category), name, category);
    size_t e = w.open_nested(f::kTrackEvent);
    w.varint(f::kType, kTypeSliceBegin);
    w.varint(f::kNameIid, name);
    w.varint(f::kCategoryIids, category);
    annotation(w, kStep, s.number);
    annotation(w, kRanks, s.ranks);
    w.close_nested(e);
    w.close_nested(p);
    end_event(w, seq.id, clock, s.end_ns);
  }
}

// Hot: two packets per job, written straight into the buffer.
void PerfettoTraceWriter::write_jobs(proto::Writer& w, const Piece& piece) const {
  const uint32_t ti = piece.index;
  const Track& t = tl_.tracks[ti];
  if (piece.begin == 0) write_lane_descriptors(w, t);
  std::vector<uint32_t> seq_ids(t.lanes);
  std::vector<LaneClock> clocks(t.lanes);
  for (uint32_t lane = 0; lane < t.lanes; ++lane) seq_ids[lane] = static_cast<uint32_t>(1 + naming_.track_tid(t, lane));
  FlowCursor flows = flow_cursor(ti, piece.begin);

  // Which interned strings a job brings (intern_names): the track's one
  // piece sees them here, from its lanes' empty sequences.
  const bool see_here = fresh_base_[ti] == kFreshWhenEncoded;
  std::vector<Sequence> sequences(see_here ? t.lanes : 0);
  const uint8_t* fresh = see_here ? nullptr : fresh_.data() + fresh_base_[ti];
  for (uint32_t i = piece.begin; i < piece.end; ++i) {
    const Job& j = t.jobs[i];
    const uint32_t seq_id = seq_ids[j.lane];
    LaneClock& clock = clocks[j.lane];
    const uint32_t name = name_of(name_type(j), name_number(j));
    const uint8_t brings = see_here ? sequences[j.lane].see(name, j.type + 1) : fresh[i];
    base_clock(w, seq_id, clock, ts(j.start_ns));
    // The usual job (no interned string to bring, a few flow ids) through a
    // cursor on room reserved for it. Its two packets hold at most 270
    // bytes: 26 fields of up to 12 bytes (a tag, a 10-byte varint), 12
    // nested headers of 2, 8 flow ids of 9, and two lengths grown past 127.
    constexpr size_t kFewFlows = 8, kJobRoom = 512;
    const size_t flow_ids = flow_ids_at_most(flows, JobRef{ti, i});
    if (brings == 0 && flow_ids <= kFewFlows) {
      proto::Reserved r(w, kJobRoom);
      write_job(r, t, i, name, seq_id, clock, 0, flows);
    } else {
      write_job(w, t, i, name, seq_id, clock, brings, flows);
    }
  }
}

// One job's begin and end packets (write_jobs).
template <typename W>
inline void PerfettoTraceWriter::write_job(W& w, const Track& t, uint32_t i, uint32_t name, uint32_t seq_id,
                                           LaneClock& clock, uint8_t fresh, FlowCursor& flows) const {
  const Job& j = t.jobs[i];
  const uint32_t category = j.type + 1;
  auto p = w.open_nested(f::kTracePacket);
  w.varint(f::kTrustedSequenceId, seq_id);
  if constexpr (std::is_same_v<W, proto::Writer>) {
    interned(w, fresh, name, category);
  }
  auto e = w.open_nested(f::kTrackEvent);
  w.varint(f::kType, kTypeSliceBegin);
  w.varint(f::kCategoryIids, category);
  annotation(w, kRank, t.rank);
  if (j.micro_batch >= 0) annotation(w, kMicroBatch, j.micro_batch);
  annotation(w, kStep, j.step);
  auto a = w.open_nested(f::kDebugAnnotations);
  w.varint(f::kAnnotationNameIid, kSource);
  w.varint(f::kStringValueIid, t.file + 1);  // the log path, interned
  w.close_nested(a);
  annotation(w, kLine, j.line);
  annotation(w, kJobId, j.job_id);
  if (t.clock_offset_ns != 0) {  // a shifted machine's: the times as logged
    annotation(w, kLoggedStart, j.start_ns - t.clock_offset_ns);
    annotation(w, kLoggedEnd, j.end_ns - t.clock_offset_ns);
  }
  w.varint(f::kNameIid, name);
  write_flow_ids(w, flows, JobRef{static_cast<uint32_t>(&t - tl_.tracks.data()), i});
  w.close_nested(e);
  stamp(w, clock, ts(j.start_ns));
  w.close_nested(p);
  end_event(w, seq_id, clock, j.end_ns);
}

// write_jobs' steps, each inlined there (per job but the first two).

// Each lane's sequence and descriptor, before the track's first job.
inline void PerfettoTraceWriter::write_lane_descriptors(proto::Writer& w, const Track& t) const {
  const uint64_t parent = multi_machine_ ? machine_uuid(t.run, t.machine) : root_uuid(t.run);
  for (uint32_t lane = 0; lane < t.lanes; ++lane) {
    uint64_t uuid = naming_.track_tid(t, lane);
    start_sequence(w, static_cast<uint32_t>(1 + uuid), uuid, t.file + 1, [&] {
      std::string description = fmt::format("{}", tl_.files[t.file].path);
      if (t.clock_offset_ns != 0) {
        description += fmt::format("; clock shifted by {:+.3f} ms", static_cast<double>(t.clock_offset_ns) / 1e6);
      }
      descriptor(w, uuid, naming_.thread_name(t, lane), parent, lane_order(t, lane), false,
                 lane == 0 ? description : "");
    });
  }
}

// Where a piece's flow ids start: edges by consumer, and by producer.
inline PerfettoTraceWriter::FlowCursor PerfettoTraceWriter::flow_cursor(uint32_t ti, uint32_t begin) const {
  FlowCursor c;
  c.edges = opt_.dependencies ? &opt_.dependencies->edges : nullptr;
  if (!c.edges) return c;
  const uint64_t first = order_of({ti, begin});
  c.in =
      static_cast<size_t>(std::lower_bound(c.edges->begin(), c.edges->end(), first,
                                           [&](const Dependency& e, uint64_t k) { return order_of(e.consumer) < k; }) -
                          c.edges->begin());
  c.out = static_cast<size_t>(
      std::lower_bound(by_producer_.begin(), by_producer_.end(), first,
                       [&](uint32_t i, uint64_t k) { return order_of((*c.edges)[i].producer) < k; }) -
      by_producer_.begin());
  return c;
}

// The flow ids of job `ref`'s edges, the cursor moved past them. A job inside
// a chain has one incoming and one outgoing edge of the same flow id: it
// carries the id once.
inline size_t PerfettoTraceWriter::flow_ids_at_most(const FlowCursor& c, JobRef ref) const {
  if (!c.edges) return 0;
  const std::vector<Dependency>& edges = *c.edges;
  size_t n = 0;
  for (size_t k = c.in; k < edges.size() && edges[k].consumer == ref; ++k) ++n;
  for (size_t k = c.out; k < by_producer_.size() && edges[by_producer_[k]].producer == ref; ++k) ++n;
  return n;
}

template <typename W>
inline void PerfettoTraceWriter::write_flow_ids(W& w, FlowCursor& c, JobRef ref) const {
  if (!c.edges) return;
  const std::vector<Dependency>& edges = *c.edges;
  uint32_t last_in = 0;
  while (c.in < edges.size() && edges[c.in].consumer == ref) {
    last_in = flow_of_[c.in];
    w.fixed64(f::kFlowIds, last_in);
    ++c.in;
  }
  while (c.out < by_producer_.size() && edges[by_producer_[c.out]].producer == ref) {
    const uint32_t id = flow_of_[by_producer_[c.out]];
    if (id != last_in) w.fixed64(f::kFlowIds, id);
    ++c.out;
  }
}

// A rank's memory samples: two counter tracks (allocated, reserved; unit
// bytes) after its last lane, each on a sequence of its own whose default
// track it is, so that an event is its type, value and delta timestamp.
void PerfettoTraceWriter::write_memory(proto::Writer& w, const Piece& piece) const {
  const Track& t = tl_.tracks[piece.index];
  static constexpr const char* kWhat[2] = {"allocated", "reserved"};
  const uint64_t parent = multi_machine_ ? machine_uuid(t.run, t.machine) : root_uuid(t.run);
  for (int which = 0; which < 2; ++which) {
    const uint64_t uuid = counter_uuid(piece.index, which);
    const uint32_t seq_id = static_cast<uint32_t>(1 + uuid);
    if (piece.begin == 0) {
      size_t p = open_sequence(w, seq_id, uuid);  // counters intern nothing
      size_t td = w.open_nested(f::kTrackDescriptor);
      w.varint(f::kUuid, uuid);
      w.string(f::kName, fmt::format("{} memory {}", naming_.thread_name(t, 0), kWhat[which]));
      w.varint(f::kParentUuid, parent);
      w.int64(f::kSiblingOrderRank, lane_order(t, t.lanes - 1) + 1 + which);
      w.string(f::kDescription, fmt::format("device memory {} (the log's [Pipeline details] lines), {}", kWhat[which],
                                            tl_.files[t.file].path));
      w.varint(f::kSiblingMergeBehavior, kSiblingMergeNone);
      size_t c = w.open_nested(f::kCounter);
      w.varint(f::kCounterUnit, kUnitSizeBytes);
      w.close_nested(c);
      w.close_nested(td);
      w.close_nested(p);
    }
    LaneClock clock;
    for (uint32_t i = piece.begin; i < piece.end; ++i) {
      const MemorySample& s = t.memory[i];
      base_clock(w, seq_id, clock, ts(s.ts_ns));
      size_t p = w.open_nested(f::kTracePacket);
      stamp(w, clock, ts(s.ts_ns));
      w.varint(f::kTrustedSequenceId, seq_id);
      size_t e = w.open_nested(f::kTrackEvent);
      w.varint(f::kType, kTypeCounter);
      w.int64(f::kCounterValue, which == 0 ? s.allocated_bytes : s.reserved_bytes);
      w.close_nested(e);
      w.close_nested(p);
    }
  }
}

std::string_view PerfettoTraceWriter::encode(std::string& buffer, const Piece& piece) const {
  // Compressed, the packets are encoded into a deflater's scratch buffer
  // and deflated into `buffer`.
  std::unique_ptr<PacketDeflater> deflater = opt_.compress ? deflaters_.take() : nullptr;
  proto::Writer w(deflater ? deflater->scratch : buffer);
  if (piece.kind == Piece::kSteps) {
    write_steps(w, tl_.runs[piece.index]);
  } else if (piece.kind == Piece::kMemory) {
    write_memory(w, piece);
  } else {
    write_jobs(w, piece);
  }
  if (!deflater) return w.view();
  std::string_view packed = deflater->pack(w.view(), buffer);
  deflaters_.give(std::move(deflater));
  return packed;
}

void PerfettoTraceWriter::write() {
  std::string head;
  {
    proto::Writer w(head);
    write_clock_snapshot(w);
    for (const Run& run : tl_.runs) write_tree(w, run);
    out_.write(w.view());
  }
  std::vector<Piece> pieces;
  for (uint32_t r = 0; r < tl_.runs.size(); ++r) {
    const Run& run = tl_.runs[r];
    pieces.push_back({Piece::kSteps, r, 0, 0});
    for (uint32_t ti : run.tracks) {
      const uint32_t n = static_cast<uint32_t>(tl_.tracks[ti].jobs.size());
      uint32_t b = 0;
      do {
        uint32_t e = std::min(n, b + kPieceJobs);
        pieces.push_back({Piece::kJobs, ti, b, e});
        b = e;
      } while (b < n);
      const uint32_t samples = static_cast<uint32_t>(tl_.tracks[ti].memory.size());
      for (uint32_t m = 0; m < samples; m += kPieceSamples) {
        pieces.push_back({Piece::kMemory, ti, m, std::min(samples, m + kPieceSamples)});
      }
    }
  }
  // Pieces are encoded in parallel and written in order, at most four a
  // thread in flight, which bounds the memory (about 350 KB a piece).
  const unsigned threads = resolve_threads(opt_.threads);
  struct Slot {
    std::string buffer;
    std::string_view bytes;  // the piece's bytes, in buffer (or a deflater's)
  };
  produce_in_parallel_consume_in_order<Slot>(
      pieces.size(), threads, size_t{threads} * 4,
      [&](size_t i, Slot& slot) { slot.bytes = encode(slot.buffer, pieces[i]); },
      [&](size_t, Slot& slot) { out_.write(slot.bytes); });
}

}  // namespace

void write_perfetto_trace(const Timeline& timeline, const PerfettoWriteOptions& options, ByteSink& out) {
  PerfettoTraceWriter writer(timeline, options, out);
  writer.write();
}

}  // namespace ppt
