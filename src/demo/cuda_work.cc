// Device work for the demo, without nvcc: a job is a chain of device-to-device
// copies of a 64 MiB buffer on the rank's stream.
//
// Why copies and not a kernel of our own: the shim and the demo must build
// with the host compiler alone (the toolkit's headers and libcudart, no
// nvcc), and a device-to-device cudaMemcpyAsync is real device work, run by
// the device in stream order, whose length is set by the number of copies.
// Its length is measured once per rank with events, so that a job of N us
// is about N us of device time. A busy-loop kernel would need nvcc or
// run-time compilation for the sake of the demo alone.
//
// The job's input arrives from the host (cudaMemcpyAsync from pageable memory
// returns once the data is staged, so the caller's buffer may be reused) and
// its output goes back through pinned memory, read only after finish() has
// waited for the stream: a stage sends only data that the device computed.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>

#include "work.h"

namespace ppt::demo {
namespace {

std::string failure(const char* what, cudaError_t e) {
  return std::string(what) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

constexpr size_t kBufferBytes = 64u << 20;

class CudaWork final : public Work {
 public:
  ~CudaWork() override {
    if (stream_ != nullptr) cudaStreamSynchronize(stream_);
    if (a_ != nullptr) cudaFree(a_);
    if (b_ != nullptr) cudaFree(b_);
    if (pinned_out_ != nullptr) cudaFreeHost(pinned_out_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  std::string init(int local_rank, size_t payload) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return std::string("no usable CUDA driver or device: ") + cudaGetErrorName(e);
    }
    if (count == 0) return "no CUDA device";
    device_ = local_rank % count;
    payload_ = std::min(payload, kBufferBytes);
    if ((e = cudaSetDevice(device_)) != cudaSuccess) return failure("cudaSetDevice", e);
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device_) == cudaSuccess) name_ = prop.name;
    if ((e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)) != cudaSuccess)
      return failure("cudaStreamCreateWithFlags", e);
    if ((e = cudaMalloc(&a_, kBufferBytes)) != cudaSuccess) return failure("cudaMalloc", e);
    if ((e = cudaMalloc(&b_, kBufferBytes)) != cudaSuccess) return failure("cudaMalloc", e);
    if ((e = cudaMemsetAsync(a_, 0, kBufferBytes, stream_)) != cudaSuccess) return failure("cudaMemsetAsync", e);
    if ((e = cudaMallocHost(&pinned_out_, std::max<size_t>(payload_, 1))) != cudaSuccess)
      return failure("cudaMallocHost", e);
    return calibrate();
  }

  void* stream() const override { return stream_; }
  std::string describe() const override { return "CUDA device " + std::to_string(device_) + " (" + name_ + ")"; }

  bool run(double micro_seconds, const std::vector<uint8_t>& input, bool want_output, std::string* error) override {
    cudaError_t e = cudaSuccess;
    if (!input.empty()) {
      e = cudaMemcpyAsync(a_, input.data(), std::min(input.size(), kBufferBytes), cudaMemcpyHostToDevice, stream_);
      if (e != cudaSuccess) return fail(error, "cudaMemcpyAsync (input)", e);
    }
    const int copies = std::max(1, static_cast<int>(micro_seconds / copy_us_ + 0.5));
    for (int i = 0; i < copies; ++i) {
      void* dst = i % 2 == 0 ? b_ : a_;
      const void* src = i % 2 == 0 ? a_ : b_;
      e = cudaMemcpyAsync(dst, src, kBufferBytes, cudaMemcpyDeviceToDevice, stream_);
      if (e != cudaSuccess) return fail(error, "cudaMemcpyAsync (work)", e);
    }
    if (want_output && payload_ > 0) {
      const void* last = copies % 2 == 1 ? b_ : a_;
      e = cudaMemcpyAsync(pinned_out_, last, payload_, cudaMemcpyDeviceToHost, stream_);
      if (e != cudaSuccess) return fail(error, "cudaMemcpyAsync (output)", e);
    }
    return true;
  }

  bool finish(std::vector<uint8_t>* output, std::string* error) override {
    // The demo's own wait, to send computed data; the shim does not wait here.
    const cudaError_t e = cudaStreamSynchronize(stream_);
    if (e != cudaSuccess) return fail(error, "cudaStreamSynchronize", e);
    const auto* p = static_cast<const uint8_t*>(pinned_out_);
    output->assign(p, p + payload_);
    return true;
  }

  bool synchronize(std::string* error) override {
    const cudaError_t e = cudaStreamSynchronize(stream_);
    return e == cudaSuccess || fail(error, "cudaStreamSynchronize", e);
  }

 private:
  static bool fail(std::string* error, const char* what, cudaError_t e) {
    *error = failure(what, e);
    return false;
  }

  std::string calibrate() {
    cudaEvent_t start, stop;
    cudaError_t e = cudaEventCreate(&start);
    if (e == cudaSuccess) e = cudaEventCreate(&stop);
    if (e != cudaSuccess) return failure("cudaEventCreate", e);
    constexpr int kWarm = 3, kTimed = 20;
    for (int i = 0; i < kWarm; ++i) cudaMemcpyAsync(b_, a_, kBufferBytes, cudaMemcpyDeviceToDevice, stream_);
    cudaEventRecord(start, stream_);
    for (int i = 0; i < kTimed; ++i)
      cudaMemcpyAsync(i % 2 ? a_ : b_, i % 2 ? b_ : a_, kBufferBytes, cudaMemcpyDeviceToDevice, stream_);
    cudaEventRecord(stop, stream_);
    e = cudaEventSynchronize(stop);
    float ms = 0;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, start, stop);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    if (e != cudaSuccess) return failure("timing the work", e);
    copy_us_ = std::max(0.1, static_cast<double>(ms) * 1000.0 / kTimed);
    return {};
  }

  int device_ = 0;
  std::string name_;
  size_t payload_ = 0;
  cudaStream_t stream_ = nullptr;
  void* a_ = nullptr;
  void* b_ = nullptr;
  void* pinned_out_ = nullptr;
  double copy_us_ = 10;
};

}  // namespace

std::unique_ptr<Work> make_cuda_work(int local_rank, size_t payload_bytes, std::string* why_not) {
  auto w = std::make_unique<CudaWork>();
  if (std::string bad = w->init(local_rank, payload_bytes); !bad.empty()) {
    *why_not = bad;
    return nullptr;
  }
  return w;
}

}  // namespace ppt::demo
