// The model every writer reads: machines, ranks and their jobs, split into
// runs and steps, each job on a lane of its rank.
//
// Invariants once build_timeline() has returned (tests check each):
//  - every job that was drawn from the input is in exactly one Track (or,
//    after a selection, counted in unselected_jobs);
//  - within a Track, jobs are sorted by (start_ns, line);
//  - jobs on one (track, lane) never overlap: each lane nests trivially;
//  - Job::step is the step number the user sees (numbered from the schedule
//    marker when a file has one), the same number on every rank for the same
//    step of the same run;
//  - Run::steps is sorted by number and each span starts no earlier than the
//    previous one ended.
//  - Job times are the logged times plus the track's clock_offset_ns (0 unless
//    the clock alignment pass, clock_align.h, shifted the track's machine):
//    logged = shown - Track::clock_offset_ns. Every track of one machine in one
//    run has the same offset, so shifting never reorders a track's jobs or
//    changes their lanes; steps, run bounds and origin_ns are in shown times.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/diagnostics.h"
#include "util/bulk_memory.h"

namespace ppt {

// One input file: one rank's launch log.
struct SourceFile {
  std::string path;             // as opened; "<stdin>" for standard input
  std::string machine_name;     // "machine3", "10.0.0.2", or "" for a single-machine directory
  int32_t machine = 0;          // index of the machine, natural order
  int32_t local_index = 0;      // the i of workerlog.<i> (or the position of an explicit file)
  int32_t global_rank = 0;      // the run's rank: machine * processes per machine + i (log_layout.h)
  bool standard_input = false;  // read from standard input ("-"), not from `path`
  // A dynamic-graph profile file (profile_record_tmp_file_for_rank_<N>,
  // input/dygraph_profile.h), not a launch log; global_rank is the N.
  bool dygraph_profile = false;
  // A launch log beside dynamic-graph profile records: read for the account
  // only (its job lines are rejected as mixed_formats); no rank, no track.
  bool companion = false;
};

// One drawn job. Kept small: the converter holds every job of a run.
struct Job {
  int64_t start_ns = 0;  // since the Unix epoch, as logged (or clock-aligned)
  int64_t end_ns = 0;
  int32_t job_id = 0;        // the N of "Job (N)"
  int32_t micro_batch = -1;  // -1 when the line had no micro_batch_id
  uint32_t type = 0;         // index into Timeline::types
  uint32_t line = 0;         // 1-based line in the source file
  int32_t step = -1;         // step number; -1 before the steps pass
  uint32_t lane = 0;         // 0 is the rank's own track; >0 an overlap lane
};

// A file's or a track's jobs. The scan copies each file's jobs into bulk
// memory (util/bulk_memory.h) when the command allows it; otherwise, and for
// every array made later, this is an ordinary vector.
using JobList = std::vector<Job, BulkAllocator<Job>>;

// Where a dynamic-graph `[Pipeline details]` line (input/pipeline_details.h)
// was taken: around the whole step, or before / after one forward or backward
// step of one micro-batch (and chunk).
enum class MemoryPoint : uint8_t {
  kStartPipeline,   // Start_forward_backward_pipeline
  kBeforeForward,   // Before_forward_step_chunk_<c>_step_<s>
  kAfterForward,    // After_forward_step_...
  kBeforeBackward,  // Before_backward_step_...
  kAfterBackward,   // After_backward_step_...
  kEndPipeline,     // End_forward_backward_pipeline
};

// The device memory one `[Pipeline details]` line reports, taken after a
// device synchronize. Sizes are the line's GiB (two decimals) in bytes:
// round(GiB * 2^30), so a sample is exact to Timeline::memory_resolution_bytes.
struct MemorySample {
  int64_t ts_ns = 0;  // the line's stamp, as the job times (logged + the track's clock offset)
  int64_t allocated_bytes = 0;
  int64_t reserved_bytes = 0;
  uint32_t line = 0;         // 1-based line in the source file
  int32_t micro_batch = -1;  // the micro-batch of a Before/After sample; -1 for Start/End
  int32_t chunk = -1;        // the VPP chunk (virtual stage on this rank); -1 without VPP
  int32_t step = -1;         // step number, as Job::step; -1 before the steps pass
  MemoryPoint point = MemoryPoint::kBeforeForward;
};

// One rank's jobs in one run.
struct Track {
  uint32_t file = 0;  // index into Timeline::files
  uint32_t run = 0;   // index into Timeline::runs
  int32_t rank = 0;   // global rank (from the file)
  int32_t machine = 0;
  int32_t local_index = 0;
  uint32_t lanes = 1;             // number of lanes in use (1 when nothing overlaps)
  uint32_t overlapping_jobs = 0;  // jobs on lanes > 0
  int64_t clock_offset_ns = 0;    // added to the logged times by clock alignment (see above)
  int32_t stage = -1;             // pipeline stage the input states (dygraph records' tid - 1), -1 unknown
  int64_t resolution_ns = 1;      // the input's time resolution: 1 ns, or 1 ms for dygraph records
  JobList jobs;
  // The rank's memory samples in this run, sorted by (ts_ns, line); empty
  // when the log has no `[Pipeline details]` lines.
  std::vector<MemorySample> memory;
};

struct StepSpan {
  int32_t number = 0;
  int64_t start_ns = 0;  // earliest job start over the ranks, but not before the previous end
  int64_t end_ns = 0;    // latest job end over the ranks
  uint32_t ranks = 0;    // how many tracks have jobs in this step
};

struct Run {
  uint32_t index = 0;
  int64_t first_ns = 0;     // earliest job start of the run
  int64_t last_ns = 0;      // latest job end of the run
  bool has_marker = false;  // steps are numbered from a schedule marker
  int32_t marker_start_step = 0;
  std::vector<uint32_t> tracks;  // indices into Timeline::tracks, by rank
  std::vector<StepSpan> steps;
  // Steps the run had before a selection (app/selection.h) kept some: the
  // pictures' titles count the run, not the selection ("steps 2-4 of 10").
  // 0 when nothing was selected (then `steps` is every step).
  size_t steps_before_selection = 0;
};

// Counts for the end-of-run summary: every profiler line is either written
// (a drawn job) or rejected for a reason counted in `diagnostics`.
struct InputCounts {
  uint64_t files = 0;
  uint64_t bytes = 0;
  uint64_t lines = 0;
  uint64_t profiler_lines = 0;  // lines with the job marker
  uint64_t jobs = 0;            // drawn jobs
  // Dynamic-graph profile files: their record lines. Each job there is two
  // records (B and E); profiler_lines counts the jobs they describe (pairs,
  // unmatched halves and bad lines), so written + rejected = profiler_lines.
  uint64_t profile_records = 0;
  // `[Pipeline details]` lines (input/pipeline_details.h). A Before/After
  // pair is one job seen (in profiler_lines) unless the file's job lines
  // already hold that step's jobs; every line with sizes is a memory sample.
  uint64_t details_lines = 0;
  uint64_t memory_samples = 0;
};

struct Timeline {
  std::vector<SourceFile> files;
  std::vector<std::string> machines;  // names, by machine index
  // Ranks of the whole run, of which `files` may be a subset (--devices); 0
  // when unknown (then the highest rank + 1). `partial` says which are loaded
  // ("ranks 1-3 of 4 loaded (--devices)"), "" when all are.
  int32_t world_ranks = 0;
  std::string partial;
  std::vector<std::string> types;  // interned job types (valid UTF-8)
  std::vector<Track> tracks;       // ordered by (run, rank)
  std::vector<Run> runs;           // ordered by time
  int64_t origin_ns = 0;           // earliest job start or memory sample over everything (passes/steps.h set_origin)
  InputCounts counts;
  Diagnostics diagnostics;
  // The coarsest time resolution of the input: 1 (ns) for launch logs, 1 ms
  // when dynamic-graph profile records are read (their ts is whole ms).
  int64_t resolution_ns = 1;
  // The resolution of the memory samples: 0.01 GiB in bytes when any
  // `[Pipeline details]` line was read, 0 when the run has no memory samples.
  int64_t memory_resolution_bytes = 0;
  // What a selection (app/selection.h: --run, --steps, --skip-warmup) kept,
  // "" when it kept everything: "run 2 of 2, steps 1-2 of 0-2". The jobs it
  // left out are counted here, so written + left out + rejected = seen.
  std::string selection;
  uint64_t unselected_jobs = 0;
  // "" for a measured run; "predicted (ZBH1 M=8)" for a timeline whatif
  // predicted, which every output of it says (process names, the trace's
  // metadata, picture titles) so it is never taken for a measurement.
  std::string prediction;

  // The run's rank count: world_ranks, or more if a rank is numbered beyond it.
  int32_t rank_count() const {
    int32_t n = world_ranks;
    for (const SourceFile& f : files) n = !f.companion && f.global_rank >= n ? f.global_rank + 1 : n;
    for (const Track& t : tracks) n = t.rank >= n ? t.rank + 1 : n;
    return n;
  }

  // Files that are ranks (companion launch logs are not).
  size_t rank_files() const {
    size_t n = 0;
    for (const SourceFile& f : files) n += f.companion ? 0 : 1;
    return n;
  }

  size_t job_count() const {
    size_t n = 0;
    for (const Track& t : tracks) n += t.jobs.size();
    return n;
  }
};

}  // namespace ppt
