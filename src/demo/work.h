// A job's work in the demo: real device work on the rank's CUDA stream when
// a device is there, else CPU work of the same duration.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ppt::demo {

class Work {
 public:
  virtual ~Work() = default;
  // The stream to time jobs on (a cudaStream_t), nullptr for CPU work.
  virtual void* stream() const = 0;
  // "CPU" or "CUDA device 1 (NVIDIA H200)".
  virtual std::string describe() const = 0;
  // Runs (or, on a device, enqueues) `micro_seconds` of work that reads
  // `input` (may be empty). When `want_output`, finish() will return its
  // output. false and *error on failure.
  virtual bool run(double micro_seconds, const std::vector<uint8_t>& input, bool want_output, std::string* error) = 0;
  // Waits for the last run() with want_output and hands its output over.
  virtual bool finish(std::vector<uint8_t>* output, std::string* error) = 0;
  // Waits until the work run so far is done (a device drained); CPU work is
  // done when run() returns.
  virtual bool synchronize(std::string* /*error*/) { return true; }
};

std::unique_ptr<Work> make_cpu_work(size_t payload_bytes);

// CUDA work on device local_rank % device count, or nullptr and *why_not.
std::unique_ptr<Work> make_cuda_work(int local_rank, size_t payload_bytes, std::string* why_not);

}  // namespace ppt::demo
