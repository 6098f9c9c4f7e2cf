// An NVTX injection library for the NVTX test: NVTX v3 loads the library
// named by NVTX_INJECTION64_PATH and calls its InitializeInjectionNvtx2, which
// fills the core callbacks (nvtxDetail/nvtxTypes.h). This one records each
// range, pushed (thread-local) or started (process-wide), with its message
// and payload and the thread that made it, and each pop or end with its
// thread. Threads are named A, B, ... in the order they are first seen.
#include <nvtx3/nvToolsExt.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

std::mutex g_mu;
std::string g_log;
std::vector<std::thread::id> g_threads;
nvtxRangeId_t g_next_id = 0;

char thread_letter() {
  const auto self = std::this_thread::get_id();
  for (size_t i = 0; i < g_threads.size(); ++i)
    if (g_threads[i] == self) return static_cast<char>('A' + i);
  g_threads.push_back(self);
  return static_cast<char>('A' + g_threads.size() - 1);
}

std::string describe(const nvtxEventAttributes_t* a) {
  std::string s = a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : "?";
  s += ':';
  s += a->payloadType == NVTX_PAYLOAD_TYPE_INT64 ? std::to_string(a->payload.llValue) : "-";
  return s;
}

int NVTX_API push_ex(const nvtxEventAttributes_t* a) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_log += "push " + describe(a) + "@" + thread_letter() + " ";
  return 0;
}

int NVTX_API pop() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_log += std::string("pop@") + thread_letter() + " ";
  return 0;
}

nvtxRangeId_t NVTX_API start_ex(const nvtxEventAttributes_t* a) {
  std::lock_guard<std::mutex> lock(g_mu);
  const nvtxRangeId_t id = ++g_next_id;
  g_log += describe(a) + "#" + std::to_string(id) + "@" + thread_letter() + " ";
  return id;
}

void NVTX_API end(nvtxRangeId_t id) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_log += "end#" + std::to_string(id) + "@" + thread_letter() + " ";
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) const char* ppt_nvtx_probe_log() { return g_log.c_str(); }

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) || table == nullptr) {
    return 0;
  }
  if (size > NVTX_CBID_CORE_RangePushEx) {
    *table[NVTX_CBID_CORE_RangePushEx] = reinterpret_cast<NvtxFunctionPointer>(push_ex);
  }
  if (size > NVTX_CBID_CORE_RangePop) {
    *table[NVTX_CBID_CORE_RangePop] = reinterpret_cast<NvtxFunctionPointer>(pop);
  }
  if (size > NVTX_CBID_CORE_RangeStartEx) {
    *table[NVTX_CBID_CORE_RangeStartEx] = reinterpret_cast<NvtxFunctionPointer>(start_ex);
  }
  if (size > NVTX_CBID_CORE_RangeEnd) {
    *table[NVTX_CBID_CORE_RangeEnd] = reinterpret_cast<NvtxFunctionPointer>(end);
  }
  return 1;
}
}
