// An NVTX injection library for the NVTX test: NVTX v3 loads the library
// named by NVTX_INJECTION64_PATH and calls its InitializeInjectionNvtx2, which
// fills the core callbacks (nvtxDetail/nvtxTypes.h). This one records each
// pushed range's message and payload, and each pop.
#include <nvtx3/nvToolsExt.h>

#include <string>

namespace {

std::string g_log;

int NVTX_API push_ex(const nvtxEventAttributes_t* a) {
  g_log += a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : "?";
  g_log += ':';
  g_log += a->payloadType == NVTX_PAYLOAD_TYPE_INT64 ? std::to_string(a->payload.llValue) : "-";
  g_log += ' ';
  return 0;
}

int NVTX_API pop() {
  g_log += "pop ";
  return 0;
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
  return 1;
}
}
