// The part of the CUDA runtime API the shim uses, as a table of function
// pointers bound at run time, so that the shim
//  - needs no CUDA header or library to build, and has no NEEDED entry on
//    libcudart: it uses the runtime already loaded in the process (the one
//    PyTorch or Paddle brought, whatever its major version), else the first
//    libcudart.so* it can load;
//  - can be driven by a fake runtime in tests (set_cuda_api_for_testing),
//    which exercises the CUDA timer's real logic on any machine.
//
// The types are ABI-compatible stand-ins for the runtime's: handles are
// opaque pointers, cudaError_t and the enums are ints. The values below are
// those of driver_types.h, stable across CUDA 11, 12 and 13.
#pragma once

#include <string>

namespace ppt::shim::detail::cuda {

using Error = int;
using Event = struct CUevent_st*;
using Stream = struct CUstream_st*;

inline constexpr Error kSuccess = 0;
inline constexpr Error kErrorInvalidValue = 1;
inline constexpr Error kErrorInsufficientDriver = 35;
inline constexpr Error kErrorNoDevice = 100;
inline constexpr Error kErrorInvalidDevice = 101;
inline constexpr Error kErrorInvalidResourceHandle = 400;
inline constexpr Error kErrorNotReady = 600;
inline constexpr Error kErrorStreamCaptureUnsupported = 900;

inline constexpr unsigned kStreamNonBlocking = 0x01;
inline constexpr unsigned kEventDefault = 0x00;

// cudaStreamCaptureStatus.
inline constexpr int kCaptureStatusNone = 0;

struct Api {
  Error (*GetDeviceCount)(int* count) = nullptr;
  Error (*GetDevice)(int* device) = nullptr;
  Error (*SetDevice)(int device) = nullptr;
  Error (*DriverGetVersion)(int* version) = nullptr;
  Error (*RuntimeGetVersion)(int* version) = nullptr;
  Error (*DeviceGetStreamPriorityRange)(int* least, int* greatest) = nullptr;
  Error (*StreamCreateWithPriority)(Stream* stream, unsigned flags, int priority) = nullptr;
  Error (*StreamDestroy)(Stream stream) = nullptr;
  Error (*StreamIsCapturing)(Stream stream, int* status) = nullptr;
  Error (*EventCreateWithFlags)(Event* event, unsigned flags) = nullptr;
  Error (*EventDestroy)(Event event) = nullptr;
  Error (*EventRecord)(Event event, Stream stream) = nullptr;
  Error (*EventQuery)(Event event) = nullptr;
  Error (*EventSynchronize)(Event event) = nullptr;
  Error (*EventElapsedTime)(float* ms, Event start, Event end) = nullptr;
  const char* (*GetErrorName)(Error error) = nullptr;
  const char* (*GetErrorString)(Error error) = nullptr;
  Error (*GetLastError)() = nullptr;
  // Optional (CUDA 12.8 and newer): the device of a stream, so that a
  // profiler given a stream times on its device whatever is current.
  Error (*StreamGetDevice)(Stream stream, int* device) = nullptr;
  // From the driver (libcuda.so.1), optional: whether the calling thread has
  // a current context, so that restoring "no device chosen" never creates a
  // context on device 0. Both null when the driver's symbols are not found.
  int (*CtxGetCurrent)(void** context) = nullptr;
  int (*CtxSetCurrent)(void* context) = nullptr;
  // Where the runtime was found, for backend_note().
  std::string source;
};

// The runtime, bound on first use (thread-safe), or nullptr with *why_not
// saying why (no libcudart could be found or a function is missing). The
// search order: a table installed by set_cuda_api_for_testing; the library
// named by PPT_SHIM_CUDART; the runtime's functions already visible in the
// process (a program linked with libcudart, or one that defines them to
// count them); a libcudart.so* already loaded (even privately, as Python
// extensions are); then libcudart.so.13, .12, .11.0 and libcudart.so.
// When the choice was the last of these (or nothing was found), each later
// call binds a libcudart the process has loaded since, if any (a framework
// imported after the first profiler). Tables are never freed.
const Api* api(std::string* why_not);

// Makes api() return `fake` (nullptr: back to the real runtime). For tests.
void set_cuda_api_for_testing(const Api* fake);

// "cudaEventRecord failed: cudaErrorInvalidResourceHandle (invalid resource handle)".
std::string failure(const Api& api, const char* what, Error e);

}  // namespace ppt::shim::detail::cuda
