// A stand-in libcudart (built as libcudart.so.99) for the runtime test: the
// functions the shim binds, reporting no device, with error names that say
// which runtime answered.
#include <cstdint>

extern "C" {
int cudaGetDeviceCount(int* n) {
  *n = 0;
  return 100;
}
int cudaGetDevice(int* d) {
  *d = 0;
  return 0;
}
int cudaSetDevice(int) { return 100; }
int cudaDriverGetVersion(int* v) {
  *v = 0;
  return 0;
}
int cudaRuntimeGetVersion(int* v) {
  *v = 99000;
  return 0;
}
int cudaDeviceGetStreamPriorityRange(int*, int*) { return 100; }
int cudaStreamCreateWithPriority(void**, unsigned, int) { return 100; }
int cudaStreamDestroy(void*) { return 0; }
int cudaStreamIsCapturing(void*, int* s) {
  *s = 0;
  return 0;
}
int cudaEventCreateWithFlags(void**, unsigned) { return 100; }
int cudaEventDestroy(void*) { return 0; }
int cudaEventRecord(void*, void*) { return 100; }
int cudaEventQuery(void*) { return 100; }
int cudaEventSynchronize(void*) { return 100; }
int cudaEventElapsedTime(float*, void*, void*) { return 100; }
const char* cudaGetErrorName(int) { return "stubErrorNoDevice"; }
const char* cudaGetErrorString(int) { return "the stub runtime loaded after the shim"; }
int cudaGetLastError() { return 0; }
}
