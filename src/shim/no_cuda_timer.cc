// Compiled instead of cuda_timer.cc when the shim is built without CUDA.
#include "timer.h"

namespace ppt::shim::detail {

std::unique_ptr<Timer> make_cuda_timer(const Options&, std::string* why_not, std::string*) {
  *why_not = "built without CUDA";
  return nullptr;
}

}  // namespace ppt::shim::detail
